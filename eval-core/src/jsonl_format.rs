//! JSONL adapter: one JSON object per line (agentspec, letta-evals).
//!
//! Accepts a UTF-8 BOM, `\n`, `\r\n` or lone `\r` line ends (mixed too), a
//! missing final newline and blank lines. Every other line must be one JSON
//! object; anything else is a [`Problem`] with line and column.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{MAX_PROBLEMS, Problem};
use crate::fields::{Record, Sink, kind_of};

pub(crate) fn records(file: &str, bytes: &[u8], problems: &mut Vec<Problem>, sink: Sink<'_>) {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    if let Some(lfs) = std::str::from_utf8(body)
        .ok()
        .and_then(crate::json_format::lfs_pointer)
    {
        problems.push(Problem::new(file, 1, lfs));
        return;
    }
    for (line_no, raw) in split_lines(body) {
        if problems.len() > MAX_PROBLEMS {
            break;
        }
        let offset = (bom + (raw.as_ptr() as usize - body.as_ptr() as usize)) as u64;
        match line_record(file, line_no, offset, raw) {
            Ok(Some(record)) => sink(record, problems),
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
}

/// One line: `Ok(None)` for a blank line, else its record or its problem.
pub(crate) fn line_record(
    file: &str,
    line_no: usize,
    offset: u64,
    raw: &[u8],
) -> Result<Option<Record>, Problem> {
    let text = std::str::from_utf8(raw).map_err(|e| {
        let valid = String::from_utf8_lossy(&raw[..e.valid_up_to()]);
        Problem::new(file, line_no, "invalid UTF-8").column(valid.chars().count() + 1)
    })?;
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    if trimmed.trim_end().is_empty() {
        return Ok(None);
    }
    match parse_strict(trimmed) {
        Ok(Value::Object(map)) => Ok(Some(Record {
            line: line_no,
            offset,
            fields: map.into_iter().collect(),
            csv: false,
            retrieval: None,
        })),
        Ok(other) => Err(Problem::new(
            file,
            line_no,
            format!(
                "expected a JSON object (one sample per line), found {}",
                kind_of(&other)
            ),
        )
        .column(char_column(text, lead))),
        Err(e) => {
            let msg = e.to_string();
            let msg = match msg.rfind(" at line ") {
                Some(at) => &msg[..at],
                None => &msg[..],
            };
            let msg = if msg.starts_with("duplicate key") {
                msg.to_string()
            } else {
                format!("invalid JSON: {msg}")
            };
            Err(Problem::new(file, line_no, msg)
                .column(char_column(text, lead + e.column().saturating_sub(1))))
        }
    }
}

/// The line starting at `offset` of a JSONL file (for an indexed lookup).
pub(crate) fn read_line_at(file: &mut std::fs::File, offset: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{BufRead, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    let mut raw = Vec::new();
    std::io::BufReader::new(file).read_until(b'\n', &mut raw)?;
    if let Some(end) = raw.iter().position(|&b| b == b'\n' || b == b'\r') {
        raw.truncate(end);
    }
    Ok(raw)
}

/// 1-based column, in characters, of byte offset `byte` in `line`.
fn char_column(line: &str, byte: usize) -> usize {
    let mut end = byte.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].chars().count() + 1
}

/// Parses one JSON value like `serde_json::from_str`, but rejects an object
/// that repeats a key (serde_json would silently keep only the last value).
pub(crate) fn parse_strict(text: &str) -> Result<Value, serde_json::Error> {
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

/// Splits on `\n`, `\r\n` and lone `\r`, yielding 1-based line numbers.
/// (A raw CR cannot occur inside a JSON string, so splitting on it is safe.)
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut rest = bytes;
    let mut line = 0;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        line += 1;
        match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => {
                let piece = &rest[..i];
                let skip = if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = &rest[i + skip..];
                Some((line, piece))
            }
            None => {
                let piece = rest;
                rest = &[];
                Some((line, piece))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::split_lines;

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

    #[test]
    fn splits_every_line_ending() {
        let lines: Vec<_> = split_lines(b"a\r\nb\rc\n\nd").collect();
        assert_eq!(
            lines,
            vec![
                (1, &b"a"[..]),
                (2, &b"b"[..]),
                (3, &b"c"[..]),
                (4, &b""[..]),
                (5, &b"d"[..])
            ]
        );
    }
}
