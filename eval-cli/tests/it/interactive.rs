//! `evals interactive` typed into: through a pseudo-terminal (the line
//! editor in raw mode) and through a pipe, against the demo agent on
//! loopback; the dataset file it appends to is read back with eval-datasets.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{backups, demo_url, scratch};
use eval_datasets::Dataset;
use rexpect::process::WaitStatus;
use rexpect::session::PtySession;

/// Seconds any one expected output may take.
const WAIT_MS: u64 = 30_000;

/// The demo agent's answer to "What is RAG?" starts so.
const RAG: &str = "Retrieval-augmented generation (RAG)";

fn command(dir: &Path, args: &[&str]) -> Command {
    command_at(dir, demo_url(), args)
}

/// The session with the agent at `url`.
fn command_at(dir: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.arg("interactive")
        .args(["--url", url])
        .args(args)
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .env("EVAL_CACHE", "off")
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("EVAL_EMBED_URL")
        .env_remove("EVAL_SAMPLE_TIMEOUT_SECS");
    cmd
}

/// The session in a pseudo-terminal.
fn in_a_terminal(dir: &Path, args: &[&str]) -> PtySession {
    rexpect::session::spawn_command(command(dir, args), Some(WAIT_MS)).expect("start in a pty")
}

fn typed(p: &mut PtySession, line: &str) {
    p.exp_string("evals> ").expect("the prompt");
    p.send_line(line).expect("type a line");
}

/// Ctrl-D at the prompt: the session ends with code 0.
fn end(mut p: PtySession) -> String {
    p.exp_string("evals> ").expect("the prompt");
    p.send_control('d').expect("Ctrl-D");
    let rest = p.exp_eof().expect("the session ends");
    let status = p.process().wait().expect("its status");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "{status:?}: {rest}"
    );
    rest
}

#[test]
fn a_terminal_session_scores_accepts_tags_and_appends() {
    let dir = scratch("interactive-pty");
    let data = dir.join("golden.jsonl");
    // The file already holds a sample: the session appends after it.
    let first_line = "{\"input\": \"What is 2 + 2?\", \"expected\": \"4\"}\n";
    std::fs::write(&data, first_line).unwrap();
    let mut p = in_a_terminal(
        &dir,
        &["--metrics", "contains", "--dataset", "golden.jsonl"],
    );
    p.exp_string("dataset: golden.jsonl").unwrap();
    typed(&mut p, "What is RAG?");
    p.exp_string(RAG).expect("the answer");
    p.exp_string("context (1)").expect("its context");
    // No expected answer yet: the metric waits for one.
    p.exp_string("contains  waiting for `expected`").unwrap();
    typed(&mut p, ":accept");
    p.exp_string("accepted").unwrap();
    p.exp_string("contains  1.000  >= 1.000  pass")
        .expect("scored");
    typed(&mut p, ":tag smoke rag");
    p.exp_string("tags: smoke, rag").unwrap();
    typed(&mut p, ":append");
    p.exp_string("backup: ").unwrap();
    p.exp_string("appended to golden.jsonl:2").unwrap();
    let rest = end(p);
    assert!(rest.contains("1 sample(s) appended"), "{rest}");

    let text = std::fs::read_to_string(&data).unwrap();
    assert!(
        text.starts_with(first_line),
        "the first sample kept: {text}"
    );
    assert!(text.ends_with('\n'));
    let d = Dataset::load(&data).expect("a valid dataset");
    assert_eq!(d.samples.len(), 2);
    let s = &d.samples[1];
    assert_eq!(s.input.last(), "What is RAG?");
    assert!(s.expected_text().unwrap().starts_with(RAG), "{s:?}");
    assert_eq!(s.tags, vec!["smoke", "rag"]);
    assert_eq!(s.context.len(), 1, "the agent's context is kept");
    assert_eq!(s.metadata["source"], "evals interactive");
    let found = backups(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(std::fs::read_to_string(&found[0]).unwrap(), first_line);

    // A second session appends after the first's sample, a conversation
    // whose expected answer is edited on the line, and backs up again.
    let mut p = in_a_terminal(
        &dir,
        &["--metrics", "contains", "--dataset", "golden.jsonl"],
    );
    typed(&mut p, ":turn Hello");
    p.exp_string("turn 1 added").unwrap();
    typed(&mut p, "What is an embedding?");
    p.exp_string("[turn 2] Embeddings are dense vectors")
        .unwrap();
    typed(&mut p, ":edit");
    p.exp_string("expected> ").unwrap();
    // The line starts with the answer: Ctrl-U clears it.
    p.send_control('u').unwrap();
    p.send_line("dense vectors").unwrap();
    p.exp_string("expected: dense vectors").unwrap();
    p.exp_string("contains  1.000").unwrap();
    typed(&mut p, ":a");
    p.exp_string("appended to golden.jsonl:3").unwrap();
    end(p);
    let d = Dataset::load(&data).unwrap();
    assert_eq!(d.samples.len(), 3);
    assert!(std::fs::read_to_string(&data).unwrap().starts_with(&text));
    let s = &d.samples[2];
    assert_eq!(s.input.turns(), ["Hello", "What is an embedding?"]);
    assert_eq!(s.expected_text(), Some("dense vectors"));
    assert_eq!(backups(&dir).len(), 2, "one backup per session");
}

/// The session with `input` on a pipe; its stdout and stderr, after
/// checking it ended with code 0.
fn piped(dir: &Path, args: &[&str], input: &[u8]) -> (String, String) {
    let mut child = command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (stdout, stderr)
}

#[test]
fn piped_lines_work_as_typed_ones_into_a_csv_file() {
    let dir = scratch("interactive-pipe");
    std::fs::write(
        dir.join("d.csv"),
        "question,ground_truth,tags\nWhat?,That,\n",
    )
    .unwrap();
    let (out, err) = piped(
        &dir,
        &[
            "--metrics",
            "partial_match",
            "--dataset",
            "d.csv",
            "--tag",
            "cli",
        ],
        b":help\nWhat is RAG?\n:expect retrieval\\nand generation\n:show\n:append\n",
    );
    assert!(out.contains(":accept "), "the help: {out}");
    assert!(
        out.contains("partial_match  waiting for `expected`"),
        "{out}"
    );
    assert!(
        out.contains("partial_match  0."),
        "scored once expected: {out}"
    );
    assert!(out.contains("tags: cli"), "{out}");
    // The file has no context or metadata column: appended without them.
    assert!(out.contains("no column for context, metadata"), "{out}");
    assert!(out.contains("appended to d.csv:3"), "{out}\n{err}");
    let d = Dataset::load(dir.join("d.csv")).expect("a valid CSV dataset");
    assert_eq!(d.samples.len(), 2);
    assert_eq!(d.samples[1].input.last(), "What is RAG?");
    assert_eq!(
        d.samples[1].expected_text(),
        Some("retrieval\nand generation")
    );
    assert_eq!(d.samples[1].tags, vec!["cli"]);
}

#[test]
fn any_input_ends_cleanly() {
    let dir = scratch("interactive-garbage");
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(
        b":\n:tag\n:expect\n:accept\n:edit\nnew\n:append\n:send\n:score\n\n  \n::\n",
    );
    input.extend_from_slice(b":metrics nonsense >= x\n:dataset x.json\n:untag a\n:new\n");
    input.extend_from_slice(b"\xff\xfe not utf-8\n\x00\x1b[A\x7f\n");
    input.extend_from_slice(&[b'x'; 100_000]);
    input.extend_from_slice(b"\n:turn a\n:turn b\n:accept\n:show\n");
    // No newline at the end: the last line still counts, then EOF ends it.
    input.extend_from_slice(b":quit");
    let (out, err) = piped(&dir, &["--dataset", "out.jsonl"], &input);
    assert!(
        err.contains("unknown command") || err.contains("needs"),
        "{err}"
    );
    assert!(err.contains("no answer to accept yet"), "{err}");
    assert!(err.contains("nothing to append"), "{err}");
    assert!(
        out.contains("expected: new"),
        "a piped :edit reads the next line: {out}"
    );
    assert!(out.contains("turn 2 (not sent)"), "{out}");
    assert!(out.contains("no sample appended"), "{out}");
    assert!(!dir.join("out.jsonl").exists(), "nothing was appended");
}

#[test]
fn tool_calls_over_openai_streaming_are_shown_accepted_and_appended() {
    let dir = scratch("interactive-tools");
    let tools = serde_json::Value::from(eval_examples::demo::tool_definitions()).to_string();
    std::fs::write(dir.join("tools.json"), tools).unwrap();
    let url = format!("{}/v1/chat/completions", demo_url().trim_end_matches('/'));
    let mut cmd = command_at(&dir, &url, &[]);
    cmd.args(["--protocol", "openai", "--model", "demo-agent", "--stream"])
        .args([
            "--tools",
            "tools.json",
            "--metrics",
            "tool_correctness, contains",
        ])
        .args(["--dataset", "tools.jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"What is 12 * 7?\n:accept\n:append\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("tool calls\n  calculator(expression=\"12 * 7\") (turn 1)"),
        "{stdout}"
    );
    assert!(stdout.contains("first token"), "streamed: {stdout}");
    assert!(stdout.contains("tokens in"), "{stdout}");
    assert!(
        stdout.contains("tool_correctness  waiting for `expected_tools`"),
        "{stdout}"
    );
    assert!(stdout.contains("tool_correctness  1.000"), "{stdout}");
    let d = Dataset::load(dir.join("tools.jsonl")).unwrap();
    let calls = d.samples[0]
        .expected_tools
        .as_ref()
        .expect("expected tools");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "calculator");
    assert!(d.samples[0].expected_text().unwrap().contains("84"));
    assert_eq!(d.samples[0].metadata["agent_model"], "demo-agent");
}

#[test]
fn switching_dataset_files_backs_each_up_once() {
    let dir = scratch("interactive-switch");
    std::fs::write(
        dir.join("a.jsonl"),
        "{\"input\": \"q\", \"expected\": \"x\"}\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.jsonl"), "{not json\n").unwrap();
    let (out, err) = piped(
        &dir,
        &["--metrics", "contains", "--dataset", "a.jsonl"],
        b"What is RAG?\n:accept\n:a\n:a\n:dataset b.jsonl\n:a\n:dataset a.jsonl\n:a\n:tag again\n:a\n:dataset broken.jsonl\n:a\n",
    );
    assert!(out.contains("appended to a.jsonl:2"), "{out}\n{err}");
    assert!(out.contains("appended to b.jsonl:1"), "{out}");
    assert!(out.contains("appended to a.jsonl:3"), "{out}");
    assert!(out.contains("2 sample(s) appended to a.jsonl"), "{out}");
    assert!(out.contains("1 sample(s) appended to b.jsonl"), "{out}");
    assert!(
        err.contains("broken.jsonl does not load as a dataset"),
        "{err}"
    );
    // The broken line stays as it was; the sample is a whole line after it.
    let broken = std::fs::read_to_string(dir.join("broken.jsonl")).unwrap();
    assert!(
        broken.starts_with("{not json\n{\"input\":\"What is RAG?\""),
        "{broken}"
    );
    let names: Vec<String> = backups(&dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        2,
        "a.jsonl and broken.jsonl once each: {names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("a.jsonl.")), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("broken.jsonl.")),
        "{names:?}"
    );
    assert_eq!(Dataset::load(dir.join("a.jsonl")).unwrap().samples.len(), 3);
    assert_eq!(Dataset::load(dir.join("b.jsonl")).unwrap().samples.len(), 1);
}
