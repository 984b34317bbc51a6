//! runevals documents as seed 003 describes them: which fields need which
//! `schemaVersion`, evaluator names, and per-turn evaluators.

use eval_core::Dataset;

fn err(path: &str, data: &str) -> String {
    match Dataset::from_bytes(path, data.as_bytes()) {
        Ok(ds) => panic!("should fail, loaded {} samples", ds.samples.len()),
        Err(e) => e.to_string(),
    }
}

fn ok(path: &str, data: &str) -> Dataset {
    Dataset::from_bytes(path, data.as_bytes()).unwrap_or_else(|e| panic!("should load:\n{e}"))
}

/// Seed 003: `default_evaluators`, `turns`, `evaluators` and
/// `evaluators_mode` need schemaVersion 1.2.0 or later.
#[test]
fn fields_of_1_2_0_are_refused_in_older_documents() {
    let msg = err(
        "evals/v.json",
        r#"{
  "schemaVersion": "1.1.0",
  "default_evaluators": {"Relevance": {}},
  "items": [
    {"prompt": "p", "expected_response": "x"},
    {"name": "flow",
     "turns": [{"prompt": "a", "expected_response": "b"}]},
    {"prompt": "q", "expected_response": "y",
     "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"}
  ]
}"#,
    );
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(
        lines,
        [
            "evals/v.json:3: $.default_evaluators: needs schemaVersion 1.2.0 or later; this document is 1.1.0",
            "evals/v.json:7: $.items[1].turns: needs schemaVersion 1.2.0 or later; this document is 1.1.0",
            "evals/v.json:9: $.items[2].evaluators: needs schemaVersion 1.2.0 or later; this document is 1.1.0",
            "evals/v.json:9: $.items[2].evaluators_mode: needs schemaVersion 1.2.0 or later; this document is 1.1.0",
        ],
        "{msg}"
    );
    // 1.0.x too; 1.2.0 and later accept them.
    let doc = |v: &str| {
        format!(
            r#"{{"schemaVersion": "{v}", "default_evaluators": {{"Coherence": {{}}}}, "items": [{{"name": "n", "turns": [{{"prompt": "a"}}]}}]}}"#
        )
    };
    let msg = err("old.json", &doc("1.0.7"));
    assert!(
        msg.contains("old.json:1: $.default_evaluators: needs schemaVersion 1.2.0 or later; this document is 1.0.7"),
        "{msg}"
    );
    assert!(
        msg.contains("$.items[0].turns: needs schemaVersion 1.2.0"),
        "{msg}"
    );
    for v in ["1.2.0", "1.10.0", "1.6.3"] {
        assert_eq!(ok("new.json", &doc(v)).samples.len(), 1, "{v}");
    }
}

/// A name a letter or two from a built-in evaluator is a typo, not a custom
/// evaluator; names far from every built-in stay custom evaluators.
#[test]
fn a_misspelt_built_in_evaluator_is_an_error_with_a_suggestion() {
    let msg = err(
        "evals/t.json",
        r#"{"schemaVersion": "1.2.0",
 "default_evaluators": {"Coherense": {}},
 "items": [{"prompt": "p", "expected_response": "x",
   "evaluators": {"Relevanse": {}, "exactmatch": {}}}]}"#,
    );
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(
        lines,
        [
            "evals/t.json:2: $.default_evaluators.Coherense: unknown evaluator (did you mean `Coherence`?); a custom evaluator's name must not be this close to a built-in one",
            "evals/t.json:4: $.items[0].evaluators.Relevanse: unknown evaluator (did you mean `Relevance`?); a custom evaluator's name must not be this close to a built-in one",
            "evals/t.json:4: $.items[0].evaluators.exactmatch: unknown evaluator (did you mean `ExactMatch`?); a custom evaluator's name must not be this close to a built-in one",
        ],
        "{msg}"
    );
    let d = ok(
        "c.json",
        r#"{"schemaVersion": "1.2.0", "items": [{"prompt": "p", "evaluators": {"professional_tone": {"threshold": 4}}}]}"#,
    );
    assert!(d.samples[0].evaluators.contains_key("professional_tone"));
}
