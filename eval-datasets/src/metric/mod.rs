//! Metric declarations: which metrics exist, what they need, which way is
//! better, and the `name(options) >= threshold` specs users write.
//!
//! Scoring lives in `eval-runtime`; this module is what the macro checks at
//! compile time and the runtime executes, so both agree on the catalogue.
//!
//! Files: `catalog.rs` (the metrics and their properties), `spec.rs` (a
//! checked [`MetricSpec`]), `options.rs` (its options: [`OptionValue`],
//! their checking and defaults), `parse.rs` ([`parse_specs`]), `error.rs`
//! ([`MetricSpecError`]), `gate.rs` (a [`GateSpec`]: a statistic of a metric
//! over a dataset, [`parse_gates`]).

mod catalog;
mod error;
mod gate;
// issue36:geval
mod geval;
mod options;
mod parse;
mod spec;

pub use catalog::{
    CATALOG, MAX_REGEX_BYTES, Measure, MetricInfo, Need, Op, OptionKind, known_names, lookup,
    lookup_named,
};
pub use error::{MetricSpecError, SpecErrorKind, SpecPart, SpecSyntaxError};
// issue36:geval
pub use gate::{GateDecl, GateSpec, Stat, parse_gates, percentile};
pub use geval::{GEval, GEvalParam};
pub use options::{ArgsMatch, CitationFormat, OptionValue, StepKind, ToolPairing, TrajectoryMode};
pub use parse::parse_specs;
pub use spec::{DeclParts, MetricDecl, MetricKind, MetricSpec, Rating};

/// Levenshtein distance (kept here for callers of `metric::edit_distance`;
/// it lives in [`crate::suggest`]).
pub use crate::suggest::edit_distance;
