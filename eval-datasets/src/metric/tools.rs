//! The tool-call metrics: the agent's calls (every turn, in order) against
//! the sample's. Their definitions and [`ToolMetric`]; scored by
//! eval-runtime's `metrics::tools`.

use super::MetricKind;
use super::catalog::{MetricInfo, Need, Op, OptionDef, Threshold};

/// A tool-call metric, with its options resolved.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum ToolMetric {
    /// `tool_called`.
    ToolCalled,
    /// `tool_correctness`.
    ToolCorrectness {
        /// deepeval `evaluation_params=[INPUT_PARAMETERS]`: the arguments
        /// count too (`parameters = true`).
        parameters: bool,
        /// deepeval `should_consider_ordering` (`ordering = true`).
        ordering: bool,
        /// deepeval `should_exact_match` (`exact = true`).
        exact: bool,
    },
    /// `tool_call_accuracy`.
    ToolCallAccuracy {
        /// ragas `strict_order` (default true; `strict_order = false`).
        strict_order: bool,
        /// How calls are paired with the expected ones (`pairing = "best"`;
        /// by position, as released ragas does, by default).
        pairing: ToolPairing,
    },
    /// `tool_call_f1`.
    ToolCallF1,
}

/// The tool-call metrics.
pub(super) static METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "tool_called",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[Need::Expected],
        options: &[],
        summary: "letta-evals Tool Usage Testing: 1 if the agent called the tool the expected answer (ground_truth) names, in any turn (exact name), else 0",
        reference: "letta-evals tool grader (seed 001)",
        build: |_| Ok(MetricKind::Tools(ToolMetric::ToolCalled)),
    },
    MetricInfo {
        name: "tool_correctness",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(0.5),
        range: (0.0, 1.0),
        pass_fail: false,
        needs: &[Need::ExpectedTools],
        options: &[
            OptionDef::flag("parameters", false),
            OptionDef::flag("ordering", false),
            OptionDef::flag("exact", false),
        ],
        summary: "deepeval ToolCorrectness: expected tools the agent called / expected tools; parameters = true also scores the arguments, ordering = true a weighted longest common subsequence, exact = true 1 only for the same calls in the same order",
        reference: "deepeval ToolCorrectnessMetric",
        build: |o| {
            Ok(MetricKind::Tools(ToolMetric::ToolCorrectness {
                parameters: o.flag("parameters"),
                ordering: o.flag("ordering"),
                exact: o.flag("exact"),
            }))
        },
    },
    MetricInfo {
        name: "tool_call_accuracy",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: false,
        needs: &[Need::ExpectedTools],
        options: &[
            OptionDef::flag("strict_order", true),
            OptionDef::choice("pairing", "position"),
        ],
        summary: "ragas 0.4.3 ToolCallAccuracy: 0 unless the calls' names are the expected ones, as many, in order (sorted unless strict_order = false); else the i-th call against the i-th expected one, the mean share of expected arguments matched (compared as Python text); pairing = \"best\" allows retried and extra calls",
        reference: "ragas 0.4.3 ToolCallAccuracy",
        build: |o| {
            let pairing = o
                .choice(
                    "pairing",
                    ToolPairing::parse,
                    "position (ragas 0.4.3: the i-th call against the i-th expected call) or best (retries and extra calls allowed)",
                )?
                .unwrap_or_default();
            Ok(MetricKind::Tools(ToolMetric::ToolCallAccuracy {
                strict_order: o.flag("strict_order"),
                pairing,
            }))
        },
    },
    MetricInfo {
        name: "tool_call_f1",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(0.5),
        range: (0.0, 1.0),
        pass_fail: false,
        needs: &[Need::ExpectedTools],
        options: &[],
        summary: "ragas ToolCallF1: F1 of precision and recall over the distinct (name, arguments) calls, order ignored",
        reference: "ragas ToolCallF1",
        build: |_| Ok(MetricKind::Tools(ToolMetric::ToolCallF1)),
    },
];

/// How `tool_call_accuracy` pairs the agent's calls with the expected
/// ones (`pairing = "position"` or `"best"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolPairing {
    /// ragas 0.4.3's `ToolCallAccuracy`: the calls must be the expected
    /// ones, name for name, as many as expected; the i-th call is scored
    /// against the i-th expected call. A retried or extra call scores 0.
    #[default]
    Position,
    /// Retry-tolerant (not a released ragas definition): extra and retried
    /// calls are allowed (with `strict_order`, the expected names in order
    /// among the calls'; without, each called at least as often); each
    /// expected call takes the unused call of its name whose arguments
    /// match best.
    Best,
}

impl ToolPairing {
    /// `position` or `best`.
    pub fn parse(name: &str) -> Option<ToolPairing> {
        Some(match name {
            "position" => ToolPairing::Position,
            "best" => ToolPairing::Best,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            ToolPairing::Position => "position",
            ToolPairing::Best => "best",
        }
    }
}
