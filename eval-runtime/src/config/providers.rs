//! Which API each model service speaks, and the headers sent to it:
//! `EVAL_JUDGE_PROVIDER`, `EVAL_EMBED_PROVIDER`, `EVAL_AGENT_PROVIDER`
//! (`openai`, `azure`, `anthropic`; unset: from the URL),
//! `EVAL_AZURE_API_VERSION`, and the custom headers `EVAL_JUDGE_HEADERS`,
//! `EVAL_EMBED_HEADERS`, `EVAL_RETRIEVER_HEADERS` (see [`Headers`]).

use super::headers::Headers;
use super::{BadVar, Secret};

/// The API a judge, embeddings server or OpenAI-protocol agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI's chat completions and embeddings, and every server that
    /// copies them (vLLM, Ollama, llama.cpp, LM Studio, llama-cpp-python):
    /// `Authorization: Bearer <key>`.
    #[default]
    OpenAi,
    /// Azure OpenAI: the same bodies, the key in an `api-key` header, and
    /// an `api-version` query on deployment URLs
    /// (`.../openai/deployments/{deployment}/chat/completions`).
    Azure,
    /// Anthropic's Messages API (`POST /v1/messages`, `x-api-key`,
    /// `anthropic-version`), for the judge and agents; it has no
    /// embeddings API.
    Anthropic,
}

/// The `api-version` sent to an Azure deployment URL that names none:
/// the latest GA version of Azure OpenAI's dated data-plane inference API
/// (<https://learn.microsoft.com/azure/ai-services/openai/reference>).
pub const DEFAULT_AZURE_API_VERSION: &str = "2024-10-21";

impl Provider {
    /// `openai`, `azure` or `anthropic` (any case; `azure-openai` too).
    pub fn parse(text: &str) -> Option<Provider> {
        match text.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" => Some(Provider::OpenAi),
            "azure" | "azure-openai" | "azure_openai" => Some(Provider::Azure),
            "anthropic" => Some(Provider::Anthropic),
            _ => None,
        }
    }

    /// Its name in settings.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Azure => "azure",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The provider a URL's host implies: `*.openai.azure.com` (and Azure
    /// AI Foundry's `*.cognitiveservices.azure.com`,
    /// `*.services.ai.azure.com`) → Azure, `api.anthropic.com` →
    /// Anthropic, anything else → OpenAI-compatible.
    pub fn implied_by_url(url: &str) -> Provider {
        let host = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest)
            .split(['/', '?', '#'])
            .next()
            .unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or(host);
        let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
        let host = host.trim_end_matches('.');
        if [
            ".openai.azure.com",
            ".cognitiveservices.azure.com",
            ".services.ai.azure.com",
        ]
        .iter()
        .any(|suffix| host.ends_with(suffix))
        {
            Provider::Azure
        } else if host == "api.anthropic.com" {
            Provider::Anthropic
        } else {
            Provider::OpenAi
        }
    }

    /// `chosen`, else what `url` implies.
    pub fn resolve(chosen: Option<Provider>, url: &str) -> Provider {
        chosen.unwrap_or_else(|| Provider::implied_by_url(url))
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The providers and custom headers of the model services (see the module
/// docs). A provider left unset is implied by the service's URL.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProviderSettings {
    /// `EVAL_JUDGE_PROVIDER`.
    pub judge: Option<Provider>,
    /// `EVAL_EMBED_PROVIDER`.
    pub embed: Option<Provider>,
    /// `EVAL_AGENT_PROVIDER`: what an OpenAI-protocol agent speaks.
    pub agent: Option<Provider>,
    /// `EVAL_AZURE_API_VERSION`: the `api-version` of Azure deployment URLs
    /// that name none (default [`DEFAULT_AZURE_API_VERSION`]).
    pub azure_api_version: Option<String>,
    /// `EVAL_JUDGE_HEADERS`: sent to the judge only.
    pub judge_headers: Headers,
    /// `EVAL_EMBED_HEADERS`: sent to the embeddings server only.
    pub embed_headers: Headers,
    /// `EVAL_RETRIEVER_HEADERS`: sent to the retriever only.
    pub retriever_headers: Headers,
}

/// The variables read here.
pub(super) const VARS: &[&str] = &[
    "EVAL_JUDGE_PROVIDER",
    "EVAL_EMBED_PROVIDER",
    "EVAL_AGENT_PROVIDER",
    "EVAL_AZURE_API_VERSION",
    "EVAL_JUDGE_HEADERS",
    "EVAL_EMBED_HEADERS",
    "EVAL_RETRIEVER_HEADERS",
];

/// The key a service falls back on when its own (`EVAL_JUDGE_API_KEY`,
/// `EVAL_EMBED_API_KEY`) is not set: its provider's usual variable —
/// `OPENAI_API_KEY`, `AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY` — so that
/// one provider's key is never sent to another's server.
pub(super) struct FallbackKeys {
    openai: Option<String>,
    azure: Option<String>,
    anthropic: Option<String>,
}

impl FallbackKeys {
    pub(super) fn get(
        get: &mut impl FnMut(&'static str, bool) -> Option<String>,
        openai: Option<String>,
    ) -> Self {
        FallbackKeys {
            openai,
            azure: get("AZURE_OPENAI_API_KEY", true),
            anthropic: get("ANTHROPIC_API_KEY", true),
        }
    }

    /// `own`, else the key of the provider `chosen` or implied by `url`.
    pub(super) fn key(
        &self,
        own: Option<String>,
        chosen: Option<Provider>,
        url: Option<&str>,
    ) -> Option<Secret> {
        let fallback = || match Provider::resolve(chosen, url.unwrap_or("")) {
            Provider::OpenAi => self.openai.clone(),
            Provider::Azure => self.azure.clone(),
            Provider::Anthropic => self.anthropic.clone(),
        };
        own.or_else(fallback).map(Secret::new)
    }
}

/// The raw values, read with the other settings.
pub(super) struct ProviderVars(Vec<Option<String>>);

impl ProviderVars {
    /// Takes the variables through `get` (name, is-secret).
    pub(super) fn get(get: &mut impl FnMut(&'static str, bool) -> Option<String>) -> Self {
        ProviderVars(
            VARS.iter()
                .map(|var| get(var, var.ends_with("_HEADERS")))
                .collect(),
        )
    }

    /// The settings, a bad value into `bad`.
    pub(super) fn parse(self, bad: &mut Vec<BadVar>) -> ProviderSettings {
        let mut values = self.0.into_iter();
        let mut next = || values.next().flatten();
        fn provider(
            var: &'static str,
            value: Option<String>,
            bad: &mut Vec<BadVar>,
        ) -> Option<Provider> {
            let value = value?;
            let parsed = Provider::parse(&value);
            if parsed.is_none() {
                bad.push(BadVar {
                    var,
                    value,
                    expected: "openai, azure or anthropic (unset: implied by the URL)".into(),
                });
            }
            parsed
        }
        let judge = provider(VARS[0], next(), bad);
        let embed = provider(VARS[1], next(), bad);
        let agent = provider(VARS[2], next(), bad);
        if embed == Some(Provider::Anthropic) {
            bad.push(BadVar {
                var: "EVAL_EMBED_PROVIDER",
                value: "anthropic".into(),
                expected: "openai or azure: Anthropic has no embeddings API (use an OpenAI-compatible embeddings server)".into(),
            });
        }
        let azure_api_version = next().map(|v| v.trim().to_string());
        if let Some(v) = &azure_api_version
            && !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        {
            bad.push(BadVar {
                var: "EVAL_AZURE_API_VERSION",
                value: v.clone(),
                expected: format!(
                    "an API version such as {DEFAULT_AZURE_API_VERSION} or 2025-04-01-preview"
                ),
            });
        }
        let judge_headers = Headers::read(VARS[4], next(), bad);
        let embed_headers = Headers::read(VARS[5], next(), bad);
        let retriever_headers = Headers::read(VARS[6], next(), bad);
        ProviderSettings {
            judge,
            embed,
            agent,
            azure_api_version,
            judge_headers,
            embed_headers,
            retriever_headers,
        }
    }
}

/// What one service's requests need besides its URL and key: its
/// provider (`None`: implied by the URL), custom headers, and the Azure
/// `api-version` for deployment URLs that name none.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServiceWire {
    /// `EVAL_JUDGE_PROVIDER` or `EVAL_EMBED_PROVIDER`.
    pub provider: Option<Provider>,
    /// `EVAL_JUDGE_HEADERS` or `EVAL_EMBED_HEADERS`.
    pub headers: Headers,
    /// `EVAL_AZURE_API_VERSION`, else [`DEFAULT_AZURE_API_VERSION`].
    pub azure_api_version: String,
}

impl Default for ServiceWire {
    fn default() -> Self {
        ServiceWire {
            provider: None,
            headers: Headers::none(),
            azure_api_version: DEFAULT_AZURE_API_VERSION.to_string(),
        }
    }
}

impl ProviderSettings {
    /// The judge's.
    pub fn judge_wire(&self) -> ServiceWire {
        ServiceWire {
            provider: self.judge,
            headers: self.judge_headers.clone(),
            azure_api_version: self.azure_api_version().to_string(),
        }
    }

    /// The embeddings server's.
    pub fn embed_wire(&self) -> ServiceWire {
        ServiceWire {
            provider: self.embed,
            headers: self.embed_headers.clone(),
            azure_api_version: self.azure_api_version().to_string(),
        }
    }

    /// The `api-version` for Azure deployment URLs.
    pub fn azure_api_version(&self) -> &str {
        self.azure_api_version
            .as_deref()
            .unwrap_or(DEFAULT_AZURE_API_VERSION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_implied_by_the_host() {
        for (url, want) in [
            ("https://my-res.openai.azure.com/openai/v1", Provider::Azure),
            (
                "https://user:pw@My-Res.OpenAI.Azure.com:443/openai/deployments/d/chat/completions?api-version=1",
                Provider::Azure,
            ),
            (
                "https://x.cognitiveservices.azure.com/openai/v1",
                Provider::Azure,
            ),
            ("https://api.anthropic.com/v1", Provider::Anthropic),
            ("https://api.anthropic.com", Provider::Anthropic),
            ("https://api.openai.com/v1", Provider::OpenAi),
            ("http://127.0.0.1:11434/v1", Provider::OpenAi),
            // Not fooled by a path or a user name.
            ("http://evil.example/api.anthropic.com", Provider::OpenAi),
            ("http://api.anthropic.com@127.0.0.1/v1", Provider::OpenAi),
            ("https://openai.azure.com.evil.example/v1", Provider::OpenAi),
        ] {
            assert_eq!(Provider::implied_by_url(url), want, "{url}");
        }
        assert_eq!(
            Provider::resolve(Some(Provider::Anthropic), "http://127.0.0.1:1"),
            Provider::Anthropic
        );
        assert_eq!(Provider::parse(" Azure "), Some(Provider::Azure));
        assert_eq!(Provider::parse("bedrock"), None);
    }

    #[test]
    fn bad_settings_are_reported_at_once() {
        let vars = [
            ("EVAL_JUDGE_PROVIDER", "bedrock"),
            ("EVAL_EMBED_PROVIDER", "anthropic"),
            ("EVAL_AGENT_PROVIDER", "anthropic"),
            ("EVAL_AZURE_API_VERSION", "2024 10"),
            ("EVAL_JUDGE_HEADERS", "X-Tenant=acme"),
            ("EVAL_RETRIEVER_HEADERS", "X-Token=abc%0D%0Adef"),
        ];
        let mut get = |name: &'static str, _| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let mut bad = Vec::new();
        let s = ProviderVars::get(&mut get).parse(&mut bad);
        let vars: Vec<&str> = bad.iter().map(|b| b.var).collect();
        assert_eq!(
            vars,
            [
                "EVAL_JUDGE_PROVIDER",
                "EVAL_EMBED_PROVIDER",
                "EVAL_AZURE_API_VERSION",
                "EVAL_RETRIEVER_HEADERS"
            ]
        );
        assert!(bad.iter().all(|b| !b.value.contains("abc")));
        assert_eq!(s.agent, Some(Provider::Anthropic));
        assert_eq!(s.judge_headers.get("x-tenant"), Some("acme"));
        assert_eq!(
            ProviderSettings::default().azure_api_version(),
            "2024-10-21"
        );
    }
}
