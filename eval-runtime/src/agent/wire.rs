//! What goes to an agent and comes back, before and after JSON: the
//! conversation's messages, one request, one reply, and the reader of a
//! reply's `context` that both protocols share.

use std::time::Duration;

use eval_datasets::ToolCall;
use serde::Serialize;
use serde_json::{Map, Value};

#[cfg(feature = "http")]
use crate::model::ReplyError;
use crate::model::Usage;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Message {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The text.
    pub content: String,
    /// The tool calls the agent made in this answer (assistant messages).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

impl Message {
    /// A user turn.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: "user",
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }

    /// An answer of the agent, with the tool calls it made.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            role: "assistant",
            content: content.into(),
            tool_calls,
        }
    }
}

/// One request to the agent, before it is turned into JSON.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct AgentRequest<'a> {
    /// The current user turn.
    pub input: &'a str,
    /// The conversation so far, ending with the current user turn.
    pub messages: &'a [Message],
    /// The sample's `agent_args`.
    pub agent_args: &'a Map<String, Value>,
    /// Tool definitions offered (the sample's, its dataset's, the agent's).
    pub tools: &'a [Value],
}

/// What one agent call returned.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AgentReply {
    /// The answer text.
    pub output: String,
    /// Retrieved context, if any.
    pub context: Vec<String>,
    /// The tool calls the agent made.
    pub tool_calls: Vec<ToolCall>,
    /// Calls made (retries included) and the tokens the agent reported.
    pub usage: Usage,
    /// Time to the first token, when the answer was streamed.
    pub ttft: Option<Duration>,
    /// The model that answered, when the agent said.
    pub model: Option<String>,
    /// The id it gave its answer, when it did (OpenAI `id`).
    pub response_id: Option<String>,
}

impl AgentReply {
    /// A reply with output and context.
    pub fn new(output: impl Into<String>, context: Vec<String>) -> Self {
        AgentReply {
            output: output.into(),
            context,
            ..AgentReply::default()
        }
    }
}

/// A `context` value: an array of strings or of objects with `text` (or
/// `content`), a single string, or `null`.
#[cfg(feature = "http")]
pub(crate) fn read_context(value: &Value) -> std::result::Result<Vec<String>, ReplyError> {
    use crate::model::one_line;
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                Value::Object(o) => o
                    .get("text")
                    .or_else(|| o.get("content"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or(ReplyError::ContextItemNoText),
                other => Err(ReplyError::ContextItem {
                    found: one_line(&other.to_string(), 60),
                }),
            })
            .collect(),
        Value::String(s) => Ok(vec![s.clone()]),
        other => Err(ReplyError::Context {
            found: one_line(&other.to_string(), 60),
        }),
    }
}
