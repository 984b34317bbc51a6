//! runevals documents as seed 003 describes them: which fields need which
//! `schemaVersion`, evaluator names, and per-turn evaluators.

use eval_datasets::Dataset;

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

/// Seed 003's complete schema example: the first item inherits Relevance and
/// Coherence and adds Citations; in the "Expense policy flow" turn 1
/// inherits the defaults and turn 2 (`replace`) runs only ExactMatch — each
/// turn its own set, not their union.
#[test]
fn each_turn_of_a_conversation_keeps_its_own_evaluators() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/seeds/003-complete-schema-example.json");
    let d = Dataset::load(&path).unwrap();
    let names = |m: &serde_json::Map<String, serde_json::Value>| -> Vec<String> {
        m.keys().cloned().collect()
    };
    let single = &d.samples[0];
    assert_eq!(
        names(&single.evaluators),
        ["Relevance", "Coherence", "Citations"]
    );
    assert!(single.turn_evaluators.is_empty());
    let flow = &d.samples[1];
    assert!(flow.evaluators.is_empty(), "no union over the turns");
    let per_turn: Vec<Vec<String>> = flow.turn_evaluators.iter().map(names).collect();
    assert_eq!(
        per_turn,
        [vec!["Relevance", "Coherence"], vec!["ExactMatch"]],
        "turn 1 the defaults, turn 2 only ExactMatch"
    );
    assert_eq!(
        flow.turn_evaluators[1]["ExactMatch"]["case_sensitive"],
        false
    );
    assert_eq!(
        flow.expected_for_turn(0),
        Some("The per-diem meal allowance is $200.")
    );
    assert_eq!(flow.expected_for_turn(1), Some("Request manager approval."));
    // JSONL carries the per-turn sets as `turn_evaluators`, one per turn.
    let line = serde_json::Value::Object(eval_datasets::write::record(flow)).to_string();
    let back = Dataset::from_bytes("back.jsonl", line.as_bytes()).unwrap();
    assert_eq!(back.samples[0].turn_evaluators, flow.turn_evaluators);
    let bad = r#"{"input": ["a", "b"], "turn_evaluators": [{"Relevance": {}}]}"#;
    let e = Dataset::from_bytes("bad.jsonl", bad.as_bytes()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.jsonl:1: field `turn_evaluators`: has 1 per-turn evaluator sets but `input` has 2 turn(s); give one per turn"
    );
}

/// Seed 003: Citations is a count (>= 0) with a minimum to pass; a minimum
/// of 0 (the count reported, never failing) is allowed, a fraction or a
/// negative count is not.
#[test]
fn a_citations_threshold_is_a_whole_count_from_zero() {
    let doc = |t: &str| {
        format!(
            r#"{{"schemaVersion": "1.2.0", "items": [{{"prompt": "p", "evaluators": {{"Citations": {{"citation_format": "mixed", "threshold": {t}}}}}}}]}}"#
        )
    };
    for t in ["0", "1", "3"] {
        let d = ok("c.json", &doc(t));
        assert_eq!(d.samples.len(), 1, "{t}");
    }
    for t in ["-1", "0.5"] {
        let msg = err("c.json", &doc(t));
        assert!(
            msg.contains("Citations.threshold: expected a whole number of citations, 0 or more"),
            "{t}: {msg}"
        );
    }
}

/// Seed 003: a turn without `expected_response` is scored by the
/// evaluators it has, and the other turns keep their own answers (one turn
/// without one used to discard them all).
#[test]
fn a_turn_without_an_expected_answer_leaves_the_others_theirs() {
    let doc = r#"{"schemaVersion": "1.2.0", "items": [{"turns": [
  {"prompt": "What is the per-diem?", "expected_response": "$200", "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"},
  {"prompt": "Cite the policy.", "evaluators": {"Citations": {"threshold": 1}}, "evaluators_mode": "replace"},
  {"prompt": "Who approves it?", "expected_response": "your manager", "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"}
]}]}"#;
    let d = ok("flow.json", doc);
    let s = &d.samples[0];
    assert_eq!(s.expected_for_turn(0), Some("$200"));
    assert_eq!(s.expected_for_turn(1), None, "the Citations turn has none");
    assert_eq!(s.expected_for_turn(2), Some("your manager"));
    assert_eq!(s.expected_text(), Some("your manager"), "the last turn's");
    // Written as JSONL and as a runevals document, each turn keeps its own.
    let line = serde_json::Value::Object(eval_datasets::write::record(s)).to_string();
    let back = Dataset::from_bytes("back.jsonl", line.as_bytes()).unwrap();
    assert_eq!(back.samples[0].turn_expected, s.turn_expected);
    assert_eq!(back.samples[0].expected_for_turn(0), Some("$200"));
    let bad = r#"{"input": ["a", "b"], "turn_expected": ["x"]}"#;
    let e = Dataset::from_bytes("bad.jsonl", bad.as_bytes()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.jsonl:1: field `turn_expected`: has 1 per-turn answers but `input` has 2 turn(s); give one per turn (null for a turn without one)"
    );
}
