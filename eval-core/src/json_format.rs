//! JSON adapter (`.json`): a runevals document (see [`crate::runevals`]), or
//! an array of sample objects (deepeval goldens, golden datasets, ...),
//! each mapped like a JSONL line. Problems carry the line of the item (or of
//! the key) they concern.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::Problem;
use crate::fields::{Record, Sink, kind_of};
use crate::jsonl_format::parse_strict;
use crate::runevals;

pub(crate) fn records(file: &str, bytes: &[u8], problems: &mut Vec<Problem>, sink: Sink<'_>) {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => {
            let line = 1 + body[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            problems.push(Problem::new(file, line, "invalid UTF-8"));
            return;
        }
    };
    if let Some(lfs) = lfs_pointer(text) {
        problems.push(Problem::new(file, 1, lfs));
        return;
    }
    let doc = match parse_strict(text) {
        Ok(doc) => doc,
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.rfind(" at line ").map_or(&msg[..], |at| &msg[..at]);
            let msg = if msg.starts_with("duplicate key") {
                msg.to_string()
            } else {
                format!("invalid JSON: {msg}")
            };
            problems.push(Problem::new(file, e.line().max(1), msg).column(e.column().max(1)));
            return;
        }
    };
    let at = |offset: usize| line_at(text, offset);
    if crate::retrieval::is_retrieval_dataset(&doc) {
        match crate::retrieval::RetrievalDataset::from_bytes(file, body) {
            Ok(d) => {
                for q in &d.queries {
                    sink(crate::retrieval::query_record(&d, q), problems);
                }
            }
            Err(crate::error::DatasetError::Invalid { problems: list, .. }) => {
                problems.extend(list)
            }
            Err(other) => problems.push(Problem::new(file, 1, other.to_string())),
        }
        return;
    }
    if let Some(shape) = runevals::shape(&doc) {
        // Where each item starts, for line numbers.
        let starts: Vec<usize> = match shape {
            runevals::Shape::Versioned => element_offsets(text, Some("items")),
            runevals::Shape::LegacyArray => element_offsets(text, None),
            runevals::Shape::LegacyPair => element_offsets(text, Some("prompts")),
        };
        let item_line = |i: usize| starts.get(i).map_or(1, |o| at(*o));
        match runevals::items(&doc, shape) {
            Ok(items) => {
                for item in items {
                    let offset = starts.get(item.item).copied().unwrap_or(0);
                    sink(
                        Record {
                            line: item_line(item.item),
                            offset: (bom + offset) as u64,
                            fields: item.fields,
                            csv: false,
                            retrieval: None,
                        },
                        problems,
                    );
                }
            }
            Err(list) => {
                for p in list {
                    let line = match (p.item, &p.key) {
                        (Some(i), Some(key)) => {
                            let start = starts.get(i).copied().unwrap_or(0);
                            let end = starts.get(i + 1).copied().unwrap_or(text.len());
                            key_line(text, start, end, key).unwrap_or_else(|| item_line(i))
                        }
                        (Some(i), None) => item_line(i),
                        (None, Some(key)) => key_line(text, 0, text.len(), key).unwrap_or(1),
                        (None, None) => 1,
                    };
                    problems.push(Problem::new(file, line, p.message));
                }
            }
        }
        return;
    }
    match doc {
        Value::Array(items) => {
            let starts = element_offsets(text, None);
            for (i, item) in items.into_iter().enumerate() {
                let offset = starts.get(i).copied().unwrap_or(0);
                match item {
                    Value::Object(map) => sink(
                        Record {
                            line: at(offset),
                            offset: (bom + offset) as u64,
                            fields: map.into_iter().collect(),
                            csv: false,
                            retrieval: None,
                        },
                        problems,
                    ),
                    other => problems.push(Problem::new(
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
            problems.push(Problem::new(
                file,
                1,
                format!(
                    "not a dataset: expected an array of samples, a runevals document ({{\"schemaVersion\", \"items\"}}) or {{\"prompts\", \"expected_responses\"}}; found an object with keys {}",
                    keys.join(", ")
                ),
            ));
        }
        other => problems.push(Problem::new(
            file,
            1,
            format!(
                "not a dataset: expected an array of samples or a runevals document, found {}",
                kind_of(&other)
            ),
        )),
    }
}

/// A Git LFS pointer committed in place of the data.
pub(crate) fn lfs_pointer(text: &str) -> Option<String> {
    text.starts_with("version https://git-lfs.github.com/spec/")
        .then(|| {
            "this is a Git LFS pointer, not the data: run `git lfs pull` to fetch the file"
                .to_string()
        })
}

/// 1-based line of byte `offset`.
fn line_at(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
}

/// The line of the first `"key"` between `start` and `end`.
fn key_line(text: &str, start: usize, end: usize, key: &str) -> Option<usize> {
    let needle = format!("\"{key}\"");
    let slice = text.get(start..end.min(text.len()))?;
    slice.find(&needle).map(|at| line_at(text, start + at))
}

/// Byte offsets of the elements of the top-level array, or of the array
/// under top-level `key`. Empty when the shape differs.
fn element_offsets(text: &str, key: Option<&str>) -> Vec<usize> {
    let base = text.as_ptr() as usize;
    let array: Option<Vec<&RawValue>> = match key {
        None => serde_json::from_str(text).ok(),
        Some(key) => serde_json::from_str::<std::collections::HashMap<&str, &RawValue>>(text)
            .ok()
            .and_then(|map| {
                map.get(key)
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
            }),
    };
    array
        .unwrap_or_default()
        .iter()
        .map(|raw| raw.get().as_ptr() as usize - base)
        .collect()
}
