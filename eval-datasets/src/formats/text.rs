//! Helpers shared by the adapters: strict JSON parsing, value kinds for
//! messages, line numbers in JSON text, Git LFS pointers.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// "a string", "an object", ... for messages.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses one JSON value like `serde_json::from_str`, but rejects an object
/// that repeats a key (serde_json would silently keep only the last value).
pub fn parse_strict(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictValue::deserialize(&mut de)?.0;
    de.end()?;
    Ok(value)
}

struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key `{key}` in one object (only one value can be kept)"
                )));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// A serde_json message without its ` at line L column C` suffix (the
/// position is reported separately).
pub(crate) fn strip_position(msg: &str) -> &str {
    msg.rfind(" at line ").map_or(msg, |at| &msg[..at])
}

/// A Git LFS pointer committed in place of the data.
pub(crate) fn lfs_pointer(text: &str) -> Option<String> {
    text.starts_with("version https://git-lfs.github.com/spec/")
        .then(|| {
            "this is a Git LFS pointer, not the data: run `git lfs pull` to fetch the file"
                .to_string()
        })
}

/// Line numbers of byte offsets in one text: where each line starts, found
/// in one pass, then a binary search per offset (a file's items are never
/// counted from its start one by one).
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Byte offset of the start of every line after the first.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let starts = text
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        Lines { text, starts }
    }

    /// The text.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// 1-based line of byte `offset`.
    pub(crate) fn line_at(&self, offset: usize) -> usize {
        1 + self.starts.partition_point(|start| *start <= offset)
    }

    /// The line of the first `"key"` between `start` and `end`.
    pub(crate) fn key_line(&self, start: usize, end: usize, key: &str) -> Option<usize> {
        let needle = format!("\"{key}\"");
        let slice = self.text.get(start..end.min(self.text.len()))?;
        slice.find(&needle).map(|at| self.line_at(start + at))
    }
}

/// Byte offsets of the elements of the top-level array, or of the array
/// under top-level `key`. Empty when the shape differs.
pub(crate) fn element_offsets(text: &str, key: Option<&str>) -> Vec<usize> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn lines_of_offsets() {
        let lines = super::Lines::new("a\nbc\n\nd");
        let got: Vec<usize> = (0..8).map(|o| lines.line_at(o)).collect();
        assert_eq!(got, [1, 1, 2, 2, 2, 3, 4, 4]);
        assert_eq!(lines.line_at(100), 4);
        assert_eq!(lines.key_line(0, 8, "x"), None);
        let lines = super::Lines::new("{\n\"a\": 1,\n\"b\": 2}");
        assert_eq!(lines.key_line(0, 100, "b"), Some(3));
        assert_eq!(lines.key_line(12, 100, "a"), None);
    }

    #[test]
    fn duplicate_keys_are_rejected_at_any_depth() {
        let e = super::parse_strict(r#"{"input": "a", "input": "b"}"#).unwrap_err();
        assert!(e.to_string().starts_with("duplicate key `input`"), "{e}");
        let e = super::parse_strict(r#"{"metadata": {"k": 1, "k": 2}}"#).unwrap_err();
        assert!(e.to_string().starts_with("duplicate key `k`"), "{e}");
        let v = super::parse_strict(r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}]}"#).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": [1, -2, 3.5, "x", null, true, {"b": {}}]})
        );
        assert!(super::parse_strict("{} x").is_err());
    }
}
