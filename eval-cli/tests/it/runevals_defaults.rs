//! issue38:runevals — a runevals file that names no evaluators (seed 003's
//! starter templates, every 1.0.0 file) through `evals evaluate`: the seed's
//! default dimensions, said in a note; without a judge an error at start
//! that says why; given metrics replace them; runevals' own flag spellings
//! (`--prompts-file`, `--interactive`).

use crate::common;

use common::*;

/// Seed 003's starter shape (its "knowledge-base.json" template): 1.0.0, no
/// evaluators anywhere.
const STARTER: &str = r#"{
  "schemaVersion": "1.0.0",
  "items": [
    { "prompt": "What is the capital of France?", "expected_response": "Paris" },
    { "prompt": "What is a reranker?", "expected_response": "It reorders results", "context": "Rerankers reorder retrieved chunks." }
  ]
}
"#;

fn dir() -> std::path::PathBuf {
    let dir = scratch("runevals-defaults");
    std::fs::write(dir.join("kb.json"), STARTER).unwrap();
    dir
}

#[test]
fn a_starter_without_a_judge_is_refused_at_start_saying_why() {
    let dir = dir();
    let out = evals(&dir, &["evaluate", "kb.json", "--url", demo_url()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("kb.json: names no evaluators, so it is scored on runevals' default dimensions (relevance, coherence, similarity, groundedness), which an LLM judge rates"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`relevance` needs an LLM judge"),
        "{stderr}"
    );
    // Not the old silent PartialMatch.
    assert!(!stdout.contains("partial_match"), "{stdout}");
}

#[test]
fn given_metrics_replace_the_default_dimensions_and_prompts_file_is_file() {
    let dir = dir();
    // `--prompts-file`, as runevals spells it, is the dataset (not a prompt).
    for args in [
        &["evaluate", "kb.json"][..],
        &["evaluate", "--prompts-file", "kb.json"][..],
    ] {
        let mut all = args.to_vec();
        all.extend(["--url", demo_url(), "--metrics", "contains", "--json"]);
        let out = evals(&dir, &all);
        let (stdout, stderr) = text(&out);
        let v: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
        let samples = v["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2, "{stdout}");
        for s in samples {
            let names: Vec<&str> = s["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["contains"], "{args:?}: {stdout}");
        }
        assert!(!stderr.contains("default dimensions"), "{stderr}");
    }
    // A file and --prompts-file together: refused by the parser.
    let out = evals(&dir, &["evaluate", "kb.json", "--prompts-file", "kb.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
}

#[test]
fn interactive_as_runevals_spells_it_is_the_interactive_session() {
    let dir = dir();
    // Not a terminal and nothing typed: the session starts and ends, and
    // is not a dataset run.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "--interactive",
            "--url",
            demo_url(),
            "--metrics",
            "contains",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
    assert!(!stdout.contains("kb.json"), "{stdout}");
    let direct = evals(
        &dir,
        &["interactive", "--url", demo_url(), "--metrics", "contains"],
    );
    assert_eq!(
        code(&out),
        code(&direct),
        "{stdout}{stderr}\n{:?}",
        text(&direct)
    );
}
