//! JSONL adapter: one JSON object per line (agentspec, letta-evals).
//!
//! Accepts a UTF-8 BOM, `\n`, `\r\n` or lone `\r` line ends (mixed too), a
//! missing final newline and blank lines. Every other line must be one JSON
//! object; anything else is a [`Problem`] with line and column.

use serde_json::Value;

use crate::error::{MAX_PROBLEMS, Problem};
use crate::fields::{Record, kind_of};

pub(crate) fn records(file: &str, bytes: &[u8], problems: &mut Vec<Problem>) -> Vec<Record> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::new();
    for (line_no, raw) in split_lines(bytes) {
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(e) => {
                problems
                    .push(Problem::new(file, line_no, "invalid UTF-8").column(e.valid_up_to() + 1));
                continue;
            }
        };
        let trimmed = text.trim_start();
        let lead = text.len() - trimmed.len();
        if trimmed.trim_end().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Object(map)) => out.push(Record {
                line: line_no,
                fields: map.into_iter().collect(),
            }),
            Ok(other) => problems.push(
                Problem::new(
                    file,
                    line_no,
                    format!(
                        "expected a JSON object (one sample per line), found {}",
                        kind_of(&other)
                    ),
                )
                .column(lead + 1),
            ),
            Err(e) => {
                let msg = e.to_string();
                let msg = match msg.rfind(" at line ") {
                    Some(at) => &msg[..at],
                    None => &msg[..],
                };
                problems.push(
                    Problem::new(file, line_no, format!("invalid JSON: {msg}"))
                        .column(lead + e.column().max(1)),
                );
            }
        }
    }
    out
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
