//! The request body of an HTTP agent as a JSON template
//! (`{"question": "{input}", "history": "{messages}"}`).
//!
//! Placeholders: `{input}` (the current user turn), `{messages}` (the
//! conversation so far, `[{"role", "content"}, ...]`), `{agent_args}` (the
//! sample's `agent_args` object), `{agent_args.NAME}` (one of them;
//! `{agent_args.a.b}` looks inside), `{tools}` (the tool definitions
//! offered). A string that is exactly one placeholder becomes its JSON
//! value (`"{messages}"` an array, `"{agent_args.k}"` a number when it is
//! one); inside a longer string a placeholder is written as text (a string
//! as is, anything else as compact JSON). Keys are templates too. Any other
//! `{word}` (no blank or quote inside) is an error when the template is
//! read, so a typo never reaches the agent; other braces are literal.

use serde_json::{Map, Value};

/// The values a template's placeholders take for one request.
#[derive(Debug, Clone, Copy)]
pub struct TemplateVars<'a> {
    /// `{input}`: the current user turn.
    pub input: &'a str,
    /// `{messages}`: the conversation so far, as JSON.
    pub messages: &'a Value,
    /// `{agent_args}`: the sample's `agent_args`.
    pub agent_args: &'a Map<String, Value>,
    /// `{tools}`: the tool definitions offered, as JSON.
    pub tools: &'a Value,
}

/// A request template, its placeholders checked ([`Template::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(Value);

/// Why a template cannot be read or filled in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The text is not JSON.
    #[error("not JSON ({reason}); expected e.g. {{\"question\": \"{{input}}\"}}")]
    NotJson {
        /// The parser's message.
        reason: String,
    },
    /// A placeholder that is not one of ours.
    #[error(
        "`{{{name}}}` is not a placeholder: use {{input}}, {{messages}}, {{agent_args}}, {{agent_args.NAME}} or {{tools}}"
    )]
    Unknown {
        /// The name inside the braces.
        name: String,
    },
    /// `{agent_args.NAME}` for a sample without it.
    #[error("`{{agent_args.{name}}}`: the sample has no agent_args.{name} ({has})")]
    MissingArg {
        /// The dotted name after `agent_args.`.
        name: String,
        /// What the sample's agent_args hold.
        has: String,
    },
}

/// One placeholder, parsed.
enum Var<'t> {
    Input,
    Messages,
    AgentArgs,
    Arg(&'t str),
    Tools,
}

impl Template {
    /// Reads a template from JSON text.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let value: Value = serde_json::from_str(text).map_err(|e| TemplateError::NotJson {
            reason: e.to_string(),
        })?;
        Template::from_value(value)
    }

    /// A template from a JSON value (a manifest's YAML mapping, say).
    pub fn from_value(value: Value) -> Result<Template, TemplateError> {
        check(&value)?;
        Ok(Template(value))
    }

    /// A template of one string (a query parameter's value).
    pub fn text(text: &str) -> Result<Template, TemplateError> {
        Template::from_value(Value::String(text.to_string()))
    }

    /// The template as written.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The template filled in for one request.
    pub fn render(&self, vars: &TemplateVars<'_>) -> Result<Value, TemplateError> {
        render(&self.0, vars)
    }

    /// The template filled in as text: a string template's text, anything
    /// else as compact JSON (a query parameter's value).
    pub fn render_text(&self, vars: &TemplateVars<'_>) -> Result<String, TemplateError> {
        Ok(match self.render(vars)? {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }
}

/// Every placeholder of `value` is one of ours.
fn check(value: &Value) -> Result<(), TemplateError> {
    match value {
        Value::String(s) => each_placeholder(s, |name| var(name).map(|_| ())),
        Value::Array(items) => items.iter().try_for_each(check),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            each_placeholder(k, |name| var(name).map(|_| ()))?;
            check(v)
        }),
        _ => Ok(()),
    }
}

fn render(value: &Value, vars: &TemplateVars<'_>) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(s) => match whole_placeholder(s) {
            Some(name) => lookup(var(name)?, vars)?,
            None => Value::String(interpolate(s, vars)?),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                out.insert(interpolate(k, vars)?, render(v, vars)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// `s` with each placeholder written as text.
fn interpolate(s: &str, vars: &TemplateVars<'_>) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((before, name, after)) = next_placeholder(rest) {
        out.push_str(before);
        match lookup(var(name)?, vars)? {
            Value::String(text) => out.push_str(&text),
            other => out.push_str(&other.to_string()),
        }
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// The name when `s` is exactly one placeholder.
fn whole_placeholder(s: &str) -> Option<&str> {
    match next_placeholder(s) {
        Some(("", name, "")) => Some(name),
        _ => None,
    }
}

/// Calls `f` with the name of every placeholder of `s`.
fn each_placeholder(
    s: &str,
    mut f: impl FnMut(&str) -> Result<(), TemplateError>,
) -> Result<(), TemplateError> {
    let mut rest = s;
    while let Some((_, name, after)) = next_placeholder(rest) {
        f(name)?;
        rest = after;
    }
    Ok(())
}

/// The next `{name}` of `s`: (text before, name, text after). A name is
/// not empty, starts with a letter or `_`, and holds no blank, quote or
/// brace.
fn next_placeholder(s: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(open) = s[from..].find('{').map(|p| p + from) {
        let after_open = &s[open + 1..];
        if let Some(close) = after_open.find(['{', '}'])
            && after_open.as_bytes()[close] == b'}'
        {
            let name = &after_open[..close];
            let starts_well = name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_');
            if starts_well && !name.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
                return Some((&s[..open], name, &after_open[close + 1..]));
            }
        }
        from = open + 1;
    }
    None
}

fn var(name: &str) -> Result<Var<'_>, TemplateError> {
    Ok(match name {
        "input" => Var::Input,
        "messages" => Var::Messages,
        "agent_args" => Var::AgentArgs,
        "tools" => Var::Tools,
        _ => match name.strip_prefix("agent_args.") {
            Some(arg) if !arg.is_empty() && !arg.split('.').any(str::is_empty) => Var::Arg(arg),
            _ => {
                return Err(TemplateError::Unknown {
                    name: name.escape_debug().to_string(),
                });
            }
        },
    })
}

fn lookup(var: Var<'_>, vars: &TemplateVars<'_>) -> Result<Value, TemplateError> {
    Ok(match var {
        Var::Input => Value::String(vars.input.to_string()),
        Var::Messages => vars.messages.clone(),
        Var::AgentArgs => Value::Object(vars.agent_args.clone()),
        Var::Tools => vars.tools.clone(),
        Var::Arg(dotted) => {
            let mut parts = dotted.split('.');
            let first = parts.next().unwrap_or_default();
            let mut value = vars.agent_args.get(first);
            for part in parts {
                value = value.and_then(|v| match v {
                    Value::Object(m) => m.get(part),
                    Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
                    _ => None,
                });
            }
            match value {
                Some(v) => v.clone(),
                None => {
                    let keys: Vec<&str> = vars.agent_args.keys().map(String::as_str).collect();
                    return Err(TemplateError::MissingArg {
                        name: dotted.escape_debug().to_string(),
                        has: if keys.is_empty() {
                            "it has none".into()
                        } else {
                            format!("it has: {}", keys.join(", "))
                        },
                    });
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_placeholders_are_values_and_others_text() {
        let messages = json!([{"role": "user", "content": "hi"}]);
        let args = json!({"tenant": "acme", "k": 3, "nested": {"x": [1, 2]}});
        let tools = json!([]);
        let vars = TemplateVars {
            input: "What is \"RAG\"?",
            messages: &messages,
            agent_args: args.as_object().unwrap(),
            tools: &tools,
        };
        let t = Template::parse(
            r#"{"question": "{input}", "history": "{messages}", "k": "{agent_args.k}",
                "x": "{agent_args.nested.x}", "note": "tenant {agent_args.tenant}, k={agent_args.k}: {input}",
                "all": "{agent_args}", "{agent_args.tenant}_id": 1, "literal": "{ not a placeholder }", "n": [true, null]}"#,
        )
        .unwrap();
        assert_eq!(
            t.render(&vars).unwrap(),
            json!({"question": "What is \"RAG\"?", "history": messages, "k": 3, "x": [1, 2],
                   "note": "tenant acme, k=3: What is \"RAG\"?", "all": args, "acme_id": 1,
                   "literal": "{ not a placeholder }", "n": [true, null]})
        );
        assert_eq!(
            Template::text("{agent_args.k}")
                .unwrap()
                .render_text(&vars)
                .unwrap(),
            "3"
        );
        let missing = Template::parse(r#"{"t": "{agent_args.user}"}"#).unwrap();
        assert_eq!(
            missing.render(&vars).unwrap_err().to_string(),
            "`{agent_args.user}`: the sample has no agent_args.user (it has: tenant, k, nested)"
        );
    }

    #[test]
    fn unknown_placeholders_and_bad_json_are_refused_when_read() {
        let e = Template::parse(r#"{"q": "{{prompt}}"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`{prompt}` is not a placeholder"), "{e}");
        let e = Template::parse(r#"{"q": "{inputs}"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`{inputs}`"), "{e}");
        let e = Template::parse(r#"{"q": "{agent_args.}"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a placeholder"), "{e}");
        let e = Template::parse(r#"{"q": {input}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not JSON"), "{e}");
    }
}
