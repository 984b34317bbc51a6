//! Tokens counted by this client, when a server reports none: a tokenizer
//! (the model's own when `tiktoken-rs` knows it, else `o200k_base`), used
//! by an estimate (`--estimate`) and for a streamed answer that came
//! without a usage chunk ([`estimate_unreported`]).

use serde_json::Value;

use super::wire::AgentReply;

/// A tokenizer: the model's own, or `o200k_base` as an approximation (a
/// character count over 4 without the `tokenizer` feature).
pub(crate) struct Tokenizer {
    #[cfg(feature = "tokenizer")]
    bpe: Option<&'static tiktoken_rs::CoreBPE>,
    pub(crate) name: &'static str,
    pub(crate) exact: bool,
}

impl Tokenizer {
    #[cfg(feature = "tokenizer")]
    pub(crate) fn for_model(model: &str) -> Tokenizer {
        use tiktoken_rs::tokenizer::Tokenizer as T;
        let (kind, exact) = match tiktoken_rs::tokenizer::get_tokenizer(model) {
            Some(kind) => (kind, true),
            None => (T::O200kBase, false),
        };
        let name = match kind {
            T::O200kBase => "o200k_base",
            T::O200kHarmony => "o200k_harmony",
            T::Cl100kBase => "cl100k_base",
            T::P50kBase => "p50k_base",
            T::P50kEdit => "p50k_edit",
            _ => "r50k_base",
        };
        Tokenizer {
            bpe: tiktoken_rs::bpe_for_tokenizer(kind).ok(),
            name,
            exact,
        }
    }

    /// Without the `tokenizer` feature: a token per four characters.
    #[cfg(not(feature = "tokenizer"))]
    pub(crate) fn for_model(_model: &str) -> Tokenizer {
        Tokenizer {
            name: "4 characters per token (built without the `tokenizer` feature: `features = [\"tokenizer\"]` counts exactly)",
            exact: false,
        }
    }

    /// Tokens of `text` (a character count over 4 if the tables failed to
    /// load, or without the `tokenizer` feature).
    pub(crate) fn count(&self, text: &str) -> u64 {
        #[cfg(feature = "tokenizer")]
        if let Some(bpe) = self.bpe {
            return bpe.encode_ordinary(text).len() as u64;
        }
        (text.chars().count() as u64).div_ceil(4)
    }

    /// Prompt tokens of a chat whose messages are `contents`, as OpenAI's
    /// cookbook ("How to count tokens with tiktoken") counts them: 3 per
    /// message plus its role and content, and 3 priming the answer.
    pub(crate) fn chat(&self, contents: &[&str]) -> u64 {
        3 + contents.iter().map(|c| 3 + 1 + self.count(c)).sum::<u64>()
    }
}

/// Counts the tokens of a streamed answer whose server sent no `usage`
/// (llama-cpp-python's server never does when streaming, 0.3.36: its
/// chunks carry `choices` only, whatever `stream_options` says), so that
/// its cost is never a silent $0: the prompt is the request `sent` (its
/// messages as OpenAI's cookbook counts a chat, and its tool definitions'
/// JSON), the completion the answer's text and its tool calls' names and
/// arguments. They are counted with [`Tokenizer::for_model`] of the
/// model the answer names (else the one asked), and marked
/// [`estimated_tokens`](crate::Usage::estimated_tokens). Without the
/// `tokenizer` feature nothing is counted: the reply is marked
/// [`unreported`](crate::Usage::unreported), and the cost of its sample is
/// unknown.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn estimate_unreported(reply: &mut AgentReply, sent: &Value) {
    #[cfg(feature = "tokenizer")]
    {
        let model = reply
            .model
            .as_deref()
            .or_else(|| sent.get("model").and_then(Value::as_str))
            .unwrap_or("");
        let tokenizer = Tokenizer::for_model(model);
        let prompt = prompt_tokens(&tokenizer, sent);
        let mut completion = tokenizer.count(&reply.output);
        for call in &reply.tool_calls {
            let arguments = match &call.invalid_arguments {
                Some(bad) => bad.raw.clone(),
                None => Value::Object(call.arguments.clone()).to_string(),
            };
            completion = completion
                .saturating_add(tokenizer.count(&call.name))
                .saturating_add(tokenizer.count(&arguments));
        }
        reply.usage.prompt_tokens = prompt;
        reply.usage.completion_tokens = completion;
        reply.usage.cached_tokens = 0;
        reply.usage.estimated_tokens = prompt.saturating_add(completion);
    }
    #[cfg(not(feature = "tokenizer"))]
    {
        let _ = sent;
        reply.usage.unreported = 1;
    }
}

/// What a judge's or embeddings server's reply without `usage` counts
/// as, so that its cost is never a silent $0: its tokens estimated from
/// the request `sent` (a chat's messages, an embeddings request's
/// `input`) and the `answer` text, with the tokenizer of `sent`'s model,
/// marked estimated; without the `tokenizer` feature, unreported (the
/// sample's cost is then unknown).
pub(crate) fn unreported_reply(sent: &Value, answer: &str) -> crate::model::Reported {
    #[cfg(feature = "tokenizer")]
    {
        let model = sent.get("model").and_then(Value::as_str).unwrap_or("");
        let tokenizer = Tokenizer::for_model(model);
        let prompt = match sent.get("input") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(|text| tokenizer.count(text))
                .fold(0u64, u64::saturating_add),
            _ => prompt_tokens(&tokenizer, sent),
        };
        crate::model::Reported {
            prompt,
            completion: tokenizer.count(answer),
            cached: 0,
            estimated: true,
            unreported: false,
        }
    }
    #[cfg(not(feature = "tokenizer"))]
    {
        let _ = (sent, answer);
        crate::model::Reported {
            unreported: true,
            ..crate::model::Reported::default()
        }
    }
}

/// The prompt tokens of a request body: its `messages` (each one's text,
/// or the JSON of what it holds instead) counted as a chat, else its
/// `input`; plus its `tools`' JSON.
#[cfg(feature = "tokenizer")]
fn prompt_tokens(tokenizer: &Tokenizer, sent: &Value) -> u64 {
    let mut texts: Vec<String> = Vec::new();
    match sent.get("messages").and_then(Value::as_array) {
        Some(messages) => {
            for m in messages {
                let mut text = match m.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    None | Some(Value::Null) => String::new(),
                    Some(other) => other.to_string(),
                };
                if let Some(calls) = m.get("tool_calls").filter(|c| !c.is_null()) {
                    text.push_str(&calls.to_string());
                }
                texts.push(text);
            }
        }
        None => {
            if let Some(input) = sent.get("input").and_then(Value::as_str) {
                texts.push(input.to_string());
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tools = match sent.get("tools") {
        Some(tools @ Value::Array(list)) if !list.is_empty() => tokenizer.count(&tools.to_string()),
        _ => 0,
    };
    tokenizer.chat(&refs).saturating_add(tools)
}

#[cfg(all(test, feature = "tokenizer"))]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_without_usage_is_counted_from_its_text() {
        let mut reply = AgentReply::new("Hello world", Vec::new());
        reply
            .tool_calls
            .push(eval_datasets::ToolCall::new("lookup").with_invalid_arguments("{\"q\": ", "EOF"));
        let sent = json!({"model": "gpt-4o", "messages": [
            {"role": "user", "content": "Say hello world"},
        ]});
        estimate_unreported(&mut reply, &sent);
        let t = Tokenizer::for_model("gpt-4o");
        // The cookbook's chat: 3 + (3 + 1 + tokens of the content).
        assert_eq!(
            reply.usage.prompt_tokens,
            3 + 4 + t.count("Say hello world")
        );
        assert_eq!(
            reply.usage.completion_tokens,
            t.count("Hello world") + t.count("lookup") + t.count("{\"q\": ")
        );
        assert!(reply.usage.completion_tokens >= 4);
        assert_eq!(reply.usage.estimated_tokens, reply.usage.tokens());
        assert_eq!(reply.usage.unreported, 0);
    }
}
