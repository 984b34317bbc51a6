//! Seed 002's dataset quality checks (`evals lint`, the quality findings of
//! `evals stats`, the rules listed in `evals guide`), each finding with its
//! code and line, and the near-duplicate measure they use.
//!
//! | code | severity | when |
//! |---|---|---|
//! | `FILE_FORMAT_ERROR` | error | the file does not load (each problem, with its line) |
//! | `DATASET_TOO_SMALL` | warning (error for a golden dataset being created) | fewer than 10 samples (seed 002's minimum for a golden dataset: [`lint_golden`]; a dataset a team keeps may be smaller) |
//! | `MISSING_GROUND_TRUTH` | error | a sample has no expected answer |
//! | `DUPLICATE_QUERIES` | error | two inputs equal after normalising case, spaces and punctuation |
//! | `DUPLICATE_QUERIES` | warning | near-duplicates (inputs of 4+ distinct words): word-set Jaccard similarity ≥ 0.8, or the words in order one word apart: a function word inserted or deleted, two function words swapped (`do`/`can`, `a`/`the`, `my`/`your`; not `did`/`will` or `was`/`is`), or a word and its plural swapped (`password`/`passwords`); see [`crate::similarity`] |
//! | `MISSING_CONTEXT` | warning | a sample has neither `context` nor `reference_contexts` |
//! | `SHORT_ANSWER` | warning | an expected answer of fewer than 10 words |
//! | `MISSING_SOURCE_DOCS` | warning | in a file that uses `source_docs`, a sample without them |
//! | `IMBALANCED_DISTRIBUTION` | warning | one value holds more than 60% of a metadata field (`difficulty`, `query_type`, `category`) set on at least 10 samples |

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::similarity::{Query, same_question};
use crate::{DatasetError, Sample};

/// Minimum samples (seed 002).
pub const MIN_SAMPLES: usize = 10;
/// The near-duplicate measure is [`crate::similarity`]'s, shared with `evals generate`.
pub use crate::similarity::{
    MIN_WORDS as NEAR_DUPLICATE_MIN_WORDS, NEAR_DUPLICATE, jaccard, normalise, word_set,
};
/// Answers shorter than this many words are flagged.
pub const SHORT_ANSWER_WORDS: usize = 10;
/// Share of one value above which a distribution is imbalanced.
pub const IMBALANCE_SHARE: f64 = 0.6;
/// Largest file the pairwise near-duplicate check runs on (it is O(n²)).
pub const NEAR_DUPLICATE_LIMIT: usize = 5_000;

/// Metadata fields whose balance `IMBALANCED_DISTRIBUTION` checks.
pub const BALANCED_FIELDS: [&str; 3] = ["difficulty", "query_type", "category"];

/// One rule, as `evals guide` lists it: its code, severity and when it
/// fires, the thresholds written from the constants above.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The rule's code (`SHORT_ANSWER`, `DATASET_TOO_SMALL`, ...).
    pub code: &'static str,
    /// `error`, `warning`, or `error / warning` (a rule with both).
    pub severity: &'static str,
    /// When it fires, its thresholds written out.
    pub when: String,
}

/// Every rule, in the order of the module's table.
pub fn rules() -> Vec<Rule> {
    let percent = |x: f64| format!("{:.0}%", x * 100.0);
    let rule = |code, severity, when: String| Rule {
        code,
        severity,
        when,
    };
    vec![
        rule(
            "FILE_FORMAT_ERROR",
            "error",
            "the file does not load (each problem, with its line)".into(),
        ),
        rule(
            "DATASET_TOO_SMALL",
            "warning",
            format!(
                "fewer than {MIN_SAMPLES} samples (an error while `evals create` builds a golden dataset)"
            ),
        ),
        rule(
            "MISSING_GROUND_TRUTH",
            "error",
            "a sample has no expected answer (a retrieval query's relevant ids count as one)"
                .into(),
        ),
        rule(
            "DUPLICATE_QUERIES",
            "error / warning",
            format!(
                "two inputs are equal after normalising case, spaces and punctuation (error); \
                 near-duplicates, inputs of {NEAR_DUPLICATE_MIN_WORDS}+ distinct words, files of \
                 up to {NEAR_DUPLICATE_LIMIT} samples (warning): their word sets have a Jaccard \
                 similarity of {NEAR_DUPLICATE} or more, or their words in order are one word \
                 apart where the word inserted or deleted is a function word, or the two words \
                 swapped are function words (`do`/`can`, `a`/`the`, `my`/`your`; not `did`/`will` \
                 or `was`/`is`) or a word and its plural (`password`/`passwords`); function words \
                 are auxiliaries, articles, `I`/`me`/`my`/`we`/`us`/`our`/`you`/`your` and \
                 fillers like `please`, `quickly`, `just`"
            ),
        ),
        rule(
            "MISSING_CONTEXT",
            "warning",
            "a sample has neither `context` nor `reference_contexts`".into(),
        ),
        rule(
            "SHORT_ANSWER",
            "warning",
            format!("an expected answer of fewer than {SHORT_ANSWER_WORDS} words"),
        ),
        rule(
            "MISSING_SOURCE_DOCS",
            "warning",
            "in a file that uses `source_docs`, a sample without them".into(),
        ),
        rule(
            "IMBALANCED_DISTRIBUTION",
            "warning",
            format!(
                "one value holds more than {} of a metadata field ({}) set on at least \
                 {MIN_SAMPLES} samples",
                percent(IMBALANCE_SHARE),
                BALANCED_FIELDS.map(|f| format!("`{f}`")).join(", ")
            ),
        ),
    ]
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// An error: the dataset is wrong.
    Error,
    /// A warning: worth a look, not wrong.
    Warning,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The dataset file.
    pub file: String,
    /// The line (1-based); 0 when the finding is about the file as a whole
    /// (it is empty, it cannot be read), which has no line to point at.
    pub line: usize,
    /// The column, when the problem has one (as the compile error gives it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// How bad it is.
    pub severity: Severity,
    /// The rule's code (`SHORT_ANSWER`, `DATASET_TOO_SMALL`, ...).
    pub code: &'static str,
    /// What was found, on one line.
    pub message: String,
}

/// A file that did not load, as findings: each problem where the compile
/// error puts it (line and column), `FILE_FORMAT_ERROR`.
pub fn format_findings(file: &str, error: &DatasetError) -> Vec<Finding> {
    let problems: Vec<(usize, Option<usize>, String)> = match error {
        DatasetError::Invalid { problems, .. } => problems
            .iter()
            .map(|p| (p.line, p.column, p.detail()))
            .collect(),
        // About the whole file: no line, and its path is said once, by `file`.
        other => {
            let message = other.to_string();
            let message = message
                .strip_prefix(&format!("{file}: "))
                .map_or(message.clone(), str::to_string);
            vec![(0, None, message)]
        }
    };
    problems
        .into_iter()
        .map(|(line, column, message)| Finding {
            file: file.to_string(),
            line,
            column,
            severity: Severity::Error,
            code: "FILE_FORMAT_ERROR",
            message,
        })
        .collect()
}

/// [`lint_samples`] of a golden dataset being created (`evals create`):
/// seed 002's minimum size is an error there, where a dataset a team keeps
/// only gets a warning.
pub fn lint_golden(file: &str, samples: &[Sample]) -> Vec<Finding> {
    let mut findings = lint_samples(file, samples);
    for f in &mut findings {
        if f.code == "DATASET_TOO_SMALL" {
            f.severity = Severity::Error;
        }
    }
    findings
}

/// The findings of `samples` (a loaded file named `file`), in rule order.
pub fn lint_samples(file: &str, samples: &[Sample]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |line: usize, severity: Severity, code: &'static str, message: String| {
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
            Severity::Warning,
            "DATASET_TOO_SMALL",
            format!(
                "{} samples; a dataset needs at least {MIN_SAMPLES} to say anything",
                samples.len()
            ),
        );
    }
    let uses_sources = samples.iter().any(|s| s.extra.contains_key("source_docs"));
    for s in samples {
        sample_findings(s, uses_sources, &mut push);
    }
    duplicate_findings(samples, &mut push);
    balance_findings(samples, &mut push);
    out
}

/// Pushes a finding: (line, severity, code, message).
type Push<'a> = dyn FnMut(usize, Severity, &'static str, String) + 'a;

/// One sample's findings: its ground truth, context and source documents.
fn sample_findings(s: &Sample, uses_sources: bool, push: &mut Push<'_>) {
    let line = s.source.line;
    // A retrieval query's ground truth is its relevant documents.
    if s.relevant_ids().is_some() {
        return;
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

/// Inputs asked twice: exactly (after normalisation), or nearly.
fn duplicate_findings(samples: &[Sample], push: &mut Push<'_>) {
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
        // `same_question`'s near-duplicates (exact ones were reported above).
        let queries: Vec<Query> = samples
            .iter()
            .map(|s| Query::new(&s.input.display_text()))
            .collect();
        for i in 0..samples.len() {
            if queries[i].words().len() < NEAR_DUPLICATE_MIN_WORDS {
                continue;
            }
            for j in 0..i {
                if let Some(why) = same_question(&queries[j], &queries[i])
                    && why.is_near()
                {
                    push(
                        samples[i].source.line,
                        Severity::Warning,
                        "DUPLICATE_QUERIES",
                        format!("near-duplicate of line {} ({why})", samples[j].source.line),
                    );
                    break;
                }
            }
        }
    }
}

/// A field whose one value holds most samples.
fn balance_findings(samples: &[Sample], push: &mut Push<'_>) {
    for field in BALANCED_FIELDS {
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
}

/// The near-duplicate measure of two texts: the Jaccard similarity of their
/// word sets after [`normalise`] (1.0: the same words; 0.0: none shared, or
/// both empty). Two inputs of at least [`NEAR_DUPLICATE_MIN_WORDS`] words
/// each are near-duplicates at [`NEAR_DUPLICATE`] or above.
pub fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (normalise(a), normalise(b));
    let (a, b) = (word_set(&a), word_set(&b));
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    jaccard(&a, &b)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 002's minimum is for a golden dataset being created: an error
    /// there, a warning on a dataset a team keeps.
    #[test]
    fn a_small_dataset_is_a_warning_and_a_small_golden_one_an_error() {
        let samples: Vec<Sample> = (0..3)
            .map(|i| Sample::new(format!("question {i}")).with_expected("an answer"))
            .collect();
        let severity = |findings: Vec<Finding>| {
            findings
                .into_iter()
                .find(|f| f.code == "DATASET_TOO_SMALL")
                .map(|f| f.severity)
        };
        assert_eq!(
            severity(lint_samples("d.jsonl", &samples)),
            Some(Severity::Warning)
        );
        assert_eq!(
            severity(lint_golden("d.jsonl", &samples)),
            Some(Severity::Error)
        );
    }

    /// The measure is `crate::similarity`'s (tested there); lint's
    /// `similarity` of two texts is its word-set Jaccard.
    #[test]
    fn similarity_of_two_texts_matches_hand_values() {
        // {what, is, rag, today} vs {what, is, rag, now}: 3 / 5.
        assert!((similarity("What is RAG today?", "what is rag, now") - 0.6).abs() < 1e-12);
        assert_eq!(similarity("?!", ""), 0.0);
    }

    #[test]
    fn rules_state_the_thresholds_of_the_constants() {
        let rules = rules();
        let when = |code: &str| {
            rules
                .iter()
                .find(|r| r.code == code)
                .map(|r| r.when.clone())
                .unwrap()
        };
        assert_eq!(
            when("DATASET_TOO_SMALL"),
            "fewer than 10 samples (an error while `evals create` builds a golden dataset)"
        );
        assert!(when("SHORT_ANSWER").contains("fewer than 10 words"));
        assert!(when("DUPLICATE_QUERIES").contains("0.8 or more"));
        assert!(when("IMBALANCED_DISTRIBUTION").contains("more than 60%"));
        assert_eq!(rules.len(), 8);
    }
}
