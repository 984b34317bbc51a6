//! The plan: what a run evaluates, built once by a front end and run by the
//! engine. The attribute builds it from its arguments, the harness from its
//! builder calls, the `evals` command from its flags; all three go through
//! [`PlanBuilder`] (or, for the attribute, the same dataset plans),
//! so names, gates, timeouts and concurrency follow one set of rules:
//!
//! * **name** of a dataset, in results and as the first part of its test
//!   names (`<name>::<sample>`): for the attribute, the eval function's path
//!   (`rag`, `a::rag`); else a manifest's dataset name, else the file's
//!   stem, made an identifier (`rag-quality` → `rag_quality`). Name the eval
//!   function like the dataset and every front end records the same name,
//!   so `evals report diff` matches their results sample for sample;
//! * **metrics**: the ones given, else (`""`) the dataset's own — runevals
//!   evaluators per sample, every rank metric for a retrieval dataset,
//!   PartialMatch (with an expected answer) or Relevance and Coherence. A
//!   runevals item's evaluators are always scored: metrics given are added
//!   to them (the file's own setting of a metric of the same name is kept),
//!   and a note says so;
//! * **gates** on a dataset's means: those given (`gate(...)`, `.gate()`,
//!   `--gate`), every threshold under `ciGate` (`ci_gate = true`,
//!   `.ci_gate(true)`, `--ci-gate`), and a retrieval dataset's own
//!   `defaults.thresholds`. A manifest's thresholds are always gates on the
//!   means; as seed 000 says, missing one fails the run only under
//!   `ciGate: true` (or the front end's `ci_gate`), and is reported as
//!   "not enforced (ciGate is false)" otherwise;
//! * **timeout** per sample: the front end's own (`timeout_secs`,
//!   `.timeout()`, `--timeout-secs`), else `EVAL_SAMPLE_TIMEOUT_SECS`, else
//!   300 s; **concurrency**: likewise with `EVAL_CONCURRENCY`, else 16.

use std::path::PathBuf;
use std::time::Duration;

use eval_datasets::metric::MetricSpec;
use eval_datasets::{ManifestDataset, Sample};

use crate::output::Gate;

mod build;
mod load;
mod paths;
mod read;
mod runs;
mod samples;
mod specs;
mod streamed;

pub use crate::model::PlanError;
pub use build::PlanBuilder;
pub use eval_datasets::Subset;
pub(crate) use load::{LoadedDataset, load, prepare, unconfirmed_scopes};
pub(crate) use runs::runs_needed;

/// What to evaluate. See the [module docs](self).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub(crate) struct Plan {
    /// The datasets, in order.
    pub(crate) datasets: Vec<DatasetPlan>,
    /// Agent calls in flight at once.
    pub(crate) concurrency: usize,
    /// A baseline to compare complete runs with.
    pub(crate) baseline: Option<Baseline>,
    /// Where relative paths start (rubric files).
    pub(crate) base_dir: PathBuf,
    /// What a manifest says about the agent (`spec.evaluation.agent`),
    /// applied with [`HttpAgent::under_plan`](crate::HttpAgent::under_plan).
    pub(crate) agent: eval_datasets::AgentSettings,
}

/// The agent a plan's run uses: `agent` with what the plan says about
/// agents (a manifest's `spec.evaluation.agent`) applied where its own code
/// chose nothing ([`Agent::with_plan_settings`](crate::Agent::with_plan_settings)),
/// and a note when the plan says something the agent cannot take (an
/// in-process agent has no protocol or model).
///
/// `per_model`: some dataset runs as a model of its own (a letta suite's
/// `model_handles`); an in-process agent then reads it from each sample's
/// `agent_args.model`, and the plan's model (the first handle) needs no note.
pub(crate) fn agent_for_plan(
    agent: std::sync::Arc<dyn crate::Agent>,
    settings: &eval_datasets::AgentSettings,
    per_model: bool,
) -> (std::sync::Arc<dyn crate::Agent>, Option<String>) {
    if settings.is_empty() {
        return (agent, None);
    }
    let only_model =
        settings.protocol.is_none() && settings.stream.is_none() && settings.http.is_empty();
    if per_model && only_model {
        let applied = agent.with_plan_settings(settings);
        return (applied.unwrap_or(agent), None);
    }
    match agent.with_plan_settings(settings) {
        Some(applied) => (applied, None),
        None => (
            agent,
            Some(
                "the manifest's spec.evaluation.agent (protocol, model, stream) is for HTTP agents; \
                 this agent does not take it"
                    .into(),
            ),
        ),
    }
}

/// The value of `sample`'s field `field`, by which gates cluster samples:
/// `metadata.<key>` or a bare `<key>` of its metadata, else another field
/// of the sample as the dataset gave it (`extra`); strings as they are,
/// other values as JSON. `None` when the sample has no such field (it is
/// then a cluster of its own).
pub(crate) fn cluster_value(sample: &Sample, field: &str) -> Option<String> {
    let key = field.strip_prefix("metadata.").unwrap_or(field);
    let value = sample
        .metadata
        .get(key)
        .or_else(|| sample.extra.get(field))?;
    match value {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A baseline results file and how much a score may move before it counts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub(crate) struct Baseline {
    /// The baseline results file.
    pub(crate) path: PathBuf,
    /// A difference whose interval lies within ±`epsilon` is no change.
    pub(crate) epsilon: f64,
    /// Which provenance differences (judge, dataset content) the
    /// comparison accepts.
    pub(crate) allow: crate::output::Allow,
}

/// Where a dataset's samples come from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub(crate) enum DatasetSource {
    /// A file: its path and the path shown in messages.
    File {
        /// Where to read it.
        path: PathBuf,
        /// The path as the user wrote it.
        shown: String,
    },
    /// A file embedded in a test binary by the attribute.
    Embedded {
        /// The path as written in the attribute.
        shown: &'static str,
        /// The file's bytes at compile time.
        bytes: &'static [u8],
    },
    /// Samples given directly (the `evals` command's `--prompts`).
    Samples(Vec<Sample>),
}

/// How a dataset's samples are scored.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub(crate) enum Metrics {
    /// These metrics for every sample.
    Given(Vec<MetricSpec>),
    /// The dataset's own (see the [module docs](self)).
    Own,
}

/// One dataset of a plan.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub(crate) struct DatasetPlan {
    /// Its name in results; its tests are named `<name>::<sample>`.
    pub(crate) name: String,
    /// Where its samples come from.
    pub(crate) source: DatasetSource,
    /// How they are scored.
    pub(crate) metrics: Metrics,
    /// Gates given explicitly (the rest are derived when it is loaded).
    pub(crate) gates: Vec<Gate>,
    /// `ciGate`: every threshold gates the mean; samples fail only when they
    /// cannot be scored.
    pub(crate) ci_gate: bool,
    /// Whether the gates made of its thresholds (under `ci_gate`) fail the
    /// run when missed. A manifest's datasets are always judged by their
    /// means; their thresholds are enforced only under `ciGate: true` (or
    /// the front end's `ci_gate`), and reported otherwise ("not enforced
    /// (ciGate is false)").
    pub(crate) enforce_thresholds: bool,
    /// Under `ci_gate`, whether each threshold gates the mean (agentspec's
    /// `thresholds`); `false` for a letta suite, whose `gate` alone decides
    /// (its other graders are scored and reported in the summary).
    pub(crate) threshold_gates: bool,
    /// Agent runs per sample: a fixed number, or `auto` (runs added while
    /// a verdict is inconclusive).
    pub(crate) repeat: eval_datasets::Repeat,
    /// What an inconclusive verdict counts as (a sample's over repeated
    /// runs, a gate's over the dataset).
    pub(crate) inconclusive: crate::stats::OnInconclusive,
    /// The sample field gates cluster samples by (Miller's cluster-robust
    /// standard error), when one is named.
    pub(crate) cluster: Option<String>,
    /// Limit on one sample's agent interaction, and separately on its scoring.
    pub(crate) timeout: Duration,
    /// Retrieval datasets: a scope not starting with `eval:` may be deleted.
    pub(crate) allow_custom_prefix: bool,
    /// For a manifest's dataset: seed 000's field table, checked on loading.
    pub(crate) manifest: Option<ManifestDataset>,
    /// The `evals` command's choice of samples (the plan is that subset).
    pub(crate) subset: Subset,
    /// Largest dataset file read (`EVAL_MAX_DATASET_BYTES`).
    pub(crate) max_dataset_bytes: u64,
    /// Tool definitions offered with each sample (a manifest dataset's
    /// `tools`, [`PlanBuilder::tools`]), added to each sample's own when it
    /// is loaded.
    pub(crate) tools: Vec<serde_json::Value>,
    /// The model its agent runs as (a letta suite's model handle, see
    /// [`ManifestDataset::model`]): an HTTP agent answers as this model
    /// ([`Agent::with_model`](crate::Agent::with_model)) and each sample
    /// carries it as `agent_args.model`; `None`: the agent as set up.
    pub(crate) model: Option<String>,
}

impl DatasetPlan {
    /// A dataset with defaults: one run per sample, no gates, no subset.
    pub(crate) fn new(
        name: impl Into<String>,
        source: DatasetSource,
        metrics: Metrics,
        timeout: Duration,
    ) -> Self {
        DatasetPlan {
            name: name.into(),
            source,
            metrics,
            gates: Vec::new(),
            ci_gate: false,
            enforce_thresholds: true,
            threshold_gates: true,
            repeat: eval_datasets::Repeat::default(),
            inconclusive: crate::stats::OnInconclusive::default(),
            cluster: None,
            timeout,
            allow_custom_prefix: false,
            manifest: None,
            subset: Subset::default(),
            max_dataset_bytes: eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
            tools: Vec::new(),
            model: None,
        }
    }
}
