//! How any HTTP agent's request is built and its answer read, when it does
//! not speak the JSON contract: a request template, method, query and
//! headers; paths to the output, context, tool calls and token counts. The
//! same settings come from the command line (`--agent-*`), a manifest's
//! `spec.evaluation.agent` and the `EVAL_AGENT_*` variables; each value
//! remembers which setting gave it, so an error can name it.

use serde_json::Value;

use super::path::{PathError, ResponsePath};
use super::template::{Template, TemplateError};

/// A value and the setting that gave it (`--agent-output`,
/// `EVAL_AGENT_OUTPUT`, `agent.output` of agent.yaml): what errors name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<T> {
    /// The value.
    pub value: T,
    /// The setting, as the user wrote it.
    pub setting: String,
}

impl<T> Named<T> {
    /// `value`, given by `setting`.
    pub fn new(value: T, setting: impl Into<String>) -> Self {
        Named {
            value,
            setting: setting.into(),
        }
    }
}

/// The HTTP method of an agent's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Method {
    /// `POST` with a JSON body (the default).
    #[default]
    Post,
    /// `GET`: no body; the request goes in the query.
    Get,
    /// `PUT` with a JSON body.
    Put,
    /// `PATCH` with a JSON body.
    Patch,
}

impl Method {
    /// `POST`, `GET`, `PUT` or `PATCH` (any case).
    pub fn parse(text: &str) -> Option<Method> {
        match text.trim().to_ascii_uppercase().as_str() {
            "POST" => Some(Method::Post),
            "GET" => Some(Method::Get),
            "PUT" => Some(Method::Put),
            "PATCH" => Some(Method::Patch),
            _ => None,
        }
    }

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
        }
    }
}

/// One custom header. Its value is never shown (`Debug` masks it).
#[derive(Clone, PartialEq, Eq)]
pub struct Header {
    /// The header's name.
    pub name: String,
    /// Its value: for the one place that sends it.
    pub value: String,
    /// The setting that gave it.
    pub setting: String,
}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: <redacted> (from {})", self.name, self.setting)
    }
}

impl Header {
    /// A header, checked: the name an HTTP token (RFC 9110 §5.6.2), the
    /// value without CR, LF, NUL or other control characters (tab aside),
    /// and not one the HTTP client sets itself. The error names the header,
    /// never the value.
    pub fn new(name: &str, value: &str, setting: impl Into<String>) -> Result<Header, String> {
        let name = name.trim();
        let value = value.trim();
        super::check_header(name, value).map_err(|e| e.to_string())?;
        Ok(Header {
            name: name.to_string(),
            value: value.to_string(),
            setting: setting.into(),
        })
    }

    /// `Name: value` (as curl's `-H` writes it).
    pub fn parse_line(line: &str, setting: impl Into<String>) -> Result<Header, String> {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| "expected `Name: value`, e.g. `X-Tenant: acme`".to_string())?;
        Header::new(name, value, setting)
    }
}

/// The request and answer mapping of an HTTP agent; `None` (or empty):
/// not said, the next source decides, else the JSON contract's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpMapping {
    /// The request body's template (`{"question": "{input}"}`).
    pub request: Option<Named<Template>>,
    /// The method (default POST).
    pub method: Option<Named<Method>>,
    /// Query parameters, each value a text template (`q={input}`).
    pub query: Option<Named<Vec<(String, Template)>>>,
    /// Custom headers (merged by name across sources).
    pub headers: Vec<Header>,
    /// Where the answer's text is (`data.answer`).
    pub output: Option<Named<ResponsePath>>,
    /// Where the retrieved context is (`data.sources[*].text`).
    pub context: Option<Named<ResponsePath>>,
    /// Where the tool calls are.
    pub tool_calls: Option<Named<ResponsePath>>,
    /// Where the prompt token count is.
    pub prompt_tokens: Option<Named<ResponsePath>>,
    /// Where the completion token count is.
    pub completion_tokens: Option<Named<ResponsePath>>,
}

impl HttpMapping {
    /// Whether nothing is said.
    pub fn is_empty(&self) -> bool {
        self == &HttpMapping::default()
    }

    /// Whether any answer path is set (the answer is then read by them).
    pub fn reads_paths(&self) -> bool {
        self.output.is_some()
            || self.context.is_some()
            || self.tool_calls.is_some()
            || self.prompt_tokens.is_some()
            || self.completion_tokens.is_some()
    }

    /// The answer paths that are set, with their settings.
    pub fn paths(&self) -> impl Iterator<Item = &Named<ResponsePath>> {
        [
            &self.output,
            &self.context,
            &self.tool_calls,
            &self.prompt_tokens,
            &self.completion_tokens,
        ]
        .into_iter()
        .flatten()
    }

    /// This mapping, with `other`'s values where this one says nothing;
    /// headers are merged by name (this mapping's win).
    pub fn or(self, other: &HttpMapping) -> HttpMapping {
        let mut headers = self.headers;
        for h in &other.headers {
            if !headers
                .iter()
                .any(|mine| mine.name.eq_ignore_ascii_case(&h.name))
            {
                headers.push(h.clone());
            }
        }
        HttpMapping {
            request: self.request.or_else(|| other.request.clone()),
            method: self.method.or_else(|| other.method.clone()),
            query: self.query.or_else(|| other.query.clone()),
            headers,
            output: self.output.or_else(|| other.output.clone()),
            context: self.context.or_else(|| other.context.clone()),
            tool_calls: self.tool_calls.or_else(|| other.tool_calls.clone()),
            prompt_tokens: self.prompt_tokens.or_else(|| other.prompt_tokens.clone()),
            completion_tokens: self
                .completion_tokens
                .or_else(|| other.completion_tokens.clone()),
        }
    }

    /// What shapes the agent's answers (for a cassette's key): the
    /// template, method, query and paths; never the headers' values.
    pub fn shape(&self) -> Value {
        let path = |p: &Option<Named<ResponsePath>>| {
            p.as_ref()
                .map_or(Value::Null, |p| Value::String(p.value.to_string()))
        };
        serde_json::json!({
            "request": self.request.as_ref().map(|t| t.value.as_value().clone()),
            "method": self.method.as_ref().map(|m| m.value.name()),
            "query": self.query.as_ref().map(|q| q.value.iter().map(|(k, v)| (k.clone(), v.as_value().clone())).collect::<serde_json::Map<_, _>>()),
            "headers": self.headers.iter().map(|h| h.name.clone()).collect::<Vec<_>>(),
            "output": path(&self.output),
            "context": path(&self.context),
            "tool_calls": path(&self.tool_calls),
            "prompt_tokens": path(&self.prompt_tokens),
            "completion_tokens": path(&self.completion_tokens),
        })
    }
}

/// Reads a path setting: `Err` names the setting.
pub fn read_path(text: &str, setting: &str) -> Result<Named<ResponsePath>, String> {
    ResponsePath::parse(text)
        .map(|p| Named::new(p, setting))
        .map_err(|e: PathError| format!("{setting}: {e}"))
}

/// Reads a request template setting (JSON text): `Err` names the setting.
pub fn read_template(text: &str, setting: &str) -> Result<Named<Template>, String> {
    Template::parse(text)
        .map(|t| Named::new(t, setting))
        .map_err(|e: TemplateError| format!("{setting}: {e}"))
}

/// Reads a method setting: `Err` names the setting.
pub fn read_method(text: &str, setting: &str) -> Result<Named<Method>, String> {
    Method::parse(text)
        .map(|m| Named::new(m, setting))
        .ok_or_else(|| {
            format!(
                "{setting}: `{}` is not a method: expected POST (the default), GET, PUT or PATCH",
                text.escape_debug()
            )
        })
}

/// Reads query parameters, each `name=value` (value a text template):
/// `Err` names the setting.
pub fn read_query<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    setting: &str,
) -> Result<Named<Vec<(String, Template)>>, String> {
    let mut out = Vec::new();
    for (name, value) in pairs {
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("{setting}: a query parameter has no name"));
        }
        let t = Template::text(value).map_err(|e| format!("{setting}: `{name}`: {e}"))?;
        out.push((name.to_string(), t));
    }
    Ok(Named::new(out, setting))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_checked_and_never_shown() {
        let h = Header::parse_line("X-Tenant: acme-secret-1", "--agent-header").unwrap();
        assert_eq!(
            (h.name.as_str(), h.value.as_str()),
            ("X-Tenant", "acme-secret-1")
        );
        assert!(!format!("{h:?}").contains("acme"));
        assert!(Header::parse_line("no colon", "x").is_err());
        assert!(Header::new("Bad Name", "v", "x").is_err());
        assert!(Header::new("Host", "v", "x").is_err());
        let e = Header::new("X", "a\r\nHost: evil-secret", "x").unwrap_err();
        assert!(!e.contains("evil"), "{e}");
    }

    #[test]
    fn mappings_merge_field_by_field_and_headers_by_name() {
        let flags = HttpMapping {
            output: Some(read_path("data.answer", "--agent-output").unwrap()),
            headers: vec![Header::new("X-Tenant", "a", "--agent-header").unwrap()],
            ..HttpMapping::default()
        };
        let manifest = HttpMapping {
            output: Some(read_path("answer", "agent.output").unwrap()),
            context: Some(read_path("sources", "agent.context").unwrap()),
            headers: vec![
                Header::new("x-tenant", "b", "agent.headers").unwrap(),
                Header::new("Cookie", "c", "agent.headers").unwrap(),
            ],
            ..HttpMapping::default()
        };
        let merged = flags.or(&manifest);
        assert_eq!(merged.output.as_ref().unwrap().setting, "--agent-output");
        assert_eq!(merged.context.as_ref().unwrap().setting, "agent.context");
        let headers: Vec<(&str, &str)> = merged
            .headers
            .iter()
            .map(|h| (h.name.as_str(), h.value.as_str()))
            .collect();
        assert_eq!(headers, [("X-Tenant", "a"), ("Cookie", "c")]);
        assert!(
            read_method("DELETE", "EVAL_AGENT_METHOD")
                .unwrap_err()
                .contains("EVAL_AGENT_METHOD")
        );
        assert!(
            read_path("a..b", "--agent-context")
                .unwrap_err()
                .starts_with("--agent-context: ")
        );
    }
}
