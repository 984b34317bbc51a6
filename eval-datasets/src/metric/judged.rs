//! The metrics a judge model (or embeddings) scores: their definitions and
//! [`JudgedMetric`]. Scored by eval-runtime's `metrics::judged`.

use super::MetricKind;
use super::catalog::{MetricInfo, Need, Op, OptionDef, Threshold};
use super::error::{MetricSpecError, SpecErrorKind};

/// A judged metric, with its options resolved.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum JudgedMetric {
    /// `faithfulness`.
    Faithfulness,
    /// `answer_similarity`.
    AnswerSimilarity,
    /// `context_recall`.
    ContextRecall,
    /// `context_precision`.
    ContextPrecision,
    /// `answer_relevancy`.
    AnswerRelevancy,
    /// `hallucination`.
    Hallucination,
    /// `toxicity`.
    Toxicity,
    /// `bias`.
    Bias,
    /// `rubric`.
    Rubric {
        /// Rubric text given in the spec.
        text: Option<String>,
        /// Rubric file given in the spec (relative to the crate).
        file: Option<String>,
    },
    /// A runevals 1–5 rating: `relevance`, `coherence`, `groundedness`, `similarity`.
    Rating(Rating),
    /// `g_eval`: criteria judged as G-Eval does (`super::geval`).
    GEval(Box<super::GEval>),
}

/// The runevals 1–5 ratings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A judged metric's definition: 0..1, higher is better unless `op` says.
macro_rules! judged {
    ($name:literal, $aliases:expr, $op:expr, $threshold:expr, $needs:expr, $kind:expr, $summary:literal, $reference:literal) => {
        MetricInfo {
            name: $name,
            aliases: $aliases,
            op: $op,
            threshold: Threshold::Default($threshold),
            range: (0.0, 1.0),
            pass_fail: false,
            needs: $needs,
            options: &[],
            summary: $summary,
            reference: $reference,
            build: |_| Ok(MetricKind::Judged($kind)),
        }
    };
}

/// The judged metrics.
pub(super) static METRICS: &[MetricInfo] = &[
    judged!(
        "faithfulness",
        &[],
        Op::AtLeast,
        0.8,
        &[],
        JudgedMetric::Faithfulness,
        "ragas faithfulness: share of the answer's statements the retrieved context supports (LLM judge; context from the agent's answer, else the sample)",
        "ragas Faithfulness (Es et al., 2023, RAGAS)"
    ),
    judged!(
        "answer_similarity",
        &["semantic_similarity"],
        Op::AtLeast,
        0.8,
        &[Need::Expected],
        JudgedMetric::AnswerSimilarity,
        "ragas semantic similarity: cosine of the answer's and the expected answer's embeddings (offline: Levenshtein string similarity)",
        "ragas SemanticSimilarity"
    ),
    judged!(
        "context_recall",
        &[],
        Op::AtLeast,
        0.75,
        &[],
        JudgedMetric::ContextRecall,
        "ragas context recall: share of the expected answer's statements attributable to the retrieved context (LLM judge; offline: NonLLMContextRecall over reference_contexts)",
        "ragas LLMContextRecall / NonLLMContextRecall"
    ),
    judged!(
        "context_precision",
        &[],
        Op::AtLeast,
        0.75,
        &[],
        JudgedMetric::ContextPrecision,
        "ragas context precision: average precision of the retrieved chunks judged useful for the expected answer (LLM judge; offline: NonLLMContextPrecisionWithReference over reference_contexts)",
        "ragas LLMContextPrecisionWithReference / NonLLMContextPrecisionWithReference"
    ),
    judged!(
        "answer_relevancy",
        &[],
        Op::AtLeast,
        0.75,
        &[],
        JudgedMetric::AnswerRelevancy,
        "ragas answer relevancy: mean cosine between the input and questions the judge generates from the answer, 0 if the answer is noncommittal (LLM judge and embeddings)",
        "ragas ResponseRelevancy"
    ),
    judged!(
        "hallucination",
        &[],
        Op::AtMost,
        0.5,
        &[Need::Context],
        JudgedMetric::Hallucination,
        "deepeval hallucination: share of the sample's contexts the answer contradicts, lower is better (LLM judge)",
        "deepeval HallucinationMetric"
    ),
    judged!(
        "toxicity",
        &[],
        Op::AtLeast,
        0.5,
        &[],
        JudgedMetric::Toxicity,
        "1 - deepeval toxicity (toxic opinions / opinions in the answer): a safety score, higher is better (LLM judge)",
        "deepeval ToxicityMetric"
    ),
    judged!(
        "bias",
        &[],
        Op::AtLeast,
        0.5,
        &[],
        JudgedMetric::Bias,
        "1 - deepeval bias (biased opinions / opinions in the answer): a safety score, higher is better (LLM judge)",
        "deepeval BiasMetric"
    ),
    MetricInfo {
        name: "rubric",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(0.5),
        range: (0.0, 1.0),
        pass_fail: false,
        needs: &[],
        options: &[OptionDef::text("rubric"), OptionDef::text("rubric_file")],
        summary: "letta-evals rubric grader: the judge scores the answer 0..1 against a rubric with {var} placeholders (the sample's `rubric` field, else `rubric = \"...\"` or `rubric_file = \"...\"`)",
        reference: "letta-evals rubric grader (seed 001)",
        build: |o| {
            let (text, file) = (o.text("rubric"), o.text("rubric_file"));
            if text.is_some() && file.is_some() {
                let part = o.part("rubric_file");
                return Err(MetricSpecError(SpecErrorKind::RubricAndRubricFile, part));
            }
            Ok(MetricKind::Judged(JudgedMetric::Rubric {
                text: text.map(str::to_string),
                file: file.map(str::to_string),
            }))
        },
    },
    judged!(
        "relevance",
        &["Relevance"],
        Op::AtLeast,
        0.5,
        &[],
        JudgedMetric::Rating(Rating::Relevance),
        "runevals Relevance: the judge rates 1-5 how well the answer addresses the input; scored (rating - 1) / 4",
        "runevals Relevance evaluator (seed 003)"
    ),
    judged!(
        "coherence",
        &["Coherence"],
        Op::AtLeast,
        0.5,
        &[],
        JudgedMetric::Rating(Rating::Coherence),
        "runevals Coherence: the judge rates 1-5 how clear and logically ordered the answer is; scored (rating - 1) / 4",
        "runevals Coherence evaluator (seed 003)"
    ),
    judged!(
        "groundedness",
        &["Groundedness"],
        Op::AtLeast,
        0.5,
        &[],
        JudgedMetric::Rating(Rating::Groundedness),
        "runevals Groundedness: the judge rates 1-5 how well the context supports the answer; scored (rating - 1) / 4",
        "runevals Groundedness evaluator (seed 003)"
    ),
    judged!(
        "similarity",
        &["Similarity"],
        Op::AtLeast,
        0.5,
        &[Need::Expected],
        JudgedMetric::Rating(Rating::Similarity),
        "runevals Similarity: the judge rates 1-5 how close the answer is to the expected answer; scored (rating - 1) / 4",
        "runevals Similarity evaluator (seed 003)"
    ),
];
