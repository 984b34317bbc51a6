//! How one variable's value is read: durations, sizes, and how the agent
//! is spoken to.

use std::time::Duration;

use super::BadVar;

/// How the agent is spoken to, as the `EVAL_AGENT_*` variables give it
/// (`PROTOCOL`, `MODEL`, `STREAM`, and the sampling settings), before it is
/// checked.
pub(super) struct AgentSpeech {
    protocol: Option<String>,
    model: Option<String>,
    stream: Option<String>,
    temperature: Option<String>,
    top_p: Option<String>,
    max_tokens: Option<String>,
    seed: Option<String>,
}

impl AgentSpeech {
    pub(super) fn get(get: &mut impl FnMut(&'static str, bool) -> Option<String>) -> Self {
        AgentSpeech {
            protocol: get("EVAL_AGENT_PROTOCOL", false),
            model: get("EVAL_AGENT_MODEL", false),
            stream: get("EVAL_AGENT_STREAM", false),
            temperature: get("EVAL_AGENT_TEMPERATURE", false),
            top_p: get("EVAL_AGENT_TOP_P", false),
            max_tokens: get("EVAL_AGENT_MAX_TOKENS", false),
            seed: get("EVAL_AGENT_SEED", false),
        }
    }

    /// The checked values; each bad one is pushed onto `bad`.
    pub(super) fn parse(
        self,
        bad: &mut Vec<BadVar>,
    ) -> (
        Option<eval_datasets::Protocol>,
        Option<String>,
        bool,
        crate::model::Sampling,
    ) {
        let mut check = |var: &'static str, value: Option<String>, ok: bool, expected: &str| {
            if let (false, Some(value)) = (ok, value) {
                bad.push(BadVar {
                    var,
                    value,
                    expected: expected.into(),
                });
            }
        };
        let protocol = self.protocol.as_deref().map(eval_datasets::Protocol::parse);
        check(
            "EVAL_AGENT_PROTOCOL",
            self.protocol.clone(),
            protocol.is_none_or(|p| p.is_some()),
            "json (the JSON contract) or openai (OpenAI chat completions)",
        );
        let stream = self
            .stream
            .as_deref()
            .map(|v| match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Some(true),
                "0" | "false" | "no" | "off" => Some(false),
                _ => None,
            });
        check(
            "EVAL_AGENT_STREAM",
            self.stream.clone(),
            stream.is_none_or(|s| s.is_some()),
            "on or off (1/0, true/false, yes/no)",
        );
        let number = |v: &Option<String>, range: std::ops::RangeInclusive<f64>| {
            v.as_deref()
                .map(|v| v.trim().parse::<f64>().ok().filter(|x| range.contains(x)))
        };
        let temperature = number(&self.temperature, 0.0..=2.0);
        check(
            "EVAL_AGENT_TEMPERATURE",
            self.temperature.clone(),
            temperature.is_none_or(|t| t.is_some()),
            "a number from 0 to 2",
        );
        let top_p = number(&self.top_p, 0.0..=1.0);
        check(
            "EVAL_AGENT_TOP_P",
            self.top_p.clone(),
            top_p.is_none_or(|t| t.is_some()),
            "a number from 0 to 1",
        );
        let max_tokens = self.max_tokens.as_deref().map(|v| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=10_000_000).contains(n))
        });
        check(
            "EVAL_AGENT_MAX_TOKENS",
            self.max_tokens.clone(),
            max_tokens.is_none_or(|n| n.is_some()),
            "a whole number from 1 to 10000000",
        );
        let seed = self.seed.as_deref().map(|v| v.trim().parse::<i64>().ok());
        check(
            "EVAL_AGENT_SEED",
            self.seed.clone(),
            seed.is_none_or(|s| s.is_some()),
            "a whole number (64-bit)",
        );
        let sampling = crate::model::Sampling {
            temperature: temperature.flatten(),
            top_p: top_p.flatten(),
            max_tokens: max_tokens.flatten(),
            seed: seed.flatten(),
        };
        (
            protocol.flatten(),
            self.model.map(|m| m.trim().to_string()),
            stream.flatten().unwrap_or(false),
            sampling,
        )
    }
}

/// A number of seconds between 1 ms and 10^9 s.
pub(crate) fn parse_secs(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    if !(0.001..=1e9).contains(&secs) {
        return None;
    }
    Duration::try_from_secs_f64(secs).ok()
}

/// A size in bytes: a whole number, optionally with `KiB`/`MiB`/`GiB` (or
/// `K`/`M`/`G`, powers of 1024).
pub(crate) fn parse_bytes(value: &str) -> Option<u64> {
    let v = value.trim();
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (number, unit) = v.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// `n` bytes the way a person writes them: `16MiB`, `1KiB`, `1 byte`.
pub(super) fn shown_size(n: u64) -> String {
    match n {
        u64::MAX => "any size".into(),
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{}GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}KiB", n >> 10),
        1 => "1 byte".into(),
        n => format!("{n} bytes"),
    }
}
