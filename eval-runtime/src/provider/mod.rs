//! The model APIs the judge, embeddings and OpenAI-protocol agents speak
//! besides OpenAI's own ([`Provider`]): where a request goes, how it is
//! authenticated, how its body and answer are translated, and how an error
//! body is read into one line.
//!
//! The judge and the agent build OpenAI chat-completions bodies and read
//! OpenAI-shaped answers whatever the provider: this module translates at
//! the edge.
//!
//! * **OpenAI** and OpenAI-compatible servers: `Authorization: Bearer`.
//! * **Azure OpenAI** (REST reference:
//!   <https://learn.microsoft.com/azure/ai-services/openai/reference>; the
//!   v1 API: <https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle>;
//!   as openai-python 3.57.0's `lib/azure.py` sends it): the key in an
//!   `api-key` header; deployment URLs
//!   (`/openai/deployments/{deployment}/chat/completions`) get
//!   `?api-version=` ([`DEFAULT_AZURE_API_VERSION`] unless
//!   `EVAL_AZURE_API_VERSION` or the URL says); v1 URLs
//!   (`/openai/v1/chat/completions`, the deployment as `model`) need none;
//!   a bare resource URL becomes a v1 URL. Errors:
//!   `{"error": {"code", "message"}}`.
//! * **Anthropic** Messages API, version `2023-06-01` (see [`anthropic`]).
//!
//! Custom headers (`EVAL_*_HEADERS`) go with every request to that one
//! service (redirects never leave its origin, see [`crate::http`]); a
//! custom header named like one set here (`Authorization`, `api-key`,
//! `x-api-key`, `anthropic-version`) replaces it.

pub(crate) mod anthropic;

use serde_json::Value;

use crate::config::{Headers, Provider, Secret};
use crate::model::one_line;

/// How requests to one service are addressed and authenticated.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Wire {
    pub(crate) provider: Provider,
    pub(crate) headers: Headers,
}

impl Wire {
    /// `provider` with `headers`.
    pub(crate) fn new(provider: Provider, headers: Headers) -> Wire {
        Wire { provider, headers }
    }

    /// `url` as this provider wants it, for a service whose OpenAI path is
    /// `path` (`chat/completions`, `embeddings`): the path appended unless
    /// the URL ends with it (Anthropic: `messages`, after `/v1` when the URL
    /// has no path); Azure's `api-version` added to a deployment URL without
    /// one. A query already in the URL stays.
    pub(crate) fn locate(
        &self,
        mut url: reqwest::Url,
        path: &str,
        api_version: &str,
    ) -> Result<reqwest::Url, String> {
        let current = url.path().trim_end_matches('/').to_string();
        let path = match self.provider {
            Provider::Anthropic if path == "chat/completions" => "messages",
            Provider::Anthropic => {
                return Err(format!(
                    "Anthropic has no `{path}` API (its Messages API serves the judge and agents only): point this service at an OpenAI-compatible server"
                ));
            }
            _ => path,
        };
        if !current.ends_with(path) {
            let prefix = match self.provider {
                Provider::Anthropic if current.is_empty() => "/v1",
                Provider::Azure if current.is_empty() => "/openai/v1",
                Provider::Azure if current.ends_with("/openai") => "/v1",
                _ => "",
            };
            url.set_path(&format!("{current}{prefix}/{path}"));
        }
        if self.provider == Provider::Azure
            && url.path().contains("/openai/deployments/")
            && !url.query_pairs().any(|(k, _)| k == "api-version")
        {
            url.query_pairs_mut()
                .append_pair("api-version", api_version);
        }
        Ok(url)
    }

    /// An agent's URL as Azure and Anthropic want it: [`locate`](Self::locate)d
    /// for `chat/completions`; `None` for an OpenAI-compatible agent, whose
    /// URL is used as given.
    pub(crate) fn agent_url(&self, url: &reqwest::Url, version: &str) -> Option<reqwest::Url> {
        if self.provider == Provider::OpenAi {
            return None;
        }
        self.locate(url.clone(), "chat/completions", version).ok()
    }

    /// An agent's error answer on one line: Azure's and Anthropic's error
    /// objects read ([`error_reason`]), another body as `shown`; for an
    /// OpenAI-protocol agent, what to set when its model is not served.
    pub(crate) fn agent_error(
        &self,
        openai_protocol: bool,
        status: u16,
        bytes: &[u8],
        model: &str,
        shown: String,
    ) -> String {
        let shown = match self.provider {
            Provider::OpenAi => shown,
            _ => error_reason(bytes),
        };
        if !openai_protocol {
            return shown;
        }
        match model_hint(status, &error_reason(bytes), model, "EVAL_AGENT_MODEL") {
            Some(hint) => format!("{shown} — {hint}"),
            None => shown,
        }
    }

    /// `request` with the provider's authentication (`key`), its version
    /// header, then the custom headers (one named like ours replaces it).
    pub(crate) fn authorize(
        &self,
        mut request: reqwest::RequestBuilder,
        key: Option<&Secret>,
    ) -> Result<reqwest::RequestBuilder, &'static str> {
        let ours = |name: &str| !self.headers.contains(name);
        if let Some(key) = key {
            let (name, value) = match self.provider {
                Provider::OpenAi => ("authorization", crate::http::bearer(key.expose())?),
                Provider::Azure => ("api-key", sensitive(key.expose())?),
                Provider::Anthropic => ("x-api-key", sensitive(key.expose())?),
            };
            if ours(name) {
                request = request.header(name, value);
            }
        }
        if self.provider == Provider::Anthropic && ours("anthropic-version") {
            request = request.header("anthropic-version", anthropic::VERSION);
        }
        Ok(self.headers.apply(request))
    }

    /// The body to send for an OpenAI chat-completions `body` (embeddings
    /// bodies are the same everywhere).
    pub(crate) fn request(&self, body: &Value, chat: bool) -> Result<Value, String> {
        match self.provider {
            Provider::Anthropic if chat => anthropic::request(body),
            _ => Ok(body.clone()),
        }
    }

    /// The answer, OpenAI-shaped.
    pub(crate) fn answer(&self, value: Value, chat: bool) -> Result<Value, String> {
        match self.provider {
            Provider::Anthropic if chat => anthropic::to_chat(&value),
            _ => Ok(value),
        }
    }
}

/// `url` with `api-version=version` added when `provider` is Azure and it
/// is a deployment URL without one (unchanged otherwise, or when it is not
/// a URL: the caller reports that).
pub(crate) fn with_api_version(url: &str, provider: Provider, version: &str) -> String {
    match reqwest::Url::parse(url.trim()) {
        Ok(mut parsed)
            if provider == Provider::Azure
                && parsed.path().contains("/openai/deployments/")
                && !parsed.query_pairs().any(|(k, _)| k == "api-version") =>
        {
            parsed.query_pairs_mut().append_pair("api-version", version);
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// A header value never printed (`Debug` of the request hides it).
fn sensitive(key: &str) -> Result<reqwest::header::HeaderValue, &'static str> {
    let mut value = reqwest::header::HeaderValue::from_str(key)
        .map_err(|_| "it holds characters not allowed in an HTTP header (a newline?)")?;
    value.set_sensitive(true);
    Ok(value)
}

/// An error body read into one line, keys masked: OpenAI's and Azure's
/// `{"error": {"code", "message"}}`, Anthropic's `{"type": "error",
/// "error": {"type", "message"}}`, Ollama's and LM Studio's
/// `{"error": "..."}`, vLLM's `{"message", "type"}`, FastAPI's
/// (llama-cpp-python) `{"detail": "..."}` or `{"detail": [{"msg"}]}`;
/// anything else as it is, cut.
pub(crate) fn error_reason(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return "(empty body)".into();
    }
    let reason = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| reason_of(&v))
        .unwrap_or_else(|| text.into_owned());
    one_line(&reason, 300)
}

fn reason_of(v: &Value) -> Option<String> {
    fn str_of(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    if let Some(error) = v.get("error") {
        if let Some(s) = error.as_str() {
            return Some(s.to_string());
        }
        let message = str_of(error.get("message"))?;
        let code = str_of(error.get("code")).or_else(|| str_of(error.get("type")));
        return Some(match code {
            Some(code) => format!("{code}: {message}"),
            None => message.to_string(),
        });
    }
    if let Some(detail) = v.get("detail") {
        return Some(match detail {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .map(|i| {
                    let at = i.get("loc").map(|l| format!("{l}: ")).unwrap_or_default();
                    format!(
                        "{at}{}",
                        str_of(i.get("msg")).map_or_else(|| i.to_string(), str::to_string)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        });
    }
    let message = str_of(v.get("message"))?;
    Some(match str_of(v.get("type")) {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_string(),
    })
}

/// When `reason` (an error read by [`error_reason`], HTTP `status`) says
/// the server does not serve the model asked: what to set, and each local
/// server's naming rule.
pub(crate) fn model_hint(status: u16, reason: &str, model: &str, var: &str) -> Option<String> {
    let lower = reason.to_ascii_lowercase();
    let about_model = lower.contains("model") || lower.contains("deployment");
    let missing = [
        "not found",
        "does not exist",
        "not exist",
        "no such",
        "unknown",
        "not available",
        "notfound",
        "not loaded",
    ]
    .iter()
    .any(|m| lower.contains(m));
    if !(about_model && missing && matches!(status, 400 | 404 | 422 | 500)) {
        return None;
    }
    Some(format!(
        "the server does not serve the model `{model}`: set {var} to one it serves (Ollama: a pulled tag such as llama3.2:1b, see `ollama list`; vLLM: its --served-model-name; llama.cpp's llama-server and LM Studio: an id GET /v1/models lists; Azure deployment URLs: the deployment's name)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(p: Provider) -> Wire {
        Wire::new(p, Headers::none())
    }

    fn at(p: Provider, url: &str, path: &str) -> String {
        wire(p)
            .locate(reqwest::Url::parse(url).unwrap(), path, "2024-10-21")
            .map(|u| u.to_string())
            .unwrap_or_else(|e| e)
    }

    #[test]
    fn each_provider_has_its_urls() {
        use Provider::*;
        for (p, url, path, want) in [
            (
                OpenAi,
                "http://127.0.0.1:1/v1",
                "chat/completions",
                "http://127.0.0.1:1/v1/chat/completions",
            ),
            (
                Azure,
                "https://r.openai.azure.com/openai/v1/",
                "chat/completions",
                "https://r.openai.azure.com/openai/v1/chat/completions",
            ),
            (
                Azure,
                "https://r.openai.azure.com",
                "embeddings",
                "https://r.openai.azure.com/openai/v1/embeddings",
            ),
            (
                Azure,
                "https://r.openai.azure.com/openai/deployments/gpt-4o/chat/completions",
                "chat/completions",
                "https://r.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
            ),
            (
                Azure,
                "https://r.openai.azure.com/openai/deployments/emb?api-version=2025-04-01-preview",
                "embeddings",
                "https://r.openai.azure.com/openai/deployments/emb/embeddings?api-version=2025-04-01-preview",
            ),
            (
                Anthropic,
                "https://api.anthropic.com",
                "chat/completions",
                "https://api.anthropic.com/v1/messages",
            ),
            (
                Anthropic,
                "https://api.anthropic.com/v1",
                "chat/completions",
                "https://api.anthropic.com/v1/messages",
            ),
            (
                Anthropic,
                "http://127.0.0.1:1/v1/messages",
                "chat/completions",
                "http://127.0.0.1:1/v1/messages",
            ),
        ] {
            assert_eq!(at(p, url, path), want, "{p} {url}");
        }
        assert!(
            at(Anthropic, "https://api.anthropic.com", "embeddings")
                .contains("no `embeddings` API")
        );
    }

    #[test]
    fn error_bodies_are_read_in_every_shape() {
        for (body, want) in [
            (
                r#"{"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource does not exist."}}"#,
                "DeploymentNotFound: The API deployment for this resource does not exist.",
            ),
            (
                r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_1"}"#,
                "overloaded_error: Overloaded",
            ),
            (
                r#"{"error": "model \"llama3\" not found, try pulling it first"}"#,
                "model \"llama3\" not found, try pulling it first",
            ),
            (
                r#"{"object": "error", "message": "The model `x` does not exist.", "type": "NotFoundError", "code": 404}"#,
                "NotFoundError: The model `x` does not exist.",
            ),
            (r#"{"detail": "Model not found"}"#, "Model not found"),
            (
                r#"{"detail": [{"loc": ["body", "messages"], "msg": "field required", "type": "value_error.missing"}]}"#,
                r#"["body","messages"]: field required"#,
            ),
            ("line one\nline two", "line one line two"),
            ("  ", "(empty body)"),
        ] {
            assert_eq!(error_reason(body.as_bytes()), want);
        }
        assert!(
            model_hint(
                404,
                "model \"llama3\" not found, try pulling it first",
                "llama3",
                "EVAL_JUDGE_MODEL"
            )
            .unwrap()
            .contains("set EVAL_JUDGE_MODEL")
        );
        assert!(
            model_hint(
                404,
                "DeploymentNotFound: The API deployment for this resource does not exist.",
                "d",
                "V"
            )
            .is_some()
        );
        assert!(model_hint(500, "internal error", "m", "V").is_none());
        assert!(model_hint(401, "model not found", "m", "V").is_none());
    }
}
