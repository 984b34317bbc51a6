//! How any HTTP agent's request is built and its answer read, as the
//! environment says (`EVAL_AGENT_REQUEST`, `_METHOD`, `_QUERY`, `_HEADERS`,
//! `_OUTPUT`, `_CONTEXT`, `_TOOL_CALLS`, `_USAGE_PROMPT_TOKENS`,
//! `_USAGE_COMPLETION_TOKENS`). A manifest's `spec.evaluation.agent` and
//! `evals evaluate`'s `--agent-*` flags say the same, and win (see
//! [`HttpAgent::under_plan`](crate::HttpAgent::under_plan)).

use eval_datasets::HttpMapping;
use eval_datasets::agent::{Header, Named, ResponsePath, Template};

use super::{BadVar, Headers};

/// What a template setting expects, after why it failed.
const TEMPLATE: &str = "a JSON request template, e.g. {\"question\": \"{input}\"}";
/// What a path setting expects, after why it failed.
const PATH: &str = "a JSON pointer (/data/answer) or a path (data.answer, data.sources[*].text)";

/// The variables, as set.
pub(super) struct AgentHttpVars {
    request: Option<String>,
    method: Option<String>,
    query: Option<String>,
    headers: Option<String>,
    paths: [(&'static str, Option<String>); 5],
}

impl AgentHttpVars {
    pub(super) fn get(get: &mut impl FnMut(&'static str, bool) -> Option<String>) -> Self {
        AgentHttpVars {
            request: get("EVAL_AGENT_REQUEST", false),
            method: get("EVAL_AGENT_METHOD", false),
            query: get("EVAL_AGENT_QUERY", false),
            headers: get("EVAL_AGENT_HEADERS", true),
            paths: [
                "EVAL_AGENT_OUTPUT",
                "EVAL_AGENT_CONTEXT",
                "EVAL_AGENT_TOOL_CALLS",
                "EVAL_AGENT_USAGE_PROMPT_TOKENS",
                "EVAL_AGENT_USAGE_COMPLETION_TOKENS",
            ]
            .map(|var| (var, get(var, false))),
        }
    }

    /// The checked mapping; each bad value is pushed onto `bad`.
    pub(super) fn parse(self, bad: &mut Vec<BadVar>) -> HttpMapping {
        let mut http = HttpMapping::default();
        if let Some(text) = self.request {
            match Template::parse(&text) {
                Ok(t) => http.request = Some(Named::new(t, "EVAL_AGENT_REQUEST")),
                Err(e) => bad.push(BadVar {
                    var: "EVAL_AGENT_REQUEST",
                    value: text,
                    expected: format!("{TEMPLATE}: {e}"),
                }),
            }
        }
        if let Some(text) = self.method {
            match eval_datasets::agent::read_method(&text, "EVAL_AGENT_METHOD") {
                Ok(m) => http.method = Some(m),
                Err(_) => bad.push(BadVar {
                    var: "EVAL_AGENT_METHOD",
                    value: text,
                    expected: "POST (the default), GET, PUT or PATCH".into(),
                }),
            }
        }
        if let Some(text) = self.query {
            match read_query(&text) {
                Ok(q) => http.query = Some(q),
                Err(e) => bad.push(BadVar {
                    var: "EVAL_AGENT_QUERY",
                    value: text,
                    expected: format!(
                        "name=value pairs joined by &, values percent-encoded and templates (q={{input}}&k=5): {e}"
                    ),
                }),
            }
        }
        let headers = Headers::read("EVAL_AGENT_HEADERS", self.headers, bad);
        for (name, value) in headers.expose() {
            // Checked already by `Headers`: the same rules.
            if let Ok(h) = Header::new(name, value, "EVAL_AGENT_HEADERS") {
                http.headers.push(h);
            }
        }
        let [output, context, tool_calls, prompt, completion] = self.paths.map(|(var, value)| {
            let text = value?;
            match ResponsePath::parse(&text) {
                Ok(p) => Some(Named::new(p, var)),
                Err(e) => {
                    bad.push(BadVar {
                        var,
                        value: text,
                        expected: format!("{PATH}: {}", e.reason),
                    });
                    None
                }
            }
        });
        http.output = output;
        http.context = context;
        http.tool_calls = tool_calls;
        http.prompt_tokens = prompt;
        http.completion_tokens = completion;
        http
    }
}

/// `name=value&name2=value2`, percent-decoded.
fn read_query(text: &str) -> Result<Named<Vec<(String, Template)>>, String> {
    let mut pairs = Vec::new();
    for entry in text.split('&').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, value) = entry
            .split_once('=')
            .ok_or_else(|| format!("`{}` has no `=`", entry.escape_debug()))?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|d| d.into_owned())
                .map_err(|_| format!("`{}` is not UTF-8 once percent-decoded", s.escape_debug()))
        };
        pairs.push((decode(name)?, decode(value)?));
    }
    eval_datasets::agent::read_query(
        pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        "EVAL_AGENT_QUERY",
    )
    .map_err(|e| e.trim_start_matches("EVAL_AGENT_QUERY: ").to_string())
}

#[cfg(test)]
mod tests {
    use crate::Config;

    fn config(vars: &[(&str, &str)]) -> Result<Config, String> {
        let var = |name: &str| {
            Ok(vars
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string()))
        };
        Config::from_vars(var, &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn the_variables_map_the_agent() {
        let c = config(&[
            ("EVAL_AGENT_REQUEST", r#"{"question": "{input}"}"#),
            ("EVAL_AGENT_METHOD", "get"),
            ("EVAL_AGENT_QUERY", "q={input}&lang=en%26fr"),
            (
                "EVAL_AGENT_HEADERS",
                "X-Tenant=acme,Cookie=s%3Dtopsecret-cookie",
            ),
            ("EVAL_AGENT_OUTPUT", "data.answer"),
            ("EVAL_AGENT_CONTEXT", "/data/sources"),
            ("EVAL_AGENT_USAGE_PROMPT_TOKENS", "usage.in"),
        ])
        .unwrap();
        let h = &c.agent_http;
        assert_eq!(h.request.as_ref().unwrap().setting, "EVAL_AGENT_REQUEST");
        assert_eq!(
            h.method.as_ref().unwrap().value,
            eval_datasets::agent::Method::Get
        );
        let q = &h.query.as_ref().unwrap().value;
        assert_eq!(q[1].0, "lang");
        assert_eq!(q[1].1.as_value(), "en&fr");
        assert_eq!(h.headers[1].value, "s=topsecret-cookie");
        assert_eq!(h.output.as_ref().unwrap().value.as_str(), "data.answer");
        assert_eq!(
            h.prompt_tokens.as_ref().unwrap().setting,
            "EVAL_AGENT_USAGE_PROMPT_TOKENS"
        );
        assert!(!format!("{c:?}").contains("topsecret"));
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = config(&[
            ("EVAL_AGENT_REQUEST", r#"{"q": "{prompt}"}"#),
            ("EVAL_AGENT_OUTPUT", "data..answer"),
            ("EVAL_AGENT_METHOD", "DELETE"),
            ("EVAL_AGENT_HEADERS", "X-Key=very-secret-value%0A"),
        ])
        .unwrap_err();
        assert!(
            e.contains("EVAL_AGENT_REQUEST") && e.contains("`{prompt}` is not a placeholder"),
            "{e}"
        );
        assert!(
            e.contains("invalid EVAL_AGENT_OUTPUT=`data..answer`"),
            "{e}"
        );
        assert!(e.contains("EVAL_AGENT_METHOD=`DELETE`"), "{e}");
        assert!(
            e.contains("EVAL_AGENT_HEADERS") && !e.contains("very-secret"),
            "{e}"
        );
    }
}
