//! The JSON contract's answer: `{"output", "context"}`, or an OpenAI
//! chat-completions body.

use serde_json::Value;

use super::openai;
use super::wire::{AgentReply, read_context};
use crate::model::{ReplyError, one_line};

/// Reads `{"output", "context"}` or an OpenAI chat-completions body (its
/// tool calls, usage and model too).
pub fn default_reply(value: &Value) -> std::result::Result<AgentReply, ReplyError> {
    let Value::Object(map) = value else {
        return Err(ReplyError::NotObject {
            found: one_line(&value.to_string(), 80),
        });
    };
    let output = match map.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(ReplyError::OutputNotString {
                found: one_line(&other.to_string(), 80),
            });
        }
        None if map.contains_key("choices") => return openai::parse_reply(value),
        None => {
            return Err(ReplyError::NoOutput {
                keys: map.keys().cloned().collect(),
            });
        }
    };
    let context = match map.get("context") {
        None => Vec::new(),
        Some(c) => read_context(c)?,
    };
    Ok(AgentReply::new(output, context))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_default_and_openai_bodies() {
        let r = default_reply(&json!({"output": "hi", "context": ["a", {"text": "b"}]})).unwrap();
        assert_eq!(r.output, "hi");
        assert_eq!(r.context, vec!["a", "b"]);
        let r = default_reply(
            &json!({"choices": [{"message": {"role": "assistant", "content": "yo"}}]}),
        )
        .unwrap();
        assert_eq!(r.output, "yo");
        let e = default_reply(&json!({"answer": "x"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("found keys: answer"), "{e}");
        let e = default_reply(&json!({"output": 3}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a string"), "{e}");
    }
}
