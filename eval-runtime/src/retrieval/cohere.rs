//! A reranker speaking Cohere's Rerank API, as Unrag's reranker battery
//! calls it (seed 004's `retrieve+rerank` mode). The wire format, as
//! Cohere documents it (API reference, "Rerank V2", `POST /v2/rerank`; v1
//! takes the same fields):
//!
//! ```text
//! request  {"model": "rerank-v3.5", "query": "...", "documents": ["...", ...], "top_n": 3}
//! answer   {"id": "...", "results": [{"index": 2, "relevance_score": 0.98}, ...], "meta": {...}}
//! ```
//!
//! `results` are the documents' positions in `documents`, most relevant
//! first; each becomes the candidate at that position, scored with its
//! `relevance_score`, in the order given.

use serde_json::{Value, json};

use super::{Hit, RetrieverError};
use crate::http::redact_url;
use crate::model::{Error, Result};

/// Where and how candidates are reranked (see the module docs).
#[derive(Clone)]
pub(crate) struct CohereReranker {
    url: reqwest::Url,
    shown: String,
    model: String,
    api_key: Option<crate::Secret>,
}

impl std::fmt::Debug for CohereReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CohereReranker")
            .field("url", &self.shown)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl CohereReranker {
    pub(crate) fn new(url: &str, model: &str, api_key: Option<crate::Secret>) -> Result<Self> {
        let url = reqwest::Url::parse(url.trim()).map_err(|e| Error::Config {
            what: "reranker URL (EVAL_RERANK_URL)".into(),
            reason: format!("{e} (expected e.g. https://api.cohere.com/v2/rerank)"),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::Config {
                what: "reranker URL (EVAL_RERANK_URL)".into(),
                reason: format!("scheme `{}` is not http or https", url.scheme()),
            });
        }
        Ok(CohereReranker {
            shown: redact_url(&url),
            url,
            model: model.to_string(),
            api_key,
        })
    }

    /// The rerank service's URL.
    pub(crate) fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// `request` with the key, as a bearer token.
    pub(crate) fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => request.bearer_auth(key.expose()),
            None => request,
        }
    }

    /// The request body ranking `candidates` for `query`, `k` kept.
    pub(crate) fn body(
        &self,
        query: &str,
        candidates: &[Hit],
        k: usize,
    ) -> std::result::Result<Value, RetrieverError> {
        let mut documents = Vec::with_capacity(candidates.len());
        for hit in candidates {
            match &hit.content {
                Some(text) => documents.push(Value::from(text.clone())),
                None => {
                    return Err(RetrieverError::Failed(format!(
                        "the search gave no `content` for `{}`: a reranker reads each candidate's text",
                        hit.source_id
                    )));
                }
            }
        }
        Ok(json!({
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": k.min(candidates.len()),
        }))
    }

    /// The `k` most relevant of `candidates`, best first, as `answer` ranks
    /// them, each scored with its `relevance_score`.
    pub(crate) fn read(
        &self,
        answer: &Value,
        candidates: &[Hit],
        k: usize,
    ) -> std::result::Result<Vec<Hit>, RetrieverError> {
        let bad = |reason: String| RetrieverError::BadResponse {
            url: self.shown.clone(),
            reason,
        };
        let results = answer
            .get("results")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("the reranker's answer has no `results` array".into()))?;
        let mut hits = Vec::with_capacity(results.len().min(k));
        for (i, r) in results.iter().take(k).enumerate() {
            let index = r
                .get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad(format!("results[{i}] has no `index` number")))?;
            let score = r
                .get("relevance_score")
                .and_then(Value::as_f64)
                .ok_or_else(|| bad(format!("results[{i}] has no `relevance_score` number")))?;
            let hit = usize::try_from(index)
                .ok()
                .and_then(|n| candidates.get(n))
                .ok_or_else(|| {
                    bad(format!(
                        "results[{i}].index {index} is not one of the {} documents sent",
                        candidates.len()
                    ))
                })?;
            hits.push(Hit {
                score: Some(score),
                ..hit.clone()
            });
        }
        Ok(hits)
    }
}
