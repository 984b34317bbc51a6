//! `HttpAgent` against real HTTP servers on loopback that misbehave on purpose.

use std::time::{Duration, Instant};

use eval_runtime::{Error, HttpAgent, MetricSpec, Sample};

use crate::common;

use common::Reply;

/// How the scripted server answers each request.
#[derive(Clone)]
enum Script {
    /// Status and body.
    Reply(u16, &'static str),
    /// Echo `{"output": "<n>: <input>", "context": [...]}`, n = request count.
    Echo,
    /// Accept, read, never answer.
    Hang,
}

/// A scripted agent at `<server>/agent`.
async fn start(script: Script) -> common::Server {
    let mut server = common::serve(move |n, _, json| match &script {
        Script::Reply(s, b) => Reply::json(*s, *b),
        Script::Echo => Reply::json(
            200,
            serde_json::json!({
                "output": format!("{n}: {}", json["input"].as_str().unwrap_or("")),
                "context": ["chunk"],
            })
            .to_string(),
        ),
        Script::Hang => Reply::Hang,
    })
    .await;
    server.url.push_str("/agent");
    server
}

#[tokio::test]
async fn sends_the_contract_body_and_reads_output_and_context() {
    let server = start(Script::Echo).await;
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .api_key("sk-test-SECRET");
    let mut sample = Sample::new("What is RAG?");
    sample.agent_args.insert("top_k".into(), 3.into());
    let response = agent.respond(&sample).await.unwrap();
    assert_eq!(response.output, "1: What is RAG?");
    assert_eq!(response.context, vec!["chunk"]);
    assert!(response.turn_outputs.is_empty());
    let log = server.requests.lock().unwrap();
    let (head, body) = &log[0];
    assert!(head.starts_with("POST /agent HTTP/1.1"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("authorization: bearer sk-test-secret"),
        "{head}"
    );
    assert_eq!(body["input"], "What is RAG?");
    assert_eq!(
        body["messages"],
        serde_json::json!([{"role": "user", "content": "What is RAG?"}])
    );
    assert_eq!(body["agent_args"]["top_k"], 3);
}

#[tokio::test]
async fn multi_turn_samples_send_the_conversation_so_far() {
    let server = start(Script::Echo).await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let sample = Sample::new("").with_turns(["My name is Ada", "What's my name?"]);
    let response = agent.respond(&sample).await.unwrap();
    assert_eq!(
        response.turn_outputs,
        vec!["1: My name is Ada", "2: What's my name?"]
    );
    assert_eq!(response.output, "2: What's my name?");
    let log = server.requests.lock().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[1].1["messages"],
        serde_json::json!([
            {"role": "user", "content": "My name is Ada"},
            {"role": "assistant", "content": "1: My name is Ada"},
            {"role": "user", "content": "What's my name?"},
        ])
    );
    assert_eq!(log[1].1["input"], "What's my name?");
}

#[tokio::test]
async fn openai_chat_completion_bodies_are_understood() {
    let server = start(Script::Reply(
        200,
        r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"},"finish_reason":"stop"}]}"#,
    ))
    .await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let r = agent
        .respond(&Sample::new("Capital of France?"))
        .await
        .unwrap();
    assert_eq!(r.output, "Paris");
}

async fn failure(script: Script, timeout: Duration) -> (Error, Duration) {
    let server = start(script).await;
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .timeout(timeout)
        .api_key("sk-SECRET-KEY");
    let started = Instant::now();
    let err = agent.respond(&Sample::new("hi")).await.unwrap_err();
    let msg = err.to_string();
    assert!(!msg.contains("SECRET"), "{msg}");
    assert_eq!(msg.lines().count(), 1, "{msg}");
    (err, started.elapsed())
}

#[tokio::test]
async fn http_errors_fail_with_one_line() {
    let (err, _) = failure(
        Script::Reply(500, r#"{"error": "boom\nstack"}"#),
        Duration::from_secs(5),
    )
    .await;
    assert!(
        matches!(
            err,
            Error::Agent(eval_runtime::AgentError::Status { status: 500, .. })
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("answered HTTP 500: {\"error\": \"boom\\nstack\"}"),
        "{err}"
    );

    let (err, _) = failure(
        Script::Reply(200, "<html>oops</html>"),
        Duration::from_secs(5),
    )
    .await;
    assert!(
        err.to_string().contains("could not be read: not JSON"),
        "{err}"
    );
    assert!(err.to_string().contains("<html>oops</html>"), "{err}");

    let (err, _) = failure(
        Script::Reply(200, r#"{"answer": "x"}"#),
        Duration::from_secs(5),
    )
    .await;
    assert!(err.to_string().contains("expected `output`"), "{err}");
}

#[tokio::test]
async fn an_echoed_api_key_is_masked_and_empty_bodies_say_so() {
    let server = start(Script::Reply(401, "invalid api key: Bearer sk-SECRET-KEY")).await;
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .api_key("sk-SECRET-KEY");
    let err = agent
        .respond(&Sample::new("hi"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("answered HTTP 401: invalid api key: Bearer <redacted>"),
        "{err}"
    );

    let server = start(Script::Reply(404, "")).await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let err = agent
        .respond(&Sample::new("hi"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.ends_with("answered HTTP 404: (empty body)"), "{err}");
}

#[tokio::test]
async fn conflicting_or_malformed_credentials_are_setup_errors() {
    let server = start(Script::Echo).await;
    let with_user = server.url.replace("http://", "http://user:pw@");
    let agent = HttpAgent::new(&with_user).unwrap().api_key("sk-x");
    let err = agent.respond(&Sample::new("hi")).await.unwrap_err();
    assert!(
        matches!(err, Error::Agent(eval_runtime::AgentError::Setup(_))),
        "{err}"
    );
    assert!(err.to_string().contains("use one"), "{err}");

    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .api_key("sk-x\nInjected: 1");
    let err = agent
        .respond(&Sample::new("hi"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid agent API key"), "{err}");
    assert!(!err.contains("sk-x"), "{err}");
    assert!(server.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_silent_agent_times_out() {
    let (err, took) = failure(Script::Hang, Duration::from_millis(300)).await;
    assert!(
        matches!(err, Error::Agent(eval_runtime::AgentError::Timeout { .. })),
        "{err}"
    );
    assert!(
        err.to_string().contains("did not answer within 0.3s"),
        "{err}"
    );
    assert!(took >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_refused_connection_fails_with_the_cause() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let agent = HttpAgent::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let err = agent.respond(&Sample::new("hi")).await.unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::Agent(eval_runtime::AgentError::Unreachable { .. })
        ),
        "{msg}"
    );
    assert!(msg.to_lowercase().contains("connection refused"), "{msg}");

    // In a test, that is the whole failure: one line naming sample and cause.
    let url = format!("http://127.0.0.1:{port}");
    let report = tokio::task::spawn_blocking(move || {
        let spec = MetricSpec::new("contains", &[], None).unwrap();
        let sample = Sample::new("hi").with_expected("x");
        eval_runtime::evaluate_blocking("rag::hi", &sample, &[spec], async |s: &Sample| {
            HttpAgent::new(&url)?.respond(s).await
        })
    })
    .await
    .unwrap();
    let text = report.render();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("rag::hi (<inline>, id 0): agent at http://127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.contains("unreachable: tcp connect error: Connection refused"),
        "{text}"
    );
}

#[test]
fn failing_samples_get_a_readable_report() {
    let spec = |n: &str| MetricSpec::new(n, &[], None).unwrap();
    let specs = [spec("contains"), spec("partial_match")];
    let sample = Sample::new("What is RAG?").with_expected("Retrieval Augmented Generation");
    let report =
        eval_runtime::evaluate_blocking("rag::what_is_rag", &sample, &specs, async |_: &Sample| {
            eval_runtime::Response::new("Retrieval is a step.")
        });
    assert!(!report.passed());
    let text = report.render();
    assert!(
        text.starts_with("FAILED rag::what_is_rag (<inline>, id 0)"),
        "{text}"
    );
    assert!(text.contains("  input:    What is RAG?\n"), "{text}");
    assert!(
        text.contains("  expected: Retrieval Augmented Generation\n"),
        "{text}"
    );
    assert!(
        text.contains("  actual:   Retrieval is a step.\n"),
        "{text}"
    );
    // contains: 0; partial_match: pred [retrieval, is, step] vs gold [retrieval, augmented,
    // generation]: common 1, P = R = 1/3, F1 = 1/3.
    assert!(
        text.contains("contains       0.000   >= 1.000    FAIL"),
        "{text}"
    );
    assert!(
        text.contains("partial_match  0.333   >= 0.500    FAIL"),
        "{text}"
    );

    // A missing field fails before the agent is called.
    let no_expected = Sample::new("Hi");
    let report = eval_runtime::evaluate_blocking(
        "x",
        &no_expected,
        &specs,
        async |_: &Sample| -> eval_runtime::Response { panic!("the agent must not be called") },
    );
    assert_eq!(
        report.error.as_ref().map(ToString::to_string).as_deref(),
        Some(
            "sample has no `expected` field (or expected_output, ground_truth, ideal, reference, expected_response), which metric `contains` needs"
        )
    );
}

#[test]
fn connections_never_cross_runtimes() {
    // A connection pooled by a runtime that is alive but no longer driven must
    // not be handed to another runtime: it would stall until the timeout.
    let url = common::serve_detached(|n, _, json| {
        Reply::json(
            200,
            serde_json::json!({"output": format!("{n}: {}", json["input"].as_str().unwrap_or(""))})
                .to_string(),
        )
    })
    .url;
    let agent = HttpAgent::new(&url)
        .unwrap()
        .timeout(Duration::from_secs(2));
    let idle = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = idle.block_on(agent.respond(&Sample::new("one"))).unwrap();
    assert_eq!(first.output, "1: one");
    // `idle` stays alive, undriven; the next call runs on the shared runtime.
    let spec = MetricSpec::new("contains", &[], None).unwrap();
    let sample = Sample::new("two").with_expected("two");
    let started = Instant::now();
    let report = eval_runtime::evaluate_blocking("x", &sample, &[spec], async |s: &Sample| {
        agent.respond(s).await
    });
    assert!(report.passed(), "{}", report.render());
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(idle);
}

#[tokio::test]
async fn a_response_mapping_may_fail_with_any_error_and_its_causes_are_said() {
    #[derive(Debug, thiserror::Error)]
    #[error("no `answer` in the body")]
    struct NoAnswer(#[source] std::io::Error);

    let server = start(Script::Reply(200, r#"{"answer": "x"}"#)).await;
    // An error type of one's own: its source is added to the reason.
    let agent = HttpAgent::new(&server.url).unwrap().map_response(|_| {
        Err::<eval_runtime::AgentReply, _>(NoAnswer(std::io::Error::other("the inner cause")))
    });
    let e = agent.respond(&Sample::new("q")).await.unwrap_err();
    let Error::Agent(eval_runtime::AgentError::BadResponse { reason, .. }) = &e else {
        panic!("{e:?}");
    };
    assert_eq!(reason, "no `answer` in the body: the inner cause");
    // default_reply's typed error, passed on with `?`.
    let agent = HttpAgent::new(&server.url).unwrap().map_response(|v| {
        let mut reply = eval_runtime::default_reply(v)?;
        reply.output = reply.output.trim().to_string();
        Ok::<_, eval_runtime::ReplyError>(reply)
    });
    let e = agent.respond(&Sample::new("q")).await.unwrap_err();
    assert!(e.to_string().contains("found keys: answer"), "{e}");
    // A plain string still does.
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .map_response(|_| Err::<eval_runtime::AgentReply, _>("not mine".to_string()));
    let e = agent.respond(&Sample::new("q")).await.unwrap_err();
    assert!(
        e.to_string().ends_with("could not be read: not mine"),
        "{e}"
    );
}
