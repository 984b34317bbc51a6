//! The JSONL syntax: one JSON object per line (agentspec, letta-evals).
//!
//! Accepts a UTF-8 BOM, `\n`, `\r\n` or lone `\r` line ends (mixed too), a
//! missing final newline and blank lines. Every other line must be one JSON
//! object; anything else is a [`Problem`] with line and column.

use serde_json::Value;

use super::record::Record;
use super::text::{kind_of, lfs_pointer, parse_strict, strip_position};
use super::{Adapter, Records};
use crate::error::Problem;

/// `.jsonl`, `.ndjson`.
pub(crate) struct Jsonl;

impl Adapter for Jsonl {
    fn read(&self, bytes: &[u8], out: &mut Records<'_>) {
        let file = out.file();
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let bom = bytes.len() - body.len();
        if let Some(lfs) = std::str::from_utf8(body).ok().and_then(lfs_pointer) {
            out.problem(Problem::new(file, 1, lfs));
            return;
        }
        for (line_no, raw) in split_lines(body) {
            if out.full() {
                break;
            }
            let offset = (bom + (raw.as_ptr() as usize - body.as_ptr() as usize)) as u64;
            match line_record(file, line_no, offset, raw) {
                Ok(Some(record)) => out.record(record),
                Ok(None) => {}
                Err(problem) => out.problem(problem),
            }
        }
    }
}

/// One line: `Ok(None)` for a blank line, else its record or its problem.
fn line_record(
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
            let msg = strip_position(&msg);
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

/// The record on the line starting at byte `offset` of the JSONL file at
/// `path` (for an indexed lookup): `Ok(Err(problem))` when that line is not
/// a sample object.
pub(crate) fn record_at(
    path: &std::path::Path,
    file: &str,
    offset: u64,
    line: usize,
) -> std::io::Result<Result<Option<Record>, Problem>> {
    use std::io::{BufRead, Seek, SeekFrom};
    let (mut f, _) = crate::files::open_checked(path, u64::MAX)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut raw = Vec::new();
    std::io::BufReader::new(f).read_until(b'\n', &mut raw)?;
    if let Some(end) = raw.iter().position(|&b| b == b'\n' || b == b'\r') {
        raw.truncate(end);
    }
    Ok(line_record(file, line, offset, &raw))
}

/// 1-based column, in characters, of byte offset `byte` in `line`.
fn char_column(line: &str, byte: usize) -> usize {
    let mut end = byte.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].chars().count() + 1
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
