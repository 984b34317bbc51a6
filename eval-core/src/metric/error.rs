//! What can be wrong with a metric spec, and where in the spec.

/// A spec that names no known metric or sets it up wrongly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
#[non_exhaustive]
pub struct MetricSpecError(pub String, pub SpecPart);

/// Which part of a metric spec an error is about (for error spans).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecPart {
    /// The metric name.
    Name,
    /// The option at this index.
    Option(usize),
    /// The `>=` / `<=` operator.
    Op,
    /// The threshold value.
    Threshold,
}
