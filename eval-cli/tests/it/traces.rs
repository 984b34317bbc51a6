//! Traces in: the demo agent reports its steps only as OpenTelemetry spans
//! (its answers carry no tool call); `evals evaluate` receives them on
//! loopback (`EVAL_OTLP_RECEIVER`), scores the trajectory and a step budget
//! from them, and writes the trajectory to the results file and the HTML
//! report.

use std::path::{Path, PathBuf};

use crate::common::{code, evals_with, report_data, scratch, text};
use eval_runtime::results::{Results, Verdict};
use eval_runtime::{StepKind, TrajectorySource};

/// The README's trajectory example (`examples/traces/steps.jsonl`): one
/// question answered from the corpus (retrieval, `lookup`, chat), one
/// computed (`calculator`, chat), one expecting a tool the agent does not
/// call for it.
fn dataset() -> String {
    std::fs::read_to_string(crate::common::repo().join("examples/traces/steps.jsonl")).unwrap()
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs [`dataset`] against a demo agent that sends its spans to the run's
/// receiver; returns the results file and the HTML report.
pub(crate) fn spans_run(dir: &Path) -> (PathBuf, PathBuf) {
    spans_run_with(dir, &[]).0
}

/// [`spans_run`] with more environment; also what the command printed.
fn spans_run_with(dir: &Path, env: &[(&str, &str)]) -> ((PathBuf, PathBuf), String, String) {
    let port = free_port();
    let receiver = format!("127.0.0.1:{port}");
    let agent = eval_examples::demo::spawn(
        eval_examples::demo::DemoConfig::default().with_otlp(format!("http://{receiver}")),
    )
    .unwrap();
    std::fs::write(dir.join("steps.jsonl"), dataset()).unwrap();
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
        &[&[("EVAL_OTLP_RECEIVER", receiver.as_str())], env].concat(),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "one sample fails:\n{stdout}{stderr}");
    (
        (dir.join("out/steps.json"), dir.join("out/steps.html")),
        stdout,
        stderr,
    )
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
    std::fs::write(dir.join("steps.jsonl"), dataset()).unwrap();
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

fn attr<'a>(
    attributes: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<&'a opentelemetry_proto::tonic::common::v1::any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn attr_text(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    match attr(attributes, key)? {
        Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn evaluations_are_exported_as_gen_ai_evaluation_result_events_linked_to_the_agent_traces() {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    for protocol in ["http/protobuf", "http/json"] {
        let dir = scratch(&format!("traces-out-{}", protocol.replace('/', "-")));
        let (collector, collected) = eval_examples::collector::spawn(Default::default()).unwrap();
        let endpoint = collector.url();
        let ((results, _), _, stderr) = spans_run_with(
            &dir,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
                ("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=s3cret%21"),
                ("OTEL_SERVICE_NAME", "rag-evals"),
            ],
        );
        assert!(
            stderr.contains(&format!(
                "note: evaluation results exported to {endpoint}/v1/traces: 7 spans sent"
            )),
            "{protocol}: {stderr}"
        );
        assert!(
            !stderr.contains("s3cret"),
            "the header's value is never shown"
        );
        let run = Results::read(&results).unwrap();
        let spans = collected.spans();
        // The requests: the protocol asked for, the header, to this endpoint.
        let requests = collected.requests();
        assert!(!requests.is_empty());
        for r in &requests {
            let want = if protocol == "http/json" {
                "application/json"
            } else {
                "application/x-protobuf"
            };
            assert_eq!(r.content_type, want);
            assert!(
                r.headers
                    .contains(&("x-collector-key".into(), "s3cret!".into()))
            );
        }
        assert!(collected.services().iter().all(|s| s == "rag-evals"));
        // The run's span, one span per sample under it, and one per request
        // to the agent.
        assert_eq!(
            spans
                .iter()
                .filter(|s| s.name == "evals agent request")
                .count(),
            3
        );
        let root: Vec<_> = spans.iter().filter(|s| s.name == "evals run").collect();
        assert_eq!(root.len(), 1, "{protocol}: {spans:#?}");
        let root = root[0];
        assert!(root.parent_span_id.is_empty());
        let samples: Vec<_> = spans
            .iter()
            .filter(|s| s.name.starts_with("evaluate "))
            .collect();
        assert_eq!(samples.len(), 3);
        for span in &samples {
            assert_eq!(span.trace_id, root.trace_id, "under the run's trace");
            assert_eq!(span.parent_span_id, root.span_id);
            let id = attr_text(&span.attributes, "evals.sample.id").unwrap();
            let record = run.samples.iter().find(|s| s.id == id).unwrap();
            // Linked to the agent's trace: the one the results file names.
            let traces = &record.trajectory.as_ref().unwrap().traces;
            let links: Vec<String> = span.links.iter().map(|l| hex(&l.trace_id)).collect();
            assert_eq!(&links, traces, "{id}");
            // Each link resolves: to the span of the request, exported
            // with the evaluation (the parent of the agent's own spans).
            for link in &span.links {
                let target = spans
                    .iter()
                    .find(|s| s.trace_id == link.trace_id && s.span_id == link.span_id)
                    .unwrap_or_else(|| panic!("{id}: a link to a span not exported: {link:?}"));
                assert_eq!(target.name, "evals agent request");
                assert!(target.parent_span_id.is_empty());
                assert!(target.start_time_unix_nano <= target.end_time_unix_nano);
            }
            // One event per metric: name, score, label, explanation.
            assert_eq!(span.events.len(), record.metrics.len());
            for (event, metric) in span.events.iter().zip(&record.metrics) {
                assert_eq!(event.name, "gen_ai.evaluation.result");
                assert_eq!(
                    attr_text(&event.attributes, "gen_ai.evaluation.name").as_deref(),
                    Some(metric.name.as_str())
                );
                match attr(&event.attributes, "gen_ai.evaluation.score.value") {
                    Some(Value::DoubleValue(v)) => assert_eq!(Some(*v), metric.score),
                    other => panic!("{id}/{}: score {other:?}", metric.name),
                }
                let label = attr_text(&event.attributes, "gen_ai.evaluation.score.label").unwrap();
                assert_eq!(label, if metric.passed { "pass" } else { "fail" });
                assert_eq!(
                    attr_text(&event.attributes, "gen_ai.evaluation.explanation"),
                    metric.reason.clone()
                );
            }
            let verdict = attr_text(&span.attributes, "evals.verdict").unwrap();
            assert_eq!(verdict, if id == "wrong" { "fail" } else { "pass" });
        }
        let wrong = samples
            .iter()
            .find(|s| attr_text(&s.attributes, "evals.sample.id").as_deref() == Some("wrong"))
            .unwrap();
        let event = &wrong.events[0];
        assert_eq!(
            attr_text(&event.attributes, "gen_ai.evaluation.explanation").as_deref(),
            Some("strict match: called calculator; expected lookup")
        );
    }
}

#[test]
fn a_collector_that_is_down_loses_no_result_and_the_drops_are_counted() {
    let dir = scratch("traces-down");
    // Nothing listens there.
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let ((results, _), stdout, stderr) =
        spans_run_with(&dir, &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())]);
    let run = Results::read(&results).unwrap();
    assert_eq!(
        run.samples.len(),
        3,
        "every result is in the file: {stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "note: evaluation results exported to {endpoint}/v1/traces: 0 spans sent, 7 dropped (the collector was slow or down; the results file has them all) (last failure: {endpoint}/v1/traces unreachable"
        )),
        "{stderr}"
    );
    // A collector that refuses: dropped after its retries, said so.
    let (refusing, _) =
        eval_examples::collector::spawn(eval_examples::collector::CollectorConfig {
            status: Some(503),
            ..Default::default()
        })
        .unwrap();
    let endpoint = refusing.url();
    let (_, _, stderr) =
        spans_run_with(&dir, &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())]);
    assert!(stderr.contains("7 dropped"), "{stderr}");
    assert!(
        stderr.contains(&format!("{endpoint}/v1/traces answered 503")),
        "{stderr}"
    );
}

#[test]
fn tool_calls_in_the_answer_and_tool_calls_in_spans_are_scored_the_same() {
    let dir = scratch("traces-same");
    // In the spans only: the JSON route.
    let ((spans_results, _), _, _) = spans_run_with(&dir, &[]);
    // In the answer only: the chat route, offered the same tools, no spans.
    std::fs::copy(
        crate::common::repo().join("examples/tools.json"),
        dir.join("tools.json"),
    )
    .unwrap();
    let url = format!("{}/v1/chat/completions", crate::common::demo_url());
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "steps.jsonl",
            "--url",
            &url,
            "--model",
            "demo-agent",
            "--tools",
            "tools.json",
            "--metrics",
            "trajectory_match, repeated_calls, tool_call_f1",
            "--output",
            "out/answers.json",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let answers = Results::read(&dir.join("out/answers.json")).unwrap();
    let spans = Results::read(&spans_results).unwrap();
    for a in &answers.samples {
        let s = spans.samples.iter().find(|s| s.id == a.id).unwrap();
        // The same calls either way (the chat route names its calls' ids;
        // the demo's spans do not).
        let calls = |r: &eval_runtime::results::SampleRecord| {
            r.tool_calls
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone(), c.turn))
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(a), calls(s), "{}", a.id);
        assert!(
            a.trajectory.is_none(),
            "no spans: the answer's calls are the steps"
        );
        let score = |r: &eval_runtime::results::SampleRecord, m: &str| {
            r.metrics.iter().find(|x| x.name == m).and_then(|x| x.score)
        };
        assert_eq!(
            score(a, "trajectory_match"),
            score(s, "trajectory_match"),
            "{}",
            a.id
        );
        assert_eq!(a.verdict == Verdict::Pass, a.id != "wrong", "{}", a.id);
    }
}

#[test]
fn a_cassette_records_the_trajectory_and_replays_it_without_agent_or_spans() {
    let dir = scratch("traces-cassette");
    let cassette = dir.join("answers.jsonl");
    let cassette = cassette.to_str().unwrap();
    let ((recorded, _), _, _) = spans_run_with(
        &dir,
        &[
            ("EVAL_AGENT_CASSETTE", cassette),
            ("EVAL_AGENT_CASSETTE_MODE", "record"),
        ],
    );
    // No agent, no receiver: the answers and their steps come from the file.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "steps.jsonl",
            "--url",
            "http://127.0.0.1:9/",
            "--metrics",
            "trajectory_match, steps <= 3, step_tokens(step = \"llm\") <= 500",
            "--output",
            "out/replayed.json",
        ],
        &[
            ("EVAL_AGENT_CASSETTE", cassette),
            ("EVAL_AGENT_CASSETTE_MODE", "replay"),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let recorded = Results::read(&recorded).unwrap();
    let replayed = Results::read(&dir.join("out/replayed.json")).unwrap();
    for r in &recorded.samples {
        let p = replayed.samples.iter().find(|p| p.id == r.id).unwrap();
        assert_eq!(p.trajectory, r.trajectory, "{}", r.id);
        assert_eq!(p.verdict, r.verdict, "{}", r.id);
        let scores = |s: &eval_runtime::results::SampleRecord| {
            s.metrics.iter().map(|m| m.score).collect::<Vec<_>>()
        };
        assert_eq!(scores(p), scores(r), "{}", r.id);
    }
}

/// An OpenAI-protocol agent names its answers (`id`, in each chunk when
/// streamed): the exported evaluations carry it as `gen_ai.response.id`,
/// on every event.
#[test]
fn exported_evaluations_carry_the_agents_response_id() {
    for stream in [false, true] {
        let dir = scratch(&format!("traces-response-id-{stream}"));
        let (collector, collected) = eval_examples::collector::spawn(Default::default()).unwrap();
        let agent = eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default()).unwrap();
        std::fs::write(dir.join("steps.jsonl"), dataset()).unwrap();
        let url = format!("{}/v1/chat/completions", agent.url());
        let endpoint = collector.url();
        let mut args = vec![
            "evaluate",
            "steps.jsonl",
            "--url",
            &url,
            "--model",
            "demo-agent",
            "--metrics",
            "tool_correctness",
            "--output",
            "out/ids.json",
        ];
        if stream {
            args.push("--stream");
        }
        let out = evals_with(
            &dir,
            &args,
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())],
        );
        let (stdout, stderr) = text(&out);
        assert!(stderr.contains("spans sent"), "exported:\n{stdout}{stderr}");
        let spans = collected.spans();
        let samples: Vec<_> = spans
            .iter()
            .filter(|s| s.name.starts_with("evaluate "))
            .collect();
        assert_eq!(samples.len(), 3, "{stdout}{stderr}");
        let mut ids = Vec::new();
        for span in samples {
            let id = attr_text(&span.attributes, "gen_ai.response.id")
                .unwrap_or_else(|| panic!("stream {stream}: the answer's id"));
            assert!(id.starts_with("chatcmpl-demo-"), "{id}");
            assert!(!span.events.is_empty());
            for event in &span.events {
                assert_eq!(
                    attr_text(&event.attributes, "gen_ai.response.id").as_deref(),
                    Some(id.as_str())
                );
            }
            ids.push(id);
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 3, "one answer each: {ids:?}");
    }
}
