//! The engine shared by every way in: check the sample has what the metrics
//! need, ask the agent, score, and build a [`SampleReport`].

use std::future::Future;
use std::time::{Duration, Instant};

use eval_core::metric::{MetricSpec, Need};
use eval_core::{Expected, Sample};

use crate::agent::Response;
use crate::metrics;
use crate::metrics::judged::{self, Services};
use crate::report::{MetricResult, SampleReport};

/// Default limit on one sample's whole agent interaction.
pub const DEFAULT_SAMPLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The first field a metric needs that `sample` lacks, as a one-line reason.
pub fn missing_fields(sample: &Sample, specs: &[MetricSpec]) -> Option<String> {
    for spec in specs {
        for need in spec.needs() {
            let present = match need {
                Need::Expected => sample.expected.is_some(),
                Need::Context => !sample.context.is_empty(),
                Need::ReferenceContexts => !sample.reference_contexts.is_empty(),
                _ => true,
            };
            if !present {
                let aliases = match need {
                    Need::Expected => {
                        " (or expected_output, ground_truth, ideal, reference, expected_response)"
                    }
                    _ => "",
                };
                return Some(format!(
                    "sample has no `{need}` field{aliases}, which metric `{}` needs",
                    spec.name
                ));
            }
        }
    }
    None
}

/// The per-sample limit: `EVAL_SAMPLE_TIMEOUT_SECS`, else [`DEFAULT_SAMPLE_TIMEOUT`].
pub fn sample_timeout() -> crate::Result<Duration> {
    match crate::agent::env_var("EVAL_SAMPLE_TIMEOUT_SECS")? {
        Some(v) => crate::agent::parse_secs("EVAL_SAMPLE_TIMEOUT_SECS", &v),
        None => Ok(DEFAULT_SAMPLE_TIMEOUT),
    }
}

/// Evaluates one sample: `agent` is the (not yet started) call to the agent.
/// Model-based metrics use the judge and embedder of the environment.
pub async fn evaluate<F>(
    test_name: String,
    sample: &Sample,
    specs: &[MetricSpec],
    timeout: Duration,
    agent: F,
) -> SampleReport
where
    F: Future<Output = Result<Response, String>>,
{
    evaluate_with(
        test_name,
        sample,
        specs,
        timeout,
        agent,
        Services::from_env_once(),
    )
    .await
}

/// [`evaluate`] with the given judge and embedder.
pub async fn evaluate_with<F>(
    test_name: String,
    sample: &Sample,
    specs: &[MetricSpec],
    timeout: Duration,
    agent: F,
    services: &Services,
) -> SampleReport
where
    F: Future<Output = Result<Response, String>>,
{
    let mut report = SampleReport::new(test_name, sample);
    if let Some(reason) = missing_fields(sample, specs) {
        report.error = Some(reason);
        return report;
    }
    let started = Instant::now();
    let outcome = tokio::time::timeout(timeout, agent).await;
    report.latency = started.elapsed();
    match outcome {
        Err(_) => {
            report.error = Some(format!(
                "agent error: no answer within {}s (sample timeout)",
                timeout.as_secs_f64()
            ));
            report
        }
        Ok(outcome) => score(report, sample, specs, outcome, services).await,
    }
}

/// Evaluates one sample with a blocking agent call, on the calling thread and
/// outside any async runtime (so the agent may start its own). The sample
/// timeout cannot interrupt it.
pub fn evaluate_sync(
    test_name: String,
    sample: &Sample,
    specs: &[MetricSpec],
    agent: impl FnOnce() -> Result<Response, String>,
) -> SampleReport {
    let mut report = SampleReport::new(test_name, sample);
    if let Some(reason) = missing_fields(sample, specs) {
        report.error = Some(reason);
        return report;
    }
    let started = Instant::now();
    let outcome = agent();
    report.latency = started.elapsed();
    // The agent is done: model-based metrics may now use the shared runtime.
    crate::__private::runtime().block_on(score(
        report,
        sample,
        specs,
        outcome,
        Services::from_env_once(),
    ))
}

/// Fills `report` from the agent's outcome: an error, or every metric's score
/// (model-based ones through `services`).
pub(crate) async fn score(
    mut report: SampleReport,
    sample: &Sample,
    specs: &[MetricSpec],
    outcome: Result<Response, String>,
    services: &Services,
) -> SampleReport {
    let response = match outcome {
        Err(reason) => {
            report.error = Some(if reason.starts_with("agent") {
                reason
            } else {
                format!("agent error: {reason}")
            });
            return report;
        }
        Ok(r) => r,
    };
    let mut metrics = Vec::with_capacity(specs.len());
    for spec in specs {
        metrics.push(if judged::is_model_based(spec) {
            let scored = judged::score(spec, sample, &response, services).await;
            report.usage.add(scored.usage);
            let mut result = metric_result(spec, scored.score);
            result.method = scored.method;
            result.raw = scored.raw;
            result
        } else {
            score_sample(spec, sample, &response)
        });
    }
    report.metrics = metrics;
    report.output = Some(if response.turn_outputs.len() > 1 {
        crate::report::numbered(&response.turn_outputs)
    } else {
        response.output
    });
    report
}

fn score_sample(spec: &MetricSpec, sample: &Sample, response: &Response) -> MetricResult {
    let result = match &sample.expected {
        Some(Expected::PerTurn(expected)) => {
            if response.turn_outputs.len() != expected.len() {
                Err(format!(
                    "the sample expects {} per-turn answers but the agent returned {} (an in-process agent sets them with Response::with_turn_outputs)",
                    expected.len(),
                    response.turn_outputs.len()
                ))
            } else {
                expected
                    .iter()
                    .zip(&response.turn_outputs)
                    .map(|(exp, out)| metrics::score(spec, out, Some(exp)))
                    .sum::<Result<f64, String>>()
                    .map(|total| total / expected.len() as f64)
            }
        }
        other => metrics::score(spec, &response.output, other.as_ref().map(Expected::last)),
    };
    metric_result(spec, result)
}

fn metric_result(spec: &MetricSpec, result: Result<f64, String>) -> MetricResult {
    let (score, error) = match result {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e)),
    };
    MetricResult {
        name: spec.name.clone(),
        passed: score.is_some_and(|s| spec.passes(s)),
        score,
        op: spec.op,
        threshold: spec.threshold,
        error,
        method: None,
        raw: None,
    }
}
