//! `evals upgrade`: a legacy runevals document as a versioned one.

use serde_json::{Map, Value};

use super::items::legacy_pair_items;
use super::schema::{CURRENT_VERSION, Shape, shape};

/// A legacy document (bare array, or `{prompts, expected_responses}`, or a
/// versioned object without `schemaVersion`) as a versioned one.
pub fn upgrade(doc: &Value) -> Result<Value, String> {
    let items = match shape(doc) {
        Some(Shape::LegacyArray) => doc.as_array().cloned().unwrap_or_default(),
        Some(Shape::LegacyPair) => legacy_pair_items(doc).map_err(|p| p.message)?,
        Some(Shape::Versioned) => {
            let o = doc.as_object().cloned().unwrap_or_default();
            if o.contains_key("schemaVersion") {
                return Err("already a versioned runevals document (it has `schemaVersion`)".into());
            }
            let mut out = Map::new();
            out.insert("schemaVersion".into(), Value::from(CURRENT_VERSION));
            out.extend(o);
            return Ok(Value::Object(out));
        }
        None => return Err("not a runevals document: expected a JSON array of {\"prompt\", \"expected_response\"} or {\"prompts\", \"expected_responses\"}".into()),
    };
    let mut out = Map::new();
    out.insert("schemaVersion".into(), Value::from(CURRENT_VERSION));
    out.insert("items".into(), Value::Array(items));
    Ok(Value::Object(out))
}
