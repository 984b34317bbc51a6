//! deepeval goldens (JSON, CSV).
//!
//! Recognised by `actual_output`, `tools_called`, `retrieval_context`,
//! `expected_outcome`, `scenario`, `additional_metadata` or
//! `custom_column_key_values`.
//! `retrieval_context` → context; `context` (deepeval's ideal context) →
//! reference_contexts; `expected_outcome` → expected; `name` → id; user turns
//! of `turns` (an array, or JSON text in a cell) → input;
//! `additional_metadata` and `custom_column_key_values` → metadata; CSV list
//! cells split on `|`. `expected_tools` is a common field (see
//! `formats/tools.rs`).
//!
//! `actual_output` and `tools_called` are what an LLM answered and called
//! when the golden was recorded: both stay unchanged in `extra`, and neither
//! is scored; the metrics score the agent under test's answer and calls.

use serde_json::{Map, Value};

use super::record::{has_key, rename_key, take_key};
use super::{Adapter, Input, Records};

/// Keys only deepeval records have.
const KEYS: &[&str] = &[
    "actual_output",
    "tools_called",
    "retrieval_context",
    "expected_outcome",
    "scenario",
    "additional_metadata",
    "custom_column_key_values",
];

/// The deepeval record schema.
pub(crate) struct Deepeval;

impl Adapter for Deepeval {
    fn recognises(&self, input: &Input<'_>) -> bool {
        matches!(input, Input::Record(r) if KEYS.iter().any(|k| has_key(&r.fields, k)))
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            r.fields = deepeval(std::mem::take(&mut r.fields), r.csv);
        }
    }
}

/// Whether a CSV header without an input column yields one: a conversation
/// (`turns`).
pub(crate) fn header_gives_input(names: &[&str]) -> bool {
    names.contains(&"turns")
}

fn pipe_list(v: Value, csv: bool) -> Value {
    match v {
        Value::String(s) if csv => Value::from(
            s.split('|')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>(),
        ),
        other => other,
    }
}

/// JSON text in a cell (or a string field) parsed; anything else as is.
fn maybe_json(v: Value) -> Value {
    match &v {
        Value::String(s) if s.trim_start().starts_with(['[', '{']) => {
            serde_json::from_str(s).unwrap_or(v)
        }
        _ => v,
    }
}

fn deepeval(mut fields: Vec<(String, Value)>, csv: bool) -> Vec<(String, Value)> {
    let context = take_key(&mut fields, "context");
    let retrieval = take_key(&mut fields, "retrieval_context");
    if let Some(c) = context.filter(|c| !c.is_null()) {
        fields.push(("reference_contexts".into(), pipe_list(c, csv)));
    }
    if let Some(r) = retrieval.filter(|r| !r.is_null()) {
        fields.push(("context".into(), pipe_list(r, csv)));
    }
    rename_key(&mut fields, "expected_outcome", "expected");
    rename_key(&mut fields, "name", "id");
    let mut metadata = match take_key(&mut fields, "metadata").map(maybe_json) {
        Some(Value::Object(m)) => m,
        Some(other) => {
            fields.push(("metadata".into(), other));
            Map::new()
        }
        None => Map::new(),
    };
    for key in ["additional_metadata", "custom_column_key_values"] {
        match take_key(&mut fields, key).map(maybe_json) {
            Some(Value::Object(m)) => metadata.extend(m),
            Some(Value::Null) | None => {}
            Some(other) => fields.push((key.into(), other)),
        }
    }
    if !metadata.is_empty() {
        fields.push(("metadata".into(), Value::Object(metadata)));
    }
    if !fields.iter().any(|(k, _)| k == "input")
        && let Some(turns) = take_key(&mut fields, "turns")
    {
        let turns = maybe_json(turns);
        let users: Vec<Value> = match &turns {
            Value::Array(items) => items
                .iter()
                .filter(|t| t.get("role").and_then(Value::as_str) == Some("user"))
                .filter_map(|t| t.get("content").cloned())
                .collect(),
            _ => Vec::new(),
        };
        if !users.is_empty() {
            fields.push(("input".into(), Value::Array(users)));
        }
        fields.push(("turns".into(), turns));
    }
    fields
}
