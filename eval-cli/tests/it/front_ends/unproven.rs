//! Inconclusive verdicts are visible under `cargo test`: libtest shows a
//! sample that passed without proof as plain `ok` (and one that failed
//! without proof as `FAILED`), so the attribute and the harness say once
//! per run how many there were, in the `evals` command's words, naming
//! them and pointing at the results file. Under nextest (one process per
//! sample) no process says it; the merged file's summary does.
//!
//! The agent is in-process and deterministic: sample `right-R…` is answered
//! right in R of its 5 runs (`repeat = 5`, `contains >= 0.5`): 5 of 5 and
//! 0 of 5 are decided, 3 of 5 and 2 of 5 straddle the threshold
//! (inconclusive; the point estimate counts 3/5 as passed and 2/5 as
//! failed, `inconclusive = "fail"` counts both as failed).

use std::path::Path;

use eval_runtime::results::{Results, Verdict};

use super::{build, command, evals, read, text};

const VOTES: &str = r#"{"id": "right-5", "input": "q5", "expected": "yes"}
{"id": "right-3a", "input": "q3a", "expected": "yes"}
{"id": "right-3b", "input": "q3b", "expected": "yes"}
{"id": "right-2", "input": "q2", "expected": "yes"}
{"id": "right-0", "input": "q0", "expected": "yes"}
"#;

/// The agent both binaries share.
const AGENT: &str = r#"
use std::collections::BTreeMap;
use std::sync::Mutex;
use eval_runtime::{Response, Sample};

/// Run k (0-based, counted per sample in `runs`) of sample `right-R…` is
/// right when k < R.
fn answer(runs: &Mutex<BTreeMap<String, usize>>, sample: &Sample) -> Response {
    let k = {
        let mut runs = runs.lock().unwrap();
        let k = runs.entry(sample.id.clone()).or_insert(0);
        *k += 1;
        *k - 1
    };
    let right: usize = sample.id["right-".len()..][..1].parse().unwrap();
    if k < right {
        Response::new(sample.expected_text().unwrap_or_default())
    } else {
        Response::new("no idea")
    }
}
"#;

const ATTR: &str = r#"
use eval_runtime::prelude::*;

static ESTIMATE: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
static STRICT: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

#[eval_dataset("data/votes.jsonl", metrics(contains >= 0.5), repeat = 5)]
fn estimate(sample: &Sample) -> Response {
    answer(&ESTIMATE, sample)
}

#[eval_dataset("data/votes.jsonl", metrics(contains >= 0.5), repeat = 5, inconclusive = "fail")]
fn strict(sample: &Sample) -> Response {
    answer(&STRICT, sample)
}
"#;

const HARNESS: &str = r#"
static RUNS: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

async fn agent(sample: &Sample) -> Response {
    answer(&RUNS, sample)
}

fn main() -> std::process::ExitCode {
    eval_runtime::Harness::new()
        .dataset("data/votes.jsonl", "contains >= 0.5")
        .repeat(5)
        .agent_fn(agent)
        .run()
}
"#;

/// Of `dataset` in `r`: the samples inconclusive and counted as passed,
/// and those counted as failed.
fn unproven(r: &Results, dataset: &str) -> (usize, usize) {
    let of = |counted: bool| {
        r.samples
            .iter()
            .filter(|s| s.dataset == dataset && s.verdict == Verdict::Inconclusive)
            .filter(|s| s.counts_as_passed() == counted)
            .count()
    };
    (of(true), of(false))
}

/// The line said of `n` samples that `passed` (or failed) without proof.
fn said(n: usize, passed: bool) -> String {
    format!(
        "{n} sample(s) {} with an inconclusive verdict (more runs, `repeat = \"auto\"`, would decide them): ",
        if passed { "passed" } else { "failed" }
    )
}

/// `out` says `line` exactly once.
fn once(out: &str, line: &str) {
    assert_eq!(out.matches(line).count(), 1, "{line:?} once in:\n{out}");
}

#[test]
fn the_attribute_and_the_harness_say_once_how_many_passed_without_proof() {
    let dir = super::scratch(
        "unproven",
        &[
            ("data/votes.jsonl", VOTES),
            ("tests/attr.rs", &format!("{AGENT}{ATTR}")),
            ("tests/harness.rs", &format!("{AGENT}{HARNESS}")),
        ],
    );
    let (attr_exe, harness_exe) = build(&dir);
    let url = "http://127.0.0.1:9";

    // The attribute, as `cargo test` runs it: each dataset says it once.
    let results = dir.join("out/attr");
    let attr = command(&attr_exe, &dir, url, &results).output().unwrap();
    let attr_text = text(&attr);
    assert_eq!(attr.status.code(), Some(101), "{attr_text}");
    let file = results.join("unproven/attr.json");
    let r = read(&file);
    let (passed, failed) = unproven(&r, "estimate");
    assert!(
        passed >= 2 && failed >= 1,
        "3/5 and 2/5 straddle 0.5: {passed}, {failed}"
    );
    once(
        &attr_text,
        &format!("note: estimate: {}", said(passed, true)),
    );
    once(
        &attr_text,
        &format!("note: estimate: {}", said(failed, false)),
    );
    assert_eq!(unproven(&r, "strict"), (0, passed + failed), "{attr_text}");
    once(
        &attr_text,
        &format!("note: strict: {}", said(passed + failed, false)),
    );
    assert!(
        !attr_text.contains("note: strict: 0 sample(s)"),
        "{attr_text}"
    );
    // Named, and where every one is.
    assert!(attr_text.contains("estimate::right_3a"), "{attr_text}");
    assert!(
        attr_text.contains(&format!("(every one in {};", file.display())),
        "{attr_text}"
    );
    // The tests themselves are libtest's plain `ok`: the note is the truth.
    assert!(
        attr_text.contains("test estimate::right_3a ... ok"),
        "{attr_text}"
    );

    // Arguments the attribute does not understand (an unstable libtest
    // option): each test evaluates its own sample and rewrites the results
    // file, and the count is still said once per dataset, when it is whole.
    let one_by_one = command(&attr_exe, &dir, url, &dir.join("out/one-by-one"))
        .args(["-Zunstable-options", "--exclude-should-panic"])
        .env("RUSTC_BOOTSTRAP", "1")
        .output()
        .unwrap();
    let one_text = text(&one_by_one);
    assert!(
        one_text.contains("unrecognised test arguments; evaluating one sample per test"),
        "{one_text}"
    );
    once(
        &one_text,
        &format!("note: estimate: {}", said(passed, true)),
    );
    once(
        &one_text,
        &format!("note: strict: {}", said(passed + failed, false)),
    );

    // A filtered run says it of what it ran.
    let only = command(&attr_exe, &dir, url, &dir.join("out/only"))
        .arg("estimate::right_3")
        .output()
        .unwrap();
    let only_text = text(&only);
    assert_eq!(only.status.code(), Some(0), "{only_text}");
    let (passed_here, _) = unproven(&read(&dir.join("out/only/unproven/attr.json")), "estimate");
    assert!(passed_here >= 1, "{only_text}");
    once(
        &only_text,
        &format!("note: estimate: {}", said(passed_here, true)),
    );
    assert!(
        !only_text.contains("failed with an inconclusive"),
        "{only_text}"
    );

    // The harness: once for the run, after libtest's own count.
    let results = dir.join("out/harness");
    let harness = command(&harness_exe, &dir, url, &results).output().unwrap();
    let harness_text = text(&harness);
    assert_eq!(harness.status.code(), Some(101), "{harness_text}");
    let r = read(&results.join("unproven/harness.json"));
    let (passed, failed) = unproven(&r, "votes");
    assert!(passed >= 2 && failed >= 1, "{harness_text}");
    once(&harness_text, &format!("note: {}", said(passed, true)));
    once(&harness_text, &format!("note: {}", said(failed, false)));
    let count_at = harness_text
        .find("test result: FAILED")
        .expect("libtest's count");
    assert!(
        harness_text.find(&said(passed, true)).unwrap() > count_at,
        "{harness_text}"
    );

    // Under nextest each process runs one sample and says nothing of it;
    // the merged file's summary lists them.
    nextest_says_nothing_and_the_merge_does(&dir, &attr_exe, url);
    let _ = std::fs::remove_dir_all(&dir);
}

fn nextest_says_nothing_and_the_merge_does(dir: &Path, exe: &Path, url: &str) {
    let parts = dir.join("out/nextest");
    for id in ["right_5", "right_3a", "right_3b", "right_2", "right_0"] {
        let out = command(exe, dir, url, &parts)
            .args(["--exact", &format!("estimate::{id}"), "--nocapture"])
            .env("NEXTEST", "1")
            .env("NEXTEST_RUN_ID", "run")
            .output()
            .unwrap();
        assert!(
            !text(&out).contains("with an inconclusive verdict"),
            "{id}: {}",
            text(&out)
        );
    }
    let merged = dir.join("out/merged.json");
    let parts_dir = parts.join("unproven/attr.parts/run");
    let out = evals(
        dir,
        url,
        &parts,
        &[
            "report",
            "merge",
            "--partial",
            merged.to_str().unwrap(),
            parts_dir.to_str().unwrap(),
        ],
    );
    assert!(merged.is_file(), "{}", text(&out));
    let r = read(&merged);
    let (passed, failed) = unproven(&r, "estimate");
    assert!(passed >= 2 && failed >= 1, "{}", text(&out));
    // What `evals report merge` can print of it, and the summary's words.
    let lines = eval_runtime::__cli::results::unproven_lines(&r, Some(&merged));
    assert!(lines[0].starts_with(&said(passed, true)), "{lines:?}");
    assert!(lines[1].starts_with(&said(failed, false)), "{lines:?}");
    let summary = evals(
        dir,
        url,
        &parts,
        &["report", "summary", merged.to_str().unwrap()],
    );
    assert!(
        text(&summary).contains(&format!(
            "{passed} sample(s) passed with an inconclusive verdict (more runs, `repeat = \"auto\"`, would decide them):"
        )),
        "{}",
        text(&summary)
    );
}
