//! `HttpAgent` speaking the OpenAI chat protocol, whole and streamed,
//! against real HTTP servers on loopback: what the server sees, what is read
//! back, and how streams that misbehave fail.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eval_runtime::{AgentError, Error, HttpAgent, Protocol, Sample, ToolCall, openai};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::common;

use common::Reply;

/// A chat-completions answer.
fn completion(message: Value, usage: Value) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage,
    })
    .to_string()
}

fn calculator() -> Value {
    json!({"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}})
}

fn lookup() -> Value {
    json!({"type": "function", "function": {"name": "lookup", "description": "search"}})
}

/// A server at `<url>/v1/chat/completions` answering `body` to everything.
async fn chat_server(body: String) -> common::Server {
    let mut server = common::serve(move |_, _, _| Reply::json(200, body.clone())).await;
    server.url.push_str("/v1/chat/completions");
    server
}

#[tokio::test]
async fn the_request_body_holds_model_messages_tools_and_sampling() {
    let server = chat_server(completion(
        json!({"role": "assistant", "content": "ok"}),
        json!({}),
    ))
    .await;
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .model("qwen2.5")
        .temperature(0.2)
        .top_p(0.9)
        .max_tokens(64)
        .seed(7)
        // The sample defines `calculator` itself: its definition wins.
        .tools(vec![
            json!({"name": "calculator", "description": "agent's"}),
            lookup(),
        ]);
    assert_eq!(
        agent.wire_protocol(),
        Protocol::OpenAi,
        "implied by the URL"
    );
    let mut sample = Sample::new("What is 2 + 3?");
    sample.tools = vec![calculator()];
    sample.agent_args.insert("temperature".into(), json!(0.5));
    sample
        .agent_args
        .insert("tool_choice".into(), json!("auto"));
    let response = agent.respond(&sample).await.unwrap();
    assert_eq!(response.output, "ok");
    let log = server.requests.lock().unwrap();
    let (head, body) = &log[0];
    assert!(
        head.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{head}"
    );
    assert_eq!(
        *body,
        json!({
            "model": "qwen2.5",
            "messages": [{"role": "user", "content": "What is 2 + 3?"}],
            "tools": [calculator(), lookup()],
            "temperature": 0.5,
            "top_p": 0.9,
            "max_tokens": 64,
            "seed": 7,
            "tool_choice": "auto",
        })
    );
}

#[tokio::test]
async fn answers_give_content_tool_calls_usage_and_model() {
    let server = chat_server(completion(
        json!({"role": "assistant", "content": "5", "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"2 + 3\"}"}}
        ]}),
        json!({"prompt_tokens": 21, "completion_tokens": 8, "total_tokens": 29}),
    ))
    .await;
    let agent = HttpAgent::new(&server.url).unwrap().model("m");
    let r = agent.respond(&Sample::new("What is 2 + 3?")).await.unwrap();
    assert_eq!(r.output, "5");
    assert_eq!(
        r.tool_calls,
        [ToolCall::new("calculator")
            .with_arguments(json!({"expression": "2 + 3"}))
            .with_id("call_9")]
    );
    assert_eq!(
        (
            r.usage.prompt_tokens,
            r.usage.completion_tokens,
            r.usage.calls
        ),
        (21, 8, 1)
    );
    assert_eq!(r.model.as_deref(), Some("served-model"));
    assert_eq!(r.ttft, None, "not streamed");
}

#[tokio::test]
async fn malformed_tool_arguments_keep_the_call_with_the_parse_error() {
    let server = chat_server(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": 2 +"}}
        ]}),
        json!({}),
    ))
    .await;
    let agent = HttpAgent::new(&server.url).unwrap().model("m");
    let r = agent.respond(&Sample::new("x")).await.unwrap();
    let call = &r.tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.id.as_deref()),
        ("calculator", Some("c"))
    );
    let bad = call.invalid_arguments.as_ref().unwrap();
    assert_eq!(bad.raw, "{\"expression\": 2 +");
    assert!(bad.error.starts_with("not valid JSON: "), "{}", bad.error);
}

/// Whether `messages` satisfy OpenAI's rule: an assistant message with
/// `tool_calls` is followed by one `tool` message per call id.
fn tool_messages_follow_calls(messages: &[Value]) -> bool {
    messages.iter().enumerate().all(|(i, m)| {
        let Some(calls) = m["tool_calls"].as_array() else {
            return true;
        };
        calls.iter().enumerate().all(|(k, call)| {
            let next = &messages.get(i + 1 + k).cloned().unwrap_or_default();
            next["role"] == "tool" && next["tool_call_id"] == call["id"]
        })
    })
}

#[tokio::test]
async fn later_turns_carry_the_agents_tool_calls_as_a_strict_server_wants_them() {
    let mut server = common::serve(|n, _, body| {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if !tool_messages_follow_calls(&messages) {
            return Reply::json(400, r#"{"error": {"message": "tool_calls must be followed by tool messages"}}"#);
        }
        let message = match n {
            1 => json!({"role": "assistant", "content": "4", "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"2 + 2\"}"}},
                {"type": "function", "function": {"name": "lookup", "arguments": "{}"}},
            ]}),
            _ => json!({"role": "assistant", "content": "Ada"}),
        };
        Reply::json(200, completion(message, json!({"prompt_tokens": 10, "completion_tokens": 2})))
    })
    .await;
    server.url.push_str("/v1/chat/completions");
    let agent = HttpAgent::new(&server.url).unwrap().model("m");
    let sample = Sample::new("").with_turns(["What is 2 + 2?", "What's my name?"]);
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(r.turn_outputs, ["4", "Ada"]);
    let turns: Vec<(String, usize)> = r
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.turn))
        .collect();
    assert_eq!(turns, [("calculator".into(), 0), ("lookup".into(), 0)]);
    assert_eq!(
        (
            r.usage.calls,
            r.usage.prompt_tokens,
            r.usage.completion_tokens
        ),
        (2, 20, 4)
    );
    let log = server.requests.lock().unwrap();
    assert_eq!(
        log[1].1["messages"],
        json!([
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"2 + 2\"}"}},
                {"id": "call_1_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": openai::TOOL_RESULT_NOT_RECORDED},
            {"role": "tool", "tool_call_id": "call_1_1", "content": openai::TOOL_RESULT_NOT_RECORDED},
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "What's my name?"},
        ])
    );
    assert!(tool_messages_follow_calls(
        log[1].1["messages"].as_array().unwrap()
    ));
}

#[tokio::test]
async fn the_json_contract_history_keeps_tool_calls_too() {
    // A JSON-contract agent that streams a tool call in its first answer.
    let server = stream_server(vec![
        (Duration::ZERO, "data: {\"delta\": \"4\", \"tool_calls\": [{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2 + 2\"}}]}\n\ndata: [DONE]\n\n".into()),
    ], End::Done)
    .await;
    let agent = HttpAgent::new(&format!("{}/agent", server.url)).unwrap();
    let sample = Sample::new("").with_turns(["What is 2 + 2?", "And again?"]);
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(r.turn_outputs, ["4", "4"]);
    let log = server.requests.lock().unwrap();
    assert_eq!(
        log[1]["messages"][1],
        json!({"role": "assistant", "content": "4", "tool_calls": [{"name": "calculator", "arguments": {"expression": "2 + 2"}}]})
    );
    assert!(log[1].get("model").is_none() && log[1]["input"] == "And again?");
}

#[tokio::test]
async fn the_openai_protocol_needs_a_model() {
    let server = chat_server(completion(json!({"content": "x"}), json!({}))).await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let e = agent.check().unwrap_err().to_string();
    assert!(
        e.contains("the OpenAI protocol needs a model (implied by the URL ending in /chat/completions): set EVAL_AGENT_MODEL"),
        "{e}"
    );
    let e = agent
        .respond(&Sample::new("x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs a model"), "{e}");
    assert_eq!(server.count(), 0, "nothing was sent");
    // Chosen explicitly, the JSON contract goes to the same URL.
    let agent = agent.protocol(Protocol::Json);
    agent.check().unwrap();
    agent.respond(&Sample::new("hi")).await.unwrap();
    assert_eq!(server.requests.lock().unwrap()[0].1["input"], "hi");
    // agent_args may not set what the run owns.
    let agent = agent.protocol(Protocol::OpenAi).model("m");
    let mut sample = Sample::new("x");
    sample.agent_args.insert("messages".into(), json!([]));
    let e = agent.respond(&sample).await.unwrap_err().to_string();
    assert!(e.contains("agent_args.messages cannot be sent"), "{e}");
}

// ---------------------------------------------------------------------------
// Streams

/// How a streaming server ends its answer.
#[derive(Clone, Copy)]
enum End {
    /// The last chunk of the chunked body: a clean end.
    Done,
    /// The connection is dropped in the middle of the body.
    Cut,
    /// Nothing more is sent for an hour.
    Hang,
}

struct StreamServer {
    url: String,
    /// Each request's JSON body.
    requests: Arc<Mutex<Vec<Value>>>,
    /// Each request's head.
    heads: Arc<Mutex<Vec<String>>>,
}

/// A server answering every request with `text/event-stream`, writing each
/// part (after its delay) as one chunk of a chunked body, then ending as `end` says.
async fn stream_server(parts: Vec<(Duration, String)>, end: End) -> StreamServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let heads = Arc::new(Mutex::new(Vec::new()));
    let (log, log_heads) = (requests.clone(), heads.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let (log, log_heads, parts) = (log.clone(), log_heads.clone(), parts.clone());
            tokio::spawn(async move {
                while let Some((head, body)) = common::read_request(&mut socket).await {
                    log.lock()
                        .unwrap()
                        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                    log_heads.lock().unwrap().push(head);
                    let start = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\n\r\n";
                    if socket.write_all(start.as_bytes()).await.is_err() {
                        return;
                    }
                    for (delay, part) in &parts {
                        tokio::time::sleep(*delay).await;
                        let chunk = format!("{:x}\r\n{part}\r\n", part.len());
                        if socket.write_all(chunk.as_bytes()).await.is_err() {
                            return;
                        }
                        let _ = socket.flush().await;
                    }
                    match end {
                        End::Done => {
                            if socket.write_all(b"0\r\n\r\n").await.is_err() {
                                return;
                            }
                        }
                        End::Cut => {
                            // A chunk that announces more than it holds.
                            let _ = socket.write_all(b"40\r\ndata: {\"cho").await;
                            return;
                        }
                        End::Hang => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            return;
                        }
                    }
                }
            });
        }
    });
    StreamServer {
        url,
        requests,
        heads,
    }
}

fn data(chunk: Value) -> String {
    format!("data: {chunk}\n\n")
}

fn delta(delta: Value) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "model": "streamed-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

/// An OpenAI stream: content and tool-call deltas split across chunks (the
/// name in one, the arguments in several), usage in the last chunk.
fn openai_stream() -> Vec<(Duration, String)> {
    let now = Duration::ZERO;
    let role = data(delta(json!({"role": "assistant", "content": ""})));
    let text = data(delta(json!({"content": "The answer"})));
    // One event split across two writes, mid-line.
    let (a, b) = text.split_at(text.len() / 2);
    vec![
        (now, role),
        (now, a.to_string()),
        (now, b.to_string()),
        (
            now,
            data(delta(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": ""}}]}),
            )),
        ),
        (
            now,
            data(delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"expr"}}]}),
            )),
        ),
        (
            now,
            data(delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "ession\": "}}]}),
            )),
        ),
        (
            now,
            data(delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"2 + 3\"}"}}]}),
            )),
        ),
        (now, data(delta(json!({"content": " is 5."})))),
        (
            now,
            data(
                json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            ),
        ),
        (
            now,
            data(
                json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 6, "total_tokens": 17}}),
            ),
        ),
        (now, "data: [DONE]\n\n".into()),
    ]
}

#[tokio::test]
async fn a_stream_of_content_and_tool_call_deltas_is_assembled() {
    let server = stream_server(openai_stream(), End::Done).await;
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("m")
        .stream(true);
    let r = agent.respond(&Sample::new("What is 2 + 3?")).await.unwrap();
    assert_eq!(r.output, "The answer is 5.");
    assert_eq!(
        r.tool_calls,
        [ToolCall::new("calculator")
            .with_arguments(json!({"expression": "2 + 3"}))
            .with_id("call_1")]
    );
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (11, 6));
    assert_eq!(r.model.as_deref(), Some("streamed-model"));
    assert!(r.ttft.is_some());
    let body = &server.requests.lock().unwrap()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let head = server.heads.lock().unwrap()[0].to_ascii_lowercase();
    assert!(head.contains("accept: text/event-stream"), "{head}");
}

#[tokio::test]
async fn the_time_to_first_token_is_measured_before_a_slow_rest() {
    let pause = Duration::from_millis(400);
    let server = stream_server(
        vec![
            (Duration::ZERO, data(delta(json!({"role": "assistant"})))),
            (Duration::ZERO, data(delta(json!({"content": "Hello"})))),
            (pause, data(delta(json!({"content": " world"})))),
            (Duration::ZERO, "data: [DONE]\n\n".into()),
        ],
        End::Done,
    )
    .await;
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("m")
        .stream(true);
    let started = Instant::now();
    let r = agent.respond(&Sample::new("hi")).await.unwrap();
    let total = started.elapsed();
    let ttft = r.ttft.expect("streamed");
    assert_eq!(r.output, "Hello world");
    assert!(total >= pause, "{total:?}");
    assert!(
        ttft < total && ttft < pause,
        "ttft {ttft:?}, total {total:?}"
    );
}

#[tokio::test]
async fn a_stream_over_the_size_limit_is_refused() {
    let chunk = data(delta(json!({"content": "x".repeat(200)})));
    let parts = vec![(Duration::ZERO, chunk); 50];
    let server = stream_server(parts, End::Hang).await;
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("m")
        .stream(true)
        .max_response_bytes(4096);
    let started = Instant::now();
    let e = agent.respond(&Sample::new("hi")).await.unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Agent(AgentError::Refused {
                refusal: eval_runtime::Refusal::TooLarge { limit: 4096 },
                ..
            })
        ),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "not held until the stream ends"
    );
}

#[tokio::test]
async fn a_stream_that_ends_without_done_or_is_cut_off_fails() {
    let parts = vec![(Duration::ZERO, data(delta(json!({"content": "partial"}))))];
    for (end, want) in [
        (End::Done, "the answer was cut off after"),
        (End::Cut, "the answer was cut off after"),
    ] {
        let server = stream_server(parts.clone(), end).await;
        let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
            .unwrap()
            .model("m")
            .stream(true);
        let e = agent
            .respond(&Sample::new("hi"))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
        if matches!(end, End::Done) {
            assert!(
                e.contains("the event stream ended before `data: [DONE]` (1 event(s) read)"),
                "{e}"
            );
        }
        assert_eq!(e.lines().count(), 1);
    }
    // The timeout bounds the whole stream.
    let server = stream_server(parts, End::Hang).await;
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("m")
        .stream(true)
        .timeout(Duration::from_millis(300));
    let e = agent
        .respond(&Sample::new("hi"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("still arriving when the 0.3s timeout expired"),
        "{e}"
    );
}

#[tokio::test]
async fn a_json_answer_to_a_stream_request_is_accepted() {
    let server = chat_server(completion(
        json!({"role": "assistant", "content": "whole"}),
        json!({"prompt_tokens": 3, "completion_tokens": 1}),
    ))
    .await;
    let agent = HttpAgent::new(&server.url).unwrap().model("m").stream(true);
    let r = agent.respond(&Sample::new("hi")).await.unwrap();
    assert_eq!(
        (r.output.as_str(), r.usage.completion_tokens, r.ttft),
        ("whole", 1, None)
    );
    assert_eq!(server.requests.lock().unwrap()[0].1["stream"], true);
}

#[tokio::test]
async fn a_json_contract_agent_may_stream_events() {
    let server = stream_server(
        vec![
            (Duration::ZERO, "data: {\"delta\": \"Hel\"}\n\n".into()),
            (Duration::ZERO, "data: lo\n\n".into()),
            (Duration::ZERO, ": a comment\nevent: message\ndata: {\"context\": [\"c1\"], \"usage\": {\"prompt_tokens\": 4, \"completion_tokens\": 2}}\n\n".into()),
            (Duration::ZERO, "data: [DONE]\n\n".into()),
        ],
        End::Done,
    )
    .await;
    let agent = HttpAgent::new(&format!("{}/agent", server.url))
        .unwrap()
        .stream(true);
    assert_eq!(agent.wire_protocol(), Protocol::Json);
    let mut sample = Sample::new("hi");
    sample.tools = vec![lookup()];
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(r.output, "Hello");
    assert_eq!(r.context, ["c1"]);
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (4, 2));
    assert!(r.ttft.is_some());
    let body = &server.requests.lock().unwrap()[0];
    assert_eq!(
        *body,
        json!({"input": "hi", "messages": [{"role": "user", "content": "hi"}], "agent_args": {}, "tools": [lookup()], "stream": true})
    );
}

#[test]
fn dataset_tools_are_added_to_each_sample_at_load() {
    use eval_runtime::plan::PlanBuilder;
    let dir = std::env::temp_dir().join(format!("eval-openai-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tools.json"),
        json!({"tools": [{"name": "calculator", "description": "dataset's"}, lookup()]})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("d.jsonl"),
        format!(
            "{}\n{}\n",
            json!({"input": "a", "tools": [calculator()]}),
            json!({"input": "b"})
        ),
    )
    .unwrap();
    let runner = eval_runtime::Runner::new().config(eval_runtime::Config::empty());
    let plan = PlanBuilder::new()
        .base_dir(&dir)
        .dataset("d.jsonl", "contains")
        .tools("tools.json");
    let prepared = runner.prepare(plan).unwrap();
    let names: Vec<Vec<(String, String)>> = prepared
        .samples()
        .map(|s| {
            s.tools
                .iter()
                .map(|t| {
                    (
                        t["function"]["name"].as_str().unwrap().to_string(),
                        t["function"]["description"]
                            .as_str()
                            .unwrap_or("")
                            .to_string(),
                    )
                })
                .collect()
        })
        .collect();
    let pair = |n: &str, d: &str| (n.to_string(), d.to_string());
    assert_eq!(
        names,
        [
            vec![pair("calculator", ""), pair("lookup", "search")],
            vec![pair("calculator", "dataset's"), pair("lookup", "search")],
        ],
        "a sample's own definition wins"
    );
    let e = runner
        .prepare(
            PlanBuilder::new()
                .base_dir(&dir)
                .tools("tools.json")
                .dataset("d.jsonl", "contains")
                .tools("none.json"),
        )
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("tools `tools.json` come before any dataset"),
        "{e}"
    );
    assert!(e.contains("tools file none.json: cannot read it"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
