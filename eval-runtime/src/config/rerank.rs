//! The reranker of seed 004's `retrieve+rerank` mode, when it is a
//! Cohere-style rerank service (Unrag's reranker battery uses Cohere's
//! Rerank API): `EVAL_RERANK_URL` (the rerank endpoint, e.g.
//! `https://api.cohere.com/v2/rerank`), `EVAL_RERANK_MODEL` (default
//! `rerank-v3.5`), `EVAL_RERANK_API_KEY` (sent as a bearer token). Without
//! `EVAL_RERANK_URL` the retriever's own `rerank` route is asked.

use super::Secret;

/// Cohere's current rerank model, the default.
pub(crate) const DEFAULT_RERANK_MODEL: &str = "rerank-v3.5";

/// Where `retrieve+rerank` candidates are reranked (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RerankSettings {
    /// `EVAL_RERANK_URL`: a rerank endpoint speaking Cohere's Rerank API;
    /// `None`: the retriever's own `rerank` route.
    pub url: Option<String>,
    /// `EVAL_RERANK_MODEL` (default `rerank-v3.5`).
    pub model: String,
    /// `EVAL_RERANK_API_KEY`.
    pub api_key: Option<Secret>,
}

impl RerankSettings {
    pub(super) fn get(get: &mut impl FnMut(&'static str, bool) -> Option<String>) -> Self {
        RerankSettings {
            url: get("EVAL_RERANK_URL", false).filter(|u| !u.trim().is_empty()),
            model: get("EVAL_RERANK_MODEL", false)
                .filter(|m| !m.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_RERANK_MODEL.to_string()),
            api_key: get("EVAL_RERANK_API_KEY", true)
                .filter(|k| !k.is_empty())
                .map(Secret::new),
        }
    }
}
