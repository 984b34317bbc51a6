//! The Unrag schema (seed 004): a retrieval dataset (`.json`), checked and
//! read into the public model of [`crate::retrieval`]
//! ([`RetrievalDataset::load`], [`RetrievalDataset::from_bytes`]). As a
//! document schema of the dataset formats, [`Unrag`] turns each query into a
//! record: `id`, the query as `input`, and the typed [`RetrievalQuery`].

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::record::Record;
use super::text::{Lines, element_offsets, kind_of, parse_strict, strip_position};
use super::{Adapter, Input, Records};
use crate::error::{DatasetError, Problem};
use crate::retrieval::{
    Document, Mode, Query, RetrievalDataset, RetrievalQuery, is_retrieval_dataset,
};
use crate::suggest::{closest, did_you_mean};

/// The Unrag document schema.
pub(crate) struct Unrag;

impl Adapter for Unrag {
    fn recognises(&self, input: &Input<'_>) -> bool {
        matches!(input, Input::Document(doc) if is_retrieval_dataset(&doc.value))
    }

    /// One record per query; a dataset that breaks a rule gives its problems.
    fn rewrite(&self, input: Input<'_>, out: &mut Records<'_>) {
        let Input::Document(doc) = input else {
            return;
        };
        let file = out.file();
        match RetrievalDataset::from_bytes(file, doc.text.as_bytes()) {
            Ok(d) => {
                out.describe(d.description.as_deref());
                for q in &d.queries {
                    out.record(query_record(&d, q));
                }
            }
            Err(DatasetError::Invalid { problems: list, .. }) => out.problems().extend(list),
            Err(other) => out.problem(Problem::new(file, 1, other.to_string())),
        }
    }
}

impl RetrievalDataset {
    /// Reads and checks the dataset at `path`, shown as `shown`.
    pub fn load(path: &std::path::Path, shown: &str) -> Result<RetrievalDataset, DatasetError> {
        Self::load_limited(path, shown, crate::files::DEFAULT_MAX_DATASET_BYTES)
    }

    /// [`load`](Self::load) of a regular file of at most `max_bytes`.
    pub fn load_limited(
        path: &std::path::Path,
        shown: &str,
        max_bytes: u64,
    ) -> Result<RetrievalDataset, DatasetError> {
        let bytes = crate::files::read_checked(path, max_bytes)
            .map_err(|e| DatasetError::read(shown, e))?;
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
        let Some(root) = doc.as_object() else {
            return Err(invalid(vec![Problem::new(
                shown,
                1,
                format!("expected a JSON object, found {}", kind_of(&doc)),
            )]));
        };
        let lines = Lines::new(text);
        let mut cx = Check {
            shown,
            text,
            lines: &lines,
            problems: Vec::new(),
        };
        let id = cx.header(root);
        let description = root
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        let empty = Map::new();
        let d = cx.defaults(root, &empty);
        cx.unknown_keys(root, d.map);
        let documents = cx.documents(root, &d.scope_prefix);
        let queries = cx.queries(root, d.top_k);
        let mut problems = cx.problems;
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line);
            return Err(invalid(problems));
        }
        Ok(RetrievalDataset {
            path: shown.to_string(),
            id,
            description,
            top_k: d.top_k,
            scope_prefix: d.scope_prefix,
            mode: d.mode,
            rerank_top_k: d.rerank_top_k,
            thresholds: d.thresholds,
            documents,
            queries,
        })
    }
}

/// The dataset's checks: the problems found so far, and where things are.
struct Check<'a> {
    shown: &'a str,
    text: &'a str,
    lines: &'a Lines<'a>,
    problems: Vec<Problem>,
}

/// `defaults`, checked: the object and the settings read from it.
struct Defaults<'a> {
    map: &'a Map<String, Value>,
    top_k: usize,
    mode: Mode,
    rerank_top_k: usize,
    scope_prefix: String,
    thresholds: Map<String, Value>,
}

/// A whole number ≥ 1.
fn positive(v: &Value) -> Option<usize> {
    v.as_u64().filter(|n| *n >= 1).map(|n| n as usize)
}

const ROOT: &[&str] = &[
    "version",
    "id",
    "description",
    "defaults",
    "documents",
    "queries",
];

impl Check<'_> {
    /// The line of the first `needle` at or after byte `from` (else 1).
    fn line_of(&self, needle: &str, from: usize) -> usize {
        self.text
            .get(from..)
            .and_then(|rest| rest.find(needle))
            .map_or(1, |at| self.lines.line_at(from + at))
    }

    /// The line of the first `"key"`.
    fn at(&self, key: &str) -> usize {
        self.line_of(&format!("\"{key}\""), 0)
    }

    fn push(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// `version` ("1") and `id` (a non-empty string).
    fn header(&mut self, root: &Map<String, Value>) -> String {
        let shown = self.shown;
        match root.get("version") {
            Some(Value::String(v)) if v == "1" => {}
            Some(v) => self.push(
                Problem::new(shown, self.at("version"), format!("unsupported version {v}: this tool reads version \"1\" of the Unrag dataset format"))
                    .field("version"),
            ),
            None => self.push(Problem::new(shown, 1, "missing `version` (\"1\")").field("version")),
        }
        match root.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(other) => {
                self.push(
                    Problem::new(
                        shown,
                        self.at("id"),
                        format!("expected a non-empty string, found {}", kind_of(other)),
                    )
                    .field("id"),
                );
                String::new()
            }
            None => {
                self.push(
                    Problem::new(
                        shown,
                        1,
                        "missing `id` (a stable name for reports and diffs)",
                    )
                    .field("id"),
                );
                String::new()
            }
        }
    }

    /// A whole number ≥ 1 of `defaults` (`key`), else `fallback`.
    fn default_count(
        &mut self,
        defaults: &Map<String, Value>,
        key: &str,
        fallback: usize,
    ) -> usize {
        let Some(v) = defaults.get(key) else {
            return fallback;
        };
        match positive(v) {
            Some(n) => n,
            None => {
                self.push(
                    Problem::new(
                        self.shown,
                        self.at(key),
                        format!("`defaults.{key}`: expected a whole number ≥ 1, found {v}"),
                    )
                    .field(key),
                );
                fallback
            }
        }
    }

    /// `defaults`: an object of `topK`, `mode`, `rerankTopK`, `scopePrefix`
    /// (required) and `thresholds`.
    fn defaults<'m>(
        &mut self,
        root: &'m Map<String, Value>,
        empty: &'m Map<String, Value>,
    ) -> Defaults<'m> {
        let shown = self.shown;
        let defaults = match root.get("defaults") {
            Some(Value::Object(d)) => d,
            Some(other) => {
                self.push(
                    Problem::new(
                        shown,
                        self.at("defaults"),
                        format!("expected an object, found {}", kind_of(other)),
                    )
                    .field("defaults"),
                );
                empty
            }
            None => empty,
        };
        let top_k = self.default_count(defaults, "topK", 10);
        let mode = match defaults.get("mode") {
            None => Mode::Retrieve,
            Some(Value::String(m)) if m == "retrieve" => Mode::Retrieve,
            Some(Value::String(m)) if m == "retrieve+rerank" => Mode::RetrieveRerank,
            Some(other) => {
                self.push(Problem::new(shown, self.at("mode"), format!("`defaults.mode`: expected \"retrieve\" or \"retrieve+rerank\", found {other}")).field("mode"));
                Mode::Retrieve
            }
        };
        let rerank_top_k = self.default_count(defaults, "rerankTopK", top_k.saturating_mul(3));
        let scope_prefix = match defaults.get("scopePrefix") {
            Some(Value::String(p)) if !p.is_empty() => p.clone(),
            Some(other) => {
                self.push(
                    Problem::new(
                        shown,
                        self.at("scopePrefix"),
                        format!(
                            "`defaults.scopePrefix`: expected a non-empty string, found {other}"
                        ),
                    )
                    .field("scopePrefix"),
                );
                String::new()
            }
            None => {
                self.push(Problem::new(shown, 1, "missing `defaults.scopePrefix` (e.g. \"eval:my-dataset:\"): it isolates the dataset's documents").field("scopePrefix"));
                String::new()
            }
        };
        let thresholds = defaults
            .get("thresholds")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Defaults {
            map: defaults,
            top_k,
            mode,
            rerank_top_k,
            scope_prefix,
            thresholds,
        }
    }

    /// Keys the format does not have, at the top and in `defaults`, and a
    /// `description` that is not a string.
    fn unknown_keys(&mut self, root: &Map<String, Value>, defaults: &Map<String, Value>) {
        let shown = self.shown;
        for k in unknown(root, ROOT) {
            self.push(Problem::new(
                shown,
                self.at(k),
                unknown_message("", k, ROOT),
            ));
        }
        const DEFAULTS: &[&str] = &["topK", "scopePrefix", "mode", "rerankTopK", "thresholds"];
        for k in unknown(defaults, DEFAULTS) {
            self.push(Problem::new(
                shown,
                self.at(k),
                unknown_message("defaults.", k, DEFAULTS),
            ));
        }
        if let Some(d) = root.get("description").filter(|d| !d.is_string()) {
            self.push(Problem::new(
                shown,
                self.at("description"),
                format!("`description`: expected a string, found {}", kind_of(d)),
            ));
        }
    }

    /// `documents`: an array of documents, each checked.
    fn documents(&mut self, root: &Map<String, Value>, scope_prefix: &str) -> Vec<Document> {
        let mut documents: Vec<Document> = Vec::new();
        let mut source_ids: HashSet<&str> = HashSet::new();
        let mut find = Locator::items(self.lines, "documents");
        match root.get("documents") {
            None => {}
            Some(Value::Array(docs)) => {
                for (i, d) in docs.iter().enumerate() {
                    let sid = d.get("sourceId").and_then(Value::as_str);
                    let line = find.next(sid);
                    if let Some(doc) = self.document(i, d, sid, line, scope_prefix) {
                        if !source_ids.insert(sid.unwrap_or_default()) {
                            let source_id = &doc.source_id;
                            self.push(
                                Problem::new(
                                    self.shown,
                                    line,
                                    format!("document `{source_id}` is listed twice"),
                                )
                                .field("sourceId"),
                            );
                        }
                        documents.push(doc);
                    }
                }
            }
            Some(other) => self.push(Problem::new(
                self.shown,
                self.at("documents"),
                format!("`documents`: expected an array, found {}", kind_of(other)),
            )),
        }
        documents
    }

    /// `documents[i]` (at `line`, its `sourceId` `sid`): an object of known
    /// keys, with a `sourceId` in the scope and one of `content` and
    /// `loaderRef`. `None` when there is no document to keep.
    fn document(
        &mut self,
        i: usize,
        d: &Value,
        sid: Option<&str>,
        line: usize,
        scope_prefix: &str,
    ) -> Option<Document> {
        let shown = self.shown;
        let p = |m: String| Problem::new(shown, line, m);
        let Some(o) = d.as_object() else {
            self.push(p(format!(
                "documents[{i}]: expected an object, found {}",
                kind_of(d)
            )));
            return None;
        };
        const DOC: &[&str] = &["sourceId", "content", "loaderRef", "metadata"];
        for k in unknown(o, DOC) {
            self.push(p(unknown_message(&format!("documents[{i}]."), k, DOC)));
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
                    self.push(
                        p(format!("documents[{i}].{k}: expected {want}, found {v}")).field(k),
                    );
                }
            }
        }
        let Some(source_id) = sid.filter(|s| !s.is_empty()) else {
            self.push(p(format!("documents[{i}]: needs a `sourceId`")).field("sourceId"));
            return None;
        };
        if !scope_prefix.is_empty() && !source_id.starts_with(scope_prefix) {
            self.push(
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
            (Some(_), Some(_)) => self.push(p(format!(
                "document `{source_id}` has both `content` and `loaderRef`; keep one"
            ))),
            (None, None) => self.push(p(format!(
                "document `{source_id}` needs `content` (text) or `loaderRef` (loaded by your hook)"
            ))),
            _ => {}
        }
        Some(Document {
            source_id: source_id.to_string(),
            content,
            loader_ref,
            metadata: o
                .get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            line,
        })
    }

    /// `queries`: a non-empty array of queries, each checked, their ids
    /// unique.
    fn queries(&mut self, root: &Map<String, Value>, top_k: usize) -> Vec<Query> {
        let shown = self.shown;
        let mut queries: Vec<Query> = Vec::new();
        let mut query_ids: HashSet<&str> = HashSet::new();
        let mut find = Locator::items(self.lines, "queries");
        match root.get("queries") {
            Some(Value::Array(qs)) if !qs.is_empty() => {
                for (i, q) in qs.iter().enumerate() {
                    let qid = q.get("id").and_then(Value::as_str);
                    let line = find.next(qid);
                    let Some(query) = self.query(i, q, qid, line, top_k) else {
                        continue;
                    };
                    let id = qid.unwrap_or_default();
                    if !query_ids.insert(id) {
                        self.push(
                            Problem::new(shown, line, format!("query id `{id}` is used twice"))
                                .field("id"),
                        );
                    }
                    let scope = self.query_scope(q, id, line);
                    queries.push(Query {
                        scope_prefix: scope,
                        ..query
                    });
                }
            }
            Some(Value::Array(_)) => self.push(Problem::new(
                shown,
                self.at("queries"),
                "`queries` is empty",
            )),
            Some(other) => self.push(Problem::new(
                shown,
                self.at("queries"),
                format!("`queries`: expected an array, found {}", kind_of(other)),
            )),
            None => self.push(Problem::new(shown, 1, "missing `queries`")),
        }
        queries
    }

    /// `queries[i]` (at `line`, its `id` `qid`): an object of known keys
    /// with an `id`, a `query`, `relevant.sourceIds` and a `topK` (else
    /// `top_k`). Its scope is read by [`query_scope`](Self::query_scope).
    /// `None` when there is no query to keep.
    fn query(
        &mut self,
        i: usize,
        q: &Value,
        qid: Option<&str>,
        line: usize,
        top_k: usize,
    ) -> Option<Query> {
        let shown = self.shown;
        let p = |m: String| Problem::new(shown, line, m);
        let Some(o) = q.as_object() else {
            self.push(p(format!(
                "queries[{i}]: expected an object, found {}",
                kind_of(q)
            )));
            return None;
        };
        const QUERY: &[&str] = &["id", "query", "relevant", "topK", "scopePrefix"];
        for k in unknown(o, QUERY) {
            self.push(p(unknown_message(&format!("queries[{i}]."), k, QUERY)));
        }
        if let Some(r) = o.get("relevant").and_then(Value::as_object) {
            for k in unknown(r, &["sourceIds"]) {
                self.push(p(unknown_message(
                    &format!("queries[{i}].relevant."),
                    k,
                    &["sourceIds"],
                )));
            }
        }
        let Some(id) = qid.filter(|s| !s.trim().is_empty()) else {
            self.push(
                p(format!(
                    "queries[{i}]: needs an `id` (stable across edits, used in reports and diffs)"
                ))
                .field("id"),
            );
            return None;
        };
        let Some(query) = o
            .get("query")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
        else {
            self.push(p(format!("query `{id}` needs a non-empty `query`")).field("query"));
            return None;
        };
        let relevant = match o.get("relevant").and_then(|r| r.get("sourceIds")) {
            Some(Value::Array(ids)) => {
                let mut out = Vec::new();
                for v in ids {
                    match v.as_str() {
                        Some("") => self.push(p(format!(
                            "query `{id}`: relevant.sourceIds holds an empty id"
                        ))),
                        Some(s) => out.push(s.to_string()),
                        None => self.push(p(format!(
                            "query `{id}`: relevant.sourceIds holds {}, expected strings",
                            kind_of(v)
                        ))),
                    }
                }
                out
            }
            _ => {
                self.push(p(format!("query `{id}` needs `relevant.sourceIds` (an array; empty means nothing should be found)")).field("relevant"));
                return None;
            }
        };
        let top_k = match o.get("topK") {
            None => top_k,
            Some(v) => match positive(v) {
                Some(n) => n,
                None => {
                    self.push(
                        p(format!(
                            "query `{id}`: `topK` expected a whole number ≥ 1, found {v}"
                        ))
                        .field("topK"),
                    );
                    top_k
                }
            },
        };
        Some(Query {
            id: id.to_string(),
            query: query.to_string(),
            relevant,
            top_k,
            scope_prefix: None,
            line,
        })
    }

    /// A query's own `scopePrefix`: a non-empty string, if given.
    fn query_scope(&mut self, q: &Value, id: &str, line: usize) -> Option<String> {
        match q.get("scopePrefix") {
            None => None,
            Some(Value::String(sp)) if !sp.is_empty() => Some(sp.clone()),
            Some(other) => {
                self.push(Problem::new(
                    self.shown,
                    line,
                    format!(
                        "query `{id}`: `scopePrefix` expected a non-empty string, found {other}"
                    ),
                ));
                None
            }
        }
    }
}

/// A query as a record: `id`, the query as `input`, and the typed
/// [`RetrievalQuery`] (relevant ids, k, scope, mode) the rank metrics and the
/// retriever agent read.
fn query_record(d: &RetrievalDataset, q: &Query) -> Record {
    Record {
        line: q.line,
        offset: 0,
        fields: vec![
            ("id".into(), Value::from(q.id.clone())),
            ("input".into(), Value::from(q.query.clone())),
        ],
        csv: false,
        retrieval: Some(Box::new(RetrievalQuery {
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
        })),
        runevals_defaults: false, // issue38:runevals
    }
}

/// Lines of the items of one top-level array, in order: each item's id
/// (the JSON-encoded string) when it is found inside the item, else the
/// item's start. Every item is searched once, within its own text.
struct Locator<'a> {
    lines: &'a Lines<'a>,
    /// Where each item starts.
    starts: Vec<usize>,
    next: usize,
}

impl<'a> Locator<'a> {
    /// The items of the array under top-level `key`.
    fn items(lines: &'a Lines<'a>, key: &str) -> Self {
        Locator {
            lines,
            starts: element_offsets(lines.text(), Some(key)),
            next: 0,
        }
    }

    /// The line of the next item, `id` naming it when it has one.
    fn next(&mut self, id: Option<&str>) -> usize {
        let i = self.next;
        self.next += 1;
        let text = self.lines.text();
        let Some(&start) = self.starts.get(i) else {
            return 1;
        };
        let end = self.starts.get(i + 1).copied().unwrap_or(text.len());
        let found = id.and_then(|id| {
            let needle = serde_json::to_string(id).ok()?;
            text.get(start..end)?.find(&needle)
        });
        self.lines.line_at(start + found.unwrap_or(0))
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn unsafe_scopes_are_refused_unless_allowed() {
        let doc = br#"{"version": "1", "id": "kb", "defaults": {"scopePrefix": "prod:kb:"}, "queries": [{"id": "q", "query": "a", "relevant": {"sourceIds": []}}]}"#;
        let d = RetrievalDataset::from_bytes("kb.json", doc).unwrap();
        let e = d.check_scope(false).unwrap_err();
        assert_eq!(e.scope_prefix, "prod:kb:");
        let text = "kb.json: scopePrefix `prod:kb:` does not start with `eval:`: ingest deletes every document under it, so it is refused; allow it explicitly (--allow-custom-prefix, .allow_custom_prefix(true), allow_custom_prefix = true) if that is what you want";
        assert_eq!(e.to_string(), text);
        assert_eq!(d.check_scope(true), Ok(()));
        // A bare `eval:` is every evaluation scope; an empty prefix is everything.
        for (prefix, allowed_when_told) in [("eval:", true), ("eval::", true), ("  ", false)] {
            let doc = String::from_utf8_lossy(doc).replace("prod:kb:", prefix);
            let d = RetrievalDataset::from_bytes("kb.json", doc.as_bytes()).unwrap();
            let e = d.check_scope(false).unwrap_err().to_string();
            assert!(
                e.contains("names nothing after `eval:`") || e.contains("is empty"),
                "{prefix:?}: {e}"
            );
            assert_eq!(d.check_scope(true).is_ok(), allowed_when_told, "{prefix:?}");
        }
        assert!(crate::retrieval::scope_is_safe("eval:kb:"));
        assert!(!crate::retrieval::scope_is_safe("eval:"));
        assert!(!crate::retrieval::scope_is_safe("evalkb:"));
    }
}
