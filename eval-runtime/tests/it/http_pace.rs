//! Agent calls answered "overloaded" (429, 503) against real servers on
//! loopback: retried after `Retry-After` (seconds, a fraction, an HTTP
//! date) or a backoff, bounded and counted; nothing else retried; and an
//! agent that takes only a few calls at once gets every sample answered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use eval_runtime::plan::PlanBuilder;
use eval_runtime::{AgentError, Config, Error, HttpAgent, Runner, Sample};
use tokio::io::AsyncWriteExt;

use crate::common;

use common::Reply;

const OK: &str = r#"{"output": "fine"}"#;

/// A server answering the first `overloaded` requests with `status` and
/// `headers`, then `200`.
async fn overloaded_then_ok(overloaded: usize, status: u16, headers: &[&str]) -> common::Server {
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    common::serve(move |n, _, _| {
        if n <= overloaded {
            Reply::With(status, headers.clone(), r#"{"error": "slow down"}"#.into())
        } else {
            Reply::json(200, OK)
        }
    })
    .await
}

/// Calls the agent at `url` once; the response (or error) and the time taken.
async fn call(agent: HttpAgent) -> (Result<eval_runtime::Response, Error>, Duration) {
    let started = Instant::now();
    let outcome = agent.respond(&Sample::new("hello")).await;
    (outcome, started.elapsed())
}

#[tokio::test]
async fn retry_after_in_seconds_is_waited_out() {
    let server = overloaded_then_ok(1, 429, &["retry-after: 1"]).await;
    let (outcome, took) = call(HttpAgent::new(&server.url).unwrap()).await;
    let response = outcome.unwrap();
    assert_eq!(response.output, "fine");
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!((response.usage.calls, response.usage.retries), (2, 1));
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn retry_after_with_a_fraction_is_waited_out() {
    // 0.6 s: longer than the first backoff (at most 0.25 s), so the wait is
    // the header's, to the fraction.
    let server = overloaded_then_ok(2, 429, &["retry-after: 0.6"]).await;
    let (outcome, took) = call(HttpAgent::new(&server.url).unwrap()).await;
    let response = outcome.unwrap();
    assert!(took >= Duration::from_millis(1200), "2 × 0.6 s: {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!((response.usage.calls, response.usage.retries), (3, 2));
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_waited_out() {
    // Two seconds from now, to the second: at least one second away.
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
    let header = format!("retry-after: {when}");
    let server = overloaded_then_ok(1, 429, &[&header]).await;
    let (outcome, took) = call(HttpAgent::new(&server.url).unwrap()).await;
    assert_eq!(outcome.unwrap().usage.retries, 1);
    assert!(took >= Duration::from_millis(1000), "{when}: {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test]
async fn without_retry_after_a_backoff_is_waited() {
    // The first two backoffs: [0.125, 0.25] s, then [0.25, 0.5] s.
    let server = overloaded_then_ok(2, 429, &[]).await;
    let (outcome, took) = call(HttpAgent::new(&server.url).unwrap()).await;
    assert_eq!(outcome.unwrap().usage.retries, 2);
    assert!(took >= Duration::from_millis(375), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[tokio::test]
async fn a_503_is_retried_too() {
    let server = overloaded_then_ok(1, 503, &["retry-after: 0"]).await;
    let (outcome, _) = call(HttpAgent::new(&server.url).unwrap()).await;
    let response = outcome.unwrap();
    assert_eq!(response.output, "fine");
    assert_eq!((response.usage.calls, response.usage.retries), (2, 1));
}

#[tokio::test]
async fn retries_are_bounded_and_the_error_counts_the_attempts() {
    for (status, retries) in [(429u16, 3u32), (503, 0)] {
        let server = common::serve(move |_, _, _| {
            Reply::With(status, vec!["retry-after: 0".into()], "busy".into())
        })
        .await;
        let agent = HttpAgent::new(&server.url).unwrap().max_retries(retries);
        let (outcome, _) = call(agent).await;
        let attempts = retries + 1;
        match outcome {
            Err(Error::Agent(AgentError::Overloaded {
                status: s,
                attempts: a,
                ref body,
                ..
            })) => {
                assert_eq!((s, a, body.as_str()), (status, attempts, "busy"));
            }
            other => panic!("{other:?}"),
        }
        let message = outcome.unwrap_err().to_string();
        assert!(
            message.contains(&format!(
                "was still overloaded after {attempts} attempt(s) (HTTP {status}; retries are set by EVAL_AGENT_MAX_RETRIES): busy"
            )),
            "{message}"
        );
        assert_eq!(server.count(), attempts as usize, "N retries: N+1 requests");
    }
}

#[tokio::test]
async fn the_retry_limit_comes_from_the_config() {
    let server = common::serve(|_, _, _| Reply::json(429, "{}")).await;
    let config = Config::from_vars(
        |name| {
            Ok(match name {
                "EVAL_AGENT_MAX_RETRIES" => Some("1".into()),
                "EVAL_AGENT_ADAPTIVE" => Some("off".into()),
                _ => None,
            })
        },
        &[],
    )
    .unwrap();
    let agent = HttpAgent::from_config(&config, Some(&server.url)).unwrap();
    assert_eq!(agent.concurrency_limit(), None, "fixed");
    let (outcome, _) = call(agent).await;
    assert!(
        matches!(
            outcome,
            Err(Error::Agent(AgentError::Overloaded { attempts: 2, .. }))
        ),
        "{outcome:?}"
    );
    assert_eq!(server.count(), 2);
}

/// A sample whose agent stayed overloaded records every attempt in its
/// results, as a judge call that failed does.
#[test]
fn a_sample_that_stayed_overloaded_records_its_attempts() {
    let server = common::serve_detached(|_, _, _| {
        Reply::With(429, vec!["retry-after: 0".into()], "busy".into())
    });
    let dir = std::env::temp_dir().join(format!("eval-pace-spent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"input\": \"q\", \"expected\": \"a\"}\n",
    )
    .unwrap();
    let out = eval_runtime::Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("results.json"))
        .dataset("qa.jsonl", "contains")
        .agent(HttpAgent::new(&server.url).unwrap().max_retries(2))
        .evaluate(common::harness_args(&["pace", "-q"]));
    let results = eval_runtime::results::Results::read(out.results_path.as_ref().unwrap()).unwrap();
    let sample = &results.samples[0];
    assert!(
        sample
            .error
            .as_deref()
            .unwrap_or("")
            .contains("after 3 attempt(s)"),
        "{sample:?}"
    );
    assert_eq!((sample.agent.calls, sample.agent.retries), (3, 2));
    assert_eq!(results.usage.agent.calls, 3, "and in the run's totals");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn other_statuses_are_not_retried() {
    for status in [500u16, 502, 504, 400, 404, 408, 413] {
        let server = common::serve(move |_, _, _| {
            Reply::With(status, vec!["retry-after: 0".into()], "no".into())
        })
        .await;
        let (outcome, _) = call(HttpAgent::new(&server.url).unwrap()).await;
        match outcome {
            Err(Error::Agent(AgentError::Status { status: s, .. })) => assert_eq!(s, status),
            other => panic!("{status}: {other:?}"),
        }
        assert_eq!(server.count(), 1, "{status} is not retried");
    }
}

/// An agent that takes at most `k` requests at once (20 ms each) and
/// answers `429`, without `Retry-After`, to any beyond; on its own thread.
/// Returns its URL and the most requests it served at once.
fn k_at_once(k: usize) -> (String, Arc<AtomicUsize>) {
    let busy = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let seen = most.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let (busy, most) = (busy.clone(), seen.clone());
                tokio::spawn(async move {
                    while let Some((_, body)) = common::read_request(&mut stream).await {
                        let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
                        let (status, body) = if now > k {
                            busy.fetch_sub(1, Ordering::SeqCst);
                            (429, r#"{"error": "too many at once"}"#.to_string())
                        } else {
                            most.fetch_max(now, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            busy.fetch_sub(1, Ordering::SeqCst);
                            let json: serde_json::Value =
                                serde_json::from_slice(&body).unwrap_or_default();
                            let output = json["input"].as_str().unwrap_or("").to_string();
                            (200, serde_json::json!({ "output": output }).to_string())
                        };
                        let reply = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if stream.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    (rx.recv().unwrap(), most)
}

/// 300 samples whose answer is their question, scored by `exact_match`,
/// with 32 calls in flight allowed by the engine.
fn three_hundred_samples(name: &str) -> PlanBuilder {
    let samples: Vec<Sample> = (0..300)
        .map(|i| Sample::new(format!("question {i}")).with_expected(format!("question {i}")))
        .collect();
    PlanBuilder::new()
        .samples(name, samples, "exact_match")
        .concurrency(32)
}

#[test]
fn an_agent_taking_few_calls_at_once_gets_every_sample_answered() {
    // 300 samples, 32 calls in flight allowed by the engine, an agent that
    // takes 4 at once: the limit comes down to what the agent takes, and
    // every sample is answered (none runs out of retries).
    let (url, most) = k_at_once(4);
    let runner = Runner::new().config(Config::empty());
    let prepared = runner.prepare(three_hundred_samples("paced")).unwrap();
    let agent = HttpAgent::new(&url).unwrap();
    assert_eq!(
        agent.concurrency_limit(),
        Some(100_000.0),
        "unbounded at first"
    );
    let started = Instant::now();
    let outcome = prepared.evaluate(&agent, |_| {}).unwrap();
    let took = started.elapsed();
    let d = &outcome.results.datasets[0];
    assert_eq!((d.samples, d.passed, d.errors), (300, 300, 0), "{took:?}");
    assert!(outcome.verdict.passed());
    assert!(most.load(Ordering::SeqCst) <= 4);
    let limit = agent.concurrency_limit().unwrap();
    assert!(limit < 16.0, "the limit came down: {limit}");
    let retries: u32 = outcome
        .results
        .samples
        .iter()
        .map(|s| s.agent.retries)
        .sum();
    let calls: u32 = outcome.results.samples.iter().map(|s| s.agent.calls).sum();
    assert!(retries > 0, "the agent did refuse calls");
    assert_eq!(calls, 300 + retries, "every attempt counted");
    // 300 × 20 ms / 4 at once = 1.5 s at best.
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn agents_built_for_each_sample_share_the_limit_of_their_origin() {
    // The README's attribute form builds an agent per sample: what one
    // sample's 429 teaches must hold back the others. 300 samples, 32 in
    // flight allowed, an agent taking 4 at once; each sample calls through
    // an agent of its own.
    let (url, most) = k_at_once(4);
    let runner = Runner::new().config(Config::empty());
    let prepared = runner.prepare(three_hundred_samples("per-sample")).unwrap();
    let built = Arc::new(AtomicUsize::new(0));
    let count = built.clone();
    let origin = url.clone();
    let agent = eval_runtime::FnAgent(async move |s: &Sample| {
        count.fetch_add(1, Ordering::SeqCst);
        HttpAgent::new(&origin)?.respond(s).await
    });
    let outcome = prepared.evaluate(&agent, |_| {}).unwrap();
    let d = &outcome.results.datasets[0];
    assert_eq!((d.samples, d.passed, d.errors), (300, 300, 0));
    assert_eq!(built.load(Ordering::SeqCst), 300, "an agent per sample");
    assert!(most.load(Ordering::SeqCst) <= 4);
    // A new agent for the origin (another path too) starts where the others
    // left the limit; another origin starts unbounded.
    let limit = HttpAgent::new(&format!("{url}/elsewhere"))
        .unwrap()
        .concurrency_limit()
        .unwrap();
    assert!(limit < 16.0, "the origin's limit came down: {limit}");
    let (other, _) = k_at_once(4);
    assert_eq!(
        HttpAgent::new(&other).unwrap().concurrency_limit(),
        Some(100_000.0)
    );
    // Not adaptive: no limit, shared or not.
    assert_eq!(
        HttpAgent::new(&url)
            .unwrap()
            .adaptive(false)
            .concurrency_limit(),
        None
    );
    // Sharing keeps refusals near what one shared agent sees: each
    // decrease is learned once, not once per agent.
    let retries: u32 = outcome
        .results
        .samples
        .iter()
        .map(|s| s.agent.retries)
        .sum();
    assert!(retries < 300, "{retries} retries for 300 samples");
}
