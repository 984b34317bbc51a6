//! The manifest's types: a loaded [`Manifest`], its datasets and why one
//! could not be used.

use std::path::PathBuf;

use crate::agent::AgentSettings;
use crate::dataset::Dataset;
use crate::error::{DatasetError, MAX_PROBLEMS, Problem};
use crate::files::ReadError;
use crate::metric::{MetricKind, MetricSpec};

/// A loaded, checked manifest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Manifest {
    /// The manifest path as shown in messages.
    pub path: String,
    /// `spec.evaluation.framework`, when given.
    pub framework: Option<String>,
    /// The datasets, in manifest order.
    pub datasets: Vec<ManifestDataset>,
    /// `ciGate`: a metric whose dataset mean misses its threshold fails the run.
    pub ci_gate: bool,
    /// Agent runs per sample (`repeat`, default 1; `auto` or `auto:MAX`:
    /// runs added while a verdict is in doubt).
    pub repeat: crate::Repeat,
    /// `agent`: the protocol, model and streaming of the agent.
    pub agent: AgentSettings,
}

/// One entry of `spec.evaluation.datasets`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ManifestDataset {
    /// `name`.
    pub name: String,
    /// The dataset file, absolute.
    pub file: PathBuf,
    /// The dataset path relative to the project root, for messages.
    pub shown: String,
    /// Metrics with their thresholds.
    pub specs: Vec<MetricSpec>,
    /// Line of the entry in the manifest.
    pub line: usize,
    /// The manifest path as shown.
    pub manifest: String,
    /// `tools`: OpenAI tool definitions offered with each of its samples.
    pub tools: Vec<serde_json::Value>,
    /// `description`, shown in reports.
    pub description: Option<String>,
    /// The samples the run is about (a letta suite's `sample_tags` and
    /// `max_samples`); every sample otherwise.
    pub subset: crate::Subset,
    /// Gates given explicitly (a letta suite's `reward` or `gate`), enforced whatever
    /// `ciGate` says.
    pub gates: Vec<crate::metric::GateSpec>,
    /// Whether each threshold gates the dataset's mean (agentspec's
    /// `thresholds`, enforced under `ciGate`); `false` for a letta suite,
    /// whose `gate` alone decides.
    pub threshold_gates: bool,
    /// What is worth saying about how the file is run (a letta suite's
    /// `target` not used, its graders' names as metrics).
    pub notes: Vec<String>,
    /// Other files read for it (a rubric grader's prompt), so a build that
    /// embeds the manifest is redone when they change.
    pub tracked: Vec<PathBuf>,
    /// The model its agent runs as (one of a letta suite's
    /// `target.model_handles`: the suite is one dataset per model, named
    /// `{suite}@{model}`); `None`: the agent as the front end set it up.
    /// The engine gives it to the agent: an HTTP agent's `model` (the
    /// OpenAI protocol's request `model`), and `agent_args.model` of every
    /// sample (the JSON contract's body, a request template's
    /// `{agent_args.model}`, an in-process agent's `sample.agent_args`).
    pub model: Option<String>,
}

/// Why a manifest could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest could not be read.
    #[error("{path}: cannot read manifest: {source}")]
    Io {
        /// The manifest path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The manifest breaks one or more rules; every problem is listed.
    #[error("{}", render(.problems))]
    Invalid {
        /// The manifest path.
        path: String,
        /// What is wrong, where.
        problems: Vec<Problem>,
    },
    /// The manifest is not a regular file, or is too large.
    #[error("{path}: cannot read manifest: {source}")]
    Unreadable {
        /// The manifest path.
        path: String,
        /// What is wrong with the file.
        #[source]
        source: ReadError,
    },
    /// No dataset of that name.
    #[error("{path}: no dataset named `{name}`; the manifest has: {}", .known.join(", "))]
    UnknownDataset {
        /// The manifest path.
        path: String,
        /// The name asked for.
        name: String,
        /// The names it has.
        known: Vec<String>,
    },
}

impl ManifestError {
    /// The individual problems, one line each.
    pub fn problems(&self) -> Vec<String> {
        match self {
            ManifestError::Invalid { problems, .. } => {
                problems.iter().map(ToString::to_string).collect()
            }
            other => vec![other.to_string()],
        }
    }
}

fn render(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl Manifest {
    /// The dataset called `name`.
    pub fn dataset(&self, name: &str) -> Result<&ManifestDataset, ManifestError> {
        self.datasets
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| ManifestError::UnknownDataset {
                path: self.path.clone(),
                name: name.to_string(),
                known: self.datasets.iter().map(|d| d.name.clone()).collect(),
            })
    }
}

impl ManifestDataset {
    /// What each metric needs of every sample in a manifest dataset: seed
    /// 000's table (`context` for faithfulness, context_precision and
    /// hallucination; `context` and `reference_contexts` for
    /// context_recall) plus what the metric itself needs (e.g. `expected`).
    pub fn needs(spec: &MetricSpec) -> Vec<crate::metric::Need> {
        use crate::metric::{JudgedMetric, Need};
        let mut needs: Vec<Need> = spec.needs().to_vec();
        let extra: &[Need] = match spec.kind {
            MetricKind::Judged(JudgedMetric::Faithfulness)
            | MetricKind::Judged(JudgedMetric::Hallucination) => &[Need::Context],
            MetricKind::Judged(JudgedMetric::ContextPrecision) => &[Need::Context, Need::Expected],
            MetricKind::Judged(JudgedMetric::ContextRecall) => {
                &[Need::Context, Need::ReferenceContexts]
            }
            _ => &[],
        };
        for n in extra {
            if !needs.contains(n) {
                needs.push(*n);
            }
        }
        needs
    }

    /// Checks every sample has the fields this dataset's metrics need, before
    /// any agent call; lists every sample that lacks one.
    pub fn check_fields(&self, dataset: &Dataset) -> Result<(), DatasetError> {
        let mut problems = Vec::new();
        for sample in &dataset.samples {
            if problems.len() > MAX_PROBLEMS {
                break;
            }
            self.check_sample(sample, &mut problems);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(DatasetError::Invalid {
                path: dataset.path.clone(),
                problems,
            })
        }
    }

    /// [`check_fields`](Self::check_fields) of one sample: the first field
    /// it lacks, added to `problems`.
    pub fn check_sample(&self, sample: &crate::Sample, problems: &mut Vec<Problem>) {
        use crate::metric::Need;
        for spec in &self.specs {
            for need in Self::needs(spec) {
                let present = match need {
                    Need::Expected => sample.expected.is_some(),
                    Need::Context => !sample.context.is_empty(),
                    Need::ReferenceContexts => !sample.reference_contexts.is_empty(),
                    Need::RelevantIds => sample.relevant_ids().is_some(),
                    Need::ExpectedTools => sample.expected_tools.is_some(),
                };
                if !present {
                    problems.push(
                        Problem::new(
                            &sample.source.file,
                            sample.source.line,
                            format!(
                                "dataset `{}` ({}:{}) is scored with `{}`, which needs `{need}` in every sample (seed 000's field table); this sample has none",
                                self.name, self.manifest, self.line, spec.name
                            ),
                        )
                        .field(&need.to_string()),
                    );
                    return;
                }
            }
        }
    }

    /// Loads the dataset and checks its fields ([`check_fields`](Self::check_fields)).
    pub fn load(&self) -> Result<Dataset, DatasetError> {
        let dataset = Dataset::load_as(&self.file, &self.shown)?;
        self.check_fields(&dataset)?;
        Ok(dataset)
    }
}
