//! Every HTTP client (agent, judge, embeddings, retriever) against servers
//! that redirect elsewhere, answer too much, or cut the answer off: keys stay
//! with their origin, memory stays bounded, and each failure is one line.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use eval_runtime::retrieval::{HttpRetriever, Retriever};
use eval_runtime::services::{Embedder, Judge, JudgePrompt, ServiceError, Usage};
use eval_runtime::{AgentError, Config, HttpAgent, Refusal, Sample};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::common;

use common::Reply;

const AGENT_KEY: &str = "sk-agent-KEY-0123456789";
const JUDGE_KEY: &str = "sk-judge-KEY-9876543210";

fn config(vars: &[(&'static str, String)]) -> Config {
    let vars: Vec<(&'static str, String)> = vars.to_vec();
    Config::from_vars(
        move |name| {
            Ok(vars
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone()))
        },
        &[],
    )
    .unwrap()
}

/// A server that logs every request (head and body) and answers `reply`.
async fn elsewhere() -> common::Server {
    common::serve(|_, _, _| Reply::json(200, r#"{"output": "from elsewhere", "deleted": 99}"#))
        .await
}

/// A server answering every request with `status` and `Location: <to>`.
async fn redirecting(status: u16, to: String) -> common::Server {
    common::serve(move |_, _, _| {
        Reply::With(status, vec![format!("location: {to}")], String::new())
    })
    .await
}

/// A judge question holding `text`.
fn prompt(text: &str) -> JudgePrompt {
    JudgePrompt::new("m", 1, "Judge it.").block("text", text)
}

fn heads(server: &common::Server) -> Vec<String> {
    server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(h, _)| h.clone())
        .collect()
}

#[tokio::test]
async fn the_agent_never_follows_a_redirect_to_another_origin() {
    for status in [301, 302, 303, 307, 308] {
        let other = elsewhere().await;
        let agent_server = redirecting(status, format!("{}/stolen", other.url)).await;
        let agent = HttpAgent::from_config(
            &config(&[("EVAL_AGENT_API_KEY", AGENT_KEY.into())]),
            Some(&agent_server.url),
        )
        .unwrap();
        let err = agent.respond_to(&Sample::new("hi")).await.unwrap_err();
        assert!(
            heads(&other).is_empty(),
            "HTTP {status}: the other origin was called: {:?}",
            heads(&other)
        );
        let AgentError::Refused {
            refusal: Refusal::Redirect { from, to, .. },
            ..
        } = &err
        else {
            panic!("HTTP {status}: {err:?}");
        };
        assert!(from.starts_with(&agent_server.url), "{from}");
        assert_eq!(to, &format!("{}/stolen", other.url));
        let line = err.to_string();
        assert!(!line.contains('\n') && !line.contains(AGENT_KEY), "{line}");
        assert!(
            line.contains(&other.url) && line.contains(&agent_server.url),
            "{line}"
        );
    }
}

#[tokio::test]
async fn a_307_within_the_origin_is_followed_with_the_key() {
    let server = common::serve(|n, head, _| {
        if head.starts_with("POST /moved ") {
            Reply::json(200, format!(r#"{{"output": "answered by request {n}"}}"#))
        } else {
            Reply::With(307, vec!["location: /moved".into()], String::new())
        }
    })
    .await;
    let agent = HttpAgent::new(&format!("{}/agent", server.url))
        .unwrap()
        .api_key(AGENT_KEY);
    let response = agent.respond_to(&Sample::new("hi")).await.unwrap();
    assert_eq!(response.output, "answered by request 2");
    let heads = heads(&server);
    assert!(heads[1].starts_with("POST /moved"), "{heads:?}");
    assert!(
        heads[1].to_lowercase().contains(&format!(
            "authorization: bearer {}",
            AGENT_KEY.to_lowercase()
        )),
        "the same origin keeps the key: {heads:?}"
    );
}

#[tokio::test]
async fn judge_and_embeddings_keys_stay_with_their_origin() {
    let other = elsewhere().await;
    let server = redirecting(307, format!("{}/v1/chat/completions", other.url)).await;
    let cfg = config(&[
        ("EVAL_JUDGE_URL", format!("{}/v1", server.url)),
        ("EVAL_JUDGE_API_KEY", JUDGE_KEY.into()),
        ("EVAL_EMBED_URL", format!("{}/v1", server.url)),
        ("EVAL_EMBED_API_KEY", JUDGE_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&cfg).unwrap().max_retries(3);
    let mut usage = Usage::default();
    let err = judge
        .ask_json(&prompt("user"), &mut usage)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Refused {
                refusal: Refusal::Redirect { status: 307, .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(usage.calls, 1, "a refused redirect is not retried");
    let embedder = Embedder::from_config(&cfg).unwrap();
    let err = embedder.embed(&["text"], &mut usage).await.unwrap_err();
    assert!(matches!(err, ServiceError::Refused { .. }), "{err:?}");
    assert!(heads(&other).is_empty(), "{:?}", heads(&other));
    assert!(!err.to_string().contains(JUDGE_KEY));
}

#[tokio::test]
async fn the_retrievers_delete_is_not_followed_elsewhere() {
    let other = elsewhere().await;
    let server = redirecting(307, format!("{}/retrieval/delete", other.url)).await;
    let cfg = config(&[("EVAL_RETRIEVER_URL", format!("{}/retrieval", server.url))]);
    let retriever = HttpRetriever::from_config(&cfg).unwrap();
    let err = retriever.delete_prefix("eval:suite").await.unwrap_err();
    assert!(heads(&other).is_empty(), "the delete reached another host");
    assert!(
        err.to_string().contains("refused a redirect (HTTP 307)"),
        "{err}"
    );
}

/// A raw server: `answer` writes whatever it wants once the request head is
/// read (the body is not read).
async fn raw<F, Fut>(answer: F) -> String
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                answer(stream).await;
            });
        }
    });
    url
}

#[tokio::test]
async fn an_endless_stream_stops_at_the_limit() {
    let sent = Arc::new(Mutex::new(0usize));
    let counter = sent.clone();
    let url = raw(move |mut stream| {
        let counter = counter.clone();
        async move {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let chunk = vec![b'x'; 64 * 1024];
            let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
            // At most 64 MiB, so a client without a limit would still end.
            for _ in 0..1024 {
                if stream.write_all(&framed).await.is_err() {
                    return;
                }
                *counter.lock().unwrap() += chunk.len();
            }
        }
    })
    .await;
    let cfg = config(&[("EVAL_MAX_RESPONSE_BYTES", "1MiB".into())]);
    let agent = HttpAgent::from_config(&cfg, Some(&url)).unwrap();
    let err = agent.respond_to(&Sample::new("hi")).await.unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Refused {
                refusal: Refusal::TooLarge { limit: 1_048_576 },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().ends_with(
            "the answer is larger than the limit of 1048576 bytes (EVAL_MAX_RESPONSE_BYTES)"
        ),
        "{err}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    let sent = *sent.lock().unwrap();
    assert!(
        sent < 16 << 20,
        "the client stopped reading early ({sent} bytes sent)"
    );
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_reading() {
    let server = common::serve(|_, _, _| Reply::json(200, "x".repeat(300 * 1024))).await;
    let cfg = config(&[
        ("EVAL_MAX_RESPONSE_BYTES", "256KiB".into()),
        ("EVAL_JUDGE_URL", server.url.clone()),
        ("EVAL_RETRIEVER_URL", server.url.clone()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&cfg).unwrap();
    let mut usage = Usage::default();
    let err = judge.ask_json(&prompt("u"), &mut usage).await.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Refused {
                refusal: Refusal::TooLarge { limit: 262_144 },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        usage.calls, 1,
        "an answer over the limit is not asked again"
    );
    let retriever = HttpRetriever::from_config(&cfg).unwrap();
    let err = retriever.delete_prefix("eval:x").await.unwrap_err();
    assert!(err.to_string().contains("larger than the limit"), "{err}");
}

#[tokio::test]
async fn a_cut_off_or_slow_body_says_what_happened() {
    let url = raw(|mut stream| async move {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"output\": \"hal")
            .await;
        // Then the connection closes.
    })
    .await;
    let agent = HttpAgent::new(&url).unwrap();
    let err = agent.respond_to(&Sample::new("hi")).await.unwrap_err();
    let line = err.to_string();
    assert!(
        matches!(
            err,
            AgentError::Refused {
                refusal: Refusal::CutOff { received: 15, .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        line.contains("the answer was cut off after 15 bytes"),
        "{line}"
    );
    assert!(!line.contains("error decoding response body"), "{line}");

    let url = raw(|mut stream| async move {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"output\": ")
            .await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    })
    .await;
    let agent = HttpAgent::new(&url)
        .unwrap()
        .timeout(Duration::from_millis(300));
    let err = agent.respond_to(&Sample::new("hi")).await.unwrap_err();
    assert!(
        err.to_string().contains(
            "the answer was still arriving when the 0.3s timeout expired (11 bytes received)"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_judge_answer_without_choices_or_out_of_range_is_not_called_invalid_json() {
    let server = common::serve(|_, _, _| Reply::json(200, r#"{"choices": []}"#)).await;
    let cfg = config(&[
        ("EVAL_JUDGE_URL", server.url.clone()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&cfg).unwrap();
    let mut usage = Usage::default();
    let err = judge
        .ask_json(&prompt("u"), &mut usage)
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "the judge's answer could not be used after 3 attempt(s): no message text in the answer (`choices` is empty)"
    );
    let server = common::serve(|_, _, _| Reply::json(200, common::chat(r#"{"score": 7}"#))).await;
    let cfg = config(&[
        ("EVAL_JUDGE_URL", server.url.clone()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&cfg).unwrap();
    let err = judge
        .ask_checked(
            &prompt("u"),
            &mut usage,
            &|v: &serde_json::Value| match v["score"].as_f64() {
                Some(s) if (0.0..=1.0).contains(&s) => Ok(()),
                other => Err(format!("`score` {other:?} is not between 0 and 1")),
            },
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            "not the answer asked for: `score` Some(7.0) is not between 0 and 1; the judge wrote \"{\"score\": 7}\""
        ),
        "{err}"
    );
    assert!(!err.contains("JSON"), "{err}");
}

/// What judges.md's "What is retried" promises of a stalled answer: the
/// judge asks again, 5 attempts in all by default, and the error says it
/// stalled.
#[tokio::test]
async fn a_stalled_judge_answer_is_asked_five_times_as_the_guide_says() {
    let attempts = Arc::new(Mutex::new(0usize));
    let counter = attempts.clone();
    let url = raw(move |mut stream| {
        let counter = counter.clone();
        async move {
            *counter.lock().unwrap() += 1;
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"choices\": ")
                .await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    })
    .await;
    let judge = Judge::new(&format!("{url}/v1"), "m")
        .unwrap()
        .cache(None)
        .timeout(Duration::from_millis(200));
    let mut usage = Usage::default();
    let err = judge.ask_json(&prompt("u"), &mut usage).await.unwrap_err();
    assert_eq!(*attempts.lock().unwrap(), 5, "{err}");
    assert_eq!((usage.calls, usage.retries), (5, 4), "{err}");
    assert!(err.to_string().contains("still arriving"), "{err}");
}
