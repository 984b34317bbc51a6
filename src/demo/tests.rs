//! The demo agent's HTTP API, tested through real requests on loopback.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::Instant;

use super::*;

/// One server shared by the tests (kept for the process lifetime).
fn server() -> &'static DemoServer {
    static SERVER: OnceLock<DemoServer> = OnceLock::new();
    SERVER.get_or_init(|| spawn(DemoConfig::default()).expect("start demo agent"))
}

/// Sends one HTTP/1.1 request over a raw socket; returns status and body.
fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let (status, _, body) = exchange(addr, method, path, body);
    (status, body)
}

/// [`http`], with the response's head too.
fn exchange(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read response");
    let raw = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("header end");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, head.to_string(), body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

fn post_json(addr: SocketAddr, path: &str, body: Value) -> (u16, Value) {
    let (status, text) = http(addr, "POST", path, &body.to_string());
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, value)
}

#[test]
fn answers_a_question_with_context() {
    let s = server();
    assert!(s.url().starts_with("http://127.0.0.1:") && !s.url().ends_with('/'));
    for path in ["/", "/v1/respond"] {
        let (status, body) = post_json(
            s.addr(),
            path,
            json!({ "input": "What is the capital of France?" }),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["output"], "Paris is the capital of France.");
        let context = body["context"].as_array().unwrap();
        assert!((1..=2).contains(&context.len()), "{body}");
        assert!(context[0].as_str().unwrap().contains("capital"), "{body}");
    }
    let (status, body) = post_json(
        s.addr(),
        "/",
        json!({ "input": "What is RAG?", "agent_args": { "top_k": 1 } }),
    );
    assert_eq!(status, 200);
    assert_eq!(body["context"].as_array().unwrap().len(), 1);
    let (_, body) = post_json(s.addr(), "/", json!({ "input": "Who painted it?" }));
    assert_eq!(body, json!({ "output": "I don't know.", "context": [] }));
}

#[test]
fn remembers_earlier_turns() {
    let s = server();
    let (status, body) = post_json(
        s.addr(),
        "/v1/respond",
        json!({
            "input": "What's my name?",
            "messages": [
                { "role": "system", "content": "You are helpful. My name is System." },
                { "role": "user", "content": "Hi! My name is Ada." },
                { "role": "assistant", "content": "Nice to meet you, Bob." },
                { "role": "user", "content": "What's my name?" },
            ],
        }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["output"], "Your name is Ada.");
    assert_eq!(body["context"], json!([]));

    // Without `input`, the last user message is the question.
    let (_, body) = post_json(
        s.addr(),
        "/",
        json!({ "messages": [
            { "role": "user", "content": "I like apples." },
            { "role": "user", "content": "Sorry, I meant I like mangoes." },
            { "role": "user", "content": [{ "type": "text", "text": "What is my favorite fruit?" }] },
        ] }),
    );
    assert_eq!(body["output"], "You like mangoes.");

    // `input` as an array of turns.
    let (_, body) = post_json(
        s.addr(),
        "/",
        json!({ "input": ["I live in Lyon.", "Where do I live?"] }),
    );
    assert_eq!(body["output"], "You live in Lyon.");
}

#[test]
fn speaks_openai_chat_completions() {
    let s = server();
    let (status, body) = post_json(
        s.addr(),
        "/v1/chat/completions",
        json!({
            "model": "gpt-test",
            "messages": [
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": "What is 2 + 2?" },
            ],
        }),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(body["object"], "chat.completion");
    assert!(body["created"].as_u64().unwrap() > 1_600_000_000);
    assert_eq!(body["model"], "gpt-test");
    let choices = body["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 1);
    assert_eq!(choices[0]["index"], 0);
    assert_eq!(choices[0]["finish_reason"], "stop");
    assert_eq!(
        choices[0]["message"],
        json!({ "role": "assistant", "content": "4" })
    );
    let usage = &body["usage"];
    assert_eq!(usage["prompt_tokens"], 7); // whitespace-separated words
    assert_eq!(usage["completion_tokens"], 1);
    assert_eq!(usage["total_tokens"], 8);

    let (status, body) = post_json(
        s.addr(),
        "/v1/chat/completions",
        json!({ "messages": [{ "role": "system", "content": "hi" }] }),
    );
    assert_eq!(status, 400);
    assert!(body["error"].is_string());
}

#[test]
fn chat_calls_the_tools_it_is_offered() {
    let s = server();
    let ask = |question: &str, extra: Value| {
        let mut body = json!({
            "model": "demo-agent",
            "messages": [{ "role": "user", "content": question }],
            "tools": Value::from(tool_definitions()),
        });
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, body) = post_json(s.addr(), "/v1/chat/completions", body);
        assert_eq!(status, 200, "{body}");
        body
    };
    let body = ask("What is 12 * 7?", json!({}));
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], "84");
    let call = &message["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], CALCULATOR);
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({ "expression": "12 * 7" }));
    // 1 word of answer + 3 of `{"expression":"12 * 7"}`.
    assert_eq!(body["usage"]["completion_tokens"], 4);

    let body = ask("What is the capital of France?", json!({}));
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], "Paris is the capital of France.");
    assert_eq!(message["tool_calls"][0]["function"]["name"], LOOKUP);
    assert!(
        body["context"][0].as_str().unwrap().contains("Paris"),
        "{body}"
    );

    // `tool_choice: "none"`, or only the other tool allowed: no call.
    for choice in [
        json!("none"),
        json!({"type": "function", "function": {"name": CALCULATOR}}),
    ] {
        let body = ask(
            "What is the capital of France?",
            json!({ "tool_choice": choice }),
        );
        assert!(
            body["choices"][0]["message"].get("tool_calls").is_none(),
            "{body}"
        );
        assert_eq!(
            body["choices"][0]["message"]["content"],
            "Paris is the capital of France."
        );
    }
    // A conversation with earlier tool calls and `tool` messages in it.
    let (status, body) = post_json(
        s.addr(),
        "/v1/chat/completions",
        json!({
            "model": "demo-agent",
            "messages": [
                { "role": "user", "content": "My name is Ada. What is 2 + 2?" },
                { "role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}] },
                { "role": "tool", "tool_call_id": "c1", "content": "4" },
                { "role": "assistant", "content": "4" },
                { "role": "user", "content": "What's my name?" },
            ],
        }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "Your name is Ada."
    );
}

#[test]
fn chat_streams_chunks_with_tool_calls_and_usage() {
    let s = server();
    let request = json!({
        "model": "m-stream",
        "messages": [{ "role": "user", "content": "What is the capital of France?" }],
        "tools": Value::from(tool_definitions()),
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    let (status, head, text) = exchange(
        s.addr(),
        "POST",
        "/v1/chat/completions",
        &request.to_string(),
    );
    assert_eq!(status, 200, "{text}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| e.strip_prefix("data: ").expect("a data line"))
        .collect();
    assert_eq!(events.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let mut content = String::new();
    let mut arguments = String::new();
    let mut names = Vec::new();
    for c in &chunks {
        assert_eq!(c["model"], "m-stream");
        let Some(delta) = c["choices"].get(0).map(|ch| &ch["delta"]) else {
            continue;
        };
        content.push_str(delta["content"].as_str().unwrap_or(""));
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            if let Some(name) = call["function"]["name"].as_str() {
                names.push(name.to_string());
            }
            arguments.push_str(call["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    assert_eq!(content, "Paris is the capital of France.");
    assert_eq!(names, [LOOKUP]);
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({ "query": "What is the capital of France?" })
    );
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    assert!(
        last["usage"]["completion_tokens"].as_u64().unwrap() > 0,
        "{last}"
    );
    // The same request unstreamed answers the same.
    let mut whole = request.clone();
    whole["stream"] = json!(false);
    let (_, body) = post_json(s.addr(), "/v1/chat/completions", whole);
    assert_eq!(body["choices"][0]["message"]["content"], content);
    assert_eq!(body["usage"], last["usage"]);
}

#[test]
fn rejects_bad_requests_with_400() {
    let s = server();
    let bad = [
        ("/", "{not json"),
        ("/", ""),
        ("/", "[1, 2]"),
        ("/", "{}"),
        ("/", r#"{"input": "   "}"#),
        ("/", r#"{"input": 42}"#),
        (
            "/v1/respond",
            r#"{"messages": [{"role": "assistant", "content": "hi"}]}"#,
        ),
        ("/v1/respond", r#"{"messages": "hello"}"#),
        (
            "/v1/respond",
            r#"{"messages": [{"role": "user", "content": 3}]}"#,
        ),
        (
            "/v1/respond",
            r#"{"input": "hi", "agent_args": {"top_k": -1}}"#,
        ),
        ("/v1/respond", r#"{"input": "hi", "agent_args": [1]}"#),
        ("/v1/chat/completions", "{\"messages\": ["),
        ("/v1/chat/completions", r#"{"messages": []}"#),
        (
            "/v1/chat/completions",
            r#"{"model": 1, "messages": [{"role": "user", "content": "hi"}]}"#,
        ),
        (
            "/v1/chat/completions",
            r#"{"stream": "yes", "messages": [{"role": "user", "content": "hi"}]}"#,
        ),
        (
            "/v1/chat/completions",
            r#"{"tools": "calculator", "messages": [{"role": "user", "content": "hi"}]}"#,
        ),
        (
            "/v1/chat/completions",
            r#"{"tools": [{"type": "function"}], "messages": [{"role": "user", "content": "hi"}]}"#,
        ),
    ];
    for (path, body) in bad {
        let (status, text) = http(s.addr(), "POST", path, body);
        assert_eq!(status, 400, "{path} {body}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert!(
            error["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{text}"
        );
    }
    let (status, text) = http(s.addr(), "GET", "/nope", "");
    assert_eq!(status, 404);
    assert!(text.contains("error"));
    // Still alive after all that.
    assert_eq!(
        http(s.addr(), "GET", "/health", ""),
        (200, "ok".to_string())
    );
}

#[test]
fn applies_the_configured_latency() {
    let latency = Duration::from_millis(50);
    let slow = spawn(DemoConfig {
        latency,
        ..DemoConfig::default()
    })
    .expect("start demo agent");
    for path in ["/", "/v1/chat/completions"] {
        let started = Instant::now();
        let (status, _) = post_json(
            slow.addr(),
            path,
            json!({ "messages": [{ "role": "user", "content": "What is RAG?" }] }),
        );
        assert_eq!(status, 200);
        assert!(
            started.elapsed() >= latency,
            "{path}: {:?}",
            started.elapsed()
        );
    }
    slow.shutdown().expect("clean shutdown");
}

#[tokio::test]
async fn spawns_inside_a_runtime_and_outlives_its_handle() {
    let s = spawn(DemoConfig::default()).expect("start demo agent");
    let addr = s.addr();
    drop(s); // detaches: the server keeps running
    let (status, body) = tokio::task::spawn_blocking(move || http(addr, "GET", "/health", ""))
        .await
        .unwrap();
    assert_eq!((status, body.as_str()), (200, "ok"));
}

#[test]
fn parses_latency_settings() {
    let ms = |v| parse_latency_ms(LATENCY_ENV, v);
    assert_eq!(ms("250"), Ok(Some(Duration::from_millis(250))));
    assert_eq!(ms(" 0 "), Ok(Some(Duration::ZERO)));
    assert_eq!(ms(""), Ok(None));
    for bad in ["-5", "1.5", "fast", "10ms"] {
        let e = ms(bad).unwrap_err();
        assert!(e.to_string().contains(LATENCY_ENV), "{e}");
    }
}

// -----------------------------------------------------------------------
// The example datasets (examples/evals/) pass against this agent.

fn dataset(name: &str) -> String {
    let path = format!("{}/examples/evals/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// SQuAD answer normalisation: lower-case, no punctuation, no articles.
fn squad_tokens(text: &str) -> Vec<String> {
    let lower: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    lower
        .split_whitespace()
        .filter(|w| !["a", "an", "the"].contains(w))
        .map(str::to_string)
        .collect()
}

fn f1(output: &str, expected: &str) -> f64 {
    let out = squad_tokens(output);
    let mut exp = squad_tokens(expected);
    let mut common = 0usize;
    for w in &out {
        if let Some(i) = exp.iter().position(|e| e == w) {
            exp.swap_remove(i);
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / out.len() as f64;
    let recall = common as f64 / squad_tokens(expected).len() as f64;
    2.0 * precision * recall / (precision + recall)
}

fn contains(output: &str, expected: &str) -> bool {
    output
        .to_lowercase()
        .contains(&expected.trim().to_lowercase())
}

/// Text only ever appearing in `tags`, since test names include inputs
/// and ids.
fn assert_only_in_tags(line: &str, sample: &Map<String, Value>) {
    for (key, value) in sample {
        if key != "tags" {
            assert!(
                !value.to_string().to_lowercase().contains("advanced"),
                "`advanced` outside tags: {line}"
            );
        }
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect(),
        other => panic!("not a string or list: {other}"),
    }
}

#[test]
fn rag_dataset_passes() {
    let text = dataset("rag.jsonl");
    let mut advanced = 0;
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let sample: Map<String, Value> = serde_json::from_str(line).unwrap();
        assert_only_in_tags(line, &sample);
        advanced += usize::from(strings(&sample["tags"]).contains(&"advanced".to_string()));
        n += 1;
        let input = sample["input"].as_str().unwrap();
        let expected = sample["expected"].as_str().unwrap();
        let reply = respond::<&str>(&[], input, DEFAULT_TOP_K);
        assert!(contains(&reply.output, expected), "{input} → {reply:?}");
        let score = f1(&reply.output, expected);
        assert!(score >= 0.2, "{input} → {reply:?}: F1 {score}");
    }
    assert!((6..=8).contains(&n), "{n} samples");
    assert!((2..=3).contains(&advanced), "{advanced} advanced");
}

#[test]
fn conversations_dataset_passes() {
    let text = dataset("conversations.jsonl");
    let mut per_turn = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let sample: Map<String, Value> = serde_json::from_str(line).unwrap();
        assert_only_in_tags(line, &sample);
        let turns = strings(&sample["input"]);
        let truth = &sample["ground_truth"];
        if truth.is_array() {
            per_turn += 1;
            let truths = strings(truth);
            assert_eq!(truths.len(), turns.len());
            for (i, expected) in truths.iter().enumerate() {
                let reply = respond(&turns[..i], &turns[i], DEFAULT_TOP_K);
                assert!(
                    contains(&reply.output, expected),
                    "{turns:?}[{i}] → {reply:?}"
                );
            }
        } else {
            let (last, history) = turns.split_last().unwrap();
            let reply = respond(history, last, DEFAULT_TOP_K);
            let expected = truth.as_str().unwrap();
            assert!(contains(&reply.output, expected), "{turns:?} → {reply:?}");
        }
    }
    assert_eq!(per_turn, 1);
}

/// Minimal RFC 4180 reader: quoted cells may hold commas, doubled quotes
/// and line breaks.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    if !cell.is_empty() || !row.is_empty() {
        row.push(cell);
        rows.push(row);
    }
    rows
}

#[test]
fn faq_dataset_passes() {
    let text = dataset("faq.csv");
    let rows = csv_rows(&text);
    assert_eq!(
        rows[0],
        ["id", "input", "ground_truth", "tags", "agent_args"]
    );
    assert!((3..=5).contains(&(rows.len() - 1)));
    assert!(rows[1..].iter().any(|r| r[1].contains('\n')));
    for row in &rows[1..] {
        assert_eq!(row.len(), 5, "{row:?}");
        let tags: Vec<String> = serde_json::from_str(&row[3]).unwrap();
        let args: Map<String, Value> = serde_json::from_str(&row[4]).unwrap();
        for cell in [&row[0], &row[1], &row[2], &row[4]] {
            assert!(!cell.to_lowercase().contains("advanced"), "{row:?}");
        }
        let _ = tags;
        let top_k = args
            .get("top_k")
            .map_or(DEFAULT_TOP_K, |k| k.as_u64().unwrap() as usize);
        let (input, expected) = (&row[1], &row[2]);
        let reply = respond::<&str>(&[], input, top_k);
        assert!(contains(&reply.output, expected), "{input} → {reply:?}");
        // The ground truth doubles as a regex: keep it literal.
        assert!(
            !expected.contains(|c| "\\^$.|?*+()[]{}".contains(c)),
            "{expected}"
        );
    }
}

#[test]
fn http_agent_speaks_openai_with_streaming_and_tools_to_it() {
    let s = server();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agent = eval_runtime::HttpAgent::new(&format!("{}/v1/chat/completions", s.url()))
        .unwrap()
        .model("demo-agent")
        .stream(true)
        .tools(tool_definitions());
    let sample = eval_runtime::Sample::new("").with_turns([
        "What is 12 * 7?",
        "My name is Ada.",
        "What's my name?",
    ]);
    let r = rt.block_on(agent.respond(&sample)).unwrap();
    assert_eq!(
        r.turn_outputs,
        ["84", "Nice to meet you, Ada.", "Your name is Ada."]
    );
    let calls: Vec<(String, usize)> = r.tool_calls.iter().map(|c| (c.display(), c.turn)).collect();
    assert_eq!(
        calls,
        [(r#"calculator(expression="12 * 7")"#.to_string(), 0)]
    );
    assert!(r.ttft.is_some());
    assert_eq!(r.model.as_deref(), Some("demo-agent"));
    assert_eq!(r.usage.calls, 3);
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0);
}

/// `examples/tools.json`, which the guide's `--tools` example offers, is
/// the demo agent's own tool definitions.
#[test]
fn the_shipped_tools_file_is_the_demo_agents_tools() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tools.json");
    let shipped: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(shipped, Value::from(tool_definitions()));
}
