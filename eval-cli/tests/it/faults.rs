//! The fault harness: an agent on loopback that answers each call with a
//! fault drawn from a fixed seed — server errors, `429` with odd
//! `Retry-After` values, cut and empty bodies, bytes that are not UTF-8,
//! replies of the wrong shape, absurd and negative token counts, a stall
//! past the sample's timeout — and `evals evaluate` over it (a debug build,
//! where an overflow panics). Whatever the agent does, the command exits
//! with a verdict (1) or says no sample could be scored (2), never dies,
//! writes a whole results file in which every sample has a verdict, and
//! its usage totals neither wrap nor count what no server could have used.
//!
//! The seed and the count are fixed, so every run (CI's included) tries the
//! same faults, in a few seconds.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::common::{code, evals_with, scratch, text};

/// Samples in the run.
const SAMPLES: usize = 40;

/// One call's fault, from the call's number.
fn fault(n: u64) -> u64 {
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    x % 12
}

fn openai(content: &str, usage: &str) -> String {
    format!(
        "{{\"choices\": [{{\"message\": {{\"role\": \"assistant\", \"content\": {}}}}}], \"usage\": {usage}}}",
        serde_json::Value::from(content)
    )
}

/// The agent: every connection gets the next fault.
fn faulty_agent(calls: Arc<AtomicU64>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/agent", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let n = calls.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&head).to_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; len];
                let _ = stream.read_exact(&mut body);
                let ok = |body: &[u8]| {
                    let mut out = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    out.extend_from_slice(body);
                    out
                };
                let reply: Vec<u8> = match fault(n) {
                    0 | 1 => ok(openai("Retrieval Augmented Generation", "{\"prompt_tokens\": 10, \"completion_tokens\": 5}").as_bytes()),
                    2 => ok(openai("Retrieval", "{\"prompt_tokens\": 18446744073709551615, \"completion_tokens\": 18446744073709551615}").as_bytes()),
                    3 => ok(openai("Retrieval", "{\"prompt_tokens\": -1, \"completion_tokens\": 1e300}").as_bytes()),
                    4 => b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
                    5 => b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 0\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
                    6 => b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 18446744073709551616\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
                    7 => b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\nconnection: close\r\n\r\n{\"output\": \"Retr".to_vec(),
                    8 => ok(b"{\"output\": \"Retrieval \xff\xfe\"}"),
                    9 => ok(b"[1, 2, 3]"),
                    10 => ok(b""),
                    _ => {
                        std::thread::sleep(Duration::from_secs(4));
                        ok(b"{\"output\": \"late\"}")
                    }
                };
                let _ = stream.write_all(&reply);
            });
        }
    });
    url
}

#[test]
fn whatever_the_agent_does_every_sample_gets_a_verdict_and_totals_stay_true() {
    let dir = scratch("faults");
    let mut rows = String::new();
    for i in 0..SAMPLES {
        rows.push_str(&format!(
            "{{\"id\": \"s{i}\", \"input\": \"What is RAG? ({i})\", \"expected\": \"Retrieval\"}}\n"
        ));
    }
    std::fs::write(dir.join("qa.jsonl"), rows).unwrap();
    let calls = Arc::new(AtomicU64::new(0));
    let url = faulty_agent(calls.clone());
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
            "--output",
            "results.json",
            "--timeout-secs",
            "2",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.code().is_some(), "killed by a signal: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        [1, 2].contains(&code(&out)),
        "exit {}: {stdout}{stderr}",
        code(&out)
    );
    assert!(calls.load(Ordering::SeqCst) >= SAMPLES as u64);

    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], true, "{results}");
    let samples = results["samples"].as_array().unwrap();
    assert_eq!(samples.len(), SAMPLES);
    for s in samples {
        let verdict = s["verdict"].as_str().unwrap_or_default();
        assert!(["pass", "fail", "error"].contains(&verdict), "{s}");
    }
    // No answer that reached us claimed more than a trillion tokens and was
    // counted: the totals stay below what one honest run could use.
    let usage = &results["usage"];
    for key in ["prompt_tokens", "completion_tokens"] {
        let total = usage["agent"][key]
            .as_u64()
            .or_else(|| usage[key].as_u64())
            .unwrap_or(0);
        assert!(total < 1_000_000_000_000, "{key}: {total} in {usage}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
