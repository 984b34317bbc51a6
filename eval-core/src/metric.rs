//! Metric declarations: which metrics exist, what they need, which way is
//! better, and the `name(options) >= threshold` specs users write.
//!
//! Scoring lives in `eval-runtime`; this module is what the macro checks at
//! compile time and the runtime executes, so both agree on the catalogue.

use std::borrow::Cow;
use std::fmt;

use crate::suggest::{Closeness, closest_within, did_you_mean};

/// Comparison of a score against its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>=`: the score must be at least the threshold.
    AtLeast,
    /// `<=`: the score must be at most the threshold.
    AtMost,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::AtLeast => ">=",
            Op::AtMost => "<=",
        })
    }
}

/// A sample field a metric cannot score without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Need {
    /// `expected` (or an alias such as `ground_truth`, `expected_output`).
    Expected,
    /// `context`.
    Context,
    /// `reference_contexts`.
    ReferenceContexts,
    /// Relevant document ids (a retrieval dataset's `relevant.sourceIds`).
    RelevantIds,
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Need::Expected => "expected",
            Need::Context => "context",
            Need::ReferenceContexts => "reference_contexts",
            Need::RelevantIds => "relevant.sourceIds",
        })
    }
}

/// The type of a metric option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` / `false`.
    Bool,
    /// A string literal.
    Str,
}

/// An option value as written in a metric spec.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// `case_sensitive = true`
    Bool(bool),
    /// `pattern = "..."`
    Str(Cow<'static, str>),
    /// A number (no metric takes one yet; rejected with a clear message).
    Num(f64),
}

/// What the catalogue knows about one metric.
#[derive(Debug)]
#[non_exhaustive]
pub struct MetricInfo {
    /// Name used in specs.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Comparison implied when a spec gives no operator.
    pub op: Op,
    /// Threshold used when a spec gives none.
    pub default_threshold: f64,
    /// Fields every sample must have.
    pub needs: &'static [Need],
    /// Options the spec may set.
    pub options: &'static [(&'static str, OptionKind)],
    /// One line for error messages and docs.
    pub summary: &'static str,
}

/// Every metric this version can score.
pub static CATALOG: &[MetricInfo] = &[
    MetricInfo {
        name: "exact_match",
        aliases: &["string_match"],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[("case_sensitive", OptionKind::Bool)],
        summary: "1 if the trimmed output equals the expected answer (case-insensitive unless case_sensitive = true), else 0",
    },
    MetricInfo {
        name: "contains",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[("case_sensitive", OptionKind::Bool)],
        summary: "1 if the output contains the expected answer (case-insensitive unless case_sensitive = true), else 0",
    },
    MetricInfo {
        name: "regex",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[
            ("pattern", OptionKind::Str),
            ("case_sensitive", OptionKind::Bool),
        ],
        summary: "1 if the output matches the regex (the expected answer, or `pattern`), else 0",
    },
    MetricInfo {
        name: "faithfulness",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.8,
        needs: &[],
        options: &[],
        summary: "ragas faithfulness: share of the answer's statements the retrieved context supports (LLM judge; context from the agent's answer, else the sample)",
    },
    MetricInfo {
        name: "answer_similarity",
        aliases: &["semantic_similarity"],
        op: Op::AtLeast,
        default_threshold: 0.8,
        needs: &[Need::Expected],
        options: &[],
        summary: "ragas semantic similarity: cosine of the answer's and the expected answer's embeddings (offline: Levenshtein string similarity)",
    },
    MetricInfo {
        name: "context_recall",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[],
        options: &[],
        summary: "ragas context recall: share of the expected answer's statements attributable to the retrieved context (LLM judge; offline: NonLLMContextRecall over reference_contexts)",
    },
    MetricInfo {
        name: "context_precision",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[],
        options: &[],
        summary: "ragas context precision: average precision of the retrieved chunks judged useful for the expected answer (LLM judge; offline: NonLLMContextPrecisionWithReference over reference_contexts)",
    },
    MetricInfo {
        name: "answer_relevancy",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[],
        options: &[],
        summary: "ragas answer relevancy: mean cosine between the input and questions the judge generates from the answer, 0 if the answer is noncommittal (LLM judge and embeddings)",
    },
    MetricInfo {
        name: "hallucination",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: 0.5,
        needs: &[Need::Context],
        options: &[],
        summary: "deepeval hallucination: share of the sample's contexts the answer contradicts, lower is better (LLM judge)",
    },
    MetricInfo {
        name: "toxicity",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "1 - deepeval toxicity (toxic opinions / opinions in the answer): a safety score, higher is better (LLM judge)",
    },
    MetricInfo {
        name: "bias",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "1 - deepeval bias (biased opinions / opinions in the answer): a safety score, higher is better (LLM judge)",
    },
    MetricInfo {
        name: "rubric",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[
            ("rubric", OptionKind::Str),
            ("rubric_file", OptionKind::Str),
        ],
        summary: "letta-evals rubric grader: the judge scores the answer 0..1 against a rubric with {var} placeholders (the sample's `rubric` field, else `rubric = \"...\"` or `rubric_file = \"...\"`)",
    },
    MetricInfo {
        name: "relevance",
        aliases: &["Relevance"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "runevals Relevance: the judge rates 1-5 how well the answer addresses the input; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "coherence",
        aliases: &["Coherence"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "runevals Coherence: the judge rates 1-5 how clear and logically ordered the answer is; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "groundedness",
        aliases: &["Groundedness"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "runevals Groundedness: the judge rates 1-5 how well the context supports the answer; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "similarity",
        aliases: &["Similarity"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::Expected],
        options: &[],
        summary: "runevals Similarity: the judge rates 1-5 how close the answer is to the expected answer; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "citations",
        aliases: &["Citations"],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[],
        options: &[],
        summary: "runevals Citations: how many distinct citation markers ([1], [^1], 【1】) the answer has; a count, not 0..1",
    },
    MetricInfo {
        name: "hit_at_k",
        aliases: &["hit@k", "hitAtK"],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: 1 if a relevant document is among the top k retrieved (Unrag, trec_eval), else 0",
    },
    MetricInfo {
        name: "recall_at_k",
        aliases: &["recall@k", "recallAtK"],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: relevant documents among the top k / relevant documents",
    },
    MetricInfo {
        name: "precision_at_k",
        aliases: &["precision@k", "precisionAtK"],
        op: Op::AtLeast,
        default_threshold: 0.0,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: relevant documents among the top k / k (trec_eval's P@k)",
    },
    MetricInfo {
        name: "mrr_at_k",
        aliases: &["mrr@k", "mrrAtK"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: 1 / rank of the first relevant document within the top k, else 0",
    },
    MetricInfo {
        name: "ndcg_at_k",
        aliases: &["ndcg@k", "ndcgAtK"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: nDCG at k with binary relevance (gain 1/log2(rank+1), ideal = all relevant first)",
    },
    MetricInfo {
        name: "partial_match",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::Expected],
        options: &[],
        summary: "token-overlap F1 (SQuAD) between output and expected answer, 0..1",
    },
];

/// The catalogue entry for `name` (or one of its aliases).
pub fn lookup(name: &str) -> Option<&'static MetricInfo> {
    CATALOG
        .iter()
        .find(|m| m.name == name || m.aliases.contains(&name))
}

/// All accepted metric names, for "expected one of" messages.
pub fn known_names() -> Vec<&'static str> {
    CATALOG
        .iter()
        .flat_map(|m| std::iter::once(m.name).chain(m.aliases.iter().copied()))
        .collect()
}

/// Levenshtein distance (kept here for callers of `metric::edit_distance`;
/// it lives in [`crate::suggest`]).
pub use crate::suggest::edit_distance;

/// How a metric scores, with its options resolved.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MetricKind {
    /// See [`CATALOG`] `exact_match`.
    ExactMatch { case_sensitive: bool },
    /// See [`CATALOG`] `contains`.
    Contains { case_sensitive: bool },
    /// See [`CATALOG`] `regex`.
    Regex {
        pattern: Option<String>,
        case_sensitive: bool,
    },
    /// See [`CATALOG`] `partial_match`.
    PartialMatch,
    /// See [`CATALOG`] `faithfulness`.
    Faithfulness,
    /// See [`CATALOG`] `answer_similarity`.
    AnswerSimilarity,
    /// See [`CATALOG`] `context_recall`.
    ContextRecall,
    /// See [`CATALOG`] `context_precision`.
    ContextPrecision,
    /// See [`CATALOG`] `answer_relevancy`.
    AnswerRelevancy,
    /// See [`CATALOG`] `hallucination`.
    Hallucination,
    /// See [`CATALOG`] `toxicity`.
    Toxicity,
    /// See [`CATALOG`] `bias`.
    Bias,
    /// See [`CATALOG`] `rubric`.
    Rubric {
        /// Rubric text given in the spec.
        text: Option<String>,
        /// Rubric file given in the spec (relative to the crate).
        file: Option<String>,
    },
    /// A runevals 1–5 rating: `relevance`, `coherence`, `groundedness`, `similarity`.
    Rating(Rating),
    /// See [`CATALOG`] `citations`.
    Citations,
    /// A retrieval rank metric (`recall_at_k`, ...).
    Rank(crate::retrieval::RankMetric),
}

/// The runevals 1–5 ratings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rating {
    /// How well the answer addresses the input.
    Relevance,
    /// How clear and logically ordered the answer is.
    Coherence,
    /// How well the retrieved context supports the answer.
    Groundedness,
    /// How close the answer is to the expected answer.
    Similarity,
}

/// A metric with its threshold, ready to score.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MetricSpec {
    /// The name as written by the user (e.g. `string_match`).
    pub name: String,
    /// What to compute.
    pub kind: MetricKind,
    /// Comparison against the threshold.
    pub op: Op,
    /// The threshold.
    pub threshold: f64,
}

/// A spec that names no known metric or sets it up wrongly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
#[non_exhaustive]
pub struct MetricSpecError(pub String, pub SpecPart);

/// Which part of a metric spec an error is about (for error spans).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecPart {
    /// The metric name.
    Name,
    /// The option at this index.
    Option(usize),
    /// The `>=` / `<=` operator.
    Op,
    /// The threshold value.
    Threshold,
}

impl MetricSpec {
    /// Checks and resolves `name(options) op threshold`. Omitted operator and
    /// threshold take the metric's defaults.
    pub fn new(
        name: &str,
        options: &[(&str, OptionValue)],
        bound: Option<(Op, f64)>,
    ) -> Result<MetricSpec, MetricSpecError> {
        let err = |m: String, part: SpecPart| Err(MetricSpecError(m, part));
        let Some(info) = lookup(name) else {
            let hint = did_you_mean(closest_within(
                name,
                known_names(),
                Closeness::case_sensitive(2),
            ));
            return err(
                format!(
                    "unknown metric `{name}`{hint}; known metrics: {}",
                    known_names().join(", ")
                ),
                SpecPart::Name,
            );
        };
        let (op, threshold) = bound.unwrap_or((info.op, info.default_threshold));
        if op != info.op {
            return err(
                format!(
                    "`{name}` is better when {}, so its threshold is a {}: write `{name} {} {threshold}`",
                    if info.op == Op::AtLeast {
                        "higher"
                    } else {
                        "lower"
                    },
                    if info.op == Op::AtLeast {
                        "minimum"
                    } else {
                        "maximum"
                    },
                    info.op
                ),
                SpecPart::Op,
            );
        }
        let max = if info.name == "citations" {
            f64::INFINITY
        } else {
            1.0
        };
        if !(0.0..=max).contains(&threshold) {
            return err(
                format!(
                    "`{name}` scores between 0 and 1, so a threshold of {threshold} can never be met as intended"
                ),
                SpecPart::Threshold,
            );
        }
        let mut case_sensitive = false;
        let mut pattern = None;
        let mut rubric_text = None;
        let mut rubric_file = None;
        for (i, (key, _)) in options.iter().enumerate() {
            if options[..i].iter().any(|(k, _)| k == key) {
                return err(
                    format!("option `{key}` of `{name}` is given twice"),
                    SpecPart::Option(i),
                );
            }
        }
        for (i, (key, value)) in options.iter().enumerate() {
            let part = SpecPart::Option(i);
            if *key == "threshold" {
                return err(
                    format!(
                        "the threshold goes after the metric: write `{name} {} {}`",
                        info.op, info.default_threshold
                    ),
                    part,
                );
            }
            let Some((_, kind)) = info.options.iter().find(|(k, _)| k == key) else {
                let known: Vec<&str> = info.options.iter().map(|(k, _)| *k).collect();
                return err(
                    if known.is_empty() {
                        format!("`{name}` takes no options, found `{key}`")
                    } else {
                        format!(
                            "`{name}` has no option `{key}`; its options: {}",
                            known.join(", ")
                        )
                    },
                    part,
                );
            };
            match (kind, value) {
                (OptionKind::Bool, OptionValue::Bool(b)) if *key == "case_sensitive" => {
                    case_sensitive = *b
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "pattern" => {
                    if let Err(e) = regex_syntax::Parser::new().parse(s) {
                        let detail = e.to_string();
                        let last = detail.lines().last().unwrap_or("").trim();
                        let last = last.trim_start_matches("error: ");
                        return err(format!("`pattern` is not a valid regex: {last}"), part);
                    }
                    pattern = Some(s.to_string())
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "rubric" => {
                    rubric_text = Some(s.to_string())
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "rubric_file" => {
                    rubric_file = Some(s.to_string())
                }
                (OptionKind::Bool, _) => {
                    return err(
                        format!("option `{key}` of `{name}` expects true or false"),
                        part,
                    );
                }
                (OptionKind::Str, _) => {
                    return err(format!("option `{key}` of `{name}` expects a string"), part);
                }
            }
        }
        let kind = match info.name {
            "exact_match" => MetricKind::ExactMatch { case_sensitive },
            "contains" => MetricKind::Contains { case_sensitive },
            "regex" => MetricKind::Regex {
                pattern,
                case_sensitive,
            },
            "faithfulness" => MetricKind::Faithfulness,
            "answer_similarity" => MetricKind::AnswerSimilarity,
            "context_recall" => MetricKind::ContextRecall,
            "context_precision" => MetricKind::ContextPrecision,
            "answer_relevancy" => MetricKind::AnswerRelevancy,
            "hallucination" => MetricKind::Hallucination,
            "toxicity" => MetricKind::Toxicity,
            "bias" => MetricKind::Bias,
            "rubric" => {
                if rubric_text.is_some() && rubric_file.is_some() {
                    return err(
                        "`rubric` takes `rubric` or `rubric_file`, not both".into(),
                        SpecPart::Option(1),
                    );
                }
                MetricKind::Rubric {
                    text: rubric_text,
                    file: rubric_file,
                }
            }
            "relevance" => MetricKind::Rating(Rating::Relevance),
            "coherence" => MetricKind::Rating(Rating::Coherence),
            "groundedness" => MetricKind::Rating(Rating::Groundedness),
            "similarity" => MetricKind::Rating(Rating::Similarity),
            "citations" => MetricKind::Citations,
            "hit_at_k" => MetricKind::Rank(crate::retrieval::RankMetric::Hit),
            "recall_at_k" => MetricKind::Rank(crate::retrieval::RankMetric::Recall),
            "precision_at_k" => MetricKind::Rank(crate::retrieval::RankMetric::Precision),
            "mrr_at_k" => MetricKind::Rank(crate::retrieval::RankMetric::Mrr),
            "ndcg_at_k" => MetricKind::Rank(crate::retrieval::RankMetric::Ndcg),
            _ => MetricKind::PartialMatch,
        };
        Ok(MetricSpec {
            name: name.to_string(),
            kind,
            op,
            threshold,
        })
    }

    /// The catalogue entry.
    pub fn info(&self) -> &'static MetricInfo {
        lookup(&self.name).expect("specs are only built from catalogue names")
    }

    /// Fields every sample must have for this spec.
    pub fn needs(&self) -> &'static [Need] {
        match &self.kind {
            MetricKind::Regex {
                pattern: Some(_), ..
            } => &[],
            _ => self.info().needs,
        }
    }

    /// The spec taken apart again: name, options, bound; what
    /// [`MetricSpec::new`] takes to build it (the macro writes these out).
    pub fn decl_parts(&self) -> DeclParts {
        let mut options = Vec::new();
        match &self.kind {
            MetricKind::ExactMatch { case_sensitive } | MetricKind::Contains { case_sensitive }
                if *case_sensitive =>
            {
                options.push(("case_sensitive".to_string(), OptionValue::Bool(true)));
            }
            MetricKind::Regex {
                pattern,
                case_sensitive,
            } => {
                if let Some(p) = pattern {
                    options.push(("pattern".into(), OptionValue::Str(Cow::Owned(p.clone()))));
                }
                if *case_sensitive {
                    options.push(("case_sensitive".into(), OptionValue::Bool(true)));
                }
            }
            MetricKind::Rubric { text, file } => {
                if let Some(t) = text {
                    options.push(("rubric".into(), OptionValue::Str(Cow::Owned(t.clone()))));
                }
                if let Some(f) = file {
                    options.push((
                        "rubric_file".into(),
                        OptionValue::Str(Cow::Owned(f.clone())),
                    ));
                }
            }
            _ => {}
        }
        (self.name.clone(), options, Some((self.op, self.threshold)))
    }

    /// Whether `score` is on the right side of the threshold.
    pub fn passes(&self, score: f64) -> bool {
        match self.op {
            Op::AtLeast => score >= self.threshold,
            Op::AtMost => score <= self.threshold,
        }
    }
}

/// A [`MetricSpec`] taken apart: name, options, bound.
pub type DeclParts = (String, Vec<(String, OptionValue)>, Option<(Op, f64)>);

/// A metric spec as the `#[eval_dataset]` macro writes it into a `static`
/// (const-constructible); turned into a [`MetricSpec`] at run time.
#[derive(Debug)]
pub struct MetricDecl {
    /// Metric name.
    pub name: &'static str,
    /// Options in the order written.
    pub options: &'static [(&'static str, OptionValue)],
    /// Operator and threshold, if written.
    pub bound: Option<(Op, f64)>,
}

impl MetricDecl {
    /// Resolves the declaration (the macro already checked it with the same code).
    pub fn to_spec(&self) -> Result<MetricSpec, MetricSpecError> {
        MetricSpec::new(self.name, self.options, self.bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_aliases() {
        let s = MetricSpec::new("string_match", &[], None).unwrap();
        assert_eq!(
            s.kind,
            MetricKind::ExactMatch {
                case_sensitive: false
            }
        );
        assert_eq!((s.op, s.threshold), (Op::AtLeast, 1.0));
        let p = MetricSpec::new("partial_match", &[], None).unwrap();
        assert_eq!(p.threshold, 0.5);
    }

    #[test]
    fn rejects_bad_specs() {
        let e = MetricSpec::new("faithfulnes", &[], None).unwrap_err();
        assert!(e.0.contains("unknown metric `faithfulnes`"), "{e}");
        let e = MetricSpec::new("contains", &[], Some((Op::AtMost, 0.5))).unwrap_err();
        assert!(e.0.contains("write `contains >= 0.5`"), "{e}");
        let e = MetricSpec::new("contains", &[], Some((Op::AtLeast, 2.0))).unwrap_err();
        assert!(e.0.contains("between 0 and 1"), "{e}");
        let e = MetricSpec::new(
            "partial_match",
            &[("case_sensitive", OptionValue::Bool(true))],
            None,
        )
        .unwrap_err();
        assert!(e.0.contains("takes no options"), "{e}");
        let e = MetricSpec::new(
            "contains",
            &[("case_sensitive", OptionValue::Str("x".into()))],
            None,
        )
        .unwrap_err();
        assert!(e.0.contains("expects true or false"), "{e}");
    }
}

/// Parses a comma-separated list of specs as the attribute writes them:
/// `"contains >= 1.0, exact_match(case_sensitive = true), regex(pattern = \"\\\\d+\")"`.
pub fn parse_specs(text: &str) -> Result<Vec<MetricSpec>, MetricSpecError> {
    let bad = |m: String| MetricSpecError(m, SpecPart::Name);
    let mut specs = Vec::new();
    for part in split_top_level(text).map_err(bad)? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (head, bound) = match part.find(">=").or_else(|| part.rfind("<=")) {
            Some(at) if !part[at..].contains(')') => {
                let op = if part[at..].starts_with(">=") {
                    Op::AtLeast
                } else {
                    Op::AtMost
                };
                let value = part[at + 2..].trim();
                let threshold: f64 = value.parse().map_err(|_| {
                    MetricSpecError(
                        format!("`{part}`: `{value}` is not a number"),
                        SpecPart::Threshold,
                    )
                })?;
                (part[..at].trim(), Some((op, threshold)))
            }
            _ => (part, None),
        };
        let (name, options) = match head.split_once('(') {
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| bad(format!("`{part}`: expected `)` after the options")))?;
                (
                    name.trim(),
                    parse_options(inner).map_err(|m| bad(format!("`{part}`: {m}")))?,
                )
            }
            None => (head, Vec::new()),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        {
            return Err(bad(format!("`{part}`: expected a metric name")));
        }
        let opts: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let spec = MetricSpec::new(name, &opts, bound)?;
        if specs
            .iter()
            .any(|s: &MetricSpec| s.info().name == spec.info().name)
        {
            return Err(bad(format!("`{name}` is listed twice")));
        }
        specs.push(spec);
    }
    if specs.is_empty() {
        return Err(bad("no metrics given".into()));
    }
    Ok(specs)
}

/// Splits on commas outside parentheses and string literals.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut in_str, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in text.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err("unbalanced `)`".into());
        }
    }
    if in_str || depth != 0 {
        return Err("unclosed `(` or string".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_options(inner: &str) -> Result<Vec<(String, OptionValue)>, String> {
    let mut out = Vec::new();
    for item in split_top_level(inner)? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("expected `key = value`, found `{item}`"))?;
        let value = value.trim();
        let value = if value == "true" || value == "false" {
            OptionValue::Bool(value == "true")
        } else if value.starts_with('"') {
            let s: String = serde_json::from_str(value)
                .map_err(|_| format!("`{value}` is not a valid string literal"))?;
            OptionValue::Str(s.into())
        } else if let Ok(n) = value.parse::<f64>() {
            OptionValue::Num(n)
        } else {
            return Err(format!(
                "`{value}` is not true, false, a number or a string"
            ));
        };
        out.push((key.trim().to_string(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn parses_the_attribute_syntax() {
        let specs = parse_specs(
            r#"contains >= 1.0, exact_match(case_sensitive = true), regex(pattern = "a, (b)\\d+") >= 0.5, partial_match"#,
        )
        .unwrap();
        assert_eq!(specs.len(), 4);
        assert_eq!(
            specs[1].kind,
            MetricKind::ExactMatch {
                case_sensitive: true
            }
        );
        assert_eq!(
            specs[2].kind,
            MetricKind::Regex {
                pattern: Some(r"a, (b)\d+".into()),
                case_sensitive: false
            }
        );
        assert_eq!((specs[2].op, specs[2].threshold), (Op::AtLeast, 0.5));
        assert_eq!(specs[3].threshold, 0.5);
        for (bad, msg) in [
            ("contains >= x", "is not a number"),
            ("contains, contains", "listed twice"),
            ("faithfulnes", "unknown metric"),
            ("contains(case_sensitive = yes)", "is not true, false"),
            ("contains(", "unclosed"),
            ("", "no metrics"),
            ("contains <= 0.5", "write `contains >= 0.5`"),
        ] {
            let e = parse_specs(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}
