//! Anthropic's Messages API (`POST /v1/messages`, version `2023-06-01`),
//! translated from and to OpenAI chat completions. The wire format is the
//! one the official SDK sends and reads (anthropic-python 0.75.0:
//! `_client.py` sends `anthropic-version: 2023-06-01` and `X-Api-Key`;
//! `types/message.py`, `usage.py`, `stop_reason.py`, `tool_param.py`,
//! `tool_use_block.py`, `tool_result_block_param.py`,
//! `shared/error_response.py`; a 529 is its `OverloadedError`).
//!
//! **Request.** `system` messages become the top-level `system`, as text
//! blocks, the last one marked `cache_control: {"type": "ephemeral"}` so
//! Anthropic caches the prompt's prefix (tools and system) across requests;
//! a user message sent as two or more text parts gets the mark on its first
//! part too (the judge's shared prefix). `max_tokens` is required: the
//! request's (`max_tokens`, else `max_completion_tokens`), else
//! [`DEFAULT_MAX_TOKENS`]. `temperature` (capped at 1, Anthropic's
//! maximum), `top_p`, `stop` (as `stop_sequences`), `tools` (as `name`,
//! `description`, `input_schema`), `tool_choice` (`auto`, `required` →
//! `any`, `none`, a named function → `tool`) are translated; assistant
//! `tool_calls` become `tool_use` blocks and `tool` messages `tool_result`
//! blocks of a user message. Anthropic has no `response_format`: a JSON
//! schema asked for becomes an instruction in the system prompt ("answer
//! with one JSON object matching this schema"), `json_object` the same
//! without a schema; the judge's strict reading still checks the answer.
//! `seed`, `n`, penalties, `logprobs` and `stream` have no counterpart and
//! are not sent; `top_k`, `metadata`, `stop_sequences`, `thinking`,
//! `service_tier` (Anthropic's own, from an agent's `agent_args`) are.
//!
//! **Answer.** The `text` blocks of `content`, joined, are the message;
//! `tool_use` blocks its tool calls (`input` as the `arguments` string);
//! `stop_reason` `end_turn` / `stop_sequence` → `finish_reason` `stop`,
//! `max_tokens` → `length`, `tool_use` → `tool_calls`, `refusal` →
//! `content_filter`; `usage` → `prompt_tokens` (`input_tokens` plus the
//! cache's reads and writes, which Anthropic counts apart),
//! `completion_tokens` (`output_tokens`), `prompt_tokens_details.cached_tokens`
//! (`cache_read_input_tokens`); `cache_creation_input_tokens` is kept
//! beside them.

use serde_json::{Map, Value, json};

/// The API version sent (`anthropic-version`).
pub(crate) const VERSION: &str = "2023-06-01";

/// `max_tokens` when the request sets none (Anthropic requires one).
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 4096;

/// Keys of Anthropic's own sent as they are.
const NATIVE: &[&str] = &[
    "top_k",
    "metadata",
    "stop_sequences",
    "thinking",
    "service_tier",
];

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The text of an OpenAI message's `content` (a string or text parts).
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.as_str().or_else(|| p.get("text").and_then(Value::as_str)))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A Messages API body for an OpenAI chat-completions `body`.
pub(crate) fn request(body: &Value) -> Result<Value, String> {
    let Some(map) = body.as_object() else {
        return Err("the request is not a JSON object".into());
    };
    let mut out = Map::new();
    out.insert(
        "model".into(),
        map.get("model").cloned().unwrap_or(Value::Null),
    );
    let mut system: Vec<Value> = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    let empty = Vec::new();
    for m in map
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
    {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let (role, blocks) = match role {
            "system" | "developer" => {
                let text = text_of(m.get("content"));
                if !text.is_empty() {
                    system.push(json!({"type": "text", "text": text}));
                }
                continue;
            }
            "tool" => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": m.get("tool_call_id").cloned().unwrap_or(Value::Null),
                    "content": text_of(m.get("content")),
                })],
            ),
            "assistant" => ("assistant", assistant_blocks(m)),
            _ => ("user", user_blocks(m.get("content"))),
        };
        if blocks.is_empty() {
            continue;
        }
        // Anthropic's turns alternate: a tool result and the next user
        // turn go in one message.
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => messages.push(json!({"role": role, "content": blocks})),
        }
    }
    if let Some(instruction) = map.get("response_format").and_then(format_instruction) {
        system.push(json!({"type": "text", "text": instruction}));
    }
    if let Some(last) = system.last_mut() {
        last["cache_control"] = ephemeral();
        out.insert("system".into(), Value::Array(system));
    }
    out.insert("messages".into(), Value::Array(messages));
    let max_tokens = map
        .get("max_tokens")
        .or_else(|| map.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    out.insert("max_tokens".into(), max_tokens.into());
    if let Some(t) = map.get("temperature").and_then(Value::as_f64) {
        out.insert("temperature".into(), json!(t.clamp(0.0, 1.0)));
    }
    if let Some(p) = map.get("top_p").filter(|p| p.is_number()) {
        out.insert("top_p".into(), p.clone());
    }
    match map.get("stop") {
        Some(Value::String(s)) => {
            out.insert("stop_sequences".into(), json!([s]));
        }
        Some(Value::Array(a)) => {
            out.insert("stop_sequences".into(), Value::Array(a.clone()));
        }
        _ => {}
    }
    if let Some(tools) = map.get("tools").and_then(Value::as_array) {
        out.insert(
            "tools".into(),
            Value::Array(tools.iter().map(tool).collect::<Result<_, _>>()?),
        );
    }
    if let Some(choice) = map.get("tool_choice").and_then(tool_choice) {
        out.insert("tool_choice".into(), choice);
    }
    for key in NATIVE {
        if let Some(v) = map.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

/// A user message's blocks: its text, or its text parts (the first of two
/// or more marked for the cache: the shared prefix).
fn user_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::Array(parts)) => {
            let mut blocks: Vec<Value> = parts
                .iter()
                .filter_map(|p| p.as_str().or_else(|| p.get("text").and_then(Value::as_str)))
                .filter(|t| !t.is_empty())
                .map(|t| json!({"type": "text", "text": t}))
                .collect();
            if blocks.len() >= 2 {
                blocks[0]["cache_control"] = ephemeral();
            }
            blocks
        }
        other => {
            let text = text_of(other);
            if text.is_empty() {
                Vec::new()
            } else {
                vec![json!({"type": "text", "text": text})]
            }
        }
    }
}

/// An assistant message's blocks: its text, then a `tool_use` per call.
fn assistant_blocks(m: &Value) -> Vec<Value> {
    let mut blocks = Vec::new();
    let text = text_of(m.get("content"));
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for (i, call) in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = call.get("function").unwrap_or(&Value::Null);
        let input = match function.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({})),
            Some(v @ Value::Object(_)) => v.clone(),
            _ => json!({}),
        };
        blocks.push(json!({
            "type": "tool_use",
            "id": call.get("id").and_then(Value::as_str).map_or_else(|| format!("toolu_{i}"), str::to_string),
            "name": function.get("name").cloned().unwrap_or(Value::Null),
            "input": input,
        }));
    }
    blocks
}

/// An OpenAI tool definition as Anthropic's.
fn tool(t: &Value) -> Result<Value, String> {
    let f = t.get("function").unwrap_or(t);
    let name = f
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| "a tool definition has no `name`".to_string())?;
    let mut out = json!({
        "name": name,
        "input_schema": f.get("parameters").filter(|p| p.is_object()).cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    });
    if let Some(d) = f.get("description").and_then(Value::as_str) {
        out["description"] = json!(d);
    }
    Ok(out)
}

fn tool_choice(choice: &Value) -> Option<Value> {
    match choice {
        Value::String(s) => match s.as_str() {
            "auto" => Some(json!({"type": "auto"})),
            "required" => Some(json!({"type": "any"})),
            "none" => Some(json!({"type": "none"})),
            _ => None,
        },
        Value::Object(_) => {
            let name = choice.pointer("/function/name").and_then(Value::as_str)?;
            Some(json!({"type": "tool", "name": name}))
        }
        _ => None,
    }
}

/// What `response_format` asks, as an instruction (Anthropic has no such
/// parameter).
fn format_instruction(format: &Value) -> Option<String> {
    match format.get("type").and_then(Value::as_str)? {
        "json_schema" => {
            let schema = format.pointer("/json_schema/schema")?;
            Some(format!(
                "Answer with one JSON object only, no other text, matching this JSON schema: {schema}"
            ))
        }
        "json_object" => Some(match format.get("schema") {
            Some(schema) => format!(
                "Answer with one JSON object only, no other text, matching this JSON schema: {schema}"
            ),
            None => "Answer with one JSON object only, no other text.".to_string(),
        }),
        _ => None,
    }
}

/// A Messages API answer as an OpenAI chat completion; `Err` with what was
/// found when it is not one.
pub(crate) fn to_chat(value: &Value) -> Result<Value, String> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(format!(
            "Anthropic answered an error: {}",
            super::error_reason(value.to_string().as_bytes())
        ));
    }
    let Some(blocks) = value.get("content").and_then(Value::as_array) else {
        return Err(format!(
            "not an Anthropic message (no `content` array): {}",
            crate::model::one_line(&value.to_string(), 120)
        ));
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => calls.push(json!({
                "id": block.get("id").cloned().unwrap_or(Value::Null),
                "type": "function",
                "function": {
                    "name": block.get("name").cloned().unwrap_or(Value::Null),
                    "arguments": block.get("input").cloned().unwrap_or_else(|| json!({})).to_string(),
                },
            })),
            // Thinking and server-tool blocks are not the answer.
            _ => {}
        }
    }
    let stop = value.get("stop_reason").and_then(Value::as_str);
    let finish = match stop {
        Some("end_turn" | "stop_sequence") => Value::from("stop"),
        Some("max_tokens") => Value::from("length"),
        Some("tool_use") => Value::from("tool_calls"),
        Some("refusal") => Value::from("content_filter"),
        Some(other) => Value::from(other),
        None => Value::Null,
    };
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let usage = value.get("usage").unwrap_or(&Value::Null);
    let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (input, read, written, output) = (
        count("input_tokens"),
        count("cache_read_input_tokens"),
        count("cache_creation_input_tokens"),
        count("output_tokens"),
    );
    let prompt = input.saturating_add(read).saturating_add(written);
    Ok(json!({
        "id": value.get("id").cloned().unwrap_or(Value::Null),
        "object": "chat.completion",
        "model": value.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt.saturating_add(output),
            "prompt_tokens_details": {"cached_tokens": read},
            "cache_creation_input_tokens": written,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_request_becomes_a_messages_request() {
        let body = json!({
            "model": "claude-haiku-4-5",
            "messages": [
                {"role": "system", "content": "Judge it."},
                {"role": "user", "content": [{"type": "text", "text": "shared context"}, {"type": "text", "text": "question"}]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "result"},
                {"role": "user", "content": "again"},
            ],
            "temperature": 1.5, "seed": 42, "stop": "END",
            "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}},
            "tools": [{"type": "function", "function": {"name": "lookup", "description": "Look up", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
            "tool_choice": "required",
        });
        let r = request(&body).unwrap();
        assert_eq!(r["model"], "claude-haiku-4-5");
        assert_eq!(r["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(r["temperature"], 1.0);
        assert!(r.get("seed").is_none() && r.get("response_format").is_none());
        assert_eq!(r["stop_sequences"], json!(["END"]));
        assert_eq!(r["system"][0], json!({"type": "text", "text": "Judge it."}));
        assert!(
            r["system"][1]["text"]
                .as_str()
                .unwrap()
                .contains(r#"JSON schema: {"type":"object"}"#)
        );
        assert_eq!(
            r["system"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        let m = r["messages"].as_array().unwrap();
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!(m[0]["content"][0]["cache_control"]["type"], "ephemeral");
        assert!(m[0]["content"][1].get("cache_control").is_none());
        assert_eq!(
            m[1]["content"][0],
            json!({"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"q": "x"}})
        );
        assert_eq!(m[2]["role"], "user");
        assert_eq!(m[2]["content"][0]["type"], "tool_result");
        assert_eq!(m[2]["content"][1]["text"], "again");
        assert_eq!(
            r["tools"][0]["input_schema"]["properties"]["q"]["type"],
            "string"
        );
        assert_eq!(r["tool_choice"], json!({"type": "any"}));
        let r = request(&json!({"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]})).unwrap();
        assert_eq!(r["max_tokens"], 64);
        assert!(r.get("system").is_none());
    }

    #[test]
    fn a_message_becomes_a_chat_completion() {
        let c = to_chat(&json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 50, "output_tokens": 7, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 100},
        }))
        .unwrap();
        assert_eq!(c["choices"][0]["message"]["content"], "Let me look.");
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(
            c["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            r#"{"q":"x"}"#
        );
        assert_eq!(c["usage"]["prompt_tokens"], 2150);
        assert_eq!(c["usage"]["prompt_tokens_details"]["cached_tokens"], 2000);
        for (stop, want) in [
            ("max_tokens", "length"),
            ("end_turn", "stop"),
            ("stop_sequence", "stop"),
            ("refusal", "content_filter"),
        ] {
            let c = to_chat(&json!({"content": [], "stop_reason": stop})).unwrap();
            assert_eq!(c["choices"][0]["finish_reason"], want);
        }
        let e = to_chat(&json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}})).unwrap_err();
        assert!(
            e.contains("invalid_request_error: max_tokens: Field required"),
            "{e}"
        );
        assert!(
            to_chat(&json!({"choices": []}))
                .unwrap_err()
                .contains("no `content` array")
        );
    }
}
