//! Retrieval evaluation datasets (Unrag, seed 004): the public model, and
//! the names of the rank metrics (computed by the runtime).
//!
//! ```json
//! {"version": "1", "id": "support", "defaults": {"topK": 10, "scopePrefix": "eval:support:", "mode": "retrieve"},
//!  "documents": [{"sourceId": "eval:support:doc:refunds", "content": "Refunds within 30 days..."}],
//!  "queries": [{"id": "q_refund", "query": "How long do I have?", "relevant": {"sourceIds": ["eval:support:doc:refunds"]}, "topK": 5}]}
//! ```
//!
//! Rules: `version` must be `"1"`; `defaults.scopePrefix` is required and
//! every document's `sourceId` must start with it; a document has `content`
//! or `loaderRef` (not both); `mode` is `retrieve` or `retrieve+rerank`;
//! `topK` and `rerankTopK` are whole numbers ≥ 1; query ids are unique. Every
//! problem is reported with its line.
//!
//! [`RetrievalDataset::load`] and [`RetrievalDataset::from_bytes`] read a
//! file; they are implemented with the Unrag adapter (`formats/unrag.rs`),
//! which also turns each query into a sample when a `.json` dataset is
//! loaded with [`Dataset`](crate::Dataset).
//!
//! The rank metrics ([`RankMetric`]: hit, recall, precision, MRR and nDCG
//! at k) follow Unrag's definitions, which are trec_eval's for binary
//! relevance; `eval_runtime::metrics::rank` computes them.

use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::rank::RankMetric;
pub use crate::sample::{Mode, RetrievalQuery, SAFE_PREFIX, scope_is_safe};

/// One document to ingest.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Document {
    /// `sourceId` (starts with the scope prefix).
    pub source_id: String,
    /// `content`, when given inline.
    pub content: Option<String>,
    /// `loaderRef`, resolved by the caller's loader hook.
    pub loader_ref: Option<String>,
    /// `metadata`.
    pub metadata: Map<String, Value>,
    /// Line in the dataset file.
    pub line: usize,
}

/// One labelled query.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Query {
    /// `id` (unique in the dataset).
    pub id: String,
    /// `query`: the search text.
    pub query: String,
    /// `relevant.sourceIds`: the ground truth (may be empty: nothing should be found).
    pub relevant: Vec<String>,
    /// k for this query (`topK`, else the dataset's).
    pub top_k: usize,
    /// The query's own `scopePrefix` (else the dataset's).
    pub scope_prefix: Option<String>,
    /// Line in the dataset file.
    pub line: usize,
}

/// A loaded retrieval dataset.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RetrievalDataset {
    /// The path as shown in messages.
    pub path: String,
    /// `id`.
    pub id: String,
    /// `description`.
    pub description: Option<String>,
    /// `defaults.topK` (default 10).
    pub top_k: usize,
    /// `defaults.scopePrefix`.
    pub scope_prefix: String,
    /// `defaults.mode` (default `retrieve`).
    pub mode: Mode,
    /// `defaults.rerankTopK` (default 3 × topK).
    pub rerank_top_k: usize,
    /// `defaults.thresholds` as written (`{"min": {"recallAtK": 0.75}}`).
    pub thresholds: Map<String, Value>,
    /// Documents to ingest (may be empty: evaluate what is indexed).
    pub documents: Vec<Document>,
    /// The queries.
    pub queries: Vec<Query>,
}

/// Whether `doc` looks like an Unrag dataset (for format detection).
pub fn is_retrieval_dataset(doc: &Value) -> bool {
    doc.as_object().is_some_and(|o| {
        o.contains_key("queries") && (o.contains_key("version") || o.contains_key("documents"))
    })
}

impl RetrievalDataset {
    /// Refuses a scope prefix that is not `eval:<name>` unless
    /// `allow_custom` (ingest deletes everything under the prefix); an empty
    /// prefix (everything) is refused even then.
    pub fn check_scope(&self, allow_custom: bool) -> Result<(), UnsafeScope> {
        if scope_is_safe(&self.scope_prefix)
            || (allow_custom && !self.scope_prefix.trim().is_empty())
        {
            Ok(())
        } else {
            Err(UnsafeScope {
                path: self.path.clone(),
                scope_prefix: self.scope_prefix.clone(),
            })
        }
    }
}

/// Why a scope prefix is not safe, for messages.
pub fn scope_problem(scope_prefix: &str) -> &'static str {
    if scope_prefix.trim().is_empty() {
        "is empty (every document of the index)"
    } else if scope_prefix.starts_with(SAFE_PREFIX) {
        "names nothing after `eval:` (every evaluation scope of the index)"
    } else {
        "does not start with `eval:`"
    }
}

/// A retrieval dataset whose scope prefix is not `eval:<name>`, used
/// without custom prefixes being allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}: scopePrefix `{scope_prefix}` {}: ingest deletes every document under it, so it is refused; allow it explicitly (--allow-custom-prefix, .allow_custom_prefix(true), allow_custom_prefix = true) if that is what you want",
    scope_problem(.scope_prefix)
)]
#[non_exhaustive]
pub struct UnsafeScope {
    /// The dataset path as shown.
    pub path: String,
    /// The refused `scopePrefix`.
    pub scope_prefix: String,
}
