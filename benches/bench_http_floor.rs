//! Benchmark target (run by `examples/bench.rs`): the HTTP client alone, the
//! floor under every path's CPU over HTTP. It does what any client of the
//! agent must: reads each line of `BENCH_DATASET` as JSON, posts its `input`
//! to `EVAL_AGENT_URL` in the body our agents get (`input`, `messages`,
//! `agent_args`) with reqwest, `EVAL_CONCURRENCY` calls in flight on one
//! thread (as the engine calls), and parses each answer as JSON. No
//! metrics, records, reports or output: what a path spends beyond this run's
//! CPU per sample is the tool's own.

use std::io::BufRead;
use std::process::ExitCode;

use futures_util::StreamExt;

fn main() -> ExitCode {
    let (Some(dataset), Ok(url)) = (
        std::env::var_os("BENCH_DATASET"),
        std::env::var("EVAL_AGENT_URL"),
    ) else {
        eprintln!("error: set BENCH_DATASET and EVAL_AGENT_URL");
        return ExitCode::from(2);
    };
    let in_flight = std::env::var("EVAL_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let file = match std::fs::File::open(&dataset) {
        Ok(file) => std::io::BufReader::new(file),
        Err(e) => {
            eprintln!("error: {}: {e}", dataset.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (answered, total) = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .tls_certs_only(Vec::new())
            .build()
            .expect("an HTTP client");
        futures_util::stream::iter(file.lines())
            .map(|line| {
                let (client, url) = (&client, &url);
                async move {
                    let sample: serde_json::Value = serde_json::from_str(&line.ok()?).ok()?;
                    let input = sample.get("input")?;
                    let body = serde_json::json!({
                        "input": input,
                        "messages": [{"role": "user", "content": input}],
                        "agent_args": {},
                    });
                    let reply = client.post(url).json(&body).send().await.ok()?;
                    let bytes = reply.bytes().await.ok()?;
                    let answer: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
                    answer.get("output").map(|_| ())
                }
            })
            .buffer_unordered(in_flight)
            .fold((0usize, 0usize), |(answered, total), one| {
                std::future::ready((answered + usize::from(one.is_some()), total + 1))
            })
            .await
    });
    println!("{answered} of {total} answered");
    // A floor that skipped samples would be too low: every one must count.
    if answered != total || total == 0 {
        eprintln!(
            "error: {} of {total} samples not answered",
            total - answered
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
