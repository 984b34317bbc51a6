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
            problems.push(csv_problem(file, &e));
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
    let mut record = csv::ByteRecord::new();
    loop {
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                problems.push(csv_problem(file, &e));
                if matches!(e.kind(), csv::ErrorKind::Io(_)) {
                    break;
                }
                continue;
            }
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
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
            out.push(Record { line, fields });
        }
    }
    out
}

fn csv_problem(file: &str, e: &csv::Error) -> Problem {
    let line = e.position().map_or(1, |p| p.line() as usize);
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
