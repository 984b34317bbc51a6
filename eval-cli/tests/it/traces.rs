//! Traces in: the demo agent reports its steps only as OpenTelemetry spans
//! (its answers carry no tool call); `evals evaluate` receives them on
//! loopback (`EVAL_OTLP_RECEIVER`), scores the trajectory and a step budget
//! from them, and writes the trajectory to the results file and the HTML
//! report.

use std::path::{Path, PathBuf};

use crate::common::{code, evals_with, report_data, scratch, text};
use eval_runtime::results::{Results, Verdict};
use eval_runtime::{StepKind, TrajectorySource};

/// Three questions: one answered from the corpus (retrieval, `lookup`,
/// chat), one computed (`calculator`, chat), one expecting a tool the agent
/// does not call for it.
pub(crate) const DATASET: &str = r#"{"id": "rag", "input": "What is RAG?", "expected_tools": [{"name": "lookup", "arguments": {"query": "What is RAG?"}}]}
{"id": "sum", "input": "What is 2 + 2?", "expected_tools": [{"name": "calculator", "arguments": {"expression": "2 + 2"}}]}
{"id": "wrong", "input": "What is 3 + 4?", "expected_tools": [{"name": "lookup", "arguments": {"query": "What is 3 + 4?"}}]}
"#;

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs [`DATASET`] against a demo agent that sends its spans to the run's
/// receiver; returns the results file and the HTML report.
pub(crate) fn spans_run(dir: &Path) -> (PathBuf, PathBuf) {
    let port = free_port();
    let receiver = format!("127.0.0.1:{port}");
    let agent = eval_examples::demo::spawn(
        eval_examples::demo::DemoConfig::default().with_otlp(format!("http://{receiver}")),
    )
    .unwrap();
    std::fs::write(dir.join("steps.jsonl"), DATASET).unwrap();
    let url = agent.url();
    let out = evals_with(
        dir,
        &[
            "evaluate",
            "steps.jsonl",
            "--url",
            &url,
            "--metrics",
            "trajectory_match, steps <= 3, step_tokens(step = \"llm\") <= 500",
            "--output",
            "out/steps.json",
        ],
        &[("EVAL_OTLP_RECEIVER", &receiver)],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "one sample fails:\n{stdout}{stderr}");
    (dir.join("out/steps.json"), dir.join("out/steps.html"))
}

#[test]
fn spans_only_agent_is_scored_from_its_trajectory() {
    let dir = scratch("traces-in");
    let (results, html) = spans_run(&dir);
    let run = Results::read(&results).unwrap();
    let get = |id: &str| run.samples.iter().find(|s| s.id == id).unwrap();

    // The corpus question: retrieval, lookup, chat, from the spans.
    let rag = get("rag");
    assert_eq!(rag.verdict, Verdict::Pass, "{rag:#?}");
    let t = rag.trajectory.as_ref().expect("a trajectory");
    assert_eq!(t.source, TrajectorySource::Spans);
    assert_eq!(t.note, None, "the trace was complete: {t:#?}");
    let steps: Vec<(StepKind, &str)> = t.steps.iter().map(|s| (s.kind, s.name.as_str())).collect();
    assert_eq!(
        steps,
        [
            (StepKind::Retrieval, "retrieval demo-corpus"),
            (StepKind::Tool, "lookup"),
            (StepKind::Llm, "demo-agent"),
        ]
    );
    assert_eq!(t.steps[1].arguments["query"], "What is RAG?");
    assert!(
        t.steps[1]
            .result
            .as_deref()
            .unwrap()
            .contains("Retrieval-augmented")
    );
    assert!(t.steps[2].input_tokens.unwrap() > 0 && t.steps[2].output_tokens.unwrap() > 0);
    assert!(
        t.steps
            .iter()
            .all(|s| s.duration_ms.is_some() && s.span_id.is_some())
    );
    assert_eq!(t.traces.len(), 1);
    assert_eq!(t.traces[0].len(), 32);
    // The tool call came from the spans: the answer had none.
    assert_eq!(rag.tool_calls.len(), 1);
    assert_eq!(rag.tool_calls[0].name, "lookup");
    let metric = |s: &eval_runtime::results::SampleRecord, name: &str| {
        s.metrics.iter().find(|m| m.name == name).unwrap().clone()
    };
    assert_eq!(metric(rag, "trajectory_match").score, Some(1.0));
    assert_eq!(metric(rag, "steps").score, Some(3.0));

    // Arithmetic: calculator, chat.
    let sum = get("sum");
    assert_eq!(sum.verdict, Verdict::Pass, "{sum:#?}");
    assert_eq!(metric(sum, "steps").score, Some(2.0));
    assert_eq!(
        sum.trajectory.as_ref().unwrap().steps[0].arguments["expression"],
        "2 + 2"
    );

    // The wrong expectation fails the trajectory match, and says why.
    let wrong = get("wrong");
    assert_eq!(wrong.verdict, Verdict::Fail);
    let m = metric(wrong, "trajectory_match");
    assert_eq!(m.score, Some(0.0));
    assert_eq!(
        m.reason.as_deref(),
        Some("strict match: called calculator; expected lookup")
    );

    // Each sample its own trace.
    let mut traces: Vec<&String> = run
        .samples
        .iter()
        .flat_map(|s| &s.trajectory.as_ref().unwrap().traces)
        .collect();
    traces.sort();
    traces.dedup();
    assert_eq!(traces.len(), 3);

    // The HTML report holds the trajectory to draw.
    let page = std::fs::read_to_string(&html).unwrap();
    let data = report_data(&page);
    let samples = data["runs"][0]["samples"].as_array().unwrap();
    let rag = samples.iter().find(|s| s["id"] == "rag").unwrap();
    assert_eq!(rag["trajectory"]["steps"].as_array().unwrap().len(), 3);
    assert_eq!(rag["trajectory"]["steps"][1]["kind"], "tool");
    assert!(
        page.contains("function timeline("),
        "the page draws timelines"
    );
}

#[test]
fn a_receiver_that_cannot_listen_fails_every_sample_saying_why() {
    let dir = scratch("traces-busy");
    std::fs::write(dir.join("steps.jsonl"), DATASET).unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "steps.jsonl",
            "--url",
            crate::common::demo_url(),
            "--metrics",
            "steps <= 3",
        ],
        &[("EVAL_OTLP_RECEIVER", &addr)],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(
        code(&out),
        2,
        "no sample could be scored:\n{stdout}{stderr}"
    );
    assert!(
        stdout.contains(&format!(
            "cannot listen for the agent's spans on {addr} (EVAL_OTLP_RECEIVER)"
        )),
        "{stdout}"
    );
    // A value that is not a loopback address is a setting error.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "steps.jsonl",
            "--url",
            crate::common::demo_url(),
            "--metrics",
            "steps <= 3",
        ],
        &[("EVAL_OTLP_RECEIVER", "0.0.0.0:4318")],
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 2);
    assert!(
        stderr.contains("invalid EVAL_OTLP_RECEIVER=`0.0.0.0:4318`"),
        "{stderr}"
    );
}
