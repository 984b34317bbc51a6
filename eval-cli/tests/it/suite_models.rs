//! letta-evals' `target.model_handles` (seed 001, letta-evals 0.26:
//! `letta_evals/runner.py` runs every sample once per handle and keeps
//! `results_by_model[handle]`, one summary and mean reward per model):
//! `evals evaluate suite.yaml` runs the suite once per model, as datasets
//! `{suite}@{model}`, each judged by the suite's reward, against a real
//! agent on loopback that answers right as one model and wrong as the
//! other. The OpenAI protocol receives the model as its request `model`
//! (OpenAI's chat-completions request and response shapes, as documented
//! in its API reference); the JSON contract as `agent_args.model`.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::loopback;
use crate::common::*;

const GOOD: &str = "openai/good-model";
const BAD: &str = "openai/bad-model";

/// What the agent saw: (route, model) per request.
pub(crate) type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// The agent: `POST /v1/chat/completions` (OpenAI's shape: the model is
/// the request's `model`) and `POST /agent` (this project's JSON contract:
/// `agent_args.model`). As `GOOD` it names the capital asked for; as any
/// other model it does not know.
pub(crate) fn agent() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let url = loopback::serve(move |r| {
        let request = r.json();
        if r.path.ends_with("/chat/completions") {
            let model = request["model"].as_str().unwrap_or_default().to_string();
            log.lock().unwrap().push(("openai".into(), model.clone()));
            let content = answer(&model, &r.last_user_message());
            loopback::Reply::ok(&loopback::chat_completion(&request["model"], content))
        } else {
            let model = request["agent_args"]["model"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let question = request["input"].as_str().unwrap_or_default();
            log.lock().unwrap().push(("json".into(), model.clone()));
            loopback::Reply::ok(&json!({"output": answer(&model, question)}))
        }
    });
    (url, seen)
}

fn answer(model: &str, question: &str) -> &'static str {
    match (model == GOOD, question) {
        (true, q) if q.contains("France") => "The capital of France is Paris.",
        (true, q) if q.contains("Italy") => "The capital of Italy is Rome.",
        _ => "I do not know.",
    }
}

/// The letta-evals 0.26 suite with two model handles, in a scratch
/// project.
fn project(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    let from = repo().join("tests/fixtures/letta-evals-0.26.0/two-models");
    for file in ["suite.yaml", "dataset.jsonl"] {
        std::fs::copy(from.join(file), dir.join(file)).unwrap();
    }
    dir
}

/// (dataset, sample id, verdict) per sample, and (dataset, whether its gate
/// passed) per gate.
type Verdicts = (Vec<(String, String, String)>, Vec<(String, bool)>);

/// The verdicts of a results file.
fn verdicts(results: &Value) -> Verdicts {
    let mut samples: Vec<(String, String, String)> = results["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["dataset"].as_str().unwrap().to_string(),
                s["id"].as_str().unwrap().to_string(),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    samples.sort();
    let mut gates: Vec<(String, bool)> = results["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| {
            let name = d["name"].as_str().unwrap().to_string();
            d["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(move |m| Some((name.clone(), m["gate"]["passed"].as_bool()?)))
        })
        .collect();
    gates.sort();
    (samples, gates)
}

fn check(dir: &std::path::Path, out: &std::process::Output, file: &str) {
    let (stdout, stderr) = text(out);
    // The bad model misses the reward: the run fails.
    assert_eq!(code(out), 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the suite runs once per model, as datasets `capitals@openai/good-model`, `capitals@openai/bad-model`"),
        "{stderr}"
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
    let (samples, gates) = verdicts(&results);
    let (good, bad) = ("capitals_openai_good_model", "capitals_openai_bad_model");
    let row = |d: &str, id: &str, v: &str| (d.to_string(), id.to_string(), v.to_string());
    assert_eq!(
        samples,
        [
            row(bad, "0", "fail"),
            row(bad, "1", "fail"),
            row(good, "0", "pass"),
            row(good, "1", "pass"),
        ],
        "each model's results are its own:\n{results:#}"
    );
    assert_eq!(
        gates,
        [(bad.to_string(), false), (good.to_string(), true)],
        "each model has its reward's verdict:\n{results:#}"
    );
    assert!(
        stdout.contains(&format!("gate {bad} FAILED"))
            || stderr.contains(&format!("gate {bad} FAILED")),
        "{stdout}\n{stderr}"
    );
}

#[test]
fn a_suite_with_two_model_handles_runs_once_per_model_over_openai() {
    let dir = project("suite-models-openai");
    let (url, seen) = agent();
    let chat = format!("{url}/v1/chat/completions");
    let out = evals(
        &dir,
        &[
            "evaluate",
            "suite.yaml",
            "--url",
            &chat,
            "--output",
            "out.json",
        ],
    );
    check(&dir, &out, "out.json");
    // Every sample was sent once as each model, in the request's `model`.
    let mut models: Vec<(String, String)> = seen.lock().unwrap().clone();
    models.sort();
    let openai = |m: &str| ("openai".to_string(), m.to_string());
    assert_eq!(
        models,
        [openai(BAD), openai(BAD), openai(GOOD), openai(GOOD)]
    );
}

#[test]
fn a_suite_with_two_model_handles_gives_the_json_contract_agent_args_model() {
    let dir = project("suite-models-json");
    let (url, seen) = agent();
    let endpoint = format!("{url}/agent");
    let out = evals(
        &dir,
        &[
            "evaluate",
            "suite.yaml",
            "--url",
            &endpoint,
            "--output",
            "out.json",
        ],
    );
    check(&dir, &out, "out.json");
    let mut models: Vec<(String, String)> = seen.lock().unwrap().clone();
    models.sort();
    let contract = |m: &str| ("json".to_string(), m.to_string());
    assert_eq!(
        models,
        [contract(BAD), contract(BAD), contract(GOOD), contract(GOOD)]
    );
}
