//! `evals evaluate` against the demo agent's OpenAI route: `--protocol
//! openai --model --stream --tools`, and the same from a manifest's
//! `spec.evaluation.agent` and a dataset's `tools`.

use crate::common;

use common::*;
use serde_json::{Value, json};

const DATA: &str = r#"{"id": "calc", "input": "What is 12 * 7?", "expected": "84"}
{"id": "capital", "input": "What is the capital of France?", "expected": "Paris"}
{"id": "memory", "input": ["My name is Ada.", "What's my name?"], "expected": "Ada"}
"#;

fn setup(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("data.jsonl"), DATA).unwrap();
    std::fs::write(
        dir.join("tools.json"),
        Value::from(eval_examples::demo::tool_definitions()).to_string(),
    )
    .unwrap();
    dir
}

fn chat_url() -> String {
    format!("{}/v1/chat/completions", demo_url())
}

/// Every sample passed, each called the tool expected of it (none for the
/// conversation), and streaming recorded a time to first token and tokens.
fn check_results(stdout: &str) {
    let results: Value = serde_json::from_str(stdout).expect("stdout is the results JSON");
    let samples = results["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3, "{stdout}");
    for s in samples {
        assert_eq!(s["verdict"], "pass", "{s}");
        assert!(s["ttft_ms"].as_f64().is_some_and(|t| t >= 0.0), "{s}");
        assert!(s["agent"]["prompt_tokens"].as_u64().unwrap() > 0, "{s}");
        assert!(s["agent"]["completion_tokens"].as_u64().unwrap() > 0, "{s}");
    }
    let tools = |id: &str| -> Vec<Value> {
        samples.iter().find(|s| s["id"] == id).unwrap()["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|mut c| {
                c.as_object_mut().unwrap().remove("id");
                c
            })
            .collect()
    };
    assert_eq!(
        tools("calc"),
        [json!({"name": "calculator", "arguments": {"expression": "12 * 7"}})]
    );
    assert_eq!(
        tools("capital"),
        [json!({"name": "lookup", "arguments": {"query": "What is the capital of France?"}})]
    );
    assert!(tools("memory").is_empty());
    // The conversation's two turns are two calls.
    let memory = samples.iter().find(|s| s["id"] == "memory").unwrap();
    assert_eq!(memory["agent"]["calls"], 2);
}

#[test]
fn protocol_openai_with_streaming_and_tools_against_the_demo_agent() {
    let dir = setup("openai-flags");
    let url = chat_url();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "data.jsonl",
            "--url",
            &url,
            "--protocol",
            "openai",
            "--model",
            "demo-agent",
            "--stream",
            "--tools",
            "tools.json",
            "--metrics",
            "contains",
            "--json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    check_results(&stdout);

    // Without a model the run does not start.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "data.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("the OpenAI protocol needs a model (implied by the URL ending in /chat/completions): set EVAL_AGENT_MODEL"),
        "{stderr}"
    );
    // The model may come from the environment instead.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "data.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
            "--stream",
            "--tools",
            "tools.json",
            "--json",
        ],
        &[("EVAL_AGENT_MODEL", "demo-agent")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    check_results(&stdout);
}

#[test]
fn a_manifest_names_the_protocol_model_stream_and_tools() {
    let dir = setup("openai-manifest");
    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: tool-use\n        path: data.jsonl\n        metrics: [contains]\n        tools: $file:tools.json\n    agent:\n      protocol: openai\n      model: demo-agent\n      stream: true\n",
    )
    .unwrap();
    // The model and streaming come from the manifest (no flag, no variable).
    let url = format!("{}/v1/chat/completions", demo_url());
    let out = evals(&dir, &["evaluate", "agent.yaml", "--url", &url, "--json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    check_results(&stdout);
    // --tools is the dataset file's; a manifest gives each dataset its own.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "agent.yaml",
            "--url",
            &url,
            "--tools",
            "tools.json",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("a manifest gives each dataset its own `tools`")
    );
}

#[test]
fn the_json_contract_stays_the_default() {
    let dir = setup("openai-default");
    let out = evals(
        &dir,
        &[
            "evaluate",
            "data.jsonl",
            "--url",
            demo_url(),
            "--metrics",
            "contains",
            "--json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let results: Value = serde_json::from_str(&stdout).unwrap();
    for s in results["samples"].as_array().unwrap() {
        assert!(
            s.get("ttft_ms").is_none() && s.get("tool_calls").is_none(),
            "{s}"
        );
    }
}
