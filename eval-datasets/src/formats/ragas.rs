//! ragas multi-turn samples (`MultiTurnSample`): `user_input` is a list of
//! messages, each with a `type` of `human`, `ai` or `tool`
//! (`ragas.messages`).
//!
//! The human messages' `content` are the user turns → input (one turn: a
//! single prompt); the whole list is kept unchanged as `messages` (in
//! `extra`, as OpenAI evals' chat messages are). The `tool_calls` of its AI
//! messages are the calls an agent made when the conversation was recorded,
//! not what is expected: like deepeval's `tools_called` they are kept, not
//! scored; the tool metrics score the calls the agent under test makes, and
//! compare them with `reference_tool_calls` (→ expected tools).

use serde_json::Value;

use super::record::take_key;
use super::{Adapter, Input, Records};

/// The ragas multi-turn record schema.
pub(crate) struct RagasMessages;

/// The message types of `ragas.messages`.
const TYPES: &[&str] = &["human", "ai", "tool"];

impl Adapter for RagasMessages {
    fn recognises(&self, input: &Input<'_>) -> bool {
        let Input::Record(r) = input else {
            return false;
        };
        matches!(
            r.fields.iter().find(|(k, _)| k.trim() == "user_input"),
            Some((_, Value::Array(items))) if !items.is_empty() && items.iter().all(is_message)
        )
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            r.fields = ragas_messages(std::mem::take(&mut r.fields));
        }
    }
}

fn is_message(m: &Value) -> bool {
    m.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| TYPES.contains(&t))
}

fn ragas_messages(mut fields: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let Some(Value::Array(messages)) = take_key(&mut fields, "user_input") else {
        return fields;
    };
    let humans: Option<Vec<Value>> = messages
        .iter()
        .filter(|m| m.get("type").and_then(Value::as_str) == Some("human"))
        .map(|m| m.get("content").filter(|c| c.is_string()).cloned())
        .collect();
    let humans = humans.unwrap_or_default();
    match humans.len() {
        // No user turn to ask (or one that is not text): the list stays
        // where it was, and loading says what `input` must be.
        0 => {
            fields.push(("user_input".into(), Value::Array(messages)));
            return fields;
        }
        1 => fields.push(("input".into(), humans[0].clone())),
        _ => fields.push(("input".into(), Value::Array(humans))),
    }
    let key = if fields.iter().any(|(k, _)| k == "messages") {
        "ragas_messages"
    } else {
        "messages"
    };
    fields.push((key.into(), Value::Array(messages)));
    fields
}
