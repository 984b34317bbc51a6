//! the structured-output metrics end to end, through the
//! harness: `tests/data/json/refunds.jsonl` scored with the schema file
//! `tests/data/json/schemas/refund.json` (read relative to the harness's
//! base directory, as the attribute reads it relative to the crate).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common;

use eval_runtime::__cli::results::junit_xml;
use eval_runtime::results::Results;
use eval_runtime::{Harness, Outcome, Response, Sample};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/json")
}

fn harness(name: &str) -> Harness {
    let out = std::env::temp_dir().join(format!("eval-json-{}-{name}", std::process::id()));
    Harness::new()
        .base_dir(data())
        .results_file(out.join("results.json"))
}

fn args() -> libtest_mimic::Arguments {
    common::harness_args(&["harness", "--test-threads", "2", "-q"])
}

/// The agent's reply per sample: a valid refund, one the schema refuses,
/// and a valid one wrapped in prose.
async fn refund_agent(sample: &Sample) -> Response {
    Response::new(match sample.id.as_str() {
        "full" => r#"{"ticket": "T-1042", "refund": {"amount": 42, "currency": "EUR"}}"#,
        "negative" => r#"{"ticket": "T-1043", "refund": {"amount": -5, "currency": "GBP"}}"#,
        _ => {
            "Sure! Here it is:\n```json\n{\"ticket\": \"T-1044\", \"refund\": {\"amount\": 15, \"currency\": \"USD\"}}\n```"
        }
    })
}

const METRICS: &str = r#"is_json, json_schema(schema_file = "schemas/refund.json", extract = true), json_pointer(pointer = "/refund/amount", extract = true)"#;

fn metric<'a>(
    results: &'a Results,
    id: &str,
    name: &str,
) -> &'a eval_runtime::__cli::results::MetricRecord {
    let sample = results
        .samples
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("sample {id}"));
    sample
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{id}: {name}"))
}

#[test]
fn json_metrics_score_good_and_bad_answers_and_say_why_in_the_report() {
    let out: Outcome = harness("scored")
        .dataset("refunds.jsonl", METRICS)
        .agent_fn(refund_agent)
        .evaluate(args());
    assert_eq!(out.code, 101, "two samples fail: {:?}", out.error);
    let results = Results::read(out.results_path.as_ref().unwrap()).unwrap();
    let scores = |id: &str| -> Vec<Option<f64>> {
        ["is_json", "json_schema", "json_pointer"]
            .iter()
            .map(|m| metric(&results, id, m).score)
            .collect()
    };
    assert_eq!(scores("full"), [Some(1.0), Some(1.0), Some(1.0)]);
    assert_eq!(scores("negative"), [Some(1.0), Some(0.0), Some(0.0)]);
    // In prose: not JSON as a whole, but its fenced block is.
    assert_eq!(scores("prose"), [Some(0.0), Some(1.0), Some(1.0)]);

    let schema = metric(&results, "negative", "json_schema");
    let why = schema.reason.as_deref().unwrap();
    assert!(
        why.starts_with("the JSON does not match the schema: "),
        "{why}"
    );
    assert!(
        why.contains("at /refund/amount: -5 is less than the minimum of 0"),
        "{why}"
    );
    assert!(why.contains("at /refund/currency: "), "{why}");
    assert_eq!(
        metric(&results, "negative", "json_pointer")
            .reason
            .as_deref(),
        Some("`/refund/amount` is -5, not the expected answer 10")
    );
    assert!(
        metric(&results, "prose", "is_json")
            .reason
            .as_deref()
            .is_some_and(|w| w.starts_with("the answer is not JSON")),
    );
    assert_eq!(
        metric(&results, "full", "json_schema").reason,
        None,
        "a pass has no reason"
    );
    // The report a CI shows: the failure's reason, with the pointer.
    let junit = junit_xml(&results);
    assert!(
        junit.contains("at /refund/amount: -5 is less than the minimum of 0"),
        "{junit}"
    );
}

#[test]
fn a_bad_schema_is_a_setup_error_before_any_agent_call() {
    for (metrics, says) in [
        (
            r#"json_schema(schema_file = "bad-schema.json")"#,
            "schema_file `bad-schema.json` (",
        ),
        (
            r#"json_schema(schema_file = "schemas/nope.json")"#,
            "schema_file `schemas/nope.json` of metric `json_schema`: cannot read ",
        ),
        (
            r#"json_schema(schema = "{\"type\": 12}")"#,
            "`schema` of metric `json_schema` does not compile: ",
        ),
        (
            r#"json_schema(schema = "{\"type\": ")"#,
            "`schema` of `json_schema` is not a JSON Schema (it does not parse: ",
        ),
    ] {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let out = harness("bad")
            .dataset("refunds.jsonl", metrics)
            .agent_fn(move |s: &Sample| {
                counted.fetch_add(1, Ordering::SeqCst);
                let s = s.clone();
                async move { refund_agent(&s).await }
            })
            .evaluate(args());
        assert_eq!(out.code, 2, "{metrics}");
        let error = out.error.map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains(says), "{metrics}: {error}");
        assert_eq!(calls.load(Ordering::SeqCst), 0, "{metrics}: no agent call");
    }
    // The file's error says what is wrong with it.
    let out = harness("bad-file")
        .dataset(
            "refunds.jsonl",
            r#"json_schema(schema_file = "bad-schema.json")"#,
        )
        .agent_fn(refund_agent)
        .evaluate(args());
    let error = out.error.unwrap().to_string();
    assert!(
        error.contains("bad-schema.json) of metric `json_schema` does not compile: "),
        "{error}"
    );
}
