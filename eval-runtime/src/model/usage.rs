//! What a sample or a run used: calls, retries, tokens, cache hits.

use serde::Serialize;

/// Calls made, retries, re-asks, tokens and cache hits, for one sample or a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// HTTP calls made.
    pub calls: u32,
    /// Calls repeated after a 429/5xx or a connection failure.
    pub retries: u32,
    /// Judge answers re-asked because they could not be used (not JSON, no message, wrong shape).
    pub reasks: u32,
    /// Prompt tokens reported by the server.
    pub prompt_tokens: u64,
    /// Completion tokens reported by the server.
    pub completion_tokens: u64,
    /// Answers served from the cache (no call).
    pub cache_hits: u32,
}

impl Usage {
    /// Nothing used.
    pub const ZERO: Usage = Usage {
        calls: 0,
        retries: 0,
        reasks: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cache_hits: 0,
    };

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: Usage) {
        self.calls += other.calls;
        self.retries += other.retries;
        self.reasks += other.reasks;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cache_hits += other.cache_hits;
    }
}
