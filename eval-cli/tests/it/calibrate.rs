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
    let labels = labels();
    let mut args = vec![
        "calibrate",
        labels.as_str(),
        "--metric",
        "faithfulness >= 0.8",
    ];
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

#[test]
fn a_run_with_the_same_judge_shows_the_kappa() {
    let dir = scratch("calibrate-run");
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    // Written where runs look: calibration/ in the results directory.
    let out = calibrate(&dir, &server.url(), &[]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let results = dir.join("results");
    let written: Vec<_> = std::fs::read_dir(results.join("calibration"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with("faithfulness-"), "{written:?}");
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"input\": \"What is the capital of France?\", \"expected\": \"Paris\", \"context\": [\"Paris is the capital and largest city of France, on the river Seine.\"]}\n",
    )
    .unwrap();
    let run = |model: &str| {
        evaluate_demo(
            &dir,
            "qa.jsonl",
            "faithfulness >= 0.0",
            &["--output", "run.json"],
            &[
                ("EVAL_JUDGE_URL", &format!("{}/v1", server.url())),
                ("EVAL_JUDGE_MODEL", model),
                ("EVAL_RESULTS_DIR", results.to_str().unwrap()),
            ],
        )
    };
    assert_eq!(code(&run("scripted")), 0);
    let r = eval_runtime::results::Results::read(&dir.join("run.json")).unwrap();
    let cals = &r.provenance.unwrap().calibrations;
    assert_eq!(cals.len(), 1, "{cals:?}");
    assert_eq!(cals[0].metric, "faithfulness");
    assert!((cals[0].kappa.unwrap() - 54.0 / 109.0).abs() < 1e-12);
    // The HTML report carries it beside the metric.
    let page = std::fs::read_to_string(dir.join("run.html")).unwrap();
    let data = report_data(&page);
    assert_eq!(
        data["runs"][0]["meta"]["provenance"]["calibrations"][0]["metric"],
        "faithfulness"
    );
    // Another judge model: the calibration does not hold for it.
    assert_eq!(code(&run("another")), 0);
    let r = eval_runtime::results::Results::read(&dir.join("run.json")).unwrap();
    assert!(r.provenance.unwrap().calibrations.is_empty());
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
