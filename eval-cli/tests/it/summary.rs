//! CI summaries: `evals report summary` (text and Markdown, appended to
//! `$GITHUB_STEP_SUMMARY`), the summary `evals evaluate` appends there
//! itself, and `evals report diff --format markdown` for a pull-request
//! comment — with their exit codes.

use crate::common;

use common::{code, evals, evals_with, evaluate_demo, scratch, text};

/// A pass, a failure and a sample that cannot be scored (no expected answer).
const DATASET: &str = "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n\
{\"input\": \"What is 2 + 2?\", \"expected\": \"five | `5`\"}\n\
{\"input\": \"Hello\"}\n";

/// The gate row of the summary: the mean of the two samples scored (0.5)
/// meets 0.3, and the gate is missed all the same, saying why.
const GATE_ROW: &str = "| `mean(contains)` | 0.5000 | 0.0126–0.9874 | \\>= | 0.3 | ❌ missed: 1 sample(s) could not be scored (the value alone meets it) | +0.2000 | 1 |";

fn evaluate(dir: &std::path::Path, env: &[(&str, &str)]) -> std::process::Output {
    evaluate_demo(
        dir,
        "qa.jsonl",
        "contains",
        &["--gate", "contains >= 0.3", "--output", "results.json"],
        env,
    )
}

#[test]
fn evaluate_appends_its_summary_to_the_step_summary() {
    let dir = scratch("summary-evaluate");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let step = dir.join("step.md");
    std::fs::write(&step, "earlier step\n").unwrap();
    let step_var = step.to_str().unwrap();
    let out = evaluate(&dir, &[("GITHUB_STEP_SUMMARY", step_var)]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let md = std::fs::read_to_string(&step).unwrap();
    assert!(
        md.starts_with(
            "earlier step\n## ❌ Evals failed: 2 of 3 samples failed, 1 gate(s) missed\n"
        ),
        "{md}"
    );
    assert!(md.contains(GATE_ROW), "{md}");
    assert!(
        md.contains("  - expected: five \\| \\`5\\` · actual: 4\n"),
        "{md}"
    );
    assert!(
        md.contains("- ❌ **`qa::what_is_2_2`** · `qa.jsonl:2` · failed\n  - contains 0.000 \\< 1"),
        "{md}"
    );
    assert!(md.contains("no \\`expected\\` field"), "{md}");
    // The run writes its summary as it streams its files (it never holds
    // the run whole for it): the same page as the summary of its results
    // file read back.
    let out = evals_with(
        &dir,
        &["report", "summary", "--format", "markdown", "results.json"],
        &[("GITHUB_STEP_SUMMARY", "")],
    );
    let (read_back, _) = text(&out);
    let run = md.strip_prefix("earlier step\n").unwrap();
    assert_eq!(run.trim_end(), read_back.trim_end());

    // EVAL_STEP_SUMMARY=off: the run leaves it alone.
    std::fs::write(&step, "").unwrap();
    let out = evaluate(
        &dir,
        &[
            ("GITHUB_STEP_SUMMARY", step_var),
            ("EVAL_STEP_SUMMARY", "off"),
        ],
    );
    assert_eq!(code(&out), 1);
    assert_eq!(std::fs::read_to_string(&step).unwrap(), "");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn report_summary_prints_text_or_markdown_and_appends_the_markdown() {
    let dir = scratch("summary-report");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    assert_eq!(code(&evaluate(&dir, &[])), 1);

    let out = evals(&dir, &["report", "summary", "results.json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "a failed run: {stdout}{stderr}");
    assert!(
        stdout.starts_with("evals: FAILED (2 of 3 samples failed, 1 gate(s) missed)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("gate qa FAILED: mean(contains) >= 0.3 missed: 1 of 3 samples not scored")
    );
    // issue39:reports: as the attribute's failure report shows it.
    assert!(
        stdout.contains(
            "  FAILED qa::what_is_2_2 (qa.jsonl:2)\n    input:    What is 2 + 2?\n    expected: five | `5`\n    actual:   4\n    contains 0.000 < 1: the expected text is not found in the answer\n"
        ),
        "{stdout}"
    );

    let step = dir.join("step.md");
    let out = evals_with(
        &dir,
        &[
            "report",
            "summary",
            "results.json",
            "results.json",
            "--format",
            "markdown",
        ],
        &[("GITHUB_STEP_SUMMARY", step.to_str().unwrap())],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("## ❌ Evals failed: 4 of 6 samples failed, 2 gate(s) missed\n"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches(GATE_ROW).count(),
        2,
        "a section per file: {stdout}"
    );
    // The Markdown escapes what the dataset holds.
    assert!(!stdout.contains("five | `5`"));
    assert_eq!(
        std::fs::read_to_string(&step).unwrap(),
        format!("{stdout}\n")
    );

    // A passing run exits 0; a file that is not there, 2.
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n",
    )
    .unwrap();
    assert_eq!(code(&evaluate(&dir, &[])), 0);
    let out = evals(&dir, &["report", "summary", "results.json"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(text(&out).0.starts_with("evals: passed\n"));
    let out = evals(&dir, &["report", "summary", "missing.json"]);
    assert_eq!(code(&out), 2);
    assert!(text(&out).1.contains("missing.json"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn report_diff_as_markdown_for_a_pull_request() {
    let dir = scratch("summary-diff");
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n\
         {\"input\": \"What is 2 + 2?\", \"expected\": \"4\"}\n",
    )
    .unwrap();
    assert_eq!(code(&evaluate(&dir, &[])), 0);
    std::fs::rename(dir.join("results.json"), dir.join("old.json")).unwrap();
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n\
         {\"input\": \"What is 2 + 2?\", \"expected\": \"five\"}\n\
         {\"input\": \"What is Rust?\", \"expected\": \"language\"}\n",
    )
    .unwrap();
    evaluate(&dir, &[]);

    // The dataset changed: compared only when told.
    let out = evals(&dir, &["report", "diff", "old.json", "results.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    let out = evals(
        &dir,
        &[
            "report",
            "diff",
            "old.json",
            "results.json",
            "--format",
            "markdown",
            "--allow-dataset-change",
        ],
    );
    let (md, stderr) = text(&out);
    // The sample whose expected answer changed is not paired with its old
    // self: one pair is left, which cannot tell anything, and the gate
    // still holds. Not a regression: exit 0, saying why.
    assert_eq!(code(&out), 0, "{md}{stderr}");
    assert!(
        md.starts_with("## ✅ No regressions\n\n1 sample(s) compared (epsilon 0): no regression, 1 no change.\n"),
        "{md}"
    );
    assert!(
        md.contains("> ⚠️ compared across a dataset change: dataset \\`qa\\`: content "),
        "{md}"
    );
    assert!(md.contains("### Changed samples (1)"), "{md}");
    assert!(md.contains("| `qa` | `1` | `qa::what_is_2_2` |"), "{md}");
    assert!(md.contains("### New samples (1)"), "{md}");

    // --json is still there, as --format json.
    let json = text(&evals(
        &dir,
        &[
            "report",
            "diff",
            "old.json",
            "results.json",
            "--json",
            "--allow-dataset-change",
        ],
    ))
    .0;
    let format = text(&evals(
        &dir,
        &[
            "report",
            "diff",
            "old.json",
            "results.json",
            "--format",
            "json",
            "--allow-dataset-change",
        ],
    ))
    .0;
    assert_eq!(json, format);
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    let out = evals(
        &dir,
        &[
            "report",
            "diff",
            "old.json",
            "results.json",
            "--json",
            "--format",
            "text",
            "--allow-dataset-change",
        ],
    );
    assert_eq!(code(&out), 2, "--json and --format together");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_harness_appends_its_summary_too() {
    use eval_runtime::{Config, Harness, Response, Sample};
    let dir = scratch("summary-harness");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let step = dir.join("step.md");
    let config = |switch: &'static str| {
        let step = step.to_string_lossy().into_owned();
        Config::from_vars(
            move |n| {
                Ok(match n {
                    "GITHUB_STEP_SUMMARY" => Some(step.clone()),
                    "EVAL_STEP_SUMMARY" => Some(switch.to_string()),
                    "EVAL_CACHE" => Some("off".into()),
                    _ => None,
                })
            },
            &[],
        )
        .unwrap()
    };
    let run = |switch| {
        Harness::new()
            .config(config(switch))
            .base_dir(&dir)
            .results_file(dir.join("results.json"))
            .dataset("qa.jsonl", "contains")
            .gate("contains >= 0.3")
            .agent_fn(async |s: &Sample| {
                Response::new(if s.input.last().contains("RAG") {
                    "Retrieval augmented generation"
                } else {
                    "four"
                })
            })
            .evaluate(common::harness_args(&["summary", "-q"]))
    };
    assert_eq!(run("on").code, 101);
    let md = std::fs::read_to_string(&step).unwrap();
    assert!(
        md.starts_with("## ❌ Evals failed: 2 of 3 samples failed, 1 gate(s) missed\n"),
        "{md}"
    );
    assert!(md.contains(GATE_ROW), "{md}");
    assert!(
        md.contains("  - expected: five \\| \\`5\\` · actual: four\n"),
        "{md}"
    );
    assert_eq!(run("off").code, 101);
    assert_eq!(
        std::fs::read_to_string(&step).unwrap(),
        md,
        "off: not appended"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_regression_against_the_baseline_fails_the_step_summary_too() {
    let dir = scratch("summary-baseline");
    let step = dir.join("step.md");
    let env = [("GITHUB_STEP_SUMMARY", step.to_str().unwrap())];
    let run = |expected: &str| {
        std::fs::write(
            dir.join("qa.jsonl"),
            format!(
                "{{\"id\": \"a\", \"input\": \"What is 2 + 2?\", \"expected\": \"{expected}\"}}\n{{\"id\": \"b\", \"input\": \"What is 2 + 2?\", \"expected\": \"{expected}\"}}\n"
            ),
        )
        .unwrap();
        evaluate_demo(
            &dir,
            "qa.jsonl",
            "contains",
            &[
                "--ci-gate",
                "--baseline",
                "baseline.json",
                "--allow-dataset-change",
            ],
            &env,
        )
    };
    assert_eq!(code(&run("4")), 0);
    let first = std::fs::read_to_string(&step).unwrap();
    assert!(first.starts_with("## ✅ Evals passed"), "{first}");
    assert!(
        first.contains("Baseline `baseline.json` written (there was none)."),
        "{first}"
    );
    // Under ciGate the sample does not fail singly: the mean's gate and the baseline do.
    let out = run("five");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let md = std::fs::read_to_string(&step).unwrap();
    let second = &md[first.len()..];
    assert!(
        second.starts_with("## ❌ Evals failed: 1 gate(s) missed, 1 regression(s)\n"),
        "{second}"
    );
    // The gate went from met to proven missed (no sample right: the mean's
    // interval lies below 1): a regression (the samples' expected answer
    // changed, so they are not paired).
    assert!(
        second.contains("### Against the baseline `baseline.json`\n\n0 sample(s) compared (epsilon 0): 1 REGRESSION(S).\n"),
        "{second}"
    );
    assert!(
        second.contains("| `qa` | `mean(contains) >= 1` | met | missed | ❌ **regression**: proven missed, the mean now 0.0000 (95% 0.0000.."),
        "{second}"
    );
    assert!(second.contains("#### Changed samples (2)"), "{second}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The summary's last line of a long failure list claims no file that was
/// not written (issue 37): without `--output` it says none was, with it it
/// names the file.
#[test]
fn the_summary_names_the_results_file_only_when_one_was_written() {
    let dir = scratch("summary-claims");
    let line = "{\"input\": \"What is 2 + 2?\", \"expected\": \"never said\"}\n";
    std::fs::write(dir.join("many.jsonl"), line.repeat(23)).unwrap();
    let out = evaluate_demo(&dir, "many.jsonl", "contains", &[], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("  ... and 3 more, not listed: no results file was written (`--output FILE` keeps every sample)\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("results file)"), "{stdout}");
    let out = evaluate_demo(&dir, "many.jsonl", "contains", &["--output", "r.json"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("  ... and 3 more (every sample is in r.json)\n"),
        "{stdout}"
    );
    assert!(dir.join("r.json").is_file());
}
