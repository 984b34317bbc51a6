//! Finished records beyond `EVAL_SPILL_BYTES` go to temporary files and come
//! back in the results file's order: a run that spills writes the same
//! results file, page and summary as one held in memory.

use crate::common::{code, demo_url, evals_with, repo, scratch, text};

/// Every field of a results file but those that differ between two runs of
/// the same agent (times).
fn stable(path: &std::path::Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("written_unix");
    o.remove("provenance");
    for s in o["samples"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("latency_ms");
    }
    for d in o["datasets"].as_array_mut().unwrap() {
        d.as_object_mut().unwrap().remove("latency_ms");
    }
    v
}

#[test]
fn a_run_that_spills_its_records_writes_what_one_held_in_memory_writes() {
    let dir = scratch("spill");
    // 400 samples (the demo dataset's eight, each under 50 ids), in an
    // order that is not the results file's.
    let lines: Vec<String> = std::fs::read_to_string(repo().join("examples/evals/rag.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut data = String::new();
    for k in (0..50).rev() {
        for line in &lines {
            let id = format!("{{\"id\": \"q{k:02}_{}\", ", data.lines().count());
            data.push_str(&line.replacen('{', &id, 1));
            data.push('\n');
        }
    }
    std::fs::write(dir.join("big.jsonl"), &data).unwrap();
    let run = |out: &str, spill: &str| {
        let o = evals_with(
            &dir,
            &[
                "evaluate",
                "big.jsonl",
                "--url",
                demo_url(),
                "--metrics",
                "contains, partial_match >= 0.5",
                "--output",
                out,
            ],
            &[("EVAL_SPILL_BYTES", spill), ("EVAL_CONCURRENCY", "8")],
        );
        assert!(matches!(code(&o), 0 | 1), "{:?}", text(&o));
        text(&o).0
    };
    let held = run("held/results.json", "64MiB");
    let spilled = run("spilled/results.json", "2KiB");
    let (a, b) = (
        stable(&dir.join("held/results.json")),
        stable(&dir.join("spilled/results.json")),
    );
    let samples = b["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 400);
    let names: Vec<&str> = samples
        .iter()
        .map(|s| s["test_name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "in test-name order");
    assert!(
        samples.iter().any(|s| s["verdict"] == "fail")
            && samples.iter().any(|s| s["verdict"] == "pass"),
        "both verdicts, so the order of failures matters"
    );
    assert_eq!(a, b);
    // The summary lists the same failures (times aside).
    let without_times = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.contains("latency") && !l.contains("results."))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(without_times(&held), without_times(&spilled));
    assert!(spilled.contains("sample(s) did not pass:"), "{spilled}");
    // The page holds every sample too.
    let page = crate::common::report_samples(&dir.join("spilled/results.html"));
    assert_eq!(page.len(), 400);
}
