//! One sample evaluated directly, outside a plan: what an eval function of
//! your own (or a test of a metric) calls.

use eval_datasets::Sample;
use eval_datasets::metric::MetricSpec;

use crate::agent::{IntoAgentResult, Response};
use crate::config::{self, Config};
use crate::engine;
use crate::model::{AgentError, SampleError, SampleReport};
use crate::services::Services;

/// Evaluates one sample: `agent` is the (not yet started) call to the agent,
/// bounded by `timeout`, as is the scoring; model-based metrics use `services`.
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
