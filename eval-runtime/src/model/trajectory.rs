//! An agent's trajectory: the steps it took to answer one sample (LLM calls,
//! tool calls, retrievals), in the order they started. They come from the
//! OpenTelemetry spans the agent reported under the trace the sample's
//! requests carried (see the guide's "Traces" chapter), or, for an agent that
//! reports no spans, from the tool calls in its answers.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use eval_datasets::metric::StepKind;

/// One step of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Step {
    /// What it was.
    pub kind: StepKind,
    /// The tool's name for a tool call; else the model, or the span's name.
    pub name: String,
    /// A tool call's arguments (a JSON object).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
    /// A tool call's id, when the span gave one (`gen_ai.tool.call.id`,
    /// OpenInference `tool.id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// A tool call's result, as the agent reported it (cut to
    /// [`KEPT_CHARS`](super::KEPT_CHARS) characters in a results file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The 0-based user turn it was taken in.
    #[serde(default)]
    pub turn: usize,
    /// When it started, milliseconds after the trajectory's first step
    /// started (the agent's clock).
    #[serde(default)]
    pub start_ms: f64,
    /// How long it took, milliseconds (`None` when it came from an answer,
    /// not a span).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Tokens in (prompt), when the step said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens out (completion), when the step said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The model an LLM step called, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The step's error, when its span's status said it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The span it came from (16 hex digits; absent for a step from an
    /// answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
}

impl Step {
    /// A step of `kind` named `name`, taken in turn 0 at time 0.
    pub fn new(kind: StepKind, name: impl Into<String>) -> Self {
        Step {
            kind,
            name: name.into(),
            arguments: Map::new(),
            call_id: None,
            result: None,
            turn: 0,
            start_ms: 0.0,
            duration_ms: None,
            input_tokens: None,
            output_tokens: None,
            model: None,
            error: None,
            span_id: None,
        }
    }

    /// Sets a tool call's arguments: a JSON object (anything else is kept
    /// under `"value"`, as [`ToolCall::with_arguments`] does).
    ///
    /// [`ToolCall::with_arguments`]: eval_datasets::ToolCall::with_arguments
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_string(), other)]),
        };
        self
    }

    /// Sets when it started (after the first step) and how long it took.
    pub fn with_timing(mut self, start: Duration, duration: Duration) -> Self {
        self.start_ms = start.as_secs_f64() * 1000.0;
        self.duration_ms = Some(duration.as_secs_f64() * 1000.0);
        self
    }

    /// Sets the tokens in and out.
    pub fn with_tokens(mut self, input: u64, output: u64) -> Self {
        self.input_tokens = Some(input);
        self.output_tokens = Some(output);
        self
    }

    /// Sets the turn it was taken in.
    pub fn in_turn(mut self, turn: usize) -> Self {
        self.turn = turn;
        self
    }

    /// Its tokens, in and out, when it said either.
    pub fn tokens(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0).saturating_add(o.unwrap_or(0))),
        }
    }

    /// The tool call it was, for a tool step.
    pub fn tool_call(&self) -> Option<eval_datasets::ToolCall> {
        (self.kind == StepKind::Tool).then(|| {
            let mut call = eval_datasets::ToolCall::new(self.name.clone())
                .with_arguments(Value::Object(self.arguments.clone()))
                .in_turn(self.turn);
            call.id = self.call_id.clone();
            call
        })
    }
}

/// One request to the agent as a trace sees it: the trace it started, the
/// span it stands for, and when it was sent and answered (an exported
/// evaluation exports that span, and links to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AgentSpan {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) start: std::time::SystemTime,
    pub(crate) end: std::time::SystemTime,
}

/// Where a trajectory came from, and what to know about it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Trajectory {
    /// The steps, in the order they started.
    pub steps: Vec<Step>,
    /// The trace each turn's request carried (32 hex digits), in turn order:
    /// where the agent's spans are in its own tracing back end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
    /// `spans` (collected from the agent's spans) or `answer` (built from
    /// the tool calls in its answers).
    pub source: TrajectorySource,
    /// What was incomplete: spans that did not arrive in time, steps
    /// beyond the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The agent's trace was not complete when the wait ended (see
    /// [`note`](Self::note)): the trajectory metrics do not score it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

/// Where a [`Trajectory`] came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TrajectorySource {
    /// The agent's OpenTelemetry spans.
    Spans,
    /// The tool calls in the agent's answers (it reported no spans).
    #[default]
    Answer,
}

impl Trajectory {
    /// A trajectory of the tool calls in an answer: one tool step each.
    #[doc(hidden)]
    pub fn from_tool_calls(calls: &[eval_datasets::ToolCall]) -> Self {
        Trajectory {
            steps: calls
                .iter()
                .map(|c| {
                    let mut step = Step::new(StepKind::Tool, c.name.clone()).in_turn(c.turn);
                    step.arguments = c.arguments.clone();
                    step.call_id = c.id.clone();
                    step
                })
                .collect(),
            ..Trajectory::default()
        }
    }

    /// Its tool calls, in order.
    pub fn tool_calls(&self) -> Vec<eval_datasets::ToolCall> {
        self.steps.iter().filter_map(Step::tool_call).collect()
    }
}
