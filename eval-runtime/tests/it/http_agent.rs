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

// Any HTTP agent, mapped by settings (request template, method, query,
// headers; answer paths; text/plain). The servers below answer as the real
// ones do: LangServe 0.3.3's `/invoke` (langserve/api_handler.py `invoke`:
// `{"output": dumpd(output), "metadata": {"run_id", "feedback_tokens"}}`,
// the request `{"input", "config", "kwargs"}` of validation.py), whose
// output for a chat chain is langchain-core 1.8.4's `AIMessage` dumped
// (`content`, `tool_calls: [{"name", "args", "id", "type"}]`,
// `usage_metadata: {"input_tokens", "output_tokens", "total_tokens"}`);
// a service answering `{"question"}` with `{"data": {"answer", "sources"}}`;
// one answering with the whole conversation; one answering text/plain.

/// A loopback HTTP/1.1 server answering each request with `respond(head,
/// body)`: status, content type, body. Every request is logged.
async fn serve_typed<F>(respond: F) -> common::Server
where
    F: Fn(&str, &serde_json::Value) -> (u16, &'static str, String) + Send + Sync + 'static,
{
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests: std::sync::Arc<std::sync::Mutex<Vec<common::Logged>>> = Default::default();
    let log = requests.clone();
    let respond = std::sync::Arc::new(respond);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (log, respond) = (log.clone(), respond.clone());
            tokio::spawn(async move {
                while let Some((head, body)) = common::read_request(&mut stream).await {
                    let json = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
                    log.lock().unwrap().push((head.clone(), json.clone()));
                    let (status, ctype, body) = respond(&head, &json);
                    let reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    common::Server { url, requests }
}

/// An agent at `url` mapped by these `EVAL_AGENT_*` variables (read by
/// `Config`, as every front end reads them).
fn mapped_agent(url: &str, vars: &[(&str, &str)]) -> HttpAgent {
    let var = |name: &str| {
        Ok(vars
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string()))
    };
    let config = eval_runtime::Config::from_vars(var, &[]).unwrap();
    let agent = HttpAgent::from_config(&config, Some(url)).unwrap();
    agent.check().unwrap();
    agent
}

#[tokio::test]
async fn a_langserve_invoke_endpoint_is_mapped() {
    let server = serve_typed(|head, body| {
        assert!(head.starts_with("POST /rag/invoke "), "{head}");
        let question = body["input"]["question"].as_str().unwrap_or_default();
        let output = serde_json::json!({
            "content": format!("Paris. ({question})"),
            "additional_kwargs": {}, "response_metadata": {"finish_reason": "stop"},
            "type": "ai", "name": null, "id": "run-3f2a", "example": false,
            "tool_calls": [{"name": "lookup", "args": {"q": question}, "id": "call_1", "type": "tool_call"}],
            "invalid_tool_calls": [],
            "usage_metadata": {"input_tokens": 21, "output_tokens": 5, "total_tokens": 26},
        });
        let metadata = serde_json::json!({"run_id": "0b7e4c1a-7d35-4a4f-9d3c-2f1b1a6f9e01", "feedback_tokens": []});
        (200, "application/json", serde_json::json!({"output": output, "metadata": metadata}).to_string())
    })
    .await;
    let agent = mapped_agent(
        &format!("{}/rag/invoke", server.url),
        &[
            (
                "EVAL_AGENT_REQUEST",
                r#"{"input": {"question": "{input}"}, "config": {}, "kwargs": {}}"#,
            ),
            ("EVAL_AGENT_OUTPUT", "output.content"),
            ("EVAL_AGENT_TOOL_CALLS", "/output/tool_calls"),
            (
                "EVAL_AGENT_USAGE_PROMPT_TOKENS",
                "output.usage_metadata.input_tokens",
            ),
            (
                "EVAL_AGENT_USAGE_COMPLETION_TOKENS",
                "output.usage_metadata.output_tokens",
            ),
        ],
    );
    let r = agent
        .respond(&Sample::new("Capital of France?"))
        .await
        .unwrap();
    assert_eq!(r.output, "Paris. (Capital of France?)");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "lookup");
    assert_eq!(r.tool_calls[0].arguments["q"], "Capital of France?");
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (21, 5));
    assert_eq!(
        server.requests.lock().unwrap()[0].1,
        serde_json::json!({"input": {"question": "Capital of France?"}, "config": {}, "kwargs": {}})
    );

    // A runnable whose output is a string: only the request is mapped, the
    // answer's `output` is read as the JSON contract reads it.
    let server = serve_typed(|_, body| {
        let text = format!("echo: {}", body["input"].as_str().unwrap_or_default());
        let metadata = serde_json::json!({"run_id": "0b7e4c1a-7d35-4a4f-9d3c-2f1b1a6f9e02", "feedback_tokens": []});
        (200, "application/json", serde_json::json!({"output": text, "metadata": metadata}).to_string())
    })
    .await;
    let agent = mapped_agent(
        &format!("{}/echo/invoke", server.url),
        &[("EVAL_AGENT_REQUEST", r#"{"input": "{input}"}"#)],
    );
    assert_eq!(
        agent.respond(&Sample::new("hi")).await.unwrap().output,
        "echo: hi"
    );
}

#[tokio::test]
async fn a_nested_data_answer_with_sources_and_a_tenant_header() {
    let server = serve_typed(|head, body| {
        if !head
            .to_ascii_lowercase()
            .contains("x-tenant: acme-tenant-0042")
        {
            return (
                401,
                "application/json",
                r#"{"error": "unknown tenant"}"#.into(),
            );
        }
        let answer = format!("{} -> Paris", body["question"].as_str().unwrap_or_default());
        let data = serde_json::json!({"data": {"answer": answer, "sources": [
            {"text": "Paris is the capital of France.", "score": 0.91},
            {"text": "France is in Europe.", "score": 0.55}]}, "k": body["k"]});
        (200, "application/json; charset=utf-8", data.to_string())
    })
    .await;
    let vars = [
        (
            "EVAL_AGENT_REQUEST",
            r#"{"question": "{input}", "k": "{agent_args.top_k}", "note": "top {agent_args.top_k}"}"#,
        ),
        ("EVAL_AGENT_HEADERS", "X-Tenant=acme-tenant-0042"),
        ("EVAL_AGENT_OUTPUT", "data.answer"),
        ("EVAL_AGENT_CONTEXT", "data.sources[*].text"),
    ];
    let agent = mapped_agent(&server.url, &vars);
    assert!(!format!("{agent:?}").contains("acme-tenant"), "{agent:?}");
    let mut sample = Sample::new("Capital?");
    sample.agent_args.insert("top_k".into(), 2.into());
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(r.output, "Capital? -> Paris");
    assert_eq!(
        r.context,
        ["Paris is the capital of France.", "France is in Europe."]
    );
    assert_eq!(
        server.requests.lock().unwrap()[0].1,
        serde_json::json!({"question": "Capital?", "k": 2, "note": "top 2"})
    );

    // A path the answer lacks: the setting, the path, where it stopped and
    // the body, on one line; the header's value is never in it.
    let agent = mapped_agent(
        &server.url,
        &[vars[0], vars[1], ("EVAL_AGENT_OUTPUT", "data.result.text")],
    );
    let err = agent.respond(&sample).await.unwrap_err().to_string();
    assert!(
        err.contains("EVAL_AGENT_OUTPUT (`data.result.text`): `data` has no key `result` (its keys: answer, sources); body: {\"data\":{\"answer\":\"Capital? -> Paris\""),
        "{err}"
    );
    assert!(!err.contains('\n') && !err.contains("acme-tenant"), "{err}");
    // A sample without the argument the template needs fails before any request.
    let before = server.count();
    let err = agent
        .respond(&Sample::new("no args"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "EVAL_AGENT_REQUEST: `{agent_args.top_k}`: the sample has no agent_args.top_k"
        ),
        "{err}"
    );
    assert_eq!(server.count(), before);
}

#[tokio::test]
async fn an_agent_answering_with_the_conversation_gives_its_last_message() {
    let server = serve_typed(|_, body| {
        let mut messages = body["messages"].as_array().cloned().unwrap_or_default();
        let n = messages.len();
        messages.push(serde_json::json!({"role": "assistant", "content": format!("reply {n}")}));
        (
            200,
            "application/json",
            serde_json::json!({"messages": messages, "thread_id": "t1"}).to_string(),
        )
    })
    .await;
    let agent = mapped_agent(
        &server.url,
        &[
            ("EVAL_AGENT_REQUEST", r#"{"messages": "{messages}"}"#),
            ("EVAL_AGENT_OUTPUT", "messages[-1].content"),
        ],
    );
    let sample = Sample::new("").with_turns(["Hi, I am Ada", "Who am I?"]);
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(r.turn_outputs, ["reply 1", "reply 3"]);
    let log = server.requests.lock().unwrap();
    assert_eq!(
        log[1].1["messages"],
        serde_json::json!([
            {"role": "user", "content": "Hi, I am Ada"},
            {"role": "assistant", "content": "reply 1"},
            {"role": "user", "content": "Who am I?"},
        ])
    );
}

#[tokio::test]
async fn a_text_plain_agent_reached_by_get_with_a_query() {
    let server = serve_typed(|head, _| {
        let line = head.lines().next().unwrap_or_default().to_string();
        (
            200,
            "text/plain; charset=utf-8",
            format!("You asked: {line}\n"),
        )
    })
    .await;
    let agent = mapped_agent(
        &format!("{}/ask?lang=en", server.url),
        &[
            ("EVAL_AGENT_METHOD", "GET"),
            ("EVAL_AGENT_QUERY", "q={input}&k={agent_args.k}"),
        ],
    );
    let mut sample = Sample::new("What is RAG & why?");
    sample.agent_args.insert("k".into(), 3.into());
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(
        r.output,
        "You asked: GET /ask?lang=en&q=What+is+RAG+%26+why%3F&k=3 HTTP/1.1"
    );
    // A path set for a JSON answer cannot read text: said, with the body.
    let agent = mapped_agent(
        &server.url,
        &[
            ("EVAL_AGENT_METHOD", "GET"),
            ("EVAL_AGENT_OUTPUT", "answer"),
        ],
    );
    let err = agent.respond(&sample).await.unwrap_err().to_string();
    assert!(
        err.contains("EVAL_AGENT_OUTPUT (`answer`): the agent answered text/plain, not JSON; body: You asked: GET / HTTP/1.1"),
        "{err}"
    );
    // GET with a body template is refused before any request.
    let var = |name: &str| {
        Ok(match name {
            "EVAL_AGENT_METHOD" => Some("GET".to_string()),
            "EVAL_AGENT_REQUEST" => Some(r#"{"q": "{input}"}"#.to_string()),
            _ => None,
        })
    };
    let config = eval_runtime::Config::from_vars(var, &[]).unwrap();
    let err = HttpAgent::from_config(&config, Some(&server.url))
        .unwrap()
        .check()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("EVAL_AGENT_METHOD is GET, which sends no body"),
        "{err}"
    );
}

#[test]
fn urls_lose_credentials() {
    let agent = HttpAgent::new("http://user:s3cret@127.0.0.1:9/x?key=s3cret").unwrap();
    assert_eq!(agent.url(), "http://127.0.0.1:9/x");
    let agent = agent.api_key("sk-very-secret");
    assert!(!format!("{agent:?}").contains("secret"));
    assert!(HttpAgent::new("ftp://x").is_err());
    assert!(HttpAgent::new("not a url").is_err());
}
