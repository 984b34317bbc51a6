//! Microsoft 365 Agents Toolkit `runevals` documents (seed 003), checked
//! against the rules of its JSON Schema (`schema/v1/eval-document.schema.json`).
//!
//! Shapes read:
//! - versioned: `{"schemaVersion": "1.x.y", "items": [...], "default_evaluators": {...}}`;
//! - legacy: a bare array of `{prompt, expected_response}`, or
//!   `{"prompts": [...], "expected_responses": [...]}` paired by position
//!   (`evals upgrade` rewrites both as versioned documents).
//!
//! An item is a single prompt (`prompt`, `expected_response`, `context`,
//! `evaluators`, `evaluators_mode`) or a named conversation (`turns`, each
//! with the same fields), never both. `testId` (the sample id), `category`
//! (a tag) and `notes` are accepted as the seed documents them, although the
//! schema does not list them. Fields a finished run writes (`response`,
//! `scores`, `citations`, `status`, ...) are accepted and kept in
//! `Sample::extra`. Any other key is an error, with a suggestion.
//!
//! Evaluators: an item's `evaluators` extend `default_evaluators`
//! (`evaluators_mode: "extend"`, the default) or replace them (`"replace"`).
//! In a conversation each turn resolves its own set, which scores that
//! turn's answer (`Sample::turn_evaluators`).
//!
//! Files: `schema.rs` holds the schema's rules (shapes, keys, types,
//! evaluator options); `items.rs` turns items into sample fields;
//! `specs.rs` maps evaluators to metric specs; `upgrade.rs` rewrites legacy
//! documents. As a document schema of the dataset formats, `Runevals` reads
//! a `.json` document into one record per item.

mod items;
mod schema;
mod specs;
mod upgrade;

pub use items::{ItemFields, items, legacy_pair_items};
pub use schema::{CURRENT_VERSION, MAX_TURNS, PathProblem, Shape, shape};
pub use specs::{
    DEFAULT_EVALUATORS, EvaluatorsError, Unsupported, default_evaluators, default_needs_judge,
    default_note, specs,
};
pub use upgrade::{UpgradeError, upgrade};

use super::record::Record;
use super::text::element_offsets;
use super::{Adapter, Input, Records};
use crate::error::Problem;

/// The runevals document schema.
pub(crate) struct Runevals;

impl Adapter for Runevals {
    fn recognises(&self, input: &Input<'_>) -> bool {
        matches!(input, Input::Document(doc) if shape(&doc.value).is_some())
    }

    /// One record per item, on the item's line; problems on the line of the
    /// key they concern (else of their item).
    fn rewrite(&self, input: Input<'_>, out: &mut Records<'_>) {
        let Input::Document(doc) = input else {
            return;
        };
        let Some(shape) = shape(&doc.value) else {
            return;
        };
        let file = out.file();
        let at = |offset: usize| doc.lines.line_at(offset);
        // Where each item starts, for line numbers.
        let starts: Vec<usize> = match shape {
            Shape::Versioned => element_offsets(doc.text, Some("items")),
            Shape::LegacyArray => element_offsets(doc.text, None),
            Shape::LegacyPair => element_offsets(doc.text, Some("prompts")),
        };
        let item_line = |i: usize| starts.get(i).map_or(1, |o| at(*o));
        // Seed 003's starter templates say it at the top; the versioned
        // schema under `metadata`.
        out.describe(
            doc.value
                .get("description")
                .or_else(|| doc.value.get("metadata").and_then(|m| m.get("description")))
                .and_then(|d| d.as_str()),
        );
        // issue38:runevals: a file that names no evaluators is scored on the
        // seed's default dimensions (`specs::default_evaluators`).
        let defaults = names_no_evaluators(&doc.value);
        match items(&doc.value, shape) {
            Ok(items) => {
                for item in items {
                    let offset = starts.get(item.item).copied().unwrap_or(0);
                    out.record(Record {
                        line: item_line(item.item),
                        offset: (doc.bom + offset) as u64,
                        fields: item.fields,
                        csv: false,
                        retrieval: None,
                        runevals_defaults: defaults,
                    });
                }
            }
            Err(list) => {
                for p in list {
                    let line = match (p.item, &p.key) {
                        (Some(i), Some(key)) => {
                            let start = starts.get(i).copied().unwrap_or(0);
                            let end = starts.get(i + 1).copied().unwrap_or(doc.text.len());
                            doc.lines
                                .key_line(start, end, key)
                                .unwrap_or_else(|| item_line(i))
                        }
                        (Some(i), None) => item_line(i),
                        (None, Some(key)) => {
                            doc.lines.key_line(0, doc.text.len(), key).unwrap_or(1)
                        }
                        (None, None) => 1,
                    };
                    out.problem(Problem::new(file, line, p.message));
                }
            }
        }
    }
}

/// Whether a runevals document names no evaluators anywhere: no
/// `default_evaluators` (or an empty one), no item's or turn's `evaluators`
/// key. Such a file is scored on runevals' default dimensions.
fn names_no_evaluators(doc: &serde_json::Value) -> bool {
    use serde_json::Value;
    let named = |v: &Value| v.get("evaluators").is_some();
    if doc
        .get("default_evaluators")
        .is_some_and(|d| d.as_object().is_none_or(|m| !m.is_empty()))
    {
        return false;
    }
    let items = match doc {
        Value::Array(items) => items,
        _ => match doc.get("items").and_then(Value::as_array) {
            Some(items) => items,
            None => return true,
        },
    };
    !items.iter().any(|item| {
        named(item)
            || item
                .get("turns")
                .and_then(Value::as_array)
                .is_some_and(|turns| turns.iter().any(named))
    })
}
