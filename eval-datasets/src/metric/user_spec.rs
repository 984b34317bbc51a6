//! Specs of metrics of the user's (issue 36, part 2): a [`UserMetric`]
//! held to a threshold, and what a [`MetricSpec`] says of its metric
//! whether the catalogue's or the user's.

use super::catalog::{MetricInfo, Op, lookup};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::measured::Measure;
use super::spec::{MetricKind, MetricSpec};
use super::user::UserMetric;

impl UserMetric {
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

/// What a spec says of its metric, whether the catalogue's or the user's
/// (the catalogue entry, [`MetricSpec::info`], a user metric has none).
impl MetricSpec {
    /// The catalogue entry; `None` for a user metric.
    pub fn info(&self) -> Option<&'static MetricInfo> {
        match &self.kind {
            MetricKind::User(_) => None,
            MetricKind::Exec(_) => lookup(super::exec::EXEC),
            MetricKind::Judged(super::JudgedMetric::GEval(_)) => lookup("g_eval"),
            _ => lookup(self.base_name()),
        }
    }

    /// The metric's own name (a catalogue metric's, whatever alias the spec
    /// wrote; a user metric's), without a turn.
    pub fn canonical_name(&self) -> &str {
        match (&self.kind, self.info()) {
            (MetricKind::User(u), _) => &u.name,
            (MetricKind::Exec(_), _) => &self.name,
            (MetricKind::Judged(super::JudgedMetric::GEval(_)), _) => self.base_name(),
            (_, Some(info)) => info.name,
            (_, None) => self.base_name(),
        }
    }

    /// The scores the metric can give, `(min, max)`.
    pub fn range(&self) -> (f64, f64) {
        match (&self.kind, self.info()) {
            (MetricKind::User(u), _) => u.range,
            (MetricKind::Exec(m), _) => (m.min, m.max),
            (_, Some(info)) => info.range(),
            (_, None) => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// Whether every score is 1 (passed) or 0 (failed) (see
    /// [`MetricInfo::pass_fail`]).
    pub fn pass_fail(&self) -> bool {
        match (&self.kind, self.info()) {
            (MetricKind::User(u), _) => u.pass_fail,
            (MetricKind::Exec(_), _) => false,
            (_, Some(info)) => info.pass_fail(),
            (_, None) => false,
        }
    }

    /// What the engine measures for this metric, if it is a measured one.
    pub fn measured(&self) -> Option<Measure> {
        self.info().and_then(MetricInfo::measured)
    }

    /// The user metric this spec scores, if it is one.
    pub fn user(&self) -> Option<&UserMetric> {
        match &self.kind {
            MetricKind::User(u) => Some(u),
            _ => None,
        }
    }

    /// A spec of `kind` under `name`, for one turn of none.
    pub(super) fn from_kind(name: &str, kind: MetricKind, op: Op, threshold: f64) -> MetricSpec {
        MetricSpec {
            name: name.to_string(),
            kind,
            op,
            threshold,
            turn: None,
            options: Vec::new(),
            catalogue: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{UserMetrics, parse_gates_with, parse_specs_with};
    use std::sync::Arc;

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
        assert!(s.info().is_none() && s.measured().is_none());
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
