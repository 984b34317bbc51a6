//! The `evals` command never dies silently and never reports success wrongly:
//! a socket the agent closed, stdout closed by its reader, a judge that is
//! down, a run cut short.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

mod common;

use common::{code, evals_with, scratch, text};

/// An agent that reads the request head, then closes the connection without
/// reading the body: a client writing a large body hits a closed socket.
fn hanging_up_agent() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/agent", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            drop(stream);
        }
    });
    url
}

#[test]
fn a_socket_the_agent_closed_is_a_failed_sample_not_a_silent_death() {
    let dir = scratch("sigpipe");
    let big = "x".repeat(10 << 20);
    std::fs::write(
        dir.join("big.jsonl"),
        format!("{}\n", serde_json::json!({"input": big, "expected": "y"})),
    )
    .unwrap();
    let url = hanging_up_agent();
    // The signal came in 1 of 6 runs or so before the fix: try often enough.
    for attempt in 0..10 {
        let out = evals_with(
            &dir,
            &[
                "evaluate",
                "big.jsonl",
                "--url",
                &url,
                "--metrics",
                "contains",
                "--output",
                "results.json",
            ],
            &[],
        );
        let (stdout, stderr) = text(&out);
        assert_ne!(
            out.status.code(),
            None,
            "attempt {attempt}: killed by a signal ({:?}); stdout: {stdout} stderr: {stderr}",
            out.status
        );
        assert_eq!(code(&out), 2, "no sample scored: {stdout}{stderr}");
        assert!(
            stdout.contains("unreachable") || stdout.contains("cut off"),
            "the sample's line says why: {stdout}"
        );
        assert!(stderr.contains("no sample could be scored"), "{stderr}");
        let results = std::fs::read_to_string(dir.join("results.json")).unwrap();
        assert!(results.contains("\"errors\": 1"), "{results}");
    }
}

#[test]
fn stdout_closed_by_its_reader_ends_output_quietly() {
    let dir = scratch("closed-stdout");
    let mut rows = String::new();
    for i in 0..2000 {
        rows.push_str(&format!(
            "{}\n",
            serde_json::json!({"input": format!("question {i}"), "expected": "a", "tags": [format!("t{}", i % 50)]})
        ));
    }
    std::fs::write(dir.join("d.jsonl"), rows).unwrap();
    for args in [&["stats", "d.jsonl"][..], &["lint", "d.jsonl"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_evals"))
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then go away, as `head -c1` does.
        let mut stdout = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        let _ = stdout.read(&mut one);
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(
            status.code().is_some(),
            "{args:?}: killed by a signal: {status:?}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
    // Nothing is printed to a terminal that is not asked for.
    let _ = std::io::stderr().flush();
}

#[test]
fn a_dead_judge_is_not_a_pass_and_every_line_says_why() {
    let dir = scratch("dead-judge");
    std::fs::write(
        dir.join("d5.jsonl"),
        (1..=5)
            .map(|i| {
                format!("{{\"input\": \"What is RAG? ({i})\", \"expected\": \"retrieval\"}}\n")
            })
            .collect::<String>(),
    )
    .unwrap();
    for metrics in ["relevance", "relevance, contains"] {
        let out = evals_with(
            &dir,
            &[
                "evaluate",
                "d5.jsonl",
                "--url",
                common::demo_url(),
                "--metrics",
                metrics,
            ],
            &[("EVAL_JUDGE_URL", "http://127.0.0.1:9/v1")],
        );
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{metrics}: {stdout}{stderr}");
        let lines: Vec<&str> = stdout.lines().filter(|l| l.contains("FAILED")).collect();
        assert_eq!(lines.len(), 5, "{stdout}");
        for line in lines {
            assert!(
                line.contains("relevance=error (http://127.0.0.1:9/v1/chat/completions unreachable after 5 attempt(s): tcp connect error: Connection refused"),
                "{line}"
            );
        }
        assert!(
            stderr.contains("could not be scored"),
            "{metrics}: {stderr}"
        );
        if metrics.contains("contains") {
            assert!(
                stderr.contains("`relevance` of `d5` could not be scored on any sample"),
                "{stderr}"
            );
        }
    }
}

#[test]
fn control_characters_from_the_agent_never_reach_the_terminal() {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", server.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in server.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            // The request body is small; read what is left of it.
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(50)));
            let _ = stream.read(&mut buf);
            // An error page with raw escape sequences: it is shown in the
            // sample's line.
            let body = "\u{1b}[2J\u{1b}]0;pwned\u{7} oops \u{9b}31m";
            let _ = write!(
                stream,
                "HTTP/1.1 500 Oops\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let dir = scratch("ansi");
    std::fs::write(
        dir.join("d.jsonl"),
        "{\"input\": \"q\", \"expected\": \"zzz\"}\n",
    )
    .unwrap();
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "d.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(stdout.contains("answered HTTP 500"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{9b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(stdout.contains("\\u{1b}[2J"), "shown escaped: {stdout}");
}
