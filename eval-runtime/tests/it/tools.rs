//! Tool metrics end to end: datasets with expected tool calls (our JSONL,
//! letta-evals' tool name as `ground_truth`), an in-process agent returning
//! tool calls, scored by the engine through the `Runner`; the failure text
//! shows the expected calls beside the agent's.

use std::path::PathBuf;
use std::sync::Mutex;

use eval_runtime::plan::PlanBuilder;
use eval_runtime::results::{SampleRecord, Verdict};
use eval_runtime::{FnAgent, Response, Runner, Sample, SampleReport, ToolCall};
use serde_json::{Value, json};

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-tools-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new(name).with_arguments(args)
}

/// The agent of the scratch datasets: its calls are scripted per input.
async fn scripted(sample: &Sample) -> Response {
    let calls = match sample.input.last() {
        "multiply" => vec![call("calculator", json!({"expression": "15 * 23"}))],
        "spaces" => vec![call(
            "calculator",
            json!({"expression": "15*23", "precision": 2}),
        )],
        "both" => vec![
            call("calculator", json!({"expression": "2 + 2"})),
            call("lookup", json!({"query": "refunds"})),
        ],
        "extra" => vec![
            call("lookup", json!({"query": "refunds"})),
            call("lookup", json!({"query": "shipping"})),
            call("calculator", json!({"expression": "1 + 1"})),
        ],
        "Calculate 15 * 23" => vec![call("calculator", json!({"expression": "15 * 23"}))],
        "Search for information about pandas" => vec![ToolCall::new("Search")],
        "now compute" => vec![
            call("lookup", json!({"query": "pandas"})),
            call("calculator", json!({"expression": "2 * 3"})).in_turn(1),
        ],
        _ => Vec::new(),
    };
    Response::new("done").with_tool_calls(calls)
}

const TOOLS: &str = r#"{"id": "multiply", "input": "multiply", "expected_tools": [{"name": "calculator", "arguments": {"expression": "15 * 23"}}]}
{"id": "spaces", "input": "spaces", "expected_tools": [{"name": "calculator", "input_parameters": {"expression": "15 * 23", "precision": 2}}]}
{"id": "both", "input": "both", "expected_tools": [{"name": "lookup", "args": {"query": "refunds"}}, {"name": "calculator", "args": {"expression": "2 + 2"}}]}
{"id": "extra", "input": "extra", "reference_tool_calls": [{"name": "lookup", "args": {"query": "refunds"}}]}
{"id": "none", "input": "none", "expected_tools": []}
{"id": "missing", "input": "missing"}
"#;

const LETTA: &str = r#"{"input": "Calculate 15 * 23", "ground_truth": "calculator"}
{"input": "Search for information about pandas", "ground_truth": "search"}
{"input": ["look it up", "now compute"], "ground_truth": ["lookup", "calculator"]}
"#;

fn run(dir: &PathBuf, plan: PlanBuilder) -> (Vec<SampleRecord>, Vec<SampleReport>) {
    let reports = Mutex::new(Vec::new());
    let runner = Runner::new();
    let prepared = runner.prepare(plan.base_dir(dir)).unwrap();
    let outcome = prepared
        .evaluate(&FnAgent(scripted), |r| {
            reports.lock().unwrap().push(r.clone())
        })
        .unwrap();
    (outcome.results.samples, reports.into_inner().unwrap())
}

fn scores(record: &SampleRecord) -> Vec<(&str, Option<f64>, bool)> {
    record
        .metrics
        .iter()
        .map(|m| (m.name.as_str(), m.score, m.passed))
        .collect()
}

#[test]
fn tool_metrics_score_the_agents_calls() {
    let dir = scratch("score", &[("tools.jsonl", TOOLS), ("letta.jsonl", LETTA)]);
    let plan = PlanBuilder::new()
        .dataset(
            "tools.jsonl",
            "tool_correctness(parameters = true) >= 0.8, tool_call_accuracy, tool_call_f1",
        )
        .dataset("letta.jsonl", "tool_called");
    let (records, reports) = run(&dir, plan);
    let by_id = |id: &str| {
        records
            .iter()
            .find(|r| r.id == id && r.source.contains("tools.jsonl"))
            .unwrap_or_else(|| panic!("no sample {id}"))
    };
    let (tc, tca, f1) = ("tool_correctness", "tool_call_accuracy", "tool_call_f1");
    // The expected call, argument for argument: 1 everywhere.
    let r = by_id("multiply");
    assert_eq!(
        scores(r),
        [
            (tc, Some(1.0), true),
            (tca, Some(1.0), true),
            (f1, Some(1.0), true)
        ]
    );
    assert_eq!(r.verdict, Verdict::Pass);
    assert_eq!(
        r.tool_calls,
        [call("calculator", json!({"expression": "15 * 23"}))]
    );
    // Keys {expression, precision}, only precision equal: deepeval 1/2;
    // ragas accuracy 1/2 of the reference's arguments ("2" == "2"); F1 0
    // (the call is not the expected one): all below their thresholds.
    let r = by_id("spaces");
    assert_eq!(
        scores(r),
        [
            (tc, Some(0.5), false),
            (tca, Some(0.5), false),
            (f1, Some(0.0), false)
        ]
    );
    assert_eq!(r.verdict, Verdict::Fail);
    // Both calls, reversed: deepeval ignores order (2/2); ragas' strict
    // order does not line up (0); F1 is a set (1).
    assert_eq!(
        scores(by_id("both")),
        [
            (tc, Some(1.0), true),
            (tca, Some(0.0), false),
            (f1, Some(1.0), true)
        ]
    );
    // Two extra calls: deepeval 1/1; ragas 0.4.3 accuracy needs the same
    // sequence of calls (one `lookup`, not three calls): 0; F1: TP 1, FP 2:
    // P = 1/3, R = 1, F1 = (2/3) / (4/3) = 0.5, at the threshold: passes.
    let r = by_id("extra");
    assert_eq!(
        scores(r),
        [
            (tc, Some(1.0), true),
            (tca, Some(0.0), false),
            (f1, Some(0.5), true)
        ]
    );
    assert_eq!(r.verdict, Verdict::Fail);
    // No call expected, none made: deepeval 1, ragas accuracy 1, F1 0
    // (ragas: precision and recall are 0 with nothing on either side).
    assert_eq!(
        scores(by_id("none")),
        [
            (tc, Some(1.0), true),
            (tca, Some(1.0), true),
            (f1, Some(0.0), false)
        ]
    );
    // No expected tools at all: an error naming the field, before the agent.
    let r = by_id("missing");
    assert_eq!(r.verdict, Verdict::Error);
    let e = r.error.as_deref().unwrap();
    assert!(
        e.contains("sample has no `expected_tools` field (or expectedTools, ragas reference_tool_calls), which metric `tool_correctness` needs"),
        "{e}"
    );

    // letta-evals: the tool named by ground_truth, in any turn.
    let mut letta: Vec<&SampleRecord> = records
        .iter()
        .filter(|r| r.source.contains("letta.jsonl"))
        .collect();
    letta.sort_by_key(|r| r.id.clone());
    let called: Vec<(Option<f64>, Verdict)> = letta
        .iter()
        .map(|r| (r.metrics[0].score, r.verdict))
        .collect();
    // calculator called: 1; `Search` is not `search`: 0; per turn, lookup
    // in turn 1 and calculator in turn 2: (1 + 1) / 2 = 1.
    assert_eq!(
        called,
        [
            (Some(1.0), Verdict::Pass),
            (Some(0.0), Verdict::Fail),
            (Some(1.0), Verdict::Pass)
        ]
    );

    // The failure text shows the expected calls beside the agent's.
    let text = |id: &str| {
        reports
            .iter()
            .find(|r| r.id == id && r.source.file.contains("tools.jsonl"))
            .unwrap()
            .render()
    };
    let spaces = text("spaces");
    assert!(
        spaces.contains("  tool calls: calculator(expression=\"15*23\", precision=2)\n"),
        "{spaces}"
    );
    assert!(
        spaces.contains("  expected tool calls: calculator(expression=\"15 * 23\", precision=2)\n"),
        "{spaces}"
    );
    let none = text("none");
    assert!(none.contains("  tool calls: (none)\n"), "{none}");
    assert!(none.contains("  expected tool calls: (none)\n"), "{none}");
    assert!(
        !text("multiply").contains("expected tool calls"),
        "a pass shows no expectation"
    );
    let pandas = reports
        .iter()
        .find(|r| r.input.contains("pandas") && r.source.file.contains("letta"))
        .unwrap()
        .render();
    assert!(pandas.contains("  tool calls: Search()\n"), "{pandas}");
    assert!(
        pandas.contains("  expected tool calls: search\n"),
        "{pandas}"
    );
}

/// The demo's tool convention, as the example datasets expect it: the
/// calculator gets the arithmetic as written, the lookup the question.
async fn demo_like(sample: &Sample) -> Response {
    let q = sample.input.last();
    let arithmetic = regex::Regex::new(r"\d+ [-+*/] \d+").unwrap();
    let call = match arithmetic.find(q) {
        Some(m) => call("calculator", json!({"expression": m.as_str()})),
        None => call("lookup", json!({"query": q})),
    };
    Response::new("done").with_tool_calls([call])
}

#[test]
fn the_example_tool_datasets_fit_the_demo_tools() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/evals");
    let plan = PlanBuilder::new()
        .base_dir(&examples)
        .dataset(
            "tools.jsonl",
            "tool_correctness(parameters = true, exact = true) >= 1, tool_call_accuracy, tool_call_f1 >= 1",
        )
        .dataset("tools_letta.jsonl", "tool_called");
    let runner = Runner::new();
    let outcome = runner
        .prepare(plan)
        .unwrap()
        .evaluate(&FnAgent(demo_like), |_| {})
        .unwrap();
    let samples = &outcome.results.samples;
    assert_eq!(samples.len(), 10);
    for s in samples {
        assert_eq!(s.verdict, Verdict::Pass, "{}: {:?}", s.test_name, s.metrics);
    }
    assert!(samples.iter().any(|s| s.tool_calls[0].name == "lookup"));
    assert!(samples.iter().any(|s| s.tool_calls[0].name == "calculator"));
}
