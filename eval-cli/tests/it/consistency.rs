//! A results file that does not add up — a hand-edited one claiming
//! `complete: true` with 10 of its 30 records — is refused with exit 2 by
//! every command that relies on it: `report summary`, `diff`, `accept`,
//! `html`, `merge`, and `evaluate --baseline`; the file as the run wrote
//! it is not.

use crate::common;

use common::{code, evals, evaluate_demo, scratch, text};

/// 30 questions the demo agent answers.
fn dataset() -> String {
    (0..30)
        .map(|i| format!("{{\"input\": \"What is RAG? ({i})\", \"expected\": \"Retrieval\"}}\n"))
        .collect()
}

#[test]
fn a_file_that_does_not_add_up_is_refused_everywhere() {
    let dir = scratch("consistency");
    std::fs::write(dir.join("qa.jsonl"), dataset()).unwrap();
    let out = evaluate_demo(
        &dir,
        "qa.jsonl",
        "contains",
        &["--output", "run.json", "--no-html"],
        &[],
    );
    assert!([0, 1].contains(&code(&out)), "{:?}", text(&out));
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["complete"], true, "{run}");
    assert_eq!(run["datasets"][0]["samples"], 30);
    assert_eq!(run["samples"].as_array().unwrap().len(), 30);
    // The run as written is consistent: summarised, its code is its verdict.
    let out = evals(&dir, &["report", "summary", "run.json"]);
    assert!([0, 1].contains(&code(&out)), "{:?}", text(&out));

    // Edited by hand: 20 records cut, the totals and `complete` left.
    let mut edited = run.clone();
    edited["samples"].as_array_mut().unwrap().truncate(10);
    std::fs::write(
        dir.join("edited.json"),
        serde_json::to_string_pretty(&edited).unwrap(),
    )
    .unwrap();
    let said = "edited.json does not add up: dataset `qa` says 30 samples, its records give 10";
    for args in [
        &["report", "summary", "edited.json"][..],
        &["report", "summary", "--format", "markdown", "edited.json"],
        &["report", "accept", "edited.json", "baseline.json"],
        &[
            "report",
            "accept",
            "--partial",
            "edited.json",
            "baseline.json",
        ],
        &["report", "diff", "run.json", "edited.json"],
        &["report", "diff", "edited.json", "run.json"],
        &["report", "diff", "--partial", "run.json", "edited.json"],
        &["report", "html", "edited.json", "-o", "edited.html"],
        &["report", "html", "run.json", "--baseline", "edited.json"],
        &["report", "merge", "merged.json", "edited.json"],
        &["report", "merge", "--partial", "merged.json", "edited.json"],
    ] {
        let out = evals(&dir, args);
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(
            stderr.contains("it says complete, but `qa` holds 10 of 30 planned samples"),
            "{args:?}: {stderr}"
        );
    }
    for file in ["baseline.json", "merged.json", "edited.html"] {
        assert!(!dir.join(file).exists(), "{file} written from a bad file");
    }
    // A run gated on it as its baseline.
    let out = evaluate_demo(
        &dir,
        "qa.jsonl",
        "contains",
        &["--baseline", "edited.json", "--no-html"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(stderr.contains(said), "{stderr}");

    // A count changed by hand is caught as well.
    let mut edited = run;
    let errors = edited["datasets"][0]["errors"].as_u64().unwrap();
    edited["datasets"][0]["errors"] = (errors + 1).into();
    std::fs::write(dir.join("edited.json"), edited.to_string()).unwrap();
    let out = evals(&dir, &["report", "accept", "edited.json", "baseline.json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "dataset `qa` says {} errors, its records give {errors}",
            errors + 1
        )),
        "{stderr}"
    );
    assert!(!dir.join("baseline.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}
