//! `evals lint`: seed 002's dataset quality checks, each finding with its
//! code and file:line.
//!
//! | code | severity | when |
//! |---|---|---|
//! | `FILE_FORMAT_ERROR` | error | the file does not load (each problem, with its line) |
//! | `DATASET_TOO_SMALL` | error | fewer than 10 samples (seed 002's minimum) |
//! | `MISSING_GROUND_TRUTH` | error | a sample has no expected answer |
//! | `DUPLICATE_QUERIES` | error | two inputs equal after normalising case, spaces and punctuation |
//! | `DUPLICATE_QUERIES` | warning | near-duplicates: word-set Jaccard similarity ≥ 0.8 (inputs of 4+ words) |
//! | `MISSING_CONTEXT` | warning | a sample has neither `context` nor `reference_contexts` |
//! | `SHORT_ANSWER` | warning | an expected answer of fewer than 10 words |
//! | `MISSING_SOURCE_DOCS` | warning | in a file that uses `source_docs`, a sample without them |
//! | `IMBALANCED_DISTRIBUTION` | warning | one value holds more than 60% of a metadata field (`difficulty`, `query_type`, `category`) set on at least 10 samples |

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use eval_core::{Dataset, Sample};
use serde::Serialize;

use crate::Failure;

/// Flags of `evals lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Dataset files (.jsonl, .csv, .json).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Minimum samples (seed 002).
pub const MIN_SAMPLES: usize = 10;
/// Answers shorter than this many words are flagged.
pub const SHORT_ANSWER_WORDS: usize = 10;
/// Word-set Jaccard similarity at or above which two inputs are near-duplicates
/// (the one measure, shared with `evals generate`: [`eval_core::similarity`]).
pub use eval_core::similarity::NEAR_DUPLICATE;
use eval_core::similarity::{MIN_WORDS, jaccard, normalise, word_set};
/// Share of one value above which a distribution is imbalanced.
pub const IMBALANCE_SHARE: f64 = 0.6;
/// Largest file the pairwise near-duplicate check runs on (it is O(n²)).
pub const NEAR_DUPLICATE_LIMIT: usize = 5_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub file: String,
    pub line: usize,
    /// The column, when the problem has one (as the compile error gives it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let mut all = Vec::new();
    for file in &args.files {
        all.extend(lint_file(file));
    }
    let errors = all.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = all.len() - errors;
    if args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "errors": errors,
            "warnings": warnings,
            "findings": all,
        }))
        .map_err(|e| Failure::config(e.to_string()))?;
        outln!("{text}");
    } else {
        for f in &all {
            let sev = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let column = f.column.map(|c| format!(":{c}")).unwrap_or_default();
            outln!(
                "{}:{}{column}: {sev}[{}]: {}",
                f.file,
                f.line,
                f.code,
                f.message
            );
        }
        outln!("{errors} error(s), {warnings} warning(s)");
    }
    Ok(u8::from(errors > 0))
}

pub fn lint_file(path: &Path) -> Vec<Finding> {
    let shown = path.to_string_lossy().into_owned();
    match Dataset::load_limited(path, &shown, eval_runtime::Config::max_dataset_bytes()) {
        Err(e) => {
            // Each problem where the compile error puts it: line and column.
            let problems: Vec<(usize, Option<usize>, String)> = match &e {
                eval_core::DatasetError::Invalid { problems, .. } => problems
                    .iter()
                    .map(|p| (p.line, p.column, p.detail()))
                    .collect(),
                other => vec![(1, None, other.to_string())],
            };
            problems
                .into_iter()
                .map(|(line, column, message)| Finding {
                    file: shown.clone(),
                    line,
                    column,
                    severity: Severity::Error,
                    code: "FILE_FORMAT_ERROR",
                    message,
                })
                .collect()
        }
        Ok(d) => {
            let mut findings = lint_samples(&shown, &d.samples);
            findings.sort_by_key(|f| f.line);
            findings
        }
    }
}

pub fn lint_samples(file: &str, samples: &[Sample]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |line: usize, severity, code, message: String| {
        out.push(Finding {
            file: file.to_string(),
            line,
            column: None,
            severity,
            code,
            message,
        })
    };
    if samples.len() < MIN_SAMPLES {
        push(
            1,
            Severity::Error,
            "DATASET_TOO_SMALL",
            format!(
                "{} samples; a dataset needs at least {MIN_SAMPLES} to say anything",
                samples.len()
            ),
        );
    }
    let uses_sources = samples.iter().any(|s| s.extra.contains_key("source_docs"));
    for s in samples {
        let line = s.source.line;
        // A retrieval query's ground truth is its relevant documents.
        if s.relevant_ids().is_some() {
            continue;
        }
        match s.expected_text() {
            None => push(
                line,
                Severity::Error,
                "MISSING_GROUND_TRUTH",
                format!("sample `{}` has no expected answer", s.id),
            ),
            Some(answer) => {
                let words = answer.split_whitespace().count();
                if words < SHORT_ANSWER_WORDS {
                    push(
                        line,
                        Severity::Warning,
                        "SHORT_ANSWER",
                        format!(
                            "sample `{}`: expected answer has {words} word(s) (fewer than {SHORT_ANSWER_WORDS})",
                            s.id
                        ),
                    );
                }
            }
        }
        if s.context.is_empty() && s.reference_contexts.is_empty() {
            push(
                line,
                Severity::Warning,
                "MISSING_CONTEXT",
                format!("sample `{}` has no context passages", s.id),
            );
        }
        if uses_sources
            && s.extra
                .get("source_docs")
                .is_none_or(|v| v.as_array().is_none_or(Vec::is_empty))
        {
            push(
                line,
                Severity::Warning,
                "MISSING_SOURCE_DOCS",
                format!("sample `{}` has no source_docs", s.id),
            );
        }
    }
    // Exact duplicates after normalisation.
    let norm: Vec<String> = samples
        .iter()
        .map(|s| normalise(&s.input.display_text()))
        .collect();
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, n) in norm.iter().enumerate() {
        if n.is_empty() {
            continue; // only punctuation or symbols: nothing to compare
        }
        match first.get(n.as_str()) {
            Some(&j) => push(
                samples[i].source.line,
                Severity::Error,
                "DUPLICATE_QUERIES",
                format!("same input as line {}", samples[j].source.line),
            ),
            None => {
                first.insert(n, i);
            }
        }
    }
    // Near-duplicates.
    if samples.len() > NEAR_DUPLICATE_LIMIT {
        push(
            1,
            Severity::Warning,
            "DUPLICATE_QUERIES",
            format!(
                "near-duplicate check not run: {} samples is over {NEAR_DUPLICATE_LIMIT} (exact duplicates were checked)",
                samples.len()
            ),
        );
    } else {
        let sets: Vec<Vec<&str>> = norm.iter().map(|n| word_set(n)).collect();
        for i in 0..samples.len() {
            if sets[i].len() < MIN_WORDS {
                continue;
            }
            for j in 0..i {
                if norm[i] == norm[j] || sets[j].len() < MIN_WORDS {
                    continue;
                }
                let sim = jaccard(&sets[i], &sets[j]);
                if sim >= NEAR_DUPLICATE {
                    push(
                        samples[i].source.line,
                        Severity::Warning,
                        "DUPLICATE_QUERIES",
                        format!(
                            "near-duplicate of line {} (word overlap {:.2})",
                            samples[j].source.line, sim
                        ),
                    );
                    break;
                }
            }
        }
    }
    for field in ["difficulty", "query_type", "category"] {
        let counts = distribution(samples, field);
        let total: usize = counts.values().sum();
        if total < MIN_SAMPLES {
            continue;
        }
        if let Some((value, n)) = counts.iter().max_by_key(|(_, n)| **n)
            && *n as f64 / total as f64 > IMBALANCE_SHARE
        {
            push(
                1,
                Severity::Warning,
                "IMBALANCED_DISTRIBUTION",
                format!(
                    "{field}: `{value}` holds {n} of {total} ({:.0}%), over {:.0}%",
                    *n as f64 * 100.0 / total as f64,
                    IMBALANCE_SHARE * 100.0
                ),
            );
        }
    }
    out
}

/// Counts of a metadata field's values (`category` also from the first tag
/// when metadata has none).
pub fn distribution(samples: &[Sample], field: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for s in samples {
        let value = s
            .metadata
            .get(field)
            .or_else(|| s.extra.get(field))
            .and_then(|v| match v {
                serde_json::Value::String(t) => Some(t.clone()),
                serde_json::Value::Null => None,
                other => Some(other.to_string()),
            })
            .or_else(|| {
                (field == "category")
                    .then(|| s.tags.first().cloned())
                    .flatten()
            });
        if let Some(v) = value {
            *counts.entry(v).or_insert(0) += 1;
        }
    }
    counts
}
