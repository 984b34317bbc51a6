//! CSV adapter (letta-evals): a header row naming the fields, then one sample
//! per record.
//!
//! Quoted cells may span lines (CR, LF or CRLF) and hold JSON: a cell of a
//! list field (`input`, `ground_truth`, `context`) holding a JSON array of
//! strings is a list; `agent_args`, `rubric_vars` and `metadata` cells must hold a
//! JSON object; `tags` is a JSON array or a comma/semicolon-separated list.
//! Unknown columns are kept in `Sample::extra` as strings.

use serde_json::Value;

use crate::error::{MAX_PROBLEMS, Problem};
use crate::fields::{Field, Record, csv_cell, field_for};

pub(crate) fn records(file: &str, bytes: &[u8], problems: &mut Vec<Problem>) -> Vec<Record> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(bytes);

    let headers = match reader.byte_headers() {
        Ok(h) => h.clone(),
        Err(e) => {
            problems.push(csv_problem(file, &e, None));
            return Vec::new();
        }
    };
    let mut columns: Vec<(String, Option<Field>)> = Vec::with_capacity(headers.len());
    for (i, raw) in headers.iter().enumerate() {
        let name = match std::str::from_utf8(raw) {
            Ok(n) => n.trim().to_string(),
            Err(_) => {
                problems.push(Problem::new(
                    file,
                    1,
                    format!("header of column {} is not valid UTF-8", i + 1),
                ));
                return Vec::new();
            }
        };
        if name.is_empty() {
            problems.push(Problem::new(
                file,
                1,
                format!("column {} has no name in the header row", i + 1),
            ));
            return Vec::new();
        }
        let field = field_for(&name);
        if let Some((other, _)) = columns
            .iter()
            .find(|(n, f)| n.eq_ignore_ascii_case(&name) || (field.is_some() && *f == field))
        {
            problems.push(
                Problem::new(
                    file,
                    1,
                    format!(
                        "columns `{other}` and `{name}` both fill the same sample field; keep one"
                    ),
                )
                .field(&name),
            );
            return Vec::new();
        }
        columns.push((name, field));
    }
    if !columns.iter().any(|(_, f)| *f == Some(Field::Input)) {
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        problems.push(Problem::new(
            file,
            1,
            format!(
                "no `input` column in the header row (found: {}); accepted names: input, query, question, prompt, user_input",
                names.join(", ")
            ),
        ));
        return Vec::new();
    }

    let mut out = Vec::new();
    let mut lines = LineCounter::new(bytes);
    let mut record = csv::ByteRecord::new();
    loop {
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                problems.push(csv_problem(file, &e, Some(&mut lines)));
                if matches!(e.kind(), csv::ErrorKind::Io(_)) {
                    break;
                }
                continue;
            }
        }
        let line = match record.position() {
            Some(p) => lines.line_at(p.byte() as usize),
            None => 0,
        };
        let mut fields = Vec::with_capacity(columns.len());
        let mut ok = true;
        for ((name, field), cell) in columns.iter().zip(record.iter()) {
            let cell = match std::str::from_utf8(cell) {
                Ok(c) => c,
                Err(e) => {
                    problems.push(
                        Problem::new(
                            file,
                            line,
                            format!("invalid UTF-8 after byte {}", e.valid_up_to()),
                        )
                        .field(name),
                    );
                    ok = false;
                    continue;
                }
            };
            match csv_cell(*field, cell) {
                Ok(Some(value)) => fields.push((name.clone(), value)),
                Ok(None) => fields.push((name.clone(), Value::Null)),
                Err(msg) => {
                    problems.push(Problem::new(file, line, msg).field(name));
                    ok = false;
                }
            }
        }
        if ok {
            keep_list_answers_with_list_inputs(&mut fields, &columns, &record);
            out.push(Record { line, fields });
        }
    }
    out
}

/// Line numbers from byte offsets. The csv crate's own line count can point at
/// the line before a record when rows end in CRLF (the record "starts" at the
/// `\n` of the previous terminator), so count here: a record starts at its
/// first byte that is not a line terminator. Offsets must not decrease.
struct LineCounter<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        LineCounter {
            bytes,
            pos: 0,
            line: 1,
        }
    }

    fn line_at(&mut self, mut offset: usize) -> usize {
        while offset < self.bytes.len() && matches!(self.bytes[offset], b'\r' | b'\n') {
            offset += 1;
        }
        let offset = offset.min(self.bytes.len());
        while self.pos < offset {
            match self.bytes[self.pos] {
                b'\n' => self.line += 1,
                b'\r' if self.bytes.get(self.pos + 1) != Some(&b'\n') => self.line += 1,
                _ => {}
            }
            self.pos += 1;
        }
        self.line
    }
}

/// A per-turn answer list only makes sense with a list of turns: next to a
/// single-prompt input, an answer cell that happens to be a JSON array is text.
fn keep_list_answers_with_list_inputs(
    fields: &mut [(String, Value)],
    columns: &[(String, Option<Field>)],
    record: &csv::ByteRecord,
) {
    let input_is_list = columns
        .iter()
        .zip(fields.iter())
        .any(|((_, f), (_, v))| *f == Some(Field::Input) && v.is_array());
    if input_is_list {
        return;
    }
    for (i, ((_, f), (_, v))) in columns.iter().zip(fields.iter_mut()).enumerate() {
        if *f == Some(Field::Expected) && v.is_array() {
            let raw = record
                .get(i)
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            *v = Value::String(raw.into_owned());
        }
    }
}

fn csv_problem(file: &str, e: &csv::Error, lines: Option<&mut LineCounter>) -> Problem {
    let line = match (e.position(), lines) {
        (Some(p), Some(lines)) => lines.line_at(p.byte() as usize),
        (Some(p), None) => p.line() as usize,
        (None, _) => 1,
    };
    let msg = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "record has {len} fields but the header row has {expected_len} (a quote left open or an unquoted comma?)"
        ),
        csv::ErrorKind::Io(io) => format!("cannot read: {io}"),
        _ => e.to_string(),
    };
    Problem::new(file, line, msg)
}
