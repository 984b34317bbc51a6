//! How an HTTP agent is spoken to: the protocol names every front end
//! accepts (`EVAL_AGENT_PROTOCOL`, `--protocol`, a manifest's
//! `spec.evaluation.agent.protocol`) and the agent settings a manifest may
//! give. The HTTP client itself is `eval_runtime::HttpAgent`.

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

/// The wire protocol of an HTTP agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// This project's JSON contract: `{"input", "messages", "agent_args"}`
    /// in, `{"output", "context"}` out (the default).
    #[default]
    Json,
    /// OpenAI chat completions: `{"model", "messages", "tools", ...}` in,
    /// `choices[0].message` (`content`, `tool_calls`) and `usage` out.
    #[serde(rename = "openai")]
    OpenAi,
}

impl Protocol {
    /// The names accepted, as settings spell them.
    pub const NAMES: &'static [&'static str] = &["json", "openai"];

    /// `json` or `openai` (ASCII case and surrounding spaces ignored).
    pub fn parse(name: &str) -> Option<Protocol> {
        match name.trim().to_ascii_lowercase().as_str() {
            "json" => Some(Protocol::Json),
            "openai" => Some(Protocol::OpenAi),
            _ => None,
        }
    }

    /// The name settings use.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Json => "json",
            Protocol::OpenAi => "openai",
        }
    }

    /// The protocol a URL path implies when none is chosen: OpenAI for a
    /// path ending in `/chat/completions` (a trailing `/` ignored), else the
    /// JSON contract.
    pub fn implied_by_path(path: &str) -> Protocol {
        if path.trim_end_matches('/').ends_with("/chat/completions") {
            Protocol::OpenAi
        } else {
            Protocol::Json
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a manifest (`spec.evaluation.agent`) or a command line says about
/// the agent; `None`: not said (the next source decides).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AgentSettings {
    /// `protocol: json | openai`.
    pub protocol: Option<Protocol>,
    /// `model`: the `model` of OpenAI requests.
    pub model: Option<String>,
    /// `stream: true`: ask for a streamed answer.
    pub stream: Option<bool>,
}

impl AgentSettings {
    /// Settings with these values.
    pub fn new(protocol: Option<Protocol>, model: Option<String>, stream: Option<bool>) -> Self {
        AgentSettings {
            protocol,
            model,
            stream,
        }
    }

    /// Whether nothing is said.
    pub fn is_empty(&self) -> bool {
        self.protocol.is_none() && self.model.is_none() && self.stream.is_none()
    }

    /// These settings, with `other`'s where these say nothing.
    pub fn or(self, other: &AgentSettings) -> AgentSettings {
        AgentSettings {
            protocol: self.protocol.or(other.protocol),
            model: self.model.or_else(|| other.model.clone()),
            stream: self.stream.or(other.stream),
        }
    }
}

/// A manifest's `spec.evaluation.agent`, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAgent {
    protocol: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    stream: Option<bool>,
}

impl RawAgent {
    /// The settings; each bad value is reported through `problem(line,
    /// message, field)` and left unset.
    pub(crate) fn settings(self, problem: &mut dyn FnMut(u32, String, &str)) -> AgentSettings {
        let protocol = self.protocol.and_then(|p| {
            let parsed = Protocol::parse(&p.value);
            if parsed.is_none() {
                problem(
                    p.referenced.line() as u32,
                    format!(
                        "`agent.protocol: {}`: expected one of {}",
                        p.value,
                        Protocol::NAMES.join(", ")
                    ),
                    "protocol",
                );
            }
            parsed
        });
        let model = self.model.and_then(|m| {
            if m.value.trim().is_empty() {
                problem(
                    m.referenced.line() as u32,
                    "`agent.model` is empty: name the model the agent serves, or leave it out"
                        .into(),
                    "model",
                );
                return None;
            }
            Some(m.value.trim().to_string())
        });
        AgentSettings::new(protocol, model, self.stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_urls_imply() {
        assert_eq!(Protocol::parse(" OpenAI "), Some(Protocol::OpenAi));
        assert_eq!(Protocol::parse("json"), Some(Protocol::Json));
        assert_eq!(Protocol::parse("grpc"), None);
        assert_eq!(
            Protocol::implied_by_path("/v1/chat/completions"),
            Protocol::OpenAi
        );
        assert_eq!(
            Protocol::implied_by_path("/v1/chat/completions/"),
            Protocol::OpenAi
        );
        assert_eq!(Protocol::implied_by_path("/v1/respond"), Protocol::Json);
        assert_eq!(Protocol::implied_by_path("/completions"), Protocol::Json);
        let manifest = AgentSettings::new(Some(Protocol::OpenAi), Some("m".into()), None);
        let flags = AgentSettings::new(None, Some("flag".into()), Some(true));
        assert_eq!(
            flags.or(&manifest),
            AgentSettings::new(Some(Protocol::OpenAi), Some("flag".into()), Some(true))
        );
    }
}
