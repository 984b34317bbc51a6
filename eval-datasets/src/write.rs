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
    to_runevals_with(samples, crate::runevals::CURRENT_VERSION, Map::new())
}

/// issue38:convert — a runevals document of `version` (the source's own,
/// when it was one: `evals convert` does not upgrade) with the top-level
/// keys of `root` (`metadata`, `description`, `default_evaluators`...).
/// Without `default_evaluators` in `root`, a version that has them (1.2.0
/// on) gets the evaluators most samples share, when two or more do; an item
/// scored by exactly those then names none (as a runevals file writes it).
pub fn to_runevals_with(samples: &[Sample], version: &str, mut root: Map<String, Value>) -> Value {
    if !root.contains_key("default_evaluators")
        && has_default_evaluators(version)
        && let Some(d) = shared_evaluators(samples)
    {
        root.insert("default_evaluators".into(), Value::Object(d));
    }
    let defaults = match root.get("default_evaluators") {
        Some(Value::Object(d)) => Some(d.clone()),
        _ => None,
    };
    let items: Vec<Value> = samples
        .iter()
        .map(|s| runevals_item(s, defaults.as_ref()))
        .collect();
    let mut doc = Map::new();
    if let Some(schema) = root.remove("$schema") {
        doc.insert("$schema".into(), schema);
    }
    doc.insert("schemaVersion".into(), Value::from(version));
    for (k, v) in root {
        doc.insert(k, v);
    }
    doc.insert("items".into(), Value::Array(items));
    Value::Object(doc)
}

/// 1.2.0 or later (seed 003: `default_evaluators` needs 1.2.0).
fn has_default_evaluators(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    matches!((parts.next(), parts.next()), (Some(Some(1)), Some(Some(m))) if m >= 2)
}

/// The evaluators most single prompts and turns are scored by, when two or
/// more share them.
fn shared_evaluators(samples: &[Sample]) -> Option<Map<String, Value>> {
    let mut seen: Vec<(&Map<String, Value>, usize)> = Vec::new();
    let all = samples.iter().flat_map(|s| match s.input {
        Input::Text(_) => std::slice::from_ref(&s.evaluators).iter(),
        Input::Turns(_) => s.turn_evaluators.iter(),
    });
    for e in all.filter(|e| !e.is_empty()) {
        match seen.iter_mut().find(|(m, _)| *m == e) {
            Some((_, n)) => *n += 1,
            None => seen.push((e, 1)),
        }
    }
    let (best, n) = seen.into_iter().max_by_key(|(_, n)| *n)?;
    (n >= 2).then(|| best.clone())
}

/// An item's (or turn's) evaluators under `defaults`: none written when
/// they are the defaults; those beyond the defaults, `extend`, when it has
/// all of them; else all of them, replacing the defaults (an empty set too,
/// when there are defaults).
fn own_evaluators(
    target: &mut Map<String, Value>,
    evaluators: &Map<String, Value>,
    defaults: Option<&Map<String, Value>>,
) {
    if let Some(d) = defaults
        && !d.is_empty()
        && d.keys().all(|k| evaluators.contains_key(k))
    {
        // The defaults and more (or other options): `extend`.
        let own: Map<String, Value> = evaluators
            .iter()
            .filter(|(k, v)| d.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !own.is_empty() {
            target.insert("evaluators".into(), Value::Object(own));
            target.insert("evaluators_mode".into(), Value::from("extend"));
        }
        return;
    }
    let write = match defaults {
        Some(d) => d != evaluators,
        None => !evaluators.is_empty(),
    };
    if write {
        target.insert("evaluators".into(), Value::Object(evaluators.clone()));
        target.insert("evaluators_mode".into(), Value::from("replace"));
    }
}

/// issue38:convert — runevals item keys a sample keeps in `extra` (read
/// from a runevals item), written back at the item's level.
const RUNEVALS_ITEM_TEXT: &[&str] = &["name", "description", "notes"];

fn runevals_item(s: &Sample, defaults: Option<&Map<String, Value>>) -> Value {
    let mut item = Map::new();
    let mut ours = Map::new();
    if s.explicit_id {
        item.insert("testId".into(), Value::from(s.id.clone()));
    }
    let evaluators = (!s.evaluators.is_empty()).then(|| Value::Object(s.evaluators.clone()));
    let mut same_turns = false;
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
            own_evaluators(&mut item, &s.evaluators, defaults);
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
                    match s.turn_evaluators.get(i) {
                        Some(e) => own_evaluators(&mut t, e, defaults),
                        // No evaluators for this turn, over defaults.
                        None => own_evaluators(&mut t, &Map::new(), defaults),
                    }
                    Value::Object(t)
                })
                .collect();
            // issue38:convert: the turns as a runevals file had them (kept
            // in `extra`) need no marker: its reader keeps them again.
            same_turns = s.extra.get("turns").and_then(Value::as_array) == Some(&turns);
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
    if same_turns {
        extra.remove("turns");
    }
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
    if !ours.is_empty() || (matches!(s.input, Input::Turns(_)) && !same_turns) {
        ext.insert("evals".into(), Value::Object(ours));
    }
    if !ext.is_empty() {
        item.insert("extensions".into(), Value::Object(ext));
    }
    Value::Object(item)
}
