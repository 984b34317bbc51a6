//! Every setting the environment gives, read once, in one place.
//!
//! [`Config::global`] reads the process environment the first time it is
//! asked and keeps the outcome: every front end (the attribute, the harness,
//! the `evals` command) and every client (agent, judge, embeddings,
//! retriever, cache, results) takes its settings from here, so they all
//! apply the same rules. A bad value is an error naming the variable and the
//! value; every bad value is reported at once.
//!
//! Colour (`NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`) is decided with whether
//! the output is a terminal, once per process, in
//! [`Paint`](crate::output::Paint): not here.
//!
//! The settings, one row each (the same table is the guide's configuration
//! reference, `docs/src/configuration.md`, which includes this file):
//!
#![doc = include_str!("config/settings.md")]
//!
//! It also reads the run's context: `NEXTEST` / `NEXTEST_RUN_ID` (one test
//! per process under `cargo nextest run`), `CARGO_MANIFEST_DIR` (where
//! relative paths start) and `CARGO_PKG_NAME` (which package's results).
//! An unknown `EVAL_*` variable one typo away from a known one is reported
//! as a warning (`EVAL_CONCURENCY` → `EVAL_CONCURRENCY`).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// Agent calls in flight at once when nothing says otherwise (ragas uses 16,
/// deepeval 20, promptfoo 4).
pub(crate) const DEFAULT_CONCURRENCY: usize = 16;
/// Most agent calls in flight a setting may ask for.
pub(crate) const MAX_CONCURRENCY: usize = 100_000;
/// Limit on one sample's agent interaction (and, separately, its scoring).
pub(crate) const DEFAULT_SAMPLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Per-request limit of an agent call.
pub(crate) const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Retries of an agent call answered as overloaded (429, 503).
pub(crate) const DEFAULT_AGENT_MAX_RETRIES: u32 = 20;
/// Most retries `EVAL_AGENT_MAX_RETRIES` may ask for.
pub(crate) const MAX_AGENT_RETRIES: u32 = 1000;
/// Per-request limit of a judge or embeddings call.
pub(crate) const DEFAULT_SERVICE_TIMEOUT: Duration = Duration::from_secs(120);
/// Per-request limit of a retriever call.
pub(crate) const DEFAULT_RETRIEVER_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) use crate::model::{BadVar, ConfigError};
pub(crate) use crate::secrets::Secret;

/// The settings of one OpenAI-compatible service (judge or embeddings).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServiceSettings {
    /// `<prefix>_URL`; `None` when the service is not configured.
    pub url: Option<String>,
    /// `<prefix>_MODEL`, else the service's default model.
    pub model: String,
    /// `<prefix>_API_KEY`, else the provider's own variable:
    /// `OPENAI_API_KEY`, `AZURE_OPENAI_API_KEY` or `ANTHROPIC_API_KEY`.
    pub api_key: Option<Secret>,
    /// `<prefix>_TIMEOUT_SECS`, per request.
    pub timeout: Duration,
    /// `EVAL_MAX_RESPONSE_BYTES`.
    pub max_response_bytes: u64,
    /// `<prefix>_PROVIDER` (`None`: implied by the URL), `<prefix>_HEADERS`
    /// and `EVAL_AZURE_API_VERSION`: see [`ProviderSettings`].
    pub wire: ServiceWire,
}

/// Everything the environment says about a run, read once
/// (`Config::global`) and passed down to every client; a bad value is an
/// error naming the variable and the value. The settings, one row each:
///
#[doc = include_str!("config/settings.md")]
///
/// A config can also be read from variables you give, and handed to a
/// front end ([`Harness::config`](crate::Harness::config),
/// [`Runner::config`](crate::Runner::config)):
///
/// ```
/// use eval_runtime::Config;
///
/// let vars = [("EVAL_CONCURRENCY", "4"), ("EVAL_JUDGE_CONCURRENCY", "2")];
/// let var = |name: &str| Ok(vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()));
/// let names: Vec<String> = vars.iter().map(|(k, _)| k.to_string()).collect();
/// let config = Config::from_vars(var, &names).unwrap();
/// assert_eq!(config.concurrency_or(None), 4);
/// assert_eq!(config.judge_concurrency(), 2);
///
/// // A bad value names the variable and what was expected.
/// let bad = |name: &str| Ok((name == "EVAL_CONCURRENCY").then(|| "many".to_string()));
/// let e = Config::from_vars(bad, &["EVAL_CONCURRENCY".into()]).unwrap_err();
/// assert!(e.to_string().contains("EVAL_CONCURRENCY"), "{e}");
/// ```
///
/// Its fields are what the engine and the `evals` command read: hidden, not
/// a stable API (read a setting by running with it; see the guide's
/// "Configuration").
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// `EVAL_AGENT_URL`.
    #[doc(hidden)]
    pub agent_url: Option<String>,
    /// `EVAL_AGENT_TIMEOUT_SECS`.
    #[doc(hidden)]
    pub agent_timeout: Duration,
    /// `EVAL_AGENT_API_KEY`.
    #[doc(hidden)]
    pub agent_api_key: Option<Secret>,
    /// `EVAL_AGENT_MAX_RETRIES`: retries of an agent call answered 429/503.
    #[doc(hidden)]
    pub agent_max_retries: u32,
    /// `EVAL_AGENT_ADAPTIVE`: calls in flight to the agent adapt to its
    /// overloaded answers (else fixed at the engine's concurrency).
    #[doc(hidden)]
    pub agent_adaptive: bool,
    /// `EVAL_AGENT_PROTOCOL`, when set (else the URL implies it).
    #[doc(hidden)]
    pub agent_protocol: Option<eval_datasets::Protocol>,
    /// `EVAL_AGENT_MODEL`: the `model` of OpenAI requests, and the agent's
    /// model for its prices when its answers do not name it.
    #[doc(hidden)]
    pub agent_model: Option<String>,
    /// `EVAL_AGENT_STREAM`: ask the agent for a streamed answer.
    #[doc(hidden)]
    pub agent_stream: bool,
    /// `EVAL_AGENT_TEMPERATURE`, `_TOP_P`, `_MAX_TOKENS`, `_SEED`.
    #[doc(hidden)]
    pub agent_sampling: crate::model::Sampling,
    /// `EVAL_AGENT_REQUEST`, `_METHOD`, `_QUERY`, `_HEADERS`, `_OUTPUT`,
    /// `_CONTEXT`, `_TOOL_CALLS`, `_USAGE_PROMPT_TOKENS`,
    /// `_USAGE_COMPLETION_TOKENS`: how any HTTP agent's request is built and
    /// its answer read (header values masked).
    #[doc(hidden)]
    pub agent_http: eval_datasets::HttpMapping,
    /// `EVAL_SAMPLE_TIMEOUT_SECS`, when set (a front end's own setting wins).
    #[doc(hidden)]
    pub sample_timeout: Option<Duration>,
    /// `EVAL_CONCURRENCY`, when set (a front end's own setting wins).
    #[doc(hidden)]
    pub concurrency: Option<usize>,
    /// `EVAL_JUDGE_CONCURRENCY`, when set: judge and embedding calls in
    /// flight (see [`Config::judge_concurrency`]).
    #[doc(hidden)]
    pub judge_concurrency: Option<usize>,
    /// `EVAL_AGENT_CASSETTE`: the file agent answers are recorded into or
    /// replayed from.
    #[doc(hidden)]
    pub agent_cassette: Option<PathBuf>,
    /// `EVAL_JUNIT`: also write the results as JUnit XML there (every
    /// front end; not under nextest, which writes its own).
    #[doc(hidden)]
    pub junit: Option<PathBuf>,
    /// `EVAL_HTML` is not off: write the HTML report beside every results
    /// file (every front end; `evals evaluate --no-html` turns it off).
    #[doc(hidden)]
    pub html: bool,
    /// `EVAL_DELETE_SCOPES`: the retrieval scopes outside `eval:` whose
    /// documents ingest may delete (with `allow_custom_prefix`): the
    /// confirmation the attribute and the harness cannot ask for.
    #[doc(hidden)]
    pub delete_scopes: Vec<String>,
    /// `LANGSMITH_API_KEY`: `evals create` uploads the dataset it makes to
    /// LangSmith when set.
    #[doc(hidden)]
    pub langsmith_api_key: Option<Secret>,
    /// `LANGSMITH_ENDPOINT`: LangSmith's API (default
    /// `https://api.smith.langchain.com`).
    #[doc(hidden)]
    pub langsmith_endpoint: Option<String>,
    /// `EVAL_AGENT_CASSETTE_MODE`: `record` or `replay` (the default: a
    /// cassette never calls the agent unless told to record).
    #[doc(hidden)]
    pub agent_cassette_mode: crate::model::CassetteMode,
    /// `EVAL_RESULTS_DIR`, when set.
    #[doc(hidden)]
    pub results_dir: Option<PathBuf>,
    /// `EVAL_CACHE` is not off.
    #[doc(hidden)]
    pub cache: bool,
    /// `EVAL_CACHE_DIR`, when set.
    #[doc(hidden)]
    pub cache_dir: Option<PathBuf>,
    /// `EVAL_JUDGE_*`.
    #[doc(hidden)]
    pub judge: ServiceSettings,
    /// `EVAL_EMBED_*`.
    #[doc(hidden)]
    pub embed: ServiceSettings,
    /// `EVAL_RETRIEVER_URL`.
    #[doc(hidden)]
    pub retriever_url: Option<String>,
    /// `EVAL_RETRIEVER_TIMEOUT_SECS`.
    #[doc(hidden)]
    pub retriever_timeout: Duration,
    /// `EVAL_RERANK_*`: a Cohere-style reranker for `retrieve+rerank`.
    #[doc(hidden)]
    pub rerank: rerank::RerankSettings,
    /// `EVAL_ACCEPT_BASELINE`.
    #[doc(hidden)]
    pub accept_baseline: bool,
    /// `EVAL_INCONCLUSIVE`: what an inconclusive verdict counts as (a front
    /// end's own setting wins).
    #[doc(hidden)]
    pub inconclusive: Option<crate::stats::OnInconclusive>,
    /// `EVAL_MAX_RESPONSE_BYTES`: the most one HTTP answer may hold.
    #[doc(hidden)]
    pub max_response_bytes: u64,
    /// `EVAL_MAX_DATASET_BYTES`: the largest dataset file read.
    #[doc(hidden)]
    pub max_dataset_bytes: u64,
    /// `EVAL_SPILL_BYTES`: how many bytes of finished records a run holds
    /// in memory before it writes them, sorted, to a temporary file
    /// (default 4 MiB).
    #[doc(hidden)]
    pub spill_bytes: u64,
    /// `NEXTEST` or `NEXTEST_RUN_ID` is set: this process runs one test.
    #[doc(hidden)]
    pub under_nextest: bool,
    /// `NEXTEST_RUN_ID`: which nextest run this process belongs to.
    #[doc(hidden)]
    pub nextest_run_id: Option<String>,
    /// `CARGO_MANIFEST_DIR`: where relative dataset paths start.
    #[doc(hidden)]
    pub manifest_dir: Option<PathBuf>,
    /// `CARGO_PKG_NAME`: the package whose tests run (results are kept apart per package).
    #[doc(hidden)]
    pub package: Option<String>,
    /// The user's own cache directory (`XDG_CACHE_HOME`, else `~/.cache`;
    /// `LOCALAPPDATA` on Windows): where results and the judge cache go
    /// outside a cargo target directory.
    #[doc(hidden)]
    pub user_cache_dir: Option<PathBuf>,
    /// Unknown `EVAL_*` variables close to a known one: `(unknown, known)`.
    #[doc(hidden)]
    pub near_misses: Vec<(String, &'static str)>,
    /// `EVAL_PRICES`: the price table read from that file.
    #[doc(hidden)]
    pub prices: Option<PriceTable>,
    // CI summaries.
    /// `GITHUB_STEP_SUMMARY`: the file GitHub Actions shows as the step's
    /// summary (`evals report summary` appends its Markdown there).
    #[doc(hidden)]
    pub step_summary: Option<PathBuf>,
    /// `EVAL_STEP_SUMMARY` (default on): the harness and `evals evaluate`
    /// append their run's summary to [`step_summary`](Self::step_summary) too.
    #[doc(hidden)]
    pub step_summary_auto: bool,
    /// The agent's spans collected, results exported: see [`TraceSettings`].
    #[doc(hidden)]
    pub traces: TraceSettings,
    /// `EVAL_JUDGE_MAX_TOKENS`, `EVAL_JUDGE_STRUCTURED`: see [`JudgeAnswers`].
    #[doc(hidden)]
    pub judge_answers: JudgeAnswers,
    /// Which API the judge, embeddings and agent speak; custom headers
    /// (`EVAL_*_PROVIDER`, `EVAL_*_HEADERS`): see [`ProviderSettings`].
    #[doc(hidden)]
    pub providers: ProviderSettings,
}

/// Every variable this crate reads (for near-miss warnings).
const KNOWN: &[&str] = &[
    "EVAL_AGENT_URL",
    "EVAL_AGENT_TIMEOUT_SECS",
    "EVAL_AGENT_API_KEY",
    "EVAL_AGENT_MAX_RETRIES",
    "EVAL_AGENT_ADAPTIVE",
    "EVAL_AGENT_PROTOCOL",
    "EVAL_AGENT_MODEL",
    "EVAL_AGENT_STREAM",
    "EVAL_AGENT_TEMPERATURE",
    "EVAL_AGENT_TOP_P",
    "EVAL_AGENT_MAX_TOKENS",
    "EVAL_AGENT_SEED",
    "EVAL_AGENT_REQUEST",
    "EVAL_AGENT_METHOD",
    "EVAL_AGENT_QUERY",
    "EVAL_AGENT_HEADERS",
    "EVAL_AGENT_OUTPUT",
    "EVAL_AGENT_CONTEXT",
    "EVAL_AGENT_TOOL_CALLS",
    "EVAL_AGENT_USAGE_PROMPT_TOKENS",
    "EVAL_AGENT_USAGE_COMPLETION_TOKENS",
    "EVAL_SAMPLE_TIMEOUT_SECS",
    "EVAL_CONCURRENCY",
    "EVAL_JUDGE_CONCURRENCY",
    "EVAL_AGENT_CASSETTE",
    "EVAL_AGENT_CASSETTE_MODE",
    "EVAL_JUNIT",
    "EVAL_HTML",
    "EVAL_DELETE_SCOPES",
    "EVAL_RESULTS_DIR",
    "EVAL_CACHE",
    "EVAL_CACHE_DIR",
    "EVAL_JUDGE_URL",
    "EVAL_JUDGE_MODEL",
    "EVAL_JUDGE_API_KEY",
    "EVAL_JUDGE_TIMEOUT_SECS",
    "EVAL_JUDGE_MAX_TOKENS",
    "EVAL_JUDGE_STRUCTURED",
    "EVAL_EMBED_URL",
    "EVAL_EMBED_MODEL",
    "EVAL_EMBED_API_KEY",
    "EVAL_EMBED_TIMEOUT_SECS",
    "EVAL_RETRIEVER_URL",
    "EVAL_RETRIEVER_TIMEOUT_SECS",
    "EVAL_RERANK_URL",
    "EVAL_RERANK_MODEL",
    "EVAL_RERANK_API_KEY",
    "EVAL_ACCEPT_BASELINE",
    "EVAL_MAX_RESPONSE_BYTES",
    "EVAL_MAX_DATASET_BYTES",
    "EVAL_SPILL_BYTES",
    "EVAL_PRICES",
    "EVAL_STEP_SUMMARY",
    "EVAL_INCONCLUSIVE",
    "EVAL_OTLP_RECEIVER",
    "EVAL_TRACE_WAIT_MS",
    "EVAL_OTLP_QUEUE",
];

/// Bytes of finished records a run holds in memory by default (`EVAL_SPILL_BYTES`).
pub(crate) const DEFAULT_SPILL_BYTES: u64 = 4 << 20;

/// The process's settings, once read.
static GLOBAL: OnceLock<Result<Config, ConfigError>> = OnceLock::new();

impl Config {
    /// The process's settings, read from the environment the first time and
    /// kept: later changes to the environment are not seen.
    #[doc(hidden)]
    pub fn global() -> Result<&'static Config, &'static ConfigError> {
        GLOBAL.get_or_init(Config::from_env).as_ref()
    }

    /// The process's settings as [`global`](Self::global) reads them, with
    /// `files` (name, value) pairs for the variables the environment does
    /// not set — a `.env.local` file's, say: the real environment wins. The
    /// first call of either decides the process's settings.
    #[doc(hidden)]
    pub fn global_with(
        files: &[(String, String)],
    ) -> Result<&'static Config, &'static ConfigError> {
        GLOBAL.get_or_init(|| Config::from_env_and(files)).as_ref()
    }

    /// Reads the process environment now.
    pub fn from_env() -> Result<Config, ConfigError> {
        Self::from_env_and(&[])
    }

    /// Reads the process environment now, `files` filling what it does
    /// not set.
    #[doc(hidden)]
    pub fn from_env_and(files: &[(String, String)]) -> Result<Config, ConfigError> {
        let mut names: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            // A file's unknown names are its reader's to report
            // (`Config::setting_names`), with the file's name.
            .filter(|k| k.starts_with("EVAL_"))
            .collect();
        names.sort_unstable();
        names.dedup();
        Self::read(
            |name| match std::env::var(name) {
                Ok(v) => Ok(Some(v)),
                Err(std::env::VarError::NotPresent) => Ok(files
                    .iter()
                    .rev()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())),
                Err(std::env::VarError::NotUnicode(v)) => Err(v.to_string_lossy().into_owned()),
            },
            &names,
        )
    }

    /// Reads settings through `var` (`Ok(None)`: not set; `Err(shown)`: not
    /// valid UTF-8), for tests that must not touch the process environment.
    pub fn from_vars(
        var: impl Fn(&str) -> Result<Option<String>, String>,
        eval_vars: &[String],
    ) -> Result<Config, ConfigError> {
        Self::read(var, eval_vars)
    }

    /// Settings with nothing set: every default, no agent, judge or embeddings.
    pub fn empty() -> Config {
        match Self::read(|_| Ok(None), &[]) {
            Ok(c) => c,
            Err(_) => unreachable!("no variable is set, so none is bad"),
        }
    }

    /// The sample timeout to use: the front end's own setting, else
    /// `EVAL_SAMPLE_TIMEOUT_SECS`, else 300 s. The same rule everywhere.
    #[doc(hidden)]
    pub fn sample_timeout_or(&self, own: Option<Duration>) -> Duration {
        own.or(self.sample_timeout)
            .unwrap_or(DEFAULT_SAMPLE_TIMEOUT)
    }

    /// Agent calls in flight: the front end's own setting, else
    /// `EVAL_CONCURRENCY`, else 16. The same rule everywhere.
    pub fn concurrency_or(&self, own: Option<usize>) -> usize {
        own.or(self.concurrency)
            .unwrap_or(DEFAULT_CONCURRENCY)
            .clamp(1, MAX_CONCURRENCY)
    }

    /// Judge and embedding calls in flight at once, over the services built
    /// from this config (one run; the attribute's tests share the process's):
    /// `EVAL_JUDGE_CONCURRENCY`, else four times the samples in flight (a
    /// sample's metrics are scored at once).
    pub fn judge_concurrency(&self) -> usize {
        self.judge_concurrency
            .unwrap_or_else(|| 4 * self.concurrency_or(None))
            .clamp(1, MAX_CONCURRENCY)
    }

    /// Where relative paths start: `CARGO_MANIFEST_DIR`, else the working directory.
    #[doc(hidden)]
    pub fn base_dir(&self) -> PathBuf {
        self.manifest_dir
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default()
    }

    /// One warning line per near-miss variable (empty when there are none).
    #[doc(hidden)]
    pub fn warnings(&self) -> Vec<String> {
        self.near_misses
            .iter()
            .map(|(var, known)| {
                format!(
                    "{var} is not a setting of this tool{}",
                    eval_datasets::suggest::did_you_mean(Some(known))
                )
            })
            .collect()
    }
}

mod agent_http;
mod checks;
mod headers;
mod judge_answers;
mod location;
mod parsed;
mod prices;
mod providers;
mod read;
pub(crate) mod rerank;
mod table;
mod traces;
mod values;

use agent_http::AgentHttpVars;
pub(crate) use checks::shown_url;
pub use headers::{HeaderError, Headers};
use judge_answers::JudgeAnswerVars;
pub use judge_answers::{JudgeAnswers, Structured};
pub use location::{
    ResultsKey, binary_name, calibration_dir, project_calibration_dir, results_dir,
};
pub use parsed::DEFAULT_MAX_RESPONSE_BYTES;
pub(crate) use parsed::inner_json;
#[cfg(feature = "http")]
pub(crate) use parsed::{PARSED_PER_BYTE, reply_json};
pub(crate) use prices::read_setting;
pub use prices::{Price, PriceError, PriceTable, Pricing};
use providers::ProviderVars;
pub use providers::{DEFAULT_AZURE_API_VERSION, Provider, ProviderSettings, ServiceWire};
use traces::TraceVars;
pub use traces::{ExportSettings, OtlpProtocol, TraceSettings};
use values::{AgentSpeech, shown_size};
pub(crate) use values::{parse_bytes, parse_secs};

#[cfg(test)]
mod tests;
