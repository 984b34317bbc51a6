//! `evals calibrate`: a judged metric against human labels, on the
//! project's labelled example set (`examples/calibration/`), with the
//! scripted judge on loopback; κ checked against the value computed by hand.

use crate::common;

use common::*;
use eval_examples::judge::{self, JudgeConfig};

fn labels() -> String {
    repo()
        .join("examples/calibration/faithfulness-labels.jsonl")
        .to_string_lossy()
        .into_owned()
}

fn calibrate(dir: &std::path::Path, judge_url: &str, extra: &[&str]) -> std::process::Output {
    calibrate_labels(dir, judge_url, &labels(), extra)
}

/// `evals calibrate LABELS --metric "faithfulness >= 0.8" EXTRA...` in
/// `dir`, results in `dir/results`.
fn calibrate_labels(
    dir: &std::path::Path,
    judge_url: &str,
    labels: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec!["calibrate", labels, "--metric", "faithfulness >= 0.8"];
    args.extend_from_slice(extra);
    let results = dir.join("results");
    evals_with(
        dir,
        &args,
        &[
            ("EVAL_JUDGE_URL", &format!("{judge_url}/v1")),
            ("EVAL_JUDGE_MODEL", "scripted"),
            ("EVAL_RESULTS_DIR", results.to_str().unwrap()),
        ],
    )
}

#[test]
fn kappa_against_the_labelled_set_is_the_hand_computed_value() {
    let dir = scratch("calibrate");
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let out = calibrate(&dir, &server.url(), &["--json", "--output", "cal.json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let c: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // The scripted judge calls a one-sentence answer faithful when half its
    // content words are in the context. By hand, over the 22 labels:
    // 12 both pass, 3 the judge passes and the humans fail (the answers that
    // contradict the context in its own words: rag-memory, vec-swapped,
    // judge-human), 2 the judge fails and the humans pass (the paraphrases:
    // rag-paraphrase, rerank-paraphrase), 5 both fail.
    let m = &c["agreement"]["confusion"];
    assert_eq!(
        (
            &m["true_pass"],
            &m["false_pass"],
            &m["false_fail"],
            &m["true_fail"]
        ),
        (&12.into(), &3.into(), &2.into(), &5.into()),
        "{c}"
    );
    // p_o = 17/22 = 374/484; p_e = (15·14 + 7·8)/22² = 266/484;
    // κ = (374 − 266)/(484 − 266) = 108/218 = 54/109.
    let kappa = c["agreement"]["kappa"].as_f64().unwrap();
    assert!((kappa - 54.0 / 109.0).abs() < 1e-12, "{kappa}");
    assert!((c["agreement"]["accuracy"].as_f64().unwrap() - 17.0 / 22.0).abs() < 1e-12);
    // SE = √(p_o(1 − p_o) / (n(1 − p_e)²)) = √((17/22)(5/22) / (22 (218/484)²)).
    let (po, pe, n) = (17.0 / 22.0, 266.0 / 484.0, 22.0);
    let se = (po * (1.0 - po) / (n * (1.0f64 - pe).powi(2))).sqrt();
    let low = c["agreement"]["kappa_interval"]["low"].as_f64().unwrap();
    assert!(
        (low - (54.0 / 109.0 - 1.959963984540054 * se)).abs() < 1e-9,
        "{low}"
    );
    let mut disagree: Vec<&str> = c["disagreements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    disagree.sort();
    assert_eq!(
        disagree,
        [
            "judge-human",
            "rag-memory",
            "rag-paraphrase",
            "rerank-paraphrase",
            "vec-swapped"
        ]
    );
    // Under the judge's fingerprint.
    assert_eq!(c["judge"]["model"], "scripted");
    assert!(
        c["judge"]["metrics"]["faithfulness"]["prompts"].is_object(),
        "{c}"
    );
    assert_eq!(c["labels_sha256"].as_str().unwrap().len(), 64);

    // CI: a floor on κ.
    let out = calibrate(&dir, &server.url(), &["--min-kappa", "0.6"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("Cohen's κ 0.495 is below --min-kappa 0.6"),
        "{stderr}"
    );
    assert!(stdout.contains("Cohen's κ 0.495 (95% "), "{stdout}");
    assert!(
        stdout.contains(
            "  metric pass           12           3\n  metric fail            2           5\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("rag-memory: human fail, faithfulness 1.000"),
        "{stdout}"
    );
    assert_eq!(
        code(&calibrate(&dir, &server.url(), &["--min-kappa", "0.4"])),
        0
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The files in `dir`, by name.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const QA: &str = "{\"input\": \"What is the capital of France?\", \"expected\": \"Paris\", \"context\": [\"Paris is the capital and largest city of France, on the river Seine.\"]}\n";

#[test]
fn a_run_shows_the_kappa_of_its_own_metric_threshold_and_judge_only() {
    let dir = scratch("calibrate-run");
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let out = calibrate(&dir, &server.url(), &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "shown beside runs of this project that score faithfulness >= 0.8 with this judge"
        ),
        "{stdout}"
    );
    // Kept in this project's own directory under calibration/ of the
    // results directory (the project: the working directory, no .git above).
    let results = dir.join("results");
    let projects = names(&results.join("calibration"));
    let project = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(projects.len(), 1, "{projects:?}");
    assert!(
        projects[0].starts_with(&format!("{project}-")),
        "{projects:?}"
    );
    let store = results.join("calibration").join(&projects[0]);
    let written = names(&store);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with("faithfulness-"), "{written:?}");
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join(&written[0])).unwrap()).unwrap();
    // Its scope: the metric with its operator, threshold and options, the
    // label set and its hash, the judge.
    assert_eq!(
        (
            &file["version"],
            &file["op"],
            &file["threshold"],
            &file["options"]
        ),
        (&2.into(), &">=".into(), &0.8.into(), &"Faithfulness".into()),
        "{file}"
    );
    assert_eq!(file["labels"], labels().as_str());
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    let run = |model: &str, metric: &str| {
        let out = evaluate_demo(
            &dir,
            "qa.jsonl",
            metric,
            &["--output", "run.json"],
            &[
                ("EVAL_JUDGE_URL", &format!("{}/v1", server.url())),
                ("EVAL_JUDGE_MODEL", model),
                ("EVAL_RESULTS_DIR", results.to_str().unwrap()),
            ],
        );
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 0, "{stdout}{stderr}");
        let r = eval_runtime::results::Results::read(&dir.join("run.json")).unwrap();
        (r.provenance.unwrap().calibrations, stderr)
    };

    // The same judge, metric and threshold: attached to the dataset, with
    // its label set by path and hash.
    let (cals, _) = run("scripted", "faithfulness >= 0.8");
    assert_eq!(cals.len(), 1, "{cals:?}");
    assert_eq!(cals[0].metric, "faithfulness");
    assert_eq!(cals[0].spec, "faithfulness >= 0.8");
    assert_eq!(cals[0].datasets, ["qa"]);
    assert_eq!(cals[0].labels, labels());
    assert_eq!(
        cals[0].labels_sha256.as_deref(),
        file["labels_sha256"].as_str()
    );
    assert!((cals[0].kappa.unwrap() - 54.0 / 109.0).abs() < 1e-12);
    // The HTML report carries it beside the metric.
    let page = std::fs::read_to_string(dir.join("run.html")).unwrap();
    let data = report_data(&page);
    let shown = &data["runs"][0]["meta"]["provenance"]["calibrations"][0];
    assert_eq!(shown["metric"], "faithfulness");
    assert_eq!(shown["datasets"][0], "qa");

    // Another threshold with the same judge: its κ says nothing of this
    // gate; not attached, and a note says why.
    let (cals, stderr) = run("scripted", "faithfulness >= 0.3");
    assert!(cals.is_empty(), "{cals:?}");
    assert!(
        stderr.contains("faithfulness was calibrated with this judge at `faithfulness >= 0.8`")
            && stderr.contains("not at this run's `faithfulness >= 0.3`: its κ is not shown"),
        "{stderr}"
    );
    // Another judge model: the calibration does not hold for it.
    let (cals, stderr) = run("another", "faithfulness >= 0.8");
    assert!(cals.is_empty(), "{cals:?}");
    assert!(!stderr.contains("calibrated with this judge"), "{stderr}");

    // Another labels file: a calibration of its own, recorded with its own
    // hash; the run records both.
    let text_of = std::fs::read_to_string(labels()).unwrap();
    let fewer: String = text_of.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("fewer-labels.jsonl"), fewer).unwrap();
    let out = calibrate_labels(&dir, &server.url(), "fewer-labels.jsonl", &[]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert_eq!(names(&store).len(), 2, "{:?}", names(&store));
    let (cals, _) = run("scripted", "faithfulness >= 0.8");
    let mut by_labels: Vec<(&str, usize)> = cals
        .iter()
        .map(|c| {
            (
                c.labels.as_str(),
                c.labels_sha256.as_ref().map_or(0, String::len),
            )
        })
        .collect();
    by_labels.sort();
    assert_eq!(
        by_labels,
        [(labels().as_str(), 64), ("fewer-labels.jsonl", 64)],
        "{cals:?}"
    );
    assert_ne!(cals[0].labels_sha256, cals[1].labels_sha256);

    // A calibration file of layout 1 records no scope: never attached, and
    // the run says to calibrate again.
    let mut old = file.clone();
    let fields = old.as_object_mut().unwrap();
    for scope in ["op", "threshold", "options"] {
        fields.remove(scope);
    }
    fields.insert("version".into(), 1.into());
    fields.insert("spec".into(), "faithfulness >= 0.3".into());
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("faithfulness-old.json"), old.to_string()).unwrap();
    let (cals, stderr) = run("scripted", "faithfulness >= 0.3");
    assert!(cals.is_empty(), "{cals:?}");
    assert!(
        stderr.contains("records no scope (made by an earlier version): its κ is not shown; run `evals calibrate"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn two_projects_sharing_the_default_results_dir_never_see_each_others_calibrations() {
    let dir = scratch("calibrate-projects");
    // An installed `evals` (not inside a cargo target directory): results
    // and calibrations in the user's cache, one for every project.
    let bin = dir.join("bin/evals");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    if std::fs::hard_link(env!("CARGO_BIN_EXE_evals"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_evals"), &bin).unwrap();
    }
    let xdg = dir.join("xdg");
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", server.url());
    for project in ["a", "b"] {
        std::fs::create_dir_all(dir.join(project).join(".git")).unwrap();
        std::fs::write(dir.join(project).join("qa.jsonl"), QA).unwrap();
    }
    let evals = |project: &str, args: &[&str]| {
        let out = std::process::Command::new(&bin)
            .args(args)
            .current_dir(dir.join(project))
            .env_remove("EVAL_RESULTS_DIR")
            .env_remove("EVAL_CACHE_DIR")
            .env_remove("CARGO_MANIFEST_DIR")
            .env_remove("EVAL_AGENT_URL")
            .env_remove("EVAL_CONCURRENCY")
            .env("EVAL_CACHE", "off")
            .env("XDG_CACHE_HOME", &xdg)
            .env("EVAL_JUDGE_URL", &judge_url)
            .env("EVAL_JUDGE_MODEL", "scripted")
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 0, "{project} {args:?}: {stdout}{stderr}");
        (stdout, stderr)
    };
    let calibrations = |project: &str| {
        evals(
            project,
            &[
                "evaluate",
                "qa.jsonl",
                "--url",
                demo_url(),
                "--metrics",
                "faithfulness >= 0.8",
                "--output",
                "run.json",
            ],
        );
        eval_runtime::results::Results::read(&dir.join(project).join("run.json"))
            .unwrap()
            .provenance
            .unwrap()
            .calibrations
    };
    let labels = labels();
    let calibrate = [
        "calibrate",
        labels.as_str(),
        "--metric",
        "faithfulness >= 0.8",
    ];
    evals("a", &calibrate);
    let store = xdg.join("evals/calibration");
    let projects = names(&store);
    assert_eq!(projects.len(), 1, "{projects:?}");
    assert!(projects[0].starts_with("a-"), "{projects:?}");
    // Project a sees its calibration; project b, with the same judge,
    // metric and threshold, does not (nor a note about it).
    assert_eq!(calibrations("a").len(), 1);
    assert!(calibrations("b").is_empty());
    // b's own calibration goes to its own directory.
    evals("b", &calibrate);
    let projects = names(&store);
    assert_eq!(projects.len(), 2, "{projects:?}");
    assert!(projects[1].starts_with("b-"), "{projects:?}");
    assert_eq!(calibrations("b").len(), 1);
    assert_eq!(calibrations("a").len(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_labels_are_every_one_named_with_file_and_line() {
    let dir = scratch("calibrate-bad");
    std::fs::write(
        dir.join("labels.jsonl"),
        "{\"input\": \"q\", \"context\": [\"c\"], \"output\": \"a\", \"label\": \"pass\"}\n\
         {\"input\": \"q\", \"context\": [\"c\"], \"label\": \"pass\"}\n\
         {\"input\": \"q\", \"context\": [\"c\"], \"output\": \"a\", \"label\": \"maybe\"}\n\
         {\"input\": \"q\", \"context\": [\"c\"], \"output\": \"a\"}\n",
    )
    .unwrap();
    let out = evals_with(
        &dir,
        &["calibrate", "labels.jsonl", "--metric", "faithfulness"],
        &[("EVAL_JUDGE_URL", "http://127.0.0.1:9/v1")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    for want in [
        "labels.jsonl:2: no `output`",
        "labels.jsonl:3: field `label`: \"maybe\" is not a label",
        "labels.jsonl:4: no human label",
    ] {
        assert!(stderr.contains(want), "{want:?} not in {stderr}");
    }
    assert!(
        !stderr.contains("unreachable"),
        "no judge call before the labels hold"
    );
    // No judge configured: said before anything is scored.
    let out = evals_with(
        &dir,
        &[
            "calibrate",
            repo()
                .join("examples/calibration/faithfulness-labels.jsonl")
                .to_str()
                .unwrap(),
            "--metric",
            "faithfulness",
        ],
        &[],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("needs an LLM judge"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn conflicting_label_fields_are_an_error_naming_file_line_sample_and_values() {
    let dir = scratch("calibrate-conflict");
    std::fs::write(
        dir.join("labels.jsonl"),
        concat!(
            r#"{"id": "agree", "input": "q", "context": ["c"], "output": "a", "label": "pass", "human_score": 0.9}"#,
            "\n",
            r#"{"id": "clash", "input": "q", "context": ["c"], "output": "a", "label": "pass", "human_score": 0.1}"#,
            "\n"
        ),
    )
    .unwrap();
    // Refused before any judge call: nothing listens at the judge's port.
    let out = calibrate_labels(&dir, "http://127.0.0.1:9", "labels.jsonl", &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "labels.jsonl:2: sample `clash`: conflicting labels: `label` is \"pass\" but `human_score` is 0.1 (failing `>= 0.8`)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("`agree`"), "{stderr}");
}
