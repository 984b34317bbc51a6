//! Agents: what a sample is sent to, and what comes back.
//!
//! An in-process agent is just the function you write: an
//! `async fn(&Sample) -> Response` ([`FnAgent`]) or a plain
//! `fn(&Sample) -> Response` ([`SyncFnAgent`], called on a thread of its own,
//! outside any async runtime, so it may start one). [`HttpAgent`] talks to
//! any agent over HTTP (see [its module](http) for the contract). Your own
//! type implements [`Agent`].

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use eval_datasets::{Sample, ToolCall};
use serde::Serialize;

use crate::model::AgentError;
use crate::model::Usage;

#[cfg(feature = "http")]
mod anthropic;
#[cfg(feature = "http")]
mod contract;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod mapped;
#[cfg(feature = "http")]
pub mod openai;
#[cfg(feature = "http")]
mod pace;
#[cfg(feature = "http")]
mod sse;
#[cfg(feature = "http")]
pub mod stream;
mod tokens;
mod wire;

pub use crate::model::Sampling;
#[cfg(feature = "http")]
pub use contract::default_reply;
pub use eval_datasets::{AgentSettings, Protocol};
#[cfg(feature = "http")]
pub use http::HttpAgent;
#[cfg(feature = "http")]
pub(crate) use tokens::estimate_unreported;
pub(crate) use tokens::{Tokenizer, unreported_reply};
pub use wire::{AgentReply, AgentRequest, Message};

/// A boxed future, as [`Agent::respond`] returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// What an agent answered for one sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Response {
    /// The final answer (to the last user turn).
    pub output: String,
    /// Context the agent retrieved for the final answer.
    pub context: Vec<String>,
    /// The answer to each user turn, in order, for a multi-turn sample
    /// (empty for a single prompt).
    pub turn_outputs: Vec<String>,
    /// For a retrieval query: the ids (`sourceId`s) of the documents
    /// retrieved, best first; what the rank metrics score.
    pub retrieved: Vec<String>,
    /// The score of each retrieved document, in the same order, when the
    /// retriever (or its reranker) gave one for every document.
    pub retrieved_scores: Vec<f64>,
    /// Every tool call the agent made, in order (each names its user turn):
    /// what the tool metrics score.
    pub tool_calls: Vec<ToolCall>,
    /// The agent's calls and tokens (from its `usage`), retries and
    /// answers replayed from a cassette (`cache_hits`).
    pub usage: Usage,
    /// Time to the first token of a streamed answer (the first turn's).
    pub ttft: Option<Duration>,
    /// The model that answered, when the agent said (OpenAI `model`): what
    /// the price table is looked up by.
    pub model: Option<String>,
    /// The id the agent gave its answer (OpenAI chat completions' `id`; the
    /// last turn's): an exported evaluation carries it as
    /// `gen_ai.response.id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The steps the agent took (LLM calls, tool calls, retrievals), when
    /// known: the engine fills it from the spans an agent reports under the
    /// trace its requests carried (see the guide's "Traces" chapter); an
    /// in-process agent may set it itself ([`with_steps`](Self::with_steps)).
    pub trajectory: Option<crate::model::Trajectory>,
    /// The time in the agent, when known better than the engine's clock
    /// around the call: replayed from a cassette, the time it took when
    /// recorded; traced, the time before the wait for its spans (what
    /// latency metrics see).
    #[serde(skip)]
    pub(crate) measured_latency: Option<Duration>,
}

impl Response {
    /// A response with just an output.
    pub fn new(output: impl Into<String>) -> Self {
        Response {
            output: output.into(),
            ..Response::default()
        }
    }

    /// Sets the retrieved context.
    pub fn with_context<I, S>(mut self, context: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.context = context.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the retrieved document ids, best first (retrieval queries).
    pub fn with_retrieved<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.retrieved = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the tool calls the agent made, in order.
    pub fn with_tool_calls<I>(mut self, calls: I) -> Self
    where
        I: IntoIterator<Item = ToolCall>,
    {
        self.tool_calls = calls.into_iter().collect();
        self
    }

    /// Sets the steps the agent took, in order (what the trajectory
    /// metrics score; its tool steps are its tool calls when none are set).
    pub fn with_steps<I>(mut self, steps: I) -> Self
    where
        I: IntoIterator<Item = crate::model::Step>,
    {
        self.trajectory = Some(crate::model::Trajectory {
            steps: steps.into_iter().collect(),
            source: crate::model::TrajectorySource::Answer,
            ..crate::model::Trajectory::default()
        });
        self
    }

    /// Sets the tokens the agent used (prompt, completion), for cost.
    pub fn with_tokens(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage.prompt_tokens = prompt_tokens;
        self.usage.completion_tokens = completion_tokens;
        self
    }

    /// Sets the model that answered.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the per-turn answers (the last one also becomes [`Response::output`]).
    pub fn with_turn_outputs<I, S>(mut self, outputs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.turn_outputs = outputs.into_iter().map(Into::into).collect();
        if let Some(last) = self.turn_outputs.last() {
            self.output = last.clone();
        }
        self
    }
}

impl From<String> for Response {
    fn from(output: String) -> Self {
        Response::new(output)
    }
}

impl From<&str> for Response {
    fn from(output: &str) -> Self {
        Response::new(output)
    }
}

/// What an eval function may return: a [`Response`] (or anything that
/// converts into one), or a `Result` of it with any displayable error.
#[diagnostic::on_unimplemented(
    message = "an eval function must return `Response` or `Result<Response, E>` (E: Display), not `{Self}`",
    label = "this function's return type",
    note = "e.g. `async fn rag(sample: &Sample) -> eval_runtime::Result<Response>`"
)]
pub trait IntoAgentResult {
    /// The response, or why the agent failed.
    fn into_agent_result(self) -> Result<Response, AgentError>;
}

impl IntoAgentResult for Response {
    fn into_agent_result(self) -> Result<Response, AgentError> {
        Ok(self)
    }
}

impl IntoAgentResult for String {
    fn into_agent_result(self) -> Result<Response, AgentError> {
        Ok(Response::new(self))
    }
}

impl<T: Into<Response>, E: std::fmt::Display + 'static> IntoAgentResult for Result<T, E> {
    fn into_agent_result(self) -> Result<Response, AgentError> {
        self.map(Into::into).map_err(AgentError::from_display)
    }
}

/// Anything samples can be sent to: [`HttpAgent`], an async function in
/// [`FnAgent`], a plain function in [`SyncFnAgent`],
/// [`RetrieverAgent`](crate::retrieval::RetrieverAgent), or your own type.
///
/// ```
/// use eval_runtime::{Agent, AgentError, BoxFuture, Response, Sample};
///
/// /// An agent that looks answers up in a table.
/// struct Lookup(std::collections::HashMap<String, String>);
///
/// impl Agent for Lookup {
///     fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
///         let answer = self.0.get(sample.input.last()).cloned();
///         Box::pin(async move {
///             answer
///                 .map(Response::new)
///                 .ok_or_else(|| AgentError::from_display("no answer in the table"))
///         })
///     }
/// }
///
/// let agent = Lookup([("capital?".to_string(), "Paris".to_string())].into());
/// let spec = eval_runtime::MetricSpec::new("contains", &[], None).unwrap();
/// let sample = Sample::new("capital?").with_expected("Paris");
/// let report = eval_runtime::evaluate_blocking("lookup", &sample, &[spec], async |s: &Sample| {
///     agent.respond(s).await
/// });
/// assert!(report.passed(), "{}", report.render());
/// ```
pub trait Agent: Send + Sync + 'static {
    /// Answers one sample.
    fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>>;

    /// The agent's own settings that shape its answers (protocol, model,
    /// sampling; never a URL or a key): part of what a cassette keys an
    /// answer by, so a replay after they change is a miss naming them.
    fn cassette_settings(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// This agent with what the plan says about agents (a manifest's
    /// `spec.evaluation.agent`: protocol, model, streaming) applied where
    /// the agent's own code chose nothing (`HttpAgent::under_plan`);
    /// `None` for an agent those settings do not concern (in-process
    /// agents, retrievers), which the engine then says.
    fn with_plan_settings(&self, _settings: &AgentSettings) -> Option<std::sync::Arc<dyn Agent>> {
        None
    }

    /// This agent answering as `model` (a letta suite's model handle: its
    /// dataset `{suite}@{model}` runs with it), whatever model it was set
    /// up with; `None` for an agent without a model setting (in-process
    /// agents read the model from each sample's `agent_args.model`).
    fn with_model(&self, _model: &str) -> Option<std::sync::Arc<dyn Agent>> {
        None
    }
}

#[cfg(feature = "http")]
impl Agent for HttpAgent {
    fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
        Box::pin(HttpAgent::respond_to(self, sample))
    }

    fn cassette_settings(&self) -> serde_json::Value {
        HttpAgent::cassette_settings(self)
    }

    fn with_plan_settings(&self, settings: &AgentSettings) -> Option<std::sync::Arc<dyn Agent>> {
        Some(std::sync::Arc::new(self.clone().under_plan(settings)))
    }

    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn Agent>> {
        Some(std::sync::Arc::new(self.clone().model(model)))
    }
}

/// An agent that could not be set up (e.g. `HttpAgent::from_env()` without
/// `EVAL_AGENT_URL`): every sample fails with the reason, on one line.
impl<A: Agent> Agent for crate::Result<A> {
    fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
        match self {
            Ok(agent) => agent.respond(sample),
            Err(e) => {
                let reason = AgentError::Setup(e.to_string().into());
                Box::pin(async move { Err(reason) })
            }
        }
    }

    fn cassette_settings(&self) -> serde_json::Value {
        self.as_ref()
            .map_or(serde_json::Value::Null, Agent::cassette_settings)
    }

    fn with_plan_settings(&self, settings: &AgentSettings) -> Option<std::sync::Arc<dyn Agent>> {
        self.as_ref().ok()?.with_plan_settings(settings)
    }

    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn Agent>> {
        self.as_ref().ok()?.with_model(model)
    }
}

/// An in-process agent: any `async fn(&Sample) -> R` (`R`: [`Response`] or a `Result` of one).
///
/// ```
/// use eval_runtime::plan::PlanBuilder;
/// use eval_runtime::{Config, FnAgent, Response, Runner, Sample};
///
/// async fn echo(sample: &Sample) -> Response {
///     Response::new(format!("You said: {}", sample.input.last()))
/// }
///
/// let samples = vec![Sample::new("Paris").with_expected("paris")];
/// let plan = PlanBuilder::new().samples("echo", samples, "contains");
/// let runner = Runner::new().config(Config::empty());
/// let outcome = runner.prepare(plan).unwrap().evaluate(&FnAgent(echo), |_| {}).unwrap();
/// assert!(outcome.verdict.passed());
/// ```
pub struct FnAgent<F>(pub F);

impl<F, R> Agent for FnAgent<F>
where
    F: AsyncFn(&Sample) -> R + Send + Sync + 'static,
    R: IntoAgentResult,
{
    fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
        Box::pin(async move { (self.0)(sample).await.into_agent_result() })
    }
}

/// An in-process agent that blocks: any `fn(&Sample) -> R`. Each call runs
/// on a thread of its own, outside any async runtime (the function may start
/// its own), so many run at once; when the sample timeout expires the sample
/// fails and the call is left to finish on its thread.
///
/// ```
/// use eval_runtime::plan::PlanBuilder;
/// use eval_runtime::{Config, Response, Runner, Sample, SyncFnAgent};
///
/// // A blocking client, e.g. one that starts its own runtime.
/// fn shout(sample: &Sample) -> Result<Response, std::io::Error> {
///     Ok(Response::new(sample.input.last().to_uppercase()))
/// }
///
/// let samples = vec![Sample::new("paris").with_expected("PARIS")];
/// let plan = PlanBuilder::new().samples("shout", samples, "exact_match(case_sensitive = true)");
/// let runner = Runner::new().config(Config::empty());
/// let outcome = runner.prepare(plan).unwrap().evaluate(&SyncFnAgent(shout), |_| {}).unwrap();
/// assert_eq!(outcome.results.samples().len(), 1);
/// assert!(outcome.verdict.passed());
/// ```
pub struct SyncFnAgent<F>(pub F);

impl<F, R> Agent for SyncFnAgent<F>
where
    F: Fn(&Sample) -> R + Clone + Send + Sync + 'static,
    R: IntoAgentResult,
{
    fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
        // The thread starts when the future is first polled: a sample that
        // fails its checks before the agent call never reaches the agent.
        Box::pin(async move {
            let f = self.0.clone();
            let sample = sample.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            let spawned = std::thread::Builder::new()
                .name("eval-sync-agent".into())
                .spawn(move || {
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        f(&sample).into_agent_result()
                    }))
                    .unwrap_or_else(|panic| Err(AgentError::Panicked(panic_text(&panic))));
                    let _ = tx.send(outcome);
                });
            if let Err(e) = spawned {
                return Err(AgentError::Setup(
                    format!("cannot start a thread for the agent: {e}").into(),
                ));
            }
            rx.await.unwrap_or_else(|_| {
                Err(AgentError::Panicked(
                    "its thread ended without an answer".into(),
                ))
            })
        })
    }
}

/// The message of a panic, on one line.
pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    crate::model::one_line(&msg, 300)
}
