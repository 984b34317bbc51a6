//! A new user's crate, outside this workspace, depending on `eval-runtime` by
//! path, with datasets full of odd names: it builds the documented test
//! names, rebuilds when a dataset line is appended (no `.rs` change), prints
//! a readable failure, and fails to compile with file:line on a broken line.
//!
//! Builds into `target/tests/fresh-crate` (the first run compiles the
//! dependencies once; later runs are incremental).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    Command::new(cargo)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", repo().join("target/tests/fresh-crate"))
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
             [workspace]\n\n[dev-dependencies]\neval-runtime = {{ path = {:?} }}\n",
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
            "odd::_42_is_the_answer",
            "odd::_7",
            "odd::crab_rocket__emoji_tada__hard_case",
            "odd::shen_me_shi_rag__zhong_wen",
            "odd::type_",
            "odd::what_is_rag_4b7190",
            "odd::what_is_rag_e8506d",
            "odd::word_word_word_word_word_word_word_word_word_f3c73f",
            "r#type::no_answer_here",
            "sheet::lines",
            "sheet::multi__conv",
        ]
    );

    // Appending a sample adds a test on the next build; no .rs file touched.
    let mut data = fs::read_to_string(dir.join("data/odd.jsonl")).unwrap();
    data.push_str("{\"input\": \"Appended later\", \"expected\": \"ok\", \"tags\": [\"new\"]}");
    fs::write(dir.join("data/odd.jsonl"), &data).unwrap();
    let after = list(&dir);
    assert_eq!(after.len(), names.len() + 1);
    assert!(
        after.contains(&"odd::appended_later__new".to_string()),
        "{after:?}"
    );
    for n in &names {
        assert!(after.contains(n), "{n} changed name after an append");
    }

    // Running: everything passes but sample id 7 (readable report) and the
    // sample without an expected answer (its sync agent is never called).
    let out = cargo(&dir, &["test", "--test", "evals"]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("test result: FAILED. 10 passed; 2 failed"),
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
        all.contains("FAILED odd::_7 (data/odd.jsonl:7, id 7)\n  input:    with id\n  expected: fails on purpose\n  actual:   with id\n"),
        "{all}"
    );
    assert!(all.contains("contains  0.000   >= 1.000    FAIL"), "{all}");
    assert!(
        !all.contains("panicked at"),
        "no panic noise around the report:\n{all}"
    );

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
