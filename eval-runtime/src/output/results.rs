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

use eval_core::metric::{GateSpec, Measure, MetricSpec, Op, Stat};
use serde::{Deserialize, Serialize};

use crate::output::report::SampleReport;
use crate::services::Usage;
use crate::stats::Decision;

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
    /// Two runs whose scores cannot be compared (or joined): a metric both
    /// scored was judged differently, or a dataset both hold has other
    /// content.
    #[error(
        "the runs cannot be compared: {}; --allow-judge-change / --allow-dataset-change compare them anyway, and say so",
        .differences.join("; ")
    )]
    Incomparable {
        /// What differs, one entry each.
        differences: Vec<String>,
    },
    /// A run that cannot be compared with its baseline.
    #[error(
        "baseline {} cannot be compared with this run: {}; accept the run as the new baseline (EVAL_ACCEPT_BASELINE=1, `evals report accept`), or allow the change (--allow-judge-change, --allow-dataset-change)",
        .path.display(),
        .differences.join("; ")
    )]
    BaselineIncomparable {
        /// The baseline.
        path: PathBuf,
        /// What differs, one entry each.
        differences: Vec<String>,
    },
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
    /// Where the scores come from: the tool, the revision, the datasets'
    /// content hashes, the judge's and embeddings' fingerprints, the agent
    /// (absent in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<super::provenance::Provenance>,
    /// Per-dataset aggregates, by dataset name.
    pub datasets: Vec<DatasetSummary>,
    /// Calls, tokens and cost of the whole run (the datasets' together).
    #[serde(default, skip_serializing_if = "UsageTotals::is_empty")]
    pub usage: UsageTotals,
    /// One record per evaluated sample, sorted by dataset then test name.
    pub samples: Vec<SampleRecord>,
}

/// Outcome of one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every metric passed (over repeated runs: every metric's interval
    /// lies on the passing side of its threshold).
    Pass,
    /// A metric was on the wrong side of its threshold (over repeated runs:
    /// its whole interval).
    Fail,
    /// Over repeated runs, no metric failed and a metric's interval
    /// straddles its threshold: the sample could pass or fail. Whether it
    /// counts as passed is the run's setting ([`SampleRecord::counted_as`]).
    Inconclusive,
    /// The sample could not be scored (agent error, missing field, a
    /// metric without a score...).
    Error,
}

impl Verdict {
    /// The verdict of a report.
    pub fn of(report: &SampleReport) -> Verdict {
        match report.decision() {
            None => Verdict::Error,
            Some(Decision::Pass) => Verdict::Pass,
            Some(Decision::Fail) => Verdict::Fail,
            Some(Decision::Inconclusive) => Verdict::Inconclusive,
        }
    }

    /// `pass`, `fail`, `inconclusive` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Error => "error",
        }
    }
}

/// How much of a text (an input turn, the expected answer, the output, a
/// context chunk, a judge's reason) a results file keeps, in characters.
pub const KEPT_CHARS: usize = 500;
/// How many context chunks a results file keeps per sample.
pub const KEPT_CHUNKS: usize = 20;

/// The part of a text kept in results files ([`KEPT_CHARS`] characters).
pub(crate) fn cut_output(output: &str) -> String {
    match output.char_indices().nth(KEPT_CHARS) {
        Some((end, _)) => output[..end].to_string(),
        None => output.to_string(),
    }
}

/// The part of a context kept in results files.
pub(crate) fn cut_chunks(chunks: &[String]) -> Vec<String> {
    chunks
        .iter()
        .take(KEPT_CHUNKS)
        .map(|c| cut_output(c))
        .collect()
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
    /// Why it scored as it did, when the metric says: the judge's reason,
    /// or the verdicts it counted (cut to 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A metric's spread over repeated runs, in a results file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunSpread {
    /// Runs.
    pub runs: usize,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// The interval contains the threshold.
    pub straddles: bool,
    /// Standard deviation of the runs' scores (absent in files of earlier
    /// versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd: Option<f64>,
    /// The interval's confidence level (0.95 in files of earlier versions).
    #[serde(default = "standard_level")]
    pub level: f64,
    /// How the interval was computed (`wilson` or `t`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::stats::Method>,
    /// Where the interval lies against the threshold (files of earlier
    /// versions say only whether it straddles it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

fn standard_level() -> f64 {
    crate::stats::Level::STANDARD.0
}

impl From<crate::output::report::Spread> for RunSpread {
    fn from(s: crate::output::report::Spread) -> Self {
        RunSpread {
            runs: s.runs,
            low: s.low,
            high: s.high,
            straddles: s.straddles,
            sd: Some(s.sd),
            level: s.level,
            method: Some(s.method),
            decision: Some(s.decision),
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
    /// Pass, fail, inconclusive or error.
    pub verdict: Verdict,
    /// For an inconclusive sample: whether it counted as passed (`pass`) or
    /// failed (`fail`), as the run's setting says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_as: Option<Verdict>,
    /// The sample's cluster (the value of the field the dataset is
    /// clustered by), when one is named and the sample has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// A hash of what the dataset says of the sample (its input, expected
    /// answer, context, tags, metadata...: everything but where it is in
    /// the file): a sample whose content changed between two runs is not
    /// the same sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Per-metric scores.
    pub metrics: Vec<MetricRecord>,
    /// Time in the agent, milliseconds.
    pub latency_ms: f64,
    /// Why the sample could not be scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The item's name, when the dataset gives one (a runevals item's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The id of the retrieval dataset the query belongs to (Unrag's `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_id: Option<String>,
    /// The user turns sent to the agent, in order (each cut to
    /// [`KEPT_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<String>,
    /// The expected answer (one per turn: `[1] …  [2] …`), cut to
    /// [`KEPT_CHARS`] characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The tool calls the sample expects, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_tools: Option<Vec<eval_core::ToolCall>>,
    /// The sample's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The sample's metadata, as the dataset gives it.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The agent's output, when it answered (cut to [`KEPT_CHARS`]
    /// characters; files of earlier versions hold it only for samples that
    /// failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The context the agent returned with its answer (at most
    /// [`KEPT_CHUNKS`] chunks, each cut to [`KEPT_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
    /// The document ids the agent retrieved, best first (retrieval queries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retrieved_ids: Vec<String>,
    /// The ids the query should retrieve (a retrieval dataset's `relevant`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relevant_ids: Vec<String>,
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
    /// What it cost in US dollars (agent, judge and embeddings tokens at the
    /// price table's prices); absent without a price table or when a model
    /// used is not in it (unknown, not 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Why the cost is unknown though a price table is set (a model it used
    /// has no price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_unknown: Option<String>,
    /// Runs of the agent scored (`repeat`); latency and cost are their total.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub runs: u32,
}

fn is_zero_count(n: &usize) -> bool {
    *n == 0
}

fn is_zero(u: &Usage) -> bool {
    *u == Usage::default()
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl SampleRecord {
    /// Whether the sample counts as passed: it passed, or it is
    /// inconclusive and counted as passed.
    pub fn counts_as_passed(&self) -> bool {
        match self.verdict {
            Verdict::Pass => true,
            Verdict::Inconclusive => self.counted_as == Some(Verdict::Pass),
            Verdict::Fail | Verdict::Error => false,
        }
    }

    /// What the engine measured of this sample, per run of the agent (the
    /// value a gate on `latency_ms`, `ttft_ms` or `cost_usd` takes), when
    /// it was measured.
    pub fn measured(&self, measure: Measure) -> Option<f64> {
        let runs = f64::from(self.runs.max(1));
        match measure {
            Measure::LatencyMs => Some(self.latency_ms / runs),
            Measure::TtftMs => self.ttft_ms,
            Measure::CostUsd => self.cost_usd.map(|c| c / runs),
            _ => None,
        }
    }
}

impl MetricRecord {
    /// Where the metric stands on this sample: over repeated runs, where
    /// its interval lies against the threshold; for one run, whether the
    /// score passed. `None` without a score.
    pub fn decision(&self) -> Option<Decision> {
        self.score?;
        Some(match &self.spread {
            Some(s) => s.decision.unwrap_or(if s.straddles {
                Decision::Inconclusive
            } else if self.passed {
                Decision::Pass
            } else {
                Decision::Fail
            }),
            None if self.passed => Decision::Pass,
            None => Decision::Fail,
        })
    }

    /// Why it did not pass, in one line (`None` when it passed), as
    /// [`MetricResult::why`](crate::MetricResult::why) says it.
    pub fn why(&self) -> Option<String> {
        crate::output::report::why_not_passed(
            (self.score, self.passed),
            (&self.op, self.threshold),
            self.error.as_deref(),
            self.reason.as_deref(),
        )
        .map(|why| crate::output::report::with_interval(why, self.runs_interval()))
    }

    /// Its interval over repeated runs, as reports say it.
    pub(crate) fn runs_interval(&self) -> Option<crate::output::report::RunsInterval> {
        self.spread.map(|s| crate::output::report::RunsInterval {
            runs: s.runs,
            low: s.low,
            high: s.high,
            level: s.level,
            decision: self.decision(),
        })
    }

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
            reason: m.reason.as_deref().map(cut_output),
        }
    }
}

impl SampleRecord {
    /// The persisted form of `sample`'s report.
    pub fn from_report(dataset: &str, sample: &eval_core::Sample, report: &SampleReport) -> Self {
        let verdict = Verdict::of(report);
        SampleRecord {
            dataset: dataset.to_string(),
            test_name: report.test_name.clone(),
            id: report.id.clone(),
            source: report.source.to_string(),
            verdict,
            counted_as: counted_as(verdict, report.passed()),
            metrics: report
                .metrics
                .iter()
                .map(MetricRecord::from_result)
                .collect(),
            latency_ms: report.latency.as_secs_f64() * 1000.0,
            error: report.error.as_ref().map(ToString::to_string),
            output: report.output.as_deref().map(cut_output),
            context: cut_chunks(&report.context),
            retrieved_ids: report.retrieved.clone(),
            ttft_ms: report.ttft.map(|t| t.as_secs_f64() * 1000.0),
            tool_calls: report.tool_calls.clone(),
            agent: report.agent,
            usage: report.usage,
            embeddings: report.embeddings,
            cost_usd: report.cost_usd,
            cost_unknown: report.cost_unknown.clone(),
            runs: report
                .metrics
                .iter()
                .find_map(|m| m.spread.map(|s| s.runs as u32))
                .unwrap_or(1),
            ..SampleRecord::describing(sample)
        }
    }

    /// A record holding what the dataset says of `sample` (its name, input,
    /// expected answer and tools, tags, metadata, relevant ids) and nothing
    /// evaluated.
    pub(crate) fn describing(sample: &eval_core::Sample) -> Self {
        SampleRecord {
            dataset: String::new(),
            test_name: String::new(),
            id: sample.id.clone(),
            source: sample.source.to_string(),
            verdict: Verdict::Error,
            counted_as: None,
            cluster: None,
            hash: Some(crate::output::provenance::sample_hash(sample)),
            metrics: Vec::new(),
            latency_ms: 0.0,
            error: None,
            name: crate::output::report::item_name(sample),
            dataset_id: sample.retrieval.as_ref().map(|q| q.dataset_id.clone()),
            input: sample.input.turns().iter().map(|t| cut_output(t)).collect(),
            expected: sample.expected.as_ref().map(|e| {
                cut_output(&match e {
                    eval_core::Expected::PerTurn(list) => crate::output::numbered(list),
                    eval_core::Expected::Text(t) => t.clone(),
                })
            }),
            expected_tools: sample.expected_tools.clone(),
            tags: sample.tags.clone(),
            metadata: sample.metadata.clone(),
            output: None,
            context: Vec::new(),
            retrieved_ids: Vec::new(),
            relevant_ids: sample
                .relevant_ids()
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            ttft_ms: None,
            tool_calls: Vec::new(),
            agent: Usage::default(),
            usage: Usage::default(),
            embeddings: Usage::default(),
            cost_usd: None,
            cost_unknown: None,
            runs: 1,
        }
    }
}

/// What an inconclusive sample counted as: `Some(Pass)` or `Some(Fail)`;
/// `None` for a decided one.
pub(crate) fn counted_as(verdict: Verdict, passed: bool) -> Option<Verdict> {
    (verdict == Verdict::Inconclusive).then_some(if passed { Verdict::Pass } else { Verdict::Fail })
}

/// An aggregate gate: a statistic of a metric over a dataset's scored
/// samples — the mean (agentspec's `ciGate` meaning), or a percentile
/// (`p95(latency_ms) <= 3000`, see [`eval_core::metric::percentile`]) —
/// must be on the right side of a threshold. A gate on what the engine
/// measures (`latency_ms`, `ttft_ms`, `cost_usd`) takes each sample's
/// measured value per run of the agent, whether or not the dataset is
/// scored with the metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Gate {
    /// Metric name.
    pub metric: String,
    /// `>=` or `<=`.
    pub op: String,
    /// Threshold on the statistic.
    pub threshold: f64,
    /// The statistic: `mean` (files of earlier versions hold mean gates
    /// only), `p50`, `p95`...
    #[serde(default)]
    pub stat: Stat,
}

impl Gate {
    /// A gate on the mean of `spec`'s metric, with `spec`'s operator and threshold.
    pub fn from_spec(spec: &MetricSpec) -> Self {
        Gate {
            metric: spec.name.clone(),
            op: spec.op.to_string(),
            threshold: spec.threshold,
            stat: Stat::Mean,
        }
    }

    /// The gate `gate` describes.
    pub fn from_gate(gate: &GateSpec) -> Self {
        Gate {
            stat: gate.stat,
            ..Gate::from_spec(&gate.spec)
        }
    }

    /// A gate on the mean of `metric`.
    pub fn new(metric: &str, op: Op, threshold: f64) -> Self {
        Gate {
            metric: metric.to_string(),
            op: op.to_string(),
            threshold,
            stat: Stat::Mean,
        }
    }

    /// The same gate on another statistic.
    pub fn with_stat(mut self, stat: Stat) -> Self {
        self.stat = stat;
        self
    }

    /// What the engine measures for the gate's metric, if it is a measured one.
    pub fn measured(&self) -> Option<Measure> {
        eval_core::metric::lookup(&self.metric).and_then(|i| i.measured())
    }

    /// `<=` or `>=`.
    pub fn op(&self) -> Op {
        if self.op == Op::AtMost.to_string() {
            Op::AtMost
        } else {
            Op::AtLeast
        }
    }

    pub(crate) fn passes(&self, value: f64) -> bool {
        match self.op() {
            Op::AtMost => value <= self.threshold,
            Op::AtLeast => value >= self.threshold,
        }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stat {
            Stat::Mean => write!(f, "{} {} {}", self.metric, self.op, self.threshold),
            stat => write!(f, "{stat}({}) {} {}", self.metric, self.op, self.threshold),
        }
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
    /// `value - threshold`, the value being the gate's statistic (negative
    /// = short of a minimum), when there is one.
    pub margin: Option<f64>,
    /// Samples of the dataset that could not be scored: any fails the gate.
    #[serde(default)]
    pub unscored: usize,
    /// When not judged: samples evaluated and samples planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<(usize, usize)>,
    /// Samples of the dataset (0 in files of earlier versions).
    #[serde(default)]
    pub samples: usize,
    /// Values the statistic is over: the samples scored with the metric (or
    /// measured, for `latency_ms`, `ttft_ms`, `cost_usd`).
    #[serde(default)]
    pub scored: usize,
    /// The statistic's 95% interval: a mean's from its standard error over
    /// the samples (Wilson's for a pass rate; Student's t otherwise,
    /// cluster-robust when the dataset names a cluster field), a
    /// percentile's from order statistics (an end the sample cannot bound
    /// is infinite, written `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<crate::stats::Interval>,
    /// How the interval was computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::stats::Method>,
    /// Where the interval lies against the threshold, when judged (an
    /// inconclusive gate is met or missed as the dataset's setting says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
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
    /// Samples whose verdict on this metric is inconclusive (over repeated
    /// runs, an interval straddling the threshold).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub inconclusive: usize,
    /// The aggregate gate on this metric, if any (the first, when several
    /// statistics of it are gated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateResult>,
    /// Further gates on other statistics of this metric (`p50` beside `p95`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_gates: Vec<GateResult>,
}

impl MetricSummary {
    /// Every gate on this metric.
    pub fn gates(&self) -> impl Iterator<Item = &GateResult> {
        self.gate.iter().chain(&self.more_gates)
    }
}

/// Calls, tokens and cost of a dataset or a run: the agent's, the judge's
/// and the embeddings server's, as the samples recorded them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageTotals {
    /// The agent's calls and tokens (as it reported them).
    #[serde(default)]
    pub agent: Usage,
    /// Judge calls and tokens.
    #[serde(default)]
    pub judge: Usage,
    /// Embedding calls and tokens.
    #[serde(default)]
    pub embeddings: Usage,
    /// The cost of the samples whose cost is known, US dollars (`None`
    /// without a price table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Samples whose cost is unknown (a model missing from the price
    /// table): `cost_usd` leaves them out.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub cost_unknown: usize,
}

impl UsageTotals {
    /// Adds one sample's (or one total's) usage.
    pub fn add(&mut self, other: &UsageTotals) {
        self.agent.add(other.agent);
        self.judge.add(other.judge);
        self.embeddings.add(other.embeddings);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.cost_unknown += other.cost_unknown;
    }

    /// Nothing was used or counted.
    pub fn is_empty(&self) -> bool {
        *self == UsageTotals::default()
    }

    /// One line: `agent 10 calls, 1200 + 300 tokens; judge ...; cost $0.0123`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        for (what, u) in [
            ("agent", &self.agent),
            ("judge", &self.judge),
            ("embeddings", &self.embeddings),
        ] {
            if u.calls + u.cache_hits > 0 || u.prompt_tokens + u.completion_tokens > 0 {
                let mut part = format!(
                    "{what} {} call(s), {} + {} tokens",
                    u.calls, u.prompt_tokens, u.completion_tokens
                );
                if u.cache_hits > 0 {
                    part.push_str(&format!(", {} cached", u.cache_hits));
                }
                parts.push(part);
            }
        }
        match (self.cost_usd, self.cost_unknown) {
            (Some(c), 0) => parts.push(format!("cost ${c:.4}")),
            (Some(c), n) => parts.push(format!(
                "cost ${c:.4} + unknown for {n} sample(s) (a model without a price)"
            )),
            (None, n) if n > 0 => parts.push(format!(
                "cost unknown for {n} sample(s) (a model without a price)"
            )),
            _ => {}
        }
        if parts.is_empty() {
            "no calls counted".into()
        } else {
            parts.join("; ")
        }
    }
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
    /// Samples that passed (inconclusive ones counted as passed included).
    pub passed: usize,
    /// Samples with a failing metric (inconclusive ones counted as failed
    /// included).
    pub failed: usize,
    /// Samples that could not be scored.
    pub errors: usize,
    /// Samples whose verdict is inconclusive (also counted in `passed` or
    /// `failed`, as `on_inconclusive` says).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub inconclusive: usize,
    /// What an inconclusive sample or gate counts as.
    #[serde(default)]
    pub on_inconclusive: crate::stats::OnInconclusive,
    /// The sample field gates cluster by, when one is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_by: Option<String>,
    /// Per metric, in first-seen order.
    pub metrics: Vec<MetricSummary>,
    /// Gates declared for this dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    /// True when every gate was judged and passed (true when there are none).
    pub gates_passed: bool,
    /// Calls, tokens and cost of the dataset's samples.
    #[serde(default, skip_serializing_if = "UsageTotals::is_empty")]
    pub usage: UsageTotals,
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
    /// What an inconclusive gate counts as.
    pub inconclusive: crate::stats::OnInconclusive,
    /// The sample field gates cluster by.
    pub cluster: Option<String>,
}

impl DatasetTerms {
    /// Terms with `planned` samples and `gates`.
    pub fn new(planned: Option<usize>, gates: Vec<Gate>, ci_gate: bool) -> Self {
        DatasetTerms {
            planned,
            gates,
            ci_gate,
            inconclusive: crate::stats::OnInconclusive::default(),
            cluster: None,
        }
    }

    /// The same terms, an inconclusive gate counting as `on` says.
    pub fn on_inconclusive(mut self, on: crate::stats::OnInconclusive) -> Self {
        self.inconclusive = on;
        self
    }

    /// The same terms, gates clustering samples by `field`.
    pub fn clustered_by(mut self, field: Option<String>) -> Self {
        self.cluster = field;
        self
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
        let mut summaries = super::summary::Summaries::new(terms);
        samples.iter().for_each(|s| summaries.add(s));
        let (datasets, complete) = summaries.finish_run(terms);
        Results {
            version: FORMAT_VERSION,
            binary: binary.to_string(),
            package: None,
            written_unix: now_unix(),
            complete,
            missing_datasets: Vec::new(),
            provenance: None,
            usage: total_usage(&datasets),
            datasets,
            samples,
        }
    }

    /// What this run lacks, if it is incomplete: datasets with fewer samples
    /// than planned, datasets of the previous run that did not run.
    pub fn incompleteness(&self) -> Option<String> {
        incompleteness(self.complete, &self.datasets, &self.missing_datasets)
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
                    DatasetTerms::new(d.planned, d.gates.clone(), d.ci_gate)
                        .on_inconclusive(d.on_inconclusive)
                        .clustered_by(d.cluster_by.clone()),
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

impl GateResult {
    /// ` (95% interval 0.6200..0.9100)`, or nothing without an interval.
    fn interval_text(&self) -> String {
        let end = |x: f64| {
            if x.is_finite() {
                format!("{x:.4}")
            } else {
                "unbounded".to_string()
            }
        };
        match self.interval {
            Some(i) => format!(" (95% interval {}..{})", end(i.low), end(i.high)),
            None => String::new(),
        }
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
        let what = format!("{}({}) {} {}", g.stat, g.metric, g.op, g.threshold);
        let not = if g.measured().is_some() {
            "not measured"
        } else {
            "not scored"
        };
        match self.margin {
            // A sample without a score is not in the statistic, and misses
            // the gate whatever the others score: say so, never "missed by"
            // a margin the statistic does meet.
            Some(m) if self.unscored > 0 => {
                let of = if self.samples > 0 {
                    format!("{} of {} samples", self.unscored, self.samples)
                } else {
                    format!("{} sample(s)", self.unscored)
                };
                write!(
                    f,
                    "{what} missed: {of} {not} (counted as not passed); {} of the {} {} = {:.4}",
                    g.stat,
                    self.scored,
                    if g.measured().is_some() {
                        "measured"
                    } else {
                        "scored"
                    },
                    g.threshold + m
                )
            }
            Some(m) => write!(
                f,
                "{} {} = {:.4}{}, gate {} {} ({} by {:.4}{})",
                g.stat,
                g.metric,
                g.threshold + m,
                self.interval_text(),
                g.op,
                g.threshold,
                if self.passed { "met" } else { "missed" },
                m.abs(),
                if self.decision == Some(Decision::Inconclusive) {
                    "; inconclusive: its interval straddles the threshold"
                } else {
                    ""
                }
            ),
            None if self.samples > 0 => write!(
                f,
                "{what} missed: none of the {} samples was {}",
                self.samples,
                if g.measured().is_some() {
                    "measured"
                } else {
                    "scored"
                }
            ),
            None => write!(f, "{what} missed: no sample was scored"),
        }
    }
}

/// What a run lacks, if it is incomplete (see [`Results::incompleteness`]).
pub(crate) fn incompleteness(
    complete: bool,
    datasets: &[DatasetSummary],
    missing: &[String],
) -> Option<String> {
    if complete {
        return None;
    }
    let mut parts: Vec<String> = datasets
        .iter()
        .filter(|d| !d.complete)
        .map(|d| match d.planned {
            Some(p) => format!("{} of {p} samples of `{}`", d.samples, d.name),
            None => format!("part of `{}`", d.name),
        })
        .collect();
    if !missing.is_empty() {
        parts.push(format!(
            "dataset(s) {} did not run",
            missing
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

/// The usage of a run: its datasets' together.
pub fn total_usage(datasets: &[DatasetSummary]) -> UsageTotals {
    let mut total = UsageTotals::default();
    for d in datasets {
        total.add(&d.usage);
    }
    total
}

/// The gates that were judged and missed in `datasets`, as `(dataset, gate result)`.
pub fn failed_gates(datasets: &[DatasetSummary]) -> Vec<(&str, &GateResult)> {
    datasets
        .iter()
        .flat_map(|d| {
            d.metrics
                .iter()
                .flat_map(MetricSummary::gates)
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
    provenance: Option<&super::provenance::Provenance>,
    samples: impl Iterator<Item = impl Serialize>,
) -> Result<(), ResultsError> {
    struct Seq<I>(std::cell::RefCell<Option<I>>);
    impl<I: Iterator<Item: Serialize>> Serialize for Seq<I> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            match self.0.borrow_mut().take() {
                Some(iter) => s.collect_seq(iter),
                None => s.collect_seq(std::iter::empty::<SampleRecord>()),
            }
        }
    }
    #[derive(Serialize)]
    #[serde(bound = "")]
    struct Streamed<'a, I: Iterator<Item: Serialize>> {
        version: u32,
        binary: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        package: Option<&'a str>,
        written_unix: f64,
        complete: bool,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        missing_datasets: &'a [String],
        #[serde(skip_serializing_if = "Option::is_none")]
        provenance: Option<&'a super::provenance::Provenance>,
        datasets: &'a [DatasetSummary],
        #[serde(skip_serializing_if = "UsageTotals::is_empty")]
        usage: UsageTotals,
        samples: Seq<I>,
    }
    let doc = Streamed {
        version: FORMAT_VERSION,
        binary,
        package,
        written_unix: now_unix(),
        complete: complete && missing.is_empty(),
        missing_datasets: missing,
        provenance,
        datasets,
        usage: total_usage(datasets),
        samples: Seq(std::cell::RefCell::new(Some(samples))),
    };
    super::write_json(path, &doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_record as record;

    fn gate(threshold: f64) -> Gate {
        Gate::new("contains", Op::AtLeast, threshold)
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
            "mean contains = 0.5000 (95% interval 0.0945..0.9055), gate >= 0.75 (missed by 0.2500; inconclusive: its interval straddles the threshold)"
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
    fn gates_of_earlier_files_are_on_the_mean() {
        let old: Gate =
            serde_json::from_str(r#"{"metric": "contains", "op": ">=", "threshold": 0.5}"#)
                .unwrap();
        assert_eq!(old, gate(0.5));
        assert_eq!(old.stat, Stat::Mean);
        let p95 = Gate::new("latency_ms", Op::AtMost, 3000.0).with_stat(Stat::Percentile(95));
        let text = serde_json::to_string(&p95).unwrap();
        assert!(text.contains(r#""stat":"p95""#), "{text}");
        assert_eq!(serde_json::from_str::<Gate>(&text).unwrap(), p95);
        assert_eq!(p95.to_string(), "p95(latency_ms) <= 3000");
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
