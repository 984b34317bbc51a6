//! `evals report html`: the self-contained HTML report of results files
//! (several shown together, against a baseline), where it goes by default,
//! and the report `evals evaluate --output` writes beside its results
//! (`--no-html`, `EVAL_HTML=off`: none).

use crate::common;

use common::{
    code, demo_url, evals, evals_with, evaluate_demo, report_data, report_samples, scratch, text,
};

/// A pass, a failure (with markup in its expected answer) and a sample that
/// cannot be scored.
const DATASET: &str = "{\"id\": \"rag\", \"input\": \"What is RAG?\", \"expected\": \"Retrieval\", \"tags\": [\"basics\"]}\n\
{\"id\": \"sum\", \"input\": \"What is 2 + 2?\", \"expected\": \"five </script><b>\", \"metadata\": {\"owner\": \"qa\"}}\n\
{\"id\": \"hello\", \"input\": \"Hello\"}\n";

fn evaluate(dir: &std::path::Path, output: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--output", output];
    args.extend_from_slice(extra);
    evaluate_demo(dir, "qa.jsonl", "contains", &args, &[])
}

#[test]
fn evaluate_writes_the_report_beside_its_results_unless_told_not_to() {
    let dir = scratch("html-evaluate");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let out = evaluate(&dir, "out/run.json", &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(stdout.contains("html: out/run.html"), "{stdout}");
    let page = std::fs::read_to_string(dir.join("out/run.html")).unwrap();
    assert!(!page.contains("</script><b>"), "the data escapes markup");
    let data = report_data(&page);
    let samples = data["runs"][0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    let sum = samples.iter().find(|s| s["id"] == "sum").unwrap();
    assert_eq!(sum["expected"], "five </script><b>");
    assert_eq!(sum["metadata"]["owner"], "qa");
    assert_eq!(sum["verdict"], "fail");

    // --no-html, and EVAL_HTML=off: the results only.
    let out = evaluate(&dir, "off/run.json", &["--no-html"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(dir.join("off/run.json").is_file());
    assert!(!dir.join("off/run.html").exists());
    assert!(!text(&out).0.contains("html: "));
    let out = evaluate_demo(
        &dir,
        "qa.jsonl",
        "contains",
        &["--output", "env-off/run.json"],
        &[("EVAL_HTML", "off")],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(dir.join("env-off/run.json").is_file());
    assert!(!dir.join("env-off/run.html").exists());
    // A value that is neither on nor off is refused, naming the variable.
    let out = evals_with(
        &dir,
        &["evaluate", "qa.jsonl", "--url", demo_url()],
        &[("EVAL_HTML", "sometimes")],
    );
    assert_eq!(code(&out), 2);
    assert!(text(&out).1.contains("EVAL_HTML"), "{:?}", text(&out));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn report_html_shows_several_files_and_what_changed_since_a_baseline() {
    let dir = scratch("html-report");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    std::fs::write(
        dir.join("more.jsonl"),
        "{\"id\": \"paris\", \"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n",
    )
    .unwrap();
    assert_eq!(code(&evaluate(&dir, "a.json", &["--no-html"])), 1);
    let more = evals(
        &dir,
        &[
            "evaluate",
            "more.jsonl",
            "--url",
            demo_url(),
            "--metrics",
            "contains",
            "--output",
            "b.json",
            "--no-html",
        ],
    );
    assert_eq!(code(&more), 0, "{:?}", text(&more));

    // Default output: the first file with `.html`.
    let out = evals(&dir, &["report", "html", "a.json", "b.json"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(text(&out).0.contains("html: a.html"), "{:?}", text(&out));
    let both = report_samples(&dir.join("a.html"));
    assert_eq!(both.len(), 4, "{both:?}");
    assert!(both.contains(&("more".to_string(), "paris".to_string())));
    assert!(both.contains(&("qa".to_string(), "hello".to_string())));

    // Against a baseline where `sum` passed: it got worse.
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("a.json")).unwrap()).unwrap();
    for s in old["samples"].as_array_mut().unwrap() {
        if s["id"] == "sum" {
            s["verdict"] = "pass".into();
            s["metrics"][0]["score"] = 1.0.into();
            s["metrics"][0]["passed"] = true.into();
        }
    }
    // Its totals with it, or the file would not add up (and be refused).
    let qa = &mut old["datasets"][0];
    assert_eq!(qa["name"], "qa");
    for (count, by) in [("passed", 1), ("failed", -1)] {
        qa[count] = (qa[count].as_i64().unwrap() + by).into();
    }
    std::fs::write(dir.join("old.json"), old.to_string()).unwrap();
    let out = evals(
        &dir,
        &[
            "report",
            "html",
            "a.json",
            "-o",
            "out/cmp.html",
            "--baseline",
            "old.json",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let data = report_data(&std::fs::read_to_string(dir.join("out/cmp.html")).unwrap());
    let changes = data["baseline"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["id"], "sum");
    assert_eq!(changes[0]["better"], false);
    assert_eq!(data["baseline"]["compared"], 3);

    // A run compared with a baseline gets the comparison in the report
    // beside its results too.
    let out = evaluate(&dir, "cmp/run.json", &["--baseline", "old.json"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let data = report_data(&std::fs::read_to_string(dir.join("cmp/run.html")).unwrap());
    let changes = data["baseline"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["id"], "sum");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn unreadable_inputs_exit_2_with_a_clear_message() {
    let dir = scratch("html-bad");
    std::fs::write(dir.join("not-results.json"), "{\"hello\": 1}").unwrap();
    for (args, says) in [
        (
            vec!["report", "html", "missing.json"],
            "cannot read results file missing.json",
        ),
        (
            vec!["report", "html", "not-results.json"],
            "not-results.json is not a results file",
        ),
        (
            vec![
                "report",
                "html",
                "not-results.json",
                "-o",
                "x.html",
                "--baseline",
                "gone.json",
            ],
            "not-results.json is not a results file",
        ),
    ] {
        let out = evals(&dir, &args);
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    assert!(!dir.join("not-results.html").exists());
    assert!(!dir.join("x.html").exists());
    let _ = std::fs::remove_dir_all(dir);
}
