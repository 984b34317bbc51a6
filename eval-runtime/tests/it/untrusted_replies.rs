//! Agents and judges on loopback that report what cannot be true: token
//! counts of `u64::MAX` (no panic in a debug build, not counted, said so),
//! and answers that are not UTF-8 (the agent's error, naming the byte
//! offset, never an answer decoded lossily and scored).

use std::sync::Arc;

use eval_runtime::results::Verdict;
use eval_runtime::services::{Judge, JudgePrompt, Usage};
use eval_runtime::{AgentError, Config, HttpAgent, MetricSpec, Protocol, Sample};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::common;

use common::Reply;

/// An OpenAI chat completion saying `content` and reporting `prompt` and
/// `completion` tokens.
fn completion(content: &str, prompt: u64, completion: u64) -> String {
    json!({
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    })
    .to_string()
}

#[tokio::test]
async fn an_agent_reporting_u64_max_tokens_is_not_counted_and_nothing_overflows() {
    let server = common::serve(|n, _, _| {
        let tokens = if n == 2 { 7 } else { u64::MAX };
        Reply::json(200, completion("Paris", tokens, u64::MAX - 1))
    })
    .await;
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .protocol(Protocol::OpenAi)
        .model("m");
    // Three turns, three replies: two claim u64::MAX tokens (their sum
    // overflowed the totals before), one claims 7 + u64::MAX - 1.
    let sample = Sample::new("").with_turns(["a", "b", "c"]);
    let response = agent.respond(&sample).await.unwrap();
    let u = response.usage;
    assert_eq!((u.calls, u.prompt_tokens, u.completion_tokens), (3, 0, 0));
    assert_eq!(u.not_credible, 3, "{u:?}");
    assert_eq!(response.output, "Paris");
}

#[test]
fn a_sample_whose_agent_reports_u64_max_tokens_is_scored_and_says_so() {
    let server =
        common::serve_detached(|_, _, _| Reply::json(200, completion("Paris", u64::MAX, u64::MAX)));
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .protocol(Protocol::OpenAi)
        .model("m");
    let spec = MetricSpec::new("contains", &[], None).unwrap();
    let sample = Sample::new("Capital?").with_expected("Paris");
    let report = eval_runtime::evaluate_blocking("x", &sample, &[spec], async |s: &Sample| {
        agent.respond(s).await
    });
    assert!(report.passed(), "{}", report.render());
    assert_eq!(
        (
            report.agent.calls,
            report.agent.prompt_tokens,
            report.agent.not_credible
        ),
        (1, 0, 1)
    );
}

#[tokio::test]
async fn a_credible_agent_reply_is_counted() {
    let server = common::serve(|_, _, _| Reply::json(200, completion("ok", 1_000, 20))).await;
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .protocol(Protocol::OpenAi)
        .model("m");
    let u = agent.respond(&Sample::new("hi")).await.unwrap().usage;
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens, u.not_credible),
        (1_000, 20, 0)
    );
}

fn judge_config(url: &str) -> Config {
    let url = url.to_string();
    Config::from_vars(
        move |name| {
            Ok(match name {
                "EVAL_JUDGE_URL" => Some(url.clone()),
                "EVAL_CACHE" => Some("off".into()),
                _ => None,
            })
        },
        &[],
    )
    .unwrap()
}

#[tokio::test]
async fn a_judge_reporting_u64_max_tokens_is_not_counted_and_nothing_overflows() {
    let server =
        common::serve(|_, _, _| Reply::json(200, completion(r#"{"ok": 1}"#, u64::MAX, u64::MAX)))
            .await;
    let judge = Judge::from_config(&judge_config(&server.url)).unwrap();
    let mut usage = Usage::default();
    for text in ["one", "two", "three"] {
        let prompt = JudgePrompt::new("t", 1, "Judge it.").block("text", text);
        let answer = judge.ask_json(&prompt, &mut usage).await.unwrap();
        assert_eq!(answer, json!({"ok": 1}));
    }
    assert_eq!(usage.calls, 3);
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (0, 0));
    assert_eq!(usage.not_credible, 3);
    // Totals of such usages saturate rather than overflow.
    let mut total = usage;
    total.prompt_tokens = u64::MAX;
    total.add(total);
    assert_eq!(total.prompt_tokens, u64::MAX);
    assert_eq!(total.tokens(), u64::MAX);
}

/// A raw server answering every request with `head` then `body`, bytes as
/// they are (not necessarily UTF-8).
async fn raw(head: &'static str, body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let body = Arc::new(body);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                while common::read_request(&mut stream).await.is_some() {
                    let reply = [
                        format!(
                            "HTTP/1.1 200 OK\r\n{head}\r\ncontent-length: {}\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                        &body,
                    ]
                    .concat();
                    if stream.write_all(&reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// The agent's error for a sample, which must be a `BadResponse`.
async fn bad_response(agent: &HttpAgent) -> String {
    match agent.respond_to(&Sample::new("hi")).await {
        Err(e @ AgentError::BadResponse { .. }) => {
            let line = e.to_string();
            assert_eq!(line.lines().count(), 1, "{line}");
            line
        }
        other => panic!("expected a BadResponse, got {other:?}"),
    }
}

#[tokio::test]
async fn a_json_answer_that_is_not_utf8_is_an_agent_error_naming_the_offset() {
    // `{"output": "caf` is 15 bytes: the 0xFF is byte 15.
    let url = raw(
        "content-type: application/json",
        b"{\"output\": \"caf\xFF\"}".to_vec(),
    )
    .await;
    let agent = HttpAgent::new(&url).unwrap();
    let line = bad_response(&agent).await;
    assert!(
        line.ends_with(
            "sent an answer that could not be read: the answer is not text: invalid UTF-8 at byte offset 15 of the body"
        ),
        "{line}"
    );
}

/// An OpenAI stream whose second chunk's content holds a byte that is not
/// UTF-8, at `offset` in the body.
fn broken_stream() -> (Vec<u8>, usize) {
    let first = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Par\"}}]}\n\n".to_vec();
    let second_start = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"is".to_vec();
    let offset = first.len() + second_start.len();
    let body = [
        first,
        second_start,
        b"\xC3(\"}}]}\n\ndata: [DONE]\n\n".to_vec(),
    ]
    .concat();
    (body, offset)
}

#[tokio::test]
async fn a_stream_that_is_not_utf8_is_an_agent_error_naming_the_offset() {
    let (body, offset) = broken_stream();
    let url = raw("content-type: text/event-stream", body).await;
    let agent = HttpAgent::new(&url)
        .unwrap()
        .protocol(Protocol::OpenAi)
        .model("m")
        .stream(true);
    let line = bad_response(&agent).await;
    assert!(
        line.ends_with(&format!(
            "the event stream is not text: invalid UTF-8 at byte offset {offset} of the body"
        )),
        "{line}"
    );
}

#[test]
fn a_sample_whose_agent_answers_bytes_that_are_not_utf8_is_an_error_not_a_failure() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (body, _) = broken_stream();
    let url = rt.block_on(raw("content-type: text/event-stream", body));
    let json_url = rt.block_on(raw(
        "content-type: application/json",
        b"{\"output\": \"Par\xFFis\"}".to_vec(),
    ));
    // The runtime keeps serving on a thread of its own.
    std::thread::spawn(move || rt.block_on(std::future::pending::<()>()));
    let spec = MetricSpec::new("contains", &[], None).unwrap();
    let sample = Sample::new("Capital of France?").with_expected("Paris");
    for agent in [
        HttpAgent::new(&url)
            .unwrap()
            .protocol(Protocol::OpenAi)
            .model("m")
            .stream(true),
        HttpAgent::new(&json_url).unwrap(),
    ] {
        let report = eval_runtime::evaluate_blocking(
            "x",
            &sample,
            std::slice::from_ref(&spec),
            async |s: &Sample| agent.respond(s).await,
        );
        assert_eq!(Verdict::of(&report), Verdict::Error, "{}", report.render());
        let error = report.error.as_ref().map(ToString::to_string).unwrap();
        assert!(error.contains("invalid UTF-8 at byte offset"), "{error}");
        assert!(report.output.is_none(), "no answer was scored");
    }
}

#[tokio::test]
async fn a_judge_answer_that_is_not_utf8_says_so_with_the_offset() {
    let url = raw(
        "content-type: application/json",
        b"{\"choices\": [\xFF]}".to_vec(),
    )
    .await;
    let judge = Judge::from_config(&judge_config(&url)).unwrap();
    let mut usage = Usage::default();
    let prompt = JudgePrompt::new("t", 1, "Judge it.").block("text", "x");
    let e = judge.ask_json(&prompt, &mut usage).await.unwrap_err();
    assert!(
        e.to_string()
            .ends_with("the answer is not text: invalid UTF-8 at byte offset 13 of the body"),
        "{e}"
    );
    assert_eq!(usage.calls, 1, "not retried");
}
