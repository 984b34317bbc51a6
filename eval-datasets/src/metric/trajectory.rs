//! The trajectory metrics: the steps the agent took, from its OpenTelemetry
//! spans or its answers' tool calls. Their definitions and
//! [`TrajectoryMetric`]; scored by eval-runtime's `metrics::trajectory`.

use super::MetricKind;
use super::catalog::{MetricInfo, Need, Op, OptionDef, Threshold};
use super::error::MetricSpecError;
use super::options::Resolved;

/// A trajectory metric, with its options resolved.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum TrajectoryMetric {
    /// `trajectory_match`.
    TrajectoryMatch {
        /// agentevals' `trajectory_match_mode` (`mode = "..."`).
        mode: TrajectoryMode,
        /// agentevals' `tool_args_match_mode` (`args = "..."`).
        args: ArgsMatch,
    },
    /// `steps`.
    Steps {
        /// Only steps of this kind count (`step = "..."`).
        step: Option<StepKind>,
    },
    /// `repeated_calls`.
    RepeatedCalls,
    /// `step_latency_ms`.
    StepLatency {
        /// Only steps of this kind count (`step = "..."`).
        step: Option<StepKind>,
    },
    /// `step_tokens`.
    StepTokens {
        /// Only steps of this kind count (`step = "..."`).
        step: Option<StepKind>,
    },
}

/// The `step = "..."` option of the step metrics.
const STEP: OptionDef = OptionDef::text("step");

/// The step kind a step metric keeps (`None`: every step).
fn step(o: &Resolved<'_>) -> Result<Option<StepKind>, MetricSpecError> {
    o.choice(
        "step",
        StepKind::parse,
        "llm, tool, retrieval or embeddings",
    )
}

/// The trajectory metrics.
pub(super) static METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "trajectory_match",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[Need::ExpectedTools],
        options: &[
            OptionDef::choice("mode", "strict"),
            OptionDef::choice("args", "exact"),
        ],
        summary: "agentevals trajectory match: 1 if the agent's tool calls match the expected ones, else 0; mode = \"strict\" (same calls, same order; the default), \"unordered\" (same calls, any order), \"subset\" (no call beyond the expected), \"superset\" (every expected call made); args = \"exact\" (default), \"ignore\", \"subset\", \"superset\"",
        reference: "LangChain agentevals 0.0.8 trajectory match",
        build: |o| {
            let mode = o.choice(
                "mode",
                TrajectoryMode::parse,
                "strict, unordered, subset or superset (agentevals' trajectory match modes)",
            )?;
            let args = o.choice(
                "args",
                ArgsMatch::parse,
                "exact, ignore, subset or superset (agentevals' tool_args_match_mode)",
            )?;
            Ok(MetricKind::Trajectory(TrajectoryMetric::TrajectoryMatch {
                mode: mode.unwrap_or_default(),
                args: args.unwrap_or_default(),
            }))
        },
    },
    MetricInfo {
        name: "steps",
        aliases: &[],
        op: Op::AtMost,
        threshold: Threshold::Required { example: 8.0 },
        range: (0.0, f64::INFINITY),
        pass_fail: false,
        needs: &[],
        options: &[STEP],
        summary: "the steps the agent took (LLM calls, tool calls, retrievals, embeddings; step = \"tool\" counts one kind); a budget, e.g. steps <= 8",
        reference: "",
        build: |o| {
            let step = step(o)?;
            Ok(MetricKind::Trajectory(TrajectoryMetric::Steps { step }))
        },
    },
    MetricInfo {
        name: "repeated_calls",
        aliases: &[],
        op: Op::AtMost,
        threshold: Threshold::Default(1.0),
        range: (0.0, f64::INFINITY),
        pass_fail: false,
        needs: &[],
        options: &[],
        summary: "loop detection: the most times the agent made one tool call (same tool, same arguments), 0 without calls; the default repeated_calls <= 1 allows no call twice",
        reference: "",
        build: |_| Ok(MetricKind::Trajectory(TrajectoryMetric::RepeatedCalls)),
    },
    MetricInfo {
        name: "step_latency_ms",
        aliases: &[],
        op: Op::AtMost,
        threshold: Threshold::Required { example: 2000.0 },
        range: (0.0, f64::INFINITY),
        pass_fail: false,
        needs: &[],
        options: &[STEP],
        summary: "the slowest step's duration, milliseconds, from the agent's spans (step = \"tool\" looks at one kind); e.g. step_latency_ms <= 2000",
        reference: "",
        build: |o| {
            let step = step(o)?;
            Ok(MetricKind::Trajectory(TrajectoryMetric::StepLatency {
                step,
            }))
        },
    },
    MetricInfo {
        name: "step_tokens",
        aliases: &[],
        op: Op::AtMost,
        threshold: Threshold::Required { example: 4000.0 },
        range: (0.0, f64::INFINITY),
        pass_fail: false,
        needs: &[],
        options: &[STEP],
        summary: "the most tokens (in + out) one step used, from the agent's spans (step = \"llm\" looks at one kind); e.g. step_tokens <= 4000",
        reference: "",
        build: |o| {
            let step = step(o)?;
            Ok(MetricKind::Trajectory(TrajectoryMetric::StepTokens {
                step,
            }))
        },
    },
];

/// How `trajectory_match` compares the agent's tool calls with the
/// expected ones (`mode = "..."`), as LangChain agentevals 0.0.8 defines
/// its trajectory match modes (`agentevals/trajectory/{strict,unordered,
/// subset,superset}.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrajectoryMode {
    /// The same calls in the same order, as many.
    #[default]
    Strict,
    /// The same calls, as many of each, in any order.
    Unordered,
    /// No call beyond the expected ones (each expected call covers one).
    Subset,
    /// Every expected call made (each made call covers one).
    Superset,
}

impl TrajectoryMode {
    /// `strict`, `unordered`, `subset` or `superset`.
    pub fn parse(name: &str) -> Option<TrajectoryMode> {
        Some(match name {
            "strict" => TrajectoryMode::Strict,
            "unordered" => TrajectoryMode::Unordered,
            "subset" => TrajectoryMode::Subset,
            "superset" => TrajectoryMode::Superset,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            TrajectoryMode::Strict => "strict",
            TrajectoryMode::Unordered => "unordered",
            TrajectoryMode::Subset => "subset",
            TrajectoryMode::Superset => "superset",
        }
    }
}

/// How `trajectory_match` compares two calls' arguments (`args = "..."`,
/// agentevals' `tool_args_match_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArgsMatch {
    /// Equal arguments.
    #[default]
    Exact,
    /// Arguments not compared.
    Ignore,
    /// The call's arguments are among the expected call's (each key the
    /// call gives, the expected call gives with an equal value).
    Subset,
    /// The call gives every expected argument, with an equal value.
    Superset,
}

impl ArgsMatch {
    /// `exact`, `ignore`, `subset` or `superset`.
    pub fn parse(name: &str) -> Option<ArgsMatch> {
        Some(match name {
            "exact" => ArgsMatch::Exact,
            "ignore" => ArgsMatch::Ignore,
            "subset" => ArgsMatch::Subset,
            "superset" => ArgsMatch::Superset,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            ArgsMatch::Exact => "exact",
            ArgsMatch::Ignore => "ignore",
            ArgsMatch::Subset => "subset",
            ArgsMatch::Superset => "superset",
        }
    }
}

/// What one step of an agent's trajectory was (and what the step metrics'
/// `step = "..."` keeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A call of a language model (GenAI `chat` / `text_completion`,
    /// OpenInference `LLM`).
    Llm,
    /// A tool call (GenAI `execute_tool`, OpenInference `TOOL`, OpenLLMetry
    /// `tool`).
    Tool,
    /// A retrieval (OpenInference `RETRIEVER`, GenAI `retrieval`).
    Retrieval,
    /// An embeddings call (GenAI `embeddings`, OpenInference `EMBEDDING`).
    Embeddings,
}

impl StepKind {
    /// `llm`, `tool`, `retrieval` or `embeddings`.
    pub fn parse(name: &str) -> Option<StepKind> {
        Some(match name {
            "llm" => StepKind::Llm,
            "tool" => StepKind::Tool,
            "retrieval" => StepKind::Retrieval,
            "embeddings" => StepKind::Embeddings,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Llm => "llm",
            StepKind::Tool => "tool",
            StepKind::Retrieval => "retrieval",
            StepKind::Embeddings => "embeddings",
        }
    }
}
