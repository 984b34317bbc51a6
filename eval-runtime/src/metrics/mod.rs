//! Scoring. Which metrics exist, their defaults and needs are declared in
//! [`eval_datasets::metric`]; this module computes them.
//!
//! | metric | score |
//! |---|---|
//! | `exact_match` (alias `string_match`) | 1 if the trimmed output equals the trimmed expected answer (the whole answer), else 0. Case-insensitive unless `case_sensitive = true`. |
//! | `contains` | 1 if the output contains the trimmed expected answer, else 0. Case-insensitive unless `case_sensitive = true`. runevals' ExactMatch is this metric (seed 003: it passes when the answer contains the expected string). |
//! | `regex` | 1 if the regex (the expected answer, as letta-evals datasets write it, or the `pattern` option) matches anywhere in the output, else 0. Case-insensitive unless `case_sensitive = true`. A pattern over [`MAX_REGEX_BYTES`] is refused before it is parsed; each pattern is compiled once. |
//! | `partial_match` | SQuAD token F1 (see [`token_f1`]), 0..1, default threshold 0.5 as runevals' PartialMatch. |
//!
//! | `faithfulness`, `answer_similarity`, `context_recall` | see [`judged`]: LLM judge / embeddings, with offline variants |
//! | `tool_called`, `tool_correctness`, `tool_call_accuracy`, `tool_call_f1` | see [`tools`]: the agent's tool calls against the expected ones |
//! | `trajectory_match`, `steps`, `repeated_calls`, `step_latency_ms`, `step_tokens` | see [`trajectory`]: the steps the agent took (from its spans) |
//!
//! A sample whose `expected` is one answer per turn is scored turn by turn
//! and gets the mean.

use eval_datasets::metric::{MetricKind, MetricSpec, Need, TextMetric};
use eval_datasets::{Expected, Sample};

use crate::agent::Response;
use crate::model::{MetricResult, SampleError, Scored, Usage};
use crate::services::Services;

pub(crate) mod exec;
pub(crate) mod json;
pub(crate) mod judged;
pub(crate) mod measured;
pub(crate) mod rank;
mod text;
pub(crate) mod tools;
pub(crate) mod trajectory;
pub(crate) mod user;

pub(crate) use crate::model::MetricError;
pub(crate) use judged::is_model_based;

/// What `sample` lacks for `specs`, known before the agent is called: a
/// field a metric needs, or what a metric needs of its setup here (a
/// context metric scored offline needs `reference_contexts`).
pub(crate) fn missing(
    sample: &Sample,
    specs: &[MetricSpec],
    services: &Services,
) -> Option<SampleError> {
    missing_fields(sample, specs).or_else(|| {
        judged::missing_for_setup(sample, specs, services).map(SampleError::MetricSetup)
    })
}

/// The first field a metric needs that `sample` lacks.
pub(crate) fn missing_fields(sample: &Sample, specs: &[MetricSpec]) -> Option<SampleError> {
    for spec in specs {
        if let Some(turn) = spec.turn
            && spec.needs().contains(&Need::Expected)
            && sample.expected_for_turn(turn).is_none()
        {
            return Some(SampleError::MissingTurnExpected {
                turn: turn + 1,
                metric: spec.name.clone(),
            });
        }
        for need in spec.needs() {
            let present = match need {
                // A turn's metric reads that turn's answer, checked above.
                Need::Expected => spec.turn.is_some() || sample.expected.is_some(),
                Need::Context => !sample.context.is_empty(),
                Need::ReferenceContexts => !sample.reference_contexts.is_empty(),
                Need::RelevantIds => sample.retrieval.is_some(),
                Need::ExpectedTools => sample.expected_tools.is_some(),
            };
            if !present {
                let aliases = match need {
                    Need::Expected => {
                        " (or expected_output, ground_truth, ideal, reference, expected_response)"
                    }
                    Need::ExpectedTools => " (or expectedTools, ragas reference_tool_calls)",
                    Need::Context | Need::ReferenceContexts | Need::RelevantIds => "",
                };
                return Some(SampleError::MissingField {
                    field: need.to_string(),
                    aliases,
                    metric: spec.name.clone(),
                });
            }
        }
    }
    None
}

/// One metric of a sample (the engine's one call into the metrics): its
/// result, with the judge and embedding calls it made. A metric of one
/// turn scores that turn; measured metrics (latency, cost) are pending
/// until the run is over ([`measured::fill`]); model-based ones ask the
/// judge or embeddings of `services`; the others are computed in place.
/// Each family is one arm: a metric without a scorer does not compile.
pub(crate) async fn score(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> Scored {
    if let Some(turn) = spec.turn {
        return score_turn(spec, turn, sample, response, services).await;
    }
    let result = match &spec.kind {
        MetricKind::Text(kind) => score_text(spec, kind, sample, response),
        MetricKind::Judged(kind) => {
            let scored = score_judged(spec, kind, sample, response, services).await;
            return judged_result(spec, scored);
        }
        MetricKind::Rank(metric) => score_rank(spec, *metric, sample, response),
        MetricKind::Tools(kind) => explained(
            MetricResult::of(spec, tools::score(spec, kind, sample, response, None)),
            || tools::explain(kind, sample, response, None),
        ),
        MetricKind::Trajectory(kind) => explained(
            MetricResult::of(spec, trajectory::score(spec, kind, sample, response, None)),
            || trajectory::explain(kind, sample, response, None),
        ),
        // Scored from what was measured, once the run is over.
        MetricKind::Measured(_) => measured::pending(spec),
        MetricKind::User(_) => return user::score(spec, sample, response, services).await,
        MetricKind::Exec(m) => exec::score(spec, m, sample, response, services).await,
    };
    Scored::offline(result)
}

/// The result of a model-based metric.
fn judged_result(spec: &MetricSpec, scored: judged::Scored) -> Scored {
    let mut result = MetricResult::of(spec, scored.score).with_reason(scored.reason);
    result.method = scored.method;
    result.raw = scored.raw;
    Scored {
        result,
        judge: scored.usage,
        embeddings: scored.embeddings,
    }
}

/// A metric of one user turn of a conversation (a runevals turn's
/// evaluator): that turn's answer, against that turn's expected answer; a
/// model-based one judges the conversation up to that turn.
async fn score_turn(
    spec: &MetricSpec,
    turn: usize,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> Scored {
    // A tool metric scores that turn's calls, not its answer; a trajectory
    // metric that turn's steps; the others that turn's answer.
    let of_answer = match &spec.kind {
        MetricKind::Tools(kind) => {
            let result = tools::score(spec, kind, sample, response, Some(turn));
            return Scored::offline(explained(MetricResult::of(spec, result), || {
                tools::explain(kind, sample, response, Some(turn))
            }));
        }
        MetricKind::Trajectory(kind) => {
            let result = trajectory::score(spec, kind, sample, response, Some(turn));
            return Scored::offline(explained(MetricResult::of(spec, result), || {
                trajectory::explain(kind, sample, response, Some(turn))
            }));
        }
        MetricKind::Text(kind) => Ok(kind),
        MetricKind::Judged(kind) => Err(kind),
        // A turn has no ranking or measure of its own (refused when the
        // spec is read; said here too).
        MetricKind::Rank(_)
        | MetricKind::Measured(_)
        | MetricKind::User(_)
        | MetricKind::Exec(_) => {
            let error = format!("`{}` is not scored per turn", spec.name);
            return Scored::offline(MetricResult::of(spec, Err(error.into())));
        }
    };
    let turns = sample.input.turns();
    let output = match response.turn_outputs.get(turn) {
        Some(output) => output,
        // A one-turn conversation is answered as a single prompt.
        None if response.turn_outputs.is_empty() && turns.len() == 1 => &response.output,
        None => {
            let error = MetricError::NoTurnAnswer {
                metric: spec.name.clone(),
                turn: turn + 1,
                answers: response.turn_outputs.len(),
            };
            return Scored::offline(MetricResult::of(spec, Err(error)));
        }
    };
    let expected = sample.expected_for_turn(turn);
    // The text metrics compare the turn's answer; a judged one judges the
    // conversation up to that turn.
    let judged = match of_answer {
        Ok(kind) => {
            let scored = text::score(spec, kind, output, expected);
            let score = scored.as_ref().ok().copied();
            let result = MetricResult::of(spec, scored);
            return Scored::offline(explained(result, || {
                json::explain(spec, output, expected).or_else(|| text::explain(kind, score?, 1))
            }));
        }
        Err(kind) => kind,
    };
    let mut one = sample.clone();
    one.input =
        eval_datasets::Input::Turns(turns[..=turn.min(turns.len().saturating_sub(1))].to_vec());
    one.expected = expected.map(|e| Expected::Text(e.to_string()));
    one.accepted_answers.clear();
    let answer = Response::new(output.clone()).with_context(response.context.clone());
    judged_result(spec, judged::score(judged, &one, &answer, services).await)
}

/// A model-based metric. A metric that compares with the expected answer,
/// on a sample with one expected answer per turn, scores every turn (the
/// conversation up to it, its answer, its expected answer) and averages, as
/// the deterministic metrics do; other metrics judge the final answer.
async fn score_judged(
    spec: &MetricSpec,
    kind: &eval_datasets::metric::JudgedMetric,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> judged::Scored {
    let per_turn = match &sample.expected {
        Some(Expected::PerTurn(expected))
            if spec.needs().contains(&Need::Expected)
                && response.turn_outputs.len() == expected.len()
                && expected.len() > 1 =>
        {
            expected
        }
        _ => return judged::score(kind, sample, response, services).await,
    };
    let turns = sample.input.turns();
    let mut total = judged::Scored {
        score: Ok(0.0),
        method: None,
        usage: Usage::default(),
        embeddings: Usage::default(),
        raw: None,
        reason: None,
    };
    let mut raw_sum = Some(0.0);
    let mut reasons = Vec::new();
    // Each turn is judged on its own: all at once.
    let scored = futures_util::future::join_all(
        per_turn
            .iter()
            .zip(&response.turn_outputs)
            .enumerate()
            .map(|(k, (expected, output))| {
                let mut turn = sample.clone();
                turn.input = eval_datasets::Input::Turns(
                    turns[..=k.min(turns.len().saturating_sub(1))].to_vec(),
                );
                turn.expected = Some(Expected::Text(expected.clone()));
                let answer = Response::new(output.clone()).with_context(response.context.clone());
                async move { judged::score(kind, &turn, &answer, services).await }
            }),
    )
    .await;
    for (k, scored) in scored.into_iter().enumerate() {
        total.usage.add(scored.usage);
        total.embeddings.add(scored.embeddings);
        total.method = total.method.or(scored.method);
        raw_sum = raw_sum.zip(scored.raw).map(|(a, b)| a + b);
        if let Some(r) = &scored.reason {
            reasons.push(format!("turn {}: {r}", k + 1));
        }
        total.score = match (total.score, scored.score) {
            (Ok(a), Ok(b)) => Ok(a + b),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(format!("turn {}: {e}", k + 1).into()),
        };
    }
    let n = per_turn.len() as f64;
    total.score = total.score.map(|s| s / n);
    total.raw = raw_sum.map(|r| r / n);
    total.reason = (!reasons.is_empty() && total.score.is_ok()).then(|| reasons.join("; "));
    total
}

/// `result` with why it failed, when its score is on the wrong side of the
/// threshold: a deterministic metric's reason is worked out only then (a
/// large run keeps one per failure, not one per score).
fn explained(result: MetricResult, why: impl FnOnce() -> Option<String>) -> MetricResult {
    if result.passed || result.score.is_none() {
        return result;
    }
    result.with_reason(why())
}

/// A metric of the answer's text, against the expected answer(s): one per
/// turn gives the mean, an `ideal` list the best.
fn score_text(
    spec: &MetricSpec,
    kind: &TextMetric,
    sample: &Sample,
    response: &Response,
) -> MetricResult {
    let accepted = &sample.accepted_answers;
    let result = match &sample.expected {
        Some(Expected::PerTurn(expected)) => {
            if response.turn_outputs.len() != expected.len() {
                Err(format!(
                    "the sample expects {} per-turn answers but the agent returned {} (an in-process agent sets them with Response::with_turn_outputs)",
                    expected.len(),
                    response.turn_outputs.len()
                )
                .into())
            } else {
                expected
                    .iter()
                    .zip(&response.turn_outputs)
                    .map(|(exp, out)| text::score(spec, kind, out, Some(exp)))
                    .sum::<Result<f64, MetricError>>()
                    .map(|total| total / expected.len() as f64)
            }
        }
        // OpenAI evals' `ideal` list: any of the answers is accepted.
        Some(Expected::Text(_)) if accepted.len() > 1 => accepted
            .iter()
            .map(|a| text::score(spec, kind, &response.output, Some(a)))
            .reduce(|best, next| match (best, next) {
                (Ok(a), Ok(b)) => Ok(a.max(b)),
                (Ok(a), Err(_)) | (Err(_), Ok(a)) => Ok(a),
                (Err(e), Err(_)) => Err(e),
            })
            .unwrap_or_else(|| Err("no accepted answer".into())),
        other => text::score(
            spec,
            kind,
            &response.output,
            other.as_ref().map(Expected::last),
        ),
    };
    // why a structured-output check failed, or in words what a text
    // metric's score says
    let score = result.as_ref().ok().copied();
    explained(MetricResult::of(spec, result), || {
        let expected = sample.expected.as_ref().map(Expected::last);
        json::explain(spec, &response.output, expected)
            .or_else(|| text::explain(kind, score?, accepted.len()))
    })
}

/// A rank metric of a retrieval query (see [`eval_datasets::retrieval`]). A query
/// with no relevant documents scores 0 as Unrag defines it, and is not held
/// to the threshold: finding nothing relevant is what it expects.
fn score_rank(
    spec: &MetricSpec,
    metric: eval_datasets::retrieval::RankMetric,
    sample: &Sample,
    response: &Response,
) -> MetricResult {
    let Some(query) = &sample.retrieval else {
        return MetricResult::of(
            spec,
            Err(format!("`{}` needs the query's relevant.sourceIds", spec.name).into()),
        );
    };
    let scores = rank::metrics_at_k(&response.retrieved, &query.relevant_ids, query.top_k);
    let mut result = explained(MetricResult::of(spec, Ok(scores.get(metric))), || {
        Some(rank::explain(
            &response.retrieved,
            &query.relevant_ids,
            query.top_k,
        ))
    });
    if query.relevant_ids.is_empty() {
        result.passed = true;
        result.method = Some("no relevant documents: nothing to find, not held to the threshold");
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turns_metric_needs_that_turns_expected_answer() {
        let mut s = Sample::new("").with_turns(["a", "b"]);
        s.expected = Some(Expected::Text("last".into()));
        let spec = |turn| {
            MetricSpec::new("contains", &[], None)
                .unwrap()
                .for_turn(turn)
        };
        assert_eq!(missing_fields(&s, &[spec(1)]), None, "the last turn's");
        let e = missing_fields(&s, &[spec(0)]).unwrap();
        assert_eq!(
            e.to_string(),
            "turn 1 has no expected answer (`expected_response`), which metric `contains@turn1` needs"
        );
        s.expected = Some(Expected::PerTurn(vec!["x".into(), "y".into()]));
        assert_eq!(missing_fields(&s, &[spec(0), spec(1)]), None);
        // Seed 003: a turn without an answer leaves the others theirs.
        s.expected = None;
        s.turn_expected = vec![Some("x".into()), None];
        assert_eq!(missing_fields(&s, &[spec(0)]), None, "turn 1 has its own");
        let e = missing_fields(&s, &[spec(1)]).unwrap();
        assert_eq!(
            e.to_string(),
            "turn 2 has no expected answer (`expected_response`), which metric `contains@turn2` needs"
        );
    }
}
