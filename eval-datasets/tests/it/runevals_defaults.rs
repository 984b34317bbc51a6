//! issue38:runevals — a runevals file that names no evaluators gets the
//! seed's default dimensions (`runevals::default_evaluators`, the one rule
//! of every front end); a conversation is named by its `name`.

use eval_datasets::runevals;

// issue38:runevals
#[test]
fn a_runevals_conversation_is_named_by_its_name() {
    let doc = r#"{"schemaVersion": "1.2.0", "items": [
        {"name": "Expense policy flow", "turns": [{"prompt": "I spent $250 on dinner"}, {"prompt": "What should I do?"}]},
        {"turns": [{"prompt": "Hi"}, {"prompt": "Bye"}]},
        {"name": "single", "prompt": "What is Teams?", "expected_response": "A platform"}
    ]}"#;
    let ds = eval_datasets::Dataset::from_bytes("c.json", doc.as_bytes()).unwrap();
    assert_eq!(
        eval_datasets::naming::test_names(&ds.samples),
        ["expense_policy_flow", "hi_bye", "what_is_teams"]
    );
}
// issue38:runevals
fn read(doc: &str) -> Vec<eval_datasets::Sample> {
    eval_datasets::Dataset::from_bytes("d.json", doc.as_bytes())
        .unwrap()
        .samples
}

#[test]
fn a_file_naming_no_evaluators_gets_the_seeds_default_dimensions() {
    // Seed 003's starter shape: 1.0.0, no evaluators anywhere.
    let samples = read(
        r#"{"schemaVersion": "1.0.0", "items": [
            {"prompt": "What is Microsoft Graph?", "expected_response": "The API gateway."},
            {"prompt": "What is Teams?", "expected_response": "A platform", "context": "Teams docs"}
        ]}"#,
    );
    assert!(
        samples
            .iter()
            .all(|s| s.runevals_defaults && s.evaluators.is_empty())
    );
    let names = |s: &eval_datasets::Sample| -> Vec<String> {
        runevals::specs(&runevals::default_evaluators(s))
            .unwrap()
            .into_iter()
            .map(|m| (m.name, m.threshold))
            .map(|(n, t)| format!("{n}>={t}"))
            .collect()
    };
    assert_eq!(
        names(&samples[0]),
        ["relevance>=0.5", "coherence>=0.5", "similarity>=0.5"]
    );
    assert_eq!(
        names(&samples[1]),
        [
            "relevance>=0.5",
            "coherence>=0.5",
            "similarity>=0.5",
            "groundedness>=0.5"
        ]
    );
    // Legacy shapes too.
    let legacy = read(r#"[{"prompt": "Hi", "expected_response": "Hello"}]"#);
    assert!(legacy[0].runevals_defaults);
}

#[test]
fn a_file_naming_any_evaluator_keeps_its_own() {
    for doc in [
        r#"{"schemaVersion": "1.2.0", "default_evaluators": {"PartialMatch": {}}, "items": [{"prompt": "a", "expected_response": "b"}]}"#,
        r#"{"schemaVersion": "1.2.0", "items": [{"prompt": "a", "expected_response": "b"}, {"prompt": "c", "expected_response": "d", "evaluators": {"ExactMatch": {}}}]}"#,
        r#"{"schemaVersion": "1.2.0", "items": [{"name": "n", "turns": [{"prompt": "a", "expected_response": "b", "evaluators": {"ExactMatch": {}}}]}]}"#,
    ] {
        for s in read(doc) {
            assert!(!s.runevals_defaults, "{doc}");
            assert!(runevals::default_evaluators(&s).is_empty(), "{doc}");
        }
    }
    // Other formats never get them.
    let jsonl =
        eval_datasets::Dataset::from_bytes("d.jsonl", br#"{"input": "a", "expected": "b"}"#)
            .unwrap();
    assert!(!jsonl.samples[0].runevals_defaults);
}

#[test]
fn the_note_and_the_judge_error_name_the_metrics_and_the_way_out() {
    let note = runevals::default_note("kb.json", &["relevance", "coherence"], 2);
    assert!(note.starts_with("kb.json: names no evaluators, so its 2 item(s) are scored on runevals' default dimensions: relevance, coherence"), "{note}");
    let e = runevals::default_needs_judge("kb.json");
    for part in [
        "EVAL_JUDGE_URL",
        "--metrics partial_match",
        "default_evaluators",
    ] {
        assert!(e.contains(part), "{e}");
    }
}
