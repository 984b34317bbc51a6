//! The results file: every run writes one JSON document with a record per
//! sample and, per dataset and metric, the mean, the pass rate and the
//! verdict of each gate. It says whether the run was complete: a dataset is
//! complete when every sample the plan holds for it is in the file, and
//! gates are judged only over complete datasets.
//!
//! Where it goes is [`location`](super::location)'s business; joining parts
//! and shards is [`merge`](super::merge()).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use eval_core::metric::{MetricSpec, Op};
use serde::{Deserialize, Serialize};

use crate::output::report::SampleReport;
use crate::services::Usage;

/// Version of the results-file layout (fields are only ever added).
pub const FORMAT_VERSION: u32 = 1;

/// Why a results file could not be read, written or merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResultsError {
    /// Reading failed.
    #[error("cannot read results file {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a results file.
    #[error("{} is not a results file: {reason}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        reason: String,
    },
    /// The file has another layout version.
    #[error("results file {}: layout version {found} (this version reads {FORMAT_VERSION})", .path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Writing failed.
    #[error("cannot write results file {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The results of a run that did not evaluate all it planned, where a
    /// whole run is needed (a baseline, a comparison).
    #[error("{} holds an incomplete run ({why}): as a baseline or in a comparison its missing samples would read as removed; --partial uses it anyway", .path.display())]
    Incomplete {
        /// The file.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// Two inputs of a merge hold the same sample.
    #[error(
        "sample {test_name} of dataset {dataset} is in results {first} and {second}: the shards overlap"
    )]
    Overlap {
        /// The sample's test name.
        test_name: String,
        /// Its dataset.
        dataset: String,
        /// Index of the first input holding it.
        first: usize,
        /// Index of the second.
        second: usize,
    },
    /// A merge of different test binaries' results.
    #[error(
        "results of different test binaries ({first} and {second}): merge each binary's results on its own"
    )]
    Binaries {
        /// One binary.
        first: String,
        /// Another.
        second: String,
    },
    /// A merge of results with different plans for one dataset.
    #[error("dataset {dataset} has different {what} in different results files")]
    Plans {
        /// The dataset.
        dataset: String,
        /// `gates`, `sample counts` or `ci_gate settings`.
        what: &'static str,
    },
    /// Nothing to merge.
    #[error("no results file under {}", .0.display())]
    Empty(PathBuf),
}

/// A whole run (or several merged runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Results {
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// Test binary (or harness) that produced it.
    pub binary: String,
    /// The package of that test binary, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// When the file was written, seconds since the Unix epoch.
    pub written_unix: f64,
    /// Every dataset holds every sample its plan holds (so every gate was
    /// judged), and no dataset of the binary's previous run is missing.
    #[serde(default)]
    pub complete: bool,
    /// Datasets the previous results file of this test binary held that this
    /// run did not run (filtered out, or the process was stopped first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_datasets: Vec<String>,
    /// Per-dataset aggregates, by dataset name.
    pub datasets: Vec<DatasetSummary>,
    /// One record per evaluated sample, sorted by dataset then test name.
    pub samples: Vec<SampleRecord>,
}

/// Outcome of one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every metric passed.
    Pass,
    /// A metric was on the wrong side of its threshold.
    Fail,
    /// The sample could not be scored (agent error, missing field, a
    /// metric without a score...).
    Error,
}

impl Verdict {
    /// The verdict of a report.
    pub fn of(report: &SampleReport) -> Verdict {
        if report.unscored() {
            Verdict::Error
        } else if report.passed() {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// The part of a failing output kept in results files (500 characters).
pub(crate) fn cut_output(output: &str) -> String {
    output.chars().take(500).collect()
}

/// One metric on one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricRecord {
    /// Metric name.
    pub name: String,
    /// Score, when computed.
    pub score: Option<f64>,
    /// `>=` or `<=`.
    pub op: String,
    /// Threshold.
    pub threshold: f64,
    /// Whether the score met the threshold.
    pub passed: bool,
    /// Why no score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How it was scored when not by the metric's primary method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The value in the metric's original direction when the score is flipped
    /// (deepeval toxicity and bias), or the 1–5 rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<f64>,
    /// Over repeated runs: `[runs, low, high]` of the 95% interval around the
    /// score (the mean), and whether it straddles the threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<RunSpread>,
}

/// A metric's spread over repeated runs, in a results file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunSpread {
    /// Runs.
    pub runs: usize,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// The interval contains the threshold.
    pub straddles: bool,
}

impl From<crate::output::report::Spread> for RunSpread {
    fn from(s: crate::output::report::Spread) -> Self {
        RunSpread {
            runs: s.runs,
            low: s.low,
            high: s.high,
            straddles: s.straddles,
        }
    }
}

/// One evaluated sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SampleRecord {
    /// Dataset name (see the README: the manifest's name, the eval
    /// function's path, or the file stem).
    pub dataset: String,
    /// Full test name.
    pub test_name: String,
    /// Sample id.
    pub id: String,
    /// `file:line`.
    pub source: String,
    /// Pass, fail or error.
    pub verdict: Verdict,
    /// Per-metric scores.
    pub metrics: Vec<MetricRecord>,
    /// Time in the agent, milliseconds.
    pub latency_ms: f64,
    /// Why the sample could not be scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent's output, for samples that did not pass (cut to 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Time to the agent's first token, milliseconds, when it streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// The tool calls the agent made, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<eval_core::ToolCall>,
    /// The agent's calls, retries and tokens.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent: Usage,
    /// Judge calls made to score it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage: Usage,
    /// Embedding calls made to score it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub embeddings: Usage,
}

fn is_zero_count(n: &usize) -> bool {
    *n == 0
}

fn is_zero(u: &Usage) -> bool {
    *u == Usage::default()
}

impl MetricRecord {
    /// The persisted form of one metric result.
    pub fn from_result(m: &crate::output::report::MetricResult) -> Self {
        MetricRecord {
            name: m.name.clone(),
            score: m.score,
            op: m.op.to_string(),
            threshold: m.threshold,
            passed: m.passed,
            error: m.error.as_ref().map(ToString::to_string),
            method: m.method.map(str::to_string),
            raw: m.raw,
            spread: m.spread.map(RunSpread::from),
        }
    }
}

impl SampleRecord {
    /// The persisted form of a report.
    pub fn from_report(dataset: &str, report: &SampleReport) -> Self {
        let verdict = Verdict::of(report);
        SampleRecord {
            dataset: dataset.to_string(),
            test_name: report.test_name.clone(),
            id: report.id.clone(),
            source: report.source.to_string(),
            verdict,
            metrics: report
                .metrics
                .iter()
                .map(MetricRecord::from_result)
                .collect(),
            latency_ms: report.latency.as_secs_f64() * 1000.0,
            error: report.error.as_ref().map(ToString::to_string),
            output: match (&report.output, verdict) {
                (Some(out), Verdict::Fail) => Some(cut_output(out)),
                _ => None,
            },
            ttft_ms: report.ttft.map(|t| t.as_secs_f64() * 1000.0),
            tool_calls: report.tool_calls.clone(),
            agent: report.agent,
            usage: report.usage,
            embeddings: report.embeddings,
        }
    }
}

/// An aggregate gate: the mean of a metric over a dataset's samples must be
/// on the right side of a threshold (agentspec's `ciGate` meaning).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Gate {
    /// Metric name.
    pub metric: String,
    /// `>=` or `<=`.
    pub op: String,
    /// Threshold on the mean.
    pub threshold: f64,
}

impl Gate {
    /// A gate on the mean of `spec`'s metric, with `spec`'s operator and threshold.
    pub fn from_spec(spec: &MetricSpec) -> Self {
        Gate {
            metric: spec.name.clone(),
            op: spec.op.to_string(),
            threshold: spec.threshold,
        }
    }

    /// A gate on the mean of `metric`.
    pub fn new(metric: &str, op: Op, threshold: f64) -> Self {
        Gate {
            metric: metric.to_string(),
            op: op.to_string(),
            threshold,
        }
    }

    pub(crate) fn passes(&self, mean: f64) -> bool {
        if self.op == Op::AtMost.to_string() {
            mean <= self.threshold
        } else {
            mean >= self.threshold
        }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.metric, self.op, self.threshold)
    }
}

/// A gate's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GateResult {
    /// The gate.
    #[serde(flatten)]
    pub gate: Gate,
    /// Whether it was judged: only over a complete dataset (every sample of
    /// the plan evaluated), never over a filtered or `--exact` subset.
    #[serde(default = "yes")]
    pub judged: bool,
    /// Judged and met (false when not judged, or when no sample was scored).
    pub passed: bool,
    /// `mean - threshold` (negative = short of a minimum), when there is a mean.
    pub margin: Option<f64>,
    /// Samples of the dataset that could not be scored: any fails the gate.
    #[serde(default)]
    pub unscored: usize,
    /// When not judged: samples evaluated and samples planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<(usize, usize)>,
}

fn yes() -> bool {
    true
}

/// Aggregates of one metric over one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricSummary {
    /// Metric name.
    pub name: String,
    /// Samples with a score.
    pub scored: usize,
    /// Samples of the dataset without a score for it (the agent failed, the
    /// sample timed out, the metric failed): not in the mean, not passed.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub unscored: usize,
    /// Mean score over the scored samples (those `unscored` cannot be in it:
    /// when there are any, the dataset's gates are missed).
    pub mean: Option<f64>,
    /// Share of the samples it applies to (scored and unscored) that passed
    /// the per-sample threshold: an unscored sample did not pass.
    pub pass_rate: Option<f64>,
    /// The aggregate gate on this metric, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateResult>,
}

/// Aggregates of one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSummary {
    /// Dataset name.
    pub name: String,
    /// Samples evaluated.
    pub samples: usize,
    /// Samples the plan holds for this dataset (`None` in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<usize>,
    /// Every planned sample was evaluated.
    #[serde(default = "yes")]
    pub complete: bool,
    /// `ciGate`: samples are judged by the gates on the means (a sample then
    /// fails only when it cannot be scored).
    #[serde(default)]
    pub ci_gate: bool,
    /// Samples that passed.
    pub passed: usize,
    /// Samples with a failing metric.
    pub failed: usize,
    /// Samples that could not be scored.
    pub errors: usize,
    /// Per metric, in first-seen order.
    pub metrics: Vec<MetricSummary>,
    /// Gates declared for this dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    /// True when every gate was judged and passed (true when there are none).
    pub gates_passed: bool,
}

/// What the plan says of one dataset, for its summary: how many samples it
/// holds, its gates, whether samples are judged by the gates.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct DatasetTerms {
    /// Samples the plan holds (`None`: unknown, results of older versions).
    pub planned: Option<usize>,
    /// Gates on the means.
    pub gates: Vec<Gate>,
    /// `ciGate`.
    pub ci_gate: bool,
}

impl DatasetTerms {
    /// Terms with `planned` samples and `gates`.
    pub fn new(planned: Option<usize>, gates: Vec<Gate>, ci_gate: bool) -> Self {
        DatasetTerms {
            planned,
            gates,
            ci_gate,
        }
    }
}

impl Results {
    /// Results for `samples` under `terms` (per dataset name); aggregates
    /// and gate verdicts computed here.
    pub fn new(
        binary: &str,
        mut samples: Vec<SampleRecord>,
        terms: &BTreeMap<String, DatasetTerms>,
    ) -> Self {
        samples.sort_by(|a, b| (&a.dataset, &a.test_name).cmp(&(&b.dataset, &b.test_name)));
        let mut summaries = super::summary::Summaries::default();
        samples.iter().for_each(|s| summaries.add(s));
        let (datasets, complete) = summaries.finish_run(terms);
        Results {
            version: FORMAT_VERSION,
            binary: binary.to_string(),
            package: None,
            written_unix: now_unix(),
            complete,
            missing_datasets: Vec::new(),
            datasets,
            samples,
        }
    }

    /// What this run lacks, if it is incomplete: datasets with fewer samples
    /// than planned, datasets of the previous run that did not run.
    pub fn incompleteness(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let mut parts: Vec<String> = self
            .datasets
            .iter()
            .filter(|d| !d.complete)
            .map(|d| match d.planned {
                Some(p) => format!("{} of {p} samples of `{}`", d.samples, d.name),
                None => format!("part of `{}`", d.name),
            })
            .collect();
        if !self.missing_datasets.is_empty() {
            parts.push(format!(
                "dataset(s) {} did not run",
                self.missing_datasets
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if parts.is_empty() {
            parts.push("marked incomplete".into());
        }
        Some(parts.join("; "))
    }

    /// `Ok` when the run is complete; else [`ResultsError::Incomplete`] naming `path`.
    pub fn require_complete(&self, path: &Path) -> Result<(), ResultsError> {
        match self.incompleteness() {
            None => Ok(()),
            Some(why) => Err(ResultsError::Incomplete {
                path: path.to_path_buf(),
                why,
            }),
        }
    }

    /// The terms each dataset was summarised under, to recompute summaries
    /// (when merging).
    pub fn terms(&self) -> BTreeMap<String, DatasetTerms> {
        self.datasets
            .iter()
            .map(|d| {
                (
                    d.name.clone(),
                    DatasetTerms::new(d.planned, d.gates.clone(), d.ci_gate),
                )
            })
            .collect()
    }

    /// The gates that were judged and missed, as `(dataset, gate result)`.
    pub fn failed_gates(&self) -> Vec<(&str, &GateResult)> {
        failed_gates(&self.datasets)
    }

    /// Writes the file atomically: readers see the old file or the new one.
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        super::write_json(path, self)
    }

    /// Reads a results file.
    pub fn read(path: &Path) -> Result<Results, ResultsError> {
        let bytes = std::fs::read(path).map_err(|source| ResultsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let results: Results = serde_json::from_slice(&bytes).map_err(|e| ResultsError::Parse {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        if results.version != FORMAT_VERSION {
            return Err(ResultsError::Version {
                path: path.to_path_buf(),
                found: results.version,
            });
        }
        Ok(results)
    }
}

impl fmt::Display for GateResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = &self.gate;
        if !self.judged {
            let (ran, planned) = self.ran.unwrap_or((0, 0));
            return write!(
                f,
                "gate {g} not judged: {ran} of {planned} samples ran (gates judge whole datasets only)"
            );
        }
        if self.unscored > 0 {
            write!(
                f,
                "{} sample(s) could not be scored, so the gate is missed; ",
                self.unscored
            )?;
        }
        match self.margin {
            Some(m) => write!(
                f,
                "mean {} = {:.4}, gate {} {} ({} by {:.4})",
                g.metric,
                g.threshold + m,
                g.op,
                g.threshold,
                if self.passed { "met" } else { "missed" },
                m.abs()
            ),
            None => write!(
                f,
                "mean {}: no sample was scored, gate {} {} missed",
                g.metric, g.op, g.threshold
            ),
        }
    }
}

/// The gates that were judged and missed in `datasets`, as `(dataset, gate result)`.
pub fn failed_gates(datasets: &[DatasetSummary]) -> Vec<(&str, &GateResult)> {
    datasets
        .iter()
        .flat_map(|d| {
            d.metrics
                .iter()
                .filter_map(|m| m.gate.as_ref())
                .filter(|g| g.judged && !g.passed)
                .map(move |g| (d.name.as_str(), g))
        })
        .collect()
}

pub(crate) fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Writes a results file whose samples come from an iterator, one at a time
/// (same layout as [`Results`]), atomically: a run of 100,000 samples never
/// holds all its records at once.
pub(crate) fn write_streaming(
    path: &Path,
    (binary, package): (&str, Option<&str>),
    (datasets, complete, missing): (&[DatasetSummary], bool, &[String]),
    samples: impl Iterator<Item = SampleRecord>,
) -> Result<(), ResultsError> {
    struct Seq<I>(std::cell::RefCell<Option<I>>);
    impl<I: Iterator<Item = SampleRecord>> Serialize for Seq<I> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            match self.0.borrow_mut().take() {
                Some(iter) => s.collect_seq(iter),
                None => s.collect_seq(std::iter::empty::<SampleRecord>()),
            }
        }
    }
    #[derive(Serialize)]
    #[serde(bound = "")]
    struct Streamed<'a, I: Iterator<Item = SampleRecord>> {
        version: u32,
        binary: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        package: Option<&'a str>,
        written_unix: f64,
        complete: bool,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        missing_datasets: &'a [String],
        datasets: &'a [DatasetSummary],
        samples: Seq<I>,
    }
    let doc = Streamed {
        version: FORMAT_VERSION,
        binary,
        package,
        written_unix: now_unix(),
        complete: complete && missing.is_empty(),
        missing_datasets: missing,
        datasets,
        samples: Seq(std::cell::RefCell::new(Some(samples))),
    };
    super::write_json(path, &doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_record as record;

    fn gate(threshold: f64) -> Gate {
        Gate {
            metric: "contains".into(),
            op: ">=".into(),
            threshold,
        }
    }

    #[test]
    fn aggregates_and_gates_over_a_complete_dataset() {
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(2), vec![gate(0.75)], false),
        )]);
        let a = Results::new(
            "evals",
            vec![
                record("rag", "a", Verdict::Pass),
                record("rag", "b", Verdict::Fail),
            ],
            &terms,
        );
        assert!(a.complete);
        let d = &a.datasets[0];
        assert_eq!((d.samples, d.passed, d.failed, d.errors), (2, 1, 1, 0));
        assert_eq!(d.metrics[0].mean, Some(0.5));
        assert_eq!(d.metrics[0].pass_rate, Some(0.5));
        let g = d.metrics[0].gate.as_ref().unwrap();
        assert!(g.judged && !g.passed);
        assert_eq!(g.margin, Some(-0.25));
        assert_eq!(
            g.to_string(),
            "mean contains = 0.5000, gate >= 0.75 (missed by 0.2500)"
        );
        assert_eq!(a.failed_gates().len(), 1);
    }

    #[test]
    fn a_gate_over_part_of_a_dataset_is_not_judged() {
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(3), vec![gate(0.9)], false),
        )]);
        let part = Results::new("evals", vec![record("rag", "a", Verdict::Fail)], &terms);
        assert!(!part.complete);
        let d = &part.datasets[0];
        assert!(!d.complete);
        let g = d.metrics[0].gate.as_ref().unwrap();
        assert!(!g.judged && !g.passed);
        assert_eq!(
            g.to_string(),
            "gate contains >= 0.9 not judged: 1 of 3 samples ran (gates judge whole datasets only)"
        );
        assert!(part.failed_gates().is_empty(), "not judged is not failed");
        assert!(!d.gates_passed);
    }

    #[test]
    fn atomic_write_and_read_back() {
        let dir = std::env::temp_dir().join(format!("eval-results-test-{}", std::process::id()));
        let path = dir.join("x/evals.json");
        let r = Results::new(
            "evals",
            vec![record("rag", "a", Verdict::Pass)],
            &BTreeMap::new(),
        );
        r.write(&path).unwrap();
        assert_eq!(Results::read(&path).unwrap(), r);
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
        std::fs::write(&path, b"{}").unwrap();
        assert!(
            Results::read(&path)
                .unwrap_err()
                .to_string()
                .contains("is not a results file")
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
