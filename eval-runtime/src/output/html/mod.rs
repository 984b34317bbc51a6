//! The HTML report: one self-contained page (inline CSS, inline script, inline
//! SVG; no URL of any kind, so it opens from `file://` and makes no request)
//! of one or more results files, optionally against a baseline.
//!
//! The page's data — every sample record, per dataset its latency
//! percentiles and per metric a histogram of the scores, the summaries, and
//! with a baseline what [`diff()`](super::diff()) found plus the summary
//! deltas — is embedded as JSON in a `<script type="application/json">`; the
//! page's script (`report.js`) draws it, inserting text only as text. The
//! data of more than [`COMPRESS_ABOVE`] samples is embedded gzip-compressed
//! and base64-encoded, inflated by the browser's `DecompressionStream`.
//!
//! The page is written as the samples go by ([`page`]), after a first pass
//! over them ([`PagePlan`]): a run's records are never all held for it. A
//! run of more than [`Inline::DEFAULT`]`.all` samples embeds its first
//! samples that did not pass and an evenly spaced share of the others, and
//! links its results file.
//!
//! The page's DOM (ids and classes that tests and users can rely on) is
//! described in the guide's "HTML report" chapter (docs/src/html-report.md).

mod page;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::diff::{Change, Comparison, GateChange, Only, diff};
use super::results::{MetricSummary, Results, ResultsError};
pub(crate) use page::{Inline, PagePlan, PageWriter, RunMeta};

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// Above this many samples the page's data is embedded compressed (gzip,
/// then base64): 100,000 samples of the bench make 41 MB of JSON, 2–4 MB
/// compressed (see the guide's "HTML report" chapter).
pub(crate) const COMPRESS_ABOVE: usize = 2000;

/// Bins of a histogram whose scores (and threshold) lie in `[0, 1]`.
const UNIT_BINS: usize = 10;
/// Bins of a histogram over any other range.
const OTHER_BINS: usize = 20;

/// The path of the HTML report beside the results file at `results`
/// (`evals.json` → `evals.html`).
pub fn html_path(results: &Path) -> PathBuf {
    results.with_extension("html")
}

/// The HTML report of `results` (several files are shown together), with
/// what changed since `baseline` when there is one.
pub fn html(results: &[Results], baseline: Option<&Results>) -> String {
    let mut out = Vec::new();
    // Writing into memory cannot fail.
    let _ = write_page(&mut out, results, baseline);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes [`html`] of `results` (and `baseline`) to `path`, atomically.
pub fn write_html(
    path: &Path,
    results: &[Results],
    baseline: Option<&Results>,
) -> Result<(), ResultsError> {
    let error = |source| ResultsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    eval_datasets::files::write_atomically_with(path, |out| write_page(out, results, baseline))
        .map_err(error)
}

/// Writes the HTML report of one run to `path` (atomically) as `with`
/// hands it that run's records one by one, then ends the run; `plan`: what
/// a first pass over those records found. An error of `with` is returned
/// as is (and no page is written).
pub(crate) fn write_along(
    path: &Path,
    binary: &str,
    (plan, inline): (PagePlan, Inline),
    with: impl FnOnce(&mut PageWriter<'_, &mut dyn std::io::Write>) -> Result<(), ResultsError>,
) -> Result<(), ResultsError> {
    let error = |source| ResultsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    let mut failed = None;
    let written = eval_datasets::files::write_atomically_with(path, |out| {
        let compressed = plan.samples() > COMPRESS_ABOVE;
        let mut page = PageWriter::start(
            out,
            &title(&[binary], plan.datasets()),
            (compressed, inline, vec![plan]),
            None,
        )?;
        if let Err(e) = with(&mut page) {
            failed = Some(e);
            return Err(std::io::Error::other(
                "the run's records could not be written",
            ));
        }
        page.finish(None)
    });
    match failed {
        Some(e) => Err(e),
        None => written.map_err(error),
    }
}

/// Most dataset names the page's title lists.
const TITLE_DATASETS: usize = 3;

/// The page's title: `Eval report: rag, tools` after the datasets run
/// (the first [`TITLE_DATASETS`], then how many more), the test binary's
/// name only when no dataset ran; several results files say how many.
pub(crate) fn title<'d>(binaries: &[&str], datasets: impl Iterator<Item = &'d str>) -> String {
    let mut names: Vec<&str> = datasets.collect();
    names.sort_unstable();
    names.dedup();
    let mut what = names
        .iter()
        .take(TITLE_DATASETS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > TITLE_DATASETS {
        what.push_str(&format!(" and {} more", names.len() - TITLE_DATASETS));
    }
    match (binaries, what.is_empty()) {
        ([one], true) => format!("Eval report: {one}"),
        ([_], false) => format!("Eval report: {what}"),
        (_, true) => format!("Eval report: {} results files", binaries.len()),
        (_, false) => format!("Eval report: {what} ({} results files)", binaries.len()),
    }
}

fn write_page(
    out: &mut dyn std::io::Write,
    results: &[Results],
    baseline: Option<&Results>,
) -> std::io::Result<()> {
    write_page_with(out, results, baseline, Inline::DEFAULT)
}

/// [`write_page`], embedding what `inline` says.
fn write_page_with(
    out: &mut dyn std::io::Write,
    results: &[Results],
    baseline: Option<&Results>,
    inline: Inline,
) -> std::io::Result<()> {
    let binaries: Vec<&str> = results.iter().map(|r| r.binary.as_str()).collect();
    let samples: usize = results.iter().map(|r| r.samples.len()).sum();
    let plans: Vec<PagePlan> = results.iter().map(|r| PagePlan::of(&r.samples)).collect();
    let datasets = results
        .iter()
        .flat_map(|r| r.datasets.iter().map(|d| d.name.as_str()));
    let title = title(&binaries, datasets);
    let mut page = PageWriter::start(
        out,
        &title,
        (samples > COMPRESS_ABOVE, inline, plans),
        baseline,
    )?;
    for r in results {
        r.samples.iter().for_each(|s| page.sample(s));
        page.end_run(&RunMeta {
            binary: &r.binary,
            package: r.package.as_deref(),
            written_unix: r.written_unix,
            complete: r.complete,
            incomplete: r.incompleteness(),
            usage: r.usage,
            provenance: r.provenance.as_ref(),
            results_file: None,
            datasets: &r.datasets,
        });
    }
    page.finish(baseline.map(|b| BaselineView::of(b, results)).as_ref())
}

/// Scores of one metric over one dataset, binned.
#[derive(Serialize, Debug, PartialEq)]
struct Histogram {
    /// The range the bins divide evenly.
    lo: f64,
    hi: f64,
    counts: Vec<usize>,
    /// The per-sample threshold and operator (of the first record).
    threshold: f64,
    op: String,
}

/// A histogram being filled, its range known beforehand (the threshold's
/// and every score's: [`PagePlan`]), so no score is kept.
#[derive(Debug)]
struct Binning {
    histogram: Histogram,
    scores: usize,
}

impl Binning {
    /// Bins over `(min, max)`, the range of the threshold and the scores.
    fn new(threshold: f64, op: String, (min, max): (f64, f64)) -> Binning {
        let (lo, hi, bins) = if min >= 0.0 && max <= 1.0 {
            (0.0, 1.0, UNIT_BINS)
        } else if min == max {
            (min - 0.5, max + 0.5, OTHER_BINS)
        } else {
            (min, max, OTHER_BINS)
        };
        Binning {
            histogram: Histogram {
                lo,
                hi,
                counts: vec![0; bins],
                threshold,
                op,
            },
            scores: 0,
        }
    }

    fn add(&mut self, score: f64) {
        let h = &mut self.histogram;
        let bins = h.counts.len();
        let width = (h.hi - h.lo) / bins as f64;
        let bin = ((score - h.lo) / width).floor();
        // The top of the range falls in the last bin.
        let bin = if bin.is_finite() && bin > 0.0 {
            (bin as usize).min(bins - 1)
        } else {
            0
        };
        h.counts[bin] += 1;
        self.scores += 1;
    }

    /// The histogram (`None`: there were no scores).
    fn finish(self) -> Option<Histogram> {
        (self.scores > 0).then_some(self.histogram)
    }
}

impl Histogram {
    /// The histogram of `scores` (`None`: there are none).
    #[cfg(test)]
    fn of(scores: Vec<f64>, threshold: f64, op: String) -> Option<Histogram> {
        let range = scores.iter().fold((threshold, threshold), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
        let mut binning = Binning::new(threshold, op, range);
        scores.into_iter().for_each(|s| binning.add(s));
        binning.finish()
    }
}

/// How one metric's summary moved since the baseline.
#[derive(Serialize, Debug, PartialEq)]
struct SummaryDelta {
    #[serde(skip_serializing_if = "Option::is_none")]
    mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pass_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_pass_rate: Option<f64>,
    /// The baseline's dataset has no such metric.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    new_metric: bool,
}

impl SummaryDelta {
    fn of(now: &MetricSummary, was: Option<&MetricSummary>) -> SummaryDelta {
        let minus = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a - b);
        SummaryDelta {
            mean: minus(now.mean, was.and_then(|w| w.mean)),
            pass_rate: minus(now.pass_rate, was.and_then(|w| w.pass_rate)),
            old_mean: was.and_then(|w| w.mean),
            old_pass_rate: was.and_then(|w| w.pass_rate),
            new_metric: was.is_none(),
        }
    }
}

/// What [`diff()`] found.
#[derive(Serialize)]
pub(crate) struct BaselineView {
    binary: String,
    written_unix: f64,
    compared: usize,
    comparisons: Vec<Comparison>,
    gates: Vec<GateChange>,
    caveats: Vec<String>,
    changes: Vec<Change>,
    added: Vec<Only>,
    removed: Vec<Only>,
}

impl BaselineView {
    fn of(baseline: &Results, results: &[Results]) -> BaselineView {
        let found = match results {
            [one] => diff(baseline, one, 0.0),
            many => {
                // The runs together are what is compared with the baseline.
                let together = Results {
                    samples: many.iter().flat_map(|r| r.samples.clone()).collect(),
                    ..Results::new("", Vec::new(), &BTreeMap::new())
                };
                diff(baseline, &together, 0.0)
            }
        };
        BaselineView {
            binary: baseline.binary.clone(),
            written_unix: baseline.written_unix,
            compared: found.compared,
            comparisons: found.comparisons,
            gates: found.gates,
            caveats: found
                .caveats
                .into_iter()
                .chain(
                    found
                        .question
                        .iter()
                        .map(|q| format!("the question changed: {q}")),
                )
                .collect(),
            changes: found.changes,
            added: found.added,
            removed: found.removed,
        }
    }
}

#[cfg(test)]
mod tests;
