//! Provenance in every results file, and runs that may not be compared:
//! `evals report diff`, `report merge` and `evaluate --baseline` refuse
//! (exit 2, naming what differs) runs scored by different judges or run on
//! different dataset contents, unless told, and then say so in every
//! output. Against the demo agent and the scripted judge, on loopback.

use crate::common;

use common::*;
use eval_examples::judge::{self, JudgeConfig};
use eval_runtime::results::Results;

const DATASET: &str = r#"{"id": "paris", "input": "What is the capital of France?", "expected": "Paris", "context": ["Paris is the capital and largest city of France, on the river Seine."]}
{"id": "rag", "input": "What is retrieval-augmented generation?", "expected": "grounded in real sources", "context": ["Retrieval-augmented generation (RAG) first retrieves documents relevant to a question and then gives them to a language model as context."]}
"#;

/// `evals evaluate qa.jsonl` scored with `contains` and `faithfulness` by the
/// scripted judge at `judge_url` asking `model`, results to `out`.
fn run(dir: &std::path::Path, judge_url: &str, model: &str, out: &str) -> std::process::Output {
    evaluate_demo(
        dir,
        "qa.jsonl",
        "contains, faithfulness >= 0.0",
        &["--output", out, "--no-html"],
        &[
            ("EVAL_JUDGE_URL", &format!("{judge_url}/v1")),
            ("EVAL_JUDGE_MODEL", model),
        ],
    )
}

#[test]
fn every_results_file_says_where_its_scores_come_from() {
    let dir = scratch("provenance-file");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let out = run(&dir, &server.url(), "gpt-4o-mini", "a.json");
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let r = Results::read(&dir.join("a.json")).unwrap();
    let p = r.provenance.expect("provenance");
    assert!(p.tool.starts_with("eval-runtime "), "{}", p.tool);
    // The dataset file's SHA-256, computed here independently.
    let d = &p.datasets[0];
    assert_eq!((d.name.as_str(), d.file.as_str()), ("qa", "qa.jsonl"));
    assert_eq!(
        d.sha256.as_deref(),
        Some(sha256_hex(DATASET.as_bytes()).as_str())
    );
    let agent = d.agent.as_ref().unwrap();
    assert_eq!(agent.kind, "http");
    assert_eq!(agent.settings["protocol"], "json");
    // The judge: model, host (never the path or a key), settings, and the
    // versions of each judged metric's prompts and definition.
    let j = p.judge.expect("judge fingerprint");
    assert_eq!(j.model, "gpt-4o-mini");
    assert!(j.host.starts_with("127.0.0.1:"), "{}", j.host);
    assert_eq!((j.temperature, j.seed), (0.0, 42));
    let faith = &j.metrics["faithfulness"];
    assert!(!faith.prompts.is_empty());
    assert!(!j.metrics.contains_key("contains"), "not a judged metric");
    // Every sample carries its content's hash.
    assert!(
        r.samples
            .iter()
            .all(|s| s.hash.as_ref().is_some_and(|h| h.len() == 16))
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_run_in_a_git_checkout_names_its_revision_and_whether_tracked_files_changed() {
    let dir = scratch("provenance-git");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    std::fs::write(dir.join("notes.txt"), "first\n").unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git is on PATH (CI clones the repository with it)");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "qa.jsonl", "notes.txt"]);
    git(&["commit", "-q", "-m", "dataset"]);
    let head = git(&["rev-parse", "HEAD"]);
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let state = |out: &str| {
        let r = Results::read(&dir.join(out)).unwrap();
        r.provenance.and_then(|p| p.git).expect("a git state")
    };
    // Untracked files (the results themselves) do not count.
    assert_eq!(code(&run(&dir, &server.url(), "m", "clean.json")), 0);
    let clean = state("clean.json");
    assert_eq!(
        (clean.revision.as_str(), clean.dirty),
        (head.as_str(), Some(false))
    );
    // A tracked file changed since the commit.
    std::fs::write(dir.join("notes.txt"), "second\n").unwrap();
    assert_eq!(code(&run(&dir, &server.url(), "m", "dirty.json")), 0);
    let dirty = state("dirty.json");
    assert_eq!(
        (dirty.revision.as_str(), dirty.dirty),
        (head.as_str(), Some(true))
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn runs_judged_by_different_models_are_not_compared_unless_told() {
    let dir = scratch("provenance-judge");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let url = server.url();
    assert_eq!(code(&run(&dir, &url, "gpt-4o-mini", "mini.json")), 0);
    assert_eq!(code(&run(&dir, &url, "gpt-4o", "big.json")), 0);
    // The issue's case: it used to say "0 worse", exit 0.
    let out = evals(&dir, &["report", "diff", "mini.json", "big.json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "the runs cannot be compared: `faithfulness`: judge model gpt-4o-mini → gpt-4o"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-judge-change"), "{stderr}");
    // Told, it compares, and every output says so.
    for (format, caveat) in [
        (
            "text",
            "note: compared across a judge change: `faithfulness`: judge model gpt-4o-mini → gpt-4o",
        ),
        (
            "markdown",
            "> ⚠️ compared across a judge change: \\`faithfulness\\`: judge model gpt-4o-mini → gpt-4o",
        ),
        (
            "json",
            "compared across a judge change: `faithfulness`: judge model gpt-4o-mini → gpt-4o",
        ),
    ] {
        let out = evals(
            &dir,
            &[
                "report",
                "diff",
                "mini.json",
                "big.json",
                "--allow-judge-change",
                "--format",
                format,
            ],
        );
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 0, "{format}: {stdout}{stderr}");
        assert!(stdout.contains(caveat), "{format}: {stdout}");
    }
    // The same judge: comparable, nothing to say.
    let out = evals(&dir, &["report", "diff", "mini.json", "mini.json"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(!text(&out).0.contains("judge change"));
    // A merge of parts scored by different judges is refused too.
    let out = evals(
        &dir,
        &["report", "merge", "joined.json", "mini.json", "big.json"],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    // (Inputs are read in path order: big.json first.)
    assert!(
        text(&out).1.contains("judge model gpt-4o → gpt-4o-mini"),
        "{:?}",
        text(&out)
    );
    // A baseline judged by another model.
    let baseline = |extra: &[&str]| {
        let mut args = vec!["--baseline", "mini.json", "--no-html"];
        args.extend_from_slice(extra);
        evaluate_demo(
            &dir,
            "qa.jsonl",
            "contains, faithfulness >= 0.0",
            &args,
            &[
                ("EVAL_JUDGE_URL", format!("{url}/v1").as_str()),
                ("EVAL_JUDGE_MODEL", "gpt-4o"),
            ],
        )
    };
    let out = baseline(&[]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("baseline mini.json cannot be compared with this run: `faithfulness`: judge model gpt-4o-mini → gpt-4o"),
        "{:?}",
        text(&out)
    );
    let out = baseline(&["--allow-judge-change"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(text(&out).0.contains("compared across a judge change"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn runs_on_other_dataset_content_are_not_compared_unless_told() {
    let dir = scratch("provenance-dataset");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let plain = |out: &str| {
        evaluate_demo(
            &dir,
            "qa.jsonl",
            "contains",
            &["--output", out, "--no-html"],
            &[],
        )
    };
    assert_eq!(code(&plain("before.json")), 0);
    // The `rag` sample now expects something else.
    std::fs::write(
        dir.join("qa.jsonl"),
        DATASET.replace("grounded in real sources", "real sources"),
    )
    .unwrap();
    assert_eq!(code(&plain("after.json")), 0);
    let out = evals(&dir, &["report", "diff", "before.json", "after.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("dataset `qa`: content "),
        "{:?}",
        text(&out)
    );
    let out = evals(
        &dir,
        &[
            "report",
            "diff",
            "before.json",
            "after.json",
            "--allow-dataset-change",
            "--json",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let d: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    // The changed sample is not paired with its old self.
    assert_eq!(d["compared"], 1, "{d}");
    assert_eq!(d["changed"][0]["id"], "rag", "{d}");
    assert!(
        d["caveats"][0]
            .as_str()
            .unwrap()
            .starts_with("compared across a dataset change: dataset `qa`: content "),
        "{d}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// SHA-256 in lower-case hex, by `sha256sum` when the machine has it (an
/// implementation other than ours), else by ours.
fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write as _;
    if let Ok(mut child) = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        return text.split_whitespace().next().unwrap().to_string();
    }
    panic!("sha256sum is part of coreutils and should be on PATH")
}

/// The question, not only the judge: a threshold (and the gate on it) or a
/// metric's options changed between two runs is said by `report diff` in
/// every format and by `--baseline`, and the gate's flip is labelled
/// "threshold changed" — never a regression, never a silent "no change".
#[test]
fn a_changed_question_is_said_by_diff_and_baseline() {
    let dir = scratch("provenance-question");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let asked = |threshold: &str, out: &str, extra: &[&str]| {
        let metrics = format!("partial_match >= {threshold}");
        let gate = format!("partial_match >= {threshold}");
        let mut args = vec!["--output", out, "--no-html", "--gate", &gate];
        args.extend_from_slice(extra);
        evaluate_demo(&dir, "qa.jsonl", &metrics, &args, &[])
    };
    assert_eq!(code(&asked("0", "low.json", &[])), 0);
    // Whether the samples pass at 1 is the run's own business (exit 0 or 1).
    let _ = asked("1", "high.json", &[]);
    let out = evals(&dir, &["report", "diff", "low.json", "high.json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    for want in [
        "the question changed (2 difference(s): see the notes)",
        "note: the question changed: `qa`: `partial_match` threshold changed, >= 0 → >= 1",
        "note: the question changed: `qa`: gate changed, mean(partial_match) >= 0 → mean(partial_match) >= 1",
        "gate qa mean(partial_match) >= 0 → mean(partial_match) >= 1: met → ",
    ] {
        assert!(stdout.contains(want), "{want}\n{stdout}");
    }
    assert!(stdout.contains(": threshold changed"), "{stdout}");
    let out = evals(
        &dir,
        &[
            "report",
            "diff",
            "low.json",
            "high.json",
            "--format",
            "markdown",
        ],
    );
    assert!(
        text(&out).0.contains("> ⚠️ the question changed: "),
        "{:?}",
        text(&out)
    );
    let out = evals(&dir, &["report", "diff", "low.json", "high.json", "--json"]);
    let d: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(d["question"][0]["kind"], "threshold-changed", "{d}");
    assert_eq!(d["question"][1]["kind"], "gate-changed", "{d}");
    assert_eq!(d["gates"][0]["outcome"], "threshold-changed", "{d}");
    // The metric as written is in the results file.
    let r = Results::read(&dir.join("high.json")).unwrap();
    assert_eq!(
        r.datasets[0].metric_specs[0].to_string(),
        "partial_match >= 1"
    );
    // A run gated on a baseline that asked another question says so.
    let out = asked("1", "again.json", &["--baseline", "low.json"]);
    let (stdout, stderr) = text(&out);
    assert!(
        format!("{stdout}{stderr}").contains(
            "note: the question changed: `qa`: `partial_match` threshold changed, >= 0 → >= 1"
        ),
        "{stdout}{stderr}"
    );
    // Another option of a metric is another question.
    let plain = |metrics: &str, out: &str| {
        evaluate_demo(
            &dir,
            "qa.jsonl",
            metrics,
            &["--output", out, "--no-html"],
            &[],
        )
    };
    let _ = plain("contains", "loose.json");
    let _ = plain("contains(case_sensitive = true)", "strict.json");
    let out = evals(&dir, &["report", "diff", "loose.json", "strict.json"]);
    assert!(
        text(&out)
            .0
            .contains("`qa`: `contains` options changed, (defaults) → case_sensitive = true"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}
