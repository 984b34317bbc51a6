//! Metric declarations: which metrics exist, what they need, which way is
//! better, and the `name(options) >= threshold` specs users write.
//!
//! Scoring lives in `eval-runtime`; this module is what the macro checks at
//! compile time and the runtime executes, so both agree on the catalogue.
//!
//! Each built-in metric has one definition ([`MetricInfo`]: names,
//! direction, range, needs, options, threshold, reference and constructor),
//! in the file of its family beside the family's enum: `text.rs`,
//! `judged.rs`, `retrieval.rs`, `tools.rs`, `trajectory.rs`,
//! `measured.rs`. The rest: `catalog.rs` (the types of a definition and
//! the lookup), `spec.rs` (a checked [`MetricSpec`] and [`MetricKind`]),
//! `options.rs` ([`OptionValue`] and the checking of written options),
//! `parse.rs` ([`parse_specs`]), `error.rs` ([`MetricSpecError`]),
//! `gate.rs` (a [`GateSpec`]: a statistic of a metric over a dataset,
//! [`parse_gates`]).
//! External scorers: `exec.rs`, `exec_spec.rs`, `exec_error.rs`
//! ([`ExecMetric`]).

mod catalog;
mod error;
mod exec;
mod exec_error;
mod exec_spec;
mod gate;
mod geval;
mod json_opts;
mod judged;
mod measured;
mod options;
mod parse;
mod retrieval;
mod spec;
mod text;
mod tools;
mod trajectory;
mod user;
mod user_spec;

pub use catalog::{
    MAX_REGEX_BYTES, MetricInfo, Need, Op, OptionDef, OptionKind, Threshold, catalog, known_names,
    lookup, lookup_named,
};
pub use error::{MetricSpecError, SpecErrorKind, SpecPart, SpecSyntaxError};
pub use exec::{ExecMetric, ExecSpecError};
pub use gate::parse_gates_with;
pub use gate::{GateDecl, GateSpec, Stat, parse_gates, percentile};
pub use geval::{GEval, GEvalParam};
pub use json_opts::JsonCheck;
pub use judged::{JudgedMetric, Rating};
pub use measured::Measure;
pub use options::OptionValue;
pub(crate) use options::Resolved;
pub use parse::parse_specs;
pub use parse::parse_specs_with;
pub use spec::{DeclParts, MetricDecl, MetricKind, MetricSpec};
pub use text::{CitationFormat, TextMetric};
pub use tools::{ToolMetric, ToolPairing};
pub use trajectory::{ArgsMatch, StepKind, TrajectoryMetric, TrajectoryMode};
pub use user::{UserMetric, UserMetrics};

/// The families, in the order the docs and "known metrics" list them.
static FAMILIES: [&[MetricInfo]; 9] = [
    text::METRICS,
    json_opts::METRICS,
    judged::METRICS,
    geval::METRICS,
    retrieval::METRICS,
    tools::METRICS,
    trajectory::METRICS,
    measured::METRICS,
    exec::METRICS,
];

/// Levenshtein distance (kept here for callers of `metric::edit_distance`;
/// it lives in [`crate::suggest`]).
pub use crate::suggest::edit_distance;
