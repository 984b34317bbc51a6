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
        format!("{}({})", self.name, args.join(", "))
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
}
