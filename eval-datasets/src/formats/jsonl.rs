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
        // Reading a slice cannot fail.
        let _ = read_lines(bytes, out);
    }
}

/// Reads JSONL from `input` one line at a time (the whole file is never
/// held): a full load reads its bytes this way, a streamed one the file.
pub(crate) fn read_lines(
    mut input: impl std::io::BufRead,
    out: &mut Records<'_>,
) -> std::io::Result<()> {
    let file = out.file();
    let mut buf = Vec::new();
    let (mut offset, mut line_no) = (0u64, 0usize);
    loop {
        buf.clear();
        let n = input.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let mut body: &[u8] = &buf;
        let mut start = offset;
        if offset == 0 {
            if let Some(rest) = body.strip_prefix(b"\xEF\xBB\xBF") {
                body = rest;
                start += 3;
            }
            if let Some(lfs) = std::str::from_utf8(body).ok().and_then(lfs_pointer) {
                out.problem(Problem::new(file, 1, lfs));
                return Ok(());
            }
        }
        offset += n as u64;
        // `\n`, `\r\n` or a lone `\r` end a line (a raw CR cannot occur
        // inside a JSON string, so splitting on it is safe).
        let body = body.strip_suffix(b"\n").unwrap_or(body);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        for raw in body.split(|&b| b == b'\r') {
            if out.full() {
                return Ok(());
            }
            line_no += 1;
            match line_record(file, line_no, start, raw) {
                Ok(Some(record)) => out.record(record),
                Ok(None) => {}
                Err(problem) => out.problem(problem),
            }
            start += raw.len() as u64 + 1;
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
            runevals_defaults: false, // issue38:runevals
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

#[cfg(test)]
mod tests {
    use super::read_lines;
    use crate::formats::Records;

    #[test]
    fn every_line_ending_gives_the_lines_and_offsets_a_reader_seeks_to() {
        let text: &[u8] = b"\xEF\xBB\xBF{\"input\":\"a\"}\r\n{\"input\":\"b\"}\r{\"input\":\"c\"}\n\n{\"input\":\"d\"}";
        let mut problems = Vec::new();
        let mut got = Vec::new();
        let mut sink =
            |r: crate::formats::record::Record, _: &mut Vec<_>| got.push((r.line, r.offset));
        // Through a reader that hands out a few bytes at a time, as a file may.
        let reader = std::io::BufReader::with_capacity(4, text);
        read_lines(
            reader,
            &mut Records::new("t.jsonl", &mut problems, &mut sink),
        )
        .unwrap();
        let starts: Vec<u64> = text
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'{')
            .map(|(i, _)| i as u64)
            .collect();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            got,
            vec![
                (1, starts[0]),
                (2, starts[1]),
                (3, starts[2]),
                (5, starts[3])
            ]
        );
    }
}
