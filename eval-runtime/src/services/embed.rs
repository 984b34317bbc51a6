//! Embeddings: any OpenAI-compatible `/v1/embeddings` server
//! (`EVAL_EMBED_URL`, `EVAL_EMBED_MODEL`, `EVAL_EMBED_API_KEY` else
//! `OPENAI_API_KEY`). Vectors are cached per text (see [`Cache`](super::Cache)).
//!
//! A server may answer one vector *per token* of a text instead of one per
//! text: llama-cpp-python's server does for a model loaded with pooling
//! type `none` (0.3.36, `llama_cpp/llama.py`, `Llama.embed`: with
//! `LLAMA_POOLING_TYPE_NONE` each `data[i].embedding` is a list of
//! `n_tokens` lists of `n_embd` floats). Such an answer is mean-pooled
//! (each dimension averaged over the tokens, as sentence-transformers'
//! default mean pooling does), and said once per server on stderr. (That
//! server has no pooling setting: it keeps the model's own type, none for a
//! chat model such as SmolLM2; an embedding model pools.)

use serde_json::{Value, json};

use super::cache::Cache;
use super::endpoint::{Endpoint, ServiceError, Usage};
use crate::config::Config;

/// A configured embeddings client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Embedder {
    endpoint: Endpoint,
    model: String,
    cache: Option<Cache>,
    /// An estimate's dry run: texts are counted by it, never sent.
    dry: Option<std::sync::Arc<super::DryRun>>,
}

impl Embedder {
    /// An embedder at `url` (base such as `http://host/v1`, or the full
    /// `.../embeddings`) using `model`.
    pub fn new(url: &str, model: &str) -> Result<Embedder, ServiceError> {
        Ok(Embedder {
            endpoint: Endpoint::new("embeddings", url, "embeddings")?,
            model: model.to_string(),
            cache: None,
            dry: None,
        })
    }

    /// The embeddings server `config` names (`EVAL_EMBED_*`), with its cache;
    /// `Err(NotConfigured)` without `EVAL_EMBED_URL`.
    pub fn from_config(config: &Config) -> Result<Embedder, ServiceError> {
        let (endpoint, model) = Endpoint::from_settings(
            "embeddings",
            &config.embed,
            "embeddings",
            "set EVAL_EMBED_URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1) and EVAL_EMBED_MODEL",
            config.judge_concurrency(),
        )?;
        Ok(Embedder {
            endpoint,
            model,
            cache: Cache::from_config(config),
            dry: None,
        })
    }

    super::client::endpoint_client!();

    /// Sets (or clears) the cache.
    pub fn cache(mut self, cache: Option<Cache>) -> Self {
        self.cache = cache;
        self
    }

    /// One vector per text, in order; texts already cached are not sent.
    /// Calls and cache hits are added to `usage`, also when the call fails
    /// (and to the run's meter as the embeddings', also when the call is
    /// cut short by the sample's timeout).
    pub async fn embed(
        &self,
        texts: &[&str],
        usage: &mut Usage,
    ) -> Result<Vec<Vec<f64>>, ServiceError> {
        crate::model::meter::as_role(
            crate::model::meter::Role::Embeddings,
            self.embed_counted(texts, usage),
        )
        .await
    }

    async fn embed_counted(
        &self,
        texts: &[&str],
        usage: &mut Usage,
    ) -> Result<Vec<Vec<f64>>, ServiceError> {
        if let Some(dry) = &self.dry {
            return Ok(dry.embed(&self.model, texts, usage));
        }
        let keys: Vec<String> = texts
            .iter()
            .map(|t| Cache::key(&["embed", self.endpoint.cache_id(), &self.model, t]))
            .collect();
        let mut vectors: Vec<Option<Vec<f64>>> = keys
            .iter()
            .map(|k| {
                let cached = self.cache.as_ref()?.get(k)?;
                vector(&cached).ok()
            })
            .collect();
        usage.count_cache_hits(vectors.iter().filter(|v| v.is_some()).count());
        // Each text not cached yet, once.
        let mut missing: Vec<usize> = Vec::new();
        for i in (0..texts.len()).filter(|i| vectors[*i].is_none()) {
            if !missing.iter().any(|m| texts[*m] == texts[i]) {
                missing.push(i);
            }
        }
        if !missing.is_empty() {
            let input: Vec<&str> = missing.iter().map(|i| texts[*i]).collect();
            let sent = json!({"model": self.model, "input": input});
            let answer = self.endpoint.post(&sent, usage).await?;
            let reported = match answer.get("usage").filter(|u| !u.is_null()) {
                Some(u) => crate::model::Reported::of(Some(u)),
                // No usage: counted here, never a silent $0.
                None => crate::agent::unreported_reply(&sent, ""),
            };
            usage.count_reported(
                &format!("the embeddings server at {}", self.endpoint.shown),
                reported,
            );
            let bad = |reason: String| ServiceError::BadResponse {
                url: self.endpoint.shown.clone(),
                reason,
            };
            let data = answer["data"]
                .as_array()
                .ok_or_else(|| bad("no `data` array".into()))?;
            if data.len() != missing.len() {
                return Err(bad(format!(
                    "{} vectors for {} texts",
                    data.len(),
                    missing.len()
                )));
            }
            for (pos, item) in data.iter().enumerate() {
                // Servers give `index`; fall back to order.
                let at = item["index"].as_u64().map_or(pos, |i| i as usize);
                let Some(&slot) = missing.get(at) else {
                    return Err(bad(format!("vector index {at} out of range")));
                };
                let v = vector(&item["embedding"]).map_err(bad)?;
                if is_per_token(&item["embedding"]) {
                    say_pooled(&self.endpoint.shown);
                }
                if let Some(cache) = &self.cache {
                    cache.put(&keys[slot], &item["embedding"]);
                }
                for (i, text) in texts.iter().enumerate() {
                    if *text == texts[slot] {
                        vectors[i] = Some(v.clone());
                    }
                }
            }
        }
        let vectors = vectors
            .into_iter()
            .map(|v| {
                v.ok_or_else(|| ServiceError::BadResponse {
                    url: self.endpoint.shown.clone(),
                    reason: "a text got no vector".into(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(vectors)
    }
}

/// One text's vector: an array of numbers, or one array of numbers per
/// token (mean-pooled: see the module's docs).
fn vector(v: &Value) -> Result<Vec<f64>, String> {
    let items = v.as_array().ok_or("an `embedding` is not an array")?;
    if items.is_empty() {
        return Err("an `embedding` is empty".into());
    }
    if is_per_token(v) {
        return mean_pool(items);
    }
    items
        .iter()
        .map(|x| {
            x.as_f64().ok_or_else(|| {
                "an `embedding` holds a non-number (expected one array of numbers per text, or one per token)".to_string()
            })
        })
        .collect()
}

/// Whether an `embedding` is one vector per token (its first item an array).
fn is_per_token(v: &Value) -> bool {
    v.as_array()
        .and_then(|items| items.first())
        .is_some_and(Value::is_array)
}

/// The mean of per-token vectors, dimension by dimension; every token's
/// vector must be numbers, of one length.
fn mean_pool(tokens: &[Value]) -> Result<Vec<f64>, String> {
    let mut sum: Vec<f64> = Vec::new();
    for (t, token) in tokens.iter().enumerate() {
        let token = token.as_array().ok_or_else(|| {
            format!("a per-token `embedding` holds a non-array at token {t} (expected one array of numbers per token)")
        })?;
        if t == 0 {
            if token.is_empty() {
                return Err("a per-token `embedding` has an empty vector".into());
            }
            sum = vec![0.0; token.len()];
        } else if token.len() != sum.len() {
            return Err(format!(
                "a per-token `embedding` has vectors of {} and {} dimensions (token {t}): cannot mean-pool them",
                sum.len(),
                token.len()
            ));
        }
        for (total, x) in sum.iter_mut().zip(token) {
            *total += x.as_f64().ok_or_else(|| {
                format!("a per-token `embedding` holds a non-number at token {t}")
            })?;
        }
    }
    let n = tokens.len() as f64;
    Ok(sum.into_iter().map(|total| total / n).collect())
}

/// Says once per server that its per-token vectors were mean-pooled.
fn say_pooled(server: &str) {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, OnceLock};
    static SAID: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    let first = SAID
        .get_or_init(Mutex::default)
        .lock()
        .map(|mut said| said.insert(server.to_string()))
        .unwrap_or(false);
    if first {
        crate::notice::note(&format!(
            "the embeddings server at {server} answers one vector per token (a model without a pooling type: llama-cpp-python's server keeps the model's own, none for a chat model): each text's vectors are mean-pooled into one; serve an embedding model to have the server pool them"
        ));
    }
}

/// Cosine similarity of two vectors (0 when either has zero length or they
/// differ in dimension).
pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_token_vectors_are_mean_pooled_and_bad_ones_named() {
        // llama-cpp-python 0.3.36 with pooling none: one list per token.
        let v = vector(&json!([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])).unwrap();
        assert_eq!(v, [2.0, 3.0, 4.0]);
        assert!(is_per_token(&json!([[1.0]])));
        assert!(!is_per_token(&json!([1.0])));
        assert_eq!(vector(&json!([0.5, 1.5])).unwrap(), [0.5, 1.5]);
        for (bad, want) in [
            (json!([[1.0, 2.0], [1.0]]), "vectors of 2 and 1 dimensions"),
            (json!([[1.0], 2.0]), "non-array at token 1"),
            (json!([[1.0], ["x"]]), "non-number at token 1"),
            (json!([[]]), "empty vector"),
            (json!([1.0, "x"]), "or one per token"),
        ] {
            let e = vector(&bad).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
