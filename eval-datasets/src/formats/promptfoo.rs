//! promptfoo test cases (CSV, YAML/JSONL `vars`).
//!
//! Recognised by columns `__expected…`, `__metadata:…`, or `vars`.
//! `__metadata:tags[]` → tags, `__metadata:x` → metadata.x; the only
//! template variable → input (its name kept as `prompt_var`); `assert`
//! `equals` (or a plain `__expected`) → expected; assertions kept.

use serde_json::{Map, Value};

use super::record::{Field, field_for, has_key, take_key};
use super::{Adapter, Input, Records};

/// The promptfoo record schema.
pub(crate) struct Promptfoo;

impl Adapter for Promptfoo {
    fn recognises(&self, input: &Input<'_>) -> bool {
        let Input::Record(r) = input else {
            return false;
        };
        r.fields.iter().any(|(k, _)| k.starts_with("__")) || has_key(&r.fields, "vars")
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            r.fields = promptfoo(std::mem::take(&mut r.fields));
        }
    }
}

/// Whether a CSV header without an input column yields one: promptfoo
/// tests (`__` columns) with exactly one template variable.
pub(crate) fn header_gives_input(names: &[&str]) -> bool {
    let vars = names.iter().filter(|n| !n.starts_with("__")).count();
    names.iter().any(|n| n.starts_with("__")) && vars == 1
}

fn promptfoo(mut fields: Vec<(String, Value)>) -> Vec<(String, Value)> {
    // `vars: {...}` (YAML/JSONL tests) become columns, as in CSV tests.
    if let Some(Value::Object(vars)) = fields
        .iter()
        .find(|(k, _)| k == "vars")
        .map(|(_, v)| v.clone())
    {
        take_key(&mut fields, "vars");
        for (k, v) in vars {
            fields.push((k, v));
        }
        if let Some(Value::Array(asserts)) = fields
            .iter()
            .find(|(k, _)| k == "assert")
            .map(|(_, v)| v.clone())
            && let Some(v) = asserts
                .iter()
                .find(|a| a.get("type").and_then(Value::as_str) == Some("equals"))
                .and_then(|a| a.get("value"))
            && !fields.iter().any(|(k, _)| k == "expected")
        {
            fields.push(("expected".into(), v.clone()));
        }
    }
    let mut metadata = Map::new();
    let mut rest = Vec::new();
    let mut expected: Option<Value> = None;
    for (key, value) in fields {
        // `__expected` with `equals:` or no assertion type is the answer.
        if key.starts_with("__expected")
            && expected.is_none()
            && let Some(text) = value.as_str()
        {
            let t = text.trim();
            let plain = !t.contains(':') && !t.starts_with("is-") && !t.is_empty();
            if let Some(v) = t.strip_prefix("equals:") {
                expected = Some(Value::from(v.trim()));
            } else if plain {
                expected = Some(Value::from(t));
            }
        }
        if let Some(name) = key.strip_prefix("__metadata:") {
            if name == "tags[]" || name == "tags" {
                let text = value.as_str().unwrap_or_default().to_string();
                rest.push(("tags".to_string(), Value::from(split_unescaped(&text))));
            } else {
                metadata.insert(name.trim_end_matches("[]").to_string(), value);
            }
        } else {
            rest.push((key, value));
        }
    }
    if let Some(e) = expected
        && !rest
            .iter()
            .any(|(k, _)| field_for(k) == Some(Field::Expected))
    {
        rest.push(("expected".into(), e));
    }
    if !metadata.is_empty() && !rest.iter().any(|(k, _)| k == "metadata") {
        rest.push(("metadata".into(), Value::Object(metadata)));
    }
    // The prompt is the only template variable, unless a column is named as one.
    let vars: Vec<usize> = rest
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| {
            !k.starts_with("__")
                && ![
                    "tags",
                    "metadata",
                    "assert",
                    "expected",
                    "options",
                    "description",
                ]
                .contains(&k.as_str())
        })
        .map(|(i, _)| i)
        .collect();
    let named = rest.iter().any(|(k, _)| field_for(k) == Some(Field::Input));
    if !named && vars.len() == 1 {
        let key = rest[vars[0]].0.clone();
        rest[vars[0]].0 = "input".into();
        rest.push(("prompt_var".into(), Value::from(key)));
    }
    rest
}

/// `a, b\, c` → ["a", "b, c"] (promptfoo's `tags[]` cells).
fn split_unescaped(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                cur.push(',');
                chars.next();
            }
            ',' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}
