//! The OpenAI chat-completions protocol
//! (<https://platform.openai.com/docs/api-reference/chat/create>): a
//! sample's conversation as a request body, and an answer as an
//! [`AgentReply`]. The transport is [`HttpAgent`](super::HttpAgent)'s; a
//! streamed answer is assembled in [`stream`](super::stream).
//!
//! **Request.** `model`; `messages`: the conversation so far — each user
//! turn, each earlier answer, and the tool calls the agent made (see
//! [`messages`]); `tools`: the sample's definitions, then its dataset's, then
//! the agent's own (by name, the first wins), left out when there are none;
//! the sampling settings that are set (`temperature`, `top_p`,
//! `max_tokens`, `seed`: [`Sampling`]); then every key of the sample's
//! `agent_args` as a top-level parameter (so a dataset can set e.g.
//! `temperature`, `tool_choice` or `response_format` per sample, or `model`
//! for one sample), except `messages`, `tools`, `stream` and
//! `stream_options`, which the run owns; `stream: true` with
//! `stream_options: {"include_usage": true}` when streaming.
//!
//! **Answer.** `choices[0].message.content` (a string, `null`, or text
//! parts), `choices[0].message.tool_calls` (each `function.name` and
//! `function.arguments`, a JSON string — an object is accepted too; a
//! string that is not a JSON object keeps the call with its raw text and
//! the parse error, see [`ToolCall::invalid_arguments`]; the legacy
//! `function_call` is read as one call), `usage.prompt_tokens` /
//! `usage.completion_tokens`, `model`; and, not OpenAI's but read when
//! present, a top-level `context` as the JSON contract has it. An `error`
//! object fails the sample with its message.

use eval_datasets::ToolCall;
use serde_json::{Map, Value, json};

use super::wire::{AgentReply, AgentRequest, Message, read_context};
pub use crate::model::Sampling;
use crate::model::{ReplyError, Usage, one_line};

/// The content of the `tool` message sent after each tool call of an
/// earlier turn: servers such as OpenAI's require one per call id, and this
/// client does not run tools (an agent that ran them kept their results).
pub const TOOL_RESULT_NOT_RECORDED: &str = "(tool result not recorded: the evaluation client replays the conversation without running tools)";

/// Keys of a request the run sets itself; `agent_args` may not.
const OWNED: &[&str] = &["messages", "tools", "stream", "stream_options"];

/// The request body for `request`.
pub(crate) fn request_body(
    request: &AgentRequest<'_>,
    model: &str,
    sampling: &Sampling,
    stream: bool,
) -> Result<Value, String> {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_string()));
    body.insert("messages".into(), Value::Array(messages(request.messages)));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.to_vec()));
    }
    sampling.insert_into(&mut body);
    for (key, value) in request.agent_args {
        if OWNED.contains(&key.as_str()) {
            return Err(format!(
                "agent_args.{key} cannot be sent: the run sets `{key}` itself (from the sample's input and tools, and the stream setting)"
            ));
        }
        body.insert(key.clone(), value.clone());
    }
    if stream {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Value::Object(body))
}

/// The conversation as OpenAI messages. An answer that came with tool
/// calls becomes an assistant message holding the calls (`content: null`),
/// one `tool` message per call (content [`TOOL_RESULT_NOT_RECORDED`]), then
/// the answer's text as an assistant message when it has any. A call
/// without an id gets `call_<message>_<call>`, used by both messages.
pub fn messages(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for (m, message) in messages.iter().enumerate() {
        if message.tool_calls.is_empty() {
            out.push(json!({"role": message.role, "content": message.content}));
            continue;
        }
        let ids: Vec<String> = message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(c, call)| call.id.clone().unwrap_or_else(|| format!("call_{m}_{c}")))
            .collect();
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .zip(&ids)
            .map(|(call, id)| {
                json!({
                    "id": id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        // Arguments that could not be read go back as sent.
                        "arguments": call.invalid_arguments.as_ref().map_or_else(
                            || Value::Object(call.arguments.clone()).to_string(),
                            |bad| bad.raw.clone(),
                        ),
                    },
                })
            })
            .collect();
        out.push(json!({"role": message.role, "content": null, "tool_calls": calls}));
        for id in &ids {
            out.push(
                json!({"role": "tool", "tool_call_id": id, "content": TOOL_RESULT_NOT_RECORDED}),
            );
        }
        if !message.content.is_empty() {
            out.push(json!({"role": message.role, "content": message.content}));
        }
    }
    out
}

/// Reads a whole chat-completions answer.
pub(crate) fn parse_reply(value: &Value) -> Result<AgentReply, ReplyError> {
    let Value::Object(map) = value else {
        return Err(ReplyError::NotChatCompletion {
            found: one_line(&value.to_string(), 80),
        });
    };
    if let Some(error) = map.get("error").filter(|e| !e.is_null()) {
        return Err(ReplyError::Answered {
            error: error_text(error),
        });
    }
    let Some(choice) = map
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return Err(ReplyError::NoChoice {
            keys: map.keys().cloned().collect(),
        });
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err(ReplyError::NoMessage);
    };
    let output = content_text(message.get("content"))
        .map_err(|found| ReplyError::ContentNotText { found })?;
    let mut reply = AgentReply::new(output, Vec::new());
    match message.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (index, call) in calls.iter().enumerate() {
                let function = call.get("function").unwrap_or(&Value::Null);
                let name = function
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or(ReplyError::ToolCallNoName { index })?;
                reply.tool_calls.push(tool_call(
                    name,
                    function.get("arguments"),
                    call.get("id").and_then(Value::as_str),
                )?);
            }
        }
        Some(other) => {
            return Err(ReplyError::ToolCallsNotArray {
                found: one_line(&other.to_string(), 80),
            });
        }
    }
    if reply.tool_calls.is_empty()
        && let Some(function) = message.get("function_call").filter(|f| f.is_object())
        && let Some(name) = function.get("name").and_then(Value::as_str)
    {
        reply
            .tool_calls
            .push(tool_call(name, function.get("arguments"), None)?);
    }
    read_usage(map.get("usage"), &mut reply.usage);
    reply.model = model(map.get("model"));
    reply.response_id = model(map.get("id"));
    if let Some(context) = map.get("context") {
        reply.context = read_context(context)?;
    }
    Ok(reply)
}

/// A message's `content`: a string, `null` (no text), or an array of parts
/// whose `text` is joined; `Err` with what was found otherwise.
pub(crate) fn content_text(content: Option<&Value>) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                p => p.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("")),
        Some(other) => Err(one_line(&other.to_string(), 80)),
    }
}

/// A tool call from its name and `arguments` (a JSON string, as OpenAI
/// sends it, or an object). Arguments that are not a JSON object (broken
/// JSON, as small models write; an array; a number) keep the call, with
/// the raw text and the reason in [`ToolCall::invalid_arguments`]: the
/// name-based metrics score it, the argument metrics count its arguments
/// as matching nothing and say why. (The `Result` is kept for callers; it
/// is always `Ok`.)
pub(crate) fn tool_call(
    name: &str,
    arguments: Option<&Value>,
    id: Option<&str>,
) -> Result<ToolCall, ReplyError> {
    let call = ToolCall::new(name);
    let mut call = match arguments {
        None | Some(Value::Null) => call,
        Some(Value::String(text)) if text.trim().is_empty() => call,
        Some(Value::String(text)) => match crate::config::inner_json(text) {
            Ok(v @ Value::Object(_)) => call.with_arguments(v),
            Ok(other) => call.with_invalid_arguments(
                text.as_str(),
                format!("{}, not an object", json_kind(&other)),
            ),
            Err(e) => call.with_invalid_arguments(text.as_str(), format!("not valid JSON: {e}")),
        },
        Some(v @ Value::Object(_)) => call.with_arguments(v.clone()),
        Some(other) => call.with_invalid_arguments(
            other.to_string(),
            format!("{}, not an object or a JSON string", json_kind(other)),
        ),
    };
    if let Some(id) = id.filter(|i| !i.is_empty()) {
        call = call.with_id(id);
    }
    Ok(call)
}

/// "a JSON array", "a number"... for the reason arguments were not read.
pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Sets `into`'s token counts to what the reply's `usage` object reports
/// (prompt, completion and cached prompt tokens; see [`Reported`](crate::model::Reported)).
pub(crate) fn read_usage(usage: Option<&Value>, into: &mut Usage) {
    let r = crate::model::Reported::of(usage);
    into.prompt_tokens = r.prompt;
    into.completion_tokens = r.completion;
    into.cached_tokens = r.cached;
}

/// A non-empty string: a `model`, an `id`.
pub(crate) fn model(model: Option<&Value>) -> Option<String> {
    model
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
}

/// An `error` value's message, on one line.
pub(crate) fn error_text(error: &Value) -> String {
    let text = match error {
        Value::String(s) => s.clone(),
        e => e
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_string),
    };
    one_line(&crate::secrets::mask(&text), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_with_tool_calls_usage_and_model() {
        let r = parse_reply(&json!({
            "model": "m-1",
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"2 + 3\"}"}},
                {"type": "function", "function": {"name": "lookup", "arguments": ""}},
            ]}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
        }))
        .unwrap();
        assert_eq!(r.output, "");
        assert_eq!(
            r.tool_calls[0].display(),
            r#"calculator(expression="2 + 3")"#
        );
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(r.tool_calls[1].display(), "lookup()");
        assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (12, 7));
        assert_eq!(r.model.as_deref(), Some("m-1"));

        let r = parse_reply(&json!({"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "function_call": {"name": "old", "arguments": "{}"}}}], "context": ["c"]}))
        .unwrap();
        assert_eq!(
            (r.output.as_str(), r.context.as_slice()),
            ("ab", &["c".to_string()][..])
        );
        assert_eq!(r.tool_calls[0].name, "old");
    }

    #[test]
    fn arguments_that_are_not_an_object_keep_the_call() {
        let r = parse_reply(&json!({"choices": [{"message": {"tool_calls": [
            {"id": "c1", "function": {"name": "calculator", "arguments": "{\"x\": "}},
            {"function": {"name": "calc", "arguments": "[1]"}},
            {"function": {"name": "n", "arguments": 5}},
        ]}}]}))
        .unwrap();
        let bad: Vec<(&str, &str, &str)> = r
            .tool_calls
            .iter()
            .map(|c| {
                let b = c.invalid_arguments.as_ref().unwrap();
                (c.name.as_str(), b.raw.as_str(), b.error.as_str())
            })
            .collect();
        assert_eq!(bad[0].0, "calculator");
        assert_eq!(bad[0].1, "{\"x\": ");
        assert!(
            bad[0].2.starts_with("not valid JSON: EOF while parsing"),
            "{}",
            bad[0].2
        );
        assert_eq!(bad[1], ("calc", "[1]", "an array, not an object"));
        assert_eq!(
            bad[2],
            ("n", "5", "a number, not an object or a JSON string")
        );
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("c1"));
        assert!(r.tool_calls[0].arguments.is_empty());
    }

    #[test]
    fn bad_answers_say_what_is_wrong() {
        for (body, want) in [
            (
                json!({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}),
                "tool_calls[0]` has no `function.name`",
            ),
            (
                json!({"choices": []}),
                "expected `choices[0].message`, found keys: choices",
            ),
            (
                json!({"error": {"message": "model `x` not found"}}),
                "the agent answered an error: model `x` not found",
            ),
            (
                json!({"choices": [{"message": {"content": 5}}]}),
                "is not text: 5",
            ),
            (json!([1]), "expected a chat-completions object"),
        ] {
            let e = parse_reply(&body).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
