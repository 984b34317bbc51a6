//! The metric catalogue: every built-in metric is one [`MetricInfo`] —
//! its names, direction, range, needs, options, threshold and the
//! constructor that turns a written spec into its [`MetricKind`] — kept in
//! the file of its family (`text.rs`, `judged.rs`, `retrieval.rs`,
//! `tools.rs`, `trajectory.rs`, `measured.rs`), beside the family's enum.
//! The runtime scores each family with one exhaustive `match`.

use std::fmt;

// Through the module's face: the families, the options and the specs are
// built from these definitions.
use super::{Measure, MetricKind, MetricSpecError, OptionValue, Resolved};

/// Comparison of a score against its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>=`: the score must be at least the threshold.
    AtLeast,
    /// `<=`: the score must be at most the threshold.
    AtMost,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::AtLeast => ">=",
            Op::AtMost => "<=",
        })
    }
}

/// A sample field a metric cannot score without. Not `non_exhaustive`:
/// the runtime checks each one with an exhaustive `match`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// `expected` (or an alias such as `ground_truth`, `expected_output`).
    Expected,
    /// `context`.
    Context,
    /// `reference_contexts`.
    ReferenceContexts,
    /// Relevant document ids (a retrieval dataset's `relevant.sourceIds`).
    RelevantIds,
    /// The tool calls the agent should make (`expected_tools`, ragas
    /// `reference_tool_calls`); an empty list counts: no call expected.
    ExpectedTools,
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Need::Expected => "expected",
            Need::Context => "context",
            Need::ReferenceContexts => "reference_contexts",
            Need::RelevantIds => "relevant.sourceIds",
            Need::ExpectedTools => "expected_tools",
        })
    }
}

/// The type of a metric option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` / `false`.
    Bool,
    /// A string literal.
    Str,
    /// A number.
    Num,
    /// A JSON scalar: `true` / `false`, a number or a string
    /// (`json_pointer`'s `equals`).
    Value,
}

/// One option a metric takes: its name, type and default.
#[derive(Debug)]
#[non_exhaustive]
pub struct OptionDef {
    /// The name written in specs.
    pub name: &'static str,
    /// Its type.
    pub kind: OptionKind,
    /// The value when the option is not written (`None`: absent).
    pub default: Option<OptionValue>,
}

impl OptionDef {
    /// A `true`/`false` option.
    pub const fn flag(name: &'static str, default: bool) -> OptionDef {
        OptionDef {
            name,
            kind: OptionKind::Bool,
            default: Some(OptionValue::Bool(default)),
        }
    }

    /// A string option, absent unless written.
    pub const fn text(name: &'static str) -> OptionDef {
        OptionDef {
            name,
            kind: OptionKind::Str,
            default: None,
        }
    }

    /// A string option naming one of a few choices, `default` unless written.
    pub const fn choice(name: &'static str, default: &'static str) -> OptionDef {
        OptionDef {
            name,
            kind: OptionKind::Str,
            default: Some(OptionValue::Str(std::borrow::Cow::Borrowed(default))),
        }
    }

    /// A number option, absent unless written.
    pub const fn number(name: &'static str) -> OptionDef {
        OptionDef {
            name,
            kind: OptionKind::Num,
            default: None,
        }
    }
}

/// A metric's threshold when a spec gives none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// This one.
    Default(f64),
    /// None: a budget is the user's to choose; messages suggest `example`.
    Required {
        /// A threshold to show in the message asking for one.
        example: f64,
    },
}

/// The constructor of a metric: its checked options to its kind.
pub(crate) type Build = fn(&Resolved<'_>) -> Result<MetricKind, MetricSpecError>;

/// What the catalogue knows about one metric: its one definition.
#[non_exhaustive]
pub struct MetricInfo {
    /// Name used in specs.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Comparison implied when a spec gives no operator.
    pub op: Op,
    /// Threshold used when a spec gives none.
    pub threshold: Threshold,
    /// The scores the metric can give, `(min, max)` (`max` may be infinite).
    pub range: (f64, f64),
    /// Whether every score is 1 (passed) or 0 (failed): over repeated runs
    /// the mean is a pass rate, whose interval is Wilson's.
    pub pass_fail: bool,
    /// Fields every sample must have.
    pub needs: &'static [Need],
    /// Options the spec may set.
    pub options: &'static [OptionDef],
    /// One line for error messages and docs.
    pub summary: &'static str,
    /// The published definition it follows (paper, project and version),
    /// or "" for one of ours.
    pub reference: &'static str,
    /// Its options to its kind.
    pub(crate) build: Build,
}

impl fmt::Debug for MetricInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricInfo")
            .field("name", &self.name)
            .field("op", &self.op)
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl MetricInfo {
    /// The scores the metric can give, `(min, max)`.
    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    /// Whether a spec must give the threshold (the metric has no default:
    /// a latency or cost budget is the user's to choose).
    pub fn threshold_required(&self) -> bool {
        matches!(self.threshold, Threshold::Required { .. })
    }

    /// The threshold used when a spec gives none (NaN when one is required).
    pub fn default_threshold(&self) -> f64 {
        match self.threshold {
            Threshold::Default(t) => t,
            Threshold::Required { .. } => f64::NAN,
        }
    }

    /// A threshold to show in messages: the default, else the example.
    pub fn example_threshold(&self) -> f64 {
        match self.threshold {
            Threshold::Default(t) | Threshold::Required { example: t } => t,
        }
    }

    /// What the engine measures for this metric, when it is not computed
    /// from the answer (`latency_ms`, `ttft_ms`, `cost_usd`).
    pub fn measured(&self) -> Option<Measure> {
        Measure::of(self.name)
    }

    /// Whether every score is 1 (passed) or 0 (failed).
    pub fn pass_fail(&self) -> bool {
        self.pass_fail
    }
}

/// Longest regex this version compiles, in bytes (the `regex` metric's
/// `pattern`, or an expected answer used as one): checked before parsing,
/// which for a multi-megabyte pattern allocates gigabytes before the
/// compiled-size limit (4 MiB) is reached. A literal of this length still
/// compiles within that limit, case-insensitively too.
pub const MAX_REGEX_BYTES: usize = 16 * 1024;

/// Every metric this version can score, family by family.
pub fn catalog() -> impl Iterator<Item = &'static MetricInfo> {
    super::FAMILIES.iter().flat_map(|family| family.iter())
}

/// The catalogue entry for `name` (or one of its aliases).
pub fn lookup(name: &str) -> Option<&'static MetricInfo> {
    catalog().find(|m| m.name == name || m.aliases.contains(&name))
}

/// The catalogue entry of a metric as results name it: by its name or an
/// alias, or a per-turn metric's (`contains@turn2`) by its base metric's.
pub fn lookup_named(name: &str) -> Option<&'static MetricInfo> {
    lookup(name)
        .or_else(|| {
            let (base, turn) = name.rsplit_once("@turn")?;
            turn.parse::<usize>().ok().filter(|n| *n >= 1)?;
            lookup(base)
        })
        // `g_eval:<name>` (and `g_eval:<name>@turn<n>`) is a `g_eval`.
        .or_else(|| lookup(name.split_once(':')?.0).filter(|i| i.name == "g_eval"))
}

/// All accepted metric names, for "expected one of" messages.
pub fn known_names() -> Vec<&'static str> {
    catalog()
        .flat_map(|m| std::iter::once(m.name).chain(m.aliases.iter().copied()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_per_turn_name_finds_its_base_metric() {
        assert_eq!(
            lookup_named("contains@turn2").map(|i| i.name),
            Some("contains")
        );
        assert_eq!(
            lookup_named("hit@k@turn1").map(|i| i.name),
            Some("hit_at_k")
        );
        assert_eq!(
            lookup_named("faithfulness").map(|i| i.name),
            Some("faithfulness")
        );
        assert!(lookup_named("contains@turn0").is_none());
        assert!(lookup_named("contains@turnx").is_none());
        assert!(lookup_named("nope@turn2").is_none());
    }

    /// Every name and alias is one metric's; every metric builds with its
    /// defaults (or its example threshold), and its defaults are of the
    /// declared types.
    #[test]
    fn every_definition_is_whole() {
        let names = known_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "`{n}` names two metrics");
        }
        for m in catalog() {
            let (min, max) = m.range;
            assert!(min < max, "{}: empty range", m.name);
            assert!(
                (min..=max).contains(&m.example_threshold()),
                "{}: threshold out of range",
                m.name
            );
            for o in m.options {
                let ok = matches!(
                    (&o.default, o.kind),
                    (None, _)
                        | (_, OptionKind::Value)
                        | (Some(OptionValue::Bool(_)), OptionKind::Bool)
                        | (Some(OptionValue::Str(_)), OptionKind::Str)
                        | (Some(OptionValue::Num(_)), OptionKind::Num)
                );
                assert!(ok, "{}: option `{}` default mistyped", m.name, o.name);
            }
            assert!(!m.summary.is_empty(), "{}: no summary", m.name);
        }
    }
}
