//! The `evals` command never dies silently and never reports success wrongly:
//! a socket the agent closed, stdout closed by its reader, a judge that is
//! down, a run cut short.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

use crate::common;

use common::{code, demo_url, evals_with, scratch, text};

/// A server on its own thread: for each connection, the request head is
/// read, then `handle` gets the stream (the body unread) and the head.
fn serve_raw(handle: impl Fn(std::net::TcpStream, &str) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            // Byte by byte, so that nothing of the body is read.
            while !head.ends_with(b"\r\n\r\n") {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            handle(stream, &String::from_utf8_lossy(&head));
        }
    });
    url
}

/// The request body after `head`, as long as its `content-length` says.
fn read_body(stream: &mut std::net::TcpStream, head: &str) -> String {
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    let _ = stream.read_exact(&mut body);
    String::from_utf8_lossy(&body).into_owned()
}

/// An agent that reads the request head, then closes the connection without
/// reading the body: a client writing a large body hits a closed socket.
fn hanging_up_agent() -> String {
    format!("{}/agent", serve_raw(|stream, _| drop(stream)))
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
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(results["datasets"][0]["errors"], 1, "{results}");
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

/// `evals evaluate … 2>&1 | head -4`: stdout and stderr are one pipe, and
/// its reader leaves after a few lines. The run goes on and exits with its
/// verdict's code (1: a sample fails), never a panic's 101, every time.
#[test]
fn stderr_closed_with_stdout_keeps_the_verdicts_exit_code() {
    let dir = scratch("closed-stderr");
    // A runevals file with metrics given: the run ends with a note on stderr.
    let items: Vec<serde_json::Value> = (0..40)
        .map(|i| serde_json::json!({"prompt": format!("question {i}"), "expected_response": "nothing the demo says"}))
        .collect();
    let doc = serde_json::json!({
        "schemaVersion": "1.2.0",
        "default_evaluators": {"PartialMatch": {}},
        "items": items,
    });
    std::fs::write(dir.join("d.json"), doc.to_string()).unwrap();
    for round in 0..6 {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_evals"))
            .args([
                "evaluate",
                "d.json",
                "--metrics",
                "contains",
                "--url",
                demo_url(),
            ])
            .current_dir(&dir)
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .spawn()
            .unwrap();
        // Read a little, then go away, as `head -4` does.
        let mut reader = reader;
        let mut some = [0u8; 64];
        let _ = reader.read(&mut some);
        drop(reader);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "round {round}: {status:?}");
    }
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
        // Each sample, then one line per metric that did not pass, saying why.
        let lines: Vec<&str> = stdout
            .lines()
            .filter(|l| l.contains("ERROR d5::"))
            .collect();
        assert_eq!(lines.len(), 5, "{stdout}");
        let why: Vec<&str> = stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("relevance error: "))
            .collect();
        assert_eq!(why.len(), 5, "{stdout}");
        for line in why {
            assert!(
                line.contains("relevance error: http://127.0.0.1:9/v1/chat/completions unreachable after 5 attempt(s): tcp connect error: Connection refused"),
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
    let url = serve_raw(|mut stream, head| {
        read_body(&mut stream, head);
        // An error page with raw escape sequences: it is shown in the
        // sample's line.
        let body = "\u{1b}[2J\u{1b}]0;pwned\u{7} oops \u{9b}31m";
        let _ = write!(
            stream,
            "HTTP/1.1 500 Oops\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
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

/// A tiny HTTP server on its own thread: `answer(head, body) -> (status, body)`.
fn serve(answer: impl Fn(&str, &str) -> (u16, String) + Send + 'static) -> String {
    serve_raw(move |mut stream, head| {
        let body = read_body(&mut stream, head);
        let (status, reply) = answer(head, &body);
        let _ = write!(
            stream,
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
            reply.len()
        );
    })
}

/// The bearer token of a request head.
fn bearer(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("authorization")
                .then(|| v.trim().trim_start_matches("Bearer ").to_string())
        })
        .unwrap_or_default()
}

#[test]
fn keys_echoed_by_the_agent_or_the_judge_never_reach_disk_or_the_terminal() {
    const AGENT_KEY: &str = "sk-agent+Key/0123456789abcdefXYZ";
    const JUDGE_KEY: &str = "sk-judge-9876543210-abcdefghijkl";
    // The agent echoes its key whole, URL-encoded and cut off.
    let agent = serve(|head, _| {
        let key = bearer(head);
        let encoded = key.replace('+', "%2B").replace('/', "%2F");
        let output = format!("whole {key} encoded {encoded} cut {}…", &key[..16]);
        (200, serde_json::json!({ "output": output }).to_string())
    });
    // The judge puts its key in its reasons (kept in the cache).
    let judge = serve(|head, _| {
        let content = serde_json::json!({"rating": 2, "reason": format!("I was called with {}", bearer(head))});
        (
            200,
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content.to_string()}}]})
                .to_string(),
        )
    });
    let dir = scratch("keys");
    std::fs::write(
        dir.join("d.jsonl"),
        "{\"input\": \"q\", \"expected\": \"an answer\"}\n",
    )
    .unwrap();
    let cache = dir.join("cache");
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "d.jsonl",
            "--url",
            &agent,
            "--metrics",
            "contains, relevance >= 0.75",
            "--output",
            "results.json",
        ],
        &[
            ("EVAL_AGENT_API_KEY", AGENT_KEY),
            ("EVAL_JUDGE_URL", &format!("{judge}/v1")),
            ("EVAL_JUDGE_API_KEY", JUDGE_KEY),
            ("EVAL_CACHE", "on"),
            ("EVAL_CACHE_DIR", cache.to_str().unwrap()),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let results = std::fs::read_to_string(dir.join("results.json")).unwrap();
    assert!(
        results.contains("whole <redacted> encoded <redacted> cut <redacted>…"),
        "{results}"
    );
    let mut written = vec![results, stdout, stderr];
    let mut dirs = vec![cache.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                written.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    assert!(written.len() > 3, "the judge's answer was cached");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "the cache is owner-only");
    }
    for text in &written {
        for key in [AGENT_KEY, JUDGE_KEY] {
            assert!(
                !text.contains(&key[..12]),
                "a key reached disk or the terminal: {text}"
            );
        }
        assert!(!text.contains("sk-agent%2BKey"), "{text}");
    }
    assert!(
        written
            .iter()
            .any(|t| t.contains("I was called with <redacted>"))
    );
}

#[cfg(unix)]
#[test]
fn outside_a_target_dir_results_and_cache_are_the_users_own() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("user-cache");
    // An installed `evals`: not inside a cargo target directory.
    let bin = dir.join("bin/evals");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    // A hard link where it can (the binary is 100+ MB in debug builds).
    if std::fs::hard_link(env!("CARGO_BIN_EXE_evals"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_evals"), &bin).unwrap();
    }
    let judge = serve(|_, _| {
        let content = serde_json::json!({"rating": 5, "reason": "fine"}).to_string();
        (
            200,
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
                .to_string(),
        )
    });
    std::fs::write(
        dir.join("d.jsonl"),
        "{\"input\": \"q\", \"expected\": \"a\"}\n",
    )
    .unwrap();
    let xdg = dir.join("xdg");
    let out = Command::new(&bin)
        .args([
            "evaluate",
            "d.jsonl",
            "--url",
            common::demo_url(),
            "--metrics",
            "relevance",
        ])
        .current_dir(&dir)
        .env_remove("EVAL_CACHE_DIR")
        .env_remove("EVAL_RESULTS_DIR")
        .env("EVAL_CACHE", "on")
        .env("EVAL_JUDGE_URL", format!("{judge}/v1"))
        .env("XDG_CACHE_HOME", &xdg)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let cache = xdg.join("evals/cache");
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the cache is owner-only");
    assert!(
        std::fs::read_dir(&cache).unwrap().next().is_some(),
        "the judge's answer was cached there"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
