//! Metrics written by the user (issue 36, part 2). Their code lives in the
//! runtime (`eval_runtime::Metric`); a spec knows them as data — name,
//! version, direction, range, whether each score is pass/fail — and holds
//! the implementation as an opaque handle the runtime gets back. Text specs
//! name them once a [`UserMetrics`] resolver knows them
//! ([`parse_specs_with`](super::parse_specs_with),
//! [`parse_gates_with`](super::parse_gates_with)).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::catalog::Op;

/// What the specs know of a metric the user wrote.
#[derive(Clone)]
#[non_exhaustive]
pub struct UserMetric {
    /// The name results, gates and reports use.
    pub name: String,
    /// The version of its definition (in the run's provenance: a new
    /// version makes scores not comparable with the old).
    pub version: String,
    /// Which way is better.
    pub op: Op,
    /// The scores it can give, `(min, max)` (an end may be infinite).
    pub range: (f64, f64),
    /// Whether every score is its minimum (failed) or maximum (passed).
    pub pass_fail: bool,
    /// The threshold when a spec gives none (`None`: a spec must give one).
    pub default_threshold: Option<f64>,
    /// The implementation, opaque here (the runtime's).
    pub handle: Arc<dyn Any + Send + Sync>,
}

impl UserMetric {
    /// A metric named `name`, version `version`, better when `op` says,
    /// scoring within `range`; `handle` is the implementation.
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        op: Op,
        range: (f64, f64),
        pass_fail: bool,
        handle: Arc<dyn Any + Send + Sync>,
    ) -> UserMetric {
        let best = match op {
            Op::AtLeast => range.1,
            Op::AtMost => range.0,
        };
        let default_threshold = pass_fail.then_some(best);
        UserMetric {
            name: name.into(),
            version: version.into(),
            op,
            range,
            pass_fail,
            default_threshold,
            handle,
        }
    }

    /// The same metric with `threshold` as its default.
    pub fn with_default_threshold(mut self, threshold: Option<f64>) -> UserMetric {
        self.default_threshold = threshold;
        self
    }
}

impl PartialEq for UserMetric {
    /// Equal definitions (the implementation is not compared).
    fn eq(&self, other: &UserMetric) -> bool {
        self.name == other.name
            && self.version == other.version
            && self.op == other.op
            && self.range == other.range
            && self.pass_fail == other.pass_fail
            && self.default_threshold == other.default_threshold
    }
}

impl fmt::Debug for UserMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserMetric")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("op", &self.op)
            .field("range", &self.range)
            .field("pass_fail", &self.pass_fail)
            .field("default_threshold", &self.default_threshold)
            .finish_non_exhaustive()
    }
}

/// The metrics of the user's a spec may name, by name.
#[derive(Debug, Clone, Default)]
pub struct UserMetrics {
    list: Vec<UserMetric>,
}

impl UserMetrics {
    /// None.
    pub fn new() -> UserMetrics {
        UserMetrics::default()
    }

    /// Adds `metric`; one already known by its name is replaced.
    pub fn add(&mut self, metric: UserMetric) {
        self.list.retain(|m| m.name != metric.name);
        self.list.push(metric);
    }

    /// The metric named `name`.
    pub fn get(&self, name: &str) -> Option<&UserMetric> {
        self.list.iter().find(|m| m.name == name)
    }

    /// Every metric known, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = &UserMetric> {
        self.list.iter()
    }

    /// Whether none is known.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}
