//! The summary and guide of a hand-made dataset, every figure worked out by
//! hand (in the comments).

use std::collections::BTreeMap;
use std::path::Path;

use super::guide::EXAMPLE_CHARS;

use eval_datasets::Dataset;

use super::*;

/// Five samples: golden-schema records (`contexts` are reference passages),
/// a conversation, an edge case, and a bare duplicate with no answer.
const HAND: &str = r#"{"id": "a", "query": "What is the refund window?", "ground_truth": "Within thirty days.", "contexts": ["Refunds within 30 days."], "source_docs": ["refunds.md"], "tags": ["billing"], "metadata": {"query_type": "factual", "difficulty": "easy", "annotator": "human"}}
{"id": "b", "query": "How do I reset my password?", "ground_truth": "Open settings and choose reset password.", "contexts": ["Reset it in settings.", "Passwords expire yearly."], "source_docs": ["account.md", "faq.md"], "tags": ["account", "billing"], "metadata": {"query_type": "procedural", "difficulty": "medium", "annotator": "human"}}
{"id": "c", "input": ["Hi, I am Ana.", "What is my name?"], "expected": "Ana", "tags": ["memory"], "metadata": {"query_type": "factual", "difficulty": "Easy", "annotator": "llm"}}
{"id": "d", "query": "What is the weather on Mars today?", "ground_truth": "The sources do not say.", "source_docs": [], "metadata": {"query_type": "factual", "difficulty": "hard", "edge_case": "out_of_scope", "annotator": "human"}}
{"input": "what is the refund WINDOW?!"}
"#;

fn hand() -> (Dataset, DatasetStats) {
    let d = Dataset::from_bytes("data/hand.jsonl", HAND.as_bytes()).unwrap();
    let st = DatasetStats::of("hand.jsonl", &d);
    (d, st)
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn coverage_of_the_hand_made_dataset() {
    let (_, st) = hand();
    assert_eq!(
        (st.dataset.as_str(), st.format.as_str()),
        ("hand.jsonl", "jsonl")
    );
    assert_eq!(st.samples, 5);
    assert_eq!(st.multi_turn, 1, "only c has two turns");
    let c = &st.coverage;
    // id: a-d; expected: a-d; reference_contexts: a, b (golden `contexts`);
    // tags: a-c; metadata: a-d; source_docs: a, b, d (d's is empty).
    assert_eq!(
        c.fields,
        counts(&[
            ("expected", 4),
            ("id", 4),
            ("input", 5),
            ("metadata", 4),
            ("reference_contexts", 2),
            ("source_docs", 3),
            ("tags", 3),
        ])
    );
    assert_eq!(c.query_types, counts(&[("factual", 3), ("procedural", 1)]));
    assert_eq!(
        c.difficulty,
        counts(&[("Easy", 1), ("easy", 1), ("hard", 1), ("medium", 1)])
    );
    assert_eq!(c.edge_cases, counts(&[("out_of_scope", 1)]));
    assert_eq!(c.edge_case_share, 0.2, "1 of 5");
    // No metadata category: the first tag.
    assert_eq!(
        c.categories,
        counts(&[("account", 1), ("billing", 1), ("memory", 1)])
    );
    assert_eq!(
        c.tags,
        counts(&[("account", 1), ("billing", 2), ("memory", 1)])
    );
    // annotator: 2 values over 4 samples — a vocabulary.
    assert_eq!(c.metadata.len(), 1);
    assert_eq!(c.metadata["annotator"], counts(&[("human", 3), ("llm", 1)]));
    assert_eq!(
        (c.source_docs.samples, c.source_docs.documents),
        (2, 3),
        "refunds.md, account.md, faq.md"
    );
}

#[test]
fn distributions_of_the_hand_made_dataset() {
    let (_, st) = hand();
    let ds = &st.distributions;
    // Input characters: 26, 27, 30 ("Hi, I am Ana." 13 + newline + 16), 34, 27.
    let l = |min, median, mean, max| {
        Some(Lengths {
            min,
            median,
            mean,
            max,
        })
    };
    assert_eq!(ds.input_chars, l(26, 27.0, 28.8, 34));
    // Input words: 5, 6, 8, 7, 5.
    assert_eq!(ds.input_words, l(5, 6.0, 6.2, 8));
    // Expected answers (a-d): 19, 40, 3, 23 characters; 3, 6, 1, 5 words.
    assert_eq!(ds.expected_chars, l(3, 21.0, 21.25, 40));
    assert_eq!(ds.expected_words, l(1, 4.0, 3.75, 6));
    assert_eq!(ds.turns, BTreeMap::from([(1, 4), (2, 1)]));
    assert_eq!(ds.contexts, BTreeMap::from([(0, 5)]));
    assert_eq!(
        ds.reference_contexts,
        BTreeMap::from([(0, 3), (1, 1), (2, 1)])
    );
    assert_eq!(Lengths::of(vec![]), None);
    assert_eq!(Lengths::of(vec![7]), l(7, 7.0, 7.0, 7));
}

#[test]
fn quality_counts_the_lint_findings_by_rule() {
    let (_, st) = hand();
    let q = &st.quality;
    assert_eq!(
        q.findings,
        counts(&[
            ("DATASET_TOO_SMALL", 1),    // 5 < 10
            ("DUPLICATE_QUERIES", 1),    // the 5th is the 1st, normalised
            ("MISSING_CONTEXT", 3),      // c, d, the 5th
            ("MISSING_GROUND_TRUTH", 1), // the 5th
            ("MISSING_SOURCE_DOCS", 3),  // c, d (empty), the 5th
            ("SHORT_ANSWER", 4),         // 3, 6, 1, 5 words
        ])
    );
    assert_eq!((q.errors, q.warnings), (2, 11));
}

#[test]
fn the_stats_file_reads_back_and_is_the_same_each_time() {
    let (d, st) = hand();
    let text = st.to_json();
    assert!(text.ends_with("}\n"));
    let back: DatasetStats = serde_json::from_str(&text).unwrap();
    assert_eq!(back, st);
    assert_eq!(DatasetStats::of("hand.jsonl", &d).to_json(), text);
    assert_eq!(
        stats_path(Path::new("data/hand.jsonl")),
        Path::new("data/hand-stats.json")
    );
    assert_eq!(
        guide_path(Path::new("data/hand.jsonl")),
        Path::new("data/hand-annotation-guide.md")
    );
    assert_eq!(dataset_name(Path::new("data/hand.jsonl")), "hand.jsonl");
}

#[test]
fn the_guide_lists_fields_vocabularies_rules_and_examples() {
    let (d, st) = hand();
    let g = guide("hand.jsonl", &d, &st);
    assert_eq!(g, guide("hand.jsonl", &d, &st), "deterministic");
    for expected in [
        "# Annotation guide: hand.jsonl\n",
        // Fields, with the file's other names for them.
        "| `expected` | 4 of 5 (80%) | `expected_output`, `ground_truth`,",
        "| `source_docs` | 3 of 5 (60%) | — | the documents the answer comes from",
        "No sample here uses `accepted_answers`, `context`,",
        // Vocabularies, and a value spelt two ways.
        "### metadata `query_type`\n\n| value | samples | share |\n|---|---|---|\n| `factual` | 3 | 60% |\n| `procedural` | 1 | 20% |\n",
        "`Easy`, `easy` look like one value written 2 ways: pick one.",
        "### metadata `edge_case`\n\n| value | samples | share |\n|---|---|---|\n| `out_of_scope` | 1 | 20% |\n",
        "### metadata `annotator`\n\n| value | samples | share |\n|---|---|---|\n| `human` | 3 | 60% |\n| `llm` | 1 | 20% |\n",
        // Rules with their thresholds and what they found here.
        "Now: 2 error(s), 11 warning(s).",
        "| `SHORT_ANSWER` | warning | an expected answer of fewer than 10 words | 4 |",
        "| `DATASET_TOO_SMALL` | warning | fewer than 10 samples (an error while `evals create` builds a golden dataset) | 1 |",
        // One example per query type and difficulty, in file order.
        "(5 of 5 groups shown)",
        "### `query_type` `factual` · `difficulty` `easy`: sample `a`, line 1\n",
        "### `query_type` `procedural` · `difficulty` `medium`: sample `b`, line 2\n",
        "### `query_type` `factual` · `difficulty` `Easy`: sample `c`, line 3\n",
        "### no `query_type` or `difficulty`: sample 5, line 5\n",
        "\"source_docs\": [\n    \"account.md\",\n    \"faq.md\"\n  ]",
        // The checklist.
        "- [ ] **Correct, complete ground truth.**",
        "`evals lint hand.jsonl` reports no error",
    ] {
        assert!(g.contains(expected), "missing {expected:?} in:\n{g}");
    }
    // Checklist items for what the file holds: a conversation, no tools.
    assert!(g.contains("- [ ] **Conversations.**"));
    assert!(!g.contains("**Tool calls.**") && !g.contains("**Relevant documents.**"));
    let order = [
        "## Fields",
        "## Vocabularies",
        "## Checks",
        "## Examples",
        "## Review checklist",
    ];
    let at: Vec<usize> = order.iter().map(|h| g.find(h).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
}

#[test]
fn examples_are_cut_and_fenced_safely() {
    let long = "x".repeat(300);
    let data = format!(
        "{{\"id\": \"long\", \"input\": \"{long}\", \"expected\": \"use ``` fences\", \"context\": [\"1\", \"2\", \"3\", \"4\", \"5\"], \"tags\": [\"a|b\"]}}\n"
    );
    let d = Dataset::from_bytes("cut.jsonl", data.as_bytes()).unwrap();
    let st = DatasetStats::of("cut.jsonl", &d);
    let g = guide("cut.jsonl", &d, &st);
    let kept = format!("\"{}…\"", "x".repeat(EXAMPLE_CHARS));
    assert!(g.contains(&kept), "{g}");
    assert!(!g.contains(&"x".repeat(EXAMPLE_CHARS + 1)));
    assert!(g.contains("\"… 2 more\""), "5 contexts, 3 shown:\n{g}");
    // The answer holds three backticks: the fence has four.
    assert!(g.contains("\n````json\n"), "{g}");
    // A `|` in a value does not break its table row.
    assert!(g.contains("| `a\\|b` | 1 | 100% |"), "{g}");
}
