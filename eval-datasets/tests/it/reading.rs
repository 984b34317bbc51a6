//! How dataset files are read: only regular files (a FIFO or a device is
//! refused at once, never opened), at most a size limit, in time linear in
//! the file's size, and every problem on one line of its own.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use eval_datasets::{Dataset, DatasetError, Manifest};

/// A fresh directory under this build's target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "eval-datasets-reading-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `f`'s result, or a failure when it takes longer than `limit` (it runs on
/// a thread of its own, left behind when it does not finish).
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: still running after {limit:?}"))
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_being_opened() {
    let dir = scratch("fifo");
    let fifo = dir.join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let shown = fifo.clone();
    let err = within(Duration::from_secs(5), "loading a FIFO", move || {
        Dataset::load(&shown).map(|d| d.samples.len())
    })
    .expect_err("a FIFO is not a dataset");
    assert!(matches!(err, DatasetError::NotAFile { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.ends_with("pipe.jsonl: cannot read dataset: not a regular file (a FIFO)"),
        "{msg}"
    );
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_at_once() {
    let dir = scratch("device");
    let zero = dir.join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let shown = zero.clone();
    let started = Instant::now();
    let err = within(Duration::from_secs(5), "loading /dev/zero", move || {
        Dataset::load(&shown).map(|d| d.samples.len())
    })
    .expect_err("/dev/zero is not a dataset");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        err.to_string()
            .ends_with("zero.jsonl: cannot read dataset: not a regular file (a character device)"),
        "{err}"
    );
    // A directory too.
    std::fs::create_dir_all(dir.join("d.jsonl")).unwrap();
    let err = Dataset::load(dir.join("d.jsonl")).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("not a regular file (a directory)"),
        "{err}"
    );
}

#[test]
fn a_dataset_over_the_size_limit_is_refused_with_both_sizes() {
    let dir = scratch("size");
    let file = dir.join("big.jsonl");
    let line = "{\"input\": \"What is RAG?\", \"expected\": \"retrieval\"}\n";
    std::fs::write(&file, line.repeat(10)).unwrap();
    let size = (line.len() * 10) as u64;
    let err = Dataset::load_limited(&file, "big.jsonl", size - 1).unwrap_err();
    assert!(
        matches!(err, DatasetError::TooLarge { size: s, limit, .. } if s == size && limit == size - 1),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "big.jsonl: dataset is too large: {size} bytes, over the limit of {} bytes (EVAL_MAX_DATASET_BYTES)",
            size - 1
        )
    );
    let ds = Dataset::load_limited(&file, "big.jsonl", size).unwrap();
    assert_eq!(ds.samples.len(), 10);
    assert_eq!(
        eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
        1 << 30,
        "1 GiB unless EVAL_MAX_DATASET_BYTES says otherwise"
    );
}

/// A `.json` array of `n` samples, one per line after the `[`.
fn json_array(n: usize) -> String {
    let mut text = String::from("[\n");
    for i in 0..n {
        let comma = if i + 1 < n { "," } else { "" };
        text.push_str(&format!(
            "  {{\"id\": \"s{i}\", \"input\": \"Question {i}: what is retrieval-augmented generation?\", \"expected\": \"answer {i}\"}}{comma}\n"
        ));
    }
    text.push(']');
    text
}

#[test]
fn a_large_json_array_loads_in_linear_time() {
    // 40,000 items: scanning from the file's start for each item's line took
    // minutes here (debug build); one pass takes well under a second.
    let n = 40_000;
    let text = json_array(n);
    let ds = within(
        Duration::from_secs(20),
        "loading 40,000 .json items",
        move || Dataset::from_bytes("big.json", text.as_bytes()).unwrap(),
    );
    assert_eq!(ds.samples.len(), n);
    assert_eq!(ds.samples[0].source.line, 2);
    assert_eq!(ds.samples[n - 1].source.line, n + 1);
    assert_eq!(ds.samples[n - 1].id, format!("s{}", n - 1));
    // The same for a runevals document and an Unrag dataset.
    let mut items = String::from("{\"schemaVersion\": \"1.2.0\", \"items\": [\n");
    for i in 0..n {
        let comma = if i + 1 < n { "," } else { "" };
        items.push_str(&format!("{{\"prompt\": \"question {i}\"}}{comma}\n"));
    }
    items.push_str("]}");
    let ds = within(
        Duration::from_secs(20),
        "loading 40,000 runevals items",
        move || Dataset::from_bytes("big.json", items.as_bytes()).unwrap(),
    );
    assert_eq!(ds.samples[n - 1].source.line, n + 1);
    let mut unrag = String::from(
        "{\"version\": \"1\", \"id\": \"big\", \"defaults\": {\"topK\": 1, \"scopePrefix\": \"eval:big:\"},\n\"documents\": [{\"sourceId\": \"eval:big:a\", \"content\": \"a\"}],\n\"queries\": [\n",
    );
    for i in 0..n {
        let comma = if i + 1 < n { "," } else { "" };
        unrag.push_str(&format!(
            "{{\"id\": \"q{i}\", \"query\": \"question {i}\", \"relevant\": {{\"sourceIds\": [\"eval:big:a\"]}}}}{comma}\n"
        ));
    }
    unrag.push_str("]}");
    let ds = within(
        Duration::from_secs(20),
        "loading 40,000 Unrag queries",
        move || Dataset::from_bytes("big.json", unrag.as_bytes()).unwrap(),
    );
    assert_eq!(ds.samples[n - 1].source.line, n + 3);
}

#[test]
fn a_wide_csv_header_is_checked_in_linear_time() {
    // 64,000 columns: comparing each with every earlier one took half a
    // minute here (debug build); a map takes well under a second.
    let n = 64_000;
    let mut header: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    header.push("input".into());
    let mut row: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    row.push("q".into());
    let text = format!("{}\n{}\n", header.join(","), row.join(","));
    let ds = within(
        Duration::from_secs(10),
        "a 64,001-column header",
        move || Dataset::from_bytes("wide.csv", text.as_bytes()).unwrap(),
    );
    assert_eq!(ds.samples[0].extra.len(), n);
    // Duplicates are still found, whatever their case.
    let err = Dataset::from_bytes("dup.csv", b"input,Tag,expected,TAG\na,b,c,d\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "dup.csv:1: field `TAG`: column `TAG` appears twice in the header row"
    );
    let err = Dataset::from_bytes("dup.csv", b"input,question\na,b\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "dup.csv:1: field `question`: columns `input` and `question` both fill the same sample field; keep one"
    );
}

#[test]
fn a_quoted_csv_header_with_line_breaks_is_reported_on_one_line() {
    let err =
        Dataset::from_bytes("h.csv", b"\"in\nput\",\"exp\r\nected\"\n\"a\",\"b\"\n").unwrap_err();
    let msg = err.to_string();
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert_eq!(
        msg,
        "h.csv:1: no `input` column in the header row (found: in\\nput, exp\\r\\nected); accepted names: input, query, question, prompt, user_input"
    );
    let err = Dataset::from_bytes("h.csv", b"input,\"a\nb\",\"A\nB\"\nx,y,z\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "h.csv:1: field `A\\nB`: column `A\\nB` appears twice in the header row"
    );
    // A long header name is cut.
    let long = "x".repeat(500);
    let err = Dataset::from_bytes("h.csv", format!("\"{long}\"\nq\n").as_bytes()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.len() < 300, "{msg}");
    assert!(msg.contains("xxx…"), "{msg}");
}

#[test]
fn invalid_utf8_in_a_manifest_names_line_and_column() {
    let dir = scratch("manifest-utf8");
    std::fs::write(
        dir.join("agent.yaml"),
        b"spec:\n  evaluation:\n    fra\xffmework: ragas\n",
    )
    .unwrap();
    let err = Manifest::load(&dir.join("agent.yaml"), "agent.yaml", &dir).unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent.yaml:3:8: invalid UTF-8 (byte 0xff): a manifest is UTF-8 text"
    );
}
