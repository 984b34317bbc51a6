//! OpenAI evals samples: `input` is a list of chat messages.
//!
//! User messages → input (one turn each), or the system message when there
//! is none; with assistant messages (few-shot examples) only the last user
//! message is asked; the messages are kept as `messages`. An `ideal` list
//! (any answer accepted) → expected = the first, all kept as
//! `accepted_answers`.

use serde_json::Value;

use super::record::take_key;
use super::{Adapter, Input, Records};

/// The OpenAI evals record schema.
pub(crate) struct OpenAiEvals;

impl Adapter for OpenAiEvals {
    fn recognises(&self, input: &Input<'_>) -> bool {
        let Input::Record(r) = input else {
            return false;
        };
        matches!(
            r.fields.iter().find(|(k, _)| k == "input"),
            Some((_, Value::Array(items))) if items.iter().any(|m| m.get("role").is_some())
        )
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            r.fields = openai_messages(std::mem::take(&mut r.fields));
        }
    }
}

fn openai_messages(mut fields: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let Some(Value::Array(messages)) = take_key(&mut fields, "input") else {
        return fields;
    };
    // `content` is text, or a list of parts of which the text ones count.
    let content = |m: &Value| match m.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let text: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    };
    // With assistant messages (few-shot examples), only the last user
    // message is asked; the whole exchange stays in `messages`.
    let few_shot = messages
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    let mut users: Vec<Value> = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter_map(|m| content(m).map(Value::from))
        .collect();
    if few_shot && users.len() > 1 {
        users.drain(..users.len() - 1);
    }
    let input = match users.len() {
        0 => messages
            .iter()
            .filter(|m| {
                m.get("role").and_then(Value::as_str) == Some("system") && m.get("name").is_none()
            })
            .filter_map(content)
            .collect::<Vec<_>>()
            .join("\n"),
        1 => users[0].as_str().unwrap_or_default().to_string(),
        _ => String::new(),
    };
    if users.len() > 1 {
        fields.push(("input".into(), Value::Array(users)));
    } else if !input.is_empty() {
        fields.push(("input".into(), Value::from(input)));
    }
    fields.push(("messages".into(), Value::Array(messages)));
    if let Some(Value::Array(answers)) = fields
        .iter()
        .find(|(k, _)| k == "ideal")
        .map(|(_, v)| v.clone())
    {
        take_key(&mut fields, "ideal");
        if let Some(first) = answers.first() {
            fields.push(("ideal".into(), first.clone()));
        }
        fields.push(("accepted_answers".into(), Value::Array(answers)));
    }
    fields
}
