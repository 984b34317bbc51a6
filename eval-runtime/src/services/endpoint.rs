//! Plumbing shared by the judge and embeddings clients: one endpoint
//! (OpenAI-compatible, Azure OpenAI or Anthropic: see
//! [`crate::provider`], which translates bodies and answers so that the
//! clients speak OpenAI's chat completions to all), JSON POSTs with
//! timeouts and retries, keys kept out of every message.
//!
//! The per-request timeout starts when the request is sent, after the
//! permit for a call in flight is held (`EVAL_JUDGE_CONCURRENCY`): waiting
//! in this process's own queue is not counted, waiting in the server's is.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use serde_json::Value;

use crate::config::{DEFAULT_AZURE_API_VERSION, Headers, Provider, Secret, ServiceSettings};
use crate::http::{Failure, read_body, redact_url, retry_after_header, runtime_client};
use crate::model::one_line;
pub use crate::model::{ServiceError, Usage};
use crate::provider::{Wire, error_reason, model_hint};

/// One OpenAI-compatible endpoint.
#[derive(Clone)]
pub(crate) struct Endpoint {
    url: reqwest::Url,
    pub(crate) shown: String,
    api_key: Option<Secret>,
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) max_response_bytes: u64,
    /// Calls in flight at once through this endpoint and those it shares
    /// them with (a run's judge and embeddings: `EVAL_JUDGE_CONCURRENCY`).
    pub(crate) permits: Arc<Semaphore>,
    /// The API spoken and the custom headers sent.
    wire: Wire,
    /// A chat endpoint (translated for Anthropic), else embeddings.
    chat: bool,
    /// The setting naming the model (`EVAL_JUDGE_MODEL`), for errors.
    model_var: &'static str,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.shown)
            .field("api_key", &self.api_key)
            .field("provider", &self.wire.provider)
            .field("headers", &self.wire.headers)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Endpoint {
    /// `base` (e.g. `http://127.0.0.1:8000/v1`) plus `path`
    /// (`chat/completions`), unless its path already ends with it; the
    /// provider its host implies (see [`Provider::implied_by_url`]).
    pub(crate) fn new(what: &str, base: &str, path: &str) -> Result<Endpoint, ServiceError> {
        let wire = Wire::new(Provider::implied_by_url(base), Headers::none());
        Endpoint::at(what, base, path, wire, DEFAULT_AZURE_API_VERSION)
    }

    fn at(
        what: &str,
        base: &str,
        path: &str,
        wire: Wire,
        api_version: &str,
    ) -> Result<Endpoint, ServiceError> {
        let url = reqwest::Url::parse(base.trim()).map_err(|e| ServiceError::Config {
            what: format!("{what} URL"),
            reason: format!("{e} (expected e.g. http://127.0.0.1:8000/v1)"),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ServiceError::Config {
                what: format!("{what} URL"),
                reason: format!("scheme `{}` is not http or https", url.scheme()),
            });
        }
        // The path gets `/chat/completions` (or `/embeddings`; Anthropic:
        // `/v1/messages`) unless it ends with it; a query
        // (`?api-version=...`) stays where it is.
        let url = wire
            .locate(url, path, api_version)
            .map_err(|reason| ServiceError::Config {
                what: format!("{what} URL"),
                reason,
            })?;
        let embeddings = path == "embeddings";
        Ok(Endpoint {
            shown: redact_url(&url),
            url,
            api_key: None,
            timeout: crate::config::DEFAULT_SERVICE_TIMEOUT,
            max_retries: 4,
            max_response_bytes: crate::http::DEFAULT_MAX_RESPONSE_BYTES,
            permits: Arc::new(Semaphore::new(4 * crate::config::DEFAULT_CONCURRENCY)),
            wire,
            chat: !embeddings,
            model_var: if embeddings {
                "EVAL_EMBED_MODEL"
            } else {
                "EVAL_JUDGE_MODEL"
            },
        })
    }

    pub(crate) fn with_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.filter(|k| !k.is_empty()).map(Secret::new);
        self
    }

    /// The endpoint and model `settings` name (`EVAL_JUDGE_*` or
    /// `EVAL_EMBED_*`, see [`Config`](crate::Config)): `NotConfigured` with
    /// `hint` when no URL is set.
    pub(crate) fn from_settings(
        what: &'static str,
        settings: &ServiceSettings,
        path: &str,
        hint: &str,
        permits: usize,
    ) -> Result<(Endpoint, String), ServiceError> {
        let Some(url) = &settings.url else {
            return Err(ServiceError::NotConfigured {
                what,
                hint: hint.to_string(),
            });
        };
        let chosen = &settings.wire;
        let wire = Wire::new(
            Provider::resolve(chosen.provider, url),
            chosen.headers.clone(),
        );
        let api_version = chosen.azure_api_version.as_str();
        let mut endpoint = Endpoint::at(what, url, path, wire, api_version)?;
        endpoint.api_key = settings.api_key.clone();
        endpoint.timeout = settings.timeout;
        endpoint.max_response_bytes = settings.max_response_bytes;
        endpoint.permits = Arc::new(Semaphore::new(permits));
        Ok((endpoint, settings.model.clone()))
    }

    /// The host, with the port when the URL names one (`127.0.0.1:8000`,
    /// `api.openai.com`): no scheme, credentials, path or query.
    pub(crate) fn host(&self) -> String {
        let host = self.url.host_str().unwrap_or("");
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        }
    }

    /// The full URL, query included, for cache keys (hashed, never shown):
    /// endpoints that differ only in their query (`?api-version=`) differ.
    pub(crate) fn cache_id(&self) -> &str {
        self.url.as_str()
    }

    /// POSTs `body`, retrying 429, 5xx and connection failures with backoff
    /// (honouring `Retry-After` in seconds, at most 60). Every attempt is
    /// counted in `usage`, also when the call fails in the end.
    pub(crate) async fn post(
        &self,
        body: &Value,
        usage: &mut Usage,
    ) -> Result<Value, ServiceError> {
        self.post_unless(body, usage, &|_, _| false).await
    }

    /// [`post`](Self::post), but an error answer that `final_answer(status,
    /// body)` says will not change (a server refusing what was asked, not
    /// failing) is returned at once, not retried.
    pub(crate) async fn post_unless(
        &self,
        body: &Value,
        usage: &mut Usage,
        final_answer: &(dyn Fn(u16, &str) -> bool + Sync),
    ) -> Result<Value, ServiceError> {
        let client = runtime_client(self.url.as_str()).map_err(|e| ServiceError::Config {
            what: "HTTP client".into(),
            reason: e.to_string(),
        })?;
        let sent = self
            .wire
            .request(body, self.chat)
            .map_err(|reason| ServiceError::Config {
                what: format!("request to {}", self.shown),
                reason,
            })?;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            usage.count_attempt(attempt > 1);
            let request = client
                .post(self.url.clone())
                .timeout(self.timeout)
                .json(&sent);
            let request = self
                .wire
                .authorize(request, self.api_key.as_ref())
                .map_err(|why| ServiceError::Config {
                    what: "API key".into(),
                    reason: why.into(),
                })?;
            // Judge and embedding calls in flight are bounded over the
            // process, however many metrics each sample scores at once.
            let permit = self.permits.acquire().await;
            let wait = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = retry_after_header(&response);
                    let read = read_body(response, self.max_response_bytes, self.timeout).await;
                    drop(permit);
                    let bytes = match read {
                        Ok(bytes) => bytes,
                        Err(refusal) if refusal.is_transient() && attempt <= self.max_retries => {
                            tokio::time::sleep(backoff(attempt)).await;
                            continue;
                        }
                        Err(refusal) => {
                            return Err(ServiceError::Refused {
                                url: self.shown.clone(),
                                refusal,
                            });
                        }
                    };
                    if status.is_success() {
                        if let Err(e) = std::str::from_utf8(&bytes) {
                            return Err(ServiceError::BadResponse {
                                url: self.shown.clone(),
                                reason: format!(
                                    "the answer is not text: invalid UTF-8 at byte offset {} of the body",
                                    e.valid_up_to()
                                ),
                            });
                        }
                        let value = crate::http::reply_json(&bytes, self.max_response_bytes)
                            .map_err(|e| ServiceError::BadResponse {
                                url: self.shown.clone(),
                                reason: match e {
                                    eval_datasets::json::BoundedJsonError::TooBig { .. } => {
                                        format!(
                                            "refused: {e} (EVAL_MAX_RESPONSE_BYTES × {})",
                                            crate::http::PARSED_PER_BYTE
                                        )
                                    }
                                    e => format!(
                                        "not JSON ({e}): {}",
                                        one_line(&String::from_utf8_lossy(&bytes), 120)
                                    ),
                                },
                            })?;
                        return self.wire.answer(value, self.chat).map_err(|reason| {
                            ServiceError::BadResponse {
                                url: self.shown.clone(),
                                reason,
                            }
                        });
                    }
                    // 429, 5xx (Anthropic's 529 "overloaded" too) are retried.
                    let retryable = (status.as_u16() == 429 || status.is_server_error())
                        && !final_answer(status.as_u16(), &String::from_utf8_lossy(&bytes));
                    if !retryable || attempt > self.max_retries {
                        let mut reason = error_reason(&bytes);
                        let model = body["model"].as_str().unwrap_or("");
                        if let Some(hint) =
                            model_hint(status.as_u16(), &reason, model, self.model_var)
                        {
                            reason = format!("{reason} — {hint}");
                        }
                        return Err(ServiceError::Status {
                            url: self.shown.clone(),
                            status: status.as_u16(),
                            attempts: attempt,
                            body: reason,
                        });
                    }
                    retry_after.unwrap_or_else(|| backoff(attempt))
                }
                Err(e) => match Failure::of_send(&e) {
                    Failure::Refused(refusal) => {
                        return Err(ServiceError::Refused {
                            url: self.shown.clone(),
                            refusal,
                        });
                    }
                    failure if attempt > self.max_retries => {
                        let cause = match failure {
                            Failure::Unreachable(cause) => cause,
                            _ => format!("no answer within {}s", self.timeout.as_secs_f64()),
                        };
                        return Err(ServiceError::Unreachable {
                            url: self.shown.clone(),
                            attempts: attempt,
                            cause,
                        });
                    }
                    _ => backoff(attempt),
                },
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// The longest wait between two attempts of a judge or embeddings call.
const BACKOFF_MAX: Duration = Duration::from_secs(8);

fn backoff(attempt: u32) -> Duration {
    crate::http::backoff(attempt, BACKOFF_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{MAX_RETRY_AFTER, retry_after};
    use std::time::UNIX_EPOCH;

    #[test]
    fn retry_after_takes_seconds_or_an_http_date() {
        // 1994-11-06 08:49:37 GMT, RFC 9110's example date.
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(" 0.5 ", now), Some(Duration::from_millis(500)));
        assert_eq!(retry_after("3600", now), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after("-1", now), None);
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:30 GMT", now),
            Some(Duration::ZERO),
            "a date in the past means retry now"
        );
        assert_eq!(
            retry_after("Mon, 07 Nov 1994 08:49:37 GMT", now),
            Some(MAX_RETRY_AFTER)
        );
    }

    #[test]
    fn endpoint_settings_come_from_the_config() {
        let config = crate::Config::from_vars(
            |name| {
                Ok(match name {
                    "EVAL_JUDGE_URL" => Some("http://user:pw@127.0.0.1:9/v1?api-version=2".into()),
                    "OPENAI_API_KEY" => Some("sk-fallback-123".into()),
                    "EVAL_JUDGE_TIMEOUT_SECS" => Some("7".into()),
                    _ => None,
                })
            },
            &[],
        )
        .unwrap();
        let build = |settings| {
            Endpoint::from_settings(
                "LLM judge",
                settings,
                "chat/completions",
                "set EVAL_JUDGE_URL",
                1,
            )
        };
        match build(&config.embed) {
            Err(ServiceError::NotConfigured { what, hint }) => {
                assert_eq!((what, hint.as_str()), ("LLM judge", "set EVAL_JUDGE_URL"));
            }
            other => panic!("{other:?}"),
        }
        let (e, model) = build(&config.judge).unwrap();
        assert_eq!(model, "gpt-4o-mini");
        assert_eq!(e.timeout, Duration::from_secs(7));
        assert_eq!(
            e.cache_id(),
            "http://user:pw@127.0.0.1:9/v1/chat/completions?api-version=2"
        );
        assert!(!e.shown.contains("pw"), "{}", e.shown);
        assert_eq!(e.host(), "127.0.0.1:9", "no credentials, path or query");
        assert_eq!(
            crate::model::one_line("key sk-fallback-123 here", 100),
            "key <redacted> here"
        );
        assert!(!format!("{e:?}").contains("sk-fallback"));
        let e = Endpoint::new(
            "LLM judge",
            "http://127.0.0.1:9/v1/chat/completions",
            "chat/completions",
        )
        .unwrap();
        assert_eq!(e.cache_id(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(e.host(), "127.0.0.1:9");
        match Endpoint::new("LLM judge", "ftp://x", "chat/completions") {
            Err(ServiceError::Config { what, .. }) => assert_eq!(what, "LLM judge URL"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_bounds() {
        for attempt in 1..=8u32 {
            let base =
                Duration::from_millis(250u64 << (attempt - 1).min(5)).min(Duration::from_secs(8));
            for _ in 0..50 {
                let wait = backoff(attempt);
                assert!(
                    wait >= base / 2 && wait <= base,
                    "attempt {attempt}: {wait:?}"
                );
            }
        }
        let draws: std::collections::HashSet<u128> =
            (0..20).map(|_| backoff(3).as_nanos()).collect();
        assert!(draws.len() > 1, "the jitter varies");
    }
}
