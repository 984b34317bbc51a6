//! A streamed answer (`Content-Type: text/event-stream`), read as it
//! arrives and assembled into one [`AgentReply`], with the time to its
//! first token.
//!
//! Each event's `data` is one of:
//!
//! * an OpenAI chat-completions chunk (it has `choices`): `delta.content`
//!   is appended to the answer; `delta.tool_calls[]` fragments are gathered
//!   by their `index` (the `id` and `function.name` when given, the
//!   `function.arguments` pieces concatenated, parsed as JSON at the end);
//!   `usage` (the last chunk's, with `stream_options.include_usage`) and
//!   `model` are kept. Only choice 0 is read. A stream without any `usage`
//!   (llama-cpp-python's server sends none, 0.3.36) has its tokens counted
//!   from the request sent and the answer's text with a tokenizer, marked
//!   estimated ([`Usage::estimated_tokens`](crate::Usage::estimated_tokens)):
//!   never a silent 0;
//! * for the JSON contract, an object with any of: `delta` (text appended
//!   to the answer), `output` (the whole answer so far, replacing it),
//!   `context` (as in a whole answer), `tool_calls` (complete calls:
//!   `{"name", "arguments"}` or OpenAI's shape), `usage`
//!   (`prompt_tokens`, `completion_tokens`), `model`; data that is not JSON
//!   is text appended to the answer;
//! * `[DONE]`: the end. A stream that ends without it, or is cut off, fails
//!   the call; so does an `error` object, an event named `error`, or bytes
//!   that are not UTF-8 (the failure names their offset in the body).
//!
//! The time to first token is from sending the request to the first event
//! that adds text or a tool call. The body is read through
//! the bounded body reader: the size limit and the timeout apply to the whole stream.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::openai;
use super::sse::{Event, InvalidUtf8, Reader};
use super::wire::{AgentReply, read_context};
use crate::http::{BoundedBody, Refusal};
use crate::model::one_line;

/// Why a streamed answer was not used.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The body was refused (too large, cut off, too slow).
    Refused(Refusal),
    /// An event could not be understood.
    Bad(String),
}

/// Reads the event stream of `body` into a reply; `started` is when the
/// request was sent, `sent` the request body. With `json_events` false (the
/// OpenAI protocol), every event must be a JSON chunk, and a stream without
/// `usage` has its tokens estimated from `sent` and the answer.
pub(crate) async fn read(
    mut body: BoundedBody,
    started: Instant,
    json_events: bool,
    sent: &Value,
) -> Result<AgentReply, StreamError> {
    let mut reply = read_events(&mut body, started, json_events).await?;
    if !json_events && !reply.usage_seen {
        super::estimate_unreported(&mut reply.reply, sent);
    }
    Ok(reply.reply)
}

/// A stream's reply, and whether any event carried `usage`.
struct Streamed {
    reply: AgentReply,
    usage_seen: bool,
}

async fn read_events(
    body: &mut BoundedBody,
    started: Instant,
    json_events: bool,
) -> Result<Streamed, StreamError> {
    let mut reader = Reader::new();
    let mut assembly = Assembly::new(json_events);
    let mut events = Vec::new();
    loop {
        let Some(chunk) = body.next().await.map_err(StreamError::Refused)? else {
            // A final `[DONE]` not followed by an empty line still ends it.
            let pending = reader.pending().map_err(not_text)?;
            if pending.as_deref().map(str::trim) == Some("[DONE]") {
                return assembly.finished().map_err(StreamError::Bad);
            }
            return Err(StreamError::Refused(Refusal::CutOff {
                received: body.received(),
                cause: format!(
                    "the event stream ended before `data: [DONE]` ({} event(s) read)",
                    assembly.events
                ),
            }));
        };
        reader.feed(&chunk, &mut events).map_err(not_text)?;
        for event in events.drain(..) {
            if assembly
                .event(&event, || started.elapsed())
                .map_err(StreamError::Bad)?
            {
                return assembly.finished().map_err(StreamError::Bad);
            }
        }
    }
}

/// A stream that is not UTF-8: the agent's error, never an answer decoded
/// lossily.
fn not_text(e: InvalidUtf8) -> StreamError {
    StreamError::Bad(format!("the event stream is not text: {e}"))
}

/// A tool call being streamed.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// What the events said so far.
#[derive(Debug)]
struct Assembly {
    json_events: bool,
    events: usize,
    reply: AgentReply,
    calls: Vec<PartialCall>,
    /// Where each `index` is in `calls` (a lookup, not a scan per fragment). // issue37:otel-in
    at: std::collections::HashMap<u64, usize>,
    usage_seen: bool,
}

impl Assembly {
    fn new(json_events: bool) -> Self {
        Assembly {
            json_events,
            events: 0,
            reply: AgentReply::default(),
            calls: Vec::new(),
            at: std::collections::HashMap::new(), // issue37:otel-in
            usage_seen: false,
        }
    }

    /// Takes one event in; `Ok(true)` at `[DONE]`.
    fn event(&mut self, event: &Event, elapsed: impl Fn() -> Duration) -> Result<bool, String> {
        self.events += 1;
        let n = self.events;
        let data = event.data.trim();
        if event.event == "error" {
            return Err(format!(
                "the agent's stream reported an error (event {n}): {}",
                openai::error_text(&serde_json::from_str(data).unwrap_or(Value::from(data)))
            ));
        }
        if data == "[DONE]" {
            return Ok(true);
        }
        let value: Value = match crate::config::inner_json(data) {
            Ok(v @ Value::Object(_)) => v,
            Err(e @ eval_datasets::json::BoundedJsonError::TooBig { .. }) => {
                return Err(format!("event {n} of the stream is refused: {e}"));
            }
            _ if self.json_events => {
                self.text(&event.data, &elapsed);
                return Ok(false);
            }
            _ => {
                return Err(format!(
                    "event {n} of the stream is not a JSON chunk: {}",
                    one_line(data, 120)
                ));
            }
        };
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            return Err(format!(
                "the agent's stream reported an error (event {n}): {}",
                openai::error_text(error)
            ));
        }
        if let Some(model) = openai::model(value.get("model")) {
            self.reply.model = Some(model);
        }
        if let Some(id) = openai::model(value.get("id")) {
            self.reply.response_id = Some(id);
        }
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            self.usage_seen = true;
            openai::read_usage(Some(usage), &mut self.reply.usage);
        }
        match value.get("choices") {
            Some(choices) => self.chunk(choices, n, &elapsed)?,
            None if self.json_events => self.contract_event(&value, n, &elapsed)?,
            None => {}
        }
        Ok(false)
    }

    /// Text added to the answer.
    fn text(&mut self, text: &str, elapsed: &impl Fn() -> Duration) {
        if !text.is_empty() {
            self.first_token(elapsed);
            self.reply.output.push_str(text);
        }
    }

    fn first_token(&mut self, elapsed: &impl Fn() -> Duration) {
        if self.reply.ttft.is_none() {
            self.reply.ttft = Some(elapsed());
        }
    }

    /// An OpenAI chunk's `choices`.
    fn chunk(
        &mut self,
        choices: &Value,
        n: usize,
        elapsed: &impl Fn() -> Duration,
    ) -> Result<(), String> {
        let Value::Array(choices) = choices else {
            return Err(format!("event {n}: `choices` is not an array"));
        };
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            // The last chunk, with `usage`, has no choices.
            return Ok(());
        };
        let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else {
            return Ok(());
        };
        let text = openai::content_text(delta.get("content"))
            .map_err(|found| format!("event {n}: `delta.content` is not text: {found}"))?;
        self.text(&text, elapsed);
        match delta.get("tool_calls") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(fragments)) => {
                for (i, fragment) in fragments.iter().enumerate() {
                    self.call_fragment(fragment, i, n)?;
                    self.first_token(elapsed);
                }
                Ok(())
            }
            Some(_) => Err(format!("event {n}: `delta.tool_calls` is not an array")),
        }
    }

    /// One `delta.tool_calls[]` fragment, gathered by its `index`.
    fn call_fragment(&mut self, fragment: &Value, position: usize, n: usize) -> Result<(), String> {
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        // issue37:otel-in: a scan per fragment made a stream of distinct
        // indices quadratic (a million fragments in 16 MiB: hours).
        let at = *self.at.entry(index).or_insert_with(|| {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[at];
        if let Some(id) = fragment.get("id").and_then(Value::as_str)
            && !id.is_empty()
        {
            call.id = Some(id.to_string());
        }
        let function = fragment.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function.get("name").and_then(Value::as_str) {
            // Most servers send the name once; some send it in pieces, a
            // few repeat it whole.
            if call.name != name {
                call.name.push_str(name);
            }
        }
        match function.get("arguments") {
            None | Some(Value::Null) => {}
            Some(Value::String(piece)) => call.arguments.push_str(piece),
            Some(v @ Value::Object(_)) => call.arguments = v.to_string(),
            Some(_) => {
                return Err(format!(
                    "event {n}: tool call {index}: `function.arguments` is not a string"
                ));
            }
        }
        Ok(())
    }

    /// A JSON-contract event (see the module docs).
    fn contract_event(
        &mut self,
        value: &Value,
        n: usize,
        elapsed: &impl Fn() -> Duration,
    ) -> Result<(), String> {
        let string = |key: &str| match value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(format!(
                "event {n}: `{key}` is not a string: {}",
                one_line(&other.to_string(), 60)
            )),
        };
        if let Some(delta) = string("delta")? {
            self.text(delta, elapsed);
        }
        if let Some(output) = string("output")? {
            if !output.is_empty() {
                self.first_token(elapsed);
            }
            self.reply.output = output.to_string();
        }
        if let Some(context) = value.get("context").filter(|c| !c.is_null()) {
            self.reply.context = read_context(context).map_err(|e| format!("event {n}: {e}"))?;
        }
        match value.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(calls)) => {
                for call in calls {
                    let function = call.get("function").unwrap_or(call);
                    let name = function
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("event {n}: a tool call has no `name`"))?;
                    self.reply.tool_calls.push(
                        openai::tool_call(
                            name,
                            function.get("arguments"),
                            call.get("id").and_then(Value::as_str),
                        )
                        .map_err(|e| e.to_string())?,
                    );
                    self.first_token(elapsed);
                }
            }
            Some(_) => return Err(format!("event {n}: `tool_calls` is not an array")),
        }
        Ok(())
    }

    /// [`finish`](Self::finish), and whether `usage` was seen.
    fn finished(self) -> Result<Streamed, String> {
        let usage_seen = self.usage_seen;
        Ok(Streamed {
            reply: self.finish()?,
            usage_seen,
        })
    }

    /// The reply, its streamed tool calls parsed.
    fn finish(mut self) -> Result<AgentReply, String> {
        self.calls.sort_by_key(|c| c.index);
        for call in self.calls {
            if call.name.is_empty() {
                return Err(format!(
                    "streamed tool call {} has no `function.name`",
                    call.index
                ));
            }
            let arguments = Value::String(call.arguments);
            self.reply.tool_calls.push(
                openai::tool_call(&call.name, Some(&arguments), call.id.as_deref())
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok(self.reply)
    }
}

/// Whether the answer is a stream of server-sent events.
pub(super) fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(json_events: bool, events: &[(&str, &str)]) -> Result<(AgentReply, bool), String> {
        let mut a = Assembly::new(json_events);
        let mut clock = 0u64;
        for (name, data) in events {
            let event = Event {
                event: name.to_string(),
                data: data.to_string(),
            };
            clock += 10;
            let now = Duration::from_millis(clock);
            if a.event(&event, || now)? {
                return a.finish().map(|r| (r, true));
            }
        }
        a.finish().map(|r| (r, false))
    }

    #[test]
    fn openai_chunks_gather_text_tool_calls_and_usage() {
        let (r, done) = run(
            false,
            &[
                ("", r#"{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#),
                ("", r#"{"choices":[{"index":0,"delta":{"content":"The answer"}}]}"#),
                ("", r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"lookup","arguments":""}}]}}]}"#),
                ("", r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"calcu"}}]}}]}"#),
                ("", r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"lator","arguments":"{\"expr"}}]}}]}"#),
                ("", r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ession\": \"2+3\"}"}},{"index":1,"function":{"arguments":"{\"query\":\"rag\"}"}}]}}]}"#),
                ("", r#"{"choices":[{"index":0,"delta":{"content":" is 5."},"finish_reason":"stop"}]}"#),
                ("", r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}}"#),
                ("", "[DONE]"),
            ],
        )
        .unwrap();
        assert!(done);
        assert_eq!(r.output, "The answer is 5.");
        let calls: Vec<String> = r.tool_calls.iter().map(|c| c.display()).collect();
        assert_eq!(
            calls,
            [r#"calculator(expression="2+3")"#, r#"lookup(query="rag")"#]
        );
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("a"));
        assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (9, 4));
        assert_eq!(r.model.as_deref(), Some("m"));
        // The role-only first chunk is not a token: the second event is.
        assert_eq!(r.ttft, Some(Duration::from_millis(20)));
    }

    #[test]
    fn contract_events_and_plain_text() {
        let (r, _) = run(
            true,
            &[
                ("", "Hel"),
                ("", r#"{"delta": "lo"}"#),
                ("", r#"{"context": ["c1"], "tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}"#),
                ("", "[DONE]"),
            ],
        )
        .unwrap();
        assert_eq!(r.output, "Hello");
        assert_eq!(r.context, ["c1"]);
        assert_eq!(r.tool_calls[0].display(), r#"lookup(q="x")"#);
        assert_eq!(r.ttft, Some(Duration::from_millis(10)));
        let (r, _) = run(true, &[("", r#"{"output": "whole"}"#), ("", "[DONE]")]).unwrap();
        assert_eq!(r.output, "whole");
    }

    #[test]
    fn streamed_arguments_that_are_not_json_keep_the_call() {
        let (r, _) = run(
            false,
            &[
                (
                    "",
                    r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"calculator","arguments":"{\"x\":"}}]}}]}"#,
                ),
                ("", "[DONE]"),
            ],
        )
        .unwrap();
        let bad = r.tool_calls[0].invalid_arguments.as_ref().unwrap();
        assert_eq!(
            (r.tool_calls[0].name.as_str(), bad.raw.as_str()),
            ("calculator", "{\"x\":")
        );
        assert!(bad.error.contains("not valid JSON"), "{}", bad.error);
    }

    // issue37:otel-in
    #[test]
    fn a_stream_of_many_distinct_tool_call_indices_is_read_in_linear_time() {
        // 200,000 fragments of distinct indices in one event (~9 MB): each
        // index was looked for by a scan of those before it (100,000: 21 s
        // in a debug build; 200,000: four times that).
        let fragments: Vec<String> = (0..200_000)
            .map(|i| format!(r#"{{"index":{i},"function":{{"name":"f","arguments":"{{}}"}}}}"#))
            .collect();
        let data = format!(
            r#"{{"choices":[{{"delta":{{"tool_calls":[{}]}}}}]}}"#,
            fragments.join(",")
        );
        let started = std::time::Instant::now();
        let (r, _) = run(false, &[("", &data), ("", "[DONE]")]).unwrap();
        assert_eq!(r.tool_calls.len(), 200_000);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn bad_streams_say_what_is_wrong() {
        for (json_events, events, want) in [
            (
                false,
                vec![("", "not json")],
                "event 1 of the stream is not a JSON chunk: not json",
            ),
            (
                false,
                vec![("", r#"{"error": {"message": "overloaded"}}"#)],
                "reported an error (event 1): overloaded",
            ),
            (
                true,
                vec![("error", "boom")],
                "reported an error (event 1): boom",
            ),
            (
                false,
                vec![(
                    "",
                    r#"{"choices":[{"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{}"}}]}}]}"#,
                )],
                "streamed tool call 2 has no `function.name`",
            ),
        ] {
            let e = run(json_events, &events).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
