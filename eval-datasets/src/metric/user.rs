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
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::spec::{MetricKind, MetricSpec};

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

    /// This metric held to `bound` (its direction and default threshold
    /// when `None`), checked as a catalogue metric's spec is.
    pub fn spec(&self, bound: Option<(Op, f64)>) -> Result<MetricSpec, MetricSpecError> {
        let name = self.name.clone();
        let (op, threshold) = match (bound, self.default_threshold) {
            (Some(b), _) => b,
            (None, Some(t)) => (self.op, t),
            (None, None) => {
                return Err(MetricSpecError(
                    SpecErrorKind::ThresholdRequired { name, op: self.op },
                    SpecPart::Name,
                ));
            }
        };
        if op != self.op {
            return Err(MetricSpecError(
                SpecErrorKind::WrongDirection {
                    name,
                    op: self.op,
                    threshold,
                },
                SpecPart::Op,
            ));
        }
        let (min, max) = self.range;
        if threshold.is_nan() || !(min..=max).contains(&threshold) {
            return Err(MetricSpecError(
                SpecErrorKind::UserThresholdOutOfRange {
                    name,
                    threshold,
                    min,
                    max,
                },
                SpecPart::Threshold,
            ));
        }
        Ok(MetricSpec::from_kind(
            &self.name,
            MetricKind::User(Box::new(self.clone())),
            op,
            threshold,
        ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{parse_gates_with, parse_specs_with};

    fn metric(name: &str, pass_fail: bool) -> UserMetric {
        UserMetric::new(name, "1", Op::AtLeast, (0.0, 1.0), pass_fail, Arc::new(()))
    }

    #[test]
    fn a_user_metric_is_a_spec_checked_as_a_catalogue_ones() {
        let m = metric("cites_ticket", true);
        let s = m.spec(None).unwrap();
        assert_eq!(
            (s.name.as_str(), s.op, s.threshold),
            ("cites_ticket", Op::AtLeast, 1.0)
        );
        assert!(s.pass_fail() && s.range() == (0.0, 1.0) && s.needs().is_empty());
        assert_eq!(s.canonical_name(), "cites_ticket");
        assert!(s.try_info().is_none() && s.measured().is_none());
        let e = m.spec(Some((Op::AtMost, 0.5))).unwrap_err();
        assert!(e.to_string().contains("write `cites_ticket >= 0.5`"), "{e}");
        let e = m.spec(Some((Op::AtLeast, 2.0))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`cites_ticket` scores between 0 and 1, so a threshold of 2 can never be met as intended"
        );
        let e = metric("tone", false).spec(None).unwrap_err();
        assert!(e.to_string().contains("has no default threshold"), "{e}");
    }

    #[test]
    fn text_specs_and_gates_name_registered_metrics() {
        let mut known = UserMetrics::new();
        known.add(metric("cites_ticket", true));
        let specs = parse_specs_with("contains, cites_ticket >= 1", &known).unwrap();
        assert_eq!(specs[1].name, "cites_ticket");
        assert!(matches!(specs[1].kind, MetricKind::User(_)));
        let e = parse_specs_with("cites_ticket, cites_ticket", &known).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
        let e = parse_specs_with("cites_ticket(x = 1)", &known).unwrap_err();
        assert!(e.to_string().contains("takes no options"), "{e}");
        let gates = parse_gates_with("mean(cites_ticket) >= 0.9", &known).unwrap();
        assert_eq!(gates[0].spec.name, "cites_ticket");
        assert!(gates[0].measured().is_none());
        // Unknown without the resolver.
        assert!(crate::metric::parse_specs("cites_ticket").is_err());
        // A turn of a user metric.
        let t = parse_specs_with("cites_ticket@turn2", &known).unwrap();
        assert_eq!(
            (t[0].name.as_str(), t[0].turn),
            ("cites_ticket@turn2", Some(1))
        );
    }
}
