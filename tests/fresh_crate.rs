//! A new user's crate, outside this workspace, depending on `eval-runtime` by
//! path, with datasets full of odd names: it builds the documented test
//! names, rebuilds when a dataset line is appended (no `.rs` change), prints
//! a readable failure, and fails to compile with file:line on a broken line.
//!
//! Builds into `<target dir>/tmp/fresh-crate-target` (the first run compiles
//! the dependencies once; later runs are incremental).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fresh crate's own target directory, inside this build's target dir
/// (so a copy of the checkout reuses it when it shares the target dir).
fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fresh-crate-target")
}

fn cargo(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    Command::new(cargo)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("EVAL_AGENT_URL")
        .env_remove("RUSTFLAGS")
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .expect("run cargo")
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn list(dir: &Path) -> Vec<String> {
    let out = cargo(
        dir,
        &[
            "test", "--test", "evals", "--", "--list", "--format", "terse",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

const ODD_JSONL: &str = concat!(
    "{\"input\": \"什么是 RAG？\", \"expected\": \"检索增强生成\", \"tags\": [\"中文\"]}\n",
    "{\"input\": \"42 is the answer\", \"expected\": \"42\"}\n",
    "{\"input\": \"type\", \"expected\": \"keyword\"}\n",
    "{\"input\": \"🦀🚀\", \"expected\": \"crab\", \"tags\": [\"emoji 🎉\", \"Hard-Case\"]}\n",
    "{\"input\": \"What is RAG?\", \"expected\": \"x\"}\n",
    "{\"input\": \"what is rag\", \"expected\": \"y\"}\n",
    "{\"id\": 7, \"input\": \"with id\", \"expected\": \"fails on purpose\"}\n",
);

const ODD_CSV: &str = "id,input,ground_truth,tags,agent_args\r\n\
    multi,\"[\"\"Hi\"\", \"\"Bye\"\"]\",\"[\"\"Hi\"\", \"\"Bye\"\"]\",\"[\"\"conv\"\"]\",\"{\"\"k\"\": [1, 2]}\"\r\n\
    lines,\"first line\nsecond line\",second,,\r\n";

const EVALS_RS: &str = r#"
use eval_runtime::prelude::*;

// An in-process agent that repeats the question, plus the expected answer
// unless the sample is `with id`.
async fn echo(sample: &Sample) -> Response {
    let outputs: Vec<String> = sample
        .input
        .turns()
        .iter()
        .map(|t| t.clone())
        .collect();
    let mut r = Response::default().with_turn_outputs(outputs);
    if !(sample.explicit_id && sample.id == "7") {
        if let Some(e) = sample.expected_text() {
            r.output = format!("{} {e}", r.output);
        }
    }
    r
}

#[eval_dataset("data/odd.jsonl", metrics(contains))]
async fn odd(sample: &Sample) -> Response {
    echo(sample).await
}

// A sync function is only called once the sample has what its metrics need.
#[eval_dataset("data/sync.jsonl", metrics(contains))]
fn r#type(_sample: &Sample) -> Response {
    panic!("the agent was called for a sample without an expected answer")
}

// Logs every agent call (input and how many calls were in flight) to $COUNT_FILE.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[eval_dataset("data/count.jsonl", metrics(contains))]
async fn count(sample: &Sample) -> Response {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    if let Some(path) = std::env::var_os("COUNT_FILE") {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        writeln!(f, "{} {now}", sample.input.last()).unwrap();
    }
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    Response::new(sample.expected_text().unwrap_or_default())
}

// A plain function is bounded by the sample timeout too.
#[eval_dataset("data/slow.jsonl", metrics(contains), timeout_secs = 1)]
fn slow(sample: &Sample) -> Response {
    std::thread::sleep(std::time::Duration::from_secs(3));
    Response::new(sample.expected_text().unwrap_or_default())
}

#[eval_dataset("data/odd.csv", metrics(contains >= 1.0))]
async fn sheet(sample: &Sample) -> eval_runtime::Result<Response> {
    Ok(echo(sample).await)
}
"#;

#[test]
fn a_new_crate_gets_documented_names_rebuilds_on_data_and_reports_failures() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fresh-crate");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("data")).unwrap();
    fs::create_dir_all(dir.join("tests")).unwrap();
    fs::create_dir_all(dir.join("src")).unwrap();
    let runtime = repo().join("eval-runtime");
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fresh\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [workspace]\n\n[dev-dependencies]\neval-runtime = {{ path = {:?} }}\n\
             tokio = {{ version = \"1\", features = [\"time\"] }}\n",
            runtime.to_string_lossy()
        ),
    )
    .unwrap();
    fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    fs::write(dir.join("src/lib.rs"), "").unwrap();
    fs::write(dir.join("data/odd.jsonl"), ODD_JSONL).unwrap();
    fs::write(dir.join("data/odd.csv"), ODD_CSV).unwrap();
    fs::write(
        dir.join("data/sync.jsonl"),
        "{\"input\": \"no answer here\"}\n",
    )
    .unwrap();
    let count: String = (0..6)
        .map(|i| format!("{{\"input\": \"c{i}\", \"expected\": \"x\"}}\n"))
        .collect();
    fs::write(dir.join("data/count.jsonl"), count).unwrap();
    fs::write(
        dir.join("data/slow.jsonl"),
        "{\"input\": \"slow one\", \"expected\": \"x\"}\n",
    )
    .unwrap();
    fs::write(dir.join("tests/evals.rs"), EVALS_RS).unwrap();

    // A 5,000-character input, written at run time to keep this file readable.
    let long = format!(
        "{{\"input\": \"{}\", \"expected\": \"x\"}}\n",
        "word ".repeat(1000)
    );
    fs::write(dir.join("data/odd.jsonl"), format!("{ODD_JSONL}{long}")).unwrap();

    let names = list(&dir);
    assert_eq!(
        names,
        vec![
            "count::c0",
            "count::c1",
            "count::c2",
            "count::c3",
            "count::c4",
            "count::c5",
            "odd::_42_is_the_answer",
            "odd::_7",
            "odd::crab_rocket__emoji_tada__hard_case__",
            "odd::shen_me_shi_rag__zhong_wen__",
            "odd::type_",
            "odd::what_is_rag_4b7190",
            "odd::what_is_rag_e8506d",
            "odd::word_word_word_word_word_word_word_word_word_f3c73f",
            "r#type::no_answer_here",
            "sheet::lines",
            "sheet::multi__conv__",
            "slow::slow_one",
        ]
    );

    // Appending a sample adds a test on the next build; no .rs file touched.
    let mut data = fs::read_to_string(dir.join("data/odd.jsonl")).unwrap();
    data.push_str("{\"input\": \"Appended later\", \"expected\": \"ok\", \"tags\": [\"new\"]}");
    fs::write(dir.join("data/odd.jsonl"), &data).unwrap();
    let after = list(&dir);
    assert_eq!(after.len(), names.len() + 1);
    assert!(
        after.contains(&"odd::appended_later__new__".to_string()),
        "{after:?}"
    );
    for n in &names {
        assert!(after.contains(n), "{n} changed name after an append");
    }

    // Running: everything passes but sample id 7 (readable report), the
    // sample without an expected answer (its sync agent is never called) and
    // the sync agent slower than its `timeout_secs`.
    let out = cargo(&dir, &["test", "--test", "evals"]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("test result: FAILED. 16 passed; 3 failed"),
        "{all}"
    );
    assert!(
        all.contains(
            "r#type::no_answer_here (data/sync.jsonl:1, id 0): sample has no `expected` field"
        ),
        "{all}"
    );
    assert!(!all.contains("the agent was called"), "{all}");
    assert!(
        all.contains(
            "slow::slow_one (data/slow.jsonl:1, id 0): agent error: no answer within 1s (sample timeout)"
        ),
        "{all}"
    );
    assert!(
        all.contains("FAILED odd::_7 (data/odd.jsonl:7, id 7)\n  input:    with id\n  expected: fails on purpose\n  actual:   with id\n"),
        "{all}"
    );
    assert!(all.contains("contains  0.000   >= 1.000    FAIL"), "{all}");
    assert!(
        !all.contains("panicked at"),
        "no panic noise around the report:\n{all}"
    );

    batching_follows_libtest_selection(&dir);
    paths_stay_inside_the_project(&dir);

    // A broken line is a compile error naming file and line.
    data.push_str("\n{\"input\": \"broken\",}\n");
    fs::write(dir.join("data/odd.jsonl"), &data).unwrap();
    let out = cargo(&dir, &["test", "--test", "evals", "--no-run"]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("error: data/odd.jsonl:10:20: invalid JSON: trailing comma"),
        "{all}"
    );
}

/// A dataset path leading out of the project (here the crate, made a
/// repository) does not compile — by `..`, an absolute path or a symlink —
/// unless `allow_outside = true` says so.
fn paths_stay_inside_the_project(dir: &Path) {
    fs::create_dir_all(dir.join(".git")).unwrap();
    let outside = dir.with_file_name("fresh-crate-outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(
        outside.join("secret.jsonl"),
        "{\"input\": \"outside\", \"expected\": \"x\"}\n",
    )
    .unwrap();
    let _ = fs::remove_file(dir.join("data/link.jsonl"));
    std::os::unix::fs::symlink(outside.join("secret.jsonl"), dir.join("data/link.jsonl")).unwrap();
    let absolute = outside.join("secret.jsonl").to_string_lossy().into_owned();
    let attribute = |path: &str, name: &str, extra: &str| {
        format!(
            "#[eval_dataset({path:?}, metrics(contains){extra})]\nfn {name}(s: &Sample) -> Response {{ Response::new(s.expected_text().unwrap_or_default()) }}\n"
        )
    };
    let source = |extra: &str| {
        format!(
            "use eval_runtime::prelude::*;\n{}{}{}",
            attribute("../fresh-crate-outside/secret.jsonl", "dotdot", extra),
            attribute(&absolute, "absolute", extra),
            attribute("data/link.jsonl", "link", extra),
        )
    };
    fs::write(dir.join("tests/outside.rs"), source("")).unwrap();
    let out = cargo(dir, &["test", "--test", "outside", "--no-run"]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    let root = format!("outside the project {}/", dir.display());
    for (written, via) in [
        ("../fresh-crate-outside/secret.jsonl", ""),
        (absolute.as_str(), ""),
        ("data/link.jsonl", " (through a symlink)"),
    ] {
        let expected = format!(
            "error: {written}: resolves to {}{via}, {root}",
            outside.join("secret.jsonl").display()
        );
        assert!(all.contains(&expected), "missing `{expected}` in:\n{all}");
    }
    // The explicit opt-out.
    fs::write(
        dir.join("tests/outside.rs"),
        source(", allow_outside = true"),
    )
    .unwrap();
    let out = cargo(
        dir,
        &[
            "test", "--test", "outside", "--", "--list", "--format", "terse",
        ],
    );
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    for name in ["dotdot::outside", "absolute::outside", "link::outside"] {
        assert!(all.contains(&format!("{name}: test")), "{name} in:\n{all}");
    }
    fs::remove_file(dir.join("tests/outside.rs")).unwrap();
    fs::remove_dir_all(dir.join(".git")).unwrap();
}

/// The first test of a dataset starts every selected sample at once; what
/// libtest will not run is never evaluated; under nextest each process
/// evaluates only its own sample.
fn batching_follows_libtest_selection(dir: &Path) {
    let out = cargo(
        dir,
        &[
            "test",
            "--test",
            "evals",
            "--no-run",
            "--message-format=json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let exe = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["target"]["name"] == "evals" && v["executable"].is_string())
        .map(|v| PathBuf::from(v["executable"].as_str().unwrap()))
        .expect("the evals test binary");
    let run = |tag: &str, args: &[&str], env: &[(&str, &str)]| -> Vec<(String, usize)> {
        let log = dir.join(format!("calls-{tag}.txt"));
        let _ = fs::remove_file(&log);
        let mut cmd = Command::new(&exe);
        cmd.args(args)
            .env("COUNT_FILE", &log)
            .env("EVAL_RESULTS_DIR", dir.join(format!("results-{tag}")))
            .env_remove("NEXTEST")
            .env_remove("NEXTEST_RUN_ID");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{tag}: {}", text(&out));
        let mut calls: Vec<(String, usize)> = fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let (input, n) = l.split_once(' ').unwrap();
                (input.to_string(), n.parse().unwrap())
            })
            .collect();
        calls.sort();
        calls
    };
    let inputs =
        |calls: &[(String, usize)]| calls.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>();

    // One test thread, yet all six samples in flight together.
    let calls = run("all", &["count::", "--test-threads", "1"], &[]);
    assert_eq!(inputs(&calls), ["c0", "c1", "c2", "c3", "c4", "c5"]);
    assert!(
        calls.iter().any(|(_, n)| *n == 6),
        "not concurrent: {calls:?}"
    );
    let results = fs::read_to_string(dir.join("results-all/fresh/evals.json")).unwrap();
    let results: serde_json::Value = serde_json::from_str(&results).unwrap();
    assert_eq!(results["samples"].as_array().unwrap().len(), 6);
    assert_eq!(results["datasets"][0]["name"], "count");
    assert_eq!(results["datasets"][0]["passed"], 6);

    let calls = run("skip", &["count::", "--skip", "c1", "--skip=c4"], &[]);
    assert_eq!(inputs(&calls), ["c0", "c2", "c3", "c5"]);

    let calls = run("exact", &["--exact", "count::c2"], &[]);
    assert_eq!(inputs(&calls), ["c2"]);

    // nextest runs one test per process: only that sample, and a part file.
    let calls = run(
        "nextest",
        &["--exact", "count::c3", "--nocapture"],
        &[("NEXTEST", "1"), ("NEXTEST_RUN_ID", "r1")],
    );
    assert_eq!(inputs(&calls), ["c3"]);
    assert!(
        dir.join("results-nextest/fresh/evals.parts/r1/count..c3.json")
            .is_file()
    );
}
