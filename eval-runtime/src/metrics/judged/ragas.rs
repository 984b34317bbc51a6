//! ragas metrics (Es et al., 2023, and the ragas metric documentation):
//! faithfulness, answer similarity, context recall and precision, answer
//! relevancy, with ragas' non-LLM variants.

use eval_datasets::Sample;

use serde_json::Value;

use super::*;
use crate::services::cosine;

/// ragas **faithfulness**: the answer is broken into statements and each is
/// checked against the retrieved context (ragas' two steps, asked in one
/// question); score = statements supported / statements. Context comes from the agent's
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
    // One question: the answer's statements, and a verdict on each against
    // the context (ragas asks them in two steps; the score is the same
    // share of statements supported). The context comes first, as in the
    // sample's other questions on it, for the judge's prompt cache.
    let prompt = FAITHFULNESS
        .prompt(format!(
            "Split the answer (block answer, to the question in block question) into short self-contained statements, pronouns replaced by what they name. For each statement, in order, give 1 if the context (blocks context_1 to context_{}) supports it directly, else 0. Reply with JSON only: {{\"statements\": [\"...\"], \"verdicts\": [1, 0]}}, one verdict per statement.",
            context.len()
        ))
        .numbered("context", context)
        .block("question", sample.input.last())
        .block("answer", response.output.as_str());
    // An estimate assumes a statement per sentence of the answer.
    let shape = [
        (
            "statements",
            Field::Strings(Assume::Sentences(&response.output)),
        ),
        ("verdicts", Field::FlagsFor("statements")),
    ];
    let reply = ask(judge, &prompt, &shape, usage).await?;
    let statements = reply::strings(&reply, "statements")?;
    if statements.is_empty() {
        return Err("the judge found no statements in the answer to check".into());
    }
    let verdicts = reply::flags(&reply, "verdicts")?;
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
    let reply = match reference_question(judge, sample, context, &expected, usage).await {
        Ok(r) => r,
        Err(e) => return (Err(e), None),
    };
    let score = reply::flags(&reply, "attributed").and_then(|f| {
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

/// Average precision over ranked relevance verdicts, as ragas computes
/// context precision: `Σ_k precision@k · v_k / Σ_k v_k` (0 when no chunk is
/// relevant; ragas adds 1e-10 to the denominator instead).
pub(crate) fn average_precision(verdicts: &[bool]) -> f64 {
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
    let verdicts = match reference_question(judge, sample, context, &expected, usage).await {
        Ok(r) => reply::flags(&r, "useful").map_err(MetricError::from),
        Err(e) => Err(e),
    };
    (
        verdicts.map(|v| {
            *why = Some(format!(
                "{} (ranks {})",
                tally(&v, true, "retrieved chunks useful for the expected answer"),
                positions(&v, true)
            ));
            average_precision(&v)
        }),
        None,
    )
}

/// The question context precision and context recall share (ragas asks
/// them apart): whether each retrieved chunk was useful for arriving at
/// the reference answer (`useful`, one per chunk, in order), and whether
/// each statement of the reference answer is supported by the context
/// (`attributed`). Both metrics ask it with the same bytes, so the judge
/// sends it once per sample.
async fn reference_question(
    judge: &Judge,
    sample: &Sample,
    context: &[String],
    expected: &str,
    usage: &mut Usage,
) -> Result<Value, MetricError> {
    let n = context.len();
    let prompt = CONTEXT_REFERENCE
        .prompt(format!(
            "useful: for each context chunk (blocks context_1 to context_{n}), in order, 1 if it was useful for arriving at the reference answer (block expected_answer) to the question (block question), else 0. attributed: split the reference answer into statements; for each, in order, 1 if the context supports it, else 0. Reply with JSON only: {{\"useful\": [1, 0], \"attributed\": [1, 0]}}."
        ))
        .numbered("context", context)
        .block("question", sample.input.last())
        .block("expected_answer", expected);
    // An estimate assumes a statement per sentence of the reference.
    let shape = [
        ("useful", Field::Flags(Some((n, "context chunks")))),
        ("attributed", Field::FlagsPer(Assume::Sentences(expected))),
    ];
    ask(judge, &prompt, &shape, usage).await
}

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
    let prompt = ANSWER_RELEVANCY
        .prompt(format!(
            "Write {RELEVANCY_QUESTIONS} different questions that the answer (block answer) answers, and say whether the answer is noncommittal (evasive, vague or \"I don't know\": 1) or not (0). Reply with JSON only: {{\"questions\": [\"...\"], \"noncommittal\": 0}}."
        ))
        .block("answer", response.output.as_str());
    // An estimate assumes questions as long as the sample's.
    let assume = Assume::Copies(RELEVANCY_QUESTIONS, sample.input.last());
    let shape = [
        ("questions", Field::Strings(assume)),
        ("noncommittal", Field::Flag),
    ];
    let reply = ask(judge, &prompt, &shape, usage).await?;
    let questions = reply::strings(&reply, "questions")?;
    if questions.is_empty() {
        return Err("the judge generated no questions".into());
    }
    let noncommittal = reply::one_flag(&reply, "noncommittal")?;
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

#[cfg(test)]
mod tests {
    use super::average_precision;

    #[test]
    fn average_precision_matches_hand_values() {
        // [1, 0, 1, 1]: (1/1 + 2/3 + 3/4) / 3
        let ap = average_precision(&[true, false, true, true]);
        assert!((ap - (1.0 + 2.0 / 3.0 + 3.0 / 4.0) / 3.0).abs() < 1e-12);
        assert_eq!(average_precision(&[false, false]), 0.0);
        assert_eq!(average_precision(&[true]), 1.0);
        // [0, 1]: (1/2) / 1
        assert_eq!(average_precision(&[false, true]), 0.5);
    }
}
