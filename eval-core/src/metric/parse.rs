//! Parsing the attribute's list of metric specs.

use super::catalog::Op;
use super::error::{MetricSpecError, SpecPart};
use super::spec::{MetricSpec, OptionValue};

/// Parses a comma-separated list of specs as the attribute writes them:
/// `"contains >= 1.0, exact_match(case_sensitive = true), regex(pattern = \"\\\\d+\")"`.
pub fn parse_specs(text: &str) -> Result<Vec<MetricSpec>, MetricSpecError> {
    let bad = |m: String| MetricSpecError(m, SpecPart::Name);
    let mut specs = Vec::new();
    for part in split_top_level(text).map_err(bad)? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (head, bound) = match part.find(">=").or_else(|| part.rfind("<=")) {
            Some(at) if !part[at..].contains(')') => {
                let op = if part[at..].starts_with(">=") {
                    Op::AtLeast
                } else {
                    Op::AtMost
                };
                let value = part[at + 2..].trim();
                let threshold: f64 = value.parse().map_err(|_| {
                    MetricSpecError(
                        format!("`{part}`: `{value}` is not a number"),
                        SpecPart::Threshold,
                    )
                })?;
                (part[..at].trim(), Some((op, threshold)))
            }
            _ => (part, None),
        };
        let (name, options) = match head.split_once('(') {
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| bad(format!("`{part}`: expected `)` after the options")))?;
                (
                    name.trim(),
                    parse_options(inner).map_err(|m| bad(format!("`{part}`: {m}")))?,
                )
            }
            None => (head, Vec::new()),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        {
            return Err(bad(format!("`{part}`: expected a metric name")));
        }
        let opts: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let spec = MetricSpec::new(name, &opts, bound)?;
        if specs
            .iter()
            .any(|s: &MetricSpec| s.info().name == spec.info().name)
        {
            return Err(bad(format!("`{name}` is listed twice")));
        }
        specs.push(spec);
    }
    if specs.is_empty() {
        return Err(bad("no metrics given".into()));
    }
    Ok(specs)
}

/// Splits on commas outside parentheses and string literals.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut in_str, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in text.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err("unbalanced `)`".into());
        }
    }
    if in_str || depth != 0 {
        return Err("unclosed `(` or string".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_options(inner: &str) -> Result<Vec<(String, OptionValue)>, String> {
    let mut out = Vec::new();
    for item in split_top_level(inner)? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("expected `key = value`, found `{item}`"))?;
        let value = value.trim();
        let value = if value == "true" || value == "false" {
            OptionValue::Bool(value == "true")
        } else if value.starts_with('"') {
            let s: String = serde_json::from_str(value)
                .map_err(|_| format!("`{value}` is not a valid string literal"))?;
            OptionValue::Str(s.into())
        } else if let Ok(n) = value.parse::<f64>() {
            OptionValue::Num(n)
        } else {
            return Err(format!(
                "`{value}` is not true, false, a number or a string"
            ));
        };
        out.push((key.trim().to_string(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::spec::MetricKind;

    #[test]
    fn parses_the_attribute_syntax() {
        let specs = parse_specs(
            r#"contains >= 1.0, exact_match(case_sensitive = true), regex(pattern = "a, (b)\\d+") >= 0.5, partial_match"#,
        )
        .unwrap();
        assert_eq!(specs.len(), 4);
        assert_eq!(
            specs[1].kind,
            MetricKind::ExactMatch {
                case_sensitive: true
            }
        );
        assert_eq!(
            specs[2].kind,
            MetricKind::Regex {
                pattern: Some(r"a, (b)\d+".into()),
                case_sensitive: false
            }
        );
        assert_eq!((specs[2].op, specs[2].threshold), (Op::AtLeast, 0.5));
        assert_eq!(specs[3].threshold, 0.5);
        for (bad, msg) in [
            ("contains >= x", "is not a number"),
            ("contains, contains", "listed twice"),
            ("faithfulnes", "unknown metric"),
            ("contains(case_sensitive = yes)", "is not true, false"),
            ("contains(", "unclosed"),
            ("", "no metrics"),
            ("contains <= 0.5", "write `contains >= 0.5`"),
        ] {
            let e = parse_specs(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}
