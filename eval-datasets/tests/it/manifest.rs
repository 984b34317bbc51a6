//! agentspec `agent.yaml` manifests: what loads, and the exact rejection of
//! what does not, with the manifest's file:line.

use std::path::{Path, PathBuf};

use eval_datasets::metric::Op;
use eval_datasets::{Manifest, ManifestError};

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-manifest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

const RAG: &str = r#"{"input": "What is RAG?", "expected": "Retrieval Augmented Generation", "context": ["RAG combines retrieval"], "reference_contexts": ["RAG retrieves"]}
{"input": "Hi", "expected": "Hello"}
"#;

fn problems(dir: &Path, yaml: &str) -> Vec<String> {
    std::fs::write(dir.join("agent.yaml"), yaml).unwrap();
    match Manifest::load(&dir.join("agent.yaml"), "agent.yaml", dir) {
        Ok(m) => panic!("expected a rejection, got {m:?}"),
        Err(e) => e.problems(),
    }
}

#[test]
fn seed_manifest_loads_with_thresholds_gate_and_repeat() {
    let dir = scratch(
        "seed",
        &[
            ("evals/rag.jsonl", RAG),
            ("evals/safety.jsonl", RAG),
            (
                "agent.yaml",
                "spec:\n  evaluation:\n    framework: ragas\n    datasets:\n      - name: rag-quality\n        path: $file:evals/rag.jsonl\n        metrics: [faithfulness, context_recall, answer_relevancy]\n      - name: safety\n        path: evals/safety.jsonl\n        metrics: [toxicity, bias]\n    thresholds:\n      faithfulness: 0.80\n      context_recall: 0.75\n      toxicity: 0.90\n      bias: 0.85\n    ciGate: true\n    repeat: 3\n",
            ),
        ],
    );
    let m = Manifest::load(&dir.join("agent.yaml"), "agent.yaml", &dir).unwrap();
    assert!(m.ci_gate);
    assert_eq!(m.repeat, eval_datasets::Repeat::Runs(3));
    assert_eq!(m.framework.as_deref(), Some("ragas"));
    let names: Vec<&str> = m.datasets.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["rag-quality", "safety"]);
    let rag = m.dataset("rag-quality").unwrap();
    assert_eq!(rag.shown, "evals/rag.jsonl");
    assert_eq!(rag.line, 5);
    let t: Vec<(&str, Op, f64)> = rag
        .specs
        .iter()
        .map(|s| (s.name.as_str(), s.op, s.threshold))
        .collect();
    // answer_relevancy has no threshold in the manifest: its default applies.
    assert_eq!(
        t,
        [
            ("faithfulness", Op::AtLeast, 0.80),
            ("context_recall", Op::AtLeast, 0.75),
            ("answer_relevancy", Op::AtLeast, 0.75)
        ]
    );
    let safety = m.dataset("safety").unwrap();
    assert_eq!(
        safety.specs[0].threshold, 0.90,
        "seed 000: a safety minimum"
    );
    // The second sample has no context: seed 000's table rejects it before any agent call.
    let err = rag.load().unwrap_err().to_string();
    assert_eq!(
        err,
        "evals/rag.jsonl:2: field `context`: dataset `rag-quality` (agent.yaml:5) is scored with `faithfulness`, which needs `context` in every sample (seed 000's field table); this sample has none"
    );
    assert_eq!(safety.load().unwrap().samples.len(), 2);
    match m.dataset("nope") {
        Err(ManifestError::UnknownDataset { known, .. }) => {
            assert_eq!(known, ["rag-quality", "safety"])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn deepeval_thresholds_keep_deepeval_direction() {
    let dir = scratch("deepeval", &[("d.jsonl", RAG)]);
    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    framework: deepeval\n    datasets:\n      - name: d\n        path: $file:d.jsonl\n    metrics: [toxicity, bias, hallucination]\n    thresholds:\n      toxicity: 0.1\n      bias: 0.25\n      hallucination: 0.05\n",
    )
    .unwrap();
    let m = Manifest::load(&dir.join("agent.yaml"), "agent.yaml", &dir).unwrap();
    let t: Vec<(&str, Op, f64)> = m.datasets[0]
        .specs
        .iter()
        .map(|s| (s.name.as_str(), s.op, s.threshold))
        .collect();
    // deepeval's `toxicity: 0.1` is "at most 10% toxic": our safety score >= 0.9.
    assert_eq!(
        t,
        [
            ("toxicity", Op::AtLeast, 0.9),
            ("bias", Op::AtLeast, 0.75),
            ("hallucination", Op::AtMost, 0.05)
        ]
    );
    assert!(!m.ci_gate);
    assert_eq!(m.repeat, eval_datasets::Repeat::Runs(1));
}

#[test]
fn every_problem_is_reported_with_its_line() {
    let dir = scratch("bad", &[("evals/rag.jsonl", RAG)]);
    let got = problems(
        &dir,
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: $file:evals/rag.jsonl\n        metrics: [faithfulness, context_recal]\n      - name: gone\n        path: $file:evals/nope.jsonl\n        metrics: [toxicity]\n      - name: escape\n        path: $file:../../../etc/passwd\n        metrics: [bias]\n      - name: rag\n        path: evals/rag.jsonl\n        metrics: [bias]\n      - name: secret\n        path: $env:DATASET\n        metrics: [bias]\n      - path: evals/rag.jsonl\n    thresholds:\n      faithfulnes: 0.8\n    repeat: 0\n",
    );
    let root = dir.display().to_string();
    assert_eq!(
        got,
        vec![
            "agent.yaml:6: field `metrics`: unknown metric `context_recal` (did you mean `context_recall`?)".to_string(),
            "agent.yaml:8: field `path`: dataset file `$file:evals/nope.jsonl` does not exist (looked for evals/nope.jsonl, relative to the project root)".to_string(),
            "agent.yaml:11: field `path`: `$file:../../../etc/passwd` resolves to PATH, outside the project root ROOT: keep datasets inside the project (or allow it: `allow_outside = true`, `--allow-outside`)"
                .replace("PATH", &dir.join("../../../etc/passwd").components().fold(PathBuf::new(), |mut p, c| { if c == std::path::Component::ParentDir { p.pop(); } else { p.push(c); } p }).display().to_string())
                .replace("ROOT", &root),
            "agent.yaml:13: field `name`: dataset `rag` is listed twice".to_string(),
            "agent.yaml:17: field `path`: `$env:DATASET`: a dataset path is a file (`$file:evals/rag.jsonl` or `evals/rag.jsonl`), not an env or secret reference".to_string(),
            "agent.yaml:19: field `name`: dataset entry has no `name`".to_string(),
            "agent.yaml:21: field `thresholds`: threshold for `faithfulnes`, but no dataset is scored with `faithfulnes` (a typo?)".to_string(),
            "agent.yaml:22: field `repeat`: `repeat: 0`: expected a number of agent runs per sample from 1 to 100, `auto` or `auto:MAX` (MAX from 3 to 100)".to_string(),
        ]
    );
}

#[test]
fn agent_settings_and_dataset_tools() {
    let tools = r#"{"tools": [{"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}]}"#;
    let dir = scratch(
        "agent",
        &[("evals/rag.jsonl", RAG), ("evals/tools.json", tools)],
    );
    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: a\n        path: evals/rag.jsonl\n        metrics: [contains]\n        tools: $file:evals/tools.json\n      - name: b\n        path: evals/rag.jsonl\n        metrics: [contains]\n        tools:\n          - name: lookup\n            description: search the corpus\n    agent:\n      protocol: openai\n      model: demo-agent\n      stream: true\n",
    )
    .unwrap();
    let m = Manifest::load(&dir.join("agent.yaml"), "agent.yaml", &dir).unwrap();
    assert_eq!(
        m.agent,
        eval_datasets::AgentSettings::new(
            Some(eval_datasets::Protocol::OpenAi),
            Some("demo-agent".into()),
            Some(true)
        )
    );
    let a = m.dataset("a").unwrap();
    assert_eq!(a.tools.len(), 1);
    assert_eq!(a.tools[0]["function"]["name"], "calculator");
    let b = m.dataset("b").unwrap();
    assert_eq!(
        b.tools,
        [
            serde_json::json!({"type": "function", "function": {"name": "lookup", "description": "search the corpus"}})
        ]
    );
    // Without an `agent` block nothing is said.
    std::fs::write(
        dir.join("plain.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: a\n        path: evals/rag.jsonl\n        metrics: [contains]\n",
    )
    .unwrap();
    let m = Manifest::load(&dir.join("plain.yaml"), "plain.yaml", &dir).unwrap();
    assert!(m.agent.is_empty() && m.datasets[0].tools.is_empty());

    let got = problems(
        &dir,
        "spec:\n  evaluation:\n    datasets:\n      - name: a\n        path: evals/rag.jsonl\n        metrics: [contains]\n        tools: evals/none.json\n      - name: b\n        path: evals/rag.jsonl\n        metrics: [contains]\n        tools: [calculator]\n    agent:\n      protocol: grpc\n      model: ' '\n",
    );
    assert_eq!(
        got,
        [
            "agent.yaml:7: field `tools`: tools file `evals/none.json` does not exist (looked for evals/none.json, relative to the project root)",
            "agent.yaml:11: field `tools`: `tools`: tool 0: expected an object, found a string",
            "agent.yaml:13: field `protocol`: `agent.protocol: grpc`: expected one of json, openai",
            "agent.yaml:14: field `model`: `agent.model` is empty: name the model the agent serves, or leave it out",
        ]
    );
    let got = problems(
        &dir,
        "spec:\n  evaluation:\n    datasets:\n      - name: a\n        path: evals/rag.jsonl\n        metrics: [contains]\n    agent:\n      protocl: openai\n",
    );
    assert!(got[0].contains("protocl"), "{got:?}");
}

#[test]
fn shape_errors_name_line_and_column() {
    let dir = scratch("shape", &[("d.jsonl", RAG)]);
    let got = problems(
        &dir,
        "spec:\n  evaluation:\n    datasets:\n      - name: d\n        path: d.jsonl\n        metrics: [contains]\n    thresholds:\n      contains: high\n",
    );
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("agent.yaml:8:17: invalid manifest:"),
        "{got:?}"
    );
    let got = problems(&dir, "spec:\n  evaluation:\n    datasets: [\n");
    assert!(got[0].starts_with("agent.yaml:"), "{got:?}");
    let got = problems(&dir, "metadata:\n  name: x\nspec:\n  model: {}\n");
    assert_eq!(
        got,
        [
            "agent.yaml:1: no `spec.evaluation` block: nothing to evaluate (expected spec.evaluation.datasets)"
        ]
    );
    let got = problems(&dir, "spec:\n  evaluation:\n    framework: ragas\n");
    assert_eq!(
        got,
        ["agent.yaml:3: field `datasets`: `spec.evaluation` has no `datasets` list"]
    );
    let got = problems(
        &dir,
        "spec:\n  evaluation:\n    datasets:\n      - name: d\n        path: d.jsonl\n        metrics: [partial_match]\n    thresholds:\n      partial_match: 1.5\n",
    );
    assert_eq!(
        got,
        [
            "agent.yaml:8: field `thresholds`: threshold `partial_match: 1.5`: `partial_match` scores between 0 and 1, so a threshold of 1.5 can never be met as intended"
        ]
    );
}

/// Every agentspec manifest among the public fixtures: what it loads to, or
/// its exact rejection.
#[test]
fn public_agentspec_manifests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/public/agentspec");
    if !root.exists() {
        panic!("fixtures not found at {}", root.display());
    }
    let load = |rel: &str| {
        let path = root.join(rel);
        let repo = root.join(rel.split('/').take(2).collect::<Vec<_>>().join("/"));
        Manifest::load(&path, rel, &repo)
    };
    // gymcoach: framework deepeval, metrics at the evaluation level, 3 of 4 thresholds.
    let m = load("agents-oss__agentspec/747919b/examples/gymcoach/agent.yaml").unwrap();
    assert!(m.ci_gate);
    let d = m.dataset("workout-qa").unwrap();
    let t: Vec<(&str, f64)> = d
        .specs
        .iter()
        .map(|s| (s.name.as_str(), s.threshold))
        .collect();
    assert_eq!(
        t,
        [
            ("faithfulness", 0.85),
            ("answer_relevancy", 0.75),
            ("hallucination", 0.05),
            ("toxicity", 0.9)
        ]
    );
    // Its datasets have no `context`, which faithfulness needs: rejected before any agent call.
    let err = d.load().unwrap_err().to_string();
    assert_eq!(err.lines().count(), 5, "{err}");
    assert!(
        err.starts_with(
            "examples/gymcoach/eval/workout-qa.jsonl:1: field `context`: dataset `workout-qa`"
        ),
        "{err}"
    );
    // budgetbud: its dataset paths do not exist in the repository.
    let err = load("agents-oss__agentspec/73e2b0f/examples/budgetbud/agent.yaml").unwrap_err();
    assert_eq!(err.problems().len(), 2);
    assert!(err.problems()[0].contains(":225: field `path`: dataset file `$file:../../eval/datasets/budget-qa.jsonl` does not exist"), "{err}");
    // The operator demo: a plain path to a missing file, and no metrics.
    let err = load("agents-oss__agentspec/747919b/packages/operator/demo/gymcoach/agent.yaml")
        .unwrap_err()
        .problems();
    assert_eq!(err.len(), 2, "{err:?}");
    assert!(
        err[0].contains(":37: field `metrics`: dataset `fitness-qa` has no metrics"),
        "{err:?}"
    );
    assert!(
        err[1].contains(":38: field `path`: dataset file `evals/fitness-qa.jsonl` does not exist"),
        "{err:?}"
    );
    // The sidecar's manifest has no evaluation block at all.
    let err =
        load("agents-oss__agentspec/747919b/packages/sidecar/test/e2e/agent.yaml").unwrap_err();
    assert!(err.to_string().ends_with(":1: no `spec.evaluation` block: nothing to evaluate (expected spec.evaluation.datasets)"), "{err}");
}

#[test]
fn latency_and_cost_take_their_budgets_from_thresholds() {
    let dir = scratch("budgets", &[("evals/rag.jsonl", RAG)]);
    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: evals/rag.jsonl\n        metrics: [contains, latency_ms, cost_usd <= 0.02]\n    thresholds:\n      latency_ms: 2000\n",
    )
    .unwrap();
    let m = Manifest::load(&dir.join("agent.yaml"), "agent.yaml", &dir).unwrap();
    let specs: Vec<(String, Op, f64)> = m.datasets[0]
        .specs
        .iter()
        .map(|s| (s.name.clone(), s.op, s.threshold))
        .collect();
    assert_eq!(
        specs,
        [
            ("contains".to_string(), Op::AtLeast, 1.0),
            ("latency_ms".to_string(), Op::AtMost, 2000.0),
            ("cost_usd".to_string(), Op::AtMost, 0.02),
        ]
    );
    // Without a budget anywhere: the manifest's line, and what to write.
    let e = problems(
        &dir,
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: evals/rag.jsonl\n        metrics: [ttft_ms]\n",
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("agent.yaml:6")
            && e[0].contains("`ttft_ms` has no default threshold: give one, e.g. `ttft_ms <= 500`"),
        "{e:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
