//! The scripted judge's prompt cache, modelled on vLLM's automatic prefix
//! caching: a prompt is cut into blocks of [`BLOCK`] tokens (its messages
//! in order, each its role, then its content, in the tokens
//! [`approx_tokens`](super::approx_tokens) counts); a block is served from
//! the cache when the prompt's blocks up to and including it are those of
//! a prompt the judge had already answered when this one arrived. The
//! tokens of the blocks served are reported as
//! `usage.prompt_tokens_details.cached_tokens`, as OpenAI and vLLM report
//! them: a shared prefix is cached in whole blocks, and two prompts sent at
//! once share nothing.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::Value;

/// Tokens per cached block (vLLM's default block size).
pub const BLOCK: usize = 16;

/// Blocks remembered; past it, the cache starts afresh.
const KEPT: usize = 1 << 20;

/// Blocks of prompts answered, each as the hash of the prompt up to its end.
#[derive(Default)]
pub struct PromptCache {
    blocks: Mutex<HashSet<u64>>,
}

/// A prompt's blocks: the hash of the prompt up to the end of each whole
/// block, in order.
pub struct Blocks(Vec<u64>);

impl PromptCache {
    /// The cached tokens of a prompt of `messages` arriving now, and its
    /// blocks, to [`answered`](Self::answered) once it is.
    pub fn arrive(&self, messages: &Value) -> (u64, Blocks) {
        let blocks = Blocks(chain(messages));
        let seen = self.lock();
        let cached = blocks.0.iter().take_while(|h| seen.contains(h)).count();
        ((cached * BLOCK) as u64, blocks)
    }

    /// The prompt whose blocks these are was answered: they are cached.
    pub fn answered(&self, blocks: Blocks) {
        let mut seen = self.lock();
        if seen.len() + blocks.0.len() > KEPT {
            seen.clear();
        }
        seen.extend(blocks.0);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        self.blocks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The hash chain of `messages`' whole blocks of tokens.
fn chain(messages: &Value) -> Vec<u64> {
    let mut hashes = Vec::new();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut in_block = 0usize;
    let mut token = |text: &str, h: &mut u64| {
        for b in text.bytes().chain([0xff]) {
            *h = (*h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        in_block += 1;
        if in_block == BLOCK {
            hashes.push(*h);
            in_block = 0;
        }
    };
    for m in messages.as_array().into_iter().flatten() {
        token(m["role"].as_str().unwrap_or(""), &mut h);
        for t in tokens(m["content"].as_str().unwrap_or("")) {
            token(t, &mut h);
        }
    }
    hashes
}

/// The tokens [`approx_tokens`](super::approx_tokens) counts, each with the
/// whitespace before it (so that prompts differing in spaces differ).
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let mut end = i + c.len_utf8();
        if c.is_alphanumeric() {
            while let Some(&(j, d)) = chars.peek() {
                if !d.is_alphanumeric() {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(n: usize, tag: &str) -> String {
        (0..n).map(|i| format!("{tag}{i} ")).collect()
    }

    #[test]
    fn tokens_are_what_the_judge_counts() {
        let text = "Paris, the capital: 2.1 million!";
        assert_eq!(tokens(text).len() as u64, super::super::approx_tokens(text));
    }

    #[test]
    fn a_prefix_answered_before_is_cached_in_whole_blocks() {
        let cache = PromptCache::default();
        let shared = words(40, "c");
        let a = json!([{"role": "system", "content": "rule"}, {"role": "user", "content": format!("{shared} task a")}]);
        let b = json!([{"role": "system", "content": "rule"}, {"role": "user", "content": format!("{shared} task b")}]);
        let (cached, blocks_a) = cache.arrive(&a);
        assert_eq!(cached, 0, "nothing answered yet");
        // Sent at once: b arrives before a is answered.
        let (cached, _) = cache.arrive(&b);
        assert_eq!(cached, 0);
        cache.answered(blocks_a);
        let (cached, _) = cache.arrive(&b);
        // system role + "rule" + user role + 40 words = 43 tokens shared: 2 whole blocks.
        assert_eq!(cached, 32);
        let other = json!([{"role": "system", "content": "other rule"}, {"role": "user", "content": shared}]);
        assert_eq!(
            cache.arrive(&other).0,
            0,
            "a different start shares nothing"
        );
    }
}
