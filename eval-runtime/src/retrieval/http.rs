//! [`HttpRetriever`]: a retriever reached over HTTP (the `http` feature).

use std::time::Duration;

use serde_json::{Value, json};

use super::{Hit, IngestDocument, Retriever, RetrieverError, RetrieverFuture};
use crate::config::Config;
use crate::http::{Failure, read_body, redact_url, runtime_client};
use crate::model::{Error, Result, one_line};

/// [`Retriever`] over HTTP (see the module docs for the contract).
#[derive(Clone)]
pub struct HttpRetriever {
    base: reqwest::Url,
    shown: String,
    timeout: Duration,
    max_response_bytes: u64,
    /// `EVAL_RETRIEVER_HEADERS`: sent with every request (all to the base
    /// URL's origin).
    headers: crate::config::Headers,
    /// `EVAL_RERANK_URL`: a Cohere-style reranker instead of the `rerank`
    /// route.
    reranker: Option<super::cohere::CohereReranker>,
}

impl std::fmt::Debug for HttpRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpRetriever")
            .field("url", &self.shown)
            .field("headers", &self.headers)
            .finish()
    }
}

impl HttpRetriever {
    /// A retriever at `base` (e.g. `http://127.0.0.1:8080/retrieval`).
    pub fn new(base: &str) -> Result<HttpRetriever> {
        let mut url = reqwest::Url::parse(base.trim()).map_err(|e| Error::Config {
            what: "retriever URL".into(),
            reason: format!("{e} (expected e.g. http://127.0.0.1:8080/retrieval)"),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::Config {
                what: "retriever URL".into(),
                reason: format!("scheme `{}` is not http or https", url.scheme()),
            });
        }
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(HttpRetriever {
            shown: redact_url(&url),
            base: url,
            timeout: Duration::from_secs(60),
            max_response_bytes: crate::http::DEFAULT_MAX_RESPONSE_BYTES,
            headers: crate::config::Headers::none(),
            reranker: None,
        })
    }

    /// The retriever `config` names.
    pub fn from_config(config: &Config) -> Result<HttpRetriever> {
        let url = config.retriever_url.as_deref().ok_or(Error::MissingEnv {
            var: "EVAL_RETRIEVER_URL",
            hint: "set it to your retriever's base URL, e.g. EVAL_RETRIEVER_URL=http://127.0.0.1:8080/retrieval",
        })?;
        let mut r = HttpRetriever::new(url)?;
        r.timeout = config.retriever_timeout;
        r.max_response_bytes = config.max_response_bytes;
        r.headers = config.providers.retriever_headers.clone();
        r.reranker_from(&config.rerank)
    }

    /// Reranks `retrieve+rerank` candidates with the rerank service at
    /// `url` speaking Cohere's Rerank API (`POST {model, query, documents,
    /// top_n}`, answered `{results: [{index, relevance_score}]}`), as
    /// Unrag's reranker battery does, instead of the retriever's own
    /// `rerank` route (`EVAL_RERANK_URL`, `EVAL_RERANK_MODEL`,
    /// `EVAL_RERANK_API_KEY`, sent as a bearer token).
    pub fn cohere_rerank(
        mut self,
        url: &str,
        model: &str,
        api_key: Option<crate::Secret>,
    ) -> Result<HttpRetriever> {
        self.reranker = Some(super::cohere::CohereReranker::new(url, model, api_key)?);
        Ok(self)
    }

    /// Reranks with the service `settings` name (`EVAL_RERANK_*`), if any
    /// ([`cohere_rerank`](Self::cohere_rerank)).
    #[doc(hidden)]
    pub fn reranker_from(
        self,
        settings: &crate::config::rerank::RerankSettings,
    ) -> Result<HttpRetriever> {
        match &settings.url {
            Some(url) => self.cohere_rerank(url, &settings.model, settings.api_key.clone()),
            None => Ok(self),
        }
    }

    /// Sends `headers` with every request (`EVAL_RETRIEVER_HEADERS`).
    pub fn headers(mut self, headers: crate::config::Headers) -> Self {
        self.headers = headers;
        self
    }

    /// The base URL, credentials removed.
    pub fn url(&self) -> &str {
        &self.shown
    }

    async fn post(&self, path: &str, body: Value) -> std::result::Result<Value, RetrieverError> {
        let url = self
            .base
            .join(path)
            .map_err(|e| RetrieverError::Failed(e.to_string()))?;
        let shown = redact_url(&url);
        let value = self.send(&url, body, |r| self.headers.apply(r)).await?;
        hits_or(value, &shown)
    }

    /// One `POST` of `body` to `url` (the request shaped by `with`, e.g.
    /// its headers): the JSON answer.
    async fn send(
        &self,
        url: &reqwest::Url,
        body: Value,
        with: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> std::result::Result<Value, RetrieverError> {
        let shown = redact_url(url);
        let client =
            runtime_client(url.as_str()).map_err(|e| RetrieverError::Failed(e.to_string()))?;
        let request = client.post(url.clone()).timeout(self.timeout).json(&body);
        let response = with(request)
            .send()
            .await
            .map_err(|e| match Failure::of_send(&e) {
                Failure::Timeout => RetrieverError::Timeout {
                    url: shown.clone(),
                    secs: self.timeout.as_secs_f64(),
                },
                Failure::Unreachable(cause) => RetrieverError::Unreachable {
                    url: shown.clone(),
                    cause,
                },
                Failure::Refused(refusal) => RetrieverError::Refused {
                    url: shown.clone(),
                    refusal,
                },
            })?;
        let status = response.status();
        let bytes = read_body(response, self.max_response_bytes, self.timeout)
            .await
            .map_err(|refusal| RetrieverError::Refused {
                url: shown.clone(),
                refusal,
            })?;
        if !status.is_success() {
            return Err(RetrieverError::Status {
                url: shown.clone(),
                status: status.as_u16(),
                body: one_line(&String::from_utf8_lossy(&bytes), 200),
            });
        }
        let value: Value =
            crate::http::reply_json(&bytes, self.max_response_bytes).map_err(|e| {
                RetrieverError::BadResponse {
                    url: shown.clone(),
                    reason: match e {
                        eval_datasets::json::BoundedJsonError::TooBig { .. } => {
                            format!("refused: {e}")
                        }
                        e => format!("not JSON: {e}"),
                    },
                }
            })?;
        Ok(value)
    }
}

/// `value`, unless it is a search answer whose `results` cannot be read.
fn hits_or(value: Value, shown: &str) -> std::result::Result<Value, RetrieverError> {
    if value.get("results").is_some()
        && let Err(reason) = hits(&value)
    {
        return Err(RetrieverError::BadResponse {
            url: shown.to_string(),
            reason,
        });
    }
    Ok(value)
}

fn hits(v: &Value) -> std::result::Result<Vec<Hit>, String> {
    let list = v
        .get("results")
        .and_then(Value::as_array)
        .ok_or("the retriever's answer has no `results` array")?;
    list.iter()
        .enumerate()
        .map(|(i, h)| {
            let source_id = h
                .get("sourceId")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("results[{i}] has no `sourceId` string"))?;
            Ok(Hit {
                source_id: source_id.to_string(),
                content: h.get("content").and_then(Value::as_str).map(str::to_string),
                score: h.get("score").and_then(Value::as_f64),
            })
        })
        .collect()
}

impl Retriever for HttpRetriever {
    fn shared_id(&self) -> Option<String> {
        Some(self.base.to_string())
    }

    fn delete_prefix<'a>(&'a self, prefix: &'a str) -> RetrieverFuture<'a, u64> {
        Box::pin(async move {
            let v = self.post("delete", json!({ "prefix": prefix })).await?;
            Ok(v.get("deleted").and_then(Value::as_u64).unwrap_or(0))
        })
    }

    fn ingest<'a>(&'a self, documents: &'a [IngestDocument]) -> RetrieverFuture<'a, ()> {
        Box::pin(async move {
            let docs: Vec<Value> = documents
                .iter()
                .map(|d| json!({"sourceId": d.source_id, "content": d.content, "metadata": d.metadata}))
                .collect();
            self.post("ingest", json!({ "documents": docs }))
                .await
                .map(|_| ())
        })
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        prefix: &'a str,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        Box::pin(async move {
            let v = self
                .post(
                    "search",
                    json!({"query": query, "scopePrefix": prefix, "topK": k}),
                )
                .await?;
            hits(&v).map_err(|reason| RetrieverError::BadResponse {
                url: self.shown.clone(),
                reason,
            })
        })
    }

    fn rerank<'a>(
        &'a self,
        query: &'a str,
        candidates: Vec<Hit>,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        if let Some(reranker) = &self.reranker {
            return Box::pin(async move {
                if candidates.is_empty() {
                    return Ok(Vec::new());
                }
                let body = reranker.body(query, &candidates, k)?;
                let answer = self
                    .send(reranker.url(), body, |r| reranker.authorize(r))
                    .await?;
                reranker.read(&answer, &candidates, k)
            });
        }
        Box::pin(async move {
            let c: Vec<Value> = candidates
                .iter()
                .map(|h| json!({"sourceId": h.source_id, "content": h.content}))
                .collect();
            let v = self
                .post(
                    "rerank",
                    json!({"query": query, "topK": k, "candidates": c}),
                )
                .await?;
            hits(&v).map_err(|reason| RetrieverError::BadResponse {
                url: self.shown.clone(),
                reason,
            })
        })
    }
}
