//! Metric specs: a catalogue metric with its options resolved and its
//! threshold, as the `#[eval_dataset]` macro checks them at compile time and
//! the runtime scores them.

use super::catalog::{Need, Op, known_names, lookup};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::judged::JudgedMetric;
use super::measured::Measure;
use super::options::{OptionValue, Resolved};
use super::text::TextMetric;
use super::tools::ToolMetric;
use super::trajectory::TrajectoryMetric;
use crate::rank::RankMetric;
use crate::suggest::{Closeness, closest_within};

/// How a metric scores, with its options resolved: its family, and within
/// it the metric. Not `non_exhaustive`: the runtime scores each family with
/// one exhaustive `match`, so a metric without a scorer does not compile.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum MetricKind {
    /// A metric of the answer's text (`super::text`).
    Text(TextMetric),
    /// A metric a judge model or embeddings score (`super::judged`).
    Judged(JudgedMetric),
    /// A retrieval rank metric (`super::retrieval`).
    Rank(RankMetric),
    /// A tool-call metric (`super::tools`).
    Tools(ToolMetric),
    /// A trajectory metric (`super::trajectory`).
    Trajectory(TrajectoryMetric),
    /// What the engine measured of the sample: `latency_ms`, `ttft_ms`, `cost_usd`.
    Measured(Measure),
    /// A metric the user wrote (scored by the runtime's `Metric`).
    User(Box<super::user::UserMetric>),
    /// An external scorer (`super::exec`).
    Exec(super::exec::ExecMetric),
}

/// A metric with its threshold, ready to score.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MetricSpec {
    /// The name as written by the user (e.g. `string_match`); for a metric
    /// of one turn, with `@turn<n>` after it (`contains@turn2`, see
    /// [`MetricSpec::for_turn`]). Results and gates use this name.
    pub name: String,
    /// What to compute.
    pub kind: MetricKind,
    /// Comparison against the threshold.
    pub op: Op,
    /// The threshold.
    pub threshold: f64,
    /// The user turn (0-based) whose answer this metric scores, against
    /// that turn's expected answer; `None`: the sample's answer.
    pub turn: Option<usize>,
    /// The options as written, less those given their default value.
    pub options: Vec<(String, OptionValue)>,
    /// The catalogue name (e.g. `rubric`) when [`name`](Self::name) is a
    /// label given with [`labelled`](Self::labelled); `None` otherwise.
    pub catalogue: Option<String>,
}

impl MetricSpec {
    /// Checks and resolves `name(options) op threshold`. Omitted operator and
    /// threshold take the metric's defaults.
    pub fn new(
        name: &str,
        options: &[(&str, OptionValue)],
        bound: Option<(Op, f64)>,
    ) -> Result<MetricSpec, MetricSpecError> {
        if super::exec::is_exec(name) {
            return super::exec::check(name, options, bound).map(MetricSpec::exec);
        }
        // `<metric>@turn<n>`: the metric of user turn n (1-based) only.
        if let Some((base, n)) = name.rsplit_once("@turn")
            && let Ok(n) = n.parse::<usize>()
            && n >= 1
            && let Some(info) = lookup(base)
        {
            if info.measured().is_some() {
                return Err(MetricSpecError(
                    SpecErrorKind::NotPerTurn {
                        name: name.to_string(),
                        metric: info.name,
                    },
                    SpecPart::Name,
                ));
            }
            return MetricSpec::new(base, options, bound).map(|s| s.for_turn(n - 1));
        }
        let err = |kind: SpecErrorKind, part: SpecPart| Err(MetricSpecError(kind, part));
        let spec_name = || name.to_string();
        let Some(info) = lookup(name) else {
            return err(
                SpecErrorKind::UnknownMetric {
                    name: spec_name(),
                    suggestion: closest_within(name, known_names(), Closeness::case_sensitive(2)),
                },
                SpecPart::Name,
            );
        };
        if bound.is_none()
            && info.threshold_required()
            && !options.iter().any(|(k, _)| *k == "threshold")
        {
            return err(
                SpecErrorKind::ThresholdRequired {
                    name: spec_name(),
                    op: info.op,
                },
                SpecPart::Name,
            );
        }
        let (op, threshold) = bound.unwrap_or((info.op, info.default_threshold()));
        let threshold = if threshold.is_nan() && bound.is_none() {
            info.example_threshold() // only reached with a `threshold` option, refused below
        } else {
            threshold
        };
        if op != info.op {
            return err(
                SpecErrorKind::WrongDirection {
                    name: spec_name(),
                    op: info.op,
                    threshold,
                },
                SpecPart::Op,
            );
        }
        let (min, max) = info.range();
        if !(min..=max).contains(&threshold) {
            return err(
                SpecErrorKind::ThresholdOutOfRange {
                    name: spec_name(),
                    threshold,
                },
                SpecPart::Threshold,
            );
        }
        let resolved = Resolved::check(name, info, options)?;
        let kind = (info.build)(&resolved)?;
        Ok(MetricSpec {
            // A criteria metric is named `g_eval:<name>`.
            name: super::geval::spec_name(name, &kind),
            kind,
            op,
            threshold,
            turn: None,
            options: resolved.kept(),
            catalogue: None,
        })
    }

    /// The same metric reported as `label` (a letta-evals grader's key, so
    /// that two `model_judge` graders are two metrics): what it computes is
    /// still its catalogue metric's, kept in [`catalogue`](Self::catalogue).
    pub fn labelled(mut self, label: &str) -> MetricSpec {
        if label != self.name && self.turn.is_none() {
            self.catalogue = Some(self.base_name().to_string());
            self.name = label.to_string();
        }
        self
    }

    /// The same metric scoring only user turn `turn` (0-based) of a
    /// conversation, named `<name>@turn<turn + 1>` (e.g. `contains@turn2`).
    pub fn for_turn(mut self, turn: usize) -> MetricSpec {
        let base = self.base_name().to_string();
        self.name = format!("{base}@turn{}", turn + 1);
        self.turn = Some(turn);
        self
    }

    /// The name without a turn's `@turn<n>`.
    pub fn base_name(&self) -> &str {
        if let Some(catalogue) = &self.catalogue {
            return catalogue;
        }
        match self.turn {
            Some(_) => self
                .name
                .rsplit_once("@turn")
                .map_or(self.name.as_str(), |(base, _)| base),
            None => &self.name,
        }
    }

    /// Fields every sample must have for this spec.
    pub fn needs(&self) -> &'static [Need] {
        match &self.kind {
            MetricKind::Text(TextMetric::Regex {
                pattern: Some(_), ..
            }) => &[],
            MetricKind::Text(TextMetric::Json(check)) if !check.needs_expected() => &[],
            MetricKind::User(_) => &[],
            _ => self.info().map_or(&[], |i| i.needs),
        }
    }

    /// The spec taken apart again: name, options, bound; what
    /// [`MetricSpec::new`] takes to build it (the macro writes these out).
    pub fn decl_parts(&self) -> DeclParts {
        if let MetricKind::Exec(m) = &self.kind {
            return self.exec_decl_parts(m);
        }
        (
            self.catalogue_name().to_string(),
            self.options.clone(),
            Some((self.op, self.threshold)),
        )
    }

    /// Whether `score` is on the right side of the threshold.
    pub fn passes(&self, score: f64) -> bool {
        match self.op {
            Op::AtLeast => score >= self.threshold,
            Op::AtMost => score <= self.threshold,
        }
    }
}

/// A [`MetricSpec`] taken apart: name, options, bound.
pub type DeclParts = (String, Vec<(String, OptionValue)>, Option<(Op, f64)>);

/// A metric spec as the `#[eval_dataset]` macro writes it into a `static`
/// (const-constructible); turned into a [`MetricSpec`] at run time.
#[derive(Debug)]
pub struct MetricDecl {
    /// Metric name.
    pub name: &'static str,
    /// Options in the order written.
    pub options: &'static [(&'static str, OptionValue)],
    /// Operator and threshold, if written.
    pub bound: Option<(Op, f64)>,
    /// The name results give the metric when not `name`: a letta-evals
    /// grader's key (`quality` for a `model_judge` scored as `rubric`).
    pub named: Option<&'static str>,
}

impl MetricDecl {
    /// Resolves the declaration (the macro already checked it with the same code).
    pub fn to_spec(&self) -> Result<MetricSpec, MetricSpecError> {
        let spec = MetricSpec::new(self.name, self.options, self.bound)?;
        Ok(match self.named {
            Some(named) => spec.labelled(named),
            None => spec,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{ArgsMatch, StepKind, ToolPairing, TrajectoryMode};

    #[test]
    fn defaults_and_aliases() {
        let s = MetricSpec::new("string_match", &[], None).unwrap();
        assert_eq!(
            s.kind,
            MetricKind::Text(TextMetric::ExactMatch {
                case_sensitive: false
            })
        );
        assert_eq!((s.op, s.threshold), (Op::AtLeast, 1.0));
        let p = MetricSpec::new("partial_match", &[], None).unwrap();
        assert_eq!(p.threshold, 0.5);
    }

    #[test]
    fn tool_metric_options_resolve_and_round_trip() {
        let b = |k: &'static str, v: bool| (k, OptionValue::Bool(v));
        let s = MetricSpec::new(
            "tool_correctness",
            &[b("parameters", true), b("ordering", true)],
            Some((Op::AtLeast, 0.8)),
        )
        .unwrap();
        assert_eq!(
            s.kind,
            MetricKind::Tools(ToolMetric::ToolCorrectness {
                parameters: true,
                ordering: true,
                exact: false
            })
        );
        let (name, options, bound) = s.decl_parts();
        let options: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        assert_eq!(MetricSpec::new(&name, &options, bound).unwrap(), s);
        assert_eq!(s.needs(), &[Need::ExpectedTools]);
        // Defaults: deepeval's threshold 0.5, ragas' strict order.
        let d = MetricSpec::new("tool_correctness", &[], None).unwrap();
        assert_eq!((d.op, d.threshold), (Op::AtLeast, 0.5));
        let a = MetricSpec::new("tool_call_accuracy", &[], None).unwrap();
        assert_eq!(
            a.kind,
            MetricKind::Tools(ToolMetric::ToolCallAccuracy {
                strict_order: true,
                pairing: ToolPairing::Position
            })
        );
        let loose =
            MetricSpec::new("tool_call_accuracy", &[b("strict_order", false)], None).unwrap();
        assert_eq!(
            loose.decl_parts().1,
            vec![("strict_order".to_string(), OptionValue::Bool(false))]
        );
        // The retry-tolerant pairing, by name; it round-trips; a name not
        // known is refused, naming both.
        let best = MetricSpec::new(
            "tool_call_accuracy",
            &[("pairing", OptionValue::Str("best".into()))],
            None,
        )
        .unwrap();
        assert_eq!(
            best.kind,
            MetricKind::Tools(ToolMetric::ToolCallAccuracy {
                strict_order: true,
                pairing: ToolPairing::Best
            })
        );
        let (name, options, bound) = best.decl_parts();
        let options: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        assert_eq!(MetricSpec::new(&name, &options, bound).unwrap(), best);
        let position = MetricSpec::new(
            "tool_call_accuracy",
            &[("pairing", OptionValue::Str("position".into()))],
            None,
        )
        .unwrap();
        assert_eq!(position.kind, a.kind);
        let e = MetricSpec::new(
            "tool_call_accuracy",
            &[("pairing", OptionValue::Str("greedy".into()))],
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`pairing = \"greedy\"` of `tool_call_accuracy`: expected position (ragas 0.4.3: the i-th call against the i-th expected call) or best (retries and extra calls allowed)"
        );
        assert_eq!(
            MetricSpec::new("tool_called", &[], None).unwrap().needs(),
            &[Need::Expected]
        );
        let e = MetricSpec::new("tool_call_f1", &[b("exact", true)], None).unwrap_err();
        assert!(e.to_string().contains("takes no options"), "{e}");
        let e = MetricSpec::new(
            "tool_correctness",
            &[("exact", OptionValue::Str("yes".into()))],
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("expects true or false"), "{e}");
        let e = MetricSpec::new("tool_correctness", &[b("order", true)], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`tool_correctness` has no option `order`; its options: parameters, ordering, exact"
        );
    }

    #[test]
    fn trajectory_metric_options_resolve_round_trip_and_refuse_unknown_names() {
        let str_opt = |k: &'static str, v: &'static str| (k, OptionValue::Str(v.into()));
        let m = MetricSpec::new(
            "trajectory_match",
            &[str_opt("mode", "superset"), str_opt("args", "ignore")],
            None,
        )
        .unwrap();
        assert_eq!(
            m.kind,
            MetricKind::Trajectory(TrajectoryMetric::TrajectoryMatch {
                mode: TrajectoryMode::Superset,
                args: ArgsMatch::Ignore
            })
        );
        assert_eq!((m.op, m.threshold), (Op::AtLeast, 1.0));
        assert_eq!(m.needs(), &[Need::ExpectedTools]);
        let d = MetricSpec::new("trajectory_match", &[], None).unwrap();
        assert_eq!(d.decl_parts().1, vec![], "the defaults are not written out");
        let budget = Some((Op::AtMost, 8.0));
        let steps = MetricSpec::new("steps", &[str_opt("step", "tool")], budget).unwrap();
        assert_eq!(
            steps.kind,
            MetricKind::Trajectory(TrajectoryMetric::Steps {
                step: Some(StepKind::Tool)
            })
        );
        for spec in [m, steps] {
            let (name, options, bound) = spec.decl_parts();
            let options: Vec<(&str, OptionValue)> = options
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            assert_eq!(MetricSpec::new(&name, &options, bound).unwrap(), spec);
        }
        let e = MetricSpec::new("trajectory_match", &[str_opt("mode", "loose")], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`mode = \"loose\"` of `trajectory_match`: expected strict, unordered, subset or superset (agentevals' trajectory match modes)"
        );
        let e = MetricSpec::new(
            "step_tokens",
            &[str_opt("step", "agent")],
            Some((Op::AtMost, 9.0)),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("expected llm, tool, retrieval or embeddings"),
            "{e}"
        );
        // A budget has no default, and the message suggests one.
        let e = MetricSpec::new("steps", &[], None).unwrap_err();
        assert!(e.to_string().contains("steps <= 8"), "{e}");
        assert_eq!(
            MetricSpec::new("repeated_calls", &[], None)
                .unwrap()
                .threshold,
            1.0
        );
    }

    #[test]
    fn a_turns_metric_is_named_for_its_turn() {
        let s = MetricSpec::new("hit@k", &[], None).unwrap().for_turn(1);
        assert_eq!((s.name.as_str(), s.turn), ("hit@k@turn2", Some(1)));
        assert_eq!((s.base_name(), s.canonical_name()), ("hit@k", "hit_at_k"));
        assert_eq!(s.decl_parts().0, "hit@k");
        let again = s.for_turn(0);
        assert_eq!(again.name, "hit@k@turn1", "not named for two turns");
        // Written by name, as gates name a turn's metric.
        let w = MetricSpec::new("string_match@turn3", &[], Some((Op::AtLeast, 0.5))).unwrap();
        assert_eq!(
            (w.name.as_str(), w.turn, w.threshold),
            ("string_match@turn3", Some(2), 0.5)
        );
        assert!(MetricSpec::new("contains@turn0", &[], None).is_err());
        let both = crate::metric::parse_specs("contains@turn1, contains@turn2").unwrap();
        assert_eq!(both.len(), 2);
    }

    /// Every catalogue metric builds from its name alone (with its example
    /// threshold where one is required) and from its aliases, and its spec
    /// taken apart builds the same spec again.
    #[test]
    fn every_metric_builds_and_round_trips() {
        // What the metrics that cannot go without an option are given.
        let needed = |name: &str| -> Vec<(&'static str, OptionValue)> {
            let text = |k, v: &'static str| (k, OptionValue::Str(v.into()));
            match name {
                "exec" => vec![text("command", "python3 score.py")],
                "json_schema" => vec![text("schema", "{}")],
                "json_pointer" => vec![text("pointer", "/a")],
                "g_eval" => vec![text("criteria", "Is it helpful?")],
                _ => Vec::new(),
            }
        };
        for info in crate::metric::catalog() {
            let bound = info
                .threshold_required()
                .then_some((info.op, info.example_threshold()));
            for name in std::iter::once(info.name).chain(info.aliases.iter().copied()) {
                let spec = MetricSpec::new(name, &needed(info.name), bound).unwrap();
                if !matches!(info.name, "exec" | "g_eval") {
                    assert_eq!(spec.canonical_name(), info.name);
                }
                let (name, options, bound) = spec.decl_parts();
                let options: Vec<(&str, OptionValue)> = options
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.clone()))
                    .collect();
                assert_eq!(MetricSpec::new(&name, &options, bound).unwrap(), spec);
            }
        }
    }

    #[test]
    fn rejects_bad_specs() {
        let e = MetricSpec::new("faithfulnes", &[], None).unwrap_err();
        assert!(
            e.to_string().contains("unknown metric `faithfulnes`"),
            "{e}"
        );
        let e = MetricSpec::new("contains", &[], Some((Op::AtMost, 0.5))).unwrap_err();
        assert!(e.to_string().contains("write `contains >= 0.5`"), "{e}");
        let e = MetricSpec::new("contains", &[], Some((Op::AtLeast, 2.0))).unwrap_err();
        assert!(e.to_string().contains("between 0 and 1"), "{e}");
        let e = MetricSpec::new(
            "partial_match",
            &[("case_sensitive", OptionValue::Bool(true))],
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("takes no options"), "{e}");
        let e = MetricSpec::new(
            "contains",
            &[("case_sensitive", OptionValue::Str("x".into()))],
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("expects true or false"), "{e}");
    }

    fn err(
        name: &str,
        options: &[(&str, OptionValue)],
        bound: Option<(Op, f64)>,
    ) -> MetricSpecError {
        MetricSpec::new(name, options, bound).unwrap_err()
    }

    #[test]
    fn kinds_render_the_messages_users_see() {
        let e = err("contains", &[], Some((Op::AtMost, 0.25)));
        assert_eq!(
            e.kind(),
            &SpecErrorKind::WrongDirection {
                name: "contains".into(),
                op: Op::AtLeast,
                threshold: 0.25
            }
        );
        assert_eq!(e.part(), SpecPart::Op);
        assert_eq!(
            e.to_string(),
            "`contains` is better when higher, so its threshold is a minimum: write `contains >= 0.25`"
        );
        let e = err("hallucination", &[], Some((Op::AtLeast, 0.2)));
        assert_eq!(
            e.to_string(),
            "`hallucination` is better when lower, so its threshold is a maximum: write `hallucination <= 0.2`"
        );
        let e = err("faithfulnes", &[], None);
        assert_eq!(
            e.0,
            SpecErrorKind::UnknownMetric {
                name: "faithfulnes".into(),
                suggestion: Some("faithfulness")
            }
        );
        assert_eq!(
            e.to_string(),
            "unknown metric `faithfulnes` (did you mean `faithfulness`?)"
        );
        // Nothing close: every name, and how to name one's own.
        let e = err("bleu", &[], None);
        assert!(
            e.to_string().starts_with(
                "unknown metric `bleu`; known metrics: exact_match, string_match, contains,"
            ),
            "{e}"
        );
        assert!(e.to_string().contains(", latency_ms, "), "{e}");
        let e = err("regex", &[("patern", OptionValue::Str("x".into()))], None);
        assert_eq!(
            (e.to_string().as_str(), e.1),
            (
                "`regex` has no option `patern`; its options: pattern, case_sensitive",
                SpecPart::Option(0)
            )
        );
        let e = err("contains", &[("threshold", OptionValue::Num(0.5))], None);
        assert_eq!(
            e.to_string(),
            "the threshold goes after the metric: write `contains >= 1`"
        );
        let e = err("regex", &[("pattern", OptionValue::Str("(".into()))], None);
        assert_eq!(
            e.to_string(),
            "`pattern` is not a valid regex: unclosed group"
        );
        let e = err("latency_ms", &[], None);
        assert_eq!(
            e.to_string(),
            "`latency_ms` has no default threshold: give one, e.g. `latency_ms <= 2000`"
        );
        let e = err("cost_usd@turn2", &[], Some((Op::AtMost, 0.1)));
        assert_eq!(
            e.to_string(),
            "`cost_usd@turn2`: `cost_usd` is measured per sample, not per turn; write `cost_usd`"
        );
        let e = err("ttft_ms", &[], Some((Op::AtMost, -5.0)));
        assert_eq!(
            e.to_string(),
            "`ttft_ms` scores 0 or more, so a threshold of -5 can never be met as intended"
        );
        let e = err("ttft_ms", &[("threshold", OptionValue::Num(1.0))], None);
        assert_eq!(
            e.to_string(),
            "the threshold goes after the metric: write `ttft_ms <= 500`"
        );
        let ok = MetricSpec::new("latency_ms", &[], Some((Op::AtMost, 2000.0))).unwrap();
        assert_eq!(
            ok.kind,
            MetricKind::Measured(crate::metric::Measure::LatencyMs)
        );
        assert!(ok.passes(2000.0) && !ok.passes(2000.5));
        let huge = "a".repeat(super::super::MAX_REGEX_BYTES + 1);
        let e = err("regex", &[("pattern", OptionValue::Str(huge.into()))], None);
        assert_eq!(
            e.to_string(),
            "`pattern` is 16385 bytes long, over the 16384-byte limit of a regex"
        );
    }
}
