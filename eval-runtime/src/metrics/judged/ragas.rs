//! ragas metrics (Es et al., 2023, and the ragas metric documentation):
//! faithfulness, answer similarity, context recall and precision, answer
//! relevancy, with ragas' non-LLM variants.

use eval_core::Sample;

use super::*;
use crate::services::cosine;

pub(super) const FAITHFULNESS_VERSION: u32 = 2;

/// ragas **faithfulness**: the answer is broken into statements (judge, step
/// 1); each is checked against the retrieved context (judge, step 2);
/// score = statements supported / statements. Context comes from the agent's
/// answer, else the sample's `context`.
pub(super) async fn faithfulness(
    sample: &Sample,
    response: &Response,
    services: &Services,
    usage: &mut Usage,
    why: &mut Option<String>,
) -> Result<f64, MetricError> {
    let judge = judge(services, "faithfulness")?;
    let context = retrieved(sample, response);
    if context.is_empty() {
        return Err("`faithfulness` needs context: the agent returned none and the sample has no `context` field".into());
    }
    let reply = judge
        .ask_checked(
            "faithfulness/statements",
            FAITHFULNESS_VERSION,
            (
                "TASK faithfulness/statements. Split the answer into short, self-contained factual \
             statements, replacing pronouns with what they refer to. Reply with JSON only: \
             {\"statements\": [\"...\"]}.",
                &format!(
                    "Question: {}\nAnswer: {}",
                    sample.input.last(),
                    response.output
                ),
            ),
            usage,
            &|v| strings(v, "statements").map(|_| ()),
        )
        .await
        .map_err(MetricError::Service)?;
    let statements = strings(&reply, "statements")?;
    if statements.is_empty() {
        return Err("the judge found no statements in the answer to check".into());
    }
    let numbered: String = statements
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {s}\n", i + 1))
        .collect();
    let n_statements = statements.len();
    let reply = judge
        .ask_checked(
            "faithfulness/verdicts",
            FAITHFULNESS_VERSION,
            (
                "TASK faithfulness/verdicts. For each statement, decide whether it can be inferred \
             directly from the context (1) or not (0). Reply with JSON only, one flag per statement, in order: \
             {\"verdicts\": [1, 0, ...]}.",
                &format!(
                    "Context:\n{}\n\nStatements:\n{numbered}",
                    context.join("\n")
                ),
            ),
            usage,
            &|v| counted(v, "verdicts", "verdict", n_statements, "statements").map(|_| ()),
        )
        .await
        .map_err(MetricError::Service)?;
    let verdicts = counted(&reply, "verdicts", "verdict", n_statements, "statements")?;
    let mut reason = tally(&verdicts, true, "statements supported by the context");
    if verdicts.contains(&false) {
        reason.push_str(&format!(
            "; not supported: {}",
            quoted(&statements, &verdicts, false)
        ));
    }
    *why = Some(reason);
    Ok(share(&verdicts, true))
}

/// ragas **semantic similarity** (`answer_similarity`): cosine similarity of
/// the embeddings of the answer and of the expected answer. Offline, ragas'
/// `NonLLMStringSimilarity` with the Levenshtein measure:
/// `1 - distance / max(len)` over characters.
pub(super) async fn answer_similarity(
    sample: &Sample,
    response: &Response,
    services: &Services,
    embeddings: &mut Usage,
) -> (Result<f64, MetricError>, Option<&'static str>) {
    let Some(expected) = sample.expected_text() else {
        return (
            Err("`answer_similarity` needs an expected answer".into()),
            None,
        );
    };
    match &services.embedder {
        Err(e) if !matches!(e, ServiceError::NotConfigured { .. }) => (
            Err(format!("`answer_similarity`: the embeddings server is misconfigured: {e}").into()),
            None,
        ),
        Ok(embedder) => {
            let result = embedder
                .embed(&[&response.output, expected], embeddings)
                .await;
            (
                result
                    .map(|v| cosine(&v[0], &v[1]))
                    .map_err(MetricError::Service),
                None,
            )
        }
        Err(_) => (
            Ok(string_similarity(&response.output, expected)),
            Some("offline: ragas NonLLMStringSimilarity (Levenshtein), no EVAL_EMBED_URL"),
        ),
    }
}

pub(super) const CONTEXT_RECALL_VERSION: u32 = 2;

/// ragas **context recall**. With a judge (`LLMContextRecall`): the expected
/// answer is split into statements, each classified as attributable to the
/// retrieved context or not; score = attributed / statements. Offline
/// (`NonLLMContextRecall`): a reference context counts as recalled when its
/// string similarity to some retrieved context is above 0.5; score =
/// recalled / reference contexts.
pub(super) async fn context_recall(
    sample: &Sample,
    response: &Response,
    services: &Services,
    usage: &mut Usage,
    why: &mut Option<String>,
) -> (Result<f64, MetricError>, Option<&'static str>) {
    let context = match retrieved_for("context_recall", sample, response) {
        Ok(context) => context,
        Err(e) => return (Err(e.into()), None),
    };
    let (judge, expected) = match context_setup("context_recall", sample, services) {
        Err(e) => return (Err(e.into()), None),
        Ok(Some(with_judge)) => with_judge,
        Ok(None) => {
            let recalled: Vec<bool> = sample
                .reference_contexts
                .iter()
                .map(|r| best_similarity(r, context) > 0.5)
                .collect();
            *why = Some(format!(
                "{} ({})",
                tally(
                    &recalled,
                    true,
                    "reference contexts found in the retrieved context"
                ),
                positions(&recalled, true)
            ));
            return (
                Ok(share(&recalled, true)),
                Some("offline: ragas NonLLMContextRecall (Levenshtein > 0.5), no EVAL_JUDGE_URL"),
            );
        }
    };
    let reply = judge
        .ask_checked(
            "context_recall",
            CONTEXT_RECALL_VERSION,
            (
                "TASK context_recall/attribution. Split the reference answer into statements; for \
             each, decide whether it can be attributed to the context (1) or not (0). Reply with \
             JSON only, one flag per statement, in order: {\"classifications\": [1, 0, ...]}.",
                &format!(
                    "Question: {}\nContext:\n{}\nReference answer: {expected}",
                    sample.input.last(),
                    context.join("\n")
                ),
            ),
            usage,
            &|v| flags(v, "classifications", "attributed").map(|_| ()),
        )
        .await;
    let reply = match reply {
        Ok(r) => r,
        Err(e) => return (Err(e.into()), None),
    };
    let score = flags(&reply, "classifications", "attributed").and_then(|f| {
        if f.is_empty() {
            Err("the judge found no statements in the expected answer".into())
        } else {
            *why = Some(format!(
                "{} ({})",
                tally(
                    &f,
                    true,
                    "statements of the expected answer attributable to the context"
                ),
                positions(&f, true)
            ));
            Ok(share(&f, true))
        }
    });
    (score.map_err(MetricError::from), None)
}

pub(super) const CONTEXT_PRECISION_VERSION: u32 = 2;

/// Average precision over ranked relevance verdicts, as ragas computes
/// context precision: `Σ_k precision@k · v_k / Σ_k v_k` (0 when no chunk is
/// relevant; ragas adds 1e-10 to the denominator instead).
pub fn average_precision(verdicts: &[bool]) -> f64 {
    let relevant = verdicts.iter().filter(|v| **v).count();
    if relevant == 0 {
        return 0.0;
    }
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (k, v) in verdicts.iter().enumerate() {
        if *v {
            hits += 1;
            sum += hits as f64 / (k + 1) as f64;
        }
    }
    sum / relevant as f64
}

/// ragas **context precision**: each retrieved chunk, in the order
/// retrieved, is judged useful for arriving at the expected answer or not
/// (`LLMContextPrecisionWithReference`); score = [`average_precision`].
/// Offline (`NonLLMContextPrecisionWithReference`): a chunk is relevant when
/// its best Levenshtein similarity to a reference context is at least 0.5.
pub(super) async fn context_precision(
    sample: &Sample,
    response: &Response,
    services: &Services,
    usage: &mut Usage,
    why: &mut Option<String>,
) -> (Result<f64, MetricError>, Option<&'static str>) {
    let context = match retrieved_for("context_precision", sample, response) {
        Ok(context) => context,
        Err(e) => return (Err(e.into()), None),
    };
    let (judge, expected) = match context_setup("context_precision", sample, services) {
        Err(e) => return (Err(e.into()), None),
        Ok(Some(with_judge)) => with_judge,
        Ok(None) => {
            let verdicts: Vec<bool> = context
                .iter()
                .map(|c| best_similarity(c, &sample.reference_contexts) >= 0.5)
                .collect();
            *why = Some(format!(
                "{} (ranks {})",
                tally(
                    &verdicts,
                    true,
                    "retrieved chunks match a reference context"
                ),
                positions(&verdicts, true)
            ));
            return (
                Ok(average_precision(&verdicts)),
                Some(
                    "offline: ragas NonLLMContextPrecisionWithReference (Levenshtein >= 0.5), no EVAL_JUDGE_URL",
                ),
            );
        }
    };
    let chunks: String = context
        .iter()
        .enumerate()
        .map(|(i, c)| format!("[{}] {c}\n", i + 1))
        .collect();
    let reply = judge
        .ask_checked(
            "context_precision",
            CONTEXT_PRECISION_VERSION,
            (
                "TASK context_precision/usefulness. For each numbered context chunk, in order, \
              decide whether it was useful for arriving at the reference answer (1) or not (0). \
              Reply with JSON only, one flag per chunk, in order: {\"verdicts\": [1, 0, ...]}.",
                &format!(
                    "Question: {}\nReference answer: {expected}\nContext chunks:\n{chunks}",
                    sample.input.last()
                ),
            ),
            usage,
            &|v| counted(v, "verdicts", "verdict", context.len(), "context chunks").map(|_| ()),
        )
        .await;
    let verdicts = reply
        .map_err(|e| e.to_string())
        .and_then(|r| counted(&r, "verdicts", "verdict", context.len(), "context chunks"));
    (
        verdicts
            .map(|v| {
                *why = Some(format!(
                    "{} (ranks {})",
                    tally(&v, true, "retrieved chunks useful for the expected answer"),
                    positions(&v, true)
                ));
                average_precision(&v)
            })
            .map_err(MetricError::from),
        None,
    )
}

pub(super) const ANSWER_RELEVANCY_VERSION: u32 = 1;
/// Questions generated per answer (ragas' default `strictness`).
const RELEVANCY_QUESTIONS: usize = 3;

/// ragas **answer relevancy**: the judge writes questions the answer would
/// answer, and says whether the answer is noncommittal ("I don't know");
/// score = mean cosine similarity between the embeddings of the input and
/// of each generated question, times 0 when the answer is noncommittal.
///
/// ragas (`ResponseRelevancy`) samples `strictness` = 3 generations of one
/// question each; at temperature 0 with a fixed seed those would be three
/// copies of one question, so we ask for 3 *different* questions in one call.
/// The formula over the questions is ragas'.
pub(super) async fn answer_relevancy(
    sample: &Sample,
    response: &Response,
    services: &Services,
    (usage, embeddings): (&mut Usage, &mut Usage),
    why: &mut Option<String>,
) -> Result<f64, MetricError> {
    let judge = judge(services, "answer_relevancy")?;
    let embedder = services.embedder.as_ref().map_err(|e| {
        format!(
            "`answer_relevancy` needs embeddings (set EVAL_EMBED_URL and EVAL_EMBED_MODEL): {e}"
        )
    })?;
    let reply = judge
        .ask_checked(
            "answer_relevancy",
            ANSWER_RELEVANCY_VERSION,
            (&format!(
                "TASK answer_relevancy/questions. Write {RELEVANCY_QUESTIONS} different questions \
                 that the answer answers, and say whether the answer is noncommittal (evasive, \
                 vague or \"I don't know\": 1) or not (0). Reply with JSON only: \
                 {{\"questions\": [\"...\"], \"noncommittal\": 0}}."
            ),
             &format!("Answer: {}", response.output)),
            usage,
            &|v| strings(v, "questions").map(|_| ()),
        )
        .await
        .map_err(MetricError::Service)?;
    let questions = strings(&reply, "questions")?;
    if questions.is_empty() {
        return Err("the judge generated no questions".into());
    }
    let noncommittal = flags(
        &serde_json::json!({"n": [{"v": reply["noncommittal"]}]}),
        "n",
        "v",
    )
    .map_err(|_| "the judge's `noncommittal` is not 1 or 0".to_string())?[0];
    let mut texts = vec![sample.input.last()];
    texts.extend(questions.iter().map(String::as_str));
    let vectors = embedder
        .embed(&texts, embeddings)
        .await
        .map_err(MetricError::Service)?;
    let mean = vectors[1..]
        .iter()
        .map(|q| cosine(&vectors[0], q))
        .sum::<f64>()
        / questions.len() as f64;
    if noncommittal {
        *why = Some("the judge found the answer noncommittal (evasive or vague)".into());
    }
    Ok(if noncommittal { 0.0 } else { mean })
}
