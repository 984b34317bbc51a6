//! The HTML report: one self-contained page (inline CSS, inline script, inline
//! SVG; no URL of any kind, so it opens from `file://` and makes no request)
//! of one or more results files, optionally against a baseline.
//!
//! The page's data — every sample record, per dataset its latency
//! percentiles, token and cost totals and per metric a histogram of the
//! scores, and with a baseline what [`diff()`](super::diff()) found plus the
//! summary deltas — is computed here and embedded as JSON in a
//! `<script type="application/json">`; the page's script (`report.js`) draws
//! it, inserting text only as text. Large data is embedded gzip-compressed
//! and base64-encoded, inflated by the browser's `DecompressionStream`.
//!
//! The page's DOM (ids and classes that tests and users can rely on) is
//! described in the README's "HTML report" section.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use eval_core::metric::{Measure, percentile};
use serde::Serialize;

use super::diff::{Change, Only, diff};
use super::results::{DatasetSummary, Results, ResultsError, SampleRecord, UsageTotals};

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// Above this many bytes of JSON the page's data is embedded compressed
/// (gzip, then base64): measured on 100,000 samples it makes the file
/// about 20 times smaller (see the README).
const COMPRESS_ABOVE: usize = 1 << 20;

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
    let page = Page::of(results, baseline);
    let data = match serde_json::to_vec(&page) {
        Ok(data) => data,
        // Not expected (every map key is a string): the page says why.
        Err(e) => serde_json::json!({ "error": format!("cannot embed the results: {e}") })
            .to_string()
            .into_bytes(),
    };
    let title = match results {
        [one] => format!("evals: {}", one.binary),
        _ => format!("evals: {} results files", results.len()),
    };
    let mut out = String::with_capacity(data.len() + CSS.len() + JS.len() + 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
    );
    out.push_str("<title>");
    out.push_str(&escape_text(&title));
    out.push_str("</title>\n<style>\n");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");
    // The SVG namespace, for the script's charts, without writing it out.
    out.push_str("<template id=\"svg-ns\"><svg></svg></template>\n");
    if data.len() > COMPRESS_ABOVE {
        out.push_str(
            "<script type=\"application/json\" id=\"report-data\" data-encoding=\"gzip-base64\">",
        );
        out.push_str(&base64::engine::general_purpose::STANDARD.encode(gzip(&data)));
    } else {
        out.push_str("<script type=\"application/json\" id=\"report-data\">");
        out.push_str(&script_safe(&String::from_utf8_lossy(&data)));
    }
    out.push_str("</script>\n<script>\n");
    out.push_str(JS);
    out.push_str("</script>\n</body>\n</html>\n");
    out
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
    let page = html(results, baseline);
    eval_core::files::write_atomically(path, page.as_bytes()).map_err(error)
}

/// JSON made safe inside a `<script>` element: no `<` at all (so neither
/// `</script>` nor `<!--` can occur), written as the JSON escape `\u003c`
/// (valid only inside strings, where every `<` of JSON text is).
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// `s` as HTML text (for the title; the data never goes through this).
fn escape_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(data.len() / 8),
        flate2::Compression::fast(),
    );
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// What the page draws.
#[derive(Serialize)]
struct Page<'a> {
    /// Seconds since the Unix epoch.
    generated_unix: f64,
    runs: Vec<RunView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<BaselineView>,
}

/// One results file.
#[derive(Serialize)]
struct RunView<'a> {
    binary: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<&'a str>,
    written_unix: f64,
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    incomplete: Option<String>,
    usage: &'a UsageTotals,
    datasets: Vec<DatasetView<'a>>,
    samples: &'a [SampleRecord],
}

/// One dataset's summary with what the page adds to it.
#[derive(Serialize)]
struct DatasetView<'a> {
    summary: &'a DatasetSummary,
    /// Latency per run of the agent, milliseconds: p50 and p95 (Hyndman &
    /// Fan's definition 7, as gates take them).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_ms: Option<[f64; 2]>,
    /// Time to first token, p50 and p95, over the samples that streamed.
    #[serde(skip_serializing_if = "Option::is_none")]
    ttft_ms: Option<[f64; 2]>,
    /// Per metric (by name): the histogram of its scores.
    histograms: BTreeMap<String, Histogram>,
    /// Per metric (by name), with a baseline: how the summary moved.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    deltas: BTreeMap<String, SummaryDelta>,
    /// With a baseline: the dataset is not in it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    new_dataset: bool,
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

/// What [`diff()`] found.
#[derive(Serialize)]
struct BaselineView {
    binary: String,
    written_unix: f64,
    compared: usize,
    changes: Vec<Change>,
    added: Vec<Only>,
    removed: Vec<Only>,
}

impl<'a> Page<'a> {
    fn of(results: &'a [Results], baseline: Option<&Results>) -> Page<'a> {
        let runs = results
            .iter()
            .map(|r| RunView {
                binary: &r.binary,
                package: r.package.as_deref(),
                written_unix: r.written_unix,
                complete: r.complete,
                incomplete: r.incompleteness(),
                usage: &r.usage,
                datasets: r
                    .datasets
                    .iter()
                    .map(|d| DatasetView::of(d, &r.samples, baseline))
                    .collect(),
                samples: &r.samples,
            })
            .collect();
        Page {
            generated_unix: super::results::now_unix(),
            runs,
            baseline: baseline.map(|b| BaselineView::of(b, results)),
        }
    }
}

impl<'a> DatasetView<'a> {
    fn of(
        summary: &'a DatasetSummary,
        samples: &[SampleRecord],
        baseline: Option<&Results>,
    ) -> DatasetView<'a> {
        let own: Vec<&SampleRecord> = samples
            .iter()
            .filter(|s| s.dataset == summary.name)
            .collect();
        let quantiles = |measure: Measure| {
            let mut values: Vec<f64> = own
                .iter()
                .filter_map(|s| s.measured(measure))
                .filter(|v| v.is_finite())
                .collect();
            if values.is_empty() {
                return None;
            }
            values.sort_by(f64::total_cmp);
            Some([percentile(&values, 0.5), percentile(&values, 0.95)])
        };
        let histograms = summary
            .metrics
            .iter()
            .filter_map(|m| Histogram::of(&own, &m.name).map(|h| (m.name.clone(), h)))
            .collect();
        let old = baseline.and_then(|b| b.datasets.iter().find(|d| d.name == summary.name));
        let deltas = match old {
            None => BTreeMap::new(),
            Some(old) => summary
                .metrics
                .iter()
                .map(|m| {
                    let was = old.metrics.iter().find(|o| o.name == m.name);
                    let minus = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a - b);
                    let delta = SummaryDelta {
                        mean: minus(m.mean, was.and_then(|w| w.mean)),
                        pass_rate: minus(m.pass_rate, was.and_then(|w| w.pass_rate)),
                        old_mean: was.and_then(|w| w.mean),
                        old_pass_rate: was.and_then(|w| w.pass_rate),
                        new_metric: was.is_none(),
                    };
                    (m.name.clone(), delta)
                })
                .collect(),
        };
        DatasetView {
            summary,
            latency_ms: quantiles(Measure::LatencyMs),
            ttft_ms: quantiles(Measure::TtftMs),
            histograms,
            deltas,
            new_dataset: baseline.is_some() && old.is_none(),
        }
    }
}

impl Histogram {
    /// The histogram of `metric`'s scores over `samples` (`None`: no score).
    fn of(samples: &[&SampleRecord], metric: &str) -> Option<Histogram> {
        let mut threshold = None;
        let mut scores = Vec::new();
        for m in samples
            .iter()
            .flat_map(|s| s.metrics.iter())
            .filter(|m| m.name == metric)
        {
            threshold.get_or_insert((m.threshold, m.op.clone()));
            if let Some(score) = m.score.filter(|s| s.is_finite()) {
                scores.push(score);
            }
        }
        let (threshold, op) = threshold?;
        if scores.is_empty() {
            return None;
        }
        let (min, max) = scores.iter().fold((threshold, threshold), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
        let (lo, hi, bins) = if min >= 0.0 && max <= 1.0 {
            (0.0, 1.0, UNIT_BINS)
        } else if min == max {
            (min - 0.5, max + 0.5, OTHER_BINS)
        } else {
            (min, max, OTHER_BINS)
        };
        let mut counts = vec![0; bins];
        let width = (hi - lo) / bins as f64;
        for s in scores {
            let bin = ((s - lo) / width).floor();
            // The top of the range falls in the last bin.
            let bin = if bin.is_finite() && bin > 0.0 {
                (bin as usize).min(bins - 1)
            } else {
                0
            };
            counts[bin] += 1;
        }
        Some(Histogram {
            lo,
            hi,
            counts,
            threshold,
            op,
        })
    }
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
            changes: found.changes,
            added: found.added,
            removed: found.removed,
        }
    }
}

#[cfg(test)]
mod tests;
