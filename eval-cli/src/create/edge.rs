//! Step 5 of `evals create`: the examples of each edge-case category chosen
//! — typed on a terminal (at least two a category, each a query and the
//! behaviour expected, seed 002's text the default), or read from
//! `--edge-examples FILE` (`.jsonl`/`.csv`: `category`, `query`,
//! `expected`) — each a pair whose `metadata.edge_case` is the category and
//! whose `ground_truth` is the behaviour expected.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::ask::Ask;
use super::draft::Draft;
use super::{EDGE_CASES, Pair};
use crate::Failure;

/// Examples asked of each category at least.
pub(super) const MIN_EXAMPLES: usize = 2;

/// The behaviour expected of each category, by default (the first is
/// seed 002's own).
pub(super) fn expected_of(category: &str) -> &'static str {
    match category {
        "unanswerable" => "The system should indicate it cannot find a relevant answer",
        "ambiguous" => {
            "The system should ask for clarification or answer each valid interpretation"
        }
        "multi_hop" => {
            "The system should combine the information of the documents involved into one answer"
        }
        "temporal" => {
            "The system should answer for the time or version asked about and say which it used"
        }
        "contradictory" => {
            "The system should point out that the sources disagree and give each position"
        }
        _ => "The system should say the question is outside its domain rather than answer it",
    }
}

/// A category's name as the menu shows it (`Out-of-scope`).
fn label(category: &str) -> String {
    let mut s = category.replace('_', "-");
    if let Some(f) = s.get_mut(0..1) {
        f.make_ascii_uppercase();
    }
    s
}

/// One example: its category, query and expected behaviour.
pub(super) fn example(category: &str, query: &str, expected: &str, annotator: &str) -> Pair {
    let mut metadata = Map::new();
    metadata.insert("edge_case".into(), Value::from(category));
    if category == "multi_hop" {
        metadata.insert("query_type".into(), Value::from("multi_hop"));
    }
    metadata.insert("annotator".into(), Value::from(annotator));
    metadata.insert(
        "confidence".into(),
        Value::from(if annotator == "human" {
            "high"
        } else {
            "medium"
        }),
    );
    Pair {
        query: query.to_string(),
        ground_truth: Some(expected.to_string()),
        contexts: Vec::new(),
        source_docs: Vec::new(),
        metadata,
    }
}

/// The examples of `--edge-examples FILE`; categories it names that are
/// not in `chosen` are added to it.
pub(super) fn from_file(file: &Path, chosen: &mut Vec<&'static str>) -> Result<Vec<Pair>, Failure> {
    let bad =
        |why: String| Failure::config(format!("FILE_FORMAT_ERROR: {}: {why}", file.display()));
    let text = eval_datasets::files::read_text(file, eval_runtime::Config::max_dataset_bytes())
        .map_err(|e| bad(e.to_string()))?;
    let mut rows: Vec<(usize, Map<String, Value>)> = Vec::new();
    if file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    {
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let headers = r.headers().map_err(|e| bad(e.to_string()))?.clone();
        for (i, row) in r.records().enumerate() {
            let row = row.map_err(|e| bad(e.to_string()))?;
            let o = headers
                .iter()
                .zip(row.iter())
                .map(|(h, v)| (h.trim().to_string(), Value::from(v)))
                .collect();
            rows.push((i + 2, o));
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => rows.push((i + 1, o)),
                _ => return Err(bad(format!("line {}: not a JSON object", i + 1))),
            }
        }
    }
    let mut out = Vec::new();
    for (line, o) in rows {
        let field = |names: &[&str]| {
            names.iter().find_map(|k| {
                o.get(*k)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            })
        };
        let category = field(&["category", "edge_case"])
            .ok_or_else(|| bad(format!("line {line}: no `category`")))?;
        let lower = category.to_ascii_lowercase().replace(['-', ' '], "_");
        let Some(category) = EDGE_CASES.iter().copied().find(|e| *e == lower) else {
            return Err(bad(format!(
                "line {line}: category `{}`: expected {}",
                eval_datasets::terminal::escaped(&category),
                EDGE_CASES.join(", ")
            )));
        };
        let query = field(&["query", "question", "input"])
            .ok_or_else(|| bad(format!("line {line}: no `query`")))?;
        let expected = field(&[
            "expected",
            "expected_behavior",
            "expected_behaviour",
            "ground_truth",
        ])
        .unwrap_or_else(|| expected_of(category).to_string());
        if !chosen.contains(&category) {
            chosen.push(category);
        }
        out.push(example(category, &query, &expected, "file"));
    }
    Ok(out)
}

/// The examples already made of `category`.
fn count(examples: &[Pair], category: &str) -> usize {
    examples
        .iter()
        .filter(|p| p.metadata.get("edge_case").and_then(Value::as_str) == Some(category))
        .count()
}

/// Asks the examples of each category of `chosen` that has fewer than
/// [`MIN_EXAMPLES`] in `examples`: a query then its expected behaviour
/// (empty: the default shown), an empty query to finish the category once
/// it has two — or, with a corpus, as the first query, to have them
/// generated. Each example is kept in the draft as it is typed.
pub(super) fn ask_examples(
    ask: &Ask,
    chosen: &[&'static str],
    corpus: bool,
    examples: &mut Vec<Pair>,
    draft: &mut Draft,
) -> Result<(), Failure> {
    if chosen.is_empty() || !ask.terminal {
        return Ok(());
    }
    errln!(
        "\nFor each category, provide at least 2-3 examples (an empty query ends the category):"
    );
    for category in chosen {
        let mut n = count(examples, category);
        if n >= MIN_EXAMPLES {
            continue;
        }
        errln!("\nCategory: {}", label(category));
        if corpus && n == 0 {
            errln!("  (an empty first query: generated from the corpus instead)");
        }
        loop {
            let query = ask.choose(&format!("  Query {}: ", n + 1), |q| {
                if q.is_empty() && n < MIN_EXAMPLES && !(corpus && n == 0) {
                    Err(format!("at least {MIN_EXAMPLES} examples per category"))
                } else {
                    Ok(q.to_string())
                }
            })?;
            if query.is_empty() {
                break;
            }
            let default = expected_of(category);
            let expected = ask.choose(&format!("  Expected behavior [\"{default}\"]: "), |a| {
                Ok(a.to_string())
            })?;
            let expected = if expected.is_empty() {
                default.to_string()
            } else {
                expected
            };
            examples.push(example(category, &query, &expected, "human"));
            n += 1;
            draft.set("edge_examples", to_value(examples));
            draft.save("step 5")?;
        }
    }
    Ok(())
}

/// Examples as the draft keeps them.
pub(super) fn to_value(examples: &[Pair]) -> Value {
    Value::from(
        examples
            .iter()
            .map(|p| {
                json!({"category": p.metadata.get("edge_case"), "query": p.query,
                       "expected": p.ground_truth, "annotator": p.metadata.get("annotator")})
            })
            .collect::<Vec<_>>(),
    )
}

/// Examples as the draft kept them.
pub(super) fn from_value(v: Option<&Value>) -> Vec<Pair> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let category = EDGE_CASES
                .iter()
                .copied()
                .find(|c| e.get("category").and_then(Value::as_str) == Some(*c))?;
            Some(example(
                category,
                e.get("query")?.as_str()?,
                e.get("expected")?.as_str()?,
                e.get("annotator")
                    .and_then(Value::as_str)
                    .unwrap_or("human"),
            ))
        })
        .collect()
}

/// Categories chosen that have no examples and nothing to generate them
/// from: an error, said before anything is asked or made.
pub(super) fn check_covered(
    chosen: &[&str],
    examples: &[Pair],
    corpus: bool,
) -> Result<(), Failure> {
    if corpus {
        return Ok(());
    }
    let short: Vec<&str> = chosen
        .iter()
        .copied()
        .filter(|c| count(examples, c) < MIN_EXAMPLES)
        .collect();
    if short.is_empty() {
        return Ok(());
    }
    Err(Failure::config(format!(
        "edge cases {}: at least {MIN_EXAMPLES} examples each are needed, and there is no --corpus to generate them from: give --edge-examples FILE (category, query, expected) or a --corpus, or leave them out of --edge-cases",
        short.join(", ")
    )))
}
