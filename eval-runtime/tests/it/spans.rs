//! Spans from every instrumentation, through the receiver: an HTTP agent
//! answers and sends, under the `traceparent` it was given, the spans a
//! real instrumentation wrote for the same agent (recorded from the
//! packages by `tests/fixtures/spans/record.py`, versions in
//! `tests/fixtures/spans/PROVENANCE.md`): OpenTelemetry GenAI
//! (opentelemetry-instrumentation-openai-v2 and opentelemetry-util-genai),
//! OpenInference (openinference-instrumentation-openai and its `@tracer.tool`)
//! and OpenLLMetry (traceloop-sdk 0.62, its `@tool`). The three score alike.

use std::io::{Read, Write};
use std::time::Duration;

use eval_runtime::{
    Config, HttpAgent, MetricSpec, Sample, SampleReport, Services, StepKind, ToolCall,
};
use serde_json::{Value, json};

use crate::common::{Reply, serve};

/// The parent the spans were recorded under (record.py's `TRACEPARENT`).
const RECORDED_PARENT: &str = "b7ad6b7169203331";

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/spans/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `spans` (OTLP/JSON) moved under `traceparent`: its trace, and the
/// request's span as the parent of what had the recorded parent.
fn under(mut spans: Value, traceparent: &str) -> Value {
    let mut parts = traceparent.split('-');
    let (_, trace, parent) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
    for resource in spans["resourceSpans"].as_array_mut().unwrap() {
        for scope in resource["scopeSpans"].as_array_mut().unwrap() {
            for span in scope["spans"].as_array_mut().unwrap() {
                span["traceId"] = json!(trace);
                if span["parentSpanId"] == RECORDED_PARENT {
                    span["parentSpanId"] = json!(parent);
                }
            }
        }
    }
    spans
}

/// POSTs `body` (OTLP/JSON) to the receiver at `addr`, as an SDK's
/// OTLP/HTTP exporter does; the status it answered.
fn post_spans(addr: std::net::SocketAddr, body: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let request = format!(
        "POST /v1/traces HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_string()
}

/// An agent that answers at once and sends `spans`' fixture `delay` later.
async fn agent(name: &'static str, receiver: std::net::SocketAddr, delay: Duration) -> HttpAgent {
    let recorded = fixture(name);
    let server = serve(move |_, head, _| {
        let traceparent = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("traceparent")
                    .then(|| v.trim().to_string())
            })
            .expect("the request carries a traceparent");
        let body = under(recorded.clone(), &traceparent).to_string();
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            let status = post_spans(receiver, &body);
            assert!(status.contains("200"), "{status}");
        });
        Reply::json(
            200,
            r#"{"output": "RAG is retrieval-augmented generation."}"#,
        )
    })
    .await;
    HttpAgent::new(&server.url).unwrap()
}

fn services(wait_ms: &str) -> Services {
    let config = Config::from_vars(
        |k| {
            Ok(match k {
                "EVAL_OTLP_RECEIVER" => Some("127.0.0.1:0".to_string()),
                "EVAL_TRACE_WAIT_MS" => Some(wait_ms.to_string()),
                _ => None,
            })
        },
        &[],
    )
    .unwrap();
    Services::none().with_traces(&config.traces)
}

fn sample() -> Sample {
    let mut sample = Sample::new("What is RAG?");
    sample.expected_tools =
        Some(vec![ToolCall::new("lookup").with_arguments(
            json!({"query": "What is RAG?", "top_k": 2}),
        )]);
    sample
}

async fn evaluate(name: &'static str, wait_ms: &str, delay: Duration) -> SampleReport {
    let services = services(wait_ms);
    let receiver = services.trace_receiver().expect("the receiver listens");
    let agent = agent(name, receiver, delay).await;
    let sample = sample();
    let specs: Vec<MetricSpec> = [
        "trajectory_match",
        "tool_call_f1",
        "tool_correctness",
        "tool_call_accuracy",
    ]
    .iter()
    .map(|m| MetricSpec::new(m, &[], None).unwrap())
    .collect();
    eval_runtime::evaluate_with(
        format!("spans::{name}"),
        &sample,
        &specs,
        Duration::from_secs(30),
        async { agent.respond_to(&sample).await },
        &services,
    )
    .await
}

#[tokio::test]
async fn openllmetry_spans_score_like_genai_and_openinference_ones() {
    let mut seen = Vec::new();
    for name in ["genai", "openinference", "traceloop"] {
        let report = evaluate(name, "5000", Duration::ZERO).await;
        let scores: Vec<(&str, Option<f64>)> = report
            .metrics
            .iter()
            .map(|m| (m.name.as_str(), m.score))
            .collect();
        assert!(report.passed(), "{name}: {scores:?}\n{}", report.render());
        assert!(
            scores.iter().all(|(_, s)| *s == Some(1.0)),
            "{name}: {scores:?}"
        );
        let t = report.trajectory.expect("a trajectory from the spans");
        assert!(!t.incomplete, "{name}: {:?}", t.note);
        let steps: Vec<(StepKind, String)> =
            t.steps.iter().map(|s| (s.kind, s.name.clone())).collect();
        seen.push((name, steps, report.tool_calls));
    }
    let (_, steps, calls) = &seen[0];
    assert_eq!(
        steps,
        &[
            (StepKind::Llm, "scripted-1".to_string()),
            (StepKind::Tool, "lookup".to_string()),
            (StepKind::Llm, "scripted-1".to_string()),
        ]
    );
    assert_eq!(calls.len(), 1);
    for (name, s, c) in &seen[1..] {
        assert_eq!(s, steps, "{name}: the same steps as GenAI's");
        let args = |c: &[ToolCall]| -> Vec<(String, Value)> {
            c.iter()
                .map(|c| (c.name.clone(), Value::Object(c.arguments.clone())))
                .collect()
        };
        assert_eq!(args(c), args(calls), "{name}: the same calls as GenAI's");
    }
}

/// An SDK's exporter in backoff: the spans come after the wait. The tool
/// metrics refuse the incomplete trace, as the trajectory metrics do,
/// rather than report the call as not made.
#[tokio::test]
async fn spans_after_the_wait_are_an_incomplete_trace_no_metric_scores() {
    let report = evaluate("traceloop", "100", Duration::from_millis(1500)).await;
    let t = report
        .trajectory
        .as_ref()
        .expect("a trajectory, incomplete");
    assert!(t.incomplete, "{t:?}");
    assert_eq!(report.metrics.len(), 4);
    for m in &report.metrics {
        let error = m
            .error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert_eq!(m.score, None, "{}: {error}", m.name);
        assert!(
            error.contains("trace was incomplete"),
            "{}: {error}",
            m.name
        );
        assert!(!error.contains("not called"), "{}: {error}", m.name);
    }
    // Let the late spans arrive (counted by the receiver, under no sample).
    tokio::time::sleep(Duration::from_millis(1600)).await;
}
