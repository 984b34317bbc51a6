//! The JSON syntax (`.json`): one document. A document schema's document
//! (Unrag retrieval datasets, runevals documents: see `DOCUMENT_SCHEMAS`)
//! is read by that schema; otherwise the document must be an array of
//! sample objects (deepeval goldens, golden datasets, ...), each mapped like
//! a JSONL line. Problems carry the line of the item they concern.

use serde_json::Value;

use super::record::Record;
use super::text::{Lines, element_offsets, kind_of, lfs_pointer, parse_strict, strip_position};
use super::{Adapter, JsonDocument, Records};
use crate::error::Problem;

/// `.json`.
pub(crate) struct Json;

impl Adapter for Json {
    fn read(&self, bytes: &[u8], out: &mut Records<'_>) {
        let file = out.file();
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let bom = bytes.len() - body.len();
        let text = match std::str::from_utf8(body) {
            Ok(t) => t,
            Err(e) => {
                let line = 1 + body[..e.valid_up_to()]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count();
                out.problem(Problem::new(file, line, "invalid UTF-8"));
                return;
            }
        };
        if let Some(lfs) = lfs_pointer(text) {
            out.problem(Problem::new(file, 1, lfs));
            return;
        }
        let value = match parse_strict(text) {
            Ok(value) => value,
            Err(e) => {
                let msg = e.to_string();
                let msg = strip_position(&msg);
                let msg = if msg.starts_with("duplicate key") {
                    msg.to_string()
                } else {
                    format!("invalid JSON: {msg}")
                };
                out.problem(Problem::new(file, e.line().max(1), msg).column(e.column().max(1)));
                return;
            }
        };
        let doc = JsonDocument {
            text,
            bom,
            value,
            lines: Lines::new(text),
        };
        if !out.document(&doc) {
            samples(doc, out);
        }
    }
}

/// A document no schema recognised: an array of sample objects.
fn samples(doc: JsonDocument<'_>, out: &mut Records<'_>) {
    let file = out.file();
    let lines = &doc.lines;
    let at = |offset: usize| lines.line_at(offset);
    match doc.value {
        Value::Array(items) => {
            let starts = element_offsets(doc.text, None);
            for (i, item) in items.into_iter().enumerate() {
                let offset = starts.get(i).copied().unwrap_or(0);
                match item {
                    Value::Object(map) => out.record(Record {
                        line: at(offset),
                        offset: (doc.bom + offset) as u64,
                        fields: map.into_iter().collect(),
                        csv: false,
                        retrieval: None,
                        runevals_defaults: false, // issue38:runevals
                    }),
                    other => out.problem(Problem::new(
                        file,
                        at(offset),
                        format!(
                            "item {i}: expected a sample object, found {}",
                            kind_of(&other)
                        ),
                    )),
                }
            }
        }
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
            out.problem(Problem::new(
                file,
                1,
                format!(
                    "not a dataset: expected an array of samples, a runevals document ({{\"schemaVersion\", \"items\"}}) or {{\"prompts\", \"expected_responses\"}}; found an object with keys {}",
                    keys.join(", ")
                ),
            ));
        }
        other => out.problem(Problem::new(
            file,
            1,
            format!(
                "not a dataset: expected an array of samples or a runevals document, found {}",
                kind_of(&other)
            ),
        )),
    }
}
