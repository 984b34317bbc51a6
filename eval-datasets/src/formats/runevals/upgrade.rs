//! `evals upgrade`: a legacy runevals document as a versioned one.

use serde_json::{Map, Value};

use super::items::legacy_pair_items;
use super::schema::{CURRENT_VERSION, PathProblem, Shape, shape};

/// Why a document cannot be upgraded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UpgradeError {
    /// A `{prompts, expected_responses}` document that breaks its rules.
    #[error("{0}")]
    Invalid(PathProblem),
    /// The document has `schemaVersion` already.
    #[error("already a versioned runevals document (it has `schemaVersion`)")]
    AlreadyVersioned,
    /// The document is no runevals document at all.
    #[error(
        "not a runevals document: expected a JSON array of {{\"prompt\", \"expected_response\"}} or {{\"prompts\", \"expected_responses\"}}"
    )]
    NotRunevals,
}

/// A legacy document (bare array, or `{prompts, expected_responses}`, or a
/// versioned object without `schemaVersion`) as a versioned one.
pub fn upgrade(doc: &Value) -> Result<Value, UpgradeError> {
    let items = match shape(doc) {
        Some(Shape::LegacyArray) => doc.as_array().cloned().unwrap_or_default(),
        Some(Shape::LegacyPair) => legacy_pair_items(doc).map_err(UpgradeError::Invalid)?,
        Some(Shape::Versioned) => {
            let o = doc.as_object().cloned().unwrap_or_default();
            if o.contains_key("schemaVersion") {
                return Err(UpgradeError::AlreadyVersioned);
            }
            let mut out = Map::new();
            out.insert("schemaVersion".into(), Value::from(CURRENT_VERSION));
            out.extend(o);
            return Ok(Value::Object(out));
        }
        None => return Err(UpgradeError::NotRunevals),
    };
    let mut out = Map::new();
    out.insert("schemaVersion".into(), Value::from(CURRENT_VERSION));
    out.insert("items".into(), Value::Array(items));
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_their_messages() {
        let e = upgrade(&serde_json::json!({"foo": 1})).unwrap_err();
        assert_eq!(e, UpgradeError::NotRunevals);
        assert_eq!(
            e.to_string(),
            r#"not a runevals document: expected a JSON array of {"prompt", "expected_response"} or {"prompts", "expected_responses"}"#
        );
        let e = upgrade(&serde_json::json!({"schemaVersion": "1.6.0", "items": []})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "already a versioned runevals document (it has `schemaVersion`)"
        );
        let e = upgrade(&serde_json::json!({"prompts": ["a"], "extra": 1})).unwrap_err();
        assert!(matches!(&e, UpgradeError::Invalid(p) if p.key.as_deref() == Some("extra")));
        assert_eq!(
            e.to_string(),
            "$.extra: unknown key in a {prompts, expected_responses} document"
        );
        let v = upgrade(&serde_json::json!([{"prompt": "p"}])).unwrap();
        assert_eq!(v["schemaVersion"], CURRENT_VERSION);
    }
}
