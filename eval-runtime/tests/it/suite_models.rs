//! letta-evals' `target.model_handles` through `Harness::manifest`: the
//! suite runs once per model, as datasets `{suite}@{model}`, each judged by
//! the suite's reward (letta-evals 0.26, `letta_evals/runner.py`: every
//! sample for every model, `results_by_model[handle]`, a summary and mean
//! reward per model). The model reaches an HTTP agent speaking OpenAI's
//! chat completions as the request's `model` (the shapes of OpenAI's API
//! reference), and an in-process agent as `sample.agent_args["model"]`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::common::{self, Reply};

use eval_runtime::results::Results;
use eval_runtime::{Harness, HttpAgent, Response, Sample};

const SUITE: &str = "name: capitals
dataset: dataset.jsonl
target:
  kind: letta_code
  model_handles: [openai/good-model, openai/bad-model]
graders:
  correctness:
    kind: tool
    function: contains
    extractor: last_assistant
reward:
  kind: metric
  metric_key: correctness
";

const DATA: &str = "{\"input\": \"What is the capital of France?\", \"ground_truth\": \"Paris\"}
{\"input\": \"What is the capital of Italy?\", \"ground_truth\": \"Rome\"}
";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-suite-models-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("suite.yaml"), SUITE).unwrap();
    std::fs::write(dir.join("dataset.jsonl"), DATA).unwrap();
    dir
}

/// As `openai/good-model` the capital asked for; as any other, not.
fn answer(model: &str, question: &str) -> &'static str {
    match (model, question) {
        ("openai/good-model", q) if q.contains("France") => "Paris.",
        ("openai/good-model", q) if q.contains("Italy") => "Rome.",
        _ => "I do not know.",
    }
}

/// (dataset, verdict) per sample, and (dataset, gate passed) per gate.
type Verdicts = (Vec<(String, String)>, Vec<(String, bool)>);

/// The verdicts of the results file at `path`.
fn verdicts(path: &std::path::Path) -> Verdicts {
    let r = Results::read(path).unwrap();
    let mut samples: Vec<(String, String)> = r
        .samples
        .iter()
        .map(|s| (s.dataset.clone(), format!("{:?}", s.verdict)))
        .collect();
    samples.sort();
    let mut gates: Vec<(String, bool)> = r
        .datasets
        .iter()
        .flat_map(|d| {
            d.metrics
                .iter()
                .filter_map(|m| m.gate.as_ref().map(|g| (d.name.clone(), g.passed)))
        })
        .collect();
    gates.sort();
    (samples, gates)
}

fn expected() -> Verdicts {
    let (good, bad) = ("capitals_openai_good_model", "capitals_openai_bad_model");
    let s = |d: &str, v: &str| (d.to_string(), v.to_string());
    (
        vec![
            s(bad, "Fail"),
            s(bad, "Fail"),
            s(good, "Pass"),
            s(good, "Pass"),
        ],
        vec![(bad.to_string(), false), (good.to_string(), true)],
    )
}

#[test]
fn an_in_process_agent_reads_each_models_run_from_agent_args() {
    let dir = scratch("fn");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out/results.json"))
        .manifest("suite.yaml")
        .agent_fn(move |s: &Sample| {
            let model = s.agent_args["model"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            log.lock().unwrap().push(model.clone());
            let text = answer(&model, s.input.last());
            async move { Response::new(text) }
        })
        .evaluate(common::harness_args(&["harness", "-q"]));
    assert_eq!(out.code, 1, "the bad model misses its reward");
    assert_eq!(verdicts(&dir.join("out/results.json")), expected());
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "openai/bad-model",
            "openai/bad-model",
            "openai/good-model",
            "openai/good-model"
        ]
    );
}

#[test]
fn an_openai_agent_is_asked_as_each_model_in_turn() {
    let dir = scratch("openai");
    let server = common::serve_detached(|_, _, body| {
        let model = body["model"].as_str().unwrap_or_default();
        let question = body["messages"][0]["content"].as_str().unwrap_or_default();
        Reply::json(200, common::chat(answer(model, question)))
    });
    // No model set up: the suite's handles give it.
    let agent = HttpAgent::new(&format!("{}/v1/chat/completions", server.url)).unwrap();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out/results.json"))
        .manifest("suite.yaml")
        .agent(agent)
        .evaluate(common::harness_args(&["harness", "-q"]));
    assert_eq!(out.code, 1, "the bad model misses its reward");
    assert_eq!(verdicts(&dir.join("out/results.json")), expected());
    let mut models: Vec<String> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| body["model"].as_str().unwrap_or_default().to_string())
        .collect();
    models.sort();
    assert_eq!(
        models,
        [
            "openai/bad-model",
            "openai/bad-model",
            "openai/good-model",
            "openai/good-model"
        ]
    );
}
