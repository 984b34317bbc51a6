//! What can be wrong with a metric spec, and where in the spec.

use super::{Op, known_names};
use crate::suggest::did_you_mean;

/// A spec that names no known metric or sets it up wrongly: what is wrong
/// (`.0`, whose text is the message) and which part of the spec it is about
/// (`.1`, for error spans).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
#[non_exhaustive]
pub struct MetricSpecError(pub SpecErrorKind, pub SpecPart);

impl MetricSpecError {
    /// What is wrong.
    pub fn kind(&self) -> &SpecErrorKind {
        &self.0
    }

    /// Which part of the spec the error is about.
    pub fn part(&self) -> SpecPart {
        self.1
    }
}

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

/// What is wrong with a metric spec. `name` is the metric as written (an
/// alias stays an alias).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// No metric has this name or alias. The message lists the known
    /// names only when none is close.
    #[error("unknown metric `{name}`{}", unknown_tail(*.suggestion))]
    UnknownMetric {
        /// The metric as written.
        name: String,
        /// The closest known name, if one is close.
        suggestion: Option<&'static str>,
    },
    /// The operator points the wrong way (`op` is the metric's own).
    #[error(
        "`{name}` is better when {}, so its threshold is a {}: write `{name} {op} {threshold}`",
        better(*.op),
        bound(*.op)
    )]
    WrongDirection {
        /// The metric as written.
        name: String,
        /// The comparison.
        op: Op,
        /// The threshold given.
        threshold: f64,
    },
    /// The threshold cannot be met as intended.
    #[error(
        "`{name}` scores {}, so a threshold of {threshold} can never be met as intended",
        range_text(name)
    )]
    ThresholdOutOfRange {
        /// The metric as written.
        name: String,
        /// The threshold given.
        threshold: f64,
    },
    /// A metric without a default threshold given none (`op` is the metric's own).
    #[error(
        "`{name}` has no default threshold: give one, e.g. `{name} {op} {}`",
        example(name)
    )]
    ThresholdRequired {
        /// The metric as written.
        name: String,
        /// The comparison.
        op: Op,
    },
    /// A gate's statistic that is not one (`p955(latency_ms)`).
    #[error(
        "`{name}` is not a statistic: expected `mean`, `p1` … `p99` (e.g. `p95(latency_ms) <= 3000`), `pass@K` or `pass^K` with K from 1 to {} (`pass_at_K`, `pass_hat_K`; e.g. `pass@3(contains) >= 0.9`)",
        crate::repeat::MAX_REPEAT
    )]
    UnknownStat {
        /// The metric as written.
        name: String,
    },
    /// `pass@k` or `pass^k` of a measured quantity, which has no pass or
    /// fail per run.
    #[error(
        "`{stat}({metric})`: `{metric}` is measured, not passed or failed per run, so it has no {stat}; gate a percentile instead, e.g. `p95({metric}) <= 3000`"
    )]
    PassOfMeasured {
        /// The statistic as written (`pass@3`).
        stat: String,
        /// The metric.
        metric: &'static str,
    },
    /// `pass@k` or `pass^k` without a bound `>= x`, x from 0 to 1.
    #[error(
        "`{stat}({name})` is a share of samples from 0 to 1, better when higher: give its minimum after the parentheses, e.g. `{stat}({name}) >= 0.9`"
    )]
    PassBound {
        /// The statistic as written (`pass@3`).
        stat: String,
        /// The metric as written.
        name: String,
    },
    /// A per-sample measurement asked of one turn (`latency_ms@turn2`).
    #[error("`{name}`: `{metric}` is measured per sample, not per turn; write `{metric}`")]
    NotPerTurn {
        /// The metric as written.
        name: String,
        /// The metric.
        metric: &'static str,
    },
    /// An option is given twice.
    #[error("option `{key}` of `{name}` is given twice")]
    RepeatedOption {
        /// The metric as written.
        name: String,
        /// The option.
        key: String,
    },
    /// `threshold` written as an option (`op` and `default` are the metric's).
    #[error("the threshold goes after the metric: write `{name} {op} {}`", default)]
    ThresholdAsOption {
        /// The metric as written.
        name: String,
        /// The comparison.
        op: Op,
        /// The metric's default threshold.
        default: f64,
    },
    /// An option given to a metric that takes none.
    #[error("`{name}` takes no options, found `{key}`")]
    TakesNoOptions {
        /// The metric as written.
        name: String,
        /// The option.
        key: String,
    },
    /// An option the metric does not have.
    #[error("`{name}` has no option `{key}`; its options: {}", .known.join(", "))]
    UnknownOption {
        /// The metric as written.
        name: String,
        /// The option.
        key: String,
        /// The metric's options.
        known: Vec<&'static str>,
    },
    /// `pattern` is longer than [`MAX_REGEX_BYTES`](super::MAX_REGEX_BYTES).
    #[error("`pattern` is {len} bytes long, over the {limit}-byte limit of a regex")]
    PatternTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// `pattern` does not compile (the regex parser's reason).
    #[error("`pattern` is not a valid regex: {0}")]
    InvalidPattern(String),
    /// A boolean option given something else.
    #[error("option `{key}` of `{name}` expects true or false")]
    ExpectsBool {
        /// The metric as written.
        name: String,
        /// The option.
        key: String,
    },
    /// A string option given something else.
    #[error("option `{key}` of `{name}` expects a string")]
    ExpectsString {
        /// The metric as written.
        name: String,
        /// The option.
        key: String,
    },
    /// A number option given something else.
    #[error("option `{key}` of `{name}` expects a number")]
    ExpectsNumber {
        /// The metric as written.
        name: String,
        /// The option.
        key: String,
    },
    /// `rubric` given both `rubric` and `rubric_file`.
    #[error("`rubric` takes `rubric` or `rubric_file`, not both")]
    RubricAndRubricFile,
    /// An option that takes one of a few names was given another.
    #[error("{given}: expected {expected}")]
    UnknownChoice {
        /// The option as given, and the metric: `` `mode = "x"` of `trajectory_match` ``.
        given: String,
        /// The names it takes.
        expected: &'static str,
    },
    /// The list of specs is not well formed.
    #[error("{0}")]
    Syntax(SpecSyntaxError),
    /// The threshold of one spec (`part`) is not a number.
    #[error("`{part}`: `{value}` is not a number")]
    NotANumber {
        /// The part of the list that is wrong.
        part: String,
        /// The value given.
        value: String,
    },
    /// One spec's options are not closed.
    #[error("`{part}`: expected `)` after the options")]
    UnclosedOptions {
        /// The part of the list that is wrong.
        part: String,
    },
    /// One spec's options are not well formed.
    #[error("`{part}`: {error}")]
    BadOptions {
        /// The part of the list that is wrong.
        part: String,
        /// What is wrong with it.
        error: SpecSyntaxError,
    },
    /// One spec has no metric name.
    #[error("`{part}`: expected a metric name")]
    NotAName {
        /// The part of the list that is wrong.
        part: String,
    },
    /// A metric is listed twice (also under two of its names).
    #[error("`{name}` is listed twice")]
    ListedTwice {
        /// The metric as written.
        name: String,
    },
    /// The list holds no spec.
    #[error("no metrics given")]
    NoMetrics,
    /// A threshold outside a user metric's range.
    #[error(
        "`{name}` scores {}, so a threshold of {threshold} can never be met as intended",
        user_range_text(*.min, *.max)
    )]
    UserThresholdOutOfRange {
        /// The metric.
        name: String,
        /// The threshold given.
        threshold: f64,
        /// The least score it gives.
        min: f64,
        /// The greatest score it gives.
        max: f64,
    },
    /// A `g_eval` option that cannot be used, in words.
    #[error("{0}")]
    GEval(String),
    /// An external scorer's spec (`exec(...)`) that cannot work.
    #[error(transparent)]
    Exec(super::exec_error::ExecSpecError),
}

/// How a list of specs, or of options, is not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecSyntaxError {
    /// A `)` without its `(`.
    #[error("unbalanced `)`")]
    UnbalancedParen,
    /// A `(` or a string literal left open.
    #[error("unclosed `(` or string")]
    Unclosed,
    /// An option that is not `key = value` (as written).
    #[error("expected `key = value`, found `{0}`")]
    NotKeyValue(String),
    /// A string literal that does not parse (as written).
    #[error("`{0}` is not a valid string literal")]
    BadString(String),
    /// A value that is none of the accepted kinds (as written).
    #[error("`{0}` is not true, false, a number or a string")]
    BadValue(String),
}

/// After an unknown name: the close one, else every known name.
fn unknown_tail(suggestion: Option<&'static str>) -> String {
    match suggestion {
        Some(_) => did_you_mean(suggestion),
        None => format!("; known metrics: {}", known_names().join(", ")),
    }
}

/// The scores a metric gives, in words.
fn range_text(name: &str) -> &'static str {
    match super::lookup(name.rsplit_once("@turn").map_or(name, |(b, _)| b)) {
        Some(info) if info.range().1.is_infinite() => "0 or more",
        _ => "between 0 and 1",
    }
}

/// A user metric's range, in words.
fn user_range_text(min: f64, max: f64) -> String {
    match (min.is_finite(), max.is_finite()) {
        (true, true) => format!("between {min} and {max}"),
        (true, false) => format!("{min} or more"),
        (false, true) => format!("{max} or less"),
        (false, false) => "any number".to_string(),
    }
}

/// A threshold to show in a message for a metric that has no default.
fn example(name: &str) -> f64 {
    super::lookup(name).map_or(1.0, |i| i.example_threshold())
}

fn better(op: Op) -> &'static str {
    match op {
        Op::AtLeast => "higher",
        Op::AtMost => "lower",
    }
}

fn bound(op: Op) -> &'static str {
    match op {
        Op::AtLeast => "minimum",
        Op::AtMost => "maximum",
    }
}
