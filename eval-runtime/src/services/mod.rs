//! The services model-based metrics use: an LLM judge and an embeddings
//! server (any OpenAI-compatible endpoint), with an on-disk answer cache.
//! Calls are bounded (timeout, retries with backoff honouring
//! `Retry-After`) and counted ([`Usage`]); keys never appear in messages.

mod cache;
mod client;
pub(crate) mod dry;
mod embed;
#[cfg(feature = "http")]
mod endpoint;
#[cfg(not(feature = "http"))]
#[path = "endpoint_off.rs"]
mod endpoint;
pub(crate) mod judge;
#[cfg(feature = "http")]
pub(crate) mod langsmith;
pub(crate) mod prompt;
mod warm;

pub use crate::config::Structured;
pub use cache::Cache;
pub use embed::{Embedder, cosine};
pub use endpoint::{ServiceError, Usage};
pub use judge::{AnswerProblem, Judge};
pub use prompt::{JudgePrompt, PromptError};
// The rest is the engine's and the `evals` command's (`__cli::services`).
pub(crate) use crate::config::Pricing;
pub(crate) use dry::{DryRun, Tokenizer};
pub(crate) use judge::Answer;
pub(crate) use prompt::{DataBlock, Rendered};

use crate::config::Config;

/// The judge and embedder a run uses (each may be missing), the prices its
/// samples' costs are computed with, and the cassette agent answers are
/// recorded into or replayed from.
///
/// ```
/// use eval_runtime::services::{Embedder, Judge};
/// use eval_runtime::{Config, Services};
///
/// // What the environment configures (`EVAL_JUDGE_URL`, `EVAL_EMBED_URL`, ...):
/// let services = Services::from_config(&Config::empty());
/// assert!(services.judge.is_err(), "no judge configured");
/// // Or in code, for a harness or runner:
/// let services = Services::none()
///     .with_judge(Judge::new("http://127.0.0.1:9000/v1/chat/completions", "gpt-4o-mini").unwrap())
///     .with_embedder(Embedder::new("http://127.0.0.1:9000/v1/embeddings", "text-embedding-3-small").unwrap());
/// assert_eq!(services.judge.as_ref().unwrap().model(), "gpt-4o-mini");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Services {
    /// The LLM judge, or why there is none.
    pub judge: Result<Judge, ServiceError>,
    /// The embeddings server, or why there is none.
    pub embedder: Result<Embedder, ServiceError>,
    /// `EVAL_AGENT_CASSETTE`: where agent answers are recorded, or replayed
    /// from instead of calling the agent.
    pub(crate) cassette: Option<std::sync::Arc<crate::cassette::Cassette>>,
    /// `EVAL_PRICES` and `EVAL_AGENT_MODEL` (none: costs are not computed).
    #[doc(hidden)]
    pub pricing: Pricing,
    /// Where files a metric names are read from when relative (a
    /// `rubric_file` scored outside a plan, which reads its own): the
    /// config's [`base_dir`](Config::base_dir).
    #[doc(hidden)]
    pub base_dir: std::path::PathBuf,
    /// What the run does with traces: `traceparent` on agent requests, the
    /// agent's spans received (`EVAL_OTLP_RECEIVER`).
    pub(crate) traces: crate::otel::Tracing,
    /// External scorers (`exec` metrics) running at once: as many as the
    /// samples in flight (`EVAL_CONCURRENCY`).
    pub(crate) scorer_permits: std::sync::Arc<tokio::sync::Semaphore>,
}

impl Services {
    /// Both as `config` names them (`EVAL_JUDGE_*`, `EVAL_EMBED_*`).
    /// Judge and embedding calls in flight are bounded together by the
    /// config's [`judge_concurrency`](Config::judge_concurrency).
    pub fn from_config(config: &Config) -> Services {
        let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(config.judge_concurrency()));
        Services {
            judge: Judge::from_config(config).map(|j| j.share_permits(permits.clone())),
            embedder: Embedder::from_config(config).map(|e| e.share_permits(permits)),
            cassette: crate::cassette::Cassette::from_config(config),
            pricing: Pricing::new(config.prices.clone(), config.agent_model.clone()),
            base_dir: config.base_dir(),
            traces: crate::otel::Tracing::new(&config.traces),
            scorer_permits: std::sync::Arc::new(tokio::sync::Semaphore::new(
                config.concurrency_or(None),
            )),
        }
    }

    /// These services with `judge`.
    pub fn with_judge(mut self, judge: Judge) -> Services {
        self.judge = Ok(judge);
        self
    }

    /// These services with `embedder`.
    pub fn with_embedder(mut self, embedder: Embedder) -> Services {
        self.embedder = Ok(embedder);
        self
    }

    /// These services pricing samples with `pricing`.
    #[doc(hidden)]
    pub fn with_pricing(mut self, pricing: Pricing) -> Services {
        self.pricing = pricing;
        self
    }

    /// These services reading relative files from `dir`.
    #[doc(hidden)]
    pub fn with_base_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Services {
        self.base_dir = dir.into();
        self
    }

    /// These services doing with traces what `settings` say: the agent's
    /// requests carry a `traceparent`, its spans are received on
    /// `settings.receiver` (started once per process and address) and become
    /// each sample's trajectory.
    #[doc(hidden)]
    pub fn with_traces(mut self, settings: &crate::config::TraceSettings) -> Services {
        self.traces = crate::otel::Tracing::new(settings);
        self
    }

    /// Where this run receives the agent's spans (OTLP/HTTP, at
    /// `http://<addr>/v1/traces`), when it does and could start listening.
    #[doc(hidden)]
    pub fn trace_receiver(&self) -> Option<std::net::SocketAddr> {
        self.traces.receiver_addr()
    }

    /// Neither: every metric uses its offline variant or fails saying what to set.
    pub fn none() -> Services {
        let not_configured = |what| ServiceError::NotConfigured {
            what,
            hint: "none is used in this run".into(),
        };
        Services {
            judge: Err(not_configured("LLM judge")),
            embedder: Err(not_configured("embeddings")),
            cassette: None,
            pricing: Pricing::none(),
            base_dir: std::path::PathBuf::new(),
            traces: crate::otel::Tracing::default(),
            scorer_permits: std::sync::Arc::new(tokio::sync::Semaphore::new(
                crate::config::DEFAULT_CONCURRENCY,
            )),
        }
    }
}
