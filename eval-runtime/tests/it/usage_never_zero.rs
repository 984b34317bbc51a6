//! Usage and cost are never silently zero, against real HTTP servers on
//! loopback: a stream without a usage chunk is counted from its text and
//! marked estimated; a cost that is unknown fails a cost gate; a sample
//! cut short by its timeout keeps the calls and tokens it spent; a tool call
//! whose arguments are broken JSON is kept (its name scores, its arguments
//! fail with the parse error); per-token embeddings are mean-pooled.
//!
//! The scripted servers answer as llama-cpp-python 0.3.36's server does
//! (`python -m llama_cpp.server`; read from its source,
//! `pip download --no-deps llama-cpp-python==0.3.36`):
//!
//! * streamed chat completions (`llama_cpp/llama_chat_format.py`,
//!   `_convert_text_completion_chunks_to_chat`): a first chunk with
//!   `delta: {"role": "assistant"}`, one chunk per piece of text
//!   (`delta: {"content": ...}`), a last chunk with `delta: {}` and the
//!   `finish_reason`, each with `id`, `model`, `created`, `object:
//!   "chat.completion.chunk"` and `logprobs: null`; then `data: [DONE]`
//!   (`llama_cpp/server/app.py`, `get_event_publisher`). No chunk carries
//!   `usage`, whatever `stream_options` asks;
//! * embeddings of a model without pooling (`llama_cpp/llama.py`,
//!   `Llama.embed` with `LLAMA_POOLING_TYPE_NONE`, and
//!   `create_embedding`): `data[i].embedding` is one list of `n_embd`
//!   floats per token of text `i`, `usage: {prompt_tokens, total_tokens}`.

use std::path::PathBuf;
use std::time::Duration;

use eval_runtime::results::{Results, Verdict};
use eval_runtime::services::{Embedder, Usage};
use eval_runtime::{Config, Harness, HttpAgent, Outcome, Response, Sample};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::common::{self, Reply};

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-usage-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn args() -> libtest_mimic::Arguments {
    common::harness_args(&["harness", "--test-threads", "2", "-q"])
}

fn read(out: &Outcome) -> Results {
    Results::read(out.results_path.as_ref().expect("a results file")).unwrap()
}

/// A config of `vars` (nothing read from the environment).
fn config(vars: Vec<(&'static str, String)>) -> Config {
    Config::from_vars(
        move |n| Ok(vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())),
        &[],
    )
    .unwrap()
}

/// A price table file in `dir`: `smollm2` at $1 / $2 per million tokens.
fn prices(dir: &std::path::Path) -> String {
    let path = dir.join("prices.json");
    std::fs::write(&path, r#"{"smollm2": {"input": 1.0, "output": 2.0}}"#).unwrap();
    path.display().to_string()
}

/// llama-cpp-python 0.3.36's streamed chat completion of `pieces`: no usage.
fn llama_cpp_stream(pieces: &[&str]) -> String {
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": "chatcmpl-7f3", "model": "smollm2", "created": 1_767_000_000,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
        format!("data: {c}\r\n\r\n")
    };
    let mut body = chunk(json!({"role": "assistant"}), Value::Null);
    for p in pieces {
        body.push_str(&chunk(json!({"content": p}), Value::Null));
    }
    body.push_str(&chunk(json!({}), json!("stop")));
    body.push_str("data: [DONE]\r\n\r\n");
    body
}

/// A server on its own thread answering every request with `body` as
/// `text/event-stream` (sse-starlette, as llama-cpp-python uses, sends
/// CRLF line ends).
fn sse_server(body: String) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let body = body.clone();
                tokio::spawn(async move {
                    while common::read_request(&mut socket).await.is_some() {
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if socket.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    rx.recv().unwrap()
}

const CAPITAL: &str = r#"{"id": "capital", "input": "What is the capital of France?", "expected": "Paris"}
"#;

#[test]
fn a_stream_without_usage_is_counted_from_its_text_and_never_costs_a_known_zero() {
    let dir = scratch("stream", &[("capital.jsonl", CAPITAL)]);
    let url = sse_server(llama_cpp_stream(&[
        "The capital",
        " of France",
        " is Paris.",
    ]));
    let agent = HttpAgent::new(&format!("{url}/v1/chat/completions"))
        .unwrap()
        .model("smollm2")
        .stream(true);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .config(config(vec![("EVAL_PRICES", prices(&dir))]))
        .dataset("capital.jsonl", "contains, cost_usd <= 1")
        .gate("mean(cost_usd) <= 1")
        .agent(agent)
        .evaluate(args());
    let results = read(&out);
    let s = &results.samples[0];
    assert_eq!(s.output.as_deref(), Some("The capital of France is Paris."));
    let usage = s.agent;
    assert_eq!(usage.calls, 1);
    if cfg!(feature = "tokenizer") {
        assert_eq!(out.code, 0, "{:?}", out.error);
        // o200k_base (`smollm2` is not a model tiktoken knows): the prompt
        // as OpenAI's cookbook counts a chat, 3 + (3 + 1 + 7) = 14 for the
        // 7 tokens of the question; the answer's 7 tokens.
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (14, 7));
        assert_eq!(usage.estimated_tokens, 21, "every token estimated");
        // 14 · $1 + 7 · $2 per million: a known cost, from estimated tokens.
        let cost = s.cost_usd.expect("a cost");
        assert!((cost - 28e-6).abs() < 1e-15, "{cost}");
        let line = results.usage.line();
        assert!(
            line.starts_with(
                "agent 1 call(s), ~14 + ~7 tokens (estimated: no usage reported); cost ~$0.000028"
            ),
            "{line}"
        );
        assert_eq!(s.verdict, Verdict::Pass);
    } else {
        // Nothing to count with: unknown, never $0, and the gate is missed.
        assert_eq!(usage.unreported, 1);
        assert_eq!(s.cost_usd, None);
        let why = s.cost_unknown.as_deref().unwrap();
        assert!(
            why.starts_with("the agent reported no usage for 1 repl(ies)"),
            "{why}"
        );
        // It names the feature that would count them.
        assert!(why.contains(r#"features = ["tokenizer"]"#), "{why}");
        assert_eq!(out.code, 101);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_whole_answer_without_usage_is_counted_like_a_stream() {
    // An OpenAI-compatible server that leaves `usage` out of a whole
    // (not streamed) answer: counted from the text, marked estimated.
    let server = common::serve(|_, _, _| {
        Reply::json(
            200,
            json!({"id": "c", "object": "chat.completion", "model": "smollm2",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "The capital of France is Paris."}, "finish_reason": "stop"}]})
            .to_string(),
        )
    })
    .await;
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("smollm2");
    let sample = Sample::new("What is the capital of France?");
    let response = agent.respond(&sample).await.unwrap();
    if cfg!(feature = "tokenizer") {
        // The same 14 + 7 as the stream of the same answer above.
        assert_eq!(
            (
                response.usage.prompt_tokens,
                response.usage.completion_tokens
            ),
            (14, 7)
        );
        assert_eq!(response.usage.estimated_tokens, 21);
    } else {
        assert_eq!(response.usage.unreported, 1);
    }
    // An answer with `usage` is taken as reported, not estimated.
    let server = common::serve(|_, _, _| Reply::json(200, chat("Paris", 30, 4))).await;
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("smollm2");
    let response = agent.respond(&sample).await.unwrap();
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (30, 4)
    );
    assert_eq!(response.usage.estimated_tokens, 0);
}

#[tokio::test]
async fn a_judge_or_embeddings_reply_without_usage_is_counted_not_free() {
    // Servers (gateways, some local ones) that leave `usage` out.
    let judge_server = common::serve(|_, _, _| {
        Reply::json(
            200,
            json!({"id": "j", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"polite\": 1}"}, "finish_reason": "stop"}]})
            .to_string(),
        )
    })
    .await;
    let judge = eval_runtime::services::Judge::new(&judge_server.url, "smollm2")
        .unwrap()
        .cache(None);
    let prompt = eval_runtime::services::JudgePrompt::new(
        "politeness",
        1,
        "Is it polite? Reply {\"polite\": 0 or 1}.",
    )
    .block("answer", "Thanks!");
    let mut usage = Usage::default();
    judge.ask_json(&prompt, &mut usage).await.unwrap();
    let embed_server = common::serve(|_, _, _| {
        Reply::json(
            200,
            json!({"object": "list", "data": [{"object": "embedding", "embedding": [0.1, 0.2], "index": 0}]})
                .to_string(),
        )
    })
    .await;
    let embedder = Embedder::new(&format!("{}/v1", embed_server.url), "smollm2").unwrap();
    let mut embedded = Usage::default();
    embedder
        .embed(&["Paris is in France."], &mut embedded)
        .await
        .unwrap();
    if cfg!(feature = "tokenizer") {
        assert!(
            usage.prompt_tokens > 20 && usage.completion_tokens > 0,
            "{usage:?}"
        );
        assert_eq!(usage.estimated_tokens, usage.tokens());
        assert_eq!(
            embedded.prompt_tokens, 5,
            "o200k_base: `Paris is in France.`"
        );
        assert_eq!(embedded.estimated_tokens, 5);
    } else {
        assert_eq!((usage.unreported, embedded.unreported), (1, 1));
    }
}

/// The embeddings server the failing agent below asks (set once).
static EMBED_URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// A RAG agent that embeds its query, then fails.
async fn embeds_then_fails(sample: &Sample) -> Result<Response, String> {
    let url = EMBED_URL.get().expect("the server is up");
    let embedder = Embedder::new(url, "smollm2").map_err(|e| e.to_string())?;
    let mut usage = Usage::default();
    embedder
        .embed(&[sample.input.last()], &mut usage)
        .await
        .map_err(|e| e.to_string())?;
    Err("the vector store is down".into())
}

#[test]
fn a_failed_agent_keeps_the_embeddings_it_asked_for() {
    let dir = scratch("embeds-fails", &[("capital.jsonl", CAPITAL)]);
    let body = json!({"object": "list", "data": [{"object": "embedding", "embedding": [0.1, 0.2], "index": 0}],
        "usage": {"prompt_tokens": 7, "total_tokens": 7}})
    .to_string();
    let url = common::serve_detached(move |_, _, _| Reply::json(200, body.clone())).url;
    EMBED_URL.set(format!("{url}/v1")).unwrap();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .config(config(vec![]))
        .dataset("capital.jsonl", "contains")
        .agent_fn(embeds_then_fails)
        .evaluate(args());
    let results = read(&out);
    let s = &results.samples[0];
    assert!(s.error.is_some(), "the agent failed");
    assert_eq!((s.embeddings.calls, s.embeddings.prompt_tokens), (1, 7));
    let _ = std::fs::remove_dir_all(dir);
}

/// An in-process agent whose reply came without usage and could not be
/// counted (what a build without the `tokenizer` feature records for a
/// stream without usage).
async fn uncounted(_: &Sample) -> Response {
    let mut r = Response::new("Paris").with_model("smollm2");
    r.usage.unreported = 1;
    r
}

#[test]
fn a_cost_gate_on_an_unknown_cost_is_not_a_pass() {
    let dir = scratch("gate", &[("capital.jsonl", CAPITAL)]);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .config(config(vec![("EVAL_PRICES", prices(&dir))]))
        .dataset("capital.jsonl", "contains")
        .gate("mean(cost_usd) <= 1")
        .agent_fn(uncounted)
        .evaluate(args());
    assert_ne!(out.code, 0, "the gate is missed: {:?}", out.error);
    let results = read(&out);
    let s = &results.samples[0];
    assert_eq!(s.cost_usd, None, "unknown, not $0");
    let why = s.cost_unknown.as_deref().unwrap();
    assert!(
        why.starts_with("the agent reported no usage for 1 repl(ies)"),
        "{why}"
    );
    let d = &results.datasets[0];
    assert_eq!(d.usage.cost_unknown, 1);
    let gate = d
        .metrics
        .iter()
        .find(|m| m.name == "cost_usd")
        .and_then(|m| m.gate.as_ref())
        .unwrap();
    assert!(
        gate.judged && !gate.passed && gate.unscored == 1,
        "{gate:?}"
    );
    let said = gate.to_string();
    assert!(
        said.ends_with(
            "missed: none of the 1 samples was of a known cost (see their `cost_unknown`)"
        ),
        "{said}"
    );
    assert!(
        d.usage
            .line()
            .contains("1 reply without usage (tokens unknown)"),
        "{}",
        d.usage.line()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A chat-completions answer of `content` with `usage`.
fn chat(content: &str, prompt: u64, completion: u64) -> String {
    json!({"id": "c", "object": "chat.completion", "model": "smollm2",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
    .to_string()
}

#[test]
fn a_sample_that_times_out_keeps_the_calls_and_tokens_it_spent() {
    // Two turns: the first is answered (30 + 4 tokens), the second never.
    let dir = scratch(
        "timeout",
        &[(
            "trip.jsonl",
            r#"{"id": "trip", "input": ["Hi, I plan a trip.", "Which museum holds the Mona Lisa?"], "expected": "Louvre"}
"#,
        )],
    );
    let server = common::serve_detached(|n, _, _| match n {
        1 => Reply::json(200, chat("Where to?", 30, 4)),
        _ => Reply::Hang,
    });
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("smollm2");
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .config(config(vec![
            ("EVAL_PRICES", prices(&dir)),
            ("EVAL_AGENT_MODEL", "smollm2".into()),
        ]))
        .dataset("trip.jsonl", "contains")
        .timeout(Duration::from_millis(700))
        .agent(agent)
        .evaluate(args());
    assert_eq!(out.code, 101);
    let results = read(&out);
    let s = &results.samples[0];
    assert_eq!(s.verdict, Verdict::Error);
    assert!(s.error.as_deref().unwrap().contains("0.7"), "{:?}", s.error);
    // Both requests were made; the first one's tokens were reported.
    assert_eq!(server.count(), 2);
    assert_eq!(s.agent.calls, 2, "{:?}", s.agent);
    assert_eq!((s.agent.prompt_tokens, s.agent.completion_tokens), (30, 4));
    // Priced at EVAL_AGENT_MODEL's prices (the answer that would name the
    // model never came): 30 · $1 + 4 · $2 per million.
    let cost = s.cost_usd.expect("a known cost");
    assert!((cost - 38e-6).abs() < 1e-15, "{cost}");
    assert_eq!(results.datasets[0].usage.agent.calls, 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sample_whose_scoring_times_out_keeps_the_agent_and_judge_calls() {
    let dir = scratch("scoring", &[("capital.jsonl", CAPITAL)]);
    let agent_server = common::serve_detached(|_, _, _| Reply::json(200, chat("Paris.", 20, 2)));
    // The judge never answers.
    let judge = common::serve_detached(|_, _, _| Reply::Hang);
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", agent_server.url))
        .unwrap()
        .model("smollm2");
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .config(config(vec![
            ("EVAL_PRICES", prices(&dir)),
            ("EVAL_AGENT_MODEL", "smollm2".into()),
            ("EVAL_JUDGE_URL", format!("{}/v1", judge.url)),
            ("EVAL_JUDGE_MODEL", "smollm2".into()),
            ("EVAL_CACHE", "off".into()),
        ]))
        .dataset("capital.jsonl", "rubric(rubric = \"Score 1.\") >= 0.5")
        .timeout(Duration::from_millis(700))
        .agent(agent)
        .evaluate(args());
    assert_eq!(out.code, 101);
    let results = read(&out);
    let s = &results.samples[0];
    assert_eq!(s.verdict, Verdict::Error);
    assert!(
        s.error.as_deref().unwrap().contains("scor"),
        "a scoring timeout: {:?}",
        s.error
    );
    assert_eq!(
        (
            s.agent.calls,
            s.agent.prompt_tokens,
            s.agent.completion_tokens
        ),
        (1, 20, 2)
    );
    assert!(s.usage.calls >= 1, "the judge was called: {:?}", s.usage);
    assert_eq!(judge.count() as u32, s.usage.calls);
    // 20 · $1 + 2 · $2 per million.
    let cost = s.cost_usd.expect("a known cost");
    assert!((cost - 24e-6).abs() < 1e-15, "{cost}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_tool_call_with_broken_arguments_scores_its_name_and_fails_its_arguments() {
    // What a small model writes: the arguments cut off mid-string.
    let broken = r#"{"expression": "2 + "#;
    let server = common::serve_detached(move |_, _, _| {
        Reply::json(
            200,
            json!({"id": "c", "object": "chat.completion", "model": "smollm2",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": broken}}]}}],
                "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}})
            .to_string(),
        )
    });
    let dir = scratch(
        "tools",
        &[(
            "calc.jsonl",
            r#"{"id": "add", "input": "What is 2 + 3?", "expected": "calculator", "expected_tools": [{"name": "calculator", "arguments": {"expression": "2 + 3"}}]}
"#,
        )],
    );
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("smollm2");
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .dataset(
            "calc.jsonl",
            "tool_called, tool_correctness, tool_call_f1 >= 0.5",
        )
        .agent(agent)
        .evaluate(args());
    assert_eq!(out.code, 101, "the argument metric fails the sample");
    let results = read(&out);
    let s = &results.samples[0];
    assert_eq!(s.error, None, "the sample is scored, not an error");
    assert_eq!(s.verdict, Verdict::Fail);
    let metric = |name: &str| s.metrics.iter().find(|m| m.name == name).unwrap();
    // By name: scored and passed.
    assert_eq!(metric("tool_called").score, Some(1.0));
    assert!(metric("tool_called").passed);
    assert_eq!(metric("tool_correctness").score, Some(1.0));
    // By arguments: 0, the parse error as the reason.
    let f1 = metric("tool_call_f1");
    assert_eq!(
        (f1.score, f1.passed, f1.error.as_deref()),
        (Some(0.0), false, None)
    );
    let reason = f1.reason.as_deref().unwrap();
    assert!(
        reason.contains(
            "`calculator`: its arguments are not a JSON object (not valid JSON: EOF while parsing a string at line 1 column 20)"
        ),
        "{reason}"
    );
    assert!(reason.contains(r#"{"expression": "2 + "#), "{reason}");
    // The call is kept as sent.
    let call = &s.tool_calls[0];
    assert_eq!(call.name, "calculator");
    assert_eq!(call.invalid_arguments.as_ref().unwrap().raw, broken);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn per_token_embeddings_are_mean_pooled() {
    // Two texts of 3 and 2 tokens, 4 dimensions each.
    let first = [
        [0.1, 0.2, 0.3, 0.4],
        [0.5, 0.6, 0.7, 0.8],
        [0.9, 1.0, 1.1, 1.2],
    ];
    let second = [[1.0, -1.0, 2.0, -2.0], [3.0, 1.0, 0.0, 2.0]];
    let body = json!({"object": "list", "model": "/models/smollm2.gguf", "data": [
        {"object": "embedding", "embedding": first, "index": 0},
        {"object": "embedding", "embedding": second, "index": 1},
    ], "usage": {"prompt_tokens": 5, "total_tokens": 5}})
    .to_string();
    let server = common::serve(move |_, _, _| Reply::json(200, body.clone())).await;
    let embedder = Embedder::new(&format!("{}/v1", server.url), "smollm2").unwrap();
    let mut usage = Usage::default();
    let vectors = embedder
        .embed(&["Paris is in France.", "Hi."], &mut usage)
        .await
        .unwrap();
    let mean = |rows: &[[f64; 4]]| -> Vec<f64> {
        (0..4)
            .map(|d| rows.iter().map(|r| r[d]).sum::<f64>() / rows.len() as f64)
            .collect()
    };
    for (got, want) in vectors.iter().zip([mean(&first), mean(&second)]) {
        assert_eq!(got.len(), 4);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}");
        }
    }
    assert_eq!((usage.calls, usage.prompt_tokens), (1, 5));
}
