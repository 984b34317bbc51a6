//! One sample evaluated directly, outside a plan: what an eval function of
//! your own (or a test of a metric) calls.

use eval_datasets::Sample;
use eval_datasets::metric::MetricSpec;

use crate::agent::{IntoAgentResult, Response};
use crate::config::{self, Config};
use crate::engine;
use crate::model::{AgentError, SampleError, SampleReport, Scored};
use crate::services::Services;

/// Evaluates one sample: `agent` is the (not yet started) call to the agent,
/// bounded by `timeout`, as is the scoring; model-based metrics use `services`.
///
/// ```
/// use std::time::Duration;
/// use eval_runtime::prelude::*;
/// use eval_runtime::{AgentError, Services};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let sample = Sample::new("2 + 2?").with_expected("4");
/// let specs = [MetricSpec::new("exact_match", &[], None).unwrap()];
/// let agent = async { Ok::<_, AgentError>(Response::new("5")) };
/// let report = eval_runtime::evaluate_with(
///     "math::add".into(), &sample, &specs, Duration::from_secs(5), agent, &Services::none(),
/// )
/// .await;
/// assert!(!report.passed());
/// assert_eq!(report.metrics[0].score, Some(0.0));
/// # }
/// ```
pub async fn evaluate_with<F>(
    test_name: String,
    sample: &Sample,
    specs: &[MetricSpec],
    timeout: std::time::Duration,
    agent: F,
    services: &Services,
) -> SampleReport
where
    F: std::future::Future<Output = std::result::Result<Response, AgentError>>,
{
    let mut agent = Some(agent);
    engine::evaluate::evaluate_runs(
        test_name,
        sample,
        specs,
        timeout,
        engine::evaluate::Runs::default(),
        |_| agent.take(),
        services,
    )
    .await
}

/// Evaluates one sample with an in-process agent, blocking the current thread
/// (which must not be inside an async runtime), with the environment's
/// judge, embedder and sample timeout.
///
/// ```
/// use eval_runtime::prelude::*;
///
/// async fn agent(sample: &Sample) -> Result<Response, std::io::Error> {
///     Ok(Response::new(format!("{} is the capital of France", sample.input.last())))
/// }
///
/// let sample = Sample::new("Paris").with_expected("capital of France");
/// let specs = [MetricSpec::new("contains", &[], None).unwrap()];
/// let report = eval_runtime::evaluate_blocking("geo::paris", &sample, &specs, agent);
/// assert!(report.passed(), "{}", report.render());
/// ```
pub fn evaluate_blocking<F, R>(
    test_name: &str,
    sample: &Sample,
    specs: &[MetricSpec],
    agent: F,
) -> SampleReport
where
    F: AsyncFn(&Sample) -> R,
    R: IntoAgentResult,
{
    let timeout = Config::global().map_or(config::DEFAULT_SAMPLE_TIMEOUT, |c| {
        c.sample_timeout_or(None)
    });
    let evaluation = evaluate_with(
        test_name.to_string(),
        sample,
        specs,
        timeout,
        async { agent(sample).await.into_agent_result() },
        Services::global(),
    );
    match engine::schedule::local_runtime() {
        Ok(runtime) => runtime.block_on(evaluation),
        Err(e) => {
            let mut report = SampleReport::new(test_name.to_string(), sample);
            report.error = Some(SampleError::Agent(AgentError::Setup(
                format!("cannot start an async runtime: {e}").into(),
            )));
            report
        }
    }
}

/// Scores one metric on an answer you already have: no agent is called.
/// Model-based metrics ask the judge and embeddings of `services`
/// (`Services::none()` for offline scoring); a metric measured over a run
/// (latency, time to first token, cost) has no score here. This is what
/// calibrating a metric, or a metric's own test, calls.
///
/// ```
/// use eval_runtime::prelude::*;
/// use eval_runtime::Services;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let sample = Sample::new("What is the capital of France?").with_expected("Paris");
/// let spec = MetricSpec::new("partial_match", &[], None).unwrap();
/// let answer = Response::new("Paris is the capital.");
/// let scored = eval_runtime::score(&spec, &sample, &answer, &Services::none()).await;
/// // SQuAD F1: 1 shared token of 3 in the answer (`the` is dropped), 1 of 1 expected.
/// assert!((scored.result.score.unwrap() - 0.5).abs() < 1e-9);
/// assert!(scored.result.passed);
/// assert_eq!(scored.judge.calls, 0);
/// # }
/// ```
pub async fn score(
    spec: &MetricSpec,
    sample: &Sample,
    answer: &Response,
    services: &Services,
) -> Scored {
    crate::metrics::score(spec, sample, answer, services).await
}
