//! Retrieval evaluation datasets (Unrag, seed 004) and the rank metrics.
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
//! Metrics ([`metrics_at_k`]) follow Unrag's definitions, which are
//! trec_eval's for binary relevance: the retrieved `sourceId`s are
//! de-duplicated in rank order and cut at k, then
//! - hit@k = 1 if a relevant document is among them, else 0;
//! - recall@k = relevant retrieved / relevant documents (0 when there are none);
//! - precision@k = relevant retrieved / k (trec_eval's P@k: divided by k even
//!   when fewer were retrieved);
//! - MRR@k = 1 / rank of the first relevant document (0 if none);
//! - nDCG@k = DCG / ideal DCG with gain 1 / log2(rank + 1), the ideal ranking
//!   holding min(relevant, k) relevant documents (0 when there are none).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{DatasetError, Problem};
use crate::fields::kind_of;
use crate::jsonl_format::parse_strict;
use crate::suggest::{closest, did_you_mean};

pub use crate::sample::{Mode, RetrievalQuery, SAFE_PREFIX};

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
    /// Reads and checks the dataset at `path`, shown as `shown`.
    pub fn load(path: &std::path::Path, shown: &str) -> Result<RetrievalDataset, DatasetError> {
        let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
            path: shown.to_string(),
            source,
        })?;
        Self::from_bytes(shown, &bytes)
    }

    /// Parses and checks `bytes` as the dataset named `shown`.
    pub fn from_bytes(shown: &str, bytes: &[u8]) -> Result<RetrievalDataset, DatasetError> {
        let invalid = |problems: Vec<Problem>| DatasetError::Invalid {
            path: shown.to_string(),
            problems,
        };
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let text = std::str::from_utf8(body)
            .map_err(|_| invalid(vec![Problem::new(shown, 1, "invalid UTF-8")]))?;
        let doc = parse_strict(text).map_err(|e| {
            invalid(vec![
                Problem::new(
                    shown,
                    e.line().max(1),
                    format!("invalid JSON: {}", strip_position(&e.to_string())),
                )
                .column(e.column().max(1)),
            ])
        })?;
        let mut problems = Vec::new();
        let line_of = |needle: &str, from: usize| -> usize {
            text.get(from..)
                .and_then(|rest| rest.find(needle))
                .map_or(1, |at| 1 + text[..from + at].matches('\n').count())
        };
        let Some(root) = doc.as_object() else {
            return Err(invalid(vec![Problem::new(
                shown,
                1,
                format!("expected a JSON object, found {}", kind_of(&doc)),
            )]));
        };
        let at = |key: &str| line_of(&format!("\"{key}\""), 0);
        match root.get("version") {
            Some(Value::String(v)) if v == "1" => {}
            Some(v) => problems.push(
                Problem::new(shown, at("version"), format!("unsupported version {v}: this tool reads version \"1\" of the Unrag dataset format"))
                    .field("version"),
            ),
            None => problems.push(Problem::new(shown, 1, "missing `version` (\"1\")").field("version")),
        }
        let id = match root.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(other) => {
                problems.push(
                    Problem::new(
                        shown,
                        at("id"),
                        format!("expected a non-empty string, found {}", kind_of(other)),
                    )
                    .field("id"),
                );
                String::new()
            }
            None => {
                problems.push(
                    Problem::new(
                        shown,
                        1,
                        "missing `id` (a stable name for reports and diffs)",
                    )
                    .field("id"),
                );
                String::new()
            }
        };
        let description = root
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        let empty = Map::new();
        let defaults = match root.get("defaults") {
            Some(Value::Object(d)) => d,
            Some(other) => {
                problems.push(
                    Problem::new(
                        shown,
                        at("defaults"),
                        format!("expected an object, found {}", kind_of(other)),
                    )
                    .field("defaults"),
                );
                &empty
            }
            None => &empty,
        };
        let positive = |v: &Value| v.as_u64().filter(|n| *n >= 1).map(|n| n as usize);
        let mut top_k = 10;
        if let Some(v) = defaults.get("topK") {
            match positive(v) {
                Some(n) => top_k = n,
                None => problems.push(
                    Problem::new(
                        shown,
                        at("topK"),
                        format!("`defaults.topK`: expected a whole number ≥ 1, found {v}"),
                    )
                    .field("topK"),
                ),
            }
        }
        let mode = match defaults.get("mode") {
            None => Mode::Retrieve,
            Some(Value::String(m)) if m == "retrieve" => Mode::Retrieve,
            Some(Value::String(m)) if m == "retrieve+rerank" => Mode::RetrieveRerank,
            Some(other) => {
                problems.push(Problem::new(shown, at("mode"), format!("`defaults.mode`: expected \"retrieve\" or \"retrieve+rerank\", found {other}")).field("mode"));
                Mode::Retrieve
            }
        };
        let mut rerank_top_k = top_k.saturating_mul(3);
        if let Some(v) = defaults.get("rerankTopK") {
            match positive(v) {
                Some(n) => rerank_top_k = n,
                None => problems.push(
                    Problem::new(
                        shown,
                        at("rerankTopK"),
                        format!("`defaults.rerankTopK`: expected a whole number ≥ 1, found {v}"),
                    )
                    .field("rerankTopK"),
                ),
            }
        }
        let scope_prefix = match defaults.get("scopePrefix") {
            Some(Value::String(p)) if !p.is_empty() => p.clone(),
            Some(other) => {
                problems.push(
                    Problem::new(
                        shown,
                        at("scopePrefix"),
                        format!(
                            "`defaults.scopePrefix`: expected a non-empty string, found {other}"
                        ),
                    )
                    .field("scopePrefix"),
                );
                String::new()
            }
            None => {
                problems.push(Problem::new(shown, 1, "missing `defaults.scopePrefix` (e.g. \"eval:my-dataset:\"): it isolates the dataset's documents").field("scopePrefix"));
                String::new()
            }
        };
        let thresholds = defaults
            .get("thresholds")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for k in unknown(
            root,
            &[
                "version",
                "id",
                "description",
                "defaults",
                "documents",
                "queries",
            ],
        ) {
            problems.push(Problem::new(
                shown,
                at(k),
                unknown_message(
                    "",
                    k,
                    &[
                        "version",
                        "id",
                        "description",
                        "defaults",
                        "documents",
                        "queries",
                    ],
                ),
            ));
        }
        const DEFAULTS: &[&str] = &["topK", "scopePrefix", "mode", "rerankTopK", "thresholds"];
        for k in unknown(defaults, DEFAULTS) {
            problems.push(Problem::new(
                shown,
                at(k),
                unknown_message("defaults.", k, DEFAULTS),
            ));
        }
        if let Some(d) = root.get("description").filter(|d| !d.is_string()) {
            problems.push(Problem::new(
                shown,
                at("description"),
                format!("`description`: expected a string, found {}", kind_of(d)),
            ));
        }

        // Documents.
        let mut documents = Vec::new();
        let mut find = Locator::after(text, "\"documents\"");
        match root.get("documents") {
            None => {}
            Some(Value::Array(docs)) => {
                for (i, d) in docs.iter().enumerate() {
                    let sid = d.get("sourceId").and_then(Value::as_str);
                    let line = find.next(sid);
                    let p = |m: String| Problem::new(shown, line, m);
                    let Some(o) = d.as_object() else {
                        problems.push(p(format!(
                            "documents[{i}]: expected an object, found {}",
                            kind_of(d)
                        )));
                        continue;
                    };
                    const DOC: &[&str] = &["sourceId", "content", "loaderRef", "metadata"];
                    for k in unknown(o, DOC) {
                        problems.push(p(unknown_message(&format!("documents[{i}]."), k, DOC)));
                    }
                    for (k, want) in [
                        ("content", "a non-empty string"),
                        ("loaderRef", "a non-empty string"),
                        ("metadata", "an object"),
                    ] {
                        if let Some(v) = o.get(k) {
                            let ok = if k == "metadata" {
                                v.is_object()
                            } else {
                                v.as_str().is_some_and(|t| !t.trim().is_empty())
                            };
                            if !ok {
                                problems.push(
                                    p(format!("documents[{i}].{k}: expected {want}, found {v}"))
                                        .field(k),
                                );
                            }
                        }
                    }
                    let Some(source_id) = sid.filter(|s| !s.is_empty()) else {
                        problems.push(
                            p(format!("documents[{i}]: needs a `sourceId`")).field("sourceId"),
                        );
                        continue;
                    };
                    if !scope_prefix.is_empty() && !source_id.starts_with(&scope_prefix) {
                        problems.push(
                            p(format!(
                                "document `{source_id}` is outside the dataset's scope: its sourceId must start with `{scope_prefix}` (ingest deletes and searches only under that prefix)"
                            ))
                            .field("sourceId"),
                        );
                    }
                    let content = o.get("content").and_then(Value::as_str).map(str::to_string);
                    let loader_ref = o
                        .get("loaderRef")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    match (&content, &loader_ref) {
                        (Some(_), Some(_)) => problems.push(p(format!("document `{source_id}` has both `content` and `loaderRef`; keep one"))),
                        (None, None) => problems.push(p(format!("document `{source_id}` needs `content` (text) or `loaderRef` (loaded by your hook)"))),
                        _ => {}
                    }
                    if documents
                        .iter()
                        .any(|x: &Document| x.source_id == source_id)
                    {
                        problems.push(
                            p(format!("document `{source_id}` is listed twice")).field("sourceId"),
                        );
                    }
                    documents.push(Document {
                        source_id: source_id.to_string(),
                        content,
                        loader_ref,
                        metadata: o
                            .get("metadata")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default(),
                        line,
                    });
                }
            }
            Some(other) => problems.push(Problem::new(
                shown,
                at("documents"),
                format!("`documents`: expected an array, found {}", kind_of(other)),
            )),
        }

        // Queries.
        let mut queries = Vec::new();
        let mut find = Locator::after(text, "\"queries\"");
        match root.get("queries") {
            Some(Value::Array(qs)) if !qs.is_empty() => {
                for (i, q) in qs.iter().enumerate() {
                    let qid = q.get("id").and_then(Value::as_str);
                    let line = find.next(qid);
                    let p = |m: String| Problem::new(shown, line, m);
                    let Some(o) = q.as_object() else {
                        problems.push(p(format!(
                            "queries[{i}]: expected an object, found {}",
                            kind_of(q)
                        )));
                        continue;
                    };
                    const QUERY: &[&str] = &["id", "query", "relevant", "topK", "scopePrefix"];
                    for k in unknown(o, QUERY) {
                        problems.push(p(unknown_message(&format!("queries[{i}]."), k, QUERY)));
                    }
                    if let Some(r) = o.get("relevant").and_then(Value::as_object) {
                        for k in unknown(r, &["sourceIds"]) {
                            problems.push(p(unknown_message(
                                &format!("queries[{i}].relevant."),
                                k,
                                &["sourceIds"],
                            )));
                        }
                    }
                    let Some(id) = qid.filter(|s| !s.trim().is_empty()) else {
                        problems.push(p(format!("queries[{i}]: needs an `id` (stable across edits, used in reports and diffs)")).field("id"));
                        continue;
                    };
                    let Some(query) = o
                        .get("query")
                        .and_then(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                    else {
                        problems.push(
                            p(format!("query `{id}` needs a non-empty `query`")).field("query"),
                        );
                        continue;
                    };
                    let relevant = match o.get("relevant").and_then(|r| r.get("sourceIds")) {
                        Some(Value::Array(ids)) => {
                            let mut out = Vec::new();
                            for v in ids {
                                match v.as_str() {
                                    Some("") => problems.push(p(format!(
                                        "query `{id}`: relevant.sourceIds holds an empty id"
                                    ))),
                                    Some(s) => out.push(s.to_string()),
                                    None => problems.push(p(format!("query `{id}`: relevant.sourceIds holds {}, expected strings", kind_of(v)))),
                                }
                            }
                            out
                        }
                        _ => {
                            problems.push(p(format!("query `{id}` needs `relevant.sourceIds` (an array; empty means nothing should be found)")).field("relevant"));
                            continue;
                        }
                    };
                    let top_k = match o.get("topK") {
                        None => top_k,
                        Some(v) => match positive(v) {
                            Some(n) => n,
                            None => {
                                problems.push(p(format!("query `{id}`: `topK` expected a whole number ≥ 1, found {v}")).field("topK"));
                                top_k
                            }
                        },
                    };
                    if queries.iter().any(|x: &Query| x.id == id) {
                        problems.push(p(format!("query id `{id}` is used twice")).field("id"));
                    }
                    let scope = match o.get("scopePrefix") {
                        None => None,
                        Some(Value::String(sp)) if !sp.is_empty() => Some(sp.clone()),
                        Some(other) => {
                            problems.push(p(format!("query `{id}`: `scopePrefix` expected a non-empty string, found {other}")));
                            None
                        }
                    };
                    queries.push(Query {
                        id: id.to_string(),
                        query: query.to_string(),
                        relevant,
                        top_k,
                        scope_prefix: scope,
                        line,
                    });
                }
            }
            Some(Value::Array(_)) => {
                problems.push(Problem::new(shown, at("queries"), "`queries` is empty"))
            }
            Some(other) => problems.push(Problem::new(
                shown,
                at("queries"),
                format!("`queries`: expected an array, found {}", kind_of(other)),
            )),
            None => problems.push(Problem::new(shown, 1, "missing `queries`")),
        }
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line);
            return Err(invalid(problems));
        }
        Ok(RetrievalDataset {
            path: shown.to_string(),
            id,
            description,
            top_k,
            scope_prefix,
            mode,
            rerank_top_k,
            thresholds,
            documents,
            queries,
        })
    }

    /// Refuses a scope prefix that does not start with `eval:` unless
    /// `allow_custom` (ingest deletes everything under the prefix).
    pub fn check_prefix(&self, allow_custom: bool) -> Result<(), String> {
        if allow_custom || self.scope_prefix.starts_with(SAFE_PREFIX) {
            Ok(())
        } else {
            Err(format!(
                "{}: scopePrefix `{}` does not start with `{SAFE_PREFIX}`: ingest deletes every document under it, so it is refused; allow it explicitly (--allow-custom-prefix, .allow_custom_prefix(true), allow_custom_prefix = true) if that is what you want",
                self.path, self.scope_prefix
            ))
        }
    }
}

/// A query as a record: `id`, the query as `input`, and the typed
/// [`RetrievalQuery`] (relevant ids, k, scope, mode) the rank metrics and the
/// retriever agent read.
pub(crate) fn query_record(d: &RetrievalDataset, q: &Query) -> crate::fields::Record {
    crate::fields::Record {
        line: q.line,
        offset: 0,
        fields: vec![
            ("id".into(), Value::from(q.id.clone())),
            ("input".into(), Value::from(q.query.clone())),
        ],
        csv: false,
        retrieval: Some(RetrievalQuery {
            dataset_id: d.id.clone(),
            scope_prefix: q
                .scope_prefix
                .clone()
                .unwrap_or_else(|| d.scope_prefix.clone()),
            top_k: q.top_k,
            relevant_ids: q.relevant.clone(),
            mode: d.mode,
            rerank_top_k: d.rerank_top_k,
            allow_custom_prefix: false,
        }),
    }
}

/// Lines of the items of one array, found in order: each item by its id
/// (the JSON-encoded string), else by its opening brace.
struct Locator<'a> {
    text: &'a str,
    cursor: usize,
}

impl<'a> Locator<'a> {
    /// Starts the search after the first `key` in `text`.
    fn after(text: &'a str, key: &str) -> Self {
        Locator {
            text,
            cursor: text.find(key).map_or(0, |at| at + key.len()),
        }
    }

    /// The line of the next item, `id` naming it when it has one.
    fn next(&mut self, id: Option<&str>) -> usize {
        let needle = match id {
            Some(id) => serde_json::to_string(id).unwrap_or_default(),
            None => "{".to_string(),
        };
        let Some(at) = self
            .text
            .get(self.cursor..)
            .and_then(|rest| rest.find(&needle))
        else {
            return 1 + self.text[..self.cursor.min(self.text.len())]
                .matches('\n')
                .count();
        };
        let start = self.cursor + at;
        self.cursor = start + needle.len();
        1 + self.text[..start].matches('\n').count()
    }
}

fn unknown<'a>(o: &'a Map<String, Value>, allowed: &[&str]) -> Vec<&'a str> {
    o.keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect()
}

fn unknown_message(path: &str, key: &str, allowed: &[&str]) -> String {
    let hint = did_you_mean(closest(key, allowed.iter().copied()));
    format!(
        "`{path}{key}`: unknown key{hint}; allowed: {}",
        allowed.join(", ")
    )
}

fn strip_position(msg: &str) -> &str {
    msg.rfind(" at line ").map_or(msg, |at| &msg[..at])
}

/// A rank metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum RankMetric {
    /// hit@k
    Hit,
    /// recall@k
    Recall,
    /// precision@k
    Precision,
    /// MRR@k
    Mrr,
    /// nDCG@k
    Ndcg,
}

impl RankMetric {
    /// All, in report order.
    pub const ALL: [RankMetric; 5] = [
        RankMetric::Hit,
        RankMetric::Recall,
        RankMetric::Precision,
        RankMetric::Mrr,
        RankMetric::Ndcg,
    ];

    /// `recall@k`, ...
    pub fn name(self) -> &'static str {
        match self {
            RankMetric::Hit => "hit@k",
            RankMetric::Recall => "recall@k",
            RankMetric::Precision => "precision@k",
            RankMetric::Mrr => "mrr@k",
            RankMetric::Ndcg => "ndcg@k",
        }
    }

    /// The metric a name (ours, or Unrag's `recallAtK`) stands for.
    pub fn parse(name: &str) -> Option<RankMetric> {
        let n = name.trim().to_ascii_lowercase().replace(['@', '_'], "");
        Some(match n.as_str() {
            "hitk" | "hitatk" | "hit" => RankMetric::Hit,
            "recallk" | "recallatk" | "recall" => RankMetric::Recall,
            "precisionk" | "precisionatk" | "precision" => RankMetric::Precision,
            "mrrk" | "mrratk" | "mrr" => RankMetric::Mrr,
            "ndcgk" | "ndcgatk" | "ndcg" => RankMetric::Ndcg,
            _ => return None,
        })
    }
}

/// The rank metrics of one query (see the module docs for the definitions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankScores {
    /// hit@k
    pub hit: f64,
    /// recall@k
    pub recall: f64,
    /// precision@k
    pub precision: f64,
    /// MRR@k
    pub mrr: f64,
    /// nDCG@k
    pub ndcg: f64,
}

impl RankScores {
    /// The value of `metric`.
    pub fn get(&self, metric: RankMetric) -> f64 {
        match metric {
            RankMetric::Hit => self.hit,
            RankMetric::Recall => self.recall,
            RankMetric::Precision => self.precision,
            RankMetric::Mrr => self.mrr,
            RankMetric::Ndcg => self.ndcg,
        }
    }
}

/// `ids` without repeats (and without empty ids), in rank order.
pub fn unique_in_order(ids: &[String]) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .map(String::as_str)
        .filter(|id| !id.is_empty() && seen.insert(*id))
        .collect()
}

/// hit, recall, precision, MRR and nDCG at `k` of a ranked list of retrieved
/// `sourceId`s against the relevant ones.
pub fn metrics_at_k(retrieved: &[String], relevant: &[String], k: usize) -> RankScores {
    let k = k.max(1);
    // A set, as trec_eval's qrels: a repeated id is one relevant document.
    let relevant_set: std::collections::HashSet<&str> = relevant
        .iter()
        .map(String::as_str)
        .filter(|id| !id.is_empty())
        .collect();
    let ranked: Vec<&str> = unique_in_order(retrieved).into_iter().take(k).collect();
    let mut hits = 0usize;
    let mut first = None;
    let mut dcg = 0.0;
    for (i, id) in ranked.iter().enumerate() {
        if relevant_set.contains(id) {
            hits += 1;
            first.get_or_insert(i + 1);
            dcg += 1.0 / ((i + 2) as f64).log2();
        }
    }
    let ideal: f64 = (0..relevant_set.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    RankScores {
        hit: if hits > 0 { 1.0 } else { 0.0 },
        recall: if relevant_set.is_empty() {
            0.0
        } else {
            hits as f64 / relevant_set.len() as f64
        },
        precision: hits as f64 / k as f64,
        mrr: first.map_or(0.0, |r| 1.0 / r as f64),
        ndcg: if ideal == 0.0 { 0.0 } else { dcg / ideal },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metrics_match_hand_computed_trec_values() {
        // Ranked d1 d2 d1(dup) d3 d4 d5; relevant {d2, d4, d9}; k = 5.
        let got = metrics_at_k(
            &ids(&["d1", "d2", "d1", "d3", "d4", "d5"]),
            &ids(&["d2", "d4", "d9"]),
            5,
        );
        // Deduplicated top 5: d1 d2 d3 d4 d5 -> relevant at ranks 2 and 4.
        assert_eq!(got.hit, 1.0);
        assert!((got.recall - 2.0 / 3.0).abs() < 1e-12);
        assert!((got.precision - 2.0 / 5.0).abs() < 1e-12);
        assert!((got.mrr - 0.5).abs() < 1e-12);
        // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/2.
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!((got.ndcg - dcg / idcg).abs() < 1e-12);
        // Fewer retrieved than k: precision still divides by k (Unrag's report: 1 of 2 at k=10 is 0.1).
        let got = metrics_at_k(&ids(&["a", "b"]), &ids(&["a"]), 10);
        assert_eq!(
            (got.hit, got.recall, got.precision, got.mrr, got.ndcg),
            (1.0, 1.0, 0.1, 1.0, 1.0)
        );
        // Nothing relevant: all 0.
        let got = metrics_at_k(&ids(&["a"]), &[], 3);
        assert_eq!(
            (got.hit, got.recall, got.precision, got.mrr, got.ndcg),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
        // A repeated relevant id is one document (trec_eval's qrels are a set).
        let got = metrics_at_k(&ids(&["a"]), &ids(&["a", "a"]), 5);
        assert_eq!((got.recall, got.ndcg), (1.0, 1.0));
        // A relevant document beyond k does not count.
        let got = metrics_at_k(&ids(&["x", "y", "a"]), &ids(&["a"]), 2);
        assert_eq!((got.hit, got.mrr), (0.0, 0.0));
    }

    #[test]
    fn datasets_are_checked_with_lines() {
        let bad = br#"{"version": "1", "id": "x",
  "defaults": {"topK": 18446744073709551615, "scopePrefix": "eval:x:", "topk": 3},
  "documents": [{"sourceId": "eval:x:a", "content": "", "metadata": "oops"},
                {"sourceId": "other:b", "content": "b"}],
  "queries": [{"id": "q", "query": "a?", "relevant": {"sourceIds": ["eval:x:a", ""]}, "top_k": 2}]}"#;
        let err = RetrievalDataset::from_bytes("x.json", bad)
            .unwrap_err()
            .to_string();
        for expected in [
            "x.json:2: `defaults.topk`: unknown key (did you mean `topK`?)",
            "x.json:3: field `content`: documents[0].content: expected a non-empty string",
            "x.json:3: field `metadata`: documents[0].metadata: expected an object",
            "x.json:4: field `sourceId`: document `other:b` is outside the dataset's scope",
            "x.json:5: query `q`: relevant.sourceIds holds an empty id",
            "x.json:5: `queries[0].top_k`: unknown key (did you mean `topK`?)",
        ] {
            assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
        }
        let v2 = br#"{"version": "2", "id": "x", "defaults": {"scopePrefix": "eval:x:"}, "queries": [{"id": "q", "query": "a", "relevant": {"sourceIds": []}}]}"#;
        let err = RetrievalDataset::from_bytes("v2.json", v2)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("v2.json:1: field `version`: unsupported version \"2\""),
            "{err}"
        );
    }
}
