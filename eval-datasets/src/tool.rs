//! Tool calls: what an agent called (a [`Response`'s] calls, in
//! `eval-runtime`) and what a dataset expects it to call
//! ([`Sample::expected_tools`](crate::Sample::expected_tools)).
//!
//! [`Response`'s]: https://docs.rs/eval-runtime

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One call of a tool: its name and its JSON arguments.
///
/// The shape every format is read into: deepeval's `ToolCall` (`name`,
/// `input_parameters`), ragas' `ToolCall` (`name`, `args`), OpenAI's
/// `tool_calls[].function` (`name`, `arguments` as a JSON string).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments (empty when it takes none, or when a dataset does not
    /// say which it expects).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
    /// The call's id, when the agent gave one (OpenAI `tool_calls[].id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The 0-based user turn of a conversation the call was made in (0 for
    /// a single prompt and for expected calls).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub turn: usize,
    /// Arguments the agent sent that could not be read as a JSON object
    /// (small models write broken JSON): the call is kept, with its raw
    /// text and why it could not be read, and [`arguments`](Self::arguments)
    /// is empty. Metrics of names score the call; metrics of arguments
    /// count its arguments as matching none, naming this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_arguments: Option<InvalidArguments>,
}

/// A tool call's `arguments` that are not a JSON object: the text as sent
/// and why it could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InvalidArguments {
    /// The arguments as the agent sent them (a JSON string's text, or the
    /// JSON of a value that is not an object).
    pub raw: String,
    /// Why they could not be read (`expected value at line 1 column 9`,
    /// `a JSON array, not an object`).
    pub error: String,
}

impl InvalidArguments {
    /// Arguments `raw` that could not be read, because of `error`.
    pub fn new(raw: impl Into<String>, error: impl Into<String>) -> Self {
        InvalidArguments {
            raw: raw.into(),
            error: error.into(),
        }
    }
}

impl std::fmt::Display for InvalidArguments {
    /// `tool arguments are not a JSON object (<error>): <raw>`, the raw
    /// text cut to 80 characters on one line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let one_line: String = self.raw.split_whitespace().collect::<Vec<_>>().join(" ");
        let shown: String = one_line.chars().take(80).collect();
        let more = if one_line.chars().count() > 80 {
            "…"
        } else {
            ""
        };
        write!(
            f,
            "its arguments are not a JSON object ({}): {shown}{more}",
            self.error
        )
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ToolCall {
    /// A call of `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        ToolCall {
            name: name.into(),
            ..ToolCall::default()
        }
    }

    /// Sets the arguments (a JSON object; anything else is kept under
    /// `"value"`).
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_string(), other)]),
        };
        self
    }

    /// Keeps `raw` arguments that could not be read (`error`): the call
    /// has no arguments, and says why (see
    /// [`invalid_arguments`](Self::invalid_arguments)).
    pub fn with_invalid_arguments(
        mut self,
        raw: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        self.arguments = Map::new();
        self.invalid_arguments = Some(InvalidArguments::new(raw, error));
        self
    }

    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the 0-based user turn it was made in.
    pub fn in_turn(mut self, turn: usize) -> Self {
        self.turn = turn;
        self
    }

    /// `name(arg=value, ...)`, for reports.
    pub fn display(&self) -> String {
        let args: Vec<String> = self
            .arguments
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s:?}"),
                other => format!("{k}={other}"),
            })
            .collect();
        match &self.invalid_arguments {
            Some(bad) => {
                let raw: String = bad.raw.chars().take(60).collect();
                format!("{}(<invalid arguments: {raw:?}>)", self.name)
            }
            None => format!("{}({})", self.name, args.join(", ")),
        }
    }
}

/// Why a list of tool definitions is not valid: the item (0-based) and what
/// is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The value is not an array.
    #[error(
        "expected an array of tool definitions ({{\"type\": \"function\", \"function\": {{\"name\", ...}}}}), found {found}"
    )]
    NotArray {
        /// What it is ("an object", "a string"...).
        found: &'static str,
    },
    /// An item is not an object.
    #[error("tool {index}: expected an object, found {found}")]
    NotObject {
        /// The item.
        index: usize,
        /// What it is.
        found: &'static str,
    },
    /// `type: function` without a `function` object.
    #[error("tool {index}: `type: function` needs a `function` object with a `name`")]
    NoFunction {
        /// The item.
        index: usize,
    },
    /// A `type` other than `function`.
    #[error("tool {index}: `type` is {kind}; only `function` tools are sent")]
    NotFunction {
        /// The item.
        index: usize,
        /// Its `type`, as JSON.
        kind: String,
    },
    /// No name, or an empty one.
    #[error("tool {index}: no `name` (a non-empty string)")]
    NoName {
        /// The item.
        index: usize,
    },
    /// `parameters` that is not an object.
    #[error("tool {index} (`{name}`): `parameters` must be a JSON Schema object, found {found}")]
    Parameters {
        /// The item.
        index: usize,
        /// The tool's name.
        name: String,
        /// What `parameters` is.
        found: &'static str,
    },
    /// A name defined by an earlier item too.
    #[error("tool {index}: `{name}` is defined twice")]
    Duplicate {
        /// The item.
        index: usize,
        /// The tool's name.
        name: String,
    },
}

/// Why a tools file could not be used; every message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsFileError {
    /// The file could not be read.
    #[error("tools file {file}: cannot read it: {source}")]
    Read {
        /// The file, as the user wrote it.
        file: String,
        /// Why.
        #[source]
        source: crate::files::ReadError,
    },
    /// The file is not JSON.
    #[error("tools file {file}:{line}: not JSON: {source}")]
    Json {
        /// The file, as the user wrote it.
        file: String,
        /// The line (1-based) of the error.
        line: usize,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// The definitions are not valid.
    #[error("tools file {file}: {source}")]
    Invalid {
        /// The file, as the user wrote it.
        file: String,
        /// What is wrong.
        #[source]
        source: ToolError,
    },
}

/// OpenAI tool definitions (what a request's `tools` holds), read from a
/// dataset's `tools` field, a manifest dataset's `tools` or a tools file.
///
/// `value` is an array; each item is a full definition
/// `{"type": "function", "function": {"name": ..., "description": ...,
/// "parameters": {...}}}`, or just its `function` object, which is wrapped
/// into one. A name is required; `parameters`, when given, is an object.
/// Every definition comes back in the full form. Errors name the item.
pub fn definitions(value: &Value) -> Result<Vec<Value>, ToolError> {
    let Value::Array(items) = value else {
        return Err(ToolError::NotArray { found: kind(value) });
    };
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(ToolError::NotObject {
                index,
                found: kind(item),
            });
        };
        let function = match map.get("type") {
            Some(Value::String(t)) if t == "function" => match map.get("function") {
                Some(Value::Object(f)) => f,
                _ => return Err(ToolError::NoFunction { index }),
            },
            Some(other) => {
                return Err(ToolError::NotFunction {
                    index,
                    kind: other.to_string(),
                });
            }
            None => map,
        };
        let name = match function.get("name") {
            Some(Value::String(n)) if !n.trim().is_empty() => n.trim(),
            _ => return Err(ToolError::NoName { index }),
        };
        if let Some(p) = function.get("parameters")
            && !p.is_object()
        {
            return Err(ToolError::Parameters {
                index,
                name: name.to_string(),
                found: kind(p),
            });
        }
        if out.iter().any(|d| definition_name(d) == Some(name)) {
            return Err(ToolError::Duplicate {
                index,
                name: name.to_string(),
            });
        }
        let mut function = function.clone();
        function.insert("name".into(), Value::String(name.to_string()));
        let mut def = Map::new();
        def.insert("type".into(), Value::String("function".into()));
        def.insert("function".into(), Value::Object(function));
        out.push(Value::Object(def));
    }
    Ok(out)
}

/// The name of a tool definition (`function.name`).
pub fn definition_name(definition: &Value) -> Option<&str> {
    definition.get("function")?.get("name")?.as_str()
}

/// Adds the definitions of `more` that `tools` does not define yet (by
/// name): a sample's own definition of a tool wins over its dataset's.
pub fn add_definitions(tools: &mut Vec<Value>, more: &[Value]) {
    for def in more {
        let name = definition_name(def);
        if !tools.iter().any(|t| definition_name(t) == name) {
            tools.push(def.clone());
        }
    }
}

/// Reads a tools file: a JSON array of definitions, or an object with a
/// `tools` array (as an OpenAI request holds it); see [`definitions`].
/// Errors are one line naming the file.
pub fn read_definitions(path: &std::path::Path, shown: &str) -> Result<Vec<Value>, ToolsFileError> {
    let file = || shown.to_string();
    let bytes = crate::files::read_checked(path, crate::files::DEFAULT_MAX_DATASET_BYTES).map_err(
        |source| ToolsFileError::Read {
            file: file(),
            source,
        },
    )?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|source| ToolsFileError::Json {
        file: file(),
        line: source.line(),
        source,
    })?;
    let list = match &value {
        Value::Object(map) => map.get("tools").unwrap_or(&value),
        _ => &value,
    };
    definitions(list).map_err(|source| ToolsFileError::Invalid {
        file: file(),
        source,
    })
}

/// "a string", "an object", ... for messages (as `formats::text::kind_of`,
/// which this module cannot import: the formats import it).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn displays_and_round_trips() {
        let call = ToolCall::new("lookup")
            .with_arguments(json!({"q": "refunds", "k": 3}))
            .in_turn(1);
        assert_eq!(call.display(), r#"lookup(q="refunds", k=3)"#);
        let text = serde_json::to_string(&call).unwrap();
        assert_eq!(
            text,
            r#"{"name":"lookup","arguments":{"q":"refunds","k":3},"turn":1}"#
        );
        let back: ToolCall = serde_json::from_str(&text).unwrap();
        assert_eq!(back, call);
        assert_eq!(
            ToolCall::new("x").with_arguments(json!(5)).arguments["value"],
            json!(5)
        );
    }

    #[test]
    fn definitions_are_checked_and_completed() {
        let defs = definitions(&json!([
            {"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}},
            {"name": " lookup ", "description": "search the corpus"},
        ]))
        .unwrap();
        assert_eq!(definition_name(&defs[0]), Some("calculator"));
        assert_eq!(
            defs[1],
            json!({"type": "function", "function": {"name": "lookup", "description": "search the corpus"}})
        );
        for (bad, want) in [
            (
                json!({"name": "x"}),
                "expected an array of tool definitions",
            ),
            (
                json!(["calculator"]),
                "tool 0: expected an object, found a string",
            ),
            (json!([{"description": "d"}]), "tool 0: no `name`"),
            (
                json!([{"type": "retrieval"}]),
                "only `function` tools are sent",
            ),
            (json!([{"type": "function"}]), "needs a `function` object"),
            (
                json!([{"name": "a", "parameters": []}]),
                "tool 0 (`a`): `parameters` must be a JSON Schema object",
            ),
            (
                json!([{"name": "a"}, {"name": "a"}]),
                "tool 1: `a` is defined twice",
            ),
        ] {
            let e = definitions(&bad).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        let mut tools =
            vec![json!({"type": "function", "function": {"name": "lookup", "description": "own"}})];
        add_definitions(&mut tools, &defs);
        assert_eq!(tools.len(), 2);
        assert_eq!(
            tools[0]["function"]["description"], "own",
            "the sample's own wins"
        );
        assert_eq!(definition_name(&tools[1]), Some("calculator"));
    }
}
