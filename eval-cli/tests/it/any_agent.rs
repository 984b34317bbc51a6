//! `evals evaluate` against an HTTP agent that speaks neither the JSON
//! contract nor OpenAI, mapped with flags only (issue 35): a service that
//! answers `{"question": ...}` with `{"data": {"answer": ..., "sources":
//! [...]}}` and wants a tenant header. Also which setting wins: a flag,
//! then the manifest's `agent:` key, then the `EVAL_AGENT_*` variable.

use crate::common::loopback;
use crate::common::*;

/// The service, on loopback: answers from a small table, `401` without
/// `X-Tenant: acme`. Returns its URL.
fn data_service() -> String {
    let base = loopback::serve(|r| {
        if r.header("x-tenant") != Some("acme") {
            return loopback::Reply::json(401, &serde_json::json!({"error": "unknown tenant"}));
        }
        let request = r.json();
        let question = request["question"].as_str().unwrap_or_default();
        let (answer, source) = if question.contains("France") {
            (
                "The capital of France is Paris.",
                "Paris is the capital of France.",
            )
        } else if question.contains("2 + 2") {
            ("2 + 2 = 4", "Arithmetic: 2 + 2 = 4.")
        } else {
            ("I do not know.", "nothing found")
        };
        loopback::Reply::ok(
            &serde_json::json!({"data": {"answer": answer, "sources": [{"text": source, "score": 0.9}]}, "request_id": "r-1"}),
        )
    });
    format!("{base}/api/ask")
}

const QA: &str = "{\"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n{\"input\": \"What is 2 + 2?\", \"expected\": \"4\"}\n";

#[test]
fn an_agent_answering_data_answer_to_question_runs_with_flags_only() {
    let dir = scratch("any-agent");
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    let url = data_service();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
            "--agent-request",
            r#"{"question": "{input}"}"#,
            "--agent-output",
            "data.answer",
            "--agent-context",
            "data.sources[*].text",
            "--agent-header",
            "X-Tenant: acme",
            "--json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let results: serde_json::Value = serde_json::from_str(&stdout).expect("the results JSON");
    let samples = results["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    for s in samples {
        assert_eq!(s["verdict"], "pass", "{s}");
        assert_eq!(s["metrics"][0]["passed"], true, "{s}");
    }
    let paris = samples.iter().find(|s| s["expected"] == "Paris").unwrap();
    assert_eq!(
        paris["output"], "The capital of France is Paris.",
        "{stdout}"
    );
    assert_eq!(
        paris["context"],
        serde_json::json!(["Paris is the capital of France."]),
        "the context is read: {stdout}"
    );

    // Without the header the service refuses, and the run says so.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
            "--agent-request",
            r#"{"question": "{input}"}"#,
            "--agent-output",
            "data.answer",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_ne!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("401"),
        "{stdout}{stderr}"
    );
}

#[test]
fn a_flag_wins_over_the_manifest_which_wins_over_the_environment() {
    let dir = scratch("any-agent-precedence");
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: qa\n        path: qa.jsonl\n        metrics: [contains]\n    agent:\n      request:\n        question: \"{input}\"\n      headers:\n        X-Tenant: acme\n      output: data.reply\n",
    )
    .unwrap();
    let url = data_service();
    let env = [("EVAL_AGENT_OUTPUT", "/data/text")];
    // The manifest's output path beats the variable's: its error names it.
    let out = evals_with(&dir, &["evaluate", "agent.yaml", "--url", &url], &env);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "no sample could be scored: {stdout}{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains("the manifest's agent.output (`data.reply`): `data` has no key `reply` (its keys: answer, sources)"),
        "{all}"
    );
    assert!(!all.contains("EVAL_AGENT_OUTPUT"), "{all}");
    // The flag beats both.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "agent.yaml",
            "--url",
            &url,
            "--agent-output",
            "/data/answer",
        ],
        &env,
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    // Without the manifest the variable applies (and its error names it).
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--metrics",
            "contains",
            "--agent-request",
            r#"{"question": "{input}"}"#,
            "--agent-header",
            "X-Tenant: acme",
        ],
        &env,
    );
    let (stdout, stderr) = text(&out);
    assert!(
        format!("{stdout}{stderr}")
            .contains("EVAL_AGENT_OUTPUT (`/data/text`): `/data` has no key `text`"),
        "{stdout}{stderr}"
    );
    // A bad flag stops the run before any request, naming the flag.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--agent-context",
            "data..sources",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("--agent-context: `data..sources` is not a path"),
        "{stderr}"
    );
    let out = evals(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--agent-request",
            r#"{"q": "{prompt}"}"#,
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(
        stderr.contains("--agent-request: `{prompt}` is not a placeholder"),
        "{stderr}"
    );
}
