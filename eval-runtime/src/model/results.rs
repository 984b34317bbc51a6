//! The results file's schema: every run writes one JSON document with a
//! record per sample and, per dataset and metric, the mean, the pass rate
//! and the verdict of each gate. It says whether the run was complete: a
//! dataset is complete when every sample the plan holds for it is in the
//! file, and gates are judged only over complete datasets. Writing and
//! reading it is `output`'s business.

use std::collections::BTreeMap;
use std::path::Path;

use eval_datasets::metric::Measure;
use serde::{Deserialize, Serialize};

use super::ResultsError;
use super::summary::{
    DatasetSummary, DatasetTerms, GateResult, UsageTotals, failed_gates, incompleteness,
};
use super::{SampleReport, Usage};
use crate::stats::Decision;

/// A whole run (or several merged runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Results {
    /// [`FORMAT_VERSION`](super::FORMAT_VERSION).
    #[doc(hidden)]
    pub version: u32,
    /// Test binary (or harness) that produced it.
    #[doc(hidden)]
    pub binary: String,
    /// The package of that test binary, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub package: Option<String>,
    /// When the file was written, seconds since the Unix epoch.
    #[doc(hidden)]
    pub written_unix: f64,
    /// Every dataset holds every sample its plan holds (so every gate was
    /// judged), and no dataset of the binary's previous run is missing.
    #[serde(default)]
    #[doc(hidden)]
    pub complete: bool,
    /// Datasets the previous results file of this test binary held that this
    /// run did not run (filtered out, or the process was stopped first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub missing_datasets: Vec<String>,
    /// Where the scores come from: the tool, the revision, the datasets'
    /// content hashes, the judge's and embeddings' fingerprints, the agent
    /// (absent in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub provenance: Option<crate::model::Provenance>,
    /// Per-dataset aggregates, by dataset name.
    #[doc(hidden)]
    pub datasets: Vec<DatasetSummary>,
    /// Calls, tokens and cost of the whole run (the datasets' together).
    #[serde(default, skip_serializing_if = "UsageTotals::is_empty")]
    #[doc(hidden)]
    pub usage: UsageTotals,
    /// One record per evaluated sample, sorted by dataset then test name.
    #[doc(hidden)]
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
    /// counts as passed is the run's setting ([`SampleRecord::counts_as_passed`]).
    Inconclusive,
    /// The sample could not be scored (agent error, missing field, a
    /// metric without a score...).
    Error,
}

impl Verdict {
    /// The verdict of a report.
    #[doc(hidden)]
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
    // No more bytes than characters kept: nothing to cut, nothing to count.
    if output.len() <= KEPT_CHARS {
        return output.to_string();
    }
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

/// The part of a trajectory kept in results files: every step, each tool
/// result cut to [`KEPT_CHARS`] characters.
fn cut_trajectory(trajectory: &super::Trajectory) -> super::Trajectory {
    let mut kept = trajectory.clone();
    for step in &mut kept.steps {
        if let Some(result) = &mut step.result {
            *result = cut_output(result);
        }
    }
    kept
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
    /// How the interval was computed (`clopper-pearson`, `betting` or `t`;
    /// `wilson` in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::stats::Method>,
    /// Where the interval lies against the threshold (files of earlier
    /// versions say only whether it straddles it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Runs whose score met the metric's per-sample threshold, for `pass@k`
    /// and `pass^k` gates (absent in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<usize>,
}

fn standard_level() -> f64 {
    crate::stats::Level::STANDARD.0
}

impl From<crate::model::Spread> for RunSpread {
    fn from(s: crate::model::Spread) -> Self {
        RunSpread {
            runs: s.runs,
            low: s.low,
            high: s.high,
            straddles: s.straddles,
            sd: Some(s.sd),
            level: s.level,
            method: Some(s.method),
            decision: Some(s.decision),
            passes: Some(s.passes),
        }
    }
}

/// One evaluated sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SampleRecord {
    /// Dataset name (see the guide's results chapter: the manifest's name, the eval
    /// function's path, or the file stem).
    #[doc(hidden)]
    pub dataset: String,
    /// Full test name.
    #[doc(hidden)]
    pub test_name: String,
    /// Sample id.
    #[doc(hidden)]
    pub id: String,
    /// `file:line`.
    #[doc(hidden)]
    pub source: String,
    /// Pass, fail, inconclusive or error.
    #[doc(hidden)]
    pub verdict: Verdict,
    /// For an inconclusive sample: whether it counted as passed (`pass`) or
    /// failed (`fail`), as the run's setting says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub counted_as: Option<Verdict>,
    /// The sample's cluster (the value of the field the dataset is
    /// clustered by), when one is named and the sample has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub cluster: Option<String>,
    /// A hash of what the dataset says of the sample (its input, expected
    /// answer, context, tags, metadata...: everything but where it is in
    /// the file): a sample whose content changed between two runs is not
    /// the same sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub hash: Option<String>,
    /// Per-metric scores.
    #[doc(hidden)]
    pub metrics: Vec<MetricRecord>,
    /// Time in the agent, milliseconds.
    #[doc(hidden)]
    pub latency_ms: f64,
    /// Why the sample could not be scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub error: Option<String>,
    /// The item's name, when the dataset gives one (a runevals item's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub name: Option<String>,
    /// The item's notes, when the dataset gives them (a runevals item's
    /// `notes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub notes: Option<String>,
    /// The id of the retrieval dataset the query belongs to (Unrag's `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub dataset_id: Option<String>,
    /// The user turns sent to the agent, in order (each cut to
    /// [`KEPT_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub input: Vec<String>,
    /// The expected answer (one per turn: `[1] …  [2] …`), cut to
    /// [`KEPT_CHARS`] characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub expected: Option<String>,
    /// The tool calls the sample expects, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub expected_tools: Option<Vec<eval_datasets::ToolCall>>,
    /// The sample's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub tags: Vec<String>,
    /// The sample's metadata, as the dataset gives it.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[doc(hidden)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The agent's output, when it answered (cut to [`KEPT_CHARS`]
    /// characters; files of earlier versions hold it only for samples that
    /// failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub output: Option<String>,
    /// The context the agent returned with its answer (at most
    /// [`KEPT_CHUNKS`] chunks, each cut to [`KEPT_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub context: Vec<String>,
    /// The document ids the agent retrieved, best first (retrieval queries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub retrieved_ids: Vec<String>,
    /// The retriever's (or reranker's) score of each retrieved id, in the
    /// same order, when it gave them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub retrieved_scores: Vec<f64>,
    /// The ids the query should retrieve (a retrieval dataset's `relevant`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub relevant_ids: Vec<String>,
    /// Time to the agent's first token, milliseconds, when it streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub ttft_ms: Option<f64>,
    /// The tool calls the agent made, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub tool_calls: Vec<eval_datasets::ToolCall>,
    /// The steps the agent took, from its OpenTelemetry spans (or its
    /// answers' tool calls): each step's kind, name, arguments, result (cut
    /// to [`KEPT_CHARS`]), timing and tokens, and the traces they are in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub trajectory: Option<super::Trajectory>,
    /// The agent's calls, retries and tokens.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[doc(hidden)]
    pub agent: Usage,
    /// Judge calls made to score it.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[doc(hidden)]
    pub usage: Usage,
    /// Embedding calls made to score it.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[doc(hidden)]
    pub embeddings: Usage,
    /// What it cost in US dollars (agent, judge and embeddings tokens at the
    /// price table's prices); absent without a price table or when a model
    /// used is not in it (unknown, not 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub cost_usd: Option<f64>,
    /// Why the cost is unknown though a price table is set (a model it used
    /// has no price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(hidden)]
    pub cost_unknown: Option<String>,
    /// Runs of the agent scored (`repeat`); latency and cost are their total.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    #[doc(hidden)]
    pub runs: u32,
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
    #[doc(hidden)]
    pub fn measured(&self, measure: Measure) -> Option<f64> {
        let runs = f64::from(self.runs.max(1));
        match measure {
            Measure::LatencyMs => Some(self.latency_ms / runs),
            Measure::TtftMs => self.ttft_ms,
            Measure::CostUsd => self.cost_usd.map(|c| c / runs),
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
        crate::model::why_not_passed(
            (self.score, self.passed),
            (&self.op, self.threshold),
            self.error.as_deref(),
            self.reason.as_deref(),
        )
        .map(|why| crate::model::with_interval(why, self.runs_interval()))
    }

    /// Runs scored, and how many met the per-sample threshold (`None` when
    /// the record does not say: a repeated run's record of an earlier
    /// version). One run passes when its score is on the right side of the
    /// record's threshold.
    #[doc(hidden)]
    pub fn runs_passed(&self) -> (u32, Option<u32>) {
        match &self.spread {
            Some(s) => (
                u32::try_from(s.runs).unwrap_or(u32::MAX),
                s.passes.map(|c| u32::try_from(c).unwrap_or(u32::MAX)),
            ),
            None => {
                let passes = self.score.map(|score| {
                    let op = if self.op == eval_datasets::Op::AtMost.to_string() {
                        eval_datasets::Op::AtMost
                    } else {
                        eval_datasets::Op::AtLeast
                    };
                    u32::from(match op {
                        eval_datasets::Op::AtMost => score <= self.threshold,
                        eval_datasets::Op::AtLeast => score >= self.threshold,
                    })
                });
                (1, passes)
            }
        }
    }

    /// Its interval over repeated runs, as reports say it.
    pub(crate) fn runs_interval(&self) -> Option<crate::model::RunsInterval> {
        self.spread.map(|s| crate::model::RunsInterval {
            runs: s.runs,
            low: s.low,
            high: s.high,
            level: s.level,
            decision: self.decision(),
        })
    }

    /// The persisted form of one metric result.
    #[doc(hidden)]
    pub fn from_result(m: &crate::model::MetricResult) -> Self {
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
    #[doc(hidden)]
    pub fn from_report(
        dataset: &str,
        sample: &eval_datasets::Sample,
        report: &SampleReport,
    ) -> Self {
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
            retrieved_scores: report.retrieved_scores.clone(),
            ttft_ms: report.ttft.map(|t| t.as_secs_f64() * 1000.0),
            tool_calls: report.tool_calls.clone(),
            trajectory: report.trajectory.as_ref().map(cut_trajectory),
            agent: report.agent,
            usage: report.usage,
            embeddings: report.embeddings,
            cost_usd: report.cost_usd,
            cost_unknown: report.cost_unknown.as_ref().map(ToString::to_string),
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
    pub(crate) fn describing(sample: &eval_datasets::Sample) -> Self {
        SampleRecord {
            dataset: String::new(),
            test_name: String::new(),
            id: sample.id.clone(),
            source: sample.source.to_string(),
            verdict: Verdict::Error,
            counted_as: None,
            cluster: None,
            hash: Some(crate::model::sample_hash(sample)),
            metrics: Vec::new(),
            latency_ms: 0.0,
            error: None,
            name: crate::model::item_name(sample),
            notes: crate::model::item_notes(sample),
            dataset_id: sample.retrieval.as_ref().map(|q| q.dataset_id.clone()),
            input: sample.input.turns().iter().map(|t| cut_output(t)).collect(),
            expected: sample.expected.as_ref().map(|e| {
                cut_output(&match e {
                    eval_datasets::Expected::PerTurn(list) => super::numbered(list),
                    eval_datasets::Expected::Text(t) => t.clone(),
                })
            }),
            expected_tools: sample.expected_tools.clone(),
            tags: sample.tags.clone(),
            metadata: sample.metadata.clone(),
            output: None,
            context: Vec::new(),
            retrieved_ids: Vec::new(),
            retrieved_scores: Vec::new(),
            relevant_ids: sample
                .relevant_ids()
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            ttft_ms: None,
            tool_calls: Vec::new(),
            trajectory: None,
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

impl Results {
    /// What this run lacks, if it is incomplete: datasets with fewer samples
    /// than planned, datasets of the previous run that did not run.
    pub fn incompleteness(&self) -> Option<String> {
        incompleteness(self.complete, &self.datasets, &self.missing_datasets)
    }

    /// `Ok` when the run is complete; else [`ResultsError::Incomplete`] naming `path`.
    #[doc(hidden)]
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
    #[doc(hidden)]
    pub fn terms(&self) -> BTreeMap<String, DatasetTerms> {
        self.datasets
            .iter()
            .map(|d| {
                (
                    d.name.clone(),
                    DatasetTerms::new(d.planned, d.gates.clone(), d.ci_gate)
                        .on_inconclusive(d.on_inconclusive)
                        .clustered_by(d.cluster_by.clone())
                        .described(d.description.clone())
                        .asking(d.metric_specs.clone(), d.metrics_per_sample),
                )
            })
            .collect()
    }

    /// The gates that were judged and missed, as `(dataset, gate result)`.
    #[doc(hidden)]
    pub fn failed_gates(&self) -> Vec<(&str, &GateResult)> {
        failed_gates(&self.datasets)
    }
}
