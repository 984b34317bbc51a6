//! Settings that are plain data, shared by the configuration and the
//! layers it configures.

use serde::Serialize;

/// Sampling settings sent with OpenAI requests, when set
/// (`EVAL_AGENT_TEMPERATURE`, `_TOP_P`, `_MAX_TOKENS`, `_SEED`, or
/// [`HttpAgent`](crate::HttpAgent)'s builder); a sample's `agent_args` may
/// override each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Sampling {
    /// `temperature` (0–2).
    pub temperature: Option<f64>,
    /// `top_p` (0–1).
    pub top_p: Option<f64>,
    /// `max_tokens`: the most tokens of the answer.
    pub max_tokens: Option<u64>,
    /// `seed`: for servers that sample deterministically with one.
    pub seed: Option<i64>,
}

impl Sampling {
    /// The parameters that are set, as request keys.
    #[cfg(feature = "http")]
    pub(crate) fn insert_into(&self, body: &mut serde_json::Map<String, serde_json::Value>) {
        use serde_json::json;
        if let Some(t) = self.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = self.top_p {
            body.insert("top_p".into(), json!(p));
        }
        if let Some(n) = self.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        if let Some(s) = self.seed {
            body.insert("seed".into(), json!(s));
        }
    }
}

/// What a cassette does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CassetteMode {
    /// Call the agent and store its answers.
    Record,
    /// Answer from the cassette; never call the agent.
    Replay,
}

impl CassetteMode {
    /// `record` or `replay`.
    pub fn name(self) -> &'static str {
        match self {
            CassetteMode::Record => "record",
            CassetteMode::Replay => "replay",
        }
    }
}
