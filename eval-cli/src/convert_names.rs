//! issue38:convert — what `evals convert` keeps of the source format itself:
//! the field names its records use (letta-evals' `ground_truth`, `sample_id`,
//! ragas' `user_input`...), the ids that were JSON integers, and a runevals
//! document's `schemaVersion`.
//!
//! letta-evals 0.26.0 (`letta_evals/datasets/loader.py`) reads `id` or
//! `sample_id` (an int or a string, a CSV cell through pandas, so a whole
//! number is an int), `input` (or `prompt`), `ground_truth`, `agent_args`,
//! `rubric_vars`, `extra_vars`: a JSONL written with our canonical
//! `expected` would load with no ground truth, so the source's own names are
//! written back. Through a runevals document (fixed names) they travel in the
//! document's `metadata.evals_convert`, which the runevals schema leaves open.

use std::collections::BTreeSet;

use eval_datasets::dataset::FIELD_ALIASES;
use serde_json::{Map, Value};

/// The key under a runevals document's `metadata` holding [`SourceNames`].
pub const META_KEY: &str = "evals_convert";

/// Under [`SourceNames::names`]: the key of a tool call's arguments.
const TOOL_ARGUMENTS: &str = "tool_arguments";

/// Other tools' keys of a call's arguments (`formats/tools.rs` reads them all).
const TOOL_ARGUMENT_KEYS: &[&str] = &["args", "input_parameters", "inputParameters", "input"];

/// The source's own names and types.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SourceNames {
    /// Canonical field name → the name the source used (only where they differ).
    pub names: Map<String, Value>,
    /// Ids that were JSON integers in the source.
    pub integer_ids: BTreeSet<String>,
    /// The runevals `schemaVersion` of the source document.
    pub runevals_version: Option<String>,
    /// The other top-level keys of a runevals source (`metadata`,
    /// `description`, `default_evaluators`, `$schema`...), written back.
    pub runevals_root: Map<String, Value>,
}

fn canonical(key: &str) -> Option<&'static str> {
    FIELD_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(key.trim()))
        .map(|(_, c)| *c)
}

impl SourceNames {
    fn note_key(&mut self, key: &str) {
        if let Some(c) = canonical(key)
            && c != key
            && !self.names.contains_key(c)
        {
            self.names.insert(c.to_string(), Value::from(key));
        }
    }

    /// The key a tool call's arguments were under (ragas `args`, deepeval
    /// `input_parameters`), kept as `names["tool_arguments"]`.
    fn note_tools(&mut self, v: &Value) {
        let parsed;
        let v = match v {
            Value::String(t) => match serde_json::from_str::<Value>(t) {
                Ok(p) => {
                    parsed = p;
                    &parsed
                }
                Err(_) => return,
            },
            other => other,
        };
        let Some(calls) = v.as_array() else { return };
        for call in calls.iter().filter_map(Value::as_object) {
            for key in TOOL_ARGUMENT_KEYS {
                if call.contains_key(*key) && !self.names.contains_key(TOOL_ARGUMENTS) {
                    self.names.insert(TOOL_ARGUMENTS.into(), Value::from(*key));
                }
            }
        }
    }

    fn note_id(&mut self, v: &Value) {
        if let Value::Number(n) = v
            && (n.is_i64() || n.is_u64())
        {
            self.integer_ids.insert(n.to_string());
        }
    }

    /// What `text`, in the format of its extension `ext`, says of itself.
    /// A source that does not parse gives nothing (its load reports it).
    pub fn read(ext: &str, text: &str) -> Self {
        let text = text.trim_start_matches('\u{feff}');
        let mut out = Self::default();
        match ext {
            "jsonl" | "ndjson" => {
                for line in text.lines() {
                    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else {
                        continue;
                    };
                    for (k, v) in &o {
                        out.note_key(k);
                        match canonical(k) {
                            Some("id") => out.note_id(v),
                            Some("expected_tools") => out.note_tools(v),
                            _ => {}
                        }
                    }
                }
            }
            "csv" => {
                let mut r = csv::ReaderBuilder::new()
                    .has_headers(true)
                    .from_reader(text.as_bytes());
                let Ok(headers) = r.headers().cloned() else {
                    return out;
                };
                for h in &headers {
                    out.note_key(h);
                }
                // A CSV cell has no type: pandas (letta-evals' CSV loader)
                // reads a whole number as an int.
                let tools = headers
                    .iter()
                    .position(|h| canonical(h) == Some("expected_tools"));
                let rows: Vec<csv::StringRecord> = r.records().flatten().collect();
                if let Some(col) = tools {
                    for row in &rows {
                        if let Some(cell) = row.get(col) {
                            out.note_tools(&Value::from(cell));
                        }
                    }
                }
                if let Some(col) = headers.iter().position(|h| canonical(h) == Some("id")) {
                    for row in &rows {
                        if let Some(cell) = row.get(col)
                            && cell.parse::<i64>().is_ok_and(|n| n.to_string() == cell)
                        {
                            out.integer_ids.insert(cell.to_string());
                        }
                    }
                }
            }
            "json" => {
                let Ok(doc) = serde_json::from_str::<Value>(text) else {
                    return out;
                };
                out.runevals_version = doc
                    .get("schemaVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if let Some(root) = doc.as_object().filter(|o| o.contains_key("items")) {
                    for (k, v) in root {
                        if k != "schemaVersion" && k != "items" {
                            out.runevals_root.insert(k.clone(), v.clone());
                        }
                    }
                    if let Some(Value::Object(m)) = out.runevals_root.get_mut("metadata") {
                        m.remove(META_KEY);
                        if m.is_empty() {
                            out.runevals_root.remove("metadata");
                        }
                    }
                }
                if let Some(Value::Object(kept)) = doc.get("metadata").and_then(|m| m.get(META_KEY))
                {
                    if let Some(Value::Object(names)) = kept.get("names") {
                        out.names = names.clone();
                    }
                    if let Some(Value::Array(ids)) = kept.get("integer_ids") {
                        out.integer_ids = ids
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect();
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// The name the source gave the canonical field `key`.
    pub fn name<'a>(&'a self, key: &'a str) -> &'a str {
        self.names.get(key).and_then(Value::as_str).unwrap_or(key)
    }

    /// A canonical record with the source's names and integer id.
    pub fn apply(&self, record: Map<String, Value>) -> Map<String, Value> {
        record
            .into_iter()
            .map(|(k, v)| {
                let v = match (v, k.as_str()) {
                    (Value::String(s), "id") if self.integer_ids.contains(&s) => {
                        s.parse::<i64>().map_or(Value::String(s), Value::from)
                    }
                    (Value::Array(calls), "expected_tools") => {
                        Value::Array(calls.into_iter().map(|c| self.tool_call(c)).collect())
                    }
                    (v, _) => v,
                };
                (self.name(&k).to_string(), v)
            })
            .collect()
    }

    /// A call as our writer gives it (`arguments`) with the source's key.
    fn tool_call(&self, call: Value) -> Value {
        let Some(key) = self.names.get(TOOL_ARGUMENTS).and_then(Value::as_str) else {
            return call;
        };
        match call {
            Value::Object(o) if !o.contains_key(key) => Value::Object(
                o.into_iter()
                    .map(|(k, v)| (if k == "arguments" { key.to_string() } else { k }, v))
                    .collect(),
            ),
            other => other,
        }
    }

    /// [`Self::apply`] for a JSONL line: the fields of other formats kept in
    /// `extra` (letta-evals' `extra_vars`, a runevals item's `name`) written
    /// at the top, where their own tools read them, unless the name is one of
    /// ours or already taken.
    pub fn apply_jsonl(&self, record: Map<String, Value>) -> Map<String, Value> {
        let mut out = self.apply(record);
        if let Some(Value::Object(extra)) = out.remove("extra") {
            let mut rest = Map::new();
            for (k, v) in extra {
                if canonical(&k).is_none() && !out.contains_key(&k) {
                    out.insert(k, v);
                } else {
                    rest.insert(k, v);
                }
            }
            if !rest.is_empty() {
                out.insert("extra".into(), Value::Object(rest));
            }
        }
        out
    }

    /// What a runevals document keeps of the names (`None`: nothing to keep).
    pub fn to_metadata(&self) -> Option<Value> {
        if self.names.is_empty() && self.integer_ids.is_empty() {
            return None;
        }
        let mut kept = Map::new();
        if !self.names.is_empty() {
            kept.insert("names".into(), Value::Object(self.names.clone()));
        }
        if !self.integer_ids.is_empty() {
            kept.insert(
                "integer_ids".into(),
                Value::from(self.integer_ids.iter().cloned().collect::<Vec<_>>()),
            );
        }
        Some(Value::Object(kept))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letta_names_and_integer_ids_are_read_and_written_back() {
        let s = SourceNames::read(
            "jsonl",
            "{\"id\": 1, \"input\": \"q\", \"ground_truth\": \"a\"}\n",
        );
        assert_eq!(s.name("expected"), "ground_truth");
        let mut r = Map::new();
        r.insert("id".into(), Value::from("1"));
        r.insert("expected".into(), Value::from("a"));
        let out = Value::Object(s.apply(r)).to_string();
        assert_eq!(out, r#"{"id":1,"ground_truth":"a"}"#);
    }

    #[test]
    fn a_csv_whole_number_id_is_an_integer_and_a_padded_one_is_not() {
        let s = SourceNames::read("csv", "id,input,ground_truth\n1,q,a\n007,r,b\n");
        assert!(s.integer_ids.contains("1"));
        assert!(!s.integer_ids.contains("007"));
        assert_eq!(s.name("expected"), "ground_truth");
    }
}

#[cfg(test)]
mod tool_tests {
    use super::*;

    #[test]
    fn a_ragas_tool_call_keeps_args() {
        let s = SourceNames::read(
            "jsonl",
            "{\"user_input\":\"q\",\"reference_tool_calls\":[{\"name\":\"w\",\"args\":{\"l\":\"P\"}}]}\n",
        );
        assert_eq!(
            s.names.get(TOOL_ARGUMENTS),
            Some(&Value::from("args")),
            "{s:?}"
        );
        let r: Map<String, Value> = serde_json::from_str(
            r#"{"input":"q","expected_tools":[{"name":"w","arguments":{"l":"P"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            Value::Object(s.apply_jsonl(r)).to_string(),
            r#"{"user_input":"q","reference_tool_calls":[{"name":"w","args":{"l":"P"}}]}"#
        );
    }
}
