//! The demo agent's OpenAI-compatible route, `POST /v1/chat/completions`.
//!
//! It answers as an agent service does: it runs the tools it is offered
//! itself and returns, in one message, the final `content` **and** the
//! `tool_calls` it made (`finish_reason: "stop"`), so one call can be
//! scored on both its answer and its tool use. (A bare model would instead
//! stop at the tool calls and wait for `tool` messages; the evaluation
//! client does not run tools.)
//!
//! * request: `model` (default [`MODEL_NAME`](super::MODEL_NAME)),
//!   `messages` (the `user` ones are the conversation; `assistant`,
//!   `system` and `tool` messages are accepted and ignored), `tools`
//!   (definitions; see [`tool_definitions`]), `tool_choice` (`"none"`
//!   calls nothing, `{"type": "function", "function": {"name"}}` only that
//!   tool, anything else lets the agent choose), `stream`,
//!   `stream_options.include_usage`; other parameters (`temperature`, …)
//!   are accepted and change nothing;
//! * tools: offered `calculator`, it is called for a question that is
//!   simple arithmetic (`{"expression": "2 + 3"}`) and its result is the
//!   answer; offered `lookup`, it is called for a question the corpus
//!   answers (`{"query": <the question>}`), and the best document's answer
//!   is the answer. Questions about the conversation are answered without
//!   tools, as are all questions when no tool is offered;
//! * answer: `choices[0].message` with `content` and, when tools were
//!   called, `tool_calls` (ids `call_<n>_<i>`, `arguments` a JSON string);
//!   `usage` (whitespace-separated words: of every message's text for
//!   `prompt_tokens`, of the answer and the calls' arguments for
//!   `completion_tokens`); `model`; and, not OpenAI's, `context` (the
//!   passages retrieved) when there are any;
//! * streamed (`stream: true`): `text/event-stream` chunks — the role; each
//!   tool call's id and name, then its arguments in two pieces; the answer
//!   word by word; the `finish_reason`; with `include_usage`, a last chunk
//!   with `usage` and no choices; then `data: [DONE]`. The stream is written
//!   at once, after the configured latency.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Json, Response};
use serde_json::{Value, json};

use super::agent::{DEFAULT_TOP_K, Found, answer, arithmetic, retrieve_best};
use super::{
    ApiError, AppState, MODEL_NAME, count_tokens, delay, json_object, message_text, user_turns,
};

/// The calculator tool's name.
pub const CALCULATOR: &str = "calculator";
/// The corpus lookup tool's name.
pub const LOOKUP: &str = "lookup";

/// The OpenAI definitions of the demo agent's tools, as a dataset or an
/// agent offers them (`HttpAgent::tools(tool_definitions())`).
pub fn tool_definitions() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {
            "name": CALCULATOR,
            "description": "Evaluates simple arithmetic: two numbers and one of + - * /.",
            "parameters": {"type": "object", "properties": {
                "expression": {"type": "string", "description": "e.g. 2 + 3"}
            }, "required": ["expression"]},
        }}),
        json!({"type": "function", "function": {
            "name": LOOKUP,
            "description": "Finds the document of the agent's corpus that best matches a query.",
            "parameters": {"type": "object", "properties": {
                "query": {"type": "string"}
            }, "required": ["query"]},
        }}),
    ]
}

/// A parsed chat-completions request.
#[derive(Debug, PartialEq)]
struct ChatRequest {
    model: String,
    history: Vec<String>,
    input: String,
    prompt_tokens: u64,
    /// Names of the tools offered and allowed by `tool_choice`.
    tools: Vec<String>,
    stream: bool,
    include_usage: bool,
}

/// A tool the agent called: its name, arguments and what it returned.
#[derive(Debug, Clone, PartialEq)]
struct ToolUse {
    name: &'static str,
    arguments: Value,
    result: String,
}

pub(super) async fn route(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    delay(&state.config).await;
    let request = match chat_request(&body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let (mut reply, found) = answer(&request.history, &request.input, DEFAULT_TOP_K);
    let uses = use_tools(&found, &request.input, &request.tools);
    if let Some(calc) = uses.iter().find(|u| u.name == CALCULATOR) {
        reply.output = calc.result.clone();
    }
    let n = state.completions.fetch_add(1, Ordering::Relaxed) + 1;
    let calls: Vec<Value> = uses
        .iter()
        .enumerate()
        .map(|(i, u)| {
            json!({
                "id": format!("call_{n}_{i}"),
                "type": "function",
                "function": {"name": u.name, "arguments": u.arguments.to_string()},
            })
        })
        .collect();
    let completion_tokens = count_tokens(&reply.output)
        + uses
            .iter()
            .map(|u| count_tokens(&u.arguments.to_string()))
            .sum::<u64>();
    let usage = json!({
        "prompt_tokens": request.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": request.prompt_tokens + completion_tokens,
    });
    let id = format!("chatcmpl-demo-{n}");
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if request.stream {
        let text = stream_text(&id, created, &request, &reply.output, &calls, &usage);
        return ([(header::CONTENT_TYPE, "text/event-stream")], text).into_response();
    }
    let mut message = json!({ "role": "assistant", "content": reply.output });
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let mut body = json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": request.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": usage,
    });
    if !reply.context.is_empty() {
        body["context"] = json!(reply.context);
    }
    Json(body).into_response()
}

/// The tools called for a question answered as `found`, among `offered`.
fn use_tools(found: &Found, input: &str, offered: &[String]) -> Vec<ToolUse> {
    let offered = |name: &str| offered.iter().any(|o| o == name);
    match found {
        Found::Arithmetic(expression) if offered(CALCULATOR) => vec![ToolUse {
            name: CALCULATOR,
            arguments: json!({ "expression": expression }),
            result: arithmetic(expression).unwrap_or_default(),
        }],
        Found::Corpus(_) if offered(LOOKUP) => vec![ToolUse {
            name: LOOKUP,
            arguments: json!({ "query": input }),
            result: retrieve_best(input).map_or_else(
                || "No document matches.".to_string(),
                |d| d.text.to_string(),
            ),
        }],
        _ => Vec::new(),
    }
}

/// The answer as server-sent events (see the module docs).
fn stream_text(
    id: &str,
    created: u64,
    request: &ChatRequest,
    output: &str,
    calls: &[Value],
    usage: &Value,
) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": request.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for (i, call) in calls.iter().enumerate() {
        let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
        // Split on a character boundary, near the middle.
        let mut mid = arguments.len() / 2;
        while !arguments.is_char_boundary(mid) {
            mid -= 1;
        }
        chunks.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in [&arguments[..mid], &arguments[mid..]] {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    for word in output.split_inclusive(' ') {
        chunks.push(chunk(json!({ "content": word }), Value::Null));
    }
    chunks.push(chunk(json!({}), json!("stop")));
    if request.include_usage {
        chunks.push(json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": request.model, "choices": [], "usage": usage,
        }));
    }
    let mut text = String::new();
    for c in chunks {
        text.push_str("data: ");
        text.push_str(&c.to_string());
        text.push_str("\n\n");
    }
    text.push_str("data: [DONE]\n\n");
    text
}

fn chat_request(body: &[u8]) -> Result<ChatRequest, ApiError> {
    let request = json_object(body)?;
    let model = match request.get("model") {
        None | Some(Value::Null) => MODEL_NAME.to_string(),
        Some(Value::String(m)) => m.clone(),
        Some(_) => return Err(ApiError::bad_request("`model` must be a string")),
    };
    let stream = match request.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad_request("`stream` must be true or false")),
    };
    let include_usage = request
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let messages = match request.get("messages") {
        Some(m @ Value::Array(items)) if !items.is_empty() => m,
        _ => {
            return Err(ApiError::bad_request(
                "`messages` must be a non-empty array of {\"role\", \"content\"} objects",
            ));
        }
    };
    let prompt_tokens = messages
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| message_text(m.get("content")?).ok().flatten())
        .map(|t| count_tokens(&t))
        .sum();
    let mut history = user_turns(messages)?;
    let input = history
        .pop()
        .ok_or_else(|| ApiError::bad_request("`messages` has no user message"))?;
    let mut tools = offered_tools(request.get("tools"))?;
    match request.get("tool_choice") {
        Some(Value::String(c)) if c == "none" => tools.clear(),
        Some(choice @ Value::Object(_)) => {
            let only = choice["function"]["name"].as_str().unwrap_or_default();
            tools.retain(|t| t == only);
        }
        _ => {}
    }
    Ok(ChatRequest {
        model,
        history,
        input,
        prompt_tokens,
        tools,
        stream,
        include_usage,
    })
}

/// The names of the tools in a request's `tools`.
fn offered_tools(tools: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let items = match tools {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::bad_request(
                "`tools` must be an array of {\"type\": \"function\", \"function\": {\"name\", ...}} objects",
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.get("function")
                .unwrap_or(t)
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    ApiError::bad_request(format!("`tools[{i}]` has no `function.name` string"))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_called_when_offered_and_the_question_fits() {
        let all = vec![CALCULATOR.to_string(), LOOKUP.to_string()];
        let (_, found) = answer::<&str>(&[], "What is 12 * 7?", 2);
        let uses = use_tools(&found, "What is 12 * 7?", &all);
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].name, CALCULATOR);
        assert_eq!(uses[0].arguments, json!({"expression": "12 * 7"}));
        assert_eq!(uses[0].result, "84");
        let q = "What is the capital of France?";
        let (_, found) = answer::<&str>(&[], q, 2);
        let uses = use_tools(&found, q, &all);
        assert_eq!(
            (uses[0].name, &uses[0].arguments),
            (LOOKUP, &json!({"query": q}))
        );
        assert!(uses[0].result.contains("Paris"), "{}", uses[0].result);
        // Not offered, or not a question a tool answers: no call.
        assert!(use_tools(&found, q, &[CALCULATOR.to_string()]).is_empty());
        let (_, found) = answer(&["My name is Ada."], "What's my name?", 2);
        assert!(use_tools(&found, "What's my name?", &all).is_empty());
    }

    #[test]
    fn definitions_are_valid_openai_tools() {
        let defs = eval_runtime::tool::definitions(&Value::from(tool_definitions())).unwrap();
        let names: Vec<&str> = defs
            .iter()
            .filter_map(|d| d["function"]["name"].as_str())
            .collect();
        assert_eq!(names, [CALCULATOR, LOOKUP]);
    }
}
