//! Steps 6 and 7's material: the pairs deduplicated and fixed, checked
//! as samples, written as golden records, and the reports printed.

use std::path::{Path, PathBuf};

use eval_datasets::similarity::{Query, same_question};
use eval_datasets::{Dataset, Sample};
use serde_json::{Map, Value};

use super::{EDGE_CASES, Pair};
use crate::Failure;

/// Drops queries that repeat an earlier one (`evals lint`'s measure); how many.
pub(super) fn dedupe(pairs: &mut Vec<Pair>) -> usize {
    let before = pairs.len();
    let mut seen: Vec<Query> = Vec::new();
    pairs.retain(|p| {
        let q = Query::new(&p.query);
        if seen.iter().any(|s| same_question(s, &q).is_some()) {
            false
        } else {
            seen.push(q);
            true
        }
    });
    before - pairs.len()
}

/// The safe fixes: whitespace trimmed, repeated queries dropped.
pub(super) fn fix(pairs: &mut Vec<Pair>) -> usize {
    for p in pairs.iter_mut() {
        p.query = p.query.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(t) = &mut p.ground_truth {
            *t = t.trim().to_string();
        }
    }
    dedupe(pairs)
}

/// The golden record of pair `i` (`eval-001`...).
pub(super) fn golden(i: usize, p: &Pair) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("id".into(), Value::from(format!("eval-{:03}", i + 1)));
    o.insert("query".into(), Value::from(p.query.clone()));
    o.insert(
        "ground_truth".into(),
        p.ground_truth.clone().map_or(Value::Null, Value::from),
    );
    o.insert("contexts".into(), Value::from(p.contexts.clone()));
    o.insert("source_docs".into(), Value::from(p.source_docs.clone()));
    o.insert("metadata".into(), Value::Object(p.metadata.clone()));
    o
}

/// The pairs as samples, for the lint.
pub(super) fn to_samples(pairs: &[Pair]) -> Result<Vec<Sample>, Failure> {
    let records: Vec<Map<String, Value>> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| golden(i, p))
        .collect();
    let text = eval_datasets::write::objects_to_jsonl(records);
    Dataset::from_bytes("new.jsonl", text.as_bytes())
        .map(|d| d.samples)
        .or_else(|e| match e {
            eval_datasets::DatasetError::Empty { .. } => Ok(Vec::new()),
            other => Err(Failure::config(other.to_string())),
        })
}

/// Step 6's report: coverage, then quality.
pub(super) fn report_validation(
    pairs: &[Pair],
    findings: &[eval_datasets::lint::Finding],
    edge_cases: &[&str],
) {
    let count = |key: &str| {
        let mut m: std::collections::BTreeMap<String, usize> = Default::default();
        for p in pairs {
            if let Some(v) = p.metadata.get(key).and_then(Value::as_str) {
                *m.entry(v.to_string()).or_default() += 1;
            }
        }
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let with_edge = pairs
        .iter()
        .filter(|p| p.metadata.get("edge_case").is_some_and(|e| !e.is_null()))
        .count();
    let codes = |code: &str| findings.iter().filter(|f| f.code == code).count();
    errln!("\nELICIT: Quality Validation\n\n1. Coverage analysis:");
    errln!("   - Query type distribution: {}", count("query_type"));
    errln!("   - Difficulty distribution: {}", count("difficulty"));
    errln!(
        "   - Edge case coverage: {with_edge} of {} pairs (categories asked for: {})",
        pairs.len(),
        if edge_cases.is_empty() {
            "none".to_string()
        } else {
            edge_cases.join(", ")
        }
    );
    errln!("\n2. Quality metrics:");
    errln!(
        "   - Duplicate queries detected: {}",
        codes("DUPLICATE_QUERIES")
    );
    errln!("   - Answers without context: {}", codes("MISSING_CONTEXT"));
    errln!(
        "   - Very short answers (<10 words): {}",
        codes("SHORT_ANSWER")
    );
    errln!(
        "   - Missing source references: {}",
        codes("MISSING_SOURCE_DOCS")
    );
    errln!("\n3. Issues found: {}", findings.len());
    for f in findings.iter().take(20) {
        errln!(
            "   {} {}: {}",
            f.code,
            if f.line > 0 {
                format!("pair {}", f.line)
            } else {
                "dataset".into()
            },
            f.message
        );
    }
}

pub(super) fn write(path: &Path, text: &str) -> Result<(), Failure> {
    eval_datasets::files::write_atomically(path, text.as_bytes())
        .map_err(|e| Failure::config(format!("cannot write {}: {e}", path.display())))
}

/// Seed 002's closing report.
pub(super) fn summary(
    name: &str,
    domain: &str,
    pairs: &[Pair],
    langsmith: &str,
    files: &[&PathBuf],
) {
    let n = pairs.len().max(1);
    let share = |key: &str, value: &str| {
        let k = pairs
            .iter()
            .filter(|p| p.metadata.get(key).and_then(Value::as_str) == Some(value))
            .count();
        format!("{k} ({}%)", k * 100 / n)
    };
    outln!("Evaluation Dataset Created\n");
    outln!("Dataset:     {name}");
    outln!("Total Pairs: {}", pairs.len());
    outln!("Domain:      {domain}");
    outln!("LangSmith:   {langsmith}\n");
    outln!("Distribution:");
    for (label, t) in [
        ("Factual", "factual"),
        ("Analytical", "analytical"),
        ("Procedural", "procedural"),
        ("Multi-hop", "multi_hop"),
    ] {
        outln!("  {:<13} {}", format!("{label}:"), share("query_type", t));
    }
    outln!("\nDifficulty:");
    for (label, d) in [("Easy", "easy"), ("Medium", "medium"), ("Hard", "hard")] {
        outln!("  {:<7} {}", format!("{label}:"), share("difficulty", d));
    }
    outln!("\nEdge Cases:");
    for e in EDGE_CASES {
        let k = pairs
            .iter()
            .filter(|p| p.metadata.get("edge_case").and_then(Value::as_str) == Some(e))
            .count();
        outln!("  {:<15} {k}", format!("{e}:"));
    }
    outln!("\nFiles Created:");
    for f in files {
        outln!("  {}", f.display());
    }
}
