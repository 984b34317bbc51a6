//! `Config::read`: every setting through its row of the table
//! ([`super::table`]), in two steps as each group of settings is read: the
//! values as written first (a value that is not UTF-8 is recorded), then
//! each read by its row's parser, every bad value recorded; last, the URLs
//! and keys checked over the whole.

use std::path::PathBuf;
use std::time::Duration;

use super::table::{self as t, Setting};
use super::{
    AgentHttpVars, AgentSpeech, BadVar, Config, ConfigError, JudgeAnswerVars, KNOWN, ProviderVars,
    ServiceSettings, TraceVars, checks, providers, rerank,
};

/// A service's settings as written (the judge's, the embeddings').
struct RawService {
    url: Option<String>,
    model: String,
    key: Option<String>,
    timeout: Option<String>,
}

/// The settings as written, in the order they are read.
struct Raw {
    agent_url: Option<String>,
    agent_timeout: Option<String>,
    agent_api_key: Option<String>,
    agent_max_retries: Option<String>,
    agent_adaptive: Option<String>,
    agent_speech: AgentSpeech,
    agent_http: AgentHttpVars,
    traces: TraceVars,
    rerank: rerank::RerankSettings,
    judge_answers: JudgeAnswerVars,
    providers: ProviderVars,
    sample_timeout: Option<String>,
    concurrency: Option<String>,
    judge_concurrency: Option<String>,
    agent_cassette: Option<String>,
    agent_cassette_mode: Option<String>,
    junit: Option<String>,
    html: Option<String>,
    langsmith_api_key: Option<String>,
    langsmith_endpoint: Option<String>,
    delete_scopes: Option<String>,
    inconclusive: Option<String>,
    results_dir: Option<String>,
    cache: Option<String>,
    cache_dir: Option<String>,
    fallback_keys: providers::FallbackKeys,
    judge: RawService,
    embed: RawService,
    retriever_url: Option<String>,
    retriever_timeout: Option<String>,
    accept_baseline: Option<String>,
    max_response_bytes: Option<String>,
    max_dataset_bytes: Option<String>,
    spill_bytes: Option<String>,
    prices: Option<String>,
    // The run's context, not settings.
    nextest: Option<String>,
    nextest_run_id: Option<String>,
    manifest_dir: Option<String>,
    package: Option<String>,
    user_cache_dir: Option<PathBuf>,
}

impl Raw {
    /// Every setting as written (`None`: not set or blank); a value that is
    /// not UTF-8 is pushed onto `bad` (a secret's shown as `<redacted>`).
    fn get(var: &impl Fn(&str) -> Result<Option<String>, String>, bad: &mut Vec<BadVar>) -> Raw {
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
        let mut row = |s: (&'static str, bool)| get(s.0, s.1);
        let agent_url = row(of(&t::AGENT_URL));
        let agent_timeout = row(of(&t::AGENT_TIMEOUT));
        let agent_api_key = row(of(&t::AGENT_API_KEY));
        let agent_max_retries = row(of(&t::AGENT_MAX_RETRIES));
        let agent_adaptive = row(of(&t::AGENT_ADAPTIVE));
        let agent_speech = AgentSpeech::get(&mut get);
        let agent_http = AgentHttpVars::get(&mut get);
        let traces = TraceVars::get(&mut get);
        let rerank = rerank::RerankSettings::get(&mut get);
        let judge_answers = JudgeAnswerVars::get(&mut get);
        let providers = ProviderVars::get(&mut get);
        let mut row = |s: (&'static str, bool)| get(s.0, s.1);
        let sample_timeout = row(of(&t::SAMPLE_TIMEOUT));
        let concurrency = row(of(&t::CONCURRENCY));
        let judge_concurrency = row(of(&t::JUDGE_CONCURRENCY));
        let agent_cassette = row(of(&t::AGENT_CASSETTE));
        let agent_cassette_mode = row(of(&t::AGENT_CASSETTE_MODE));
        let junit = row(of(&t::JUNIT));
        let html = row(of(&t::HTML));
        let langsmith_api_key = row(of(&t::LANGSMITH_API_KEY));
        let langsmith_endpoint = row(of(&t::LANGSMITH_ENDPOINT));
        let delete_scopes = row(of(&t::DELETE_SCOPES));
        let inconclusive = row(of(&t::INCONCLUSIVE));
        let results_dir = row(of(&t::RESULTS_DIR));
        let cache = row(of(&t::CACHE));
        let cache_dir = row(of(&t::CACHE_DIR));
        let openai_key = row(of(&t::OPENAI_API_KEY));
        // Each provider's own key variable, the fallback for its services.
        let fallback_keys = providers::FallbackKeys::get(&mut get, openai_key);
        let mut row = |s: (&'static str, bool)| get(s.0, s.1);
        let judge = RawService {
            url: row(of(&t::JUDGE_URL)),
            model: t::JUDGE_MODEL.read(row(of(&t::JUDGE_MODEL)), &mut Vec::new()),
            key: row(of(&t::JUDGE_API_KEY)),
            timeout: row(of(&t::JUDGE_TIMEOUT)),
        };
        let embed = RawService {
            url: row(of(&t::EMBED_URL)),
            model: t::EMBED_MODEL.read(row(of(&t::EMBED_MODEL)), &mut Vec::new()),
            key: row(of(&t::EMBED_API_KEY)),
            timeout: row(of(&t::EMBED_TIMEOUT)),
        };
        Raw {
            agent_url,
            agent_timeout,
            agent_api_key,
            agent_max_retries,
            agent_adaptive,
            agent_speech,
            agent_http,
            traces,
            rerank,
            judge_answers,
            providers,
            sample_timeout,
            concurrency,
            judge_concurrency,
            agent_cassette,
            agent_cassette_mode,
            junit,
            html,
            langsmith_api_key,
            langsmith_endpoint,
            delete_scopes,
            inconclusive,
            results_dir,
            cache,
            cache_dir,
            fallback_keys,
            judge,
            embed,
            retriever_url: row(of(&t::RETRIEVER_URL)),
            retriever_timeout: row(of(&t::RETRIEVER_TIMEOUT)),
            accept_baseline: row(of(&t::ACCEPT_BASELINE)),
            max_response_bytes: row(of(&t::MAX_RESPONSE_BYTES)),
            max_dataset_bytes: row(of(&t::MAX_DATASET_BYTES)),
            spill_bytes: row(of(&t::SPILL_BYTES)),
            nextest: get("NEXTEST", false),
            nextest_run_id: get("NEXTEST_RUN_ID", false),
            manifest_dir: get("CARGO_MANIFEST_DIR", false),
            package: get("CARGO_PKG_NAME", false),
            prices: get(t::PRICES.name, t::PRICES.secret),
            user_cache_dir: user_cache_dir(var),
        }
    }
}

/// A row's variable and whether it is a secret.
fn of<P>(setting: &Setting<P>) -> (&'static str, bool) {
    (setting.name, setting.secret)
}

/// The user's cache directory. Not settings of ours: a value that is not
/// UTF-8 is not an error, only not used.
fn user_cache_dir(var: &impl Fn(&str) -> Result<Option<String>, String>) -> Option<PathBuf> {
    let path = |name: &str| {
        var(name)
            .ok()
            .flatten()
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    path("XDG_CACHE_HOME")
        .or_else(|| path("HOME").map(|home| home.join(".cache")))
        .or_else(|| path("LOCALAPPDATA"))
}

/// Unknown `EVAL_*` variables one typo away from a known one.
fn near_misses(eval_vars: &[String]) -> Vec<(String, &'static str)> {
    eval_vars
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
        .collect()
}

impl Config {
    pub(super) fn read(
        var: impl Fn(&str) -> Result<Option<String>, String>,
        eval_vars: &[String],
    ) -> Result<Config, ConfigError> {
        let mut bad: Vec<BadVar> = Vec::new();
        let raw = Raw::get(&var, &mut bad);
        let config = Self::parse(raw, &var, eval_vars, &mut bad);
        if !bad.is_empty() {
            return Err(ConfigError(bad));
        }
        Ok(config)
    }

    /// The settings as written, each read by its row's parser; then the
    /// URLs and keys checked over the whole.
    fn parse(
        raw: Raw,
        var: &impl Fn(&str) -> Result<Option<String>, String>,
        eval_vars: &[String],
        bad: &mut Vec<BadVar>,
    ) -> Config {
        let agent_timeout = t::AGENT_TIMEOUT.read(raw.agent_timeout, bad);
        let sample_timeout = t::SAMPLE_TIMEOUT.read(raw.sample_timeout, bad);
        let judge_timeout = t::JUDGE_TIMEOUT.read(raw.judge.timeout.clone(), bad);
        let embed_timeout = t::EMBED_TIMEOUT.read(raw.embed.timeout.clone(), bad);
        let retriever_timeout = t::RETRIEVER_TIMEOUT.read(raw.retriever_timeout, bad);
        let concurrency = t::CONCURRENCY.read(raw.concurrency, bad);
        let judge_concurrency = t::JUDGE_CONCURRENCY.read(raw.judge_concurrency, bad);
        let agent_cassette_mode = t::AGENT_CASSETTE_MODE.read(raw.agent_cassette_mode, bad);
        let max_response_bytes = t::MAX_RESPONSE_BYTES.read(raw.max_response_bytes, bad);
        let max_dataset_bytes = t::MAX_DATASET_BYTES.read(raw.max_dataset_bytes, bad);
        let spill_bytes = t::SPILL_BYTES.read(raw.spill_bytes, bad);
        let cache = t::CACHE.read(raw.cache, bad);
        let html = t::HTML.read(raw.html, bad);
        let agent_adaptive = t::AGENT_ADAPTIVE.read(raw.agent_adaptive, bad);
        let accept_baseline = t::ACCEPT_BASELINE.read(raw.accept_baseline, bad);
        // CI summaries: GitHub Actions' step summary file (any path it
        // gives), and whether runs append to it themselves.
        let step_summary =
            t::STEP_SUMMARY_FILE.read(var(t::STEP_SUMMARY_FILE.name).ok().flatten(), bad);
        let step_summary_auto =
            t::STEP_SUMMARY.read(var(t::STEP_SUMMARY.name).unwrap_or_else(Some), bad);
        let inconclusive = t::INCONCLUSIVE.read(raw.inconclusive, bad);
        let agent_max_retries = t::AGENT_MAX_RETRIES.read(raw.agent_max_retries, bad);
        // Costs: the price table (read now, so a bad one is reported with
        // the other settings) and the agent's model.
        let prices = t::PRICES.read(raw.prices, bad);
        let (agent_protocol, agent_model, agent_stream, agent_sampling) =
            raw.agent_speech.parse(bad);
        let traces = raw.traces.parse(bad);
        let agent_http = raw.agent_http.parse(bad);
        let judge_answers = raw.judge_answers.parse(bad);
        let providers = raw.providers.parse(bad);
        let own_keys = checks::OwnKeys {
            judge: raw.judge.key.is_some(),
            embed: raw.embed.key.is_some(),
        };
        let fallback = Duration::ZERO;
        let service = |s: RawService, chosen, timeout: Option<Duration>, wire| {
            let api_key = raw.fallback_keys.key(s.key, chosen, s.url.as_deref());
            ServiceSettings {
                url: s.url,
                model: s.model,
                api_key,
                timeout: timeout.unwrap_or(fallback),
                max_response_bytes,
                wire,
            }
        };
        let judge = service(
            raw.judge,
            providers.judge,
            judge_timeout,
            providers.judge_wire(),
        );
        let embed = service(
            raw.embed,
            providers.embed,
            embed_timeout,
            providers.embed_wire(),
        );
        let config = Config {
            agent_url: t::AGENT_URL.read(raw.agent_url, bad),
            agent_timeout: agent_timeout.unwrap_or(fallback),
            agent_api_key: t::AGENT_API_KEY.read(raw.agent_api_key, bad),
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
            agent_cassette: t::AGENT_CASSETTE.read(raw.agent_cassette, bad),
            junit: t::JUNIT.read(raw.junit, bad),
            html,
            delete_scopes: t::DELETE_SCOPES.read(raw.delete_scopes, bad),
            langsmith_api_key: t::LANGSMITH_API_KEY.read(raw.langsmith_api_key, bad),
            langsmith_endpoint: t::LANGSMITH_ENDPOINT.read(raw.langsmith_endpoint, bad),
            agent_cassette_mode,
            results_dir: t::RESULTS_DIR.read(raw.results_dir, bad),
            cache,
            cache_dir: t::CACHE_DIR.read(raw.cache_dir, bad),
            judge,
            embed,
            retriever_url: t::RETRIEVER_URL.read(raw.retriever_url, bad),
            retriever_timeout: retriever_timeout.unwrap_or(fallback),
            rerank: raw.rerank,
            accept_baseline,
            inconclusive,
            max_response_bytes,
            max_dataset_bytes,
            spill_bytes,
            under_nextest: raw.nextest.is_some() || raw.nextest_run_id.is_some(),
            nextest_run_id: raw.nextest_run_id,
            manifest_dir: raw.manifest_dir.map(PathBuf::from),
            package: raw.package,
            user_cache_dir: raw.user_cache_dir,
            step_summary,
            step_summary_auto,
            near_misses: near_misses(eval_vars),
            prices,
            traces,
            judge_answers,
            providers,
        };
        // URLs and keys, checked over the settings read.
        checks::check(&config, &own_keys, bad);
        config
    }
}
