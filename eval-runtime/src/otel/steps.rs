//! From the agent's spans to a trajectory: which spans are steps, and what
//! each says. Three attribute vocabularies are read:
//!
//! | | OpenTelemetry GenAI | OpenInference | OpenLLMetry |
//! |---|---|---|---|
//! | kind | `gen_ai.operation.name`: `chat`, `text_completion`, `generate_content` (llm), `execute_tool` (tool), `retrieval`, `embeddings` | `openinference.span.kind`: `LLM`, `TOOL`, `RETRIEVER`, `EMBEDDING` | `traceloop.span.kind = tool`; `llm.request.type` (llm) |
//! | tool | `gen_ai.tool.name`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result` | `tool.name`, `input.value` (`tool.parameters` is the tool's schema: read only when it is not one), `output.value` | `gen_ai.tool.name` or `traceloop.entity.name`, `traceloop.entity.input` (`{"args": [...], "kwargs": {...}}`: the keyword arguments), `traceloop.entity.output` (JSON) |
//! | model | `gen_ai.request.model`, `gen_ai.response.model` | `llm.model_name` | `gen_ai.request.model` |
//! | tokens | `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` (and the deprecated `prompt_tokens`, `completion_tokens`) | `llm.token_count.prompt`, `llm.token_count.completion` | `gen_ai.usage.*` |
//!
//! The span shapes of the real packages (opentelemetry-instrumentation-openai-v2
//! with opentelemetry-util-genai, openinference-instrumentation-openai,
//! traceloop-sdk) are kept, recorded, in `tests/fixtures/spans/` (with their
//! versions), and read alike by the crate's tests.
//!
//! Other spans (the agent's HTTP server span, `invoke_agent`, chains,
//! workflows, OpenLLMetry's `@task`s and `@agent`s) are structure, not steps. Steps are ordered by start time,
//! then end time; a span whose status is an error keeps its message.

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value as Av};
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};
use serde_json::{Map, Value};

use crate::model::{Step, StepKind, Trajectory, TrajectorySource};

/// Most steps a trajectory keeps; beyond, the rest are counted in its note.
pub(crate) const MAX_STEPS: usize = 1000;
/// Longest name, model or error kept, in characters.
const MAX_NAME: usize = 256;
/// Longest tool result kept in memory, in characters (a results file keeps
/// fewer: [`KEPT_CHARS`](crate::model::KEPT_CHARS)).
const MAX_RESULT: usize = 4096;
/// Largest tool arguments kept, as JSON text in bytes; larger ones are kept
/// as their first [`MAX_RESULT`] characters under `"value"`.
const MAX_ARGUMENTS: usize = 64 << 10;
/// Deepest JSON a span's text is read as (arrays and objects in one
/// another); deeper text is kept as text. A results file nests a step's
/// arguments some ten levels down, and JSON readers (serde_json's included)
/// stop at 128: the file stays readable.
const MAX_JSON_DEPTH: usize = 32;

/// How deep `value` nests arrays and objects.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `text` cut to `max` characters, with any key it holds masked.
fn kept(text: &str, max: usize) -> String {
    let masked = crate::secrets::mask(text);
    match masked.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &masked[..end]),
        None => masked.into_owned(),
    }
}

/// The trajectory of a sample's spans: `turns[k]` holds the spans that came
/// under the trace of its `k`-th request.
pub(crate) fn trajectory(
    turns: &[Vec<Span>],
    traces: Vec<String>,
    note: Option<String>,
    incomplete: bool,
) -> Trajectory {
    let mut steps: Vec<(u64, u64, Step)> = Vec::new();
    for (turn, spans) in turns.iter().enumerate() {
        for span in spans {
            if let Some(step) = step(span) {
                steps.push((
                    span.start_time_unix_nano,
                    span.end_time_unix_nano,
                    step.in_turn(turn),
                ));
            }
        }
    }
    steps.sort_by_key(|(start, end, step)| (step.turn, *start, *end));
    let origin = steps.iter().map(|(s, _, _)| *s).min().unwrap_or(0);
    let total = steps.len();
    let mut note = note;
    if total > MAX_STEPS {
        let more = format!(
            "{} more steps not kept (at most {MAX_STEPS})",
            total - MAX_STEPS
        );
        note = Some(note.map_or(more.clone(), |n| format!("{n}; {more}")));
        steps.truncate(MAX_STEPS);
    }
    Trajectory {
        steps: steps
            .into_iter()
            .map(|(start, end, mut step)| {
                step.start_ms = start.saturating_sub(origin) as f64 / 1e6;
                step.duration_ms = Some(end.saturating_sub(start) as f64 / 1e6);
                step
            })
            .collect(),
        traces,
        source: TrajectorySource::Spans,
        note,
        incomplete,
    }
}

/// The step `span` is, if it is one.
pub(crate) fn step(span: &Span) -> Option<Step> {
    let attrs = Attrs(&span.attributes);
    let kind = kind(&attrs)?;
    let mut step = Step::new(kind, span.name.clone());
    step.span_id = Some(crate::model::hex(&span.span_id));
    match kind {
        StepKind::Tool => {
            if let Some(name) = attrs
                .text("gen_ai.tool.name")
                .or_else(|| attrs.text("tool.name"))
                .or_else(|| attrs.text("traceloop.entity.name"))
            {
                step.name = name;
            } else if let Some(rest) = span.name.strip_prefix("execute_tool ") {
                step.name = rest.to_string();
            }
            let arguments = attrs
                .json("gen_ai.tool.call.arguments")
                .or_else(|| attrs.json("input.value"))
                .or_else(|| attrs.json("tool.parameters").filter(|p| !is_schema(p)))
                .or_else(|| attrs.json("traceloop.entity.input").map(unwrap_call));
            step.arguments = match arguments {
                Some(Value::Null) | None => Map::new(),
                Some(v) if v.to_string().len() > MAX_ARGUMENTS => Map::from_iter([(
                    "value".to_string(),
                    Value::String(kept(&v.to_string(), MAX_RESULT)),
                )]),
                Some(Value::Object(map)) => map,
                Some(other) => Map::from_iter([("value".to_string(), other)]),
            };
            step.call_id = attrs
                .text("gen_ai.tool.call.id")
                .or_else(|| attrs.text("tool.id"));
            step.result = attrs
                .text_or_json("gen_ai.tool.call.result")
                .or_else(|| attrs.text_or_json("output.value"))
                .or_else(|| {
                    // OpenLLMetry writes the return value as JSON: a string
                    // is quoted.
                    attrs.text("traceloop.entity.output").map(|t| {
                        // Parsed within what a reply may take (a JSON
                        // bomb in an attribute is kept as text).
                        match crate::config::inner_json(&t) {
                            Ok(Value::String(s)) => s,
                            _ => t,
                        }
                    })
                })
                .map(|r| kept(&r, MAX_RESULT));
        }
        StepKind::Llm | StepKind::Embeddings => {
            step.model = attrs
                .text("gen_ai.request.model")
                .or_else(|| attrs.text("gen_ai.response.model"))
                .or_else(|| attrs.text("llm.model_name"));
            if let Some(model) = &step.model {
                step.name = model.clone();
            }
        }
        _ => {}
    }
    step.input_tokens = attrs
        .int("gen_ai.usage.input_tokens")
        .or_else(|| attrs.int("gen_ai.usage.prompt_tokens"))
        .or_else(|| attrs.int("llm.token_count.prompt"));
    step.output_tokens = attrs
        .int("gen_ai.usage.output_tokens")
        .or_else(|| attrs.int("gen_ai.usage.completion_tokens"))
        .or_else(|| attrs.int("llm.token_count.completion"));
    if let Some(status) = &span.status
        && status.code == StatusCode::Error as i32
    {
        step.error = Some(if status.message.is_empty() {
            attrs.text("error.type").unwrap_or_else(|| "error".into())
        } else {
            status.message.clone()
        });
    }
    step.name = kept(&step.name, MAX_NAME);
    step.model = step.model.map(|m| kept(&m, MAX_NAME));
    step.call_id = step.call_id.map(|c| kept(&c, MAX_NAME));
    step.error = step.error.map(|e| crate::model::one_line(&e, MAX_NAME * 4));
    Some(step)
}

/// Whether `value` is a JSON schema (OpenInference's `tool.parameters` is
/// the tool's parameter schema, not the call's arguments).
fn is_schema(value: &Value) -> bool {
    value.get("properties").is_some_and(Value::is_object)
}

/// The call's arguments from an OpenLLMetry (traceloop-sdk) entity input:
/// its `@tool` and `@task` decorators write the Python call as
/// `{"args": [...], "kwargs": {...}}` (`json.dumps` in
/// `traceloop/sdk/decorators/base.py`, `_handle_span_input`). The keyword
/// arguments are the arguments (an agent calls its tool with the model's
/// arguments as keywords); positional ones, whose names the span does not
/// say, are kept under `"$args"` (no Python keyword can be named so).
/// Any other value is kept as it is.
fn unwrap_call(input: Value) -> Value {
    let Value::Object(mut call) = input else {
        return input;
    };
    let wrapped = call.len() == 2
        && call.get("args").is_some_and(Value::is_array)
        && call.get("kwargs").is_some_and(Value::is_object);
    if !wrapped {
        return Value::Object(call);
    }
    let args = call.remove("args");
    let Some(Value::Object(mut kwargs)) = call.remove("kwargs") else {
        return Value::Null;
    };
    if let Some(Value::Array(args)) = args
        && !args.is_empty()
    {
        kwargs.insert("$args".into(), Value::Array(args));
    }
    Value::Object(kwargs)
}

fn kind(attrs: &Attrs<'_>) -> Option<StepKind> {
    if let Some(op) = attrs.text("gen_ai.operation.name") {
        return match op.as_str() {
            "chat" | "text_completion" | "generate_content" => Some(StepKind::Llm),
            "execute_tool" => Some(StepKind::Tool),
            "retrieval" => Some(StepKind::Retrieval),
            "embeddings" => Some(StepKind::Embeddings),
            // invoke_agent, create_agent, invoke_workflow, plan: structure.
            _ => None,
        };
    }
    if let Some(k) = attrs.text("openinference.span.kind") {
        return match k.to_ascii_uppercase().as_str() {
            "LLM" => Some(StepKind::Llm),
            "TOOL" => Some(StepKind::Tool),
            "RETRIEVER" => Some(StepKind::Retrieval),
            "EMBEDDING" => Some(StepKind::Embeddings),
            _ => None,
        };
    }
    if attrs.text("traceloop.span.kind").as_deref() == Some("tool") {
        return Some(StepKind::Tool);
    }
    attrs.get("llm.request.type").map(|_| StepKind::Llm)
}

/// A span's attributes, looked up by key.
struct Attrs<'a>(&'a [KeyValue]);

impl Attrs<'_> {
    fn get(&self, key: &str) -> Option<&Av> {
        self.0
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.as_ref())
            .and_then(|v| v.value.as_ref())
    }

    fn text(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Av::StringValue(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        }
    }

    fn int(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Av::IntValue(i) => u64::try_from(*i).ok(),
            Av::DoubleValue(d) if d.is_finite() && *d >= 0.0 => Some(*d as u64),
            Av::StringValue(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A value as JSON: a string holding JSON is parsed (GenAI and
    /// OpenInference write arguments as JSON text), another string kept.
    fn json(&self, key: &str) -> Option<Value> {
        Some(match self.get(key)? {
            Av::StringValue(s) => crate::config::inner_json(s)
                .ok()
                .filter(|v| depth(v) <= MAX_JSON_DEPTH)
                .unwrap_or_else(|| Value::String(s.clone())),
            other => to_json(other),
        })
    }

    /// A value as text: a string as is, anything else as JSON.
    fn text_or_json(&self, key: &str) -> Option<String> {
        Some(match self.get(key)? {
            Av::StringValue(s) => s.clone(),
            other => to_json(other).to_string(),
        })
    }
}

/// An OTLP value as JSON.
fn to_json(v: &Av) -> Value {
    let any = |a: &AnyValue| a.value.as_ref().map_or(Value::Null, to_json);
    match v {
        Av::StringValue(s) => Value::String(s.clone()),
        Av::BoolValue(b) => Value::Bool(*b),
        Av::IntValue(i) => Value::from(*i),
        Av::DoubleValue(d) => serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number),
        Av::ArrayValue(a) => Value::Array(a.values.iter().map(any).collect()),
        Av::KvlistValue(kv) => Value::Object(
            kv.values
                .iter()
                .map(|kv| (kv.key.clone(), kv.value.as_ref().map_or(Value::Null, any)))
                .collect(),
        ),
        Av::BytesValue(b) => Value::String(crate::model::hex(b)),
        // A string of the request's dictionary (profiles): not kept.
        Av::StringValueStrindex(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::Status;

    fn kv(key: &str, value: Av) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue { value: Some(value) }),
            ..KeyValue::default()
        }
    }

    fn s(v: &str) -> Av {
        Av::StringValue(v.into())
    }

    fn span(name: &str, start_ms: u64, end_ms: u64, attributes: Vec<KeyValue>) -> Span {
        Span {
            name: name.into(),
            span_id: vec![1; 8],
            start_time_unix_nano: 1_700_000_000_000_000_000 + start_ms * 1_000_000,
            end_time_unix_nano: 1_700_000_000_000_000_000 + end_ms * 1_000_000,
            attributes,
            ..Span::default()
        }
    }

    #[test]
    fn genai_openinference_and_openllmetry_spans_are_steps() {
        let turns = vec![
            vec![
                // The agent's own server span: structure, not a step.
                span("POST /", 0, 100, vec![kv("http.request.method", s("POST"))]),
                span(
                    "chat demo",
                    60,
                    90,
                    vec![
                        kv("gen_ai.operation.name", s("chat")),
                        kv("gen_ai.request.model", s("demo-1")),
                        kv("gen_ai.usage.input_tokens", Av::IntValue(120)),
                        kv("gen_ai.usage.output_tokens", Av::IntValue(30)),
                    ],
                ),
                span(
                    "execute_tool lookup",
                    20,
                    50,
                    vec![
                        kv("gen_ai.operation.name", s("execute_tool")),
                        kv("gen_ai.tool.name", s("lookup")),
                        kv("gen_ai.tool.call.arguments", s(r#"{"id": "rag"}"#)),
                        kv("gen_ai.tool.call.result", s("RAG is ...")),
                        kv("gen_ai.tool.call.id", s("call_1")),
                    ],
                ),
                span(
                    "search",
                    5,
                    15,
                    vec![kv("openinference.span.kind", s("RETRIEVER"))],
                ),
            ],
            vec![
                span(
                    "calc",
                    200,
                    201,
                    vec![
                        kv("traceloop.span.kind", s("tool")),
                        kv("traceloop.entity.name", s("calculator")),
                        kv("traceloop.entity.input", s("2+2")),
                    ],
                ),
                {
                    let mut failed = span(
                        "llm",
                        210,
                        260,
                        vec![
                            kv("openinference.span.kind", s("LLM")),
                            kv("llm.model_name", s("other")),
                            kv("llm.token_count.prompt", s("7")),
                        ],
                    );
                    failed.status = Some(Status {
                        code: StatusCode::Error as i32,
                        message: "rate limited".into(),
                    });
                    failed
                },
                span(
                    "agent",
                    0,
                    300,
                    vec![kv("gen_ai.operation.name", s("invoke_agent"))],
                ),
            ],
        ];
        let t = trajectory(&turns, vec!["a".into(), "b".into()], None, false);
        let kinds: Vec<(StepKind, &str, usize)> = t
            .steps
            .iter()
            .map(|s| (s.kind, s.name.as_str(), s.turn))
            .collect();
        assert_eq!(
            kinds,
            [
                (StepKind::Retrieval, "search", 0),
                (StepKind::Tool, "lookup", 0),
                (StepKind::Llm, "demo-1", 0),
                (StepKind::Tool, "calculator", 1),
                (StepKind::Llm, "other", 1),
            ]
        );
        let lookup = &t.steps[1];
        assert_eq!(
            Value::Object(lookup.arguments.clone()),
            serde_json::json!({"id": "rag"})
        );
        assert_eq!(lookup.result.as_deref(), Some("RAG is ..."));
        assert_eq!(lookup.tool_call().unwrap().id.as_deref(), Some("call_1"));
        assert_eq!((lookup.start_ms, lookup.duration_ms), (15.0, Some(30.0)));
        let chat = &t.steps[2];
        assert_eq!(
            (chat.input_tokens, chat.output_tokens, chat.tokens()),
            (Some(120), Some(30), Some(150))
        );
        assert_eq!(
            Value::Object(t.steps[3].arguments.clone()),
            serde_json::json!({"value": "2+2"}),
            "text that is not JSON is kept as the value"
        );
        assert_eq!(t.steps[4].error.as_deref(), Some("rate limited"));
        assert_eq!(t.steps[4].input_tokens, Some(7));
        assert_eq!(t.source, TrajectorySource::Spans);
        assert_eq!(t.tool_calls().len(), 2);
    }

    /// The spans each real instrumentation wrote for the same agent
    /// (`tests/fixtures/spans/record.py`; versions in its PROVENANCE.md), as
    /// the receiver decodes them: OTLP/JSON, and the protobuf the SDK's
    /// exporter sent.
    fn recorded(name: &str) -> Vec<Span> {
        use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
        use prost::Message;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spans/");
        let json = std::fs::read(format!("{dir}{name}.json")).unwrap();
        let from_json: ExportTraceServiceRequest = serde_json::from_slice(&json).unwrap();
        let pb = std::fs::read(format!("{dir}{name}.pb")).unwrap();
        let from_pb = ExportTraceServiceRequest::decode(&pb[..]).unwrap();
        assert_eq!(from_json, from_pb, "{name}: the JSON is the protobuf");
        from_json
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    #[test]
    fn the_three_instrumentations_of_one_agent_give_one_trajectory() {
        let expected = (
            vec![
                (StepKind::Llm, "scripted-1".to_string()),
                (StepKind::Tool, "lookup".to_string()),
                (StepKind::Llm, "scripted-1".to_string()),
            ],
            serde_json::json!({"query": "What is RAG?", "top_k": 2}),
            "RAG (retrieval-augmented generation) answers from retrieved passages.",
        );
        for name in ["genai", "openinference", "traceloop"] {
            let t = trajectory(&[recorded(name)], Vec::new(), None, false);
            let steps: Vec<(StepKind, String)> =
                t.steps.iter().map(|s| (s.kind, s.name.clone())).collect();
            assert_eq!(steps, expected.0, "{name}");
            let calls = t.tool_calls();
            assert_eq!(calls.len(), 1, "{name}");
            assert_eq!(calls[0].name, "lookup", "{name}");
            assert_eq!(
                Value::Object(calls[0].arguments.clone()),
                expected.1,
                "{name}: the call's arguments, not a wrapper or a schema"
            );
            assert_eq!(t.steps[1].result.as_deref(), Some(expected.2), "{name}");
            let tokens: Vec<Option<u64>> = t.steps.iter().map(Step::tokens).collect();
            assert_eq!(tokens, [Some(39), None, Some(49)], "{name}");
        }
    }

    #[test]
    fn openllmetry_positional_arguments_are_kept_apart_and_other_inputs_as_they_are() {
        let call = |input: &str| unwrap_call(serde_json::from_str(input).unwrap());
        assert_eq!(
            call(r#"{"args": ["RAG"], "kwargs": {"top_k": 2}}"#),
            serde_json::json!({"$args": ["RAG"], "top_k": 2})
        );
        // A keyword argument named `args` is kept, not overwritten.
        assert_eq!(
            call(r#"{"args": [1], "kwargs": {"args": "x", "q": 2}}"#),
            serde_json::json!({"$args": [1], "args": "x", "q": 2})
        );
        assert_eq!(call(r#"{"args": [], "kwargs": {}}"#), serde_json::json!({}));
        // Not the decorator's wrapper: kept.
        assert_eq!(
            call(r#"{"args": 1, "kwargs": {}}"#),
            serde_json::json!({"args": 1, "kwargs": {}})
        );
        assert_eq!(
            call(r#"{"args": [], "kwargs": {}, "x": 1}"#),
            serde_json::json!({"args": [], "kwargs": {}, "x": 1})
        );
        // OpenInference's schema is not taken for arguments; other
        // `tool.parameters` are.
        assert!(is_schema(
            &serde_json::json!({"type": "object", "properties": {}})
        ));
        assert!(!is_schema(
            &serde_json::json!({"query": "x", "type": "object"})
        ));
    }

    #[test]
    fn huge_attributes_are_cut_and_keys_masked() {
        let big = "x".repeat(200_000);
        // A key the run knows (an agent's, a judge's): never kept.
        let _key = crate::secrets::Secret::new("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD");
        let span = span(
            "t",
            0,
            1,
            vec![
                kv("gen_ai.operation.name", s("execute_tool")),
                kv("gen_ai.tool.name", s(&big)),
                kv(
                    "gen_ai.tool.call.arguments",
                    s(&format!("{{\"q\": \"{big}\"}}")),
                ),
                kv(
                    "gen_ai.tool.call.result",
                    s("the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
                ),
            ],
        );
        let step = step(&span).unwrap();
        assert_eq!(
            step.name.chars().count(),
            MAX_NAME + 1,
            "cut, with an ellipsis"
        );
        let value = step.arguments["value"].as_str().unwrap();
        assert_eq!(value.chars().count(), MAX_RESULT + 1);
        let result = step.result.unwrap();
        assert!(!result.contains("abcdefghijklmnopqrstuvwxyz"), "{result}");
    }

    #[test]
    fn arguments_nested_deeper_than_a_results_file_can_hold_are_kept_as_text() {
        let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        let shallow = format!(
            "{}1{}",
            "[".repeat(MAX_JSON_DEPTH),
            "]".repeat(MAX_JSON_DEPTH)
        );
        for (text, parsed) in [(&deep, false), (&shallow, true)] {
            let span = span(
                "t",
                0,
                1,
                vec![
                    kv("gen_ai.operation.name", s("execute_tool")),
                    kv("gen_ai.tool.call.arguments", s(text)),
                ],
            );
            let step = step(&span).unwrap();
            assert_eq!(step.arguments["value"].is_array(), parsed, "{text}");
            // The step, written inside a results file's nesting, reads back.
            let file = serde_json::json!({"samples": [{"trajectory": {"steps": [
                {"arguments": step.arguments}
            ]}}]});
            assert!(serde_json::from_str::<Value>(&file.to_string()).is_ok());
        }
    }

    #[test]
    fn steps_beyond_the_limit_are_counted_not_kept() {
        let spans: Vec<Span> = (0..MAX_STEPS as u64 + 5)
            .map(|i| {
                span(
                    "t",
                    i,
                    i + 1,
                    vec![kv("gen_ai.operation.name", s("execute_tool"))],
                )
            })
            .collect();
        let t = trajectory(&[spans], Vec::new(), Some("late".into()), false);
        assert_eq!(t.steps.len(), MAX_STEPS);
        assert_eq!(
            t.note.as_deref(),
            Some("late; 5 more steps not kept (at most 1000)")
        );
    }
}
