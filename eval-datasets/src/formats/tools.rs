//! Tool calls a record expects the agent to make: deepeval's
//! `expected_tools`, ragas' `reference_tool_calls`, our own `expected_tools`
//! (all filling [`Sample::expected_tools`](crate::Sample::expected_tools)).
//!
//! The value is an array; each item is one call:
//!
//! * a string: the tool's name (no arguments expected);
//! * an object with `name` and, optionally, its arguments under one of
//!   `arguments` (ours, OpenAI), `args` (ragas `ToolCall`),
//!   `input_parameters` / `inputParameters` (deepeval `ToolCall`), `input`
//!   (deepeval's own test goldens, `tests/test_confident/goldens.json`): a
//!   JSON object, or JSON text holding one (OpenAI writes arguments as text);
//!   `id` (a string) and `turn` (a 0-based user turn) are read too;
//! * OpenAI's shape, `{"type": "function", "function": {"name", "arguments"}}`.
//!
//! deepeval's `description`, `reasoning`, `output` and `type` are accepted
//! but not compared by any metric (the agent's tool outputs are not part of
//! its answer): when an item has one, the whole value is also kept unchanged
//! in [`Sample::extra`](crate::Sample::extra) under its key, so nothing is
//! lost. Any other key is an error (a misspelt `agrs` would otherwise
//! silently expect no arguments).
//!
//! In a CSV cell the value is JSON text (as ragas and deepeval write it), or
//! tool names separated by `;` (deepeval's `expected_tools_col_delimiter`).

use serde_json::{Map, Value};

use super::text::{kind_of, parse_strict};
use crate::ToolCall;

/// Keys that hold a call's arguments.
const ARGUMENT_KEYS: &[&str] = &[
    "arguments",
    "args",
    "input_parameters",
    "inputParameters",
    "input",
];

/// Keys read into [`ToolCall`] or accepted as descriptions.
const KNOWN: &str = "name, arguments (or args, input_parameters, input), id, turn, function, type, description, reasoning, output";

/// The calls of a tool-call field, and whether some item said more than a
/// [`ToolCall`] holds (its `description`, `reasoning`, `output`, a
/// non-function `type`): the caller then keeps the value in `extra` too.
pub(crate) fn tool_calls(value: &Value) -> Result<(Vec<ToolCall>, bool), String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "expected an array of tool calls (names, or objects with `name` and `arguments`), found {}",
            kind_of(value)
        ));
    };
    let mut calls = Vec::with_capacity(items.len());
    let mut lossy = false;
    for (i, item) in items.iter().enumerate() {
        let (call, more) = tool_call(item).map_err(|e| format!("tool call {i}: {e}"))?;
        calls.push(call);
        lossy |= more;
    }
    Ok((calls, lossy))
}

/// A CSV cell of a tool-call field: JSON text, or names separated by `;`.
pub(crate) fn csv_cell(cell: &str) -> Result<Value, String> {
    let trimmed = cell.trim();
    if trimmed.starts_with(['[', '{']) {
        return parse_strict(trimmed)
            .map_err(|e| format!("expected a JSON array of tool calls in this cell: {e}"));
    }
    Ok(Value::Array(
        trimmed
            .split(';')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(Value::from)
            .collect(),
    ))
}

fn tool_call(item: &Value) -> Result<(ToolCall, bool), String> {
    let object = match item {
        Value::String(name) => return Ok((ToolCall::new(tool_name(name)?), false)),
        Value::Object(o) => o,
        other => {
            return Err(format!(
                "expected a tool name or an object with `name`, found {}",
                kind_of(other)
            ));
        }
    };
    let mut lossy = false;
    let mut name = None;
    let mut arguments: Option<(&str, Map<String, Value>)> = None;
    let mut id = None;
    let mut turn = 0;
    let mut set_arguments = |key: &'static str, value: &Value| -> Result<(), String> {
        if let Some((first, _)) = &arguments {
            return Err(format!(
                "`{first}` and `{key}` both give the arguments; keep one"
            ));
        }
        arguments = Some((key, argument_map(key, value)?));
        Ok(())
    };
    for (key, value) in object {
        match key.as_str() {
            "name" => name = Some(tool_name(as_str(key, value)?)?),
            "function" => {
                let Value::Object(f) = value else {
                    return Err(format!(
                        "`function` must be an object with `name` and `arguments`, found {}",
                        kind_of(value)
                    ));
                };
                for (k, v) in f {
                    match k.as_str() {
                        "name" if name.is_none() => name = Some(tool_name(as_str(k, v)?)?),
                        "name" => return Err("`name` is given twice (also in `function`)".into()),
                        "arguments" => set_arguments("arguments", v)?,
                        other => {
                            return Err(format!(
                                "unknown key `function.{other}` (expected name, arguments)"
                            ));
                        }
                    }
                }
            }
            "id" => match value {
                Value::String(s) => id = Some(s.clone()),
                Value::Null => {}
                other => {
                    return Err(format!("`id` must be a string, found {}", kind_of(other)));
                }
            },
            "turn" => {
                turn = value
                    .as_u64()
                    .and_then(|t| usize::try_from(t).ok())
                    .ok_or_else(|| {
                        format!(
                            "`turn` must be a 0-based turn number, found {}",
                            kind_of(value)
                        )
                    })?
            }
            // deepeval's ToolCallType (FUNCTION, MCP) or OpenAI's "function".
            "type" => match value {
                Value::String(t) if t.eq_ignore_ascii_case("function") => {}
                Value::Null => {}
                Value::String(_) => lossy = true,
                other => {
                    return Err(format!("`type` must be a string, found {}", kind_of(other)));
                }
            },
            "description" | "reasoning" | "output" => lossy |= !value.is_null(),
            k if ARGUMENT_KEYS.contains(&k) => {
                let key = ARGUMENT_KEYS
                    .iter()
                    .find(|a| **a == k)
                    .copied()
                    .unwrap_or("arguments");
                set_arguments(key, value)?
            }
            other => return Err(format!("unknown key `{other}` (expected {KNOWN})")),
        }
    }
    let Some(name) = name else {
        return Err(
            "missing `name` (a tool call is a tool name, or an object with `name` and its arguments)"
                .into(),
        );
    };
    let mut call = ToolCall::new(name).in_turn(turn);
    if let Some((_, map)) = arguments {
        call.arguments = map;
    }
    if let Some(id) = id {
        call = call.with_id(id);
    }
    Ok((call, lossy))
}

fn as_str<'v>(key: &str, value: &'v Value) -> Result<&'v str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("`{key}` must be a string, found {}", kind_of(value)))
}

fn tool_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("the tool name is empty".into());
    }
    Ok(name.to_string())
}

/// Arguments: an object, null (none), or JSON text holding an object.
fn argument_map(key: &str, value: &Value) -> Result<Map<String, Value>, String> {
    match value {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(Map::new()),
        Value::String(text) if text.trim().is_empty() => Ok(Map::new()),
        Value::String(text) => match parse_strict(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!(
                "`{key}` is JSON text holding {}, not an object",
                kind_of(&other)
            )),
            Err(e) => Err(format!("`{key}` is text that is not a JSON object: {e}")),
        },
        other => Err(format!(
            "`{key}` must be an object of arguments, found {}",
            kind_of(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls(v: Value) -> (Vec<ToolCall>, bool) {
        tool_calls(&v).unwrap()
    }

    #[test]
    fn reads_every_shape() {
        let (c, lossy) = calls(json!([
            "search",
            {"name": "get_weather", "args": {"location": "Paris"}},
            {"name": "calc", "input_parameters": {"x": 1}, "description": "adds"},
            {"type": "function", "id": "call_1", "function": {"name": "lookup", "arguments": "{\"query\": \"refunds\"}"}},
            {"name": "ours", "arguments": {"a": [1]}, "turn": 2}
        ]));
        assert!(lossy, "deepeval's description is kept in extra");
        assert_eq!(c[0], ToolCall::new("search"));
        assert_eq!(
            c[1],
            ToolCall::new("get_weather").with_arguments(json!({"location": "Paris"}))
        );
        assert_eq!(c[2].arguments["x"], json!(1));
        assert_eq!(
            c[3],
            ToolCall::new("lookup")
                .with_arguments(json!({"query": "refunds"}))
                .with_id("call_1")
        );
        assert_eq!(c[4].turn, 2);
        let (_, lossy) = calls(json!([{"name": "x", "type": "FUNCTION", "output": null}]));
        assert!(!lossy, "nothing beyond what a ToolCall holds");
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        let cases = [
            (json!("search"), "expected an array of tool calls"),
            (json!([3]), "tool call 0: expected a tool name or an object"),
            (json!(["ok", {"args": {}}]), "tool call 1: missing `name`"),
            (
                json!([{"name": " "}]),
                "tool call 0: the tool name is empty",
            ),
            (json!([{"name": "x", "agrs": {}}]), "unknown key `agrs`"),
            (
                json!([{"name": "x", "args": {}, "arguments": {}}]),
                "`args` and `arguments` both give the arguments",
            ),
            (
                json!([{"name": "x", "args": [1]}]),
                "`args` must be an object of arguments, found an array",
            ),
            (
                json!([{"name": "x", "arguments": "[1]"}]),
                "`arguments` is JSON text holding an array, not an object",
            ),
            (
                json!([{"name": "x", "turn": -1}]),
                "`turn` must be a 0-based",
            ),
            (
                json!([{"name": 5}]),
                "`name` must be a string, found a number",
            ),
        ];
        for (value, expected) in cases {
            let e = tool_calls(&value).unwrap_err();
            assert!(e.contains(expected), "{value} => {e}");
        }
    }

    #[test]
    fn csv_cells_are_json_or_names() {
        assert_eq!(csv_cell(" a; b ;").unwrap(), json!(["a", "b"]));
        assert_eq!(
            csv_cell(r#"[{"name": "a", "args": {"x": 1}}]"#).unwrap(),
            json!([{"name": "a", "args": {"x": 1}}])
        );
        assert!(
            csv_cell("[{\"name\": ")
                .unwrap_err()
                .starts_with("expected a JSON array of tool calls in this cell:")
        );
    }
}
