//! What a JSON answer may take once parsed (`EVAL_MAX_RESPONSE_BYTES` ×
//! [`PARSED_PER_BYTE`]): the byte limit bounds what is read, this bounds
//! what parsing builds. `[[],[],…]` takes dozens of times its length as
//! values; it is refused before anything is built
//! ([`eval_datasets::json::parse_within`]).

use eval_datasets::json::{BoundedJsonError, parse_within};
use serde_json::Value;

/// The default cap on one answer's body (`EVAL_MAX_RESPONSE_BYTES`): 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 << 20;

/// How many times its byte limit a JSON answer may take once parsed. Real
/// answers take far less (a 16 MiB answer of embeddings ~10 times its
/// length, counted from above); a nested bomb takes 25 to 80 times.
pub(crate) const PARSED_PER_BYTE: u64 = 16;

/// `bytes` parsed as JSON when what the value takes once parsed is within
/// [`PARSED_PER_BYTE`] times `max_response_bytes` (the answer's byte limit);
/// refused, before anything is built, otherwise.
pub(crate) fn reply_json(bytes: &[u8], max_response_bytes: u64) -> Result<Value, BoundedJsonError> {
    let max = max_response_bytes.saturating_mul(PARSED_PER_BYTE);
    parse_within(bytes, usize::try_from(max).unwrap_or(usize::MAX))
}

/// `text` — JSON found inside an answer already read (a tool call's
/// arguments, a streamed event, a judge's or an agent's answer text, a
/// span's attribute) — parsed within what a whole answer of the default
/// limit (or of `text`'s own length, when longer) may take once parsed.
pub(crate) fn inner_json(text: &str) -> Result<Value, BoundedJsonError> {
    reply_json(
        text.as_bytes(),
        DEFAULT_MAX_RESPONSE_BYTES.max(text.len() as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bomb_in_an_answer_or_inside_one_is_refused_and_json_is_parsed() {
        // `[],` over a 1 MiB limit: ~350,000 empty arrays.
        let mut bomb = String::from("[");
        while bomb.len() < 1 << 20 {
            bomb.push_str("[],");
        }
        bomb.push_str("[]]");
        let refused = reply_json(bomb.as_bytes(), 1 << 20).unwrap_err();
        assert!(
            matches!(refused, BoundedJsonError::TooBig { .. }),
            "{refused}"
        );
        // Inside an answer the bound is the default limit's: 1 MiB passes,
        // the same shape at 17 MiB does not.
        assert!(inner_json(&bomb).is_ok());
        let big = format!("[{}[]]", "[],".repeat((17 << 20) / 3));
        assert!(matches!(
            inner_json(&big),
            Err(BoundedJsonError::TooBig { .. })
        ));
        assert_eq!(
            inner_json(r#"{"a": [1]}"#).unwrap(),
            serde_json::json!({"a": [1]})
        );
    }
}
