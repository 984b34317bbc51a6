//! Metrics scored by an LLM judge and/or embeddings:
//!
//! * ragas (Es et al., "RAGAS: Automated Evaluation of Retrieval Augmented
//!   Generation", 2023, and the ragas metric documentation): faithfulness,
//!   answer_relevancy, context_precision, context_recall, answer_similarity,
//!   with ragas' non-LLM variants when no judge or embeddings are configured;
//! * deepeval (its metric documentation): hallucination, toxicity, bias;
//! * letta-evals' rubric grader and runevals' 1–5 ratings.
//! * G-Eval criteria metrics (`g_eval`: Liu et al. 2023, as deepeval's
//!   `GEval`), see [`geval`].
//!
//! The prompts are ours; the scoring formulas are the published ones.
//! Every prompt is a [`JudgePrompt`]: our instructions, and the sample's and
//! the agent's text only in data blocks. Each prompt has a version, part of
//! the cache key: changing a prompt means bumping it. [`versions`] is the
//! one table of them, and of each metric's scoring definition.

use eval_datasets::Sample;
use eval_datasets::metric::{JudgedMetric, MetricKind, MetricSpec};
use serde_json::Value;

use crate::agent::Response;
use crate::model::MetricError;
use crate::services::{Judge, JudgePrompt, ServiceError, Services, Usage};

mod deepeval;
mod fingerprint;
pub(crate) mod geval;
mod graders;
mod ragas;
mod reply;

use reply::{Assume, Field};

pub(crate) use fingerprint::{embeddings_fingerprint, fingerprint};

use deepeval::{hallucination, opinions_flagged};
use graders::{rating, rubric};
use ragas::{answer_relevancy, answer_similarity, context_precision, context_recall, faithfulness};

/// The outcome of one model-based metric on one sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scored {
    /// The score, or a one-line reason there is none.
    pub score: Result<f64, MetricError>,
    /// How it was scored, when not by the metric's primary method
    /// (e.g. the offline variant).
    pub method: Option<&'static str>,
    /// Judge calls made.
    pub usage: Usage,
    /// Embedding calls made.
    pub embeddings: Usage,
    /// The value in the metric's original direction when it is reported
    /// flipped (deepeval toxicity and bias: lower is better there).
    pub raw: Option<f64>,
    /// Why it scored as it did, from the answers the score was computed
    /// from (no call of its own): the judge's reason, or the verdicts it
    /// counted.
    pub reason: Option<String>,
}

/// A judge prompt: its task (its name in the system message and the cache
/// key) and its version (bumped whenever its text or the reply it asks for
/// changes, so no cached answer to an older prompt is reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub(crate) struct PromptVersion {
    /// The task, e.g. `faithfulness/verdicts`.
    pub task: &'static str,
    /// Its version.
    pub version: u32,
}

impl PromptVersion {
    const fn new(task: &'static str, version: u32) -> PromptVersion {
        PromptVersion { task, version }
    }

    /// A question of this task and version with `instructions`.
    pub(super) fn prompt(self, instructions: impl Into<String>) -> JudgePrompt {
        JudgePrompt::new(self.task, self.version, instructions)
    }
}

/// What a model-based metric's score depends on besides the models: the
/// judge prompts it may ask, and the version of its scoring definition
/// (the formula over the judge's answers; starts at 1, bumped when the
/// formula changes). For a results file's provenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub(crate) struct JudgeVersions {
    /// The prompts, in the order asked (none for `answer_similarity`, which
    /// only embeds).
    pub prompts: &'static [PromptVersion],
    /// The scoring definition's version.
    pub definition: u32,
}

const FAITHFULNESS: PromptVersion = PromptVersion::new("faithfulness", 4);
/// Asked by context precision and context recall alike (one question).
const CONTEXT_REFERENCE: PromptVersion = PromptVersion::new("context/reference", 4);
const ANSWER_RELEVANCY: PromptVersion = PromptVersion::new("answer_relevancy/questions", 3);
const HALLUCINATION: PromptVersion = PromptVersion::new("hallucination/contradictions", 3);
const TOXICITY_OPINIONS: PromptVersion = PromptVersion::new("toxicity/opinions", 3);
const TOXICITY_VERDICTS: PromptVersion = PromptVersion::new("toxicity/verdicts", 3);
const BIAS_OPINIONS: PromptVersion = PromptVersion::new("bias/opinions", 3);
const BIAS_VERDICTS: PromptVersion = PromptVersion::new("bias/verdicts", 3);
const RUBRIC: PromptVersion = PromptVersion::new("rubric", 2);
const RATING_RELEVANCE: PromptVersion = PromptVersion::new("rating/relevance", 2);
const RATING_COHERENCE: PromptVersion = PromptVersion::new("rating/coherence", 2);
const RATING_GROUNDEDNESS: PromptVersion = PromptVersion::new("rating/groundedness", 2);
const RATING_SIMILARITY: PromptVersion = PromptVersion::new("rating/similarity", 2);

/// The judge prompts and scoring definition of each model-based metric
/// (`None` for the others): the one table the metrics take their prompt
/// versions from.
pub(crate) fn versions(kind: &MetricKind) -> Option<JudgeVersions> {
    match kind {
        MetricKind::Judged(kind) => Some(judged_versions(kind)),
        MetricKind::Text(_)
        | MetricKind::Rank(_)
        | MetricKind::Tools(_)
        | MetricKind::Trajectory(_)
        | MetricKind::Measured(_)
        | MetricKind::User(_)
        | MetricKind::Exec(_) => None,
    }
}

/// [`versions`] of a judged metric.
fn judged_versions(kind: &JudgedMetric) -> JudgeVersions {
    use eval_datasets::metric::Rating;
    let prompts: &'static [PromptVersion] = match kind {
        JudgedMetric::Faithfulness => &[FAITHFULNESS],
        JudgedMetric::AnswerSimilarity => &[],
        JudgedMetric::ContextRecall => &[CONTEXT_REFERENCE],
        JudgedMetric::ContextPrecision => &[CONTEXT_REFERENCE],
        JudgedMetric::AnswerRelevancy => &[ANSWER_RELEVANCY],
        JudgedMetric::Hallucination => &[HALLUCINATION],
        JudgedMetric::Toxicity => &[TOXICITY_OPINIONS, TOXICITY_VERDICTS],
        JudgedMetric::Bias => &[BIAS_OPINIONS, BIAS_VERDICTS],
        JudgedMetric::Rubric { .. } => &[RUBRIC],
        JudgedMetric::Rating(Rating::Relevance) => &[RATING_RELEVANCE],
        JudgedMetric::Rating(Rating::Coherence) => &[RATING_COHERENCE],
        JudgedMetric::Rating(Rating::Groundedness) => &[RATING_GROUNDEDNESS],
        JudgedMetric::Rating(Rating::Similarity) => &[RATING_SIMILARITY],
        // The steps question is asked only without given steps.
        JudgedMetric::GEval(_) => &[geval::G_EVAL_STEPS, geval::G_EVAL_SCORE],
    };
    JudgeVersions {
        prompts,
        definition: 1,
    }
}

/// Whether `spec` needs a judge or embeddings (and so async scoring).
pub(crate) fn is_model_based(spec: &MetricSpec) -> bool {
    matches!(spec.kind, MetricKind::Judged(_))
}

/// What a sample lacks for a model-based metric *in this run's setup*,
/// known before the agent is called: the context metrics compare with the
/// expected answer when a judge scores them, and with `reference_contexts`
/// offline; a metric with nothing to score against fails before the call.
pub(crate) fn missing_for_setup(
    sample: &Sample,
    specs: &[MetricSpec],
    services: &Services,
) -> Option<String> {
    specs
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                MetricKind::Judged(JudgedMetric::ContextRecall | JudgedMetric::ContextPrecision)
            )
        })
        .find_map(|spec| context_setup(&spec.name, sample, services).err())
}

/// How a context metric scores `sample` here: with the judge (`Some`), which
/// compares with the expected answer, or offline (`None`), which compares
/// with `reference_contexts`; an error when the sample lacks what that needs.
pub(super) fn context_setup<'a>(
    metric: &str,
    sample: &Sample,
    services: &'a Services,
) -> Result<Option<(&'a Judge, String)>, String> {
    match judge_or_offline(services, metric)? {
        Some(judge) => match sample.expected_text() {
            Some(expected) => Ok(Some((judge, expected.to_string()))),
            None => Err(format!(
                "sample has no `expected` field (or expected_output, ground_truth, ...), which `{metric}` needs when an LLM judge scores it"
            )),
        },
        None if sample.reference_contexts.is_empty() => Err(format!(
            "`{metric}` needs an LLM judge (set EVAL_JUDGE_URL) or, offline, `reference_contexts` in the sample"
        )),
        None => Ok(None),
    }
}

/// Why `spec` cannot be scored at all in this setup (its judge or
/// embeddings are not configured and it has no offline variant); `None`
/// when it can, or when only some samples would lack an offline field.
pub(crate) fn unavailable(spec: &MetricSpec, services: &Services) -> Option<String> {
    let judge_missing = matches!(services.judge, Err(ServiceError::NotConfigured { .. }));
    let embed_missing = matches!(services.embedder, Err(ServiceError::NotConfigured { .. }));
    let MetricKind::Judged(kind) = &spec.kind else {
        return None;
    };
    let needs_judge = match kind {
        JudgedMetric::Faithfulness
        | JudgedMetric::AnswerRelevancy
        | JudgedMetric::Hallucination
        | JudgedMetric::Toxicity
        | JudgedMetric::Bias
        | JudgedMetric::Rubric { .. }
        | JudgedMetric::Rating(_)
        | JudgedMetric::GEval(_) => true,
        // Scored offline without a judge (or embeddings).
        JudgedMetric::AnswerSimilarity
        | JudgedMetric::ContextRecall
        | JudgedMetric::ContextPrecision => false,
    };
    if needs_judge && judge_missing {
        return Some(format!(
            "`{}` needs an LLM judge: set EVAL_JUDGE_URL (and EVAL_JUDGE_MODEL, EVAL_JUDGE_API_KEY or OPENAI_API_KEY)",
            spec.name
        ));
    }
    if *kind == JudgedMetric::AnswerRelevancy && embed_missing {
        return Some(format!(
            "`{}` needs embeddings: set EVAL_EMBED_URL and EVAL_EMBED_MODEL",
            spec.name
        ));
    }
    None
}

/// Scores a model-based metric.
pub(crate) async fn score(
    kind: &JudgedMetric,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> Scored {
    let mut usage = Usage::default();
    let mut embeddings = Usage::default();
    let mut raw = None;
    let mut reason = None;
    let why = &mut reason;
    let (score, method) = match kind {
        JudgedMetric::Faithfulness => (
            faithfulness(sample, response, services, &mut usage, why).await,
            None,
        ),
        JudgedMetric::AnswerSimilarity => {
            answer_similarity(sample, response, services, &mut embeddings).await
        }
        JudgedMetric::ContextRecall => {
            context_recall(sample, response, services, &mut usage, why).await
        }
        JudgedMetric::ContextPrecision => {
            context_precision(sample, response, services, &mut usage, why).await
        }
        JudgedMetric::AnswerRelevancy => (
            answer_relevancy(
                sample,
                response,
                services,
                (&mut usage, &mut embeddings),
                why,
            )
            .await,
            None,
        ),
        JudgedMetric::Hallucination => (
            hallucination(sample, response, services, &mut usage, why).await,
            None,
        ),
        JudgedMetric::Toxicity | JudgedMetric::Bias => {
            let toxicity = *kind == JudgedMetric::Toxicity;
            let share = opinions_flagged(toxicity, response, services, &mut usage, why).await;
            raw = share.as_ref().ok().copied();
            (share.map(|r| 1.0 - r), None)
        }
        JudgedMetric::Rubric { text, file } => (
            rubric(
                text.as_deref(),
                file.as_deref(),
                sample,
                response,
                services,
                (&mut usage, why),
            )
            .await,
            None,
        ),
        JudgedMetric::Rating(kind) => {
            let rated = rating(*kind, sample, response, services, &mut usage, why).await;
            raw = rated.as_ref().ok().copied();
            (rated.map(|r| (r - 1.0) / 4.0), None)
        }
        JudgedMetric::GEval(g) => {
            let (score, method, on_scale) =
                geval::g_eval(g, sample, response, services, (&mut usage, why)).await;
            raw = on_scale;
            (score, method)
        }
    };
    Scored {
        // A reason says why there is a score; an error says why not.
        reason: reason.filter(|_| score.is_ok()),
        score,
        method,
        usage,
        embeddings,
        raw,
    }
}

/// The retrieved context: what the agent returned, else the sample's.
pub(super) fn retrieved<'a>(sample: &'a Sample, response: &'a Response) -> &'a [String] {
    if response.context.is_empty() {
        &sample.context
    } else {
        &response.context
    }
}

/// [`retrieved`], which `metric` cannot score without.
pub(super) fn retrieved_for<'a>(
    metric: &str,
    sample: &'a Sample,
    response: &'a Response,
) -> Result<&'a [String], String> {
    let context = retrieved(sample, response);
    if context.is_empty() {
        return Err(format!(
            "`{metric}` needs retrieved context: the agent returned none and the sample has no `context` field"
        ));
    }
    Ok(context)
}

pub(super) fn judge<'a>(services: &'a Services, metric: &str) -> Result<&'a Judge, String> {
    services.judge.as_ref().map_err(|e| {
        format!("`{metric}` needs an LLM judge (set EVAL_JUDGE_URL and EVAL_JUDGE_MODEL): {e}")
    })
}

/// Asks `prompt`, wanting a reply of exactly `shape` (see [`reply`]): an
/// answer of another shape is re-asked, then the metric fails.
async fn ask(
    judge: &Judge,
    prompt: &JudgePrompt,
    shape: &[(&str, Field<'_>)],
    usage: &mut Usage,
) -> Result<Value, MetricError> {
    judge
        .ask_checked(prompt, usage, &reply::Shape(shape))
        .await
        .map_err(MetricError::Service)
}

/// `k of n <what>`, `k` the `flags` that are `want`: `"2 of 3 statements
/// supported by the context"`.
pub(super) fn tally(flags: &[bool], want: bool, what: &str) -> String {
    let k = flags.iter().filter(|f| **f == want).count();
    format!("{k} of {} {what}", flags.len())
}

/// The 1-based positions of `flags` that are `want`: `#1, #3` (`none` for
/// none), at most 10 shown.
pub(super) fn positions(flags: &[bool], want: bool) -> String {
    let all: Vec<String> = flags
        .iter()
        .enumerate()
        .filter(|(_, f)| **f == want)
        .map(|(i, _)| format!("#{}", i + 1))
        .collect();
    match all.len() {
        0 => "none".into(),
        n if n > 10 => format!("{} and {} more", all[..10].join(", "), n - 10),
        _ => all.join(", "),
    }
}

/// Up to three of `texts` whose flag is `want`, quoted and cut short: what
/// a reason names (the statements not supported, the opinions flagged).
pub(super) fn quoted(texts: &[String], flags: &[bool], want: bool) -> String {
    let picked: Vec<String> = texts
        .iter()
        .zip(flags)
        .filter(|(_, f)| **f == want)
        .map(|(t, _)| format!("\"{}\"", crate::model::one_line(t, 80)))
        .collect();
    match picked.len() {
        n if n > 3 => format!("{} and {} more", picked[..3].join(", "), n - 3),
        _ => picked.join(", "),
    }
}

/// The judge's own reason in `reply` (`reason`, or `rationale` as the rubric
/// asks), when it gave one.
pub(super) fn judge_reason(reply: &Value) -> Option<String> {
    ["reason", "rationale"]
        .iter()
        .find_map(|k| reply[*k].as_str())
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
}

/// The share of `flags` that are `want` (0 for none).
pub(super) fn share(flags: &[bool], want: bool) -> f64 {
    if flags.is_empty() {
        return 0.0;
    }
    flags.iter().filter(|f| **f == want).count() as f64 / flags.len() as f64
}

/// `1 - levenshtein(a, b) / max(len(a), len(b))` over characters (1 for two
/// empty strings), the normalised similarity ragas' `NonLLMStringSimilarity`
/// computes with the Levenshtein measure.
pub(crate) fn string_similarity(a: &str, b: &str) -> f64 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    1.0 - eval_datasets::suggest::edit_distance(a, b) as f64 / longest as f64
}

/// The best [`string_similarity`] of `text` to any of `others` (0 when none).
pub(super) fn best_similarity(text: &str, others: &[String]) -> f64 {
    others
        .iter()
        .map(|o| string_similarity(text, o))
        .fold(0.0, f64::max)
}

/// The judge, `Ok(None)` when none is configured at all (the caller then
/// uses its offline variant), or an error when one is configured wrongly.
pub(super) fn judge_or_offline<'a>(
    services: &'a Services,
    metric: &str,
) -> Result<Option<&'a Judge>, String> {
    match &services.judge {
        Ok(judge) => Ok(Some(judge)),
        Err(ServiceError::NotConfigured { .. }) => Ok(None),
        Err(e) => Err(format!("`{metric}`: the LLM judge is misconfigured: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{string_similarity, versions};
    use eval_datasets::metric::{JudgedMetric, MetricKind, MetricSpec, TextMetric};

    #[test]
    fn every_model_based_metric_has_its_versions_and_only_the_context_question_is_shared() {
        let mut tasks = std::collections::BTreeSet::new();
        for entry in eval_datasets::metric::catalog() {
            let Ok(spec) = MetricSpec::new(entry.name, &[], None) else {
                continue;
            };
            let v = versions(&spec.kind);
            assert_eq!(v.is_some(), super::is_model_based(&spec), "{}", entry.name);
            if let Some(v) = v {
                assert_eq!(v.definition, 1);
                assert_eq!(
                    v.prompts.is_empty(),
                    matches!(
                        spec.kind,
                        MetricKind::Judged(JudgedMetric::AnswerSimilarity)
                    ),
                    "{}",
                    entry.name
                );
                for p in v.prompts {
                    assert!(p.version >= 2, "{}: every prompt was bumped", p.task);
                    tasks.insert(p.task);
                }
            }
        }
        // 1 + 1 (context precision and recall share it) + 1 + 1 + 2 + 2 + 1 + 4 ratings.
        assert_eq!(tasks.len(), 13, "{tasks:?}");
        assert_eq!(
            versions(&MetricKind::Judged(JudgedMetric::ContextPrecision)),
            versions(&MetricKind::Judged(JudgedMetric::ContextRecall))
        );
        assert_eq!(
            versions(&MetricKind::Judged(JudgedMetric::Faithfulness))
                .unwrap()
                .prompts[0]
                .task,
            "faithfulness"
        );
        assert_eq!(versions(&MetricKind::Text(TextMetric::PartialMatch)), None);
    }

    #[test]
    fn levenshtein_similarity_matches_hand_values() {
        // kitten -> sitting: distance 3, max length 7.
        assert!((string_similarity("kitten", "sitting") - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
        assert_eq!(string_similarity("", ""), 1.0);
        assert_eq!(string_similarity("abc", ""), 0.0);
        assert_eq!(string_similarity("same", "same"), 1.0);
        // Characters, not bytes: one substitution in 3.
        assert!((string_similarity("日本語", "日本人") - 2.0 / 3.0).abs() < 1e-12);
    }
}
