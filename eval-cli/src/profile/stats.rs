//! The statistical summary of a dataset: coverage, distributions, quality.

use std::collections::{BTreeMap, BTreeSet};

use eval_datasets::lint::{self, Severity};
use eval_datasets::{Dataset, Expected, Format, Sample};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A metadata key (other than the ones seed 002 names) is a vocabulary when
/// it has at most this many distinct values, each used twice on average.
pub const SMALL_VOCABULARY: usize = 12;

/// Seed 002's statistical summary of one dataset (`<dataset>-stats.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetStats {
    /// The file's name (not its path: the same file gives the same summary
    /// wherever it is).
    pub dataset: String,
    /// `jsonl`, `csv` or `json`.
    pub format: String,
    /// Samples in the file.
    pub samples: usize,
    /// Samples of more than one user turn.
    pub multi_turn: usize,
    /// What the samples cover.
    pub coverage: Coverage,
    /// How lengths and counts are spread.
    pub distributions: Distributions,
    /// The lint findings, counted.
    pub quality: Quality,
}

/// What the samples cover: fields, metadata vocabularies, tags, sources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Samples having each field: the sample model's names (`expected` is
    /// also read from `ground_truth`, ...), `relevant_ids` for a retrieval
    /// query, and every other key of the file (`source_docs`, ...) as written.
    pub fields: BTreeMap<String, usize>,
    /// Samples per metadata `query_type`.
    pub query_types: BTreeMap<String, usize>,
    /// Samples per metadata `difficulty`.
    pub difficulty: BTreeMap<String, usize>,
    /// Samples per metadata `edge_case` (null or absent: not an edge case).
    pub edge_cases: BTreeMap<String, usize>,
    /// Samples per `category` (metadata, else the first tag), as
    /// `IMBALANCED_DISTRIBUTION` counts them.
    pub categories: BTreeMap<String, usize>,
    /// Samples per tag.
    pub tags: BTreeMap<String, usize>,
    /// Other metadata keys of small vocabulary ([`SMALL_VOCABULARY`]):
    /// key → value → samples.
    pub metadata: BTreeMap<String, BTreeMap<String, usize>>,
    /// Share of the samples that are an edge case (0 to 1, two decimals).
    pub edge_case_share: f64,
    /// Samples naming their source documents.
    pub source_docs: SourceDocs,
}

/// Samples naming their source documents (`source_docs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceDocs {
    /// Samples with at least one.
    pub samples: usize,
    /// Distinct documents named.
    pub documents: usize,
}

/// Lengths and counts per sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distributions {
    /// Characters of the input (all user turns, joined by newlines).
    pub input_chars: Option<Lengths>,
    /// Words of the input (all user turns).
    pub input_words: Option<Lengths>,
    /// Characters of the expected answer (all of them, of a per-turn one), of samples that have one.
    pub expected_chars: Option<Lengths>,
    /// Words of the expected answer, of samples that have one.
    pub expected_words: Option<Lengths>,
    /// Samples per number of user turns.
    pub turns: BTreeMap<usize, usize>,
    /// Samples per number of `context` passages.
    pub contexts: BTreeMap<usize, usize>,
    /// Samples per number of `reference_contexts` passages.
    pub reference_contexts: BTreeMap<usize, usize>,
}

/// Smallest, median, mean and largest of a list of lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lengths {
    /// The smallest.
    pub min: usize,
    /// The middle value; of an even count, the mean of the two middle ones.
    pub median: f64,
    /// Two decimals.
    pub mean: f64,
    /// The largest.
    pub max: usize,
}

impl Lengths {
    /// `None` for no values.
    pub fn of(mut values: Vec<usize>) -> Option<Lengths> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2] as f64
        } else {
            (values[n / 2 - 1] + values[n / 2]) as f64 / 2.0
        };
        let sum: usize = values.iter().sum();
        Some(Lengths {
            min: values[0],
            median,
            mean: round2(sum as f64 / n as f64),
            max: values[n - 1],
        })
    }
}

/// The lint findings of the dataset, counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quality {
    /// Findings of severity error.
    pub errors: usize,
    /// Findings of severity warning.
    pub warnings: usize,
    /// Findings per rule code (`SHORT_ANSWER`, ...); rules that found
    /// nothing are left out.
    pub findings: BTreeMap<String, usize>,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The metadata fields seed 002 names, each with its own place in [`Coverage`].
pub(super) const SEED_FIELDS: [&str; 4] = ["query_type", "difficulty", "edge_case", "category"];

/// The fields a sample has, by the names [`Coverage::fields`] uses.
pub(super) fn fields_of(s: &Sample) -> Vec<String> {
    let mut out: Vec<String> = [
        ("id", s.explicit_id),
        ("input", true),
        ("expected", s.expected.is_some()),
        ("accepted_answers", s.accepted_answers.len() > 1),
        ("context", !s.context.is_empty()),
        ("reference_contexts", !s.reference_contexts.is_empty()),
        ("tags", !s.tags.is_empty()),
        ("metadata", !s.metadata.is_empty()),
        ("agent_args", !s.agent_args.is_empty()),
        ("rubric_vars", !s.rubric_vars.is_empty()),
        ("evaluators", !s.evaluators.is_empty()),
        ("turn_evaluators", !s.turn_evaluators.is_empty()),
        ("expected_tools", s.expected_tools.is_some()),
        ("tools", !s.tools.is_empty()),
        ("relevant_ids", s.retrieval.is_some()),
    ]
    .into_iter()
    .filter(|(_, has)| *has)
    .map(|(name, _)| name.to_string())
    .collect();
    out.extend(s.extra.keys().cloned());
    out
}

/// A metadata value as a vocabulary word (`None` for null, objects, lists).
pub(super) fn word(v: &Value) -> Option<String> {
    match v {
        Value::String(t) => Some(t.clone()),
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    }
}

impl DatasetStats {
    /// The summary of `dataset`, named `name` (its file name).
    pub fn of(name: &str, dataset: &Dataset) -> DatasetStats {
        let s = &dataset.samples;
        let mut fields = BTreeMap::new();
        let mut tags = BTreeMap::new();
        let mut other: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        let mut unusable = BTreeSet::new();
        let mut documents = BTreeSet::new();
        let mut with_docs = 0;
        for x in s {
            for f in fields_of(x) {
                *fields.entry(f).or_insert(0) += 1;
            }
            for t in &x.tags {
                *tags.entry(t.clone()).or_insert(0) += 1;
            }
            for (k, v) in &x.metadata {
                if SEED_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                match word(v) {
                    Some(w) => *other.entry(k.clone()).or_default().entry(w).or_insert(0) += 1,
                    None if !v.is_null() => {
                        unusable.insert(k.clone());
                    }
                    None => {}
                }
            }
            let docs: Vec<&str> = x
                .extra
                .get("source_docs")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if !docs.is_empty() {
                with_docs += 1;
                documents.extend(docs);
            }
        }
        other.retain(|k, values| {
            let used: usize = values.values().sum();
            !unusable.contains(k) && values.len() <= SMALL_VOCABULARY && used >= 2 * values.len()
        });
        let edge_cases = lint::distribution(s, "edge_case");
        let edge: usize = edge_cases.values().sum();
        let findings = lint::lint_samples(name, s);
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let mut by_code = BTreeMap::new();
        for f in &findings {
            *by_code.entry(f.code.to_string()).or_insert(0) += 1;
        }
        let histogram = |count: &dyn Fn(&Sample) -> usize| {
            let mut h = BTreeMap::new();
            for x in s {
                *h.entry(count(x)).or_insert(0) += 1;
            }
            h
        };
        let expected: Vec<String> = s
            .iter()
            .filter_map(|x| x.expected.as_ref())
            .map(|e| match e {
                Expected::Text(t) => t.clone(),
                Expected::PerTurn(t) => t.join("\n"),
            })
            .collect();
        DatasetStats {
            dataset: name.to_string(),
            format: match dataset.format {
                Format::Jsonl => "jsonl",
                Format::Csv => "csv",
                Format::Json => "json",
                _ => "other",
            }
            .to_string(),
            samples: s.len(),
            multi_turn: s.iter().filter(|x| x.input.turns().len() > 1).count(),
            coverage: Coverage {
                fields,
                query_types: lint::distribution(s, "query_type"),
                difficulty: lint::distribution(s, "difficulty"),
                edge_cases,
                categories: lint::distribution(s, "category"),
                tags,
                metadata: other,
                edge_case_share: if s.is_empty() {
                    0.0
                } else {
                    round2(edge as f64 / s.len() as f64)
                },
                source_docs: SourceDocs {
                    samples: with_docs,
                    documents: documents.len(),
                },
            },
            distributions: Distributions {
                input_chars: Lengths::of(
                    s.iter()
                        .map(|x| x.input.display_text().chars().count())
                        .collect(),
                ),
                input_words: Lengths::of(
                    s.iter().map(|x| words(&x.input.display_text())).collect(),
                ),
                expected_chars: Lengths::of(expected.iter().map(|e| e.chars().count()).collect()),
                expected_words: Lengths::of(expected.iter().map(|e| words(e)).collect()),
                turns: histogram(&|x| x.input.turns().len()),
                contexts: histogram(&|x| x.context.len()),
                reference_contexts: histogram(&|x| x.reference_contexts.len()),
            },
            quality: Quality {
                errors,
                warnings: findings.len() - errors,
                findings: by_code,
            },
        }
    }

    /// The summary as the file holds it: pretty JSON, one final newline.
    pub fn to_json(&self) -> String {
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        // issue37:escape: control, bidi and separator characters of names
        // from the dataset as JSON escapes (the same values).
        let mut text = eval_datasets::terminal::escaped_json(&text).into_owned();
        text.push('\n');
        text
    }
}
