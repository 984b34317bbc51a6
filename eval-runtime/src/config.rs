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
//! [`Paint`](crate::Paint): not here.
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
/// ([`Config::global`]) and passed down to every client; a bad value is an
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
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// `EVAL_AGENT_URL`.
    pub agent_url: Option<String>,
    /// `EVAL_AGENT_TIMEOUT_SECS`.
    pub agent_timeout: Duration,
    /// `EVAL_AGENT_API_KEY`.
    pub agent_api_key: Option<Secret>,
    /// `EVAL_AGENT_MAX_RETRIES`: retries of an agent call answered 429/503.
    pub agent_max_retries: u32,
    /// `EVAL_AGENT_ADAPTIVE`: calls in flight to the agent adapt to its
    /// overloaded answers (else fixed at the engine's concurrency).
    pub agent_adaptive: bool,
    /// `EVAL_AGENT_PROTOCOL`, when set (else the URL implies it).
    pub agent_protocol: Option<eval_datasets::Protocol>,
    /// `EVAL_AGENT_MODEL`: the `model` of OpenAI requests, and the agent's
    /// model for its prices when its answers do not name it.
    pub agent_model: Option<String>,
    /// `EVAL_AGENT_STREAM`: ask the agent for a streamed answer.
    pub agent_stream: bool,
    /// `EVAL_AGENT_TEMPERATURE`, `_TOP_P`, `_MAX_TOKENS`, `_SEED`.
    pub agent_sampling: crate::model::Sampling,
    /// `EVAL_AGENT_REQUEST`, `_METHOD`, `_QUERY`, `_HEADERS`, `_OUTPUT`,
    /// `_CONTEXT`, `_TOOL_CALLS`, `_USAGE_PROMPT_TOKENS`,
    /// `_USAGE_COMPLETION_TOKENS`: how any HTTP agent's request is built and
    /// its answer read (header values masked).
    pub agent_http: eval_datasets::HttpMapping,
    /// `EVAL_SAMPLE_TIMEOUT_SECS`, when set (a front end's own setting wins).
    pub sample_timeout: Option<Duration>,
    /// `EVAL_CONCURRENCY`, when set (a front end's own setting wins).
    pub concurrency: Option<usize>,
    /// `EVAL_JUDGE_CONCURRENCY`, when set: judge and embedding calls in
    /// flight (see [`Config::judge_concurrency`]).
    pub judge_concurrency: Option<usize>,
    /// `EVAL_AGENT_CASSETTE`: the file agent answers are recorded into or
    /// replayed from.
    pub agent_cassette: Option<PathBuf>,
    /// `EVAL_JUNIT`: also write the results as JUnit XML there (every
    /// front end; not under nextest, which writes its own).
    pub junit: Option<PathBuf>,
    /// `EVAL_HTML` is not off: write the HTML report beside every results
    /// file (every front end; `evals evaluate --no-html` turns it off).
    pub html: bool,
    /// `EVAL_DELETE_SCOPES`: the retrieval scopes outside `eval:` whose
    /// documents ingest may delete (with `allow_custom_prefix`): the
    /// confirmation the attribute and the harness cannot ask for.
    pub delete_scopes: Vec<String>,
    /// `LANGSMITH_API_KEY`: `evals create` uploads the dataset it makes to
    /// LangSmith when set.
    pub langsmith_api_key: Option<Secret>,
    /// `LANGSMITH_ENDPOINT`: LangSmith's API (default
    /// `https://api.smith.langchain.com`).
    pub langsmith_endpoint: Option<String>,
    /// `EVAL_AGENT_CASSETTE_MODE`: `record` or `replay` (the default: a
    /// cassette never calls the agent unless told to record).
    pub agent_cassette_mode: crate::model::CassetteMode,
    /// `EVAL_RESULTS_DIR`, when set.
    pub results_dir: Option<PathBuf>,
    /// `EVAL_CACHE` is not off.
    pub cache: bool,
    /// `EVAL_CACHE_DIR`, when set.
    pub cache_dir: Option<PathBuf>,
    /// `EVAL_JUDGE_*`.
    pub judge: ServiceSettings,
    /// `EVAL_EMBED_*`.
    pub embed: ServiceSettings,
    /// `EVAL_RETRIEVER_URL`.
    pub retriever_url: Option<String>,
    /// `EVAL_RETRIEVER_TIMEOUT_SECS`.
    pub retriever_timeout: Duration,
    /// `EVAL_RERANK_*`: a Cohere-style reranker for `retrieve+rerank`.
    pub rerank: rerank::RerankSettings,
    /// `EVAL_ACCEPT_BASELINE`.
    pub accept_baseline: bool,
    /// `EVAL_INCONCLUSIVE`: what an inconclusive verdict counts as (a front
    /// end's own setting wins).
    pub inconclusive: Option<crate::stats::OnInconclusive>,
    /// `EVAL_MAX_RESPONSE_BYTES`: the most one HTTP answer may hold.
    pub max_response_bytes: u64,
    /// `EVAL_MAX_DATASET_BYTES`: the largest dataset file read.
    pub max_dataset_bytes: u64,
    /// `EVAL_SPILL_BYTES`: how many bytes of finished records a run holds
    /// in memory before it writes them, sorted, to a temporary file
    /// (default 4 MiB).
    pub spill_bytes: u64,
    /// `NEXTEST` or `NEXTEST_RUN_ID` is set: this process runs one test.
    pub under_nextest: bool,
    /// `NEXTEST_RUN_ID`: which nextest run this process belongs to.
    pub nextest_run_id: Option<String>,
    /// `CARGO_MANIFEST_DIR`: where relative dataset paths start.
    pub manifest_dir: Option<PathBuf>,
    /// `CARGO_PKG_NAME`: the package whose tests run (results are kept apart per package).
    pub package: Option<String>,
    /// The user's own cache directory (`XDG_CACHE_HOME`, else `~/.cache`;
    /// `LOCALAPPDATA` on Windows): where results and the judge cache go
    /// outside a cargo target directory.
    pub user_cache_dir: Option<PathBuf>,
    /// Unknown `EVAL_*` variables close to a known one: `(unknown, known)`.
    pub near_misses: Vec<(String, &'static str)>,
    /// `EVAL_PRICES`: the price table read from that file.
    pub prices: Option<PriceTable>,
    // CI summaries.
    /// `GITHUB_STEP_SUMMARY`: the file GitHub Actions shows as the step's
    /// summary (`evals report summary` appends its Markdown there).
    pub step_summary: Option<PathBuf>,
    /// `EVAL_STEP_SUMMARY` (default on): the harness and `evals evaluate`
    /// append their run's summary to [`step_summary`](Self::step_summary) too.
    pub step_summary_auto: bool,
    /// The agent's spans collected, results exported: see [`TraceSettings`].
    pub traces: TraceSettings,
    /// `EVAL_JUDGE_MAX_TOKENS`, `EVAL_JUDGE_STRUCTURED`: see [`JudgeAnswers`].
    pub judge_answers: JudgeAnswers,
    /// Which API the judge, embeddings and agent speak; custom headers
    /// (`EVAL_*_PROVIDER`, `EVAL_*_HEADERS`): see [`ProviderSettings`].
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
    pub fn global() -> Result<&'static Config, &'static ConfigError> {
        GLOBAL.get_or_init(Config::from_env).as_ref()
    }

    /// The process's settings as [`global`](Self::global) reads them, with
    /// `files` (name, value) pairs for the variables the environment does
    /// not set — a `.env.local` file's, say: the real environment wins. The
    /// first call of either decides the process's settings.
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

    fn read(
        var: impl Fn(&str) -> Result<Option<String>, String>,
        eval_vars: &[String],
    ) -> Result<Config, ConfigError> {
        let mut bad: Vec<BadVar> = Vec::new();
        let mut get = |name: &'static str, secret: bool| -> Option<String> {
            match var(name) {
                Ok(Some(v)) if v.trim().is_empty() => None,
                Ok(v) => v,
                Err(shown) => {
                    bad.push(BadVar {
                        var: name,
                        value: if secret { "<redacted>".into() } else { shown },
                        expected: "valid UTF-8".into(),
                    });
                    None
                }
            }
        };
        let agent_url = get("EVAL_AGENT_URL", false);
        let agent_timeout = get("EVAL_AGENT_TIMEOUT_SECS", false);
        let agent_api_key = get("EVAL_AGENT_API_KEY", true).map(Secret::new);
        let agent_max_retries = get("EVAL_AGENT_MAX_RETRIES", false);
        let agent_adaptive = get("EVAL_AGENT_ADAPTIVE", false);
        let agent_speech = AgentSpeech::get(&mut get);
        let agent_http_vars = AgentHttpVars::get(&mut get);
        let trace_vars = TraceVars::get(&mut get);
        let rerank = rerank::RerankSettings::get(&mut get);
        let judge_answer_vars = JudgeAnswerVars::get(&mut get);
        let provider_vars = ProviderVars::get(&mut get);
        let sample_timeout = get("EVAL_SAMPLE_TIMEOUT_SECS", false);
        let concurrency = get("EVAL_CONCURRENCY", false);
        let judge_concurrency = get("EVAL_JUDGE_CONCURRENCY", false);
        let agent_cassette = get("EVAL_AGENT_CASSETTE", false)
            .filter(|p| !p.trim().is_empty())
            .map(PathBuf::from);
        let agent_cassette_mode = get("EVAL_AGENT_CASSETTE_MODE", false);
        let junit = get("EVAL_JUNIT", false)
            .filter(|p| !p.trim().is_empty())
            .map(PathBuf::from);
        let html = get("EVAL_HTML", false);
        let langsmith_api_key = get("LANGSMITH_API_KEY", true).map(Secret::new);
        let langsmith_endpoint = get("LANGSMITH_ENDPOINT", false);
        let delete_scopes: Vec<String> = get("EVAL_DELETE_SCOPES", false)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let inconclusive = get("EVAL_INCONCLUSIVE", false);
        let results_dir = get("EVAL_RESULTS_DIR", false).map(PathBuf::from);
        let cache = get("EVAL_CACHE", false);
        let cache_dir = get("EVAL_CACHE_DIR", false).map(PathBuf::from);
        let openai_key = get("OPENAI_API_KEY", true);
        // Each provider's own key variable, the fallback for its services.
        let fallback_keys = providers::FallbackKeys::get(&mut get, openai_key.clone());
        let mut service = |prefix: &'static [&'static str; 4], model: &str| {
            let [url, model_var, key, timeout] = *prefix;
            (
                get(url, false),
                get(model_var, false).unwrap_or_else(|| model.to_string()),
                get(key, true),
                get(timeout, false),
                timeout,
            )
        };
        let judge = service(
            &[
                "EVAL_JUDGE_URL",
                "EVAL_JUDGE_MODEL",
                "EVAL_JUDGE_API_KEY",
                "EVAL_JUDGE_TIMEOUT_SECS",
            ],
            "gpt-4o-mini",
        );
        let embed = service(
            &[
                "EVAL_EMBED_URL",
                "EVAL_EMBED_MODEL",
                "EVAL_EMBED_API_KEY",
                "EVAL_EMBED_TIMEOUT_SECS",
            ],
            "text-embedding-3-small",
        );
        let retriever_url = get("EVAL_RETRIEVER_URL", false);
        let retriever_timeout = get("EVAL_RETRIEVER_TIMEOUT_SECS", false);
        let accept = get("EVAL_ACCEPT_BASELINE", false);
        let max_response = get("EVAL_MAX_RESPONSE_BYTES", false);
        let max_dataset_bytes = get("EVAL_MAX_DATASET_BYTES", false);
        let spill_bytes = get("EVAL_SPILL_BYTES", false);
        let nextest = get("NEXTEST", false);
        let nextest_run_id = get("NEXTEST_RUN_ID", false);
        let manifest_dir = get("CARGO_MANIFEST_DIR", false).map(PathBuf::from);
        let package = get("CARGO_PKG_NAME", false);
        let prices_path = get("EVAL_PRICES", false);
        // Not settings of ours: a value that is not UTF-8 is not an error,
        // only not used.
        let path = |name: &str| {
            var(name)
                .ok()
                .flatten()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let user_cache_dir = path("XDG_CACHE_HOME")
            .or_else(|| path("HOME").map(|home| home.join(".cache")))
            .or_else(|| path("LOCALAPPDATA"));

        let mut secs = |name: &'static str, value: Option<String>, default: Duration| {
            value.map_or(Some(default), |v| match parse_secs(&v) {
                Some(d) => Some(d),
                None => {
                    bad.push(BadVar {
                        var: name,
                        value: v,
                        expected: "a number of seconds between 0.001 and 10^9".into(),
                    });
                    None
                }
            })
        };
        let agent_timeout = secs(
            "EVAL_AGENT_TIMEOUT_SECS",
            agent_timeout,
            DEFAULT_AGENT_TIMEOUT,
        );
        let sample_timeout = match sample_timeout {
            None => None,
            Some(v) => secs("EVAL_SAMPLE_TIMEOUT_SECS", Some(v), DEFAULT_SAMPLE_TIMEOUT),
        };
        let judge_timeout = secs(judge.4, judge.3, DEFAULT_SERVICE_TIMEOUT);
        let embed_timeout = secs(embed.4, embed.3, DEFAULT_SERVICE_TIMEOUT);
        let retriever_timeout = secs(
            "EVAL_RETRIEVER_TIMEOUT_SECS",
            retriever_timeout,
            DEFAULT_RETRIEVER_TIMEOUT,
        );
        let mut calls_in_flight = |var: &'static str, value: Option<String>| match value {
            None => None,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => Some(n),
                _ => {
                    bad.push(BadVar {
                        var,
                        value: v,
                        expected: format!("a whole number from 1 to {MAX_CONCURRENCY}"),
                    });
                    None
                }
            },
        };
        let concurrency = calls_in_flight("EVAL_CONCURRENCY", concurrency);
        let judge_concurrency = calls_in_flight("EVAL_JUDGE_CONCURRENCY", judge_concurrency);
        let agent_cassette_mode = match agent_cassette_mode {
            None => crate::model::CassetteMode::Replay,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "record" => crate::model::CassetteMode::Record,
                "replay" | "" => crate::model::CassetteMode::Replay,
                _ => {
                    bad.push(BadVar {
                        var: "EVAL_AGENT_CASSETTE_MODE",
                        value: v,
                        expected: "`record` or `replay`".into(),
                    });
                    crate::model::CassetteMode::Replay
                }
            },
        };
        let mut size = |name: &'static str,
                        value: Option<String>,
                        range: std::ops::RangeInclusive<u64>,
                        default: u64| {
            value.map_or(default, |v| {
                match parse_bytes(&v).filter(|n| range.contains(n)) {
                    Some(n) => n,
                    None => {
                        bad.push(BadVar {
                            var: name,
                            value: v,
                            expected: format!(
                                "a size from {} to {}, e.g. 16MiB, 512KiB or 1048576",
                                shown_size(*range.start()),
                                shown_size(*range.end())
                            ),
                        });
                        default
                    }
                }
            })
        };
        let max_response_bytes = size(
            "EVAL_MAX_RESPONSE_BYTES",
            max_response,
            1 << 10..=4 << 30,
            DEFAULT_MAX_RESPONSE_BYTES,
        );
        let max_dataset_bytes = size(
            "EVAL_MAX_DATASET_BYTES",
            max_dataset_bytes,
            1..=u64::MAX,
            eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
        );
        let spill_bytes = size(
            "EVAL_SPILL_BYTES",
            spill_bytes,
            1..=u64::MAX,
            DEFAULT_SPILL_BYTES,
        );
        let mut switch = |name: &'static str, value: Option<String>, default: bool| match value {
            None => default,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    bad.push(BadVar {
                        var: name,
                        value: v,
                        expected: "on or off (1/0, true/false, yes/no)".into(),
                    });
                    default
                }
            },
        };
        let cache = switch("EVAL_CACHE", cache, true);
        let html = switch("EVAL_HTML", html, true);
        let agent_adaptive = switch("EVAL_AGENT_ADAPTIVE", agent_adaptive, true);
        let accept_baseline = switch("EVAL_ACCEPT_BASELINE", accept, false);
        // CI summaries: GitHub Actions' step summary file (any path it
        // gives), and whether runs append to it themselves.
        let step_summary = var("GITHUB_STEP_SUMMARY")
            .ok()
            .flatten()
            .filter(|p| !p.trim().is_empty())
            .map(PathBuf::from);
        let step_summary_auto = switch(
            "EVAL_STEP_SUMMARY",
            var("EVAL_STEP_SUMMARY").unwrap_or_else(Some),
            true,
        );
        let inconclusive = inconclusive.and_then(|v| {
            let parsed = crate::stats::OnInconclusive::parse(&v);
            if parsed.is_none() {
                bad.push(BadVar {
                    var: "EVAL_INCONCLUSIVE",
                    value: v,
                    expected: "estimate (the point estimate decides), fail or pass".into(),
                });
            }
            parsed
        });
        let agent_max_retries = match agent_max_retries {
            None => DEFAULT_AGENT_MAX_RETRIES,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if n <= MAX_AGENT_RETRIES => n,
                _ => {
                    bad.push(BadVar {
                        var: "EVAL_AGENT_MAX_RETRIES",
                        value: v,
                        expected: format!("a whole number from 0 to {MAX_AGENT_RETRIES}"),
                    });
                    DEFAULT_AGENT_MAX_RETRIES
                }
            },
        };
        // Costs: the price table (read now, so a bad one is reported with
        // the other settings) and the agent's model.
        let prices = match prices_path {
            None => None,
            Some(path) => match read_setting(&path) {
                Ok(table) => Some(table),
                Err(reason) => {
                    bad.push(BadVar {
                        var: "EVAL_PRICES",
                        value: path,
                        expected: format!(
                            "a JSON price table ({{\"model\": {{\"input\": USD per million tokens, \"output\": ...}}}}): {reason}"
                        ),
                    });
                    None
                }
            },
        };
        let near_misses = eval_vars
            .iter()
            .filter(|v| !KNOWN.contains(&v.as_str()) && !providers::VARS.contains(&v.as_str()))
            .filter_map(|v| {
                eval_datasets::suggest::closest_within(
                    v,
                    KNOWN.iter().chain(providers::VARS).copied(),
                    eval_datasets::suggest::Closeness::case_sensitive(2),
                )
                .map(|k| (v.clone(), k))
            })
            .collect();
        let (agent_protocol, agent_model, agent_stream, agent_sampling) =
            agent_speech.parse(&mut bad);
        let traces = trace_vars.parse(&mut bad);
        let agent_http = agent_http_vars.parse(&mut bad);
        let judge_answers = judge_answer_vars.parse(&mut bad);
        let providers = provider_vars.parse(&mut bad);
        let fallback = Duration::ZERO;
        let (judge_url, embed_url) = (judge.0.clone(), embed.0.clone());
        let own_keys = checks::OwnKeys {
            judge: judge.2.is_some(),
            embed: embed.2.is_some(),
        };
        let config = Config {
            agent_url,
            agent_timeout: agent_timeout.unwrap_or(fallback),
            agent_api_key,
            agent_max_retries,
            agent_adaptive,
            agent_protocol,
            agent_model,
            agent_stream,
            agent_sampling,
            agent_http,
            sample_timeout,
            concurrency,
            judge_concurrency,
            agent_cassette,
            junit,
            html,
            delete_scopes,
            langsmith_api_key,
            langsmith_endpoint,
            agent_cassette_mode,
            results_dir,
            cache,
            cache_dir,
            judge: ServiceSettings {
                url: judge.0,
                model: judge.1,
                api_key: fallback_keys.key(judge.2, providers.judge, judge_url.as_deref()),
                timeout: judge_timeout.unwrap_or(fallback),
                max_response_bytes,
                wire: providers.judge_wire(),
            },
            embed: ServiceSettings {
                url: embed.0,
                model: embed.1,
                api_key: fallback_keys.key(embed.2, providers.embed, embed_url.as_deref()),
                timeout: embed_timeout.unwrap_or(fallback),
                max_response_bytes,
                wire: providers.embed_wire(),
            },
            retriever_url,
            retriever_timeout: retriever_timeout.unwrap_or(fallback),
            rerank,
            accept_baseline,
            inconclusive,
            max_response_bytes,
            max_dataset_bytes,
            spill_bytes,
            under_nextest: nextest.is_some() || nextest_run_id.is_some(),
            nextest_run_id,
            manifest_dir,
            package,
            user_cache_dir,
            step_summary,
            step_summary_auto,
            near_misses,
            prices,
            traces,
            judge_answers,
            providers,
        };
        // URLs and keys, checked over the settings read.
        checks::check(&config, &own_keys, &mut bad);
        if !bad.is_empty() {
            return Err(ConfigError(bad));
        }
        Ok(config)
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
    pub fn base_dir(&self) -> PathBuf {
        self.manifest_dir
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default()
    }

    /// One warning line per near-miss variable (empty when there are none).
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
pub(crate) mod rerank;
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
