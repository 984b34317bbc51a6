//! One sample, whichever front end asked: check it has what its metrics
//! need, ask the agent (each run bounded by the sample timeout), score
//! (bounded too), and build a [`SampleReport`].

use std::future::Future;
use std::time::{Duration, Instant};

use eval_datasets::Sample;
use eval_datasets::metric::MetricSpec;

use crate::agent::Response;
use crate::metrics;
use crate::metrics::{MetricError, measured};
use crate::model::meter::{Meter, Role};
use crate::model::{AgentError, SampleError, Usage};
use crate::output::{MetricResult, SampleReport, Spread};
use crate::services::Services;
use crate::stats::{Decision, Design, Level, OnInconclusive};
use eval_datasets::Repeat;

/// How a sample's runs are made and judged: how many ([`Repeat`]), and what
/// an inconclusive metric counts as.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Runs {
    pub repeat: Repeat,
    pub policy: OnInconclusive,
}

impl Runs {
    /// How a metric's runs are gathered: up to the most runs the repeat
    /// allows, looked at after 3, 6, 12, ... runs and at the maximum under
    /// `auto`. The chance that any look's interval misses the true mean —
    /// and the verdict it stops on is wrong — stays at most 5%: the betting
    /// interval of a metric with a known range holds at every look at once;
    /// Student's t (a count) gets 95% split evenly over the looks
    /// (Bonferroni).
    pub(crate) fn design(self) -> Design {
        Design {
            level: Level::STANDARD,
            horizon: self.repeat.max_runs() as usize,
            looks: self.repeat.looks(),
            across_samples: false,
        }
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
pub(crate) async fn evaluate_runs<F, Fut>(
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
    if let Some(reason) = metrics::missing(sample, specs, services) {
        report.error = Some(reason);
        return report;
    }
    if let Some(e) = services.traces.setup_error() {
        report.error = Some(SampleError::Traces(e.clone()));
        return report;
    }
    let n = runs.repeat.max_runs() as usize;
    let looks = runs.repeat.look_points();
    let sampling = runs.design();
    let mut scored: Vec<SampleReport> = Vec::with_capacity(looks[0] as usize);
    for k in 0..n {
        if k > 0 && looks.contains(&(k as u32)) && decided(specs, &scored, sampling) {
            break;
        }
        let Some(agent) = run(k) else {
            break;
        };
        let mut run = one_run(&test_name, sample, specs, timeout, agent, services).await;
        if let Some(e) = run.error.take() {
            // What the earlier runs cost still counts.
            for earlier in scored.iter().chain(std::iter::once(&run)) {
                report.add_costs(earlier);
                report.agent_spans.extend_from_slice(&earlier.agent_spans);
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
    combine(report, specs, scored, (sampling, runs.policy))
}

/// One run of the agent on `sample`: the agent's answer (bounded by
/// `timeout`, under the run's trace), scored (bounded too), with what it
/// spent, cost and the measured metrics.
async fn one_run<Fut>(
    test_name: &str,
    sample: &Sample,
    specs: &[MetricSpec],
    timeout: Duration,
    agent: Fut,
    services: &Services,
) -> SampleReport
where
    Fut: Future<Output = Result<Response, AgentError>>,
{
    // Each request of this run starts a trace (when the run propagates
    // them), under which the agent's spans come back.
    let trace = services.traces.sample();
    let agent = async {
        match &trace {
            Some(t) => t.scope(agent).await,
            None => agent.await,
        }
    };
    // What the run spends is metered as it goes: a run cut short (a
    // timeout, a failed call) still says what it spent.
    let meter = Meter::new();
    let started = Instant::now();
    let mut outcome = match tokio::time::timeout(timeout, meter.scope(Role::Agent, agent)).await {
        Ok(outcome) => outcome.map_err(SampleError::Agent),
        Err(_) => Err(SampleError::Timeout {
            secs: timeout.as_secs_f64(),
        }),
    };
    // A replayed answer took the time it took when recorded.
    let latency = match &outcome {
        Ok(response) => response.measured_latency.unwrap_or(started.elapsed()),
        Err(_) => started.elapsed(),
    };
    // An agent run outside the engine's scheduling (a sample evaluated
    // directly): its spans now, outside its time.
    if let Ok(response) = &mut outcome
        && let Some(trace) = &trace
    {
        trace
            .scope(collect_trajectory(&services.traces, response))
            .await;
    }
    // A failed or timed-out agent still says what it spent: what the
    // meter counted (every call made, the tokens of those answered),
    // else what the error tells.
    let metered = meter.spent().agent;
    // Embeddings the agent's own code asked for (a RAG agent embedding
    // its query) before it failed: kept with the sample's.
    let agent_embeddings = meter.spent().embeddings;
    let failed_calls = match &outcome {
        Err(SampleError::Agent(_) | SampleError::Timeout { .. }) if metered != Usage::ZERO => {
            Some(metered)
        }
        Err(SampleError::Agent(e)) => Some(e.calls_made()),
        _ => None,
    };
    let answered = outcome.as_ref().ok().map(|r| (r.usage, r.model.clone()));
    // Judging is bounded too: retries and re-asks cannot stall a sample.
    let scoring = score(
        SampleReport::new(test_name.to_string(), sample),
        sample,
        specs,
        outcome,
        services,
    );
    let mut run = match tokio::time::timeout(timeout, meter.scope(Role::Judge, scoring)).await {
        Ok(mut run) => {
            if failed_calls.is_some() {
                run.embeddings.add(agent_embeddings);
            }
            run
        }
        Err(_) => {
            // Cut short: the agent's usage, and the judge's and the
            // embeddings' calls so far, still count (and cost).
            let mut run = SampleReport::new(test_name.to_string(), sample);
            run.error = Some(SampleError::ScoringTimeout {
                secs: timeout.as_secs_f64(),
            });
            let spent = meter.spent();
            if let Some((usage, model)) = answered {
                run.agent = usage;
                run.model = model;
            }
            run.usage = spent.judge;
            run.embeddings = spent.embeddings;
            run
        }
    };
    run.latency = latency;
    if let Some(trace) = &trace {
        run.agent_spans = trace.turns().iter().map(|t| t.agent_span()).collect();
    }
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
    run
}

/// The agent's spans under the running sample's trace, once complete, as
/// `response`'s trajectory: unless the agent set one itself, the spans were
/// collected already, or they hold no step while its answer reports tool
/// calls (then those are its steps). Whether it waited for spans.
pub(crate) async fn collect_trajectory(
    tracing: &crate::otel::Tracing,
    response: &mut Response,
) -> bool {
    if response.trajectory.is_some() {
        return false;
    }
    let Some(trajectory) = tracing.trajectory_in_scope().await else {
        return false;
    };
    if !trajectory.steps.is_empty() || response.tool_calls.is_empty() {
        response.trajectory = Some(trajectory);
    }
    true
}

/// Whether every metric's interval over `runs` lies on one side of its
/// threshold (a metric without a score in some run is decided: the sample
/// fails).
fn decided(specs: &[MetricSpec], runs: &[SampleReport], sampling: Design) -> bool {
    let mut scores = Vec::with_capacity(runs.len());
    specs.iter().enumerate().all(|(m, spec)| {
        scores.clear();
        for run in runs {
            match run.metrics.get(m).and_then(|r| r.score) {
                Some(s) => scores.push(s),
                None => return true,
            }
        }
        Spread::at(&scores, spec, sampling).decision != Decision::Inconclusive
    })
}

/// The cost of every run of a sample, in `report`: their sum, or unknown
/// (with the first reason) when one run's is.
fn add_cost<'a>(report: &mut SampleReport, runs: impl Iterator<Item = &'a SampleReport>) {
    let mut total = Some(0.0);
    for run in runs {
        total = total
            .zip(run.cost_usd)
            .map(|(a, b)| crate::model::UsageTotals::add_cost(a, b));
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
    (sampling, policy): (Design, OnInconclusive),
) -> SampleReport {
    for run in &runs {
        report.add_costs(run);
        report.agent_spans.extend_from_slice(&run.agent_spans);
    }
    add_cost(&mut report, runs.iter());
    if let Some(last) = runs.last() {
        report.tool_calls = last.tool_calls.clone();
        report.trajectory = last.trajectory.clone();
        report.context = last.context.clone();
        report.retrieved = last.retrieved.clone();
        report.retrieved_scores = last.retrieved_scores.clone();
        report.model = last.model.clone();
        report.response_id = last.response_id.clone();
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
            let spread = Spread::at(&scores, spec, sampling);
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
    if let Some(reason) = metrics::missing(sample, specs, services) {
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
    let mut response = match outcome {
        Err(e) => {
            report.error = Some(e);
            return report;
        }
        Ok(r) => r,
    };
    // An agent that reports its tool calls only in its spans is scored as
    // one that reports them in its answer.
    if response.tool_calls.is_empty()
        && let Some(trajectory) = &response.trajectory
    {
        response.tool_calls = trajectory.tool_calls();
    }
    report.trajectory = response.trajectory.clone();
    report.agent = response.usage;
    report.ttft = response.ttft;
    report.model = response.model.clone();
    report.response_id = response.response_id.clone();
    report.tool_calls = response.tool_calls.clone();
    report.context = response.context.clone();
    report.retrieved = response.retrieved.clone();
    report.retrieved_scores = response.retrieved_scores.clone();
    // A sample's metrics are independent: their judge and embedding calls
    // run at once (each service bounds its own calls in flight). Metrics
    // that call nothing are scored in place.
    let scored = if specs.iter().any(metrics::is_model_based) {
        futures_util::future::join_all(
            specs
                .iter()
                .map(|spec| metrics::score(spec, sample, &response, services)),
        )
        .await
    } else {
        let mut scored = Vec::with_capacity(specs.len());
        for spec in specs {
            scored.push(metrics::score(spec, sample, &response, services).await);
        }
        scored
    };
    let mut metrics = Vec::with_capacity(specs.len());
    for scored in scored {
        report.usage.add(scored.judge);
        report.embeddings.add(scored.embeddings);
        metrics.push(scored.result);
    }
    report.metrics = metrics;
    report.output = Some(if response.turn_outputs.len() > 1 {
        crate::output::numbered(&response.turn_outputs)
    } else {
        response.output
    });
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval_datasets::Expected;

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
