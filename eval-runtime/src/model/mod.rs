//! The data model every layer shares, at the bottom of the crate: what an
//! agent's call used ([`Usage`]), settings that are plain data
//! ([`Sampling`], [`CassetteMode`]), where a run's scores come from
//! ([`Provenance`] and the fingerprints), the results file's schema
//! ([`Results`], [`SampleRecord`], [`DatasetSummary`], gates),
//! and every error as data. It imports nothing of the crate but the leaf
//! modules `stats` and `secrets` (the layout test checks it).

mod agent_error;
mod error;
mod provenance;
mod question;
mod report;
mod results;
mod sample_error;
mod scorer_error;
mod settings;
mod shared_error;
mod summary;
mod text;
mod trajectory;
mod usage;
mod written;

pub use agent_error::{AgentError, CassetteError, Refusal, ReplyError, RetrieverError};
#[cfg(feature = "http")]
pub(crate) use error::with_sources;
pub use error::{BadVar, ConfigError, CostError, Error, PlanError, Result, ResultsError};
pub use provenance::ScorerFingerprint;
pub use provenance::{
    AgentSettings as AgentProvenance, Allow, CalibrationSummary,
    DatasetSource as DatasetProvenance, Differences, EmbeddingsFingerprint, GitState,
    JudgeFingerprint, MetricVersions, Provenance, UserMetricProvenance,
};
pub(crate) use provenance::{hex, parts_hash, sample_hash};
pub use question::{Bound, QuestionChange};
pub(crate) use question::{pair_gates, same_gate};
pub use report::{MetricResult, SampleReport, Scored, Spread};
pub(crate) use report::{
    RunsInterval, item_name, item_notes, level_text, numbered, why_not_passed, with_interval,
};
pub(crate) use report::{is_tool_metric_name, serialize_message};
pub(crate) use results::counted_as;
pub use results::{
    KEPT_CHARS, KEPT_CHUNKS, MetricRecord, Results, RunSpread, SampleRecord, Verdict,
};
pub(crate) use sample_error::MAX_NAME_CHARS;
pub use sample_error::{
    AnswerProblem, MetricError, PromptError, SampleError, ServiceError, TraceError,
};
pub use scorer_error::ScorerError;
pub use settings::{CassetteMode, Sampling};
pub use shared_error::SharedError;
pub use summary::{
    DatasetSummary, DatasetTerms, Gate, GateResult, MetricSummary, UsageTotals, failed_gates,
    total_usage,
};
pub(crate) use summary::{incompleteness, now_unix, usd};
pub(crate) use text::{one_line, sentences};
pub(crate) use trajectory::AgentSpan;
pub use trajectory::{Step, StepKind, Trajectory, TrajectorySource};
pub use usage::Usage;
pub(crate) use usage::{Reported, meter};
pub use written::WrittenMetric;

/// Version of the results-file layout (fields are only ever added).
pub const FORMAT_VERSION: u32 = 1;
