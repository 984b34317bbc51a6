//! Writing the page as the samples go by: the HTML before the data, each
//! sample's record (escaped, or compressed), then per run what the samples
//! added up to (latency percentiles, score histograms), the HTML after. A
//! run's records are never all held for the page: a first pass over them
//! ([`PagePlan`]) finds each histogram's range and how many samples passed,
//! and the page is written in a second. Above [`Inline::all`] samples a run
//! embeds only its first samples that did not pass and an evenly spaced
//! share of those that passed ([`Inline`]); its figures are over every
//! sample, and the page names the results file that holds them all.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

use base64::engine::general_purpose::STANDARD;
use base64::write::EncoderWriter;
use eval_datasets::metric::{Measure, percentile};
use flate2::write::GzEncoder;
use serde::Serialize;

use super::{BaselineView, Binning, CSS, Histogram, JS, SummaryDelta};
use crate::output::results::{DatasetSummary, Results, SampleRecord, UsageTotals};

/// Which samples of a run its page embeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Inline {
    /// A run of at most this many samples is embedded whole.
    pub all: usize,
    /// Above, the first this many samples that did not pass (errors,
    /// failures, inconclusive ones counted as failed), in the results
    /// file's order...
    pub failing: usize,
    /// ...and this many of those that passed, evenly spaced in that order
    /// (the same samples for the same run: no randomness).
    pub passing: usize,
}

impl Inline {
    /// What the engine and `evals report html` embed: every sample of a run
    /// up to 100,000 (a page of about 5 MB); above, 20,000 that did not pass
    /// and 10,000 that passed.
    pub(crate) const DEFAULT: Inline = Inline {
        all: 100_000,
        failing: 20_000,
        passing: 10_000,
    };
}

/// What a first pass over a run's records tells its page (see the
/// [module docs](self)).
#[derive(Default, Debug)]
pub(crate) struct PagePlan {
    samples: usize,
    passing: usize,
    /// Per dataset and metric: the first record's threshold and operator,
    /// and the range of the threshold and every finite score.
    ranges: BTreeMap<(String, String), Range>,
    /// The datasets the records are of (the page's title names them).
    datasets: std::collections::BTreeSet<String>,
}

#[derive(Debug, Clone)]
struct Range {
    threshold: f64,
    op: String,
    lo: f64,
    hi: f64,
}

impl PagePlan {
    /// One more record of the run.
    pub(crate) fn add(&mut self, record: &SampleRecord) {
        self.samples += 1;
        if !self.datasets.contains(&record.dataset) {
            self.datasets.insert(record.dataset.clone());
        }
        if record.counts_as_passed() {
            self.passing += 1;
        }
        for m in &record.metrics {
            let range = match self
                .ranges
                .get_mut(&(record.dataset.clone(), m.name.clone()))
            {
                Some(r) => r,
                None => self
                    .ranges
                    .entry((record.dataset.clone(), m.name.clone()))
                    .or_insert(Range {
                        threshold: m.threshold,
                        op: m.op.clone(),
                        lo: m.threshold,
                        hi: m.threshold,
                    }),
            };
            if let Some(score) = m.score.filter(|s| s.is_finite()) {
                range.lo = range.lo.min(score);
                range.hi = range.hi.max(score);
            }
        }
    }

    /// How many records it was given.
    pub(crate) fn samples(&self) -> usize {
        self.samples
    }

    /// The names of the datasets its records are of, in order.
    pub(crate) fn datasets(&self) -> impl Iterator<Item = &str> {
        self.datasets.iter().map(String::as_str)
    }

    /// The plan of `records`.
    pub(crate) fn of<'r>(records: impl IntoIterator<Item = &'r SampleRecord>) -> PagePlan {
        let mut plan = PagePlan::default();
        records.into_iter().for_each(|r| plan.add(r));
        plan
    }
}

/// How much of a run its page holds, when not all of it.
#[derive(Serialize, Debug, Default, Clone, PartialEq)]
struct Partial {
    samples: usize,
    shown: usize,
    failing: usize,
    failing_shown: usize,
    passing: usize,
    passing_shown: usize,
}

/// The page being written to `W`.
pub(crate) struct PageWriter<'b, W: Write> {
    out: Data<W>,
    baseline: Option<&'b Results>,
    inline: Inline,
    /// Per run, from a first pass over its records.
    plans: Vec<PagePlan>,
    /// What the current run's page holds so far.
    partial: Partial,
    /// Runs written so far.
    runs: usize,
    /// Samples of the current run written so far.
    samples: usize,
    /// Per dataset of the current run: what its samples add up to.
    tallies: BTreeMap<String, Tally>,
    /// The first write that failed: later ones are not tried.
    error: Option<io::Error>,
}

/// Where the data goes: escaped JSON, or gzip then base64.
enum Data<W: Write> {
    /// Buffered: escaping scans large chunks, not the JSON writer's pieces.
    Plain(BufWriter<Escaping<W>>),
    /// Buffered: the compressor is slow on the JSON writer's small pieces.
    Compressed(
        Box<BufWriter<GzEncoder<EncoderWriter<'static, base64::engine::GeneralPurpose, W>>>>,
    ),
}

impl<W: Write> Write for Data<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Data::Plain(w) => w.write(buf),
            Data::Compressed(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Data::Plain(w) => w.flush(),
            Data::Compressed(w) => w.flush(),
        }
    }
}

/// Writes JSON with every `<` as the JSON escape `\u003c` (only inside
/// strings can JSON hold one), so neither `</script>` nor `<!--` can occur
/// in the script element; and (issue37:escape) every character the
/// terminal rule escapes (C0, DEL, C1, bidi controls, U+2028/9) as its
/// JSON escape too (`\u202e`): the same data, no raw control in the page.
struct Escaping<W: Write>(W);

impl<W: Write> Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Whole characters only: a character cut at the end of `buf` is
        // left for the next call (`write_all` sends it again).
        let text = match std::str::from_utf8(buf) {
            Ok(text) => text,
            Err(e) if e.valid_up_to() > 0 => {
                std::str::from_utf8(&buf[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => {
                // Not UTF-8 (serde_json never writes such): as it is.
                self.0.write_all(buf)?;
                return Ok(buf.len());
            }
        };
        let mut start = 0;
        for (at, c) in text.char_indices() {
            if c == '<' || (eval_datasets::terminal::needs_escape(c) && c != '\n' && c != '\t') {
                self.0.write_all(&text.as_bytes()[start..at])?;
                // Every such character is in the BMP: one JSON escape.
                write!(self.0, "\\u{:04x}", c as u32)?;
                start = at + c.len_utf8();
            }
        }
        self.0.write_all(&text.as_bytes()[start..])?;
        Ok(text.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// What one dataset's samples add up to.
#[derive(Default)]
struct Tally {
    latency_ms: Vec<f64>,
    ttft_ms: Vec<f64>,
    /// Per metric: its scores binned over the range the plan found.
    metrics: BTreeMap<String, Binning>,
    /// Samples by tag (category).
    tags: crate::output::text::TagCounts,
}

/// A run's figures beside its samples.
#[derive(Serialize)]
pub(crate) struct RunMeta<'a> {
    pub binary: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<&'a str>,
    pub written_unix: f64,
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    pub usage: UsageTotals,
    /// Where the scores come from (the calibrations of its judged metrics
    /// among it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<&'a crate::output::Provenance>,
    /// The results file's name (it is beside the page), when known: the
    /// page links it when it does not hold every sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results_file: Option<&'a str>,
    /// Written with what the page adds (see [`DatasetView`]).
    #[serde(skip)]
    pub datasets: &'a [DatasetSummary],
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
    /// Samples by tag (a runevals `category` is a tag): how many, how many
    /// passed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<crate::output::text::TagBreakdown>,
    /// Per metric (by name), with a baseline: how the summary moved.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    deltas: BTreeMap<String, SummaryDelta>,
    /// With a baseline: the dataset is not in it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    new_dataset: bool,
}

/// A run's verdict, as the page's banner shows it first: the words of the
/// terminal summary's first line, and the samples counted.
#[derive(Serialize, Debug, PartialEq)]
struct VerdictView {
    /// The run passed (and was complete).
    passed: bool,
    /// `passed`, `FAILED (2 of 5 samples failed, 1 gate(s) missed)`,
    /// `INCOMPLETE (...)`.
    headline: String,
    samples: usize,
    /// Counted as passed (an inconclusive sample as the run counts it).
    passed_samples: usize,
    failed: usize,
    errors: usize,
    inconclusive: usize,
    complete: bool,
}

impl VerdictView {
    fn of(meta: &RunMeta<'_>) -> VerdictView {
        let verdict = crate::output::verdict::RunVerdict::of(meta.datasets);
        let incomplete = meta.incomplete.is_some() || !meta.complete;
        let (passed, headline) = crate::output::text::headline(&verdict, incomplete);
        let sum = |f: fn(&DatasetSummary) -> usize| meta.datasets.iter().map(f).sum();
        VerdictView {
            passed,
            headline,
            samples: sum(|d| d.samples),
            passed_samples: sum(|d| d.passed),
            failed: sum(|d| d.failed),
            errors: sum(|d| d.errors),
            inconclusive: sum(|d| d.inconclusive),
            complete: !incomplete,
        }
    }
}

#[derive(Serialize)]
struct MetaOf<'a> {
    #[serde(flatten)]
    run: &'a RunMeta<'a>,
    /// The run's verdict and counts, for the banner at the top.
    verdict: VerdictView,
    datasets: Vec<DatasetView<'a>>,
    /// The run's page holds only part of its samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<Partial>,
}

impl<'b, W: Write> PageWriter<'b, W> {
    /// Writes the page up to its data; `compressed`: the data is written
    /// gzip-compressed, base64-encoded. `plans`: each run's (in the order
    /// they are written), `inline`: which of their samples are embedded.
    pub(crate) fn start(
        mut out: W,
        title: &str,
        (compressed, inline, plans): (bool, Inline, Vec<PagePlan>),
        baseline: Option<&'b Results>,
    ) -> io::Result<Self> {
        out.write_all(
            b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
              <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
              <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
              style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>",
        )?;
        out.write_all(escape_text(title).as_bytes())?;
        out.write_all(b"</title>\n<style>\n")?;
        out.write_all(CSS.as_bytes())?;
        out.write_all(b"</style>\n</head>\n<body>\n")?;
        // The SVG namespace, for the script's charts, without writing it out.
        out.write_all(b"<template id=\"svg-ns\"><svg></svg></template>\n")?;
        let mut out = if compressed {
            out.write_all(
                b"<script type=\"application/json\" id=\"report-data\" data-encoding=\"gzip-base64\">",
            )?;
            Data::Compressed(Box::new(BufWriter::with_capacity(
                1 << 16,
                GzEncoder::new(
                    EncoderWriter::new(out, &STANDARD),
                    flate2::Compression::fast(),
                ),
            )))
        } else {
            out.write_all(b"<script type=\"application/json\" id=\"report-data\">")?;
            Data::Plain(BufWriter::with_capacity(1 << 16, Escaping(out)))
        };
        out.write_all(b"{\"runs\":[")?;
        Ok(PageWriter {
            out,
            baseline,
            inline,
            plans,
            partial: Partial::default(),
            runs: 0,
            samples: 0,
            tallies: BTreeMap::new(),
            error: None,
        })
    }

    /// Adds one sample of the current run.
    pub(crate) fn sample(&mut self, record: &SampleRecord) {
        self.sample_as(record, None);
    }

    /// Adds one sample of the current run, `json` its compact JSON when the
    /// caller has it already (the results file's record, written once for
    /// both files).
    pub(crate) fn sample_as(&mut self, record: &SampleRecord, json: Option<&str>) {
        if self.error.is_some() {
            return;
        }
        if self.embeds(record) {
            let opening: &[u8] = match (self.samples, self.runs) {
                (0, 0) => b"{\"samples\":[",
                (0, _) => b",{\"samples\":[",
                _ => b",",
            };
            self.samples += 1;
            let written = self.out.write_all(opening).and_then(|()| match json {
                Some(json) => self.out.write_all(json.as_bytes()),
                None => serde_json::to_writer(&mut self.out, record).map_err(io::Error::other),
            });
            if let Err(e) = written {
                self.error = Some(e);
                return;
            }
        }
        let plan = self.plans.get(self.runs);
        let tally = self.tallies.entry(record.dataset.clone()).or_default();
        if let Some(v) = record
            .measured(Measure::LatencyMs)
            .filter(|v| v.is_finite())
        {
            tally.latency_ms.push(v);
        }
        if let Some(v) = record.measured(Measure::TtftMs).filter(|v| v.is_finite()) {
            tally.ttft_ms.push(v);
        }
        tally.tags.add(record);
        for m in &record.metrics {
            let binning = match tally.metrics.get_mut(&m.name) {
                Some(b) => b,
                None => {
                    let range =
                        plan.and_then(|p| p.ranges.get(&(record.dataset.clone(), m.name.clone())));
                    let binning = match range {
                        Some(r) => Binning::new(r.threshold, r.op.clone(), (r.lo, r.hi)),
                        // Not in the plan (it was not given this record):
                        // the threshold's range, scores beyond it clamped.
                        None => Binning::new(m.threshold, m.op.clone(), (m.threshold, m.threshold)),
                    };
                    tally.metrics.entry(m.name.clone()).or_insert(binning)
                }
            };
            if let Some(score) = m.score.filter(|s| s.is_finite()) {
                binning.add(score);
            }
        }
    }

    /// Whether the page embeds `record` (see [`Inline`]), counted.
    fn embeds(&mut self, record: &SampleRecord) -> bool {
        let (samples, passing) = self
            .plans
            .get(self.runs)
            .map_or((0, 0), |p| (p.samples, p.passing));
        let whole = samples <= self.inline.all;
        let p = &mut self.partial;
        p.samples += 1;
        let passed = record.counts_as_passed();
        let kept = if passed {
            // The j-th pass of P is kept when j·K mod P < K: exactly K of
            // them, evenly spaced.
            let (j, k) = (p.passing as u128, self.inline.passing as u128);
            p.passing += 1;
            whole || (j * k) % (passing.max(1) as u128) < k
        } else {
            p.failing += 1;
            whole || p.failing <= self.inline.failing
        };
        if kept {
            p.shown += 1;
            if passed {
                p.passing_shown += 1;
            } else {
                p.failing_shown += 1;
            }
        }
        kept
    }

    /// Ends the current run (the samples added since the last) with what
    /// `meta` says of it.
    pub(crate) fn end_run(&mut self, meta: &RunMeta<'_>) {
        if self.error.is_some() {
            return;
        }
        let mut tallies = std::mem::take(&mut self.tallies);
        let datasets = meta
            .datasets
            .iter()
            .map(|d| {
                dataset_view(
                    d,
                    tallies.remove(&d.name).unwrap_or_default(),
                    self.baseline,
                )
            })
            .collect();
        let opening: &[u8] = match (self.samples, self.runs) {
            (0, 0) => b"{\"samples\":[",
            (0, _) => b",{\"samples\":[",
            _ => b"",
        };
        let partial = std::mem::take(&mut self.partial);
        let whole = MetaOf {
            run: meta,
            verdict: VerdictView::of(meta),
            datasets,
            partial: (partial.shown < partial.samples).then_some(partial),
        };
        let written = self
            .out
            .write_all(opening)
            .and_then(|()| self.out.write_all(b"],\"meta\":"))
            .and_then(|()| serde_json::to_writer(&mut self.out, &whole).map_err(io::Error::other))
            .and_then(|()| self.out.write_all(b"}"));
        if let Err(e) = written {
            self.error = Some(e);
        }
        self.runs += 1;
        self.samples = 0;
    }

    /// Writes the rest of the page: the baseline's changes, the script.
    pub(crate) fn finish(mut self, baseline: Option<&BaselineView>) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        write!(
            self.out,
            "],\"generated_unix\":{}",
            crate::output::results::now_unix()
        )?;
        if let Some(b) = baseline {
            self.out.write_all(b",\"baseline\":")?;
            serde_json::to_writer(&mut self.out, b).map_err(io::Error::other)?;
        }
        self.out.write_all(b"}")?;
        let mut out = match self.out {
            Data::Plain(w) => w.into_inner().map_err(io::IntoInnerError::into_error)?.0,
            Data::Compressed(w) => w
                .into_inner()
                .map_err(io::IntoInnerError::into_error)?
                .finish()?
                .finish()?,
        };
        out.write_all(b"</script>\n<script>\n")?;
        out.write_all(JS.as_bytes())?;
        out.write_all(b"</script>\n</body>\n</html>\n")?;
        out.flush()
    }
}

fn dataset_view<'a>(
    summary: &'a DatasetSummary,
    tally: Tally,
    baseline: Option<&Results>,
) -> DatasetView<'a> {
    let quantiles = |mut values: Vec<f64>| {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable_by(f64::total_cmp);
        Some([percentile(&values, 0.5), percentile(&values, 0.95)])
    };
    let histograms = tally
        .metrics
        .into_iter()
        .filter_map(|(name, binning)| binning.finish().map(|h| (name, h)))
        .collect();
    let old = baseline.and_then(|b| b.datasets.iter().find(|d| d.name == summary.name));
    let deltas = match old {
        None => BTreeMap::new(),
        Some(old) => summary
            .metrics
            .iter()
            .map(|m| {
                let was = old.metrics.iter().find(|o| o.name == m.name);
                (m.name.clone(), SummaryDelta::of(m, was))
            })
            .collect(),
    };
    DatasetView {
        summary,
        latency_ms: quantiles(tally.latency_ms),
        ttft_ms: quantiles(tally.ttft_ms),
        histograms,
        tags: tally.tags.breakdown(),
        deltas,
        new_dataset: baseline.is_some() && old.is_none(),
    }
}

/// `s` as HTML text (for the title; the data never goes through this;
/// html-escape's `encode_text`: `&`, `<`, `>`),
/// under the terminal rule (issue37:escape): a bidi control would reorder
/// the title, so it is shown escaped (`\u{202e}`), not isolated.
fn escape_text(s: &str) -> String {
    html_escape::encode_text(&eval_datasets::terminal::escaped(s)).into_owned()
}
