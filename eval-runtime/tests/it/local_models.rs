//! The settings of the local-models guide (docs/src/local-models.md)
//! against a server that answers one request at a time, as
//! llama-cpp-python 0.3's server does (one lock around its model): a small
//! run completes with no timeout, and a request's timeout does not count
//! its wait for a place in this process.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use eval_runtime::results::Results;
use eval_runtime::services::Judge;
use eval_runtime::{Harness, HttpAgent};
use serde_json::Value;

use crate::common;
use crate::providers::{ask_about, config};

/// A model server that answers one request at a time (llama-cpp-python's
/// server holds one lock around its model): every request waits for the
/// one before it, then takes `each`. The second value is the most requests
/// it held at once (received, not yet answered).
async fn one_at_a_time(each: Duration) -> (common::Server, Arc<AtomicUsize>) {
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    let (held, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let seen = peak.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests: Arc<std::sync::Mutex<Vec<common::Logged>>> = Arc::default();
    let log = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (lock, log) = (lock.clone(), log.clone());
            let (held, peak) = (held.clone(), peak.clone());
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                while let Some((head, body)) = common::read_request(&mut stream).await {
                    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let answer = if json["model"] == "judge-m" {
                        common::chat(r#"{"score": 1, "rationale": "ok"}"#)
                    } else {
                        common::chat("an answer")
                    };
                    log.lock().unwrap().push((head, json));
                    peak.fetch_max(held.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    let guard = lock.lock().await;
                    tokio::time::sleep(each).await;
                    drop(guard);
                    held.fetch_sub(1, Ordering::SeqCst);
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                        answer.len()
                    );
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (common::Server { url, requests }, seen)
}

/// A judge request's timeout starts when it is sent: two questions at
/// `EVAL_JUDGE_CONCURRENCY=1` to a server taking 300 ms each, with a 450 ms
/// timeout, both answered at the first attempt although the second waited
/// 300 ms in this process's queue first.
#[tokio::test]
async fn a_judge_timeout_does_not_count_the_wait_for_its_place() {
    let (server, peak) = one_at_a_time(Duration::from_millis(300)).await;
    let c = config(&[
        ("EVAL_JUDGE_URL", format!("{}/v1", server.url)),
        ("EVAL_JUDGE_MODEL", "judge-m".into()),
        ("EVAL_JUDGE_CONCURRENCY", "1".into()),
        ("EVAL_JUDGE_TIMEOUT_SECS", "0.45".into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&c).unwrap();
    let started = std::time::Instant::now();
    // Different questions: the second does not wait for the first's answer
    // to share its prompt cache, only for its place.
    let ((a, ua), (b, ub)) = tokio::join!(ask_about(&judge, "one"), ask_about(&judge, "two"));
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "one after the other"
    );
    assert!(a.is_ok() && b.is_ok(), "{a:?} {b:?}");
    assert_eq!((ua.calls, ub.calls, ua.retries + ub.retries), (1, 1, 0));
    assert_eq!(peak.load(Ordering::SeqCst), 1);
}

/// The local-models guide's settings (docs/src/local-models.md) against a
/// server that answers one request at a time: every sample completes, with
/// no timeout; the default concurrency, with the same per-request
/// timeouts, times out waiting in the server's queue.
#[test]
fn a_one_at_a_time_server_completes_with_the_guides_settings() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, peak) = rt.block_on(one_at_a_time(Duration::from_millis(150)));
    let lines: String = (0..6)
        .map(|i| format!("{{\"id\": \"s{i}\", \"input\": \"q{i}\"}}\n"))
        .collect();
    let dir = std::env::temp_dir().join(format!("eval-providers-{}-local", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("qa.jsonl"), lines).unwrap();
    let run = |concurrency: &str| {
        let c = config(&[
            (
                "EVAL_AGENT_URL",
                format!("{}/v1/chat/completions", server.url),
            ),
            ("EVAL_AGENT_MODEL", "agent-m".into()),
            ("EVAL_JUDGE_URL", format!("{}/v1", server.url)),
            ("EVAL_JUDGE_MODEL", "judge-m".into()),
            ("EVAL_CONCURRENCY", concurrency.into()),
            ("EVAL_JUDGE_CONCURRENCY", "1".into()),
            // One answer's time and some: a request never waits behind another.
            ("EVAL_AGENT_TIMEOUT_SECS", "0.5".into()),
            ("EVAL_JUDGE_TIMEOUT_SECS", "0.5".into()),
            ("EVAL_AGENT_MAX_TOKENS", "256".into()),
            ("EVAL_CACHE", "off".into()),
            ("EVAL_HTML", "off".into()),
        ]);
        let agent = HttpAgent::from_config(&c, None).unwrap();
        let out = Harness::new()
            .base_dir(&dir)
            .results_file(dir.join(format!("out-{concurrency}.json")))
            .dataset("qa.jsonl", "rubric(rubric = \"Score 1.\") >= 0.5")
            .agent(agent)
            .config(c)
            .evaluate(common::harness_args(&["harness", "-q"]));
        let results = Results::read(out.results_path.as_ref().expect("a results file")).unwrap();
        let errors: Vec<String> = results
            .samples
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| e.to_string()))
            .collect();
        (out.code, errors)
    };
    let (code, errors) = run("1");
    assert_eq!(
        (code, errors.as_slice()),
        (0, &[][..] as &[String]),
        "the guide's settings"
    );
    let bodies: Vec<Value> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| b.clone())
        .collect();
    assert_eq!(
        bodies.len(),
        12,
        "6 agent calls and 6 judge calls, none retried"
    );
    assert!(
        bodies
            .iter()
            .filter(|b| b["model"] == "agent-m")
            .all(|b| b["max_tokens"] == 256),
        "every agent request is bounded"
    );
    let (code, errors) = run("6");
    assert_ne!(code, 0);
    assert!(
        peak.load(Ordering::SeqCst) > 3,
        "six agent calls queued at once"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("did not answer within 0.5s")),
        "six at once wait in the server's queue: {errors:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
