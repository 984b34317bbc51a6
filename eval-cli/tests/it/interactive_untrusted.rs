//! `evals interactive` and what it does not trust: text an agent sends
//! (its answer, context, tool calls, model, error bodies) and a dataset
//! file's content are shown with terminal controls escaped, never written
//! raw; a dataset target that is not a regular file (a device, a FIFO, a
//! directory) or is over the size limit is refused at once, never read
//! forever or waited on.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::scratch;
use eval_datasets::Dataset;

/// What the agent answers: an SGR escape, a one-byte C1 CSI and a
/// right-to-left override.
const EVIL: &str = "\u{1b}[31mred\u{9b}0m\u{202e}txt";
/// The same, shown escaped.
const SHOWN: &str = "\\u{1b}[31mred\\u{9b}0m\\u{202e}txt";
/// Characters that must never reach the terminal raw.
const RAW: [char; 3] = ['\u{1b}', '\u{9b}', '\u{202e}'];

/// Longest any one session may take here.
const LIMIT: Duration = Duration::from_secs(20);

/// A loopback HTTP server answering every request with `status` and `body`.
fn serve(status: u16, body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            // The request head, then as much body as it announces.
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stream.read(&mut buf) {
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    if seen.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// An OpenAI-compatible agent whose answer (two lines), context, tool call
/// and model name all carry [`EVIL`].
fn evil_agent() -> String {
    let body = serde_json::json!({
        "model": format!("model{EVIL}"),
        "choices": [{"message": {
            "role": "assistant",
            "content": format!("{EVIL}\nsecond line {EVIL}"),
            "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": format!("calc{EVIL}"),
                "arguments": serde_json::json!({"x": EVIL}).to_string(),
            }}],
        }}],
        "context": [format!("context {EVIL}")],
    });
    format!("{}/v1/chat/completions", serve(200, body.to_string()))
}

fn session(dir: &Path, url: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.arg("interactive")
        .args(["--url", url])
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("EVAL_CACHE", "off")
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("EVAL_EMBED_URL")
        .env_remove("EVAL_MAX_DATASET_BYTES")
        .env_remove("EVAL_SAMPLE_TIMEOUT_SECS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Waits for `child` at most [`LIMIT`] (killing it then, and failing):
/// its exit code, stdout and stderr.
fn finish(mut child: Child) -> (i32, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let (mut out, mut err) = (String::new(), String::new());
            if let Some(mut o) = child.stdout.take() {
                o.read_to_string(&mut out).unwrap();
            }
            if let Some(mut e) = child.stderr.take() {
                e.read_to_string(&mut err).unwrap();
            }
            return (status.code().unwrap_or(-1), out, err);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the session was still running after {LIMIT:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The session with `input` typed on a pipe, bounded in time.
fn run(
    dir: &Path,
    url: &str,
    args: &[&str],
    env: &[(&str, &str)],
    input: &str,
) -> (i32, String, String) {
    let mut child = session(dir, url, args, env).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A session that refuses at start closes its stdin: no matter.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    finish(child)
}

/// What a child writes to one of its pipes, gathered as it comes.
struct Watched(std::sync::Arc<std::sync::Mutex<String>>);

fn watch(pipe: Option<impl Read + Send + 'static>) -> Watched {
    let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut pipe = pipe.unwrap();
    let into = said.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n @ 1..) = pipe.read(&mut buf) {
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    Watched(said)
}

impl Watched {
    fn all(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// Waits (at most [`LIMIT`]) until `what` was written.
    fn wait_for(&self, what: &str) {
        let start = Instant::now();
        while !self.all().contains(what) {
            assert!(
                start.elapsed() < LIMIT,
                "no `{what}` after {LIMIT:?}: {}",
                self.all()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn nothing_raw(what: &str, text: &str) {
    for c in RAW {
        assert!(!text.contains(c), "{what} holds a raw {c:?}: {text:?}");
    }
}

#[test]
fn what_the_agent_and_the_files_say_is_shown_escaped() {
    let dir = scratch("interactive-escapes");
    let url = evil_agent();
    // A dataset file whose broken line carries the controls too.
    std::fs::write(dir.join("broken.jsonl"), format!("{{\"input\": {EVIL}\n")).unwrap();
    let (code, out, err) = run(
        &dir,
        &url,
        &[
            "--protocol",
            "openai",
            "--model",
            "m",
            "--metrics",
            "contains",
        ],
        &[],
        ":dataset out.jsonl\nhi\n:accept\n:show\n:append\n:dataset broken.jsonl\n",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    nothing_raw("stdout", &out);
    nothing_raw("stderr", &err);
    // The answer keeps its line break; each line is escaped.
    assert!(
        out.contains(&format!("  {SHOWN}\n  second line {SHOWN}\n")),
        "{out}"
    );
    assert!(out.contains(&format!("[1] context {SHOWN}")), "{out}");
    assert!(out.contains(&format!("calc{SHOWN}(")), "{out}");
    assert!(out.contains(&format!("model model{SHOWN}")), "{out}");
    // The sample keeps the answer as it came: escaping is for the screen.
    let d = Dataset::load(dir.join("out.jsonl")).unwrap();
    assert_eq!(
        d.samples[0].expected_text(),
        Some(format!("{EVIL}\nsecond line {EVIL}").as_str())
    );
    assert!(
        err.contains("broken.jsonl does not load as a dataset"),
        "{err}"
    );

    // An agent failing with the controls in its error body.
    let failing = serve(500, serde_json::json!({ "error": EVIL }).to_string());
    let (code, out, err) = run(&dir, &failing, &["--metrics", "contains"], &[], "hi\n");
    assert_eq!(code, 0, "{out}\n{err}");
    nothing_raw("stdout", &out);
    nothing_raw("stderr", &err);
    assert!(out.contains("no answer"), "{out}");
}

/// A fast agent answering plain text.
fn plain_agent() -> String {
    format!(
        "{}/agent",
        serve(200, serde_json::json!({ "output": "fine" }).to_string())
    )
}

#[cfg(unix)]
#[test]
fn devices_fifos_directories_and_large_files_are_refused_without_reading() {
    let dir = scratch("interactive-targets");
    let url = plain_agent();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.jsonl")).unwrap();
    let fifo = dir.join("fifo.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::create_dir(dir.join("dir.jsonl")).unwrap();
    std::fs::write(dir.join("big.jsonl"), "{\"input\": \"q\"}\n".repeat(20)).unwrap();
    let small = [("EVAL_MAX_DATASET_BYTES", "100")];

    // Given at the start: the session does not start (exit 2), at once.
    for (file, why, env) in [
        (
            "zero.jsonl",
            "not a regular file (a character device)",
            &[][..],
        ),
        ("fifo.jsonl", "not a regular file (a FIFO)", &[][..]),
        ("dir.jsonl", "not a regular file (a directory)", &[][..]),
        ("big.jsonl", "over the limit of 100 bytes", &small[..]),
    ] {
        let started = Instant::now();
        let (code, out, err) = run(&dir, &url, &["--dataset", file], env, "hi\n:append\n");
        assert_eq!(code, 2, "{file}: {out}\n{err}");
        assert!(err.contains(file) && err.contains(why), "{file}: {err}");
        assert!(started.elapsed() < LIMIT, "{file}");
    }

    // Chosen in the session: refused, the session goes on.
    let (code, out, err) = run(
        &dir,
        &url,
        &[],
        &small,
        "hi\n:dataset zero.jsonl\n:dataset fifo.jsonl\n:dataset dir.jsonl\n:dataset big.jsonl\n:append\n",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    for (file, why) in [
        ("zero.jsonl", "a character device"),
        ("fifo.jsonl", "a FIFO"),
        ("dir.jsonl", "a directory"),
        ("big.jsonl", "over the limit of 100 bytes"),
    ] {
        assert!(
            err.lines().any(|l| l.contains(file) && l.contains(why)),
            "{file}: {err}"
        );
    }
    assert!(err.contains("no dataset file"), "{err}");

    // The file chosen becomes a FIFO, then /dev/zero, before `:append`:
    // each append is refused at once.
    let later = dir.join("later.jsonl");
    let mut child = session(&dir, &url, &["--dataset", "later.jsonl"], &[])
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (out, err) = (watch(child.stdout.take()), watch(child.stderr.take()));
    stdin.write_all(b"hi\n").unwrap();
    stdin.flush().unwrap();
    // The session has started (and checked the file, missing then).
    out.wait_for("answer (");
    let made = Command::new("mkfifo").arg(&later).status().unwrap();
    assert!(made.success());
    stdin.write_all(b":append\n").unwrap();
    stdin.flush().unwrap();
    err.wait_for("a FIFO");
    let swap = dir.join("swap.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &swap).unwrap();
    std::fs::rename(&swap, &later).unwrap();
    stdin.write_all(b":tag again\n:append\n").unwrap();
    stdin.flush().unwrap();
    err.wait_for("a character device");
    drop(stdin);
    let (code, _, _) = finish(child);
    assert_eq!(code, 0, "{}\n{}", out.all(), err.all());
    out.wait_for("no sample appended");
    assert!(err.all().contains("later.jsonl"), "{}", err.all());
}

/// In a terminal, the line `:edit` starts from (the agent's answer) is
/// escaped too, and read back as the answer it was.
#[test]
fn the_line_to_edit_is_escaped_in_a_terminal() {
    use rexpect::session::spawn_command;
    let dir = scratch("interactive-edit-escapes");
    let url = evil_agent();
    let mut cmd = session(
        &dir,
        &url,
        &[
            "--protocol",
            "openai",
            "--model",
            "m",
            "--metrics",
            "contains",
            "--dataset",
            "out.jsonl",
        ],
        &[],
    );
    cmd.env("TERM", "xterm")
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    let mut p = spawn_command(cmd, Some(LIMIT.as_millis() as u64)).expect("start in a pty");
    let mut seen = String::new();
    let mut expect = |p: &mut rexpect::session::PtySession, what: &str| {
        let before = p.exp_string(what).expect(what);
        seen.push_str(&before);
        seen.push_str(what);
    };
    expect(&mut p, "evals> ");
    p.send_line("hi").unwrap();
    expect(&mut p, &format!("second line {SHOWN}"));
    expect(&mut p, "evals> ");
    p.send_line(":edit").unwrap();
    expect(&mut p, "expected> ");
    expect(&mut p, &format!("{SHOWN}\\nsecond"));
    p.send_line("").unwrap();
    expect(&mut p, "expected: ");
    expect(&mut p, "evals> ");
    p.send_line(":append").unwrap();
    expect(&mut p, "appended to out.jsonl:1");
    expect(&mut p, "evals> ");
    p.send_control('d').unwrap();
    seen.push_str(&p.exp_eof().unwrap());
    for raw in ["\u{1b}[31mred", "\u{9b}", "\u{202e}"] {
        assert!(!seen.contains(raw), "{raw:?} raw on the terminal: {seen:?}");
    }
    let d = Dataset::load(dir.join("out.jsonl")).unwrap();
    assert_eq!(
        d.samples[0].expected_text(),
        Some(format!("{EVIL}\nsecond line {EVIL}").as_str())
    );
}
