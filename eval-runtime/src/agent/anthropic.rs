//! Agents behind Anthropic's Messages API (`EVAL_AGENT_PROVIDER=anthropic`,
//! or an `api.anthropic.com` URL): the request is the OpenAI one
//! ([`openai`](super::openai)) translated, the answer translated back and
//! read as an OpenAI answer — text, tool calls (`tool_use` blocks),
//! usage with cached tokens, model. See [`crate::provider`] for the
//! translation and the wire format (API version `2023-06-01`).
//!
//! Not streamed: a streamed Anthropic answer (its own event types) is not
//! read, so `EVAL_AGENT_STREAM` is refused with this provider.

use serde_json::Value;

use super::openai::{self, Sampling};
use super::wire::{AgentReply, AgentRequest};

/// The Messages API body for `request`.
pub(crate) fn request_body(
    request: &AgentRequest<'_>,
    model: &str,
    sampling: &Sampling,
) -> Result<Value, String> {
    let body = openai::request_body(request, model, sampling, false)?;
    crate::provider::anthropic::request(&body)
}

/// Reads a Messages API answer.
pub(crate) fn parse_reply(value: &Value) -> Result<AgentReply, String> {
    let chat = crate::provider::anthropic::to_chat(value)?;
    openai::parse_reply(&chat).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_use_answers_become_tool_calls() {
        let r = parse_reply(&json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_01", "name": "calculator", "input": {"expression": "2 + 3"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        }))
        .unwrap();
        assert_eq!(
            r.tool_calls[0].display(),
            r#"calculator(expression="2 + 3")"#
        );
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("toolu_01"));
        assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (12, 7));
        assert_eq!(r.model.as_deref(), Some("claude-sonnet-4-5"));
    }
}
