//! issue38:runevals — `evals convert --keep-default-dimensions` of a
//! runevals file that names no evaluators keeps runevals' default
//! dimensions: seed 003's knowledge-base starter template (verbatim, 1.0.0,
//! no evaluators), converted to JSONL and to CSV, is scored on the same
//! metrics as the file itself, against the same agent and judge (the demo
//! agent and the scripted judge on loopback). Without the flag (a round
//! trip stays byte-stable) a warning names it.

use crate::common::*;

/// Seed 003's "知识库测试模板" (knowledge base starter template), verbatim.
const STARTER: &str = r#"{
  "schemaVersion": "1.0.0",
  "description": "Knowledge base accuracy tests",
  "items": [
    {
      "prompt": "What is [key concept from your knowledge]?",
      "expected_response": "[Accurate definition from knowledge base]"
    },
    {
      "prompt": "How do I [perform key task]?",
      "expected_response": "[Step-by-step guidance from knowledge]"
    }
  ]
}
"#;

/// Each sample's metric names, in order, from `evals evaluate ... --json`.
fn metrics(dir: &std::path::Path, file: &str, judge: &str) -> Vec<Vec<String>> {
    let out = evals_with(
        dir,
        &["evaluate", file, "--url", demo_url(), "--json"],
        &[("EVAL_JUDGE_URL", judge)],
    );
    let (stdout, stderr) = text(&out);
    let v: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{file}: {e}: {stdout}{stderr}"));
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["name"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn converting_a_starter_template_keeps_runevals_default_dimensions() {
    let dir = scratch("convert-runevals-defaults");
    std::fs::write(dir.join("knowledge-base.json"), STARTER).unwrap();
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default())
        .expect("start the scripted judge");
    let judge_url = format!("{}/v1", judge.url());

    let source = metrics(&dir, "knowledge-base.json", &judge_url);
    assert_eq!(source.len(), 2);
    for m in &source {
        assert_eq!(m, &["relevance", "coherence", "similarity"], "{source:?}");
    }
    // Without the flag: converted as it is, with a warning naming the flag.
    let out = evals(&dir, &["convert", "knowledge-base.json", "plain.jsonl"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("knowledge-base.json names no evaluators, so runevals scores its 2 item(s) on its default dimensions")
            && stderr.contains("pass --keep-default-dimensions"),
        "{stderr}"
    );
    let plain = std::fs::read_to_string(dir.join("plain.jsonl")).unwrap();
    assert!(!plain.contains("evaluators"), "{plain}");
    for target in ["kb.jsonl", "kb.csv"] {
        let out = evals(
            &dir,
            &[
                "convert",
                "knowledge-base.json",
                target,
                "--keep-default-dimensions",
            ],
        );
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 0, "{stdout}{stderr}");
        assert!(
            stdout.contains("2 sample(s) carry them as their own `evaluators` (Relevance, Coherence, Similarity)"),
            "{target}: {stdout}"
        );
        assert_eq!(
            metrics(&dir, target, &judge_url),
            source,
            "{target} is scored on the same metrics as the runevals file"
        );
    }
    // The JSONL says what it is scored on, sample by sample.
    let jsonl = std::fs::read_to_string(dir.join("kb.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(
        first["evaluators"],
        serde_json::json!({"Relevance": {}, "Coherence": {}, "Similarity": {}}),
        "{jsonl}"
    );
}
