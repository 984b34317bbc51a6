//! A test binary of the attribute killed (`kill -9`) during its first run
//! never leaves a results file that claims to be complete: the macro lists
//! the binary's datasets as it compiles them, so the file names every
//! dataset that had not finished, `evals report accept` refuses it and
//! `evals report summary` does not call it passed — nor the join `evals
//! report merge` makes of it (exit 1, naming what is missing), unless
//! other parts supply what it lacks; nor the join of nextest parts a
//! shard is missing from.
//!
//! Two parts: one kill at a known point (a sample that hangs), and kills
//! at delays drawn from a fixed seed (a bounded count, so CI runs it in
//! well under a minute once the scratch crate is built).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{build, command, read, scratch, text};

const ATTR: &str = r#"
use eval_runtime::prelude::*;

/// Answers after `EVAL_TEST_SLEEP_MS`; with `EVAL_TEST_HANG`, a sample
/// asking to hang never answers.
fn answer(sample: &Sample) -> Response {
    let ms = std::env::var("EVAL_TEST_SLEEP_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    std::thread::sleep(std::time::Duration::from_millis(ms));
    if std::env::var_os("EVAL_TEST_HANG").is_some() && sample.input.last().contains("hang") {
        std::thread::sleep(std::time::Duration::from_secs(600));
    }
    Response::new("Paris")
}

#[eval_dataset("data/a.jsonl", metrics(contains >= 1.0))]
fn a(sample: &Sample) -> Response { answer(sample) }

#[eval_dataset("data/b.jsonl", metrics(contains >= 1.0))]
fn b(sample: &Sample) -> Response { answer(sample) }

mod nested {
    use super::*;
    #[eval_dataset("data/c.jsonl", metrics(contains >= 1.0))]
    fn c(sample: &Sample) -> Response { answer(sample) }
}
"#;

fn data(n: usize, hang: bool) -> String {
    (0..n)
        .map(|i| {
            let q = if hang && i == 1 {
                "please hang"
            } else {
                "capital of France"
            };
            format!("{{\"input\": \"{q} {i}\", \"expected\": \"Paris\"}}\n")
        })
        .collect()
}

/// The one results file under `dir`, once it exists.
fn results_file(dir: &Path) -> Option<std::path::PathBuf> {
    super::files(dir, "json")
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("calibration"))
}

#[test]
fn a_killed_first_run_never_claims_to_be_complete() {
    let (a, b, c) = (data(3, false), data(3, true), data(3, false));
    let dir = scratch(
        "kills",
        &[
            ("tests/attr.rs", ATTR),
            ("tests/harness.rs", "fn main() {}\n"),
            ("data/a.jsonl", &a),
            ("data/b.jsonl", &b),
            ("data/c.jsonl", &c),
        ],
    );
    let (attr, _) = build(&dir);

    // 1. One thread, tests in name order: `a` finishes, `b` hangs, `c`
    // never starts. Killed once `a` is written.
    let results = dir.join("results-hang");
    let mut child = command(&attr, &dir, "http://127.0.0.1:9", &results)
        .args(["--test-threads", "1"])
        .env("EVAL_TEST_HANG", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let file = loop {
        if let Some(f) = results_file(&results) {
            break f;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no results file");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let r = read(&file);
    assert!(!r.complete, "a killed run claims to be complete");
    assert_eq!(
        r.missing_datasets,
        ["b (data/b.jsonl)", "c (data/c.jsonl)"],
        "every dataset that did not finish is named"
    );
    assert_eq!(r.samples.len(), 3, "what finished is kept");
    let evals = |args: &[&str]| {
        command(
            env!("CARGO_BIN_EXE_evals"),
            &dir,
            "http://127.0.0.1:9",
            &results,
        )
        .args(args)
        .output()
        .unwrap()
    };
    let summary = evals(&["report", "summary", file.to_str().unwrap()]);
    assert!(
        !summary.status.success(),
        "summary of a killed run: {}",
        text(&summary)
    );
    assert!(text(&summary).contains("incomplete"), "{}", text(&summary));
    let baseline = dir.join("baseline.json");
    let accept = evals(&[
        "report",
        "accept",
        file.to_str().unwrap(),
        baseline.to_str().unwrap(),
    ]);
    assert_eq!(
        accept.status.code(),
        Some(2),
        "accept of a killed run: {}",
        text(&accept)
    );
    assert!(
        text(&accept).contains("holds an incomplete run"),
        "{}",
        text(&accept)
    );
    assert!(!baseline.exists(), "a killed run became the baseline");
    merged_killed_run_stays_incomplete(&file, &baseline, evals);

    // The same binary run to its end is complete; filtered, it says what
    // it left out.
    let whole = dir.join("results-whole");
    let out = command(&attr, &dir, "http://127.0.0.1:9", &whole)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let r = read(&results_file(&whole).unwrap());
    assert!(
        r.complete && r.missing_datasets.is_empty(),
        "{:?}",
        r.missing_datasets
    );
    let filtered = dir.join("results-filtered");
    let out = command(&attr, &dir, "http://127.0.0.1:9", &filtered)
        .args(["--skip", "b::"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let filtered = results_file(&filtered).unwrap();
    let r = read(&filtered);
    assert!(!r.complete, "a filtered run lacks `b`");
    assert_eq!(r.missing_datasets, ["b (data/b.jsonl)"]);
    filtered_runs_join_whole(&dir, &attr, (&filtered, &file), evals);

    // 2. Kills at delays from a fixed seed, each a first run: whatever
    // the file holds, it is complete only when it holds every dataset.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut killed = 0;
    for round in 0..8 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_millis(150 + seed % 900);
        let results = dir.join(format!("results-kill-{round}"));
        let mut child = command(&attr, &dir, "http://127.0.0.1:9", &results)
            .env("EVAL_TEST_SLEEP_MS", "60")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let finished = child.try_wait().unwrap().is_some();
        let _ = child.kill();
        child.wait().unwrap();
        killed += usize::from(!finished);
        let Some(file) = results_file(&results) else {
            continue;
        };
        let r = read(&file);
        let datasets: Vec<&str> = r.datasets.iter().map(|d| d.name.as_str()).collect();
        if r.complete {
            assert_eq!(
                datasets,
                ["a", "b", "nested::c"],
                "round {round} after {delay:?}"
            );
            assert!(r.missing_datasets.is_empty());
        } else {
            assert!(
                !r.missing_datasets.is_empty() || r.datasets.iter().any(|d| !d.complete),
                "round {round}: incomplete without saying what is missing"
            );
        }
    }
    assert!(killed > 0, "no round was killed before its end");
    nextest_parts_without_a_shard(&dir, &attr, evals);
}

/// The run of `b` alone supplies what the run filtered to the others
/// lacks: their join is the whole run (exit 0); the killed run (`killed`)
/// and `b` still lack `c` (exit 1).
fn filtered_runs_join_whole(
    dir: &Path,
    attr: &Path,
    (filtered, killed): (&Path, &Path),
    evals: impl Fn(&[&str]) -> std::process::Output,
) {
    let only_b = dir.join("results-only-b");
    let out = command(attr, dir, "http://127.0.0.1:9", &only_b)
        .arg("b::")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let only_b = results_file(&only_b).unwrap();
    assert_eq!(
        read(&only_b).missing_datasets,
        ["a (data/a.jsonl)", "c (data/c.jsonl)"]
    );
    let joined = dir.join("joined.json");
    let out = evals(&[
        "report",
        "merge",
        joined.to_str().unwrap(),
        filtered.to_str().unwrap(),
        only_b.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = read(&joined);
    assert!(r.complete && r.missing_datasets.is_empty(), "{r:?}");
    let out = evals(&[
        "report",
        "merge",
        joined.to_str().unwrap(),
        killed.to_str().unwrap(),
        only_b.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = read(&joined);
    assert!(!r.complete);
    assert_eq!(r.missing_datasets, ["c (data/c.jsonl)"]);
}

/// Under nextest each test is its own process and leaves a part; a shard
/// that never reported (killed, its job lost) takes whole datasets with it
/// when they were small: the parts that did report still name the binary's
/// other datasets, so their join is not taken for the whole run.
fn nextest_parts_without_a_shard(
    dir: &Path,
    attr: &Path,
    evals: impl Fn(&[&str]) -> std::process::Output,
) {
    let results = dir.join("results-nextest");
    let list = command(attr, dir, "http://127.0.0.1:9", &results)
        .args(["--list", "--format", "terse"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", text(&list));
    let names: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    let run = |names: &mut dyn Iterator<Item = &String>| {
        for name in names {
            let out = command(attr, dir, "http://127.0.0.1:9", &results)
                .args(["--exact", name, "--nocapture"])
                .env("NEXTEST", "1")
                .env("NEXTEST_RUN_ID", "run-1")
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}: {}", text(&out));
        }
    };
    run(&mut names.iter().filter(|n| n.starts_with("a::")));
    let merged = dir.join("nextest-merged.json");
    let out = evals(&[
        "report",
        "merge",
        merged.to_str().unwrap(),
        results.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "a shard missing: {said}");
    assert!(
        said.contains("dataset(s) `b (data/b.jsonl)`, `c (data/c.jsonl)` did not run"),
        "{said}"
    );
    let r = read(&merged);
    assert!(!r.complete);
    assert_eq!(r.datasets.len(), 1, "{:?}", r.datasets);
    // The other shard's parts: the join is the whole run.
    run(&mut names.iter().filter(|n| !n.starts_with("a::")));
    let out = evals(&[
        "report",
        "merge",
        merged.to_str().unwrap(),
        results.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = read(&merged);
    assert!(r.complete && r.missing_datasets.is_empty(), "{r:?}");
    assert_eq!(r.samples.len(), 9);
}

/// `evals report merge` of the killed run's file (what a CI job that joins
/// its shards after one was killed does) says it is incomplete, names what
/// is missing and exits 1; the joined file keeps saying so, so `report
/// accept` refuses it and `report summary` does not call it passed — with
/// `--partial` too.
fn merged_killed_run_stays_incomplete(
    file: &Path,
    baseline: &Path,
    evals: impl Fn(&[&str]) -> std::process::Output,
) {
    let merged = file.with_file_name("merged.json");
    let out = evals(&[
        "report",
        "merge",
        merged.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "merge of a killed run: {said}");
    for missing in ["b (data/b.jsonl)", "c (data/c.jsonl)"] {
        assert!(
            said.contains(&format!("error: dataset {missing} is not in the join")),
            "{said}"
        );
    }
    assert!(
        said.contains(
            "(incomplete: dataset(s) `b (data/b.jsonl)`, `c (data/c.jsonl)` did not run)"
        ),
        "{said}"
    );
    let r = read(&merged);
    assert!(
        !r.complete,
        "the join of a killed run claims to be complete"
    );
    assert_eq!(r.missing_datasets, read(file).missing_datasets);
    assert_eq!(r.samples.len(), 3);
    let summary = evals(&["report", "summary", merged.to_str().unwrap()]);
    assert_eq!(summary.status.code(), Some(1), "{}", text(&summary));
    assert!(text(&summary).contains("INCOMPLETE"), "{}", text(&summary));
    let accept = evals(&[
        "report",
        "accept",
        merged.to_str().unwrap(),
        baseline.to_str().unwrap(),
    ]);
    assert_eq!(accept.status.code(), Some(2), "{}", text(&accept));
    assert!(
        !baseline.exists(),
        "the join of a killed run became the baseline"
    );
    // `--partial` accepts the join, which still says what it lacks.
    let out = evals(&[
        "report",
        "merge",
        "--partial",
        merged.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(
        text(&out).contains("(incomplete: dataset(s) `b (data/b.jsonl)`"),
        "{}",
        text(&out)
    );
    let r = read(&merged);
    assert!(!r.complete && r.missing_datasets.len() == 2, "{r:?}");
    let summary = evals(&["report", "summary", merged.to_str().unwrap()]);
    assert_eq!(summary.status.code(), Some(1), "{}", text(&summary));
}
