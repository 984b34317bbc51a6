//! The process's settings, read once from the environment: the only place
//! below the crate root that reaches for them. Every layer under the front
//! ends is given its [`Config`] and [`Services`]; these are the entry points
//! that fetch the process's own (`Config::global`) for code that did not
//! bring any: the attribute's tests, `HttpAgent::from_env()` in an eval
//! function, a harness or runner without `.config(...)`.

#[cfg(feature = "http")]
use crate::agent::HttpAgent;
use crate::config::Config;
use crate::model::ConfigError;
#[cfg(feature = "http")]
use crate::model::{Error, Result};
#[cfg(feature = "http")]
use crate::retrieval::HttpRetriever;
use crate::retrieval::{Retriever, RetrieverAgent};
use crate::services::Services;

impl Config {
    /// `own` settings (a front end's `.config(...)`), else the process's.
    #[doc(hidden)]
    pub fn own_or_global(own: Option<&Config>) -> Result<&Config, ConfigError> {
        match own {
            Some(c) => Ok(c),
            None => Config::global().map_err(Clone::clone),
        }
    }

    /// The largest dataset file to read: the process's
    /// `EVAL_MAX_DATASET_BYTES`, else (unset, or the settings are invalid) 1 GiB.
    #[doc(hidden)]
    pub fn max_dataset_bytes() -> u64 {
        Config::global().map_or(eval_datasets::files::DEFAULT_MAX_DATASET_BYTES, |c| {
            c.max_dataset_bytes
        })
    }
}

impl Services {
    /// The services of `own` settings, else the process's (built once).
    #[doc(hidden)]
    pub fn own_or_global(own: Option<&Config>) -> Services {
        match own {
            Some(config) => Services::from_config(config),
            None => Services::global().clone(),
        }
    }

    /// The process's services, from [`Config::global`], built once (none
    /// when the environment's settings are invalid: that error is reported
    /// by whoever reads the config).
    #[doc(hidden)]
    pub fn global() -> &'static Services {
        static SERVICES: std::sync::OnceLock<Services> = std::sync::OnceLock::new();
        SERVICES.get_or_init(|| match Config::global() {
            Ok(config) => Services::from_config(config),
            Err(_) => Services::none(),
        })
    }
}

#[cfg(feature = "http")]
impl HttpAgent {
    /// The agent the environment names (read once, see [`Config`]):
    ///
    /// * `EVAL_AGENT_URL` (required): where to `POST`;
    /// * `EVAL_AGENT_TIMEOUT_SECS` (default 60): per-request timeout;
    /// * `EVAL_AGENT_API_KEY` (optional): sent as `Authorization: Bearer …`,
    ///   never printed;
    /// * `EVAL_AGENT_PROTOCOL`, `EVAL_AGENT_MODEL`, `EVAL_AGENT_STREAM` and
    ///   the sampling settings (`EVAL_AGENT_TEMPERATURE`, `_TOP_P`,
    ///   `_MAX_TOKENS`, `_SEED`): see [`protocol`](Self::protocol).
    /// * `EVAL_AGENT_MAX_RETRIES` (default 20), `EVAL_AGENT_ADAPTIVE` (default
    ///   on): how overloaded answers are retried and calls paced (see
    ///   [`max_retries`](Self::max_retries), [`adaptive`](Self::adaptive)).
    pub fn from_env() -> Result<Self> {
        Self::from_config(Config::global().map_err(|e| Error::Env(e.clone()))?, None)
    }
}

#[cfg(feature = "http")]
impl HttpRetriever {
    /// From `EVAL_RETRIEVER_URL` (and `EVAL_RETRIEVER_TIMEOUT_SECS`, default 60).
    pub fn from_env() -> Result<HttpRetriever> {
        Self::from_config(Config::global().map_err(|e| Error::Env(e.clone()))?)
    }
}

impl RetrieverAgent {
    /// An agent searching `retriever`, with the process's settings (see
    /// [`with_config`](Self::with_config)).
    pub fn new(retriever: impl Retriever) -> Self {
        let empty;
        let config = match Config::global() {
            Ok(config) => config,
            // Invalid settings are reported by whoever runs the evaluation.
            Err(_) => {
                empty = Config::empty();
                &empty
            }
        };
        RetrieverAgent::with_config(retriever, config)
    }
}
