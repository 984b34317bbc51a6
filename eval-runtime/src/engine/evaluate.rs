//! One sample, whichever front end asked: check it has what its metrics
//! need, ask the agent (each run bounded by the sample timeout), score
//! (bounded too), and build a [`SampleReport`].

use std::future::Future;
use std::time::{Duration, Instant};

use eval_datasets::metric::{MetricSpec, Need};
use eval_datasets::{Expected, Sample};

use crate::agent::Response;
use crate::metrics;
use crate::metrics::{MetricError, judged, measured};
use crate::model::{AgentError, SampleError};
use crate::output::{MetricResult, SampleReport, Spread};
use crate::services::{Services, Usage};
use crate::stats::{Decision, Level, OnInconclusive};
use eval_datasets::Repeat;

/// The first field a metric needs that `sample` lacks.
pub fn missing_fields(sample: &Sample, specs: &[MetricSpec]) -> Option<SampleError> {
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
                Need::Expected => sample.expected.is_some(),
                Need::Context => !sample.context.is_empty(),
                Need::ReferenceContexts => !sample.reference_contexts.is_empty(),
                Need::RelevantIds => sample.retrieval.is_some(),
                Need::ExpectedTools => sample.expected_tools.is_some(),
                _ => true,
            };
            if !present {
                let aliases = match need {
                    Need::Expected => {
                        " (or expected_output, ground_truth, ideal, reference, expected_response)"
                    }
                    Need::ExpectedTools => " (or expectedTools, ragas reference_tool_calls)",
                    _ => "",
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

/// How a sample's runs are made and judged: how many ([`Repeat`]), and what
/// an inconclusive metric counts as.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Runs {
    pub repeat: Repeat,
    pub policy: OnInconclusive,
}

impl Runs {
    /// The confidence level of each look at a metric's interval: 95% for a
    /// fixed number of runs; under `auto`, 95% split evenly over the looks
    /// it may make (Bonferroni: after 3, 6, 12, ... runs and at the
    /// maximum), so the chance that any look's interval misses the true
    /// mean — and the verdict it stops on is wrong — stays at most 5%.
    pub fn level(self) -> Level {
        Level::STANDARD.split_over(self.repeat.looks())
    }
}

/// Evaluates one sample over one or more runs of the agent (`repeat`):
/// `run(k)` starts run `k` (`None`: there is none). Each run is scored; over
/// several, a metric's score is their mean with its interval (see
/// [`Spread`]), and its verdict is where the interval lies against the
/// threshold. Under `repeat = "auto"` the verdict is looked at after 3, 6,
/// 12, ... runs and runs stop at the first look where no metric is
/// inconclusive, or at the maximum. A
/// run that fails fails the sample, naming the run.
pub async fn evaluate_runs<F, Fut>(
    test_name: String,
    sample: &Sample,
    specs: &[MetricSpec],
    timeout: Duration,
    runs: Runs,
    mut run: F,
    services: &Services,
) -> SampleReport
where
    F: FnMut(usize) -> Option<Fut>,
    Fut: Future<Output = Result<Response, AgentError>>,
{
    let mut report = SampleReport::new(test_name.clone(), sample);
    if let Some(reason) = missing_fields(sample, specs).or_else(|| {
        judged::missing_for_setup(sample, specs, services).map(SampleError::MetricSetup)
    }) {
        report.error = Some(reason);
        return report;
    }
    let n = runs.repeat.max_runs() as usize;
    let looks = runs.repeat.look_points();
    let level = runs.level();
    let mut scored: Vec<SampleReport> = Vec::with_capacity(looks[0] as usize);
    for k in 0..n {
        if k > 0 && looks.contains(&(k as u32)) && decided(specs, &scored, level) {
            break;
        }
        let Some(agent) = run(k) else {
            break;
        };
        let started = Instant::now();
        let outcome = match tokio::time::timeout(timeout, agent).await {
            Ok(outcome) => outcome.map_err(SampleError::Agent),
            Err(_) => Err(SampleError::Timeout {
                secs: timeout.as_secs_f64(),
            }),
        };
        // A replayed answer took the time it took when recorded.
        let latency = match &outcome {
            Ok(response) => response.replayed_latency.unwrap_or(started.elapsed()),
            Err(_) => started.elapsed(),
        };
        // A failed agent call still says what it spent.
        let failed_calls = match &outcome {
            Err(SampleError::Agent(e)) => Some(e.calls_made()),
            _ => None,
        };
        // Judging is bounded too: retries and re-asks cannot stall a sample.
        let mut run = match tokio::time::timeout(
            timeout,
            score(
                SampleReport::new(test_name.clone(), sample),
                sample,
                specs,
                outcome,
                services,
            ),
        )
        .await
        {
            Ok(run) => run,
            Err(_) => {
                let mut run = SampleReport::new(test_name.clone(), sample);
                run.error = Some(SampleError::ScoringTimeout {
                    secs: timeout.as_secs_f64(),
                });
                run
            }
        };
        run.latency = latency;
        if let Some(spent) = failed_calls {
            run.agent = spent;
        }
        // What it cost is known once the judge has answered; then the
        // measured metrics (latency, time to first token, cost) are scored.
        match services.pricing.cost(&run, services) {
            Some(Ok(cost)) => run.cost_usd = Some(cost),
            Some(Err(why)) => run.cost_unknown = Some(why),
            None => {}
        }
        measured::fill(&mut run, specs);
        if let Some(e) = run.error.take() {
            // What the earlier runs cost still counts.
            for earlier in scored.iter().chain(std::iter::once(&run)) {
                report.add_costs(earlier);
            }
            add_cost(&mut report, scored.iter().chain(std::iter::once(&run)));
            report.error = Some(if n > 1 {
                SampleError::Run {
                    run: k + 1,
                    runs: n,
                    error: Box::new(e),
                }
            } else {
                e
            });
            return report;
        }
        scored.push(run);
    }
    if scored.is_empty() {
        report.error = Some(SampleError::NoRuns);
        return report;
    }
    if n == 1 {
        return scored.pop().unwrap_or(report);
    }
    combine(report, specs, scored, (level, runs.policy))
}

/// Whether every metric's interval over `runs` lies on one side of its
/// threshold (a metric without a score in some run is decided: the sample
/// fails).
fn decided(specs: &[MetricSpec], runs: &[SampleReport], level: Level) -> bool {
    let mut scores = Vec::with_capacity(runs.len());
    specs.iter().enumerate().all(|(m, spec)| {
        scores.clear();
        for run in runs {
            match run.metrics.get(m).and_then(|r| r.score) {
                Some(s) => scores.push(s),
                None => return true,
            }
        }
        Spread::at(&scores, spec, level).decision != Decision::Inconclusive
    })
}

/// The cost of every run of a sample, in `report`: their sum, or unknown
/// (with the first reason) when one run's is.
fn add_cost<'a>(report: &mut SampleReport, runs: impl Iterator<Item = &'a SampleReport>) {
    let mut total = Some(0.0);
    for run in runs {
        total = total.zip(run.cost_usd).map(|(a, b)| a + b);
        if report.cost_unknown.is_none() {
            report.cost_unknown = run.cost_unknown.clone();
        }
    }
    report.cost_usd = total.filter(|_| report.cost_unknown.is_none());
}

/// The mean of each metric over the runs, with its spread; whether it
/// passed is where its interval lies, an inconclusive one counting as
/// `policy` says.
fn combine(
    mut report: SampleReport,
    specs: &[MetricSpec],
    runs: Vec<SampleReport>,
    (level, policy): (Level, OnInconclusive),
) -> SampleReport {
    for run in &runs {
        report.add_costs(run);
    }
    add_cost(&mut report, runs.iter());
    if let Some(last) = runs.last() {
        report.tool_calls = last.tool_calls.clone();
        report.context = last.context.clone();
        report.retrieved = last.retrieved.clone();
        report.model = last.model.clone();
    }
    report.metrics = specs
        .iter()
        .enumerate()
        .map(|(m, spec)| {
            let mut scores = Vec::with_capacity(runs.len());
            for (k, run) in runs.iter().enumerate() {
                let result = &run.metrics[m];
                match result.score {
                    Some(s) => scores.push(s),
                    None => {
                        let mut failed = result.clone();
                        failed.error = Some(MetricError::Run {
                            run: k + 1,
                            runs: runs.len(),
                            error: Box::new(
                                result.error.clone().unwrap_or_else(|| "no score".into()),
                            ),
                        });
                        return failed;
                    }
                }
            }
            let spread = Spread::at(&scores, spec, level);
            let mut result = MetricResult::of(spec, Ok(spread.mean));
            result.passed = policy.passes(spread.decision, result.passed);
            result.method = runs[0].metrics[m].method;
            // The raw value (deepeval direction, 1-5 rating) is averaged too.
            let raws: Vec<f64> = runs.iter().filter_map(|r| r.metrics[m].raw).collect();
            if raws.len() == runs.len() {
                result.raw = Some(raws.iter().sum::<f64>() / raws.len() as f64);
            }
            result.spread = Some(spread);
            // Why: as the last run said (each run's reason is of that run).
            result.reason = runs
                .last()
                .and_then(|r| r.metrics[m].reason.clone())
                .map(|r| format!("run {n}/{n}: {r}", n = runs.len()));
            result
        })
        .collect();
    report.output = runs.last().and_then(|r| r.output.clone());
    report
}

/// The scores of `specs` on a fixed answer (`response`), with no agent
/// run: what calibrating a metric against human labels scores.
pub(crate) async fn score_one(
    sample: &Sample,
    specs: &[MetricSpec],
    response: Response,
    services: &Services,
) -> SampleReport {
    let report = SampleReport::new(sample.id.clone(), sample);
    if let Some(reason) = missing_fields(sample, specs).or_else(|| {
        judged::missing_for_setup(sample, specs, services).map(SampleError::MetricSetup)
    }) {
        let mut report = report;
        report.error = Some(reason);
        return report;
    }
    score(report, sample, specs, Ok(response), services).await
}

/// Fills `report` from the agent's outcome: an error, or every metric's score
/// (model-based ones through `services`).
pub(crate) async fn score(
    mut report: SampleReport,
    sample: &Sample,
    specs: &[MetricSpec],
    outcome: Result<Response, SampleError>,
    services: &Services,
) -> SampleReport {
    let response = match outcome {
        Err(e) => {
            report.error = Some(e);
            return report;
        }
        Ok(r) => r,
    };
    report.agent = response.usage;
    report.ttft = response.ttft;
    report.model = response.model.clone();
    report.tool_calls = response.tool_calls.clone();
    report.context = response.context.clone();
    report.retrieved = response.retrieved.clone();
    // A sample's metrics are independent: their judge and embedding calls
    // run at once (each service bounds its own calls in flight). Metrics
    // that call nothing are scored in place.
    let scored = if specs.iter().any(judged::is_model_based) {
        futures_util::future::join_all(
            specs
                .iter()
                .map(|spec| score_metric(spec, sample, &response, services)),
        )
        .await
    } else {
        let mut scored = Vec::with_capacity(specs.len());
        for spec in specs {
            scored.push(score_metric(spec, sample, &response, services).await);
        }
        scored
    };
    let mut metrics = Vec::with_capacity(specs.len());
    for (result, judge, embeddings) in scored {
        report.usage.add(judge);
        report.embeddings.add(embeddings);
        metrics.push(result);
    }
    report.metrics = metrics;
    report.output = Some(if response.turn_outputs.len() > 1 {
        crate::output::numbered(&response.turn_outputs)
    } else {
        response.output
    });
    report
}

/// One metric of a sample, with the judge and embedding calls it made.
async fn score_metric(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> (MetricResult, Usage, Usage) {
    if let Some(turn) = spec.turn {
        score_turn(spec, turn, sample, response, services).await
    } else if measured::is_measured(spec) {
        // Scored from what was measured, once the run is over.
        (measured::pending(spec), Usage::default(), Usage::default())
    } else if judged::is_model_based(spec) {
        let scored = score_judged(spec, sample, response, services).await;
        (
            judged_result(spec, &scored),
            scored.usage,
            scored.embeddings,
        )
    } else {
        let result = score_sample(spec, sample, response);
        (result, Usage::default(), Usage::default())
    }
}

/// The result of a model-based metric.
fn judged_result(spec: &MetricSpec, scored: &judged::Scored) -> MetricResult {
    let mut result =
        MetricResult::of(spec, scored.score.clone()).with_reason(scored.reason.clone());
    result.method = scored.method;
    result.raw = scored.raw;
    result
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
) -> (MetricResult, Usage, Usage) {
    // A tool metric scores that turn's calls, not its answer.
    if let Some(result) = metrics::tools::score(spec, sample, response, Some(turn)) {
        return (
            explained(MetricResult::of(spec, result), || {
                metrics::tools::explain(spec, sample, response, Some(turn))
            }),
            Usage::default(),
            Usage::default(),
        );
    }
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
            return (
                MetricResult::of(spec, Err(error)),
                Usage::default(),
                Usage::default(),
            );
        }
    };
    let expected = sample.expected_for_turn(turn);
    if !judged::is_model_based(spec) {
        let result = MetricResult::of(spec, metrics::score(spec, output, expected));
        return (result, Usage::default(), Usage::default());
    }
    let mut one = sample.clone();
    one.input =
        eval_datasets::Input::Turns(turns[..=turn.min(turns.len().saturating_sub(1))].to_vec());
    one.expected = expected.map(|e| Expected::Text(e.to_string()));
    one.accepted_answers.clear();
    let answer = Response::new(output.clone()).with_context(response.context.clone());
    let scored = judged::score(spec, &one, &answer, services).await;
    (
        judged_result(spec, &scored),
        scored.usage,
        scored.embeddings,
    )
}

/// A model-based metric. A metric that compares with the expected answer,
/// on a sample with one expected answer per turn, scores every turn (the
/// conversation up to it, its answer, its expected answer) and averages, as
/// the deterministic metrics do; other metrics judge the final answer.
async fn score_judged(
    spec: &MetricSpec,
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
        _ => return judged::score(spec, sample, response, services).await,
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
                async move { judged::score(spec, &turn, &answer, services).await }
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

fn score_sample(spec: &MetricSpec, sample: &Sample, response: &Response) -> MetricResult {
    if let eval_datasets::metric::MetricKind::Rank(metric) = spec.kind {
        return score_rank(spec, metric, sample, response);
    }
    if let Some(result) = metrics::tools::score(spec, sample, response, None) {
        return explained(MetricResult::of(spec, result), || {
            metrics::tools::explain(spec, sample, response, None)
        });
    }
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
                    .map(|(exp, out)| metrics::score(spec, out, Some(exp)))
                    .sum::<Result<f64, MetricError>>()
                    .map(|total| total / expected.len() as f64)
            }
        }
        // OpenAI evals' `ideal` list: any of the answers is accepted.
        Some(Expected::Text(_)) if accepted.len() > 1 => accepted
            .iter()
            .map(|a| metrics::score(spec, &response.output, Some(a)))
            .reduce(|best, next| match (best, next) {
                (Ok(a), Ok(b)) => Ok(a.max(b)),
                (Ok(a), Err(_)) | (Err(_), Ok(a)) => Ok(a),
                (Err(e), Err(_)) => Err(e),
            })
            .unwrap_or_else(|| Err("no accepted answer".into())),
        other => metrics::score(spec, &response.output, other.as_ref().map(Expected::last)),
    };
    MetricResult::of(spec, result)
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
    let scores =
        crate::metrics::rank::metrics_at_k(&response.retrieved, &query.relevant_ids, query.top_k);
    let mut result = explained(MetricResult::of(spec, Ok(scores.get(metric))), || {
        Some(crate::metrics::rank::explain(
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
            "turn 1 has no expected answer here (a conversation's answers are read per turn when every turn has one, else only the last turn's), which metric `contains@turn1` needs"
        );
        s.expected = Some(Expected::PerTurn(vec!["x".into(), "y".into()]));
        assert_eq!(missing_fields(&s, &[spec(0), spec(1)]), None);
    }

    #[tokio::test]
    async fn a_turns_metric_scores_that_turns_answer() {
        let mut s = Sample::new("").with_turns(["a", "b"]);
        s.expected = Some(Expected::PerTurn(vec!["One".into(), "two".into()]));
        let specs = [
            MetricSpec::new("contains", &[], None).unwrap().for_turn(0),
            MetricSpec::new("contains", &[], None).unwrap().for_turn(1),
        ];
        let services = Services::none();
        let report = |r: Response| {
            score(
                SampleReport::new("t".into(), &s),
                &s,
                &specs,
                Ok(r),
                &services,
            )
        };
        let got = report(Response::new("").with_turn_outputs(["one!", "three"])).await;
        let scores: Vec<_> = got
            .metrics
            .iter()
            .map(|m| (m.name.as_str(), m.score))
            .collect();
        assert_eq!(
            scores,
            [("contains@turn1", Some(1.0)), ("contains@turn2", Some(0.0))]
        );
        let got = report(Response::new("only the last")).await;
        assert_eq!(
            got.metrics[0].error.as_ref().unwrap().to_string(),
            "`contains@turn1` scores turn 1 but the agent returned 0 per-turn answer(s) (an in-process agent sets them with Response::with_turn_outputs)"
        );
    }
}
