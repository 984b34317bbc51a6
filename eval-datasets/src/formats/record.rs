//! The record every adapter produces, and record → [`Sample`]: field names,
//! aliases and value types shared by every adapter.

use serde_json::{Map, Value};

use super::text::kind_of;
use crate::error::Problem;
use crate::sample::{Expected, Input, RetrievalQuery, Sample, Source};

/// The sample fields a record can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Field {
    Id,
    Input,
    Expected,
    Context,
    ReferenceContexts,
    Tags,
    Metadata,
    AgentArgs,
    RubricVars,
    Evaluators,
    TurnEvaluators,
    TurnExpected,
    AcceptedAnswers,
    ExpectedTools,
    Tools,
    Extra,
}

impl Field {
    fn canonical(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Input => "input",
            Field::Expected => "expected",
            Field::Context => "context",
            Field::ReferenceContexts => "reference_contexts",
            Field::Tags => "tags",
            Field::Metadata => "metadata",
            Field::AgentArgs => "agent_args",
            Field::RubricVars => "rubric_vars",
            Field::Evaluators => "evaluators",
            Field::TurnEvaluators => "turn_evaluators",
            Field::TurnExpected => "turn_expected",
            Field::AcceptedAnswers => "accepted_answers",
            Field::ExpectedTools => "expected_tools",
            Field::Tools => "tools",
            Field::Extra => "extra",
        }
    }
}

/// Field names understood in JSONL keys and CSV headers (matched ignoring
/// ASCII case and surrounding spaces), with the [`Sample`] field they fill.
///
/// | sample field | accepted names | seen in |
/// |---|---|---|
/// | `id` | `id`, `sample_id` | letta-evals |
/// | `input` | `input`, `query`, `question`, `prompt`, `user_input` | agentspec, letta-evals, golden-dataset, ragas |
/// | `expected` | `expected`, `expected_output`, `ground_truth`, `ideal`, `reference`, `expected_response`, `expected_answer` | agentspec (docs and real files), letta-evals (current and legacy), ragas, runevals, deepeval |
/// | `context` | `context`, `contexts`, `retrieved_contexts` | agentspec, ragas |
/// | `reference_contexts` | `reference_contexts` | agentspec, ragas |
/// | `tags` | `tags` | agentspec, letta-evals |
/// | `metadata` | `metadata` | agentspec, letta-evals |
/// | `agent_args` | `agent_args` | letta-evals |
/// | `rubric_vars` | `rubric_vars` | letta-evals |
/// | `evaluators` | `evaluators` (name → options) | runevals |
/// | `turn_evaluators` | `turn_evaluators` (one name → options object per turn) | runevals conversations |
/// | `turn_expected` | `turn_expected` (one answer or `null` per turn, when only some turns have one) | runevals conversations |
/// | `accepted_answers` | `accepted_answers` (every answer that counts as right) | OpenAI evals' `ideal` list |
/// | `expected_tools` | `expected_tools`, `expectedTools`, `reference_tool_calls` (see `formats/tools.rs`) | deepeval, ragas |
/// | `tools` | `tools` (OpenAI tool definitions offered to the agent, see [`crate::tool::definitions`]) | OpenAI chat requests |
/// | `extra` | `extra` (an object: fields of other formats, as `evals convert` writes them) | — |
///
/// A record that uses two names for the same field is rejected. Every other
/// key is kept in [`Sample::extra`]. Records shaped as other tools write them
/// (deepeval, golden-dataset, OpenAI evals, promptflow, promptfoo) are first
/// rewritten into these names by their schema adapters (`formats/`).
pub const FIELD_ALIASES: &[(&str, &str)] = &[
    ("id", "id"),
    ("sample_id", "id"),
    ("input", "input"),
    ("query", "input"),
    ("question", "input"),
    ("prompt", "input"),
    ("user_input", "input"),
    ("expected", "expected"),
    ("expected_output", "expected"),
    ("ground_truth", "expected"),
    ("ideal", "expected"),
    ("reference", "expected"),
    ("expected_response", "expected"),
    ("expected_answer", "expected"),
    ("context", "context"),
    ("contexts", "context"),
    ("retrieved_contexts", "context"),
    ("reference_contexts", "reference_contexts"),
    ("tags", "tags"),
    ("metadata", "metadata"),
    ("agent_args", "agent_args"),
    ("rubric_vars", "rubric_vars"),
    ("evaluators", "evaluators"),
    ("turn_evaluators", "turn_evaluators"),
    ("turn_expected", "turn_expected"),
    ("accepted_answers", "accepted_answers"),
    ("expected_tools", "expected_tools"),
    ("expectedTools", "expected_tools"),
    ("reference_tool_calls", "expected_tools"),
    ("tools", "tools"),
    ("extra", "extra"),
];

/// The sample field a key or CSV column fills, by [`FIELD_ALIASES`]
/// (ASCII case and surrounding spaces ignored); `None` for other keys.
pub(crate) fn field_for(name: &str) -> Option<Field> {
    let name = name.trim();
    let canonical = FIELD_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map(|(_, c)| *c)?;
    Some(match canonical {
        "id" => Field::Id,
        "input" => Field::Input,
        "expected" => Field::Expected,
        "context" => Field::Context,
        "reference_contexts" => Field::ReferenceContexts,
        "tags" => Field::Tags,
        "metadata" => Field::Metadata,
        "agent_args" => Field::AgentArgs,
        "evaluators" => Field::Evaluators,
        "turn_evaluators" => Field::TurnEvaluators,
        "turn_expected" => Field::TurnExpected,
        "accepted_answers" => Field::AcceptedAnswers,
        "expected_tools" => Field::ExpectedTools,
        "tools" => Field::Tools,
        "extra" => Field::Extra,
        _ => Field::RubricVars,
    })
}

fn accepted_names(field: Field) -> String {
    FIELD_ALIASES
        .iter()
        .filter(|(_, c)| *c == field.canonical())
        .map(|(a, _)| *a)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One record as an adapter read it: where it is, and its fields.
pub(crate) struct Record {
    /// 1-based line the record starts on.
    pub line: usize,
    /// Byte offset of the record in the file.
    pub offset: u64,
    /// The fields in file order, keys as written (schemas rewrite them).
    pub fields: Vec<(String, Value)>,
    /// The values are CSV cells.
    pub csv: bool,
    /// For a query of a retrieval dataset, what it searches for.
    pub retrieval: Option<Box<RetrievalQuery>>,
    /// A runevals item of a file that names no evaluators: scored on
    /// runevals' default dimensions (`runevals::default_evaluators`). // issue38:runevals
    pub runevals_defaults: bool,
}

/// Whether a field is named `key` (surrounding spaces ignored).
pub(crate) fn has_key(fields: &[(String, Value)], key: &str) -> bool {
    fields.iter().any(|(k, _)| k.trim() == key)
}

/// Renames the field `from` (surrounding spaces ignored) to `to`, unless a
/// field is named `to` already.
pub(crate) fn rename_key(fields: &mut [(String, Value)], from: &str, to: &str) {
    if fields.iter().any(|(k, _)| k == to) {
        return;
    }
    for (k, _) in fields.iter_mut() {
        if k.trim() == from {
            *k = to.to_string();
        }
    }
}

/// Removes the first field named `key` (surrounding spaces ignored) and
/// returns its value.
pub(crate) fn take_key(fields: &mut Vec<(String, Value)>, key: &str) -> Option<Value> {
    let i = fields.iter().position(|(k, _)| k.trim() == key)?;
    Some(fields.remove(i).1)
}

/// The sample's fields as read from a record, each checked alone.
#[derive(Default)]
struct Fields {
    id: Option<String>,
    input: Option<Input>,
    /// With the name it was given by.
    expected: Option<(String, Expected)>,
    context: Vec<String>,
    reference_contexts: Vec<String>,
    tags: Vec<String>,
    metadata: Map<String, Value>,
    agent_args: Map<String, Value>,
    rubric_vars: Map<String, Value>,
    evaluators: Map<String, Value>,
    turn_evaluators: Vec<Map<String, Value>>,
    turn_expected: Vec<Option<String>>,
    accepted_answers: Vec<String>,
    expected_tools: Option<Vec<crate::ToolCall>>,
    tools: Vec<Value>,
    extra: Map<String, Value>,
    extra_object: Option<Map<String, Value>>,
}

impl Fields {
    /// Reads one field (named `key` in the record) into its place.
    fn read(&mut self, field: Field, key: &str, value: Value) -> Result<(), String> {
        match field {
            Field::Id => id_value(&value).map(|v| self.id = Some(v)),
            Field::Input => input_value(&value).map(|v| self.input = Some(v)),
            Field::Expected => {
                expected_value(&value).map(|v| self.expected = Some((key.to_string(), v)))
            }
            Field::Context => string_list(&value).map(|v| self.context = v),
            Field::ReferenceContexts => string_list(&value).map(|v| self.reference_contexts = v),
            Field::Tags => tag_list(&value).map(|v| self.tags = v),
            Field::Metadata => object(value).map(|v| self.metadata = v),
            Field::AgentArgs => object(value).map(|v| self.agent_args = v),
            Field::RubricVars => object(value).map(|v| self.rubric_vars = v),
            Field::Evaluators => object(value).map(|v| self.evaluators = v),
            Field::TurnEvaluators => object_list(value).map(|v| self.turn_evaluators = v),
            Field::TurnExpected => optional_strings(value).map(|v| self.turn_expected = v),
            Field::AcceptedAnswers => string_list(&value).map(|v| self.accepted_answers = v),
            // What a tool call cannot hold (deepeval's `description`,
            // `output`...) stays in `extra`, with the value as written.
            Field::ExpectedTools => super::tools::tool_calls(&value).map(|(calls, lossy)| {
                self.expected_tools = Some(calls);
                if lossy {
                    self.extra.insert(key.to_string(), value.clone());
                }
            }),
            Field::Tools => crate::tool::definitions(&value)
                .map(|v| self.tools = v)
                .map_err(|e| e.to_string()),
            Field::Extra => object(value).map(|v| self.extra_object = Some(v)),
        }
    }
}

/// The record's fields, each read into its place (unknown ones into
/// `extra`); a field given twice under two names, or one that does not
/// read, is a problem.
fn read_fields(
    record_fields: Vec<(String, Value)>,
    problem: &impl Fn(&str, String) -> Problem,
    problems: &mut Vec<Problem>,
) -> Fields {
    let mut fields = Fields::default();
    let mut seen: Vec<(Field, String)> = Vec::new();
    for (key, value) in record_fields {
        let Some(field) = field_for(&key) else {
            fields.extra.insert(key, value);
            continue;
        };
        if value.is_null() {
            continue;
        }
        if let Some((_, first)) = seen.iter().find(|(f, _)| *f == field) {
            problems.push(problem(
                &key,
                format!(
                    "`{first}` and `{key}` both give the sample's {}; keep one",
                    field.canonical()
                ),
            ));
            continue;
        }
        seen.push((field, key.clone()));
        if let Err(msg) = fields.read(field, &key, value) {
            problems.push(problem(&key, msg));
        }
    }
    fields
}

/// The expected answer against the input: answers per turn need as many
/// turns.
fn expected_for(
    expected: Option<(String, Expected)>,
    input: &Input,
    problem: &impl Fn(&str, String) -> Problem,
    problems: &mut Vec<Problem>,
) -> Option<Expected> {
    match expected {
        Some((key, Expected::PerTurn(list))) => match input {
            Input::Turns(turns) if turns.len() == list.len() => Some(Expected::PerTurn(list)),
            Input::Turns(turns) => {
                problems.push(problem(
                    &key,
                    format!(
                        "has {} per-turn answers but `input` has {} turns; they must be the same length",
                        list.len(),
                        turns.len()
                    ),
                ));
                None
            }
            Input::Text(_) => {
                problems.push(problem(
                    &key,
                    "is an array (one answer per turn) but `input` is a single prompt; give a string, or make `input` an array of turns".into(),
                ));
                None
            }
        },
        Some((_, e)) => Some(e),
        None => None,
    }
}

/// Per-turn evaluators and answers: one per turn of `input` (evaluator
/// sets that all name nothing are none).
fn check_turns(
    fields: &mut Fields,
    input: &Input,
    problem: &impl Fn(&str, String) -> Problem,
    problems: &mut Vec<Problem>,
) {
    // Turns that all name nothing are no per-turn evaluators at all.
    if fields.turn_evaluators.iter().all(Map::is_empty) {
        fields.turn_evaluators.clear();
    }
    if !fields.turn_evaluators.is_empty() && fields.turn_evaluators.len() != input.turns().len() {
        problems.push(problem(
            "turn_evaluators",
            format!(
                "has {} per-turn evaluator sets but `input` has {} turn(s); give one per turn",
                fields.turn_evaluators.len(),
                input.turns().len()
            ),
        ));
    }
    if !fields.turn_expected.is_empty() && fields.turn_expected.len() != input.turns().len() {
        problems.push(problem(
            "turn_expected",
            format!(
                "has {} per-turn answers but `input` has {} turn(s); give one per turn (null for a turn without one)",
                fields.turn_expected.len(),
                input.turns().len()
            ),
        ));
    }
}

/// Builds a sample from a record (already rewritten by the schema adapters),
/// pushing every problem found. Returns `None` when the record has problems
/// (the caller reports them all).
pub(crate) fn to_sample(
    shared_file: &std::sync::Arc<str>,
    index: usize,
    record: Record,
    problems: &mut Vec<Problem>,
) -> Option<Sample> {
    let file: &str = shared_file;
    let line = record.line;
    let offset = record.offset;
    let before = problems.len();
    let problem = |field: &str, msg: String| Problem::new(file, line, msg).field(field);

    let mut fields = read_fields(record.fields, &problem, problems);
    let Some(input) = fields.input.take() else {
        if problems.len() == before {
            problems.push(Problem::new(
                file,
                line,
                format!(
                    "missing field `input` (accepted names: {})",
                    accepted_names(Field::Input)
                ),
            ));
        }
        return None;
    };
    let expected = expected_for(fields.expected.take(), &input, &problem, problems);
    check_turns(&mut fields, &input, &problem, problems);
    if problems.len() > before {
        return None;
    }
    // Answers of some turns only; every turn's are one answer per turn.
    let mut expected = expected;
    if !fields.turn_expected.is_empty() && fields.turn_expected.iter().all(Option::is_some) {
        let all: Vec<String> = std::mem::take(&mut fields.turn_expected)
            .into_iter()
            .flatten()
            .collect();
        expected = expected.or(Some(Expected::PerTurn(all)));
    }
    // `extra: {...}` (as our writers emit it) holds the fields of other formats.
    if let Some(more) = fields.extra_object.take() {
        for (k, v) in more {
            if fields.extra.get(&k).is_some_and(|have| *have != v) {
                problems.push(problem(
                    "extra",
                    format!("`extra.{k}` and the record's own `{k}` differ; keep one"),
                ));
                return None;
            }
            fields.extra.insert(k, v);
        }
    }
    let (id, explicit_id) = match fields.id {
        Some(id) => (id, true),
        None => (index.to_string(), false),
    };
    Some(Sample {
        id,
        explicit_id,
        index,
        input,
        expected,
        context: fields.context,
        reference_contexts: fields.reference_contexts,
        tags: fields.tags,
        metadata: fields.metadata,
        agent_args: fields.agent_args,
        rubric_vars: fields.rubric_vars,
        evaluators: fields.evaluators,
        turn_evaluators: fields.turn_evaluators,
        turn_expected: fields.turn_expected,
        accepted_answers: fields.accepted_answers,
        retrieval: record.retrieval,
        runevals_defaults: record.runevals_defaults, // issue38:runevals
        expected_tools: fields.expected_tools,
        tools: fields.tools,
        extra: fields.extra,
        source: Source {
            file: shared_file.clone(),
            line,
            offset,
        },
    })
}

fn id_value(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        Value::String(_) => Err("is empty; give a non-empty string or an integer".into()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        other => Err(format!(
            "expected a string or an integer, found {}",
            kind_of(other)
        )),
    }
}

fn input_value(v: &Value) -> Result<Input, String> {
    match v {
        Value::String(s) if s.trim().is_empty() => Err("is empty".into()),
        Value::String(s) => Ok(Input::Text(s.clone())),
        Value::Array(items) if items.is_empty() => {
            Err("is an empty array; a conversation needs at least one turn".into())
        }
        Value::Array(items) => {
            let mut turns = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if !s.trim().is_empty() => turns.push(s.clone()),
                    Value::String(_) => return Err(format!("turn {i} is empty")),
                    other => {
                        return Err(format!(
                            "turn {i}: expected a string, found {}",
                            kind_of(other)
                        ));
                    }
                }
            }
            Ok(Input::Turns(turns))
        }
        other => Err(format!(
            "expected a string or an array of strings (one per turn), found {}",
            kind_of(other)
        )),
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn expected_value(v: &Value) -> Result<Expected, String> {
    if let Some(text) = scalar_text(v) {
        if text.trim().is_empty() {
            // "" would make `contains` and `regex` pass on any output.
            return Err(
                "is empty; leave the field out if the sample has no expected answer".into(),
            );
        }
        return Ok(Expected::Text(text));
    }
    match v {
        Value::Array(items) if items.is_empty() => Err("is an empty array".into()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match scalar_text(item) {
                Some(t) if t.trim().is_empty() => Err(format!("turn {i} is empty")),
                Some(t) => Ok(t),
                None => Err(format!(
                    "turn {i}: expected a string, found {}",
                    kind_of(item)
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Expected::PerTurn),
        other => Err(format!(
            "expected a string or an array of strings (one per turn), found {}",
            kind_of(other)
        )),
    }
}

fn string_list(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!(
                    "item {i}: expected a string, found {}",
                    kind_of(other)
                )),
            })
            .collect(),
        other => Err(format!(
            "expected a string or an array of strings, found {}",
            kind_of(other)
        )),
    }
}

fn tag_list(v: &Value) -> Result<Vec<String>, String> {
    let tags = string_list(v)?;
    if let Some(i) = tags.iter().position(|t| t.trim().is_empty()) {
        return Err(format!("tag {i} is empty"));
    }
    Ok(tags.into_iter().map(|t| t.trim().to_string()).collect())
}

/// One non-empty string or `null` per turn.
fn optional_strings(v: Value) -> Result<Vec<Option<String>>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "expected an array of strings or nulls (one per turn), found {}",
            kind_of(&v)
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::Null => Ok(None),
            Value::String(s) if !s.trim().is_empty() => Ok(Some(s)),
            Value::String(_) => Err(format!(
                "turn {i} is empty; use null for a turn without an answer"
            )),
            other => Err(format!(
                "turn {i}: expected a string or null, found {}",
                kind_of(&other)
            )),
        })
        .collect()
}

fn object_list(v: Value) -> Result<Vec<Map<String, Value>>, String> {
    match v {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| object(item).map_err(|e| format!("item {i}: {e}")))
            .collect(),
        other => Err(format!(
            "expected an array of objects (one per turn), found {}",
            kind_of(&other)
        )),
    }
}

fn object(v: Value) -> Result<Map<String, Value>, String> {
    match v {
        Value::Object(map) => Ok(map),
        other => Err(format!("expected an object, found {}", kind_of(&other))),
    }
}
