//! The services model-based metrics use: an LLM judge and an embeddings
//! server (any OpenAI-compatible endpoint), with an on-disk answer cache.
//! Calls are bounded (timeout, retries with backoff honouring
//! `Retry-After`) and counted ([`Usage`]); keys never appear in messages.

mod cache;
mod dry;
mod embed;
mod endpoint;
mod judge;
pub mod prompt;

pub use cache::Cache;
pub use dry::Calls;
pub(crate) use dry::{DryRun, Tokenizer};
pub use embed::{Embedder, cosine};
pub use endpoint::{ServiceError, Usage};
pub use judge::{AnswerProblem, DEFAULT_SEED, Judge, MAX_REASKS};
pub use prompt::{DataBlock, JudgePrompt, PromptError, Rendered};

use crate::config::Config;
use crate::config::Pricing;

/// The judge and embedder a run uses (each may be missing), the prices its
/// samples' costs are computed with, and the cassette agent answers are
/// recorded into or replayed from.
#[derive(Debug, Clone)]
pub struct Services {
    /// The LLM judge, or why there is none.
    pub judge: Result<Judge, ServiceError>,
    /// The embeddings server, or why there is none.
    pub embedder: Result<Embedder, ServiceError>,
    /// `EVAL_AGENT_CASSETTE`: where agent answers are recorded, or replayed
    /// from instead of calling the agent.
    pub cassette: Option<std::sync::Arc<crate::cassette::Cassette>>,
    /// `EVAL_PRICES` and `EVAL_AGENT_MODEL` (none: costs are not computed).
    pub pricing: Pricing,
}

impl Services {
    /// Both as `config` names them (`EVAL_JUDGE_*`, `EVAL_EMBED_*`).
    pub fn from_config(config: &Config) -> Services {
        Services {
            judge: Judge::from_config(config),
            embedder: Embedder::from_config(config),
            cassette: crate::cassette::Cassette::from_config(config),
            pricing: Pricing::new(config.prices.clone(), config.agent_model.clone()),
        }
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
        }
    }

    /// The services of `own` settings, else the process's (built once).
    pub fn own_or_global(own: Option<&Config>) -> Services {
        match own {
            Some(config) => Services::from_config(config),
            None => Services::global().clone(),
        }
    }

    /// The process's services, from [`Config::global`], built once (none
    /// when the environment's settings are invalid: that error is reported
    /// by whoever reads the config).
    pub fn global() -> &'static Services {
        static SERVICES: std::sync::OnceLock<Services> = std::sync::OnceLock::new();
        SERVICES.get_or_init(|| match Config::global() {
            Ok(config) => Services::from_config(config),
            Err(_) => Services::none(),
        })
    }
}
