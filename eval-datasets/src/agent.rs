//! How an HTTP agent is spoken to: the protocol names every front end
//! accepts (`EVAL_AGENT_PROTOCOL`, `--protocol`, a manifest's
//! `spec.evaluation.agent.protocol`) and the agent settings a manifest may
//! give, among them how any HTTP agent's request is built and its answer
//! read ([`HttpMapping`]: a request [`Template`], [`ResponsePath`]s). The
//! HTTP client itself is `eval_runtime::HttpAgent`.

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

mod header;
mod mapping;
mod path;
mod template;

pub use header::{HeaderError, check_header};
pub use mapping::{
    Header, HttpMapping, Method, Named, read_method, read_path, read_query, read_template,
};
pub use path::{PathError, PathMiss, ResponsePath};
pub use template::{Template, TemplateError, TemplateVars};

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
    /// `request`, `method`, `query`, `headers`, `output`, `context`,
    /// `toolCalls`, `usage`: how any HTTP agent is spoken to (never
    /// serialized: header values are credentials).
    #[serde(skip)]
    pub http: HttpMapping,
}

impl AgentSettings {
    /// Settings with these values.
    pub fn new(protocol: Option<Protocol>, model: Option<String>, stream: Option<bool>) -> Self {
        AgentSettings {
            protocol,
            model,
            stream,
            http: HttpMapping::default(),
        }
    }

    /// These settings with `http` as the request and answer mapping.
    pub fn with_http(mut self, http: HttpMapping) -> Self {
        self.http = http;
        self
    }

    /// Whether nothing is said.
    pub fn is_empty(&self) -> bool {
        self.protocol.is_none()
            && self.model.is_none()
            && self.stream.is_none()
            && self.http.is_empty()
    }

    /// These settings, with `other`'s where these say nothing.
    pub fn or(self, other: &AgentSettings) -> AgentSettings {
        AgentSettings {
            protocol: self.protocol.or(other.protocol),
            model: self.model.or_else(|| other.model.clone()),
            stream: self.stream.or(other.stream),
            http: self.http.or(&other.http),
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
    request: Option<Spanned<serde_json::Value>>,
    method: Option<Spanned<String>>,
    query: Option<Spanned<serde_json::Value>>,
    headers: Option<Spanned<serde_json::Value>>,
    output: Option<Spanned<String>>,
    context: Option<Spanned<String>>,
    #[serde(rename = "toolCalls")]
    tool_calls: Option<Spanned<String>>,
    usage: Option<Spanned<RawUsage>>,
}

/// A manifest's `agent.usage`: where the token counts are in an answer.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUsage {
    #[serde(rename = "promptTokens")]
    prompt_tokens: Option<Spanned<String>>,
    #[serde(rename = "completionTokens")]
    completion_tokens: Option<Spanned<String>>,
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
        let http = raw_mapping(
            RawMapping {
                request: self.request,
                method: self.method,
                query: self.query,
                headers: self.headers,
                output: self.output,
                context: self.context,
                tool_calls: self.tool_calls,
                usage: self.usage,
            },
            problem,
        );
        AgentSettings::new(protocol, model, self.stream).with_http(http)
    }
}

/// The mapping keys of a manifest's `agent` block.
struct RawMapping {
    request: Option<Spanned<serde_json::Value>>,
    method: Option<Spanned<String>>,
    query: Option<Spanned<serde_json::Value>>,
    headers: Option<Spanned<serde_json::Value>>,
    output: Option<Spanned<String>>,
    context: Option<Spanned<String>>,
    tool_calls: Option<Spanned<String>>,
    usage: Option<Spanned<RawUsage>>,
}

/// The request and answer mapping a manifest gives; each bad value is
/// reported through `problem` and left unset.
fn raw_mapping(raw: RawMapping, problem: &mut dyn FnMut(u32, String, &str)) -> HttpMapping {
    let mut http = HttpMapping::default();
    let line = |s: &serde_saphyr::Location| s.line() as u32;
    if let Some(r) = raw.request {
        let setting = "the manifest's agent.request";
        let parsed = match &r.value {
            serde_json::Value::String(text) => read_template(text, setting),
            other => Template::from_value(other.clone())
                .map(|t| Named::new(t, setting))
                .map_err(|e| format!("{setting}: {e}")),
        };
        match parsed {
            Ok(t) => http.request = Some(t),
            Err(e) => problem(line(&r.referenced), e, "request"),
        }
    }
    if let Some(m) = raw.method {
        match read_method(&m.value, "the manifest's agent.method") {
            Ok(m) => http.method = Some(m),
            Err(e) => problem(line(&m.referenced), e, "method"),
        }
    }
    if let Some(q) = raw.query {
        let pairs = scalar_map(&q.value, "agent.query");
        let read = pairs.and_then(|pairs| {
            read_query(
                pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                "the manifest's agent.query",
            )
        });
        match read {
            Ok(q) => http.query = Some(q),
            Err(e) => problem(line(&q.referenced), e, "query"),
        }
    }
    if let Some(h) = raw.headers {
        let read = scalar_map(&h.value, "agent.headers").and_then(|pairs| {
            pairs
                .iter()
                .map(|(k, v)| {
                    Header::new(k, v, "the manifest's agent.headers")
                        .map_err(|e| format!("`agent.headers`: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()
        });
        match read {
            Ok(list) => http.headers = list,
            Err(e) => problem(line(&h.referenced), e, "headers"),
        }
    }
    let mut path = |p: Option<Spanned<String>>, key: &str, field: &str| {
        let p = p?;
        match read_path(&p.value, &format!("the manifest's agent.{key}")) {
            Ok(path) => Some(path),
            Err(e) => {
                problem(line(&p.referenced), e, field);
                None
            }
        }
    };
    http.output = path(raw.output, "output", "output");
    http.context = path(raw.context, "context", "context");
    http.tool_calls = path(raw.tool_calls, "toolCalls", "toolCalls");
    if let Some(u) = raw.usage {
        http.prompt_tokens = path(u.value.prompt_tokens, "usage.promptTokens", "usage");
        http.completion_tokens = path(u.value.completion_tokens, "usage.completionTokens", "usage");
    }
    http
}

/// A YAML mapping of scalars as (key, text) pairs; `Err` says what else it is.
fn scalar_map(value: &serde_json::Value, key: &str) -> Result<Vec<(String, String)>, String> {
    let serde_json::Value::Object(map) = value else {
        return Err(format!("`{key}` is not a mapping of names to values"));
    };
    map.iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
            serde_json::Value::Number(n) => Ok((k.clone(), n.to_string())),
            serde_json::Value::Bool(b) => Ok((k.clone(), b.to_string())),
            _ => Err(format!("`{key}.{k}` is not a string, number or boolean")),
        })
        .collect()
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

    #[test]
    fn a_manifest_agent_block_maps_any_http_agent() {
        let yaml = "protocol: json\nrequest:\n  input: {question: \"{input}\"}\n  config: {}\nmethod: post\nquery: {k: 5, q: \"{input}\"}\nheaders: {X-Tenant: acme}\noutput: output.content\ncontext: /output/sources\ntoolCalls: output.tool_calls\nusage: {promptTokens: u.in, completionTokens: u.out}\n";
        let raw: RawAgent = serde_saphyr::from_str(yaml).unwrap();
        let mut problems = Vec::new();
        let s = raw.settings(&mut |line, m, f| problems.push((line, m, f.to_string())));
        assert!(problems.is_empty(), "{problems:?}");
        let h = &s.http;
        assert_eq!(
            h.request.as_ref().unwrap().value.as_value(),
            &serde_json::json!({"input": {"question": "{input}"}, "config": {}})
        );
        assert_eq!(
            h.request.as_ref().unwrap().setting,
            "the manifest's agent.request"
        );
        assert_eq!(h.method.as_ref().unwrap().value, Method::Post);
        assert_eq!(h.query.as_ref().unwrap().value[0].1.as_value(), "5");
        assert_eq!(h.headers[0].name, "X-Tenant");
        assert_eq!(
            h.context.as_ref().unwrap().value.as_str(),
            "/output/sources"
        );
        assert_eq!(
            h.completion_tokens.as_ref().unwrap().setting,
            "the manifest's agent.usage.completionTokens"
        );

        let bad = "request: '{\"q\": \"{prompt}\"}'\noutput: data..answer\nmethod: DELETE\nheaders: {Bad Name: x}\n";
        let raw: RawAgent = serde_saphyr::from_str(bad).unwrap();
        let mut problems = Vec::new();
        let s = raw.settings(&mut |line, m, f| problems.push((line, m, f.to_string())));
        assert!(s.http.is_empty());
        let fields: Vec<&str> = problems.iter().map(|p| p.2.as_str()).collect();
        assert_eq!(
            fields,
            ["request", "method", "headers", "output"],
            "{problems:?}"
        );
        assert_eq!(problems[0].0, 1);
        assert!(
            problems[0].1.contains("`{prompt}` is not a placeholder"),
            "{problems:?}"
        );
        assert_eq!(problems[3].0, 2);
    }
}
