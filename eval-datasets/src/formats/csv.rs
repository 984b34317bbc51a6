//! The CSV syntax (letta-evals): a header row naming the fields, then one
//! sample per record.
//!
//! Quoted cells may span lines (CR, LF or CRLF) and hold JSON: a cell of a
//! list field (`input`, `ground_truth`, `context`) holding a JSON array of
//! strings is a list; `agent_args`, `rubric_vars` and `metadata` cells must hold a
//! JSON object; `tools` and `turn_evaluators` a JSON array; `tags` is a JSON
//! array or a comma/semicolon-separated list; `expected_tools`
//! (`reference_tool_calls`) is a JSON array of tool calls or `;`-separated
//! tool names.
//! Unknown columns are kept in `Sample::extra` as strings (a golden dataset's
//! `source_docs` holding a JSON array of strings, as a list).

use std::collections::HashMap;

use serde_json::Value;

use super::record::{Field, Record, field_for};
use super::text::kind_of;
use super::{Adapter, Records, header_gives_input};
use crate::error::Problem;

/// A header's columns: name (None for an unnamed column) and the sample field it fills.
type Columns = Vec<(Option<String>, Option<Field>)>;

/// `.csv`.
pub(crate) struct Csv;

impl Adapter for Csv {
    fn read(&self, bytes: &[u8], out: &mut Records<'_>) {
        let file = out.file();
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let bom = (bytes.len() - body.len()) as u64;
        let bytes = body;
        // `flexible`: rows of the wrong width are reported here, so that a
        // whitespace-only line can be skipped like a blank one.
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(bytes);
        let Some(columns) = header(file, &mut reader, out.problems()) else {
            return;
        };

        // Held back one record: the last may turn out to hold an unclosed quote.
        let mut held: Option<Record> = None;
        let mut lines = LineCounter::new(bytes);
        let mut record = csv::ByteRecord::new();
        let mut last_start = None;
        loop {
            if out.full() {
                break;
            }
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    out.problem(csv_problem(file, &e, Some(&mut lines)));
                    if matches!(e.kind(), csv::ErrorKind::Io(_)) {
                        break;
                    }
                    continue;
                }
            }
            let (line, start) = lines.line_at(record.position().map_or(0, |p| p.byte() as usize));
            last_start = Some((start, line));
            if let Some(r) = to_record(
                file,
                &columns,
                &record,
                line,
                bom + start as u64,
                out.problems(),
            ) && let Some(previous) = held.replace(r)
            {
                out.record(previous);
            }
        }
        // The csv crate ends a quoted cell left open at the end of the file
        // silently, taking every later line into it: refuse that.
        if let Some((start, line)) = last_start
            && quote_left_open(&bytes[start..])
        {
            held = held.filter(|r| r.line != line);
            out.problem(Problem::new(
                file,
                line,
                "a quoted cell opened in this record is never closed (every later line was read into it)",
            ));
        }
        if let Some(last) = held {
            out.record(last);
        }
    }
}

/// Reads the header row into columns (problems reported at line 1).
fn header<R: std::io::Read>(
    file: &str,
    reader: &mut csv::Reader<R>,
    problems: &mut Vec<Problem>,
) -> Option<Columns> {
    match reader.byte_headers() {
        Ok(h) => {
            let h = h.clone();
            columns(file, &h, problems)
        }
        Err(e) => {
            problems.push(csv_problem(file, &e, None));
            None
        }
    }
}

/// One CSV record as a [`Record`]; `None` for a blank line or a record with
/// problems (pushed to `problems`).
fn to_record(
    file: &str,
    columns: &Columns,
    record: &csv::ByteRecord,
    line: usize,
    offset: u64,
    problems: &mut Vec<Problem>,
) -> Option<Record> {
    if record.len() != columns.len() {
        if record.iter().all(|c| c.iter().all(u8::is_ascii_whitespace)) {
            return None; // a blank line
        }
        problems.push(Problem::new(
            file,
            line,
            format!(
                "record has {} fields but the header row has {} (a quote left open or an unquoted comma?)",
                record.len(),
                columns.len()
            ),
        ));
        return None;
    }
    let mut fields = Vec::with_capacity(columns.len());
    let mut ok = true;
    for (i, ((name, field), cell)) in columns.iter().zip(record.iter()).enumerate() {
        let Some(name) = name else {
            if !cell.iter().all(u8::is_ascii_whitespace) {
                problems.push(Problem::new(
                    file,
                    line,
                    format!(
                        "column {} has no name in the header row, but this row has a value in it",
                        i + 1
                    ),
                ));
                ok = false;
            }
            continue;
        };
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
        match csv_cell(*field, cell).map(|v| golden_list(name, v)) {
            Ok(Some(value)) => fields.push((name.clone(), value)),
            Ok(None) => fields.push((name.clone(), Value::Null)),
            Err(msg) => {
                problems.push(Problem::new(file, line, msg).field(name));
                ok = false;
            }
        }
    }
    if !ok {
        return None;
    }
    keep_list_answers_with_list_inputs(&mut fields, columns, record);
    Some(Record {
        line,
        offset,
        fields,
        csv: true,
        retrieval: None,
        runevals_defaults: false, // issue38:runevals
    })
}

/// The record starting at byte `offset` of the CSV file at `path` (for an
/// indexed lookup): reads the header row and that one record only.
pub(crate) fn record_at(
    file: &str,
    path: &std::path::Path,
    offset: u64,
    line: usize,
    problems: &mut Vec<Problem>,
) -> std::io::Result<Option<Record>> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut head, _) = crate::files::open_checked(path, u64::MAX)?;
    let mut bom = [0u8; 3];
    let n = head.read(&mut bom)?;
    if !(n == 3 && bom == *b"\xEF\xBB\xBF") {
        head.seek(SeekFrom::Start(0))?;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(std::io::BufReader::new(head));
    let Some(columns) = header(file, &mut reader, problems) else {
        return Ok(None);
    };
    let (mut at, _) = crate::files::open_checked(path, u64::MAX)?;
    at.seek(SeekFrom::Start(offset))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(std::io::BufReader::new(at));
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => Ok(to_record(file, &columns, &record, line, offset, problems)),
        Ok(false) => Ok(None),
        Err(e) => {
            problems.push(Problem::new(file, line, e.to_string()));
            Ok(None)
        }
    }
}

/// The header's columns: name (None for an unnamed column) and the sample
/// field it fills. Each name is compared with the earlier ones through a
/// map, not one by one (a header may have many thousands of columns).
fn columns(file: &str, headers: &csv::ByteRecord, problems: &mut Vec<Problem>) -> Option<Columns> {
    let mut columns: Vec<(Option<String>, Option<Field>)> = Vec::with_capacity(headers.len());
    // First column of each name (ASCII case ignored) and of each field.
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut by_field: HashMap<Field, usize> = HashMap::new();
    for (i, raw) in headers.iter().enumerate() {
        let Ok(name) = std::str::from_utf8(raw) else {
            problems.push(Problem::new(
                file,
                1,
                format!("header of column {} is not valid UTF-8", i + 1),
            ));
            return None;
        };
        let name = name.trim().to_string();
        if name.is_empty() {
            // Allowed while the column stays empty (e.g. a trailing comma).
            columns.push((None, None));
            continue;
        }
        let field = field_for(&name);
        let same_name = by_name.get(&name.to_ascii_lowercase()).copied();
        let same_field = field.and_then(|f| by_field.get(&f).copied());
        // The earliest clash, as a scan of the earlier columns would find it.
        let clash = match (same_name, same_field) {
            (Some(n), Some(f)) if f < n => Some((f, false)),
            (Some(n), _) => Some((n, true)),
            (None, Some(f)) => Some((f, false)),
            (None, None) => None,
        };
        if let Some((other, same)) = clash {
            let other = columns[other].0.as_deref().unwrap_or_default();
            let msg = if same {
                format!("column `{}` appears twice in the header row", clip(&name))
            } else {
                format!(
                    "columns `{}` and `{}` both fill the same sample field; keep one",
                    clip(other),
                    clip(&name)
                )
            };
            problems.push(Problem::new(file, 1, msg).field(&clip(&name)));
            return None;
        }
        by_name.entry(name.to_ascii_lowercase()).or_insert(i);
        if let Some(f) = field {
            by_field.entry(f).or_insert(i);
        }
        columns.push((Some(name), field));
    }
    let names: Vec<&str> = columns.iter().filter_map(|(n, _)| n.as_deref()).collect();
    if !columns.iter().any(|(_, f)| *f == Some(Field::Input)) && !header_gives_input(&names) {
        let mut found: Vec<String> = names.iter().take(SHOWN_COLUMNS).map(|n| clip(n)).collect();
        if names.len() > SHOWN_COLUMNS {
            found.push(format!("… ({} more)", names.len() - SHOWN_COLUMNS));
        }
        problems.push(Problem::new(
            file,
            1,
            format!(
                "no `input` column in the header row (found: {}); accepted names: input, query, question, prompt, user_input",
                found.join(", ")
            ),
        ));
        return None;
    }
    Some(columns)
}

/// Most header names a message lists.
const SHOWN_COLUMNS: usize = 20;

/// A header name for a message: on one line, cut after 60 characters.
fn clip(name: &str) -> String {
    crate::error::one_line(name, 60)
}

/// Whether a record's raw bytes (to the end of the file) end inside a quoted cell.
fn quote_left_open(raw: &[u8]) -> bool {
    let mut in_quotes = false;
    let mut at_cell_start = true;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if in_quotes {
            if b == b'"' {
                if raw.get(i + 1) == Some(&b'"') {
                    i += 1;
                } else {
                    in_quotes = false;
                }
            }
        } else {
            match b {
                b'"' if at_cell_start => in_quotes = true,
                b',' | b'\n' | b'\r' => {
                    at_cell_start = true;
                    i += 1;
                    continue;
                }
                _ => {}
            }
            at_cell_start = false;
        }
        i += 1;
    }
    in_quotes
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

    /// The line of the record at `offset`, and where its first byte is.
    fn line_at(&mut self, mut offset: usize) -> (usize, usize) {
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
        (self.line, offset)
    }
}

/// A per-turn answer list only makes sense with a list of turns: next to a
/// single-prompt input, an answer cell that happens to be a JSON array is text.
fn keep_list_answers_with_list_inputs(
    fields: &mut [(String, Value)],
    columns: &[(Option<String>, Option<Field>)],
    record: &csv::ByteRecord,
) {
    let column = |name: &str| columns.iter().position(|(n, _)| n.as_deref() == Some(name));
    let fills =
        |name: &str, field: Field| column(name).is_some_and(|i| columns[i].1 == Some(field));
    if fields
        .iter()
        .any(|(n, v)| v.is_array() && fills(n, Field::Input))
    {
        return;
    }
    for (name, value) in fields.iter_mut() {
        if value.is_array()
            && fills(name, Field::Expected)
            && let Some(raw) = column(name).and_then(|i| record.get(i))
        {
            *value = Value::String(String::from_utf8_lossy(raw).into_owned());
        }
    }
}

fn csv_problem(file: &str, e: &csv::Error, lines: Option<&mut LineCounter>) -> Problem {
    let line = match (e.position(), lines) {
        (Some(p), Some(lines)) => lines.line_at(p.byte() as usize).0,
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

/// A golden dataset's `source_docs` cell holding a JSON array of strings
/// is that list (seed 002's schema); other unknown columns stay text.
fn golden_list(name: &str, value: Option<Value>) -> Option<Value> {
    match value {
        Some(Value::String(text))
            if name == "source_docs" && text.trim_start().starts_with('[') =>
        {
            match serde_json::from_str::<Vec<String>>(text.trim()) {
                Ok(list) => Some(Value::from(list)),
                Err(_) => Some(Value::String(text)),
            }
        }
        other => other,
    }
}

/// Turns a CSV cell into the JSON value its field expects. `Ok(None)` for an
/// empty cell of a known field (the field is absent).
fn csv_cell(field: Option<Field>, cell: &str) -> Result<Option<Value>, String> {
    let Some(field) = field else {
        return Ok(Some(Value::String(cell.to_string())));
    };
    let trimmed = cell.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    match field {
        Field::Input
        | Field::Expected
        | Field::Context
        | Field::ReferenceContexts
        | Field::AcceptedAnswers => {
            // A cell holding a JSON array of strings is a list (letta-evals multi-turn
            // CSV); anything else, even text starting with `[` or `{`, is plain text.
            if trimmed.starts_with('[')
                && let Ok(list) = serde_json::from_str::<Vec<String>>(trimmed)
            {
                return Ok(Some(Value::from(list)));
            }
            Ok(Some(Value::String(cell.to_string())))
        }
        Field::Tags => {
            if trimmed.starts_with('[')
                && let Ok(list @ Value::Array(_)) = serde_json::from_str::<Value>(trimmed)
            {
                return Ok(Some(list));
            }
            let tags: Vec<Value> = trimmed
                .split([',', ';'])
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(Value::from)
                .collect();
            Ok(Some(Value::Array(tags)))
        }
        Field::Metadata
        | Field::AgentArgs
        | Field::RubricVars
        | Field::Evaluators
        | Field::Extra => match serde_json::from_str::<Value>(trimmed) {
            Ok(v @ Value::Object(_)) => Ok(Some(v)),
            Ok(other) => Err(format!(
                "expected a JSON object in this cell, found {}",
                kind_of(&other)
            )),
            Err(e) => Err(format!("expected a JSON object in this cell: {e}")),
        },
        Field::TurnEvaluators | Field::TurnExpected | Field::Tools => {
            match serde_json::from_str::<Value>(trimmed) {
                Ok(v @ Value::Array(_)) => Ok(Some(v)),
                Ok(other) => Err(format!(
                    "expected a JSON array in this cell, found {}",
                    kind_of(&other)
                )),
                Err(e) => Err(format!("expected a JSON array in this cell: {e}")),
            }
        }
        Field::Id => Ok(Some(Value::String(trimmed.to_string()))),
        Field::ExpectedTools => super::tools::csv_cell(trimmed).map(Some),
    }
}
