//! Where a value sits in an agent's JSON answer: a JSON pointer (RFC 6901,
//! `/data/answer`, `/messages/0/content`) or a small path syntax
//! (`data.answer`, `data.sources[*].text`, `messages[-1].content`,
//! `choices.0.message.content`, `["key.with.dots"]`).
//!
//! The path syntax: keys separated by `.`; `[N]` an array's item (`[-1]` the
//! last); `[*]` (or `.*`) every item of an array (or value of an object),
//! so the path selects several values; `["..."]` a key holding `.` or `[`;
//! a key of digits on an array is an index. A leading `$` or `$.` is
//! allowed; an empty path (or `$`, or the pointer `""`) is the whole body.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// An object's key (or, digits on an array, an index).
    Key(String),
    /// An array's item; negative counts from the end.
    Index(i64),
    /// Every item (array) or value (object).
    All,
}

/// A path into a JSON answer, parsed ([`ResponsePath::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponsePath {
    text: String,
    steps: Vec<Step>,
    pointer: bool,
}

/// Why a path does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{path}` is not a path: {reason} (expected a JSON pointer like /data/answer or a path like data.answer, data.sources[*].text, messages[-1].content)"
)]
pub struct PathError {
    /// The path as given (escaped).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

/// Why a path selects nothing in an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PathMiss(pub String);

impl std::fmt::Display for ResponsePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl ResponsePath {
    /// Parses a JSON pointer (text starting with `/`, or empty) or a path.
    pub fn parse(text: &str) -> Result<ResponsePath, PathError> {
        let trimmed = text.trim();
        let bad = |reason: String| PathError {
            path: trimmed.escape_debug().to_string(),
            reason,
        };
        if let Some(tokens) = trimmed.strip_prefix('/') {
            let mut steps = Vec::new();
            for token in tokens.split('/') {
                steps.push(Step::Key(unescape_pointer(token).map_err(bad)?));
            }
            return Ok(ResponsePath {
                text: trimmed.to_string(),
                steps,
                pointer: true,
            });
        }
        let rest = trimmed.strip_prefix('$').unwrap_or(trimmed);
        let rest = if rest == "." { "" } else { rest };
        let steps = parse_dotted(rest).map_err(bad)?;
        Ok(ResponsePath {
            text: trimmed.to_string(),
            steps,
            pointer: false,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the path may select several values (it holds `[*]`).
    pub fn is_many(&self) -> bool {
        self.steps.contains(&Step::All)
    }

    /// The values the path selects in `body`, in order (one unless
    /// [`is_many`](Self::is_many)); a step that finds nothing is an error
    /// saying where and what was there instead.
    pub fn select<'v>(&self, body: &'v Value) -> Result<Vec<&'v Value>, PathMiss> {
        let mut current: Vec<&'v Value> = vec![body];
        for (k, step) in self.steps.iter().enumerate() {
            let here = self.shown_prefix(k);
            let mut next = Vec::with_capacity(current.len());
            for value in current {
                match step {
                    Step::All => match value {
                        Value::Array(items) => next.extend(items.iter()),
                        Value::Object(map) => next.extend(map.values()),
                        other => {
                            return Err(PathMiss(format!(
                                "{here} is {}, not an array (at `[*]`)",
                                crate::formats::text::kind_of(other)
                            )));
                        }
                    },
                    Step::Index(i) => next.push(index(value, *i, &here)?),
                    Step::Key(key) => match value {
                        Value::Object(map) => match map.get(key) {
                            Some(v) => next.push(v),
                            None => {
                                return Err(PathMiss(format!(
                                    "{here} has no key `{}` ({})",
                                    key.escape_debug(),
                                    keys_of(map)
                                )));
                            }
                        },
                        Value::Array(_)
                            if !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()) =>
                        {
                            let i = key.parse::<i64>().unwrap_or(i64::MAX);
                            next.push(index(value, i, &here)?);
                        }
                        other => {
                            return Err(PathMiss(format!(
                                "{here} is {}, not an object (looking for key `{}`)",
                                crate::formats::text::kind_of(other),
                                key.escape_debug()
                            )));
                        }
                    },
                }
            }
            current = next;
        }
        Ok(current)
    }

    /// The first `n` steps, as this path's syntax writes them ("the body"
    /// for none).
    fn shown_prefix(&self, n: usize) -> String {
        if n == 0 {
            return "the body".into();
        }
        let mut out = String::new();
        for step in &self.steps[..n] {
            match (step, self.pointer) {
                (Step::Key(k), true) => {
                    out.push('/');
                    out.push_str(&k.replace('~', "~0").replace('/', "~1"));
                }
                (Step::Key(k), false) if k.contains(['.', '[', ']']) || k.is_empty() => {
                    out.push_str(&format!("[{}]", Value::String(k.clone())));
                }
                (Step::Key(k), false) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                (Step::Index(i), _) => out.push_str(&format!("[{i}]")),
                (Step::All, _) => out.push_str("[*]"),
            }
        }
        format!("`{}`", out.escape_debug())
    }
}

/// An array's item `i` (negative: from the end).
fn index<'v>(value: &'v Value, i: i64, here: &str) -> Result<&'v Value, PathMiss> {
    let Value::Array(items) = value else {
        return Err(PathMiss(format!(
            "{here} is {}, not an array (at index {i})",
            crate::formats::text::kind_of(value)
        )));
    };
    let len = items.len() as i64;
    let at = if i < 0 { len + i } else { i };
    if (0..len).contains(&at) {
        Ok(&items[at as usize])
    } else {
        Err(PathMiss(format!(
            "{here} has {len} item{}, no index {i}",
            if len == 1 { "" } else { "s" }
        )))
    }
}

/// An object's keys, for an error.
fn keys_of(map: &serde_json::Map<String, Value>) -> String {
    if map.is_empty() {
        return "it is an empty object".into();
    }
    let mut keys: Vec<String> = map
        .keys()
        .take(12)
        .map(|k| k.escape_debug().to_string())
        .collect();
    if map.len() > 12 {
        keys.push("…".into());
    }
    format!("its keys: {}", keys.join(", "))
}

/// A pointer's reference token, `~1` → `/`, `~0` → `~` (RFC 6901 §4).
fn unescape_pointer(token: &str) -> Result<String, String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return Err("`~` must be followed by 0 or 1 in a JSON pointer".into()),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// The steps of the path syntax (after any leading `$`).
fn parse_dotted(text: &str) -> Result<Vec<Step>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    // A `.` is needed before a key, except at the start.
    let mut need_dot = false;
    while i < chars.len() {
        match chars[i] {
            '[' => {
                let close = chars[i..]
                    .iter()
                    .position(|&c| c == ']')
                    .map(|p| p + i)
                    .ok_or_else(|| format!("`[` at character {} is not closed", i + 1))?;
                let inside: String = chars[i + 1..close].iter().collect();
                let inside = inside.trim();
                steps.push(if inside == "*" {
                    Step::All
                } else if let Ok(n) = inside.parse::<i64>() {
                    Step::Index(n)
                } else if let Some(key) = quoted(inside) {
                    Step::Key(key)
                } else {
                    return Err(format!(
                        "`[{inside}]`: expected [N], [-N], [*] or [\"key\"]"
                    ));
                });
                i = close + 1;
                need_dot = true;
            }
            '.' if need_dot || (i == 0 && chars.len() > 1) => {
                i += 1;
                need_dot = false;
                if i >= chars.len() || chars[i] == '.' {
                    return Err(format!("empty key at character {}", i + 1));
                }
                if chars[i] == '[' {
                    return Err(format!("`.[` at character {}: write `[` alone", i));
                }
            }
            ']' => return Err(format!("`]` at character {} has no `[`", i + 1)),
            _ if need_dot => {
                return Err(format!("expected `.` or `[` at character {}", i + 1));
            }
            _ => {
                let start = i;
                while i < chars.len() && !matches!(chars[i], '.' | '[' | ']') {
                    i += 1;
                }
                let key: String = chars[start..i].iter().collect();
                if key.is_empty() {
                    return Err(format!("empty key at character {}", i + 1));
                }
                if key.trim() != key {
                    return Err(format!("key `{key}` has blanks around it"));
                }
                steps.push(if key == "*" {
                    Step::All
                } else {
                    Step::Key(key)
                });
                need_dot = true;
            }
        }
    }
    Ok(steps)
}

/// `"key"` or `'key'` (JSON escapes inside double quotes).
fn quoted(text: &str) -> Option<String> {
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        return serde_json::from_str::<String>(text).ok();
    }
    if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') {
        return Some(text[1..text.len() - 1].to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn get(path: &str, body: &Value) -> Result<Vec<Value>, String> {
        let p = ResponsePath::parse(path).map_err(|e| e.to_string())?;
        p.select(body)
            .map(|v| v.into_iter().cloned().collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn paths_and_pointers_select() {
        let body = json!({
            "data": {"answer": "Paris", "sources": [{"text": "a"}, {"text": "b"}]},
            "messages": [{"content": "q"}, {"content": "last"}],
            "a/b": {"c~d": 1},
            "k.e.y": 2,
        });
        assert_eq!(get("data.answer", &body).unwrap(), [json!("Paris")]);
        assert_eq!(get("$.data.answer", &body).unwrap(), [json!("Paris")]);
        assert_eq!(get("/data/answer", &body).unwrap(), [json!("Paris")]);
        assert_eq!(
            get("data.sources[*].text", &body).unwrap(),
            [json!("a"), json!("b")]
        );
        assert_eq!(
            get("data.sources.*.text", &body).unwrap(),
            [json!("a"), json!("b")]
        );
        assert_eq!(get("messages[-1].content", &body).unwrap(), [json!("last")]);
        assert_eq!(get("messages.0.content", &body).unwrap(), [json!("q")]);
        assert_eq!(get("/messages/1/content", &body).unwrap(), [json!("last")]);
        assert_eq!(get("/a~1b/c~0d", &body).unwrap(), [json!(1)]);
        assert_eq!(get("[\"k.e.y\"]", &body).unwrap(), [json!(2)]);
        assert_eq!(get("", &body).unwrap(), std::slice::from_ref(&body));
        assert_eq!(get("$", &body).unwrap(), std::slice::from_ref(&body));
        assert!(ResponsePath::parse("data.sources[*]").unwrap().is_many());
        assert!(!ResponsePath::parse("data.answer").unwrap().is_many());
    }

    #[test]
    fn misses_say_where_and_what_was_there() {
        let body = json!({"data": {"text": "x", "sources": []}, "n": 3});
        assert_eq!(
            get("data.answer", &body).unwrap_err(),
            "`data` has no key `answer` (its keys: text, sources)"
        );
        assert_eq!(
            get("/output", &body).unwrap_err(),
            "the body has no key `output` (its keys: data, n)"
        );
        assert_eq!(
            get("n.x", &body).unwrap_err(),
            "`n` is a number, not an object (looking for key `x`)"
        );
        assert_eq!(
            get("data.sources[-1]", &body).unwrap_err(),
            "`data.sources` has 0 items, no index -1"
        );
        assert_eq!(
            get("data.sources[*].text", &body).unwrap(),
            Vec::<Value>::new()
        );
    }

    #[test]
    fn bad_paths_are_refused() {
        for bad in [
            "data..answer",
            "data[",
            "data[x]",
            "data]",
            "a.",
            "/a/~2",
            "data.[0]",
            "a[0]b",
        ] {
            let e = ResponsePath::parse(bad).unwrap_err().to_string();
            assert!(e.contains("is not a path"), "{bad}: {e}");
        }
    }
}
