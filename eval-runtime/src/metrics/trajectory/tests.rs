//! Hand-computed cases of agentevals 0.0.8's trajectory match (the
//! worked examples follow its `_is_trajectory_superset` step by step), the
//! loop count and the step budgets.

use eval_datasets::metric::{ArgsMatch, MetricSpec, Op, OptionValue, StepKind, TrajectoryMode};
use eval_datasets::{Sample, ToolCall};
use serde_json::json;

use super::*;
use crate::model::{Step, TrajectorySource};
use eval_datasets::metric::MetricKind;

/// [`super::score`] of a spec: `None` for a metric of another family.
fn score(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Option<Result<f64, MetricError>> {
    match &spec.kind {
        MetricKind::Trajectory(kind) => Some(super::score(spec, kind, sample, response, turn)),
        _ => None,
    }
}

/// [`super::explain`] of a spec: `None` for a metric of another family.
fn explain(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Option<String> {
    match &spec.kind {
        MetricKind::Trajectory(kind) => super::explain(kind, sample, response, turn),
        _ => None,
    }
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new(name).with_arguments(args)
}

fn a(x: i64) -> ToolCall {
    call("A", json!({ "x": x }))
}

fn b(x: i64) -> ToolCall {
    call("B", json!({ "x": x }))
}

use ArgsMatch::{Exact, Ignore};
use TrajectoryMode::{Strict, Subset, Superset, Unordered};

#[test]
fn strict_wants_the_same_calls_in_the_same_order() {
    let m = |c: &[ToolCall], e: &[ToolCall], args| trajectory_match(c, e, Strict, args);
    assert!(m(&[a(1), b(2)], &[a(1), b(2)], Exact));
    assert!(!m(&[b(2), a(1)], &[a(1), b(2)], Exact), "order counts");
    assert!(!m(&[a(1), b(2), b(2)], &[a(1), b(2)], Exact), "as many");
    // {city: "sf"} is not {city: "SF"}, unless arguments are ignored.
    let sf = |c: &str| call("weather", json!({ "city": c }));
    assert!(!m(&[sf("sf")], &[sf("SF")], Exact));
    assert!(m(&[sf("sf")], &[sf("SF")], Ignore));
    // Python's ==: 1 == 1.0; "1" is not 1.
    assert!(m(&[call("A", json!({"x": 1.0}))], &[a(1)], Exact));
    assert!(!m(&[call("A", json!({"x": "1"}))], &[a(1)], Exact));
    assert!(m(&[], &[], Exact), "no call, none expected");
}

#[test]
fn unordered_wants_the_same_calls_as_many_times_in_any_order() {
    let m = |c: &[ToolCall], e: &[ToolCall]| trajectory_match(c, e, Unordered, Exact);
    assert!(m(&[a(1), b(2)], &[b(2), a(1)]));
    // agentevals U2: [A(1), A(1)] against [A(1)]: the superset direction
    // passes, the subset one does not (each expected call covers one).
    assert!(!m(&[a(1), a(1)], &[a(1)]));
    assert!(m(&[], &[]));
    assert!(!m(&[a(1)], &[a(2)]));
}

#[test]
fn superset_wants_every_expected_call_made_duplicates_counted() {
    let m = |c: &[ToolCall], e: &[ToolCall]| trajectory_match(c, e, Superset, Exact);
    assert!(m(&[a(1), a(1), b(2)], &[a(1)]), "P1: extra calls allowed");
    assert!(!m(&[a(1)], &[a(1), a(1)]), "P2: one call covers one");
    assert!(m(&[a(1)], &[]), "nothing expected");
    assert!(!m(&[], &[a(1)]));
}

#[test]
fn subset_wants_no_call_beyond_the_expected() {
    let m = |c: &[ToolCall], e: &[ToolCall]| trajectory_match(c, e, Subset, Exact);
    assert!(m(&[a(1)], &[a(1), b(2)]), "B1");
    assert!(!m(&[a(1), a(1)], &[a(1)]), "B2");
    assert!(m(&[], &[a(1), b(2)]), "B3: no call at all is a subset");
}

#[test]
fn argument_modes_compare_as_agentevals_matchers_do_first_fit_included() {
    let s = |args: serde_json::Value| call("s", args);
    // superset mode: matcher(call, expected); args = superset: the call
    // gives every expected argument.
    assert!(trajectory_match(
        &[s(json!({"q": "x", "n": 5}))],
        &[s(json!({"q": "x"}))],
        Superset,
        ArgsMatch::Superset
    ));
    assert!(!trajectory_match(
        &[s(json!({"q": "x"}))],
        &[s(json!({"q": "x", "n": 5}))],
        Superset,
        ArgsMatch::Superset
    ));
    // args = subset: the call gives only expected arguments.
    assert!(trajectory_match(
        &[s(json!({"q": "x"}))],
        &[s(json!({"q": "x", "n": 5}))],
        Superset,
        ArgsMatch::Subset
    ));
    // agentevals P3: first fit, no second search. Expected s{q} takes
    // call 0 (s{q, n}); expected s{q, n} then finds only s{q}: false, though
    // the other pairing would match.
    assert!(!trajectory_match(
        &[s(json!({"q": "x", "n": 5})), s(json!({"q": "x"}))],
        &[s(json!({"q": "x"})), s(json!({"q": "x", "n": 5}))],
        Superset,
        ArgsMatch::Superset
    ));
    // subset mode swaps the roles: matcher(expected, call).
    assert!(trajectory_match(
        &[s(json!({"q": "x", "n": 5}))],
        &[s(json!({"q": "x"}))],
        Subset,
        ArgsMatch::Subset
    ));
}

#[test]
fn repeated_calls_counts_the_most_made_call() {
    assert_eq!(repeated_calls(&[]), 0);
    assert_eq!(repeated_calls(&[a(1), a(2), b(1)]), 1);
    // A, B, A, B, A(1): A(1) three times, not consecutively.
    assert_eq!(repeated_calls(&[a(1), b(1), a(1), b(1), a(1)]), 3);
    assert_eq!(repeated_calls(&[call("A", json!({"x": 1.0})), a(1)]), 2);
}

fn step(kind: StepKind, name: &str, turn: usize, ms: f64, tokens: Option<(u64, u64)>) -> Step {
    let mut s = Step::new(kind, name).in_turn(turn);
    s.duration_ms = Some(ms);
    if let Some((i, o)) = tokens {
        s = s.with_tokens(i, o);
    }
    s
}

fn spans(steps: Vec<Step>) -> Response {
    let mut r = Response::new("answer");
    r.trajectory = Some(Trajectory {
        steps,
        source: TrajectorySource::Spans,
        ..Trajectory::default()
    });
    r
}

fn spec(name: &str, options: &[(&str, OptionValue)], bound: Option<(Op, f64)>) -> MetricSpec {
    MetricSpec::new(name, options, bound).unwrap()
}

#[test]
fn step_metrics_score_the_spans_steps() {
    let r = spans(vec![
        step(StepKind::Retrieval, "search", 0, 12.0, None),
        step(StepKind::Tool, "lookup", 0, 40.0, None).with_arguments(json!({"id": "rag"})),
        step(StepKind::Llm, "demo-model", 0, 25.0, Some((120, 30))),
        step(StepKind::Llm, "demo-model", 1, 5.0, Some((300, 20))),
    ]);
    let sample = Sample::new("q").with_turns(["q1", "q2"]);
    let score = |s: &MetricSpec, turn| score(s, &sample, &r, turn).unwrap().unwrap();
    let budget = Some((Op::AtMost, 8.0));
    assert_eq!(score(&spec("steps", &[], budget), None), 4.0);
    let tools_only = [("step", OptionValue::Str("tool".into()))];
    assert_eq!(score(&spec("steps", &tools_only, budget), None), 1.0);
    assert_eq!(score(&spec("steps", &[], budget), Some(1)), 1.0, "turn 2's");
    let latency = spec("step_latency_ms", &[], Some((Op::AtMost, 30.0)));
    assert_eq!(score(&latency, None), 40.0);
    let llm = [("step", OptionValue::Str("llm".into()))];
    assert_eq!(score(&spec("step_latency_ms", &llm, budget), None), 25.0);
    let tokens = spec("step_tokens", &[], Some((Op::AtMost, 200.0)));
    assert_eq!(score(&tokens, None), 320.0, "300 in + 20 out");
    assert_eq!(score(&tokens, Some(0)), 150.0);
    assert_eq!(
        explain(&latency, &sample, &r, None).unwrap(),
        "tool step `lookup` (turn 1): 40 ms"
    );
    // Tool calls come from the tool steps when the answer reports none.
    let mut with_expected = sample.clone();
    with_expected.expected_tools = Some(vec![call("lookup", json!({"id": "rag"}))]);
    let m = spec("trajectory_match", &[], None);
    assert_eq!(
        self::score(&m, &with_expected, &r, None).unwrap().unwrap(),
        1.0
    );
    with_expected.expected_tools = Some(vec![call("lookup", json!({"id": "chunking"}))]);
    assert_eq!(
        self::score(&m, &with_expected, &r, None).unwrap().unwrap(),
        0.0
    );
    assert_eq!(
        explain(&m, &with_expected, &r, None).unwrap(),
        "strict match: called lookup; expected lookup"
    );
}

#[test]
fn an_answer_without_spans_is_one_tool_step_per_call() {
    let r = Response::new("x").with_tool_calls([a(1), a(1), b(2)]);
    let sample = Sample::new("q");
    let score = |s: &MetricSpec| score(s, &sample, &r, None).unwrap();
    assert_eq!(
        score(&spec("steps", &[], Some((Op::AtMost, 8.0)))).unwrap(),
        3.0
    );
    assert_eq!(score(&spec("repeated_calls", &[], None)).unwrap(), 2.0);
    let e = score(&spec("step_latency_ms", &[], Some((Op::AtMost, 10.0)))).unwrap_err();
    assert!(e.to_string().contains("not from spans"), "{e}");
    // Without the receiver in the build, the error names the feature.
    assert_eq!(
        e.to_string().contains(r#"features = ["otel"]"#),
        !cfg!(feature = "otel"),
        "{e}"
    );
    let e = score(&spec(
        "step_tokens",
        &[("step", OptionValue::Str("llm".into()))],
        Some((Op::AtMost, 10.0)),
    ))
    .unwrap_err();
    assert_eq!(e.to_string(), "`step_tokens`: the agent took no llm step");
}

/// Spans that arrived after `EVAL_TRACE_WAIT_MS`: every metric that reads
/// the agent's steps or the calls taken from them refuses to score, rather
/// than read a call whose span was late as not made.
#[test]
fn every_metric_that_reads_the_trajectory_refuses_an_incomplete_trace() {
    let mut sample = Sample::new("What is RAG?");
    sample.expected = Some(eval_datasets::Expected::Text("lookup".into()));
    sample.expected_tools = Some(vec![call("lookup", json!({"query": "RAG"}))]);
    // As the engine hands a spans-only agent's answer to the metrics: its
    // calls are the trajectory's.
    let late = |steps: Vec<Step>| {
        let trajectory = Trajectory {
            steps,
            source: TrajectorySource::Spans,
            note: Some(
                "the trace was incomplete after 50 ms (1 spans, some of their parents missing)"
                    .into(),
            ),
            incomplete: true,
            ..Trajectory::default()
        };
        let mut response = Response::new("RAG is retrieval-augmented generation.");
        response.tool_calls = trajectory.tool_calls();
        response.trajectory = Some(trajectory);
        response
    };
    let names = [
        "tool_called",
        "tool_correctness",
        "tool_call_accuracy",
        "tool_call_f1",
        "trajectory_match",
        "steps",
        "repeated_calls",
        "step_latency_ms",
        "step_tokens",
    ];
    for steps in [Vec::new(), vec![Step::new(StepKind::Llm, "demo")]] {
        let response = late(steps);
        for name in names {
            // The step budgets need a threshold.
            let threshold = name
                .starts_with("step")
                .then_some((Op::AtMost, 5.0))
                .or((name == "repeated_calls").then_some((Op::AtMost, 1.0)));
            let spec = MetricSpec::new(name, &[], threshold).unwrap();
            let result = match &spec.kind {
                MetricKind::Tools(kind) => Some(crate::metrics::tools::score(
                    &spec, kind, &sample, &response, None,
                )),
                _ => score(&spec, &sample, &response, None),
            }
            .unwrap_or_else(|| panic!("{name} is a tool or trajectory metric"));
            let e = result.expect_err(name);
            assert!(matches!(e, MetricError::Unscorable(_)), "{name}: {e}");
            let text = e.to_string();
            assert!(text.contains("trace was incomplete"), "{name}: {text}");
            assert!(!text.contains("not called"), "{name}: {text}");
        }
    }
    // Calls the answer reported itself are known whatever the spans did.
    let mut response = late(vec![Step::new(StepKind::Llm, "demo")]);
    response.tool_calls = vec![call("lookup", json!({"query": "RAG"}))];
    for name in ["tool_called", "tool_correctness", "tool_call_f1"] {
        let spec = MetricSpec::new(name, &[], None).unwrap();
        let MetricKind::Tools(kind) = &spec.kind else {
            panic!("{name} is a tool metric")
        };
        let got = crate::metrics::tools::score(&spec, kind, &sample, &response, None);
        assert_eq!(got.unwrap(), 1.0, "{name}");
    }
}
