//! Writing samples back out: JSONL, CSV and runevals JSON, each read back
//! by this crate into the same samples (`evals convert`).
//!
//! - JSONL: one object per sample with the canonical field names; fields of
//!   other formats go under `extra`.
//! - CSV: the same columns; lists and objects as JSON text in their cells.
//! - runevals: a versioned document; a conversation is a `turns` item, each
//!   turn with its own evaluators, the first tag its `category`; what
//!   runevals has no field for (evaluators of a whole conversation, more
//!   tags, several contexts, reference contexts, metadata, agent args,
//!   rubric variables, expected tool calls, other fields) goes under
//!   `extensions.evals`, which the schema leaves open.

use serde_json::{Map, Value};

use crate::sample::{Expected, Input, Sample};

fn strings(list: &[String]) -> Value {
    Value::from(list.to_vec())
}

/// The sample as one JSON object with the canonical names.
pub fn record(sample: &Sample) -> Map<String, Value> {
    let mut o = Map::new();
    if sample.explicit_id {
        o.insert("id".into(), Value::from(sample.id.clone()));
    }
    o.insert(
        "input".into(),
        match &sample.input {
            Input::Text(t) => Value::from(t.clone()),
            Input::Turns(t) => strings(t),
        },
    );
    if let Some(e) = &sample.expected {
        o.insert(
            "expected".into(),
            match e {
                Expected::Text(t) => Value::from(t.clone()),
                Expected::PerTurn(t) => strings(t),
            },
        );
    }
    let lists = [
        ("context", &sample.context),
        ("reference_contexts", &sample.reference_contexts),
        ("tags", &sample.tags),
        ("accepted_answers", &sample.accepted_answers),
    ];
    for (k, v) in lists {
        if !v.is_empty() {
            o.insert(k.into(), strings(v));
        }
    }
    if let Some(tools) = expected_tools(sample) {
        o.insert("expected_tools".into(), tools);
    }
    if !sample.tools.is_empty() {
        o.insert("tools".into(), Value::Array(sample.tools.clone()));
    }
    if !sample.turn_evaluators.is_empty() {
        o.insert(
            "turn_evaluators".into(),
            Value::Array(
                sample
                    .turn_evaluators
                    .iter()
                    .map(|m| Value::Object(m.clone()))
                    .collect(),
            ),
        );
    }
    if !sample.turn_expected.is_empty() {
        o.insert(
            "turn_expected".into(),
            Value::Array(
                sample
                    .turn_expected
                    .iter()
                    .map(|e| e.clone().map_or(Value::Null, Value::from))
                    .collect(),
            ),
        );
    }
    let maps = [
        ("metadata", &sample.metadata),
        ("agent_args", &sample.agent_args),
        ("rubric_vars", &sample.rubric_vars),
        ("evaluators", &sample.evaluators),
        ("extra", &sample.extra),
    ];
    for (k, v) in maps {
        if !v.is_empty() {
            o.insert(k.into(), Value::Object(v.clone()));
        }
    }
    o
}

/// The expected tool calls as our JSONL writes them (`{name, arguments,
/// id, turn}`, empty parts left out); `None` when the sample says nothing.
fn expected_tools(sample: &Sample) -> Option<Value> {
    let tools = sample.expected_tools.as_ref()?;
    Some(Value::Array(
        tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or_default())
            .collect(),
    ))
}

/// A [`record`] in seed 002's golden schema where it has one: `query` for a
/// one-turn input, `ground_truth` for the expected answer, `contexts` for
/// the reference contexts (else the context the sample carries, which a
/// golden file reads back as its reference contexts). A conversation keeps
/// `input` and `expected`: the golden schema has no turns.
pub fn golden_record(mut o: Map<String, Value>) -> Map<String, Value> {
    if !o.get("input").is_some_and(Value::is_string) {
        return o;
    }
    let mut out = Map::new();
    for (k, v) in std::mem::take(&mut o) {
        let key = match k.as_str() {
            "input" => "query",
            "expected" => "ground_truth",
            "reference_contexts" => "contexts",
            _ => k.as_str(),
        };
        out.insert(key.to_string(), v);
    }
    // Without reference contexts, the sample's context is the support kept.
    if !out.contains_key("contexts")
        && let Some(c) = out.remove("context")
    {
        out.insert("contexts".into(), c);
    }
    out
}

/// JSONL text: one line per sample.
pub fn to_jsonl(samples: &[Sample]) -> String {
    objects_to_jsonl(samples.iter().map(record))
}

/// JSONL text of JSON objects, one per line: the one JSONL encoding, used
/// by [`to_jsonl`] and by `evals generate`'s golden records.
pub fn objects_to_jsonl(objects: impl IntoIterator<Item = Map<String, Value>>) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str(&Value::Object(o).to_string());
        out.push('\n');
    }
    out
}

/// The CSV columns, in order.
pub const CSV_COLUMNS: &[&str] = &[
    "id",
    "input",
    "expected",
    "context",
    "reference_contexts",
    "tags",
    "metadata",
    "agent_args",
    "rubric_vars",
    "evaluators",
    "turn_evaluators",
    "turn_expected",
    "accepted_answers",
    "expected_tools",
    "tools",
    "extra",
];

/// Why CSV text could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CsvError {
    /// The CSV writer failed.
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// Flushing the written rows failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The written bytes are not UTF-8.
    #[error(transparent)]
    Utf8(#[from] std::string::FromUtf8Error),
}

/// CSV text with [`CSV_COLUMNS`] (columns no sample uses are left out).
pub fn to_csv(samples: &[Sample]) -> Result<String, CsvError> {
    let records: Vec<Map<String, Value>> = samples.iter().map(record).collect();
    let columns: Vec<&str> = CSV_COLUMNS
        .iter()
        .copied()
        .filter(|c| *c == "input" || records.iter().any(|r| r.contains_key(*c)))
        .collect();
    objects_to_csv(&records, &columns)
}

/// CSV text of JSON objects under `columns`: the one CSV cell encoding the
/// loaders read back (a string as it is; a number, bool, list or object as
/// JSON text; an absent or null field as an empty cell). Used by [`to_csv`]
/// and by `evals generate`'s golden records.
pub fn objects_to_csv(
    objects: &[Map<String, Value>],
    columns: &[&str],
) -> Result<String, CsvError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(columns)?;
    for o in objects {
        let row: Vec<String> = columns
            .iter()
            .map(|c| match o.get(*c) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            })
            .collect();
        w.write_record(&row)?;
    }
    let bytes = w.into_inner().map_err(csv::IntoInnerError::into_error)?;
    Ok(String::from_utf8(bytes)?)
}

/// What a CSV file cannot hold of `samples` (one line each; empty when
/// nothing is lost). A text input or answer that looks like a JSON list of
/// strings would read back as a list.
pub fn csv_losses(samples: &[Sample]) -> Vec<String> {
    let mut lost = Vec::new();
    for s in samples {
        let looks_like_list = |t: &str| {
            let t = t.trim();
            t.starts_with('[') && serde_json::from_str::<Vec<String>>(t).is_ok()
        };
        if let Input::Text(t) = &s.input
            && looks_like_list(t)
        {
            lost.push(format!(
                "{}: the input is text that reads as a JSON list",
                s.source
            ));
        }
        if let Some(Expected::Text(t)) = &s.expected
            && looks_like_list(t)
        {
            lost.push(format!(
                "{}: the expected answer is text that reads as a JSON list",
                s.source
            ));
        }
        if s.input.turns().iter().any(|t| t.trim().is_empty()) {
            lost.push(format!("{}: an empty turn", s.source));
        }
    }
    lost
}

/// A versioned runevals document.
pub fn to_runevals(samples: &[Sample]) -> Value {
    to_runevals_with(samples, crate::runevals::CURRENT_VERSION, None)
}

/// issue38:convert — a runevals document of `version` (the source's own,
/// when it was one: `evals convert` does not upgrade), with `metadata` at
/// its top when given.
pub fn to_runevals_with(samples: &[Sample], version: &str, metadata: Option<Value>) -> Value {
    let items: Vec<Value> = samples.iter().map(runevals_item).collect();
    let mut doc = Map::new();
    doc.insert("schemaVersion".into(), Value::from(version));
    if let Some(m) = metadata {
        doc.insert("metadata".into(), m);
    }
    doc.insert("items".into(), Value::Array(items));
    Value::Object(doc)
}

/// issue38:convert — runevals item keys a sample keeps in `extra` (read
/// from a runevals item), written back at the item's level.
const RUNEVALS_ITEM_TEXT: &[&str] = &["name", "description", "notes"];

fn runevals_item(s: &Sample) -> Value {
    let mut item = Map::new();
    let mut ours = Map::new();
    if s.explicit_id {
        item.insert("testId".into(), Value::from(s.id.clone()));
    }
    let evaluators = (!s.evaluators.is_empty()).then(|| Value::Object(s.evaluators.clone()));
    match &s.input {
        Input::Text(prompt) => {
            item.insert("prompt".into(), Value::from(prompt.clone()));
            if let Some(e) = &s.expected {
                item.insert(
                    "expected_response".into(),
                    Value::from(e.last().to_string()),
                );
            }
            if s.context.len() == 1 {
                item.insert("context".into(), Value::from(s.context[0].clone()));
            } else if !s.context.is_empty() {
                ours.insert("context".into(), strings(&s.context));
            }
            if let Some(e) = evaluators {
                item.insert("evaluators".into(), e);
                item.insert("evaluators_mode".into(), Value::from("replace"));
            }
        }
        Input::Turns(turns) => {
            let n = turns.len();
            let per_turn: Vec<Option<String>> = match &s.expected {
                Some(Expected::PerTurn(list)) => list.iter().cloned().map(Some).collect(),
                // Some turns' answers: each turn's own.
                _ if s.turn_expected.len() == n => s.turn_expected.clone(),
                // One turn with one answer would read back as a per-turn list.
                Some(Expected::Text(t)) if n == 1 => {
                    ours.insert("expected".into(), Value::from(t.clone()));
                    vec![None]
                }
                Some(Expected::Text(t)) => {
                    (0..n).map(|i| (i + 1 == n).then(|| t.clone())).collect()
                }
                None => vec![None; n],
            };
            let turns: Vec<Value> = turns
                .iter()
                .enumerate()
                .map(|(i, prompt)| {
                    let mut t = Map::new();
                    t.insert("prompt".into(), Value::from(prompt.clone()));
                    if let Some(Some(e)) = per_turn.get(i) {
                        t.insert("expected_response".into(), Value::from(e.clone()));
                    }
                    // Each turn's own evaluators, whole (no defaults).
                    if let Some(e) = s.turn_evaluators.get(i) {
                        t.insert("evaluators".into(), Value::Object(e.clone()));
                        t.insert("evaluators_mode".into(), Value::from("replace"));
                    }
                    Value::Object(t)
                })
                .collect();
            item.insert("turns".into(), Value::Array(turns));
            // Evaluators of the whole conversation have no runevals field.
            if let Some(e) = evaluators {
                ours.insert("evaluators".into(), e);
            }
            if !s.context.is_empty() {
                ours.insert("context".into(), strings(&s.context));
            }
        }
    }
    if let Some(first) = s.tags.first() {
        item.insert("category".into(), Value::from(first.clone()));
        if s.tags.len() > 1 {
            ours.insert("tags".into(), strings(&s.tags));
        }
    }
    if !s.reference_contexts.is_empty() {
        ours.insert("reference_contexts".into(), strings(&s.reference_contexts));
    }
    if !s.accepted_answers.is_empty() {
        ours.insert("accepted_answers".into(), strings(&s.accepted_answers));
    }
    if let Some(tools) = expected_tools(s) {
        ours.insert("expected_tools".into(), tools);
    }
    if !s.tools.is_empty() {
        ours.insert("tools".into(), Value::Array(s.tools.clone()));
    }
    // issue38:convert: a runevals item's own `name`, `description`, `notes`
    // and `extensions` go back where runevals reads them.
    let mut extra = s.extra.clone();
    let mut own_ext = Map::new();
    for k in RUNEVALS_ITEM_TEXT {
        if let Some(Value::String(v)) = extra.get(*k) {
            item.insert((*k).into(), Value::from(v.clone()));
            extra.remove(*k);
        }
    }
    if let Some(Value::Object(e)) = extra.get("extensions")
        && !e.contains_key("evals")
    {
        own_ext = e.clone();
        extra.remove("extensions");
    }
    for (k, v) in [
        ("metadata", &s.metadata),
        ("agent_args", &s.agent_args),
        ("rubric_vars", &s.rubric_vars),
        ("extra", &extra),
    ] {
        if !v.is_empty() {
            ours.insert(k.into(), Value::Object(v.clone()));
        }
    }
    // A conversation always carries the marker: its reader then knows the
    // turns were written from the sample and are not extra data.
    let mut ext = own_ext;
    if !ours.is_empty() || matches!(s.input, Input::Turns(_)) {
        ext.insert("evals".into(), Value::Object(ours));
    }
    if !ext.is_empty() {
        item.insert("extensions".into(), Value::Object(ext));
    }
    Value::Object(item)
}
