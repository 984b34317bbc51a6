//! Any HTTP agent, mapped: the request built from a template, method,
//! query and headers, the answer read by paths ([`HttpMapping`], from the
//! `--agent-*` flags, a manifest's `spec.evaluation.agent` or the
//! `EVAL_AGENT_*` variables). A `text/plain` answer's whole body is the
//! output. Every error names the setting, the path and what the body held.

use eval_datasets::agent::{Method, Named, ResponsePath, TemplateVars};
use eval_datasets::{HttpMapping, Protocol};
use serde_json::Value;

use super::wire::{AgentReply, AgentRequest, read_context};
use crate::model::one_line;

/// Whether the mapping can be used with `protocol` (and an API key).
pub(super) fn check(http: &HttpMapping, protocol: Protocol, api_key: bool) -> Result<(), String> {
    if protocol == Protocol::OpenAi {
        let json_only = http
            .request
            .as_ref()
            .map(|r| r.setting.as_str())
            .or(http.paths().next().map(|p| p.setting.as_str()))
            .or(http
                .method
                .as_ref()
                .filter(|m| m.value != Method::Post)
                .map(|m| m.setting.as_str()));
        if let Some(setting) = json_only {
            return Err(format!(
                "{setting} maps the request or answer of an agent that does not speak OpenAI chat completions, but the protocol is openai: remove it, or use the json protocol"
            ));
        }
    }
    if let (Some(method), Some(request)) = (&http.method, &http.request)
        && method.value == Method::Get
    {
        return Err(format!(
            "{} is GET, which sends no body, and {} gives one: put its fields in the query (--agent-query, EVAL_AGENT_QUERY, agent.query) or use POST",
            method.setting, request.setting
        ));
    }
    if api_key
        && let Some(h) = http
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("authorization"))
    {
        return Err(format!(
            "{} sets an Authorization header and EVAL_AGENT_API_KEY is set too: use one",
            h.setting
        ));
    }
    Ok(())
}

/// The values of the placeholders for `request`.
fn with_vars<T>(request: &AgentRequest<'_>, f: impl FnOnce(&TemplateVars<'_>) -> T) -> T {
    let messages = serde_json::to_value(request.messages).unwrap_or(Value::Null);
    let tools = Value::Array(request.tools.to_vec());
    f(&TemplateVars {
        input: request.input,
        messages: &messages,
        agent_args: request.agent_args,
        tools: &tools,
    })
}

/// The body the template gives for `request` (`None`: no template).
pub(super) fn body(
    http: &HttpMapping,
    request: &AgentRequest<'_>,
) -> Option<Result<Value, String>> {
    let template = http.request.as_ref()?;
    Some(with_vars(request, |vars| {
        template
            .value
            .render(vars)
            .map_err(|e| format!("{}: {e}", template.setting))
    }))
}

/// The method of the requests.
pub(super) fn method(http: &HttpMapping) -> reqwest::Method {
    match http.method.as_ref().map_or(Method::Post, |m| m.value) {
        Method::Post => reqwest::Method::POST,
        Method::Get => reqwest::Method::GET,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
    }
}

/// `url` with the mapping's query parameters added for `request`.
pub(super) fn url(
    url: &reqwest::Url,
    http: &HttpMapping,
    request: &AgentRequest<'_>,
) -> Result<reqwest::Url, String> {
    let Some(query) = &http.query else {
        return Ok(url.clone());
    };
    let pairs = with_vars(request, |vars| {
        query
            .value
            .iter()
            .map(|(name, value)| {
                value
                    .render_text(vars)
                    .map(|v| (name.clone(), v))
                    .map_err(|e| format!("{} `{name}`: {e}", query.setting))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    let mut url = url.clone();
    url.query_pairs_mut().extend_pairs(pairs);
    Ok(url)
}

/// Whether the answer says it is text (`text/plain`, `text/markdown`...;
/// not a stream).
pub(super) fn is_plain_text(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| {
            let t = t.trim().to_ascii_lowercase();
            t.starts_with("text/") && t != "text/event-stream"
        })
}

/// The reply of a `text/plain` answer that is not JSON: its whole body
/// (surrounding blanks trimmed) is the output. A path set for a JSON
/// answer cannot read it: that is said.
pub(super) fn plain_reply(http: &HttpMapping, text: &str) -> Result<AgentReply, String> {
    if let Some(p) = http.paths().next() {
        return Err(format!(
            "{} (`{}`): the agent answered text/plain, not JSON; body: {}",
            p.setting,
            p.value,
            shown(text)
        ));
    }
    Ok(AgentReply::new(text.trim(), Vec::new()))
}

/// The reply read from a JSON answer by the mapping's paths; what they
/// leave out is read as the JSON contract reads it (`output`, `context`),
/// (`contract`: [`default_reply`](super::default_reply)), and a body that is
/// a JSON string is the output.
pub(super) fn read(
    http: &HttpMapping,
    body: &Value,
    contract: fn(&Value) -> Result<AgentReply, crate::model::ReplyError>,
) -> Result<AgentReply, String> {
    let output = match &http.output {
        Some(p) => output_at(p, body)?,
        None => match body {
            Value::String(s) => s.clone(),
            _ => contract(body).map_err(|e| e.to_string())?.output,
        },
    };
    let context = match &http.context {
        Some(p) => context_at(p, body)?,
        None => match body.get("context") {
            Some(c) => read_context(c).map_err(|e| e.to_string())?,
            None => Vec::new(),
        },
    };
    let mut reply = AgentReply::new(output, context);
    if let Some(p) = &http.tool_calls {
        reply.tool_calls = tool_calls_at(p, body)?;
    }
    if let Some(p) = &http.prompt_tokens {
        reply.usage.prompt_tokens = tokens_at(p, body)?;
    }
    if let Some(p) = &http.completion_tokens {
        reply.usage.completion_tokens = tokens_at(p, body)?;
    }
    Ok(reply)
}

/// The JSON contract's error about `body`; when it has no `output`, with
/// the setting that maps one and the first text in the body as an example.
pub(super) fn contract_error(e: &crate::model::ReplyError, body: &Value) -> String {
    if !matches!(e, crate::model::ReplyError::NoOutput { .. }) {
        return e.to_string();
    }
    let example = first_text(body, String::new(), 0).unwrap_or_else(|| "data.answer".into());
    format!(
        "{e}; for an agent that answers in its own shape, say where the answer is with --agent-output (EVAL_AGENT_OUTPUT, a manifest's agent.output), e.g. {example}"
    )
}

/// The path of the first string in `value` (depth first, not too deep).
fn first_text(value: &Value, at: String, depth: usize) -> Option<String> {
    let join = |key: &str| {
        let plain = !key.is_empty() && !key.contains(['.', '[', ']']);
        match (at.is_empty(), plain) {
            (true, true) => key.to_string(),
            (false, true) => format!("{at}.{key}"),
            (_, false) => format!("{at}[{}]", Value::String(key.to_string())),
        }
    };
    match value {
        Value::String(_) if !at.is_empty() => Some(at),
        Value::Object(map) if depth < 6 => map
            .iter()
            .find_map(|(k, v)| first_text(v, join(k), depth + 1)),
        Value::Array(items) if depth < 6 => items.iter().enumerate().rev().find_map(|(i, v)| {
            first_text(
                v,
                format!("{at}[{}]", i as i64 - items.len() as i64),
                depth + 1,
            )
        }),
        _ => None,
    }
}

/// An error about `path` in `body`: the setting, the path, why, the body.
fn miss(path: &Named<ResponsePath>, why: impl std::fmt::Display, body: &Value) -> String {
    format!(
        "{} (`{}`): {why}; body: {}",
        path.setting,
        path.value,
        shown(&body.to_string())
    )
}

/// A body on one line, cut, escaped, keys masked.
fn shown(text: &str) -> String {
    if text.trim().is_empty() {
        return "(empty body)".into();
    }
    one_line(text, 300)
}

/// The values `path` selects, or an error naming it.
fn select<'v>(path: &Named<ResponsePath>, body: &'v Value) -> Result<Vec<&'v Value>, String> {
    path.value.select(body).map_err(|e| miss(path, e, body))
}

/// The one value `path` selects.
fn one<'v>(path: &Named<ResponsePath>, body: &'v Value) -> Result<&'v Value, String> {
    let values = select(path, body)?;
    match values.as_slice() {
        [v] => Ok(v),
        found => Err(miss(
            path,
            format!(
                "selects {} values where one is read: pick one with an index, e.g. [0] or [-1]",
                found.len()
            ),
            body,
        )),
    }
}

/// The output: a string (a number or boolean as written).
fn output_at(path: &Named<ResponsePath>, body: &Value) -> Result<String, String> {
    match one(path, body)? {
        Value::String(s) => Ok(s.clone()),
        v @ (Value::Number(_) | Value::Bool(_)) => Ok(v.to_string()),
        other => Err(miss(
            path,
            format!(
                "the output is {}, not text",
                super::openai::json_kind(other)
            ),
            body,
        )),
    }
}

/// The context: each selected value a string, an object with `text` (or
/// `content`), or an array of them.
fn context_at(path: &Named<ResponsePath>, body: &Value) -> Result<Vec<String>, String> {
    let values = select(path, body)?;
    let mut out = Vec::new();
    for value in values {
        let read = match value {
            Value::Object(_) => read_context(&Value::Array(vec![value.clone()])),
            other => read_context(other),
        };
        out.extend(read.map_err(|e| miss(path, e, body))?);
    }
    Ok(out)
}

/// Tool calls: an array of OpenAI's `{"function": {"name", "arguments"}}`
/// or `{"name", "arguments" | "args" | "input"}` (arguments an object or
/// a JSON string).
fn tool_calls_at(
    path: &Named<ResponsePath>,
    body: &Value,
) -> Result<Vec<eval_datasets::ToolCall>, String> {
    let values = select(path, body)?;
    let calls: Vec<&Value> = match (path.value.is_many(), values.as_slice()) {
        (false, [Value::Array(items)]) => items.iter().collect(),
        (false, [Value::Null]) => Vec::new(),
        (false, [other]) => {
            return Err(miss(
                path,
                format!(
                    "the tool calls are {}, not an array",
                    super::openai::json_kind(other)
                ),
                body,
            ));
        }
        _ => values,
    };
    calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            let function = call
                .get("function")
                .filter(|f| f.is_object())
                .unwrap_or(call);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| miss(path, format!("tool call {i} has no `name`"), body))?;
            let arguments = ["arguments", "args", "input"]
                .iter()
                .find_map(|k| function.get(*k));
            super::openai::tool_call(name, arguments, call.get("id").and_then(Value::as_str))
                .map_err(|e| miss(path, e, body))
        })
        .collect()
}

/// A token count: a whole number (or one written as a string).
fn tokens_at(path: &Named<ResponsePath>, body: &Value) -> Result<u64, String> {
    let value = one(path, body)?;
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
        .ok_or_else(|| {
            miss(
                path,
                format!(
                    "the token count is {}, not a whole number",
                    super::openai::json_kind(value)
                ),
                body,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval_datasets::agent::read_path;
    use serde_json::json;

    fn read_json(m: &HttpMapping, body: &Value) -> Result<AgentReply, String> {
        read(m, body, crate::default_reply)
    }

    fn mapping(paths: &[(&str, &str)]) -> HttpMapping {
        let mut m = HttpMapping::default();
        for (which, path) in paths {
            let p = Some(read_path(path, &format!("--agent-{which}")).unwrap());
            match *which {
                "output" => m.output = p,
                "context" => m.context = p,
                "tool-calls" => m.tool_calls = p,
                "prompt" => m.prompt_tokens = p,
                _ => m.completion_tokens = p,
            }
        }
        m
    }

    #[test]
    fn paths_read_output_context_tools_and_usage() {
        let m = mapping(&[
            ("output", "data.answer"),
            ("context", "data.sources[*]"),
            ("tool-calls", "/data/calls"),
            ("prompt", "meta.usage.in"),
            ("completion", "meta.usage.out"),
        ]);
        let body = json!({"data": {"answer": "Paris", "sources": [{"text": "a"}, "b", {"content": "c"}],
            "calls": [{"function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}, "id": "c1"}, {"name": "calc", "args": {"n": 1}}]},
            "meta": {"usage": {"in": 12, "out": "3"}}});
        let r = read_json(&m, &body).unwrap();
        assert_eq!(r.output, "Paris");
        assert_eq!(r.context, ["a", "b", "c"]);
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].name, "lookup");
        assert_eq!(r.tool_calls[0].arguments["q"], "x");
        assert_eq!(r.tool_calls[1].arguments["n"], 1);
        assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (12, 3));
    }

    #[test]
    fn misses_name_the_setting_the_path_and_the_body() {
        let m = mapping(&[("output", "data.answer")]);
        let e = read_json(&m, &json!({"data": {"text": "Paris\n\u{1b}[31m"}})).unwrap_err();
        assert_eq!(
            e,
            "--agent-output (`data.answer`): `data` has no key `answer` (its keys: text); body: {\"data\":{\"text\":\"Paris\\n\\u001b[31m\"}}"
        );
        let m = mapping(&[("output", "messages[*].content")]);
        let e = read_json(
            &m,
            &json!({"messages": [{"content": "a"}, {"content": "b"}]}),
        )
        .unwrap_err();
        assert!(e.contains("selects 2 values"), "{e}");
        let e = plain_reply(&m, "hello").unwrap_err();
        assert!(
            e.starts_with("--agent-output (`messages[*].content`): the agent answered text/plain"),
            "{e}"
        );
        assert_eq!(
            plain_reply(&HttpMapping::default(), " hello\n")
                .unwrap()
                .output,
            "hello"
        );
    }
}
