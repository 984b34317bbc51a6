//! Parsing the attribute's list of metric specs.

use super::catalog::Op;
use super::error::{MetricSpecError, SpecErrorKind, SpecPart, SpecSyntaxError};
use super::options::OptionValue;
use super::spec::MetricSpec;
use super::user::UserMetrics;

/// Parses a comma-separated list of specs as the attribute writes them:
/// `"contains >= 1.0, exact_match(case_sensitive = true), regex(pattern = \"\\\\d+\")"`.
pub fn parse_specs(text: &str) -> Result<Vec<MetricSpec>, MetricSpecError> {
    parse_specs_with(text, &UserMetrics::new())
}

/// [`parse_specs`], where a name the catalogue does not know may name one
/// of `user` (a metric of the user's, by its name; `name@turn<n>` for one
/// turn). The catalogue's names come first.
pub fn parse_specs_with(
    text: &str,
    user: &UserMetrics,
) -> Result<Vec<MetricSpec>, MetricSpecError> {
    let bad = |kind: SpecErrorKind| MetricSpecError(kind, SpecPart::Name);
    let mut specs = Vec::new();
    for part in split_top_level(text).map_err(|e| bad(SpecErrorKind::Syntax(e)))? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        // `exec:<command> >= <threshold>`.
        if let Some(spec) = super::exec_spec::shorthand(part) {
            push_unique(&mut specs, spec?)?;
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
                        SpecErrorKind::NotANumber {
                            part: part.to_string(),
                            value: value.to_string(),
                        },
                        SpecPart::Threshold,
                    )
                })?;
                (part[..at].trim(), Some((op, threshold)))
            }
            _ => (part, None),
        };
        let (name, options) = match head.split_once('(') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| {
                    bad(SpecErrorKind::UnclosedOptions {
                        part: part.to_string(),
                    })
                })?;
                (
                    name.trim(),
                    parse_options(inner).map_err(|error| {
                        bad(SpecErrorKind::BadOptions {
                            part: part.to_string(),
                            error,
                        })
                    })?,
                )
            }
            None => (head, Vec::new()),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        {
            return Err(bad(SpecErrorKind::NotAName {
                part: part.to_string(),
            }));
        }
        let opts: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let spec = match user_spec(name, &opts, bound, user) {
            Some(spec) => spec?,
            None => MetricSpec::new(name, &opts, bound)?,
        };
        push_unique(&mut specs, spec)?;
    }
    if specs.is_empty() {
        return Err(bad(SpecErrorKind::NoMetrics));
    }
    Ok(specs)
}

/// The spec of `name` when it names a metric of `user` the catalogue does
/// not know (`name@turn<n>`: of that turn); `None` when it does not.
fn user_spec(
    name: &str,
    options: &[(&str, OptionValue)],
    bound: Option<(Op, f64)>,
    user: &UserMetrics,
) -> Option<Result<MetricSpec, MetricSpecError>> {
    if super::catalog::lookup(name).is_some() {
        return None;
    }
    let (base, turn) = match name.rsplit_once("@turn") {
        Some((base, n)) if user.get(base).is_some() => match n.parse::<usize>() {
            Ok(n) if n >= 1 => (base, Some(n - 1)),
            _ => return None,
        },
        _ => (name, None),
    };
    let metric = user.get(base)?;
    if let Some((key, _)) = options.first() {
        return Some(Err(MetricSpecError(
            SpecErrorKind::TakesNoOptions {
                name: name.to_string(),
                key: key.to_string(),
            },
            SpecPart::Option(0),
        )));
    }
    Some(metric.spec(bound).map(|s| match turn {
        Some(t) => s.for_turn(t),
        None => s,
    }))
}

/// `spec` added to `specs`, unless one of them is the same metric (or,
/// for an external scorer, has the same results name).
fn push_unique(specs: &mut Vec<MetricSpec>, spec: MetricSpec) -> Result<(), MetricSpecError> {
    let bad = |kind: SpecErrorKind| MetricSpecError(kind, SpecPart::Name);
    if specs.iter().any(|s| s.name == spec.name)
        && matches!(spec.kind, super::spec::MetricKind::Exec(_))
    {
        return Err(bad(SpecErrorKind::Exec(
            super::exec_error::ExecSpecError::NameTwice(spec.name),
        )));
    }
    if specs.iter().any(|s| s.identity() == spec.identity()) {
        return Err(bad(SpecErrorKind::ListedTwice {
            name: spec.name.clone(),
        }));
    }
    specs.push(spec);
    Ok(())
}

/// Tracks string literals (`"..."`, backslash escapes) in text read one
/// character at a time.
#[derive(Default)]
pub(super) struct Strings {
    /// Inside a literal.
    pub(super) open: bool,
    escaped: bool,
}

impl Strings {
    /// Whether `c`, the next character, is outside every string literal (a
    /// quote itself is not).
    pub(super) fn outside(&mut self, c: char) -> bool {
        if self.open {
            match c {
                _ if self.escaped => self.escaped = false,
                '\\' => self.escaped = true,
                '"' => self.open = false,
                _ => {}
            }
            return false;
        }
        if c == '"' {
            self.open = true;
            return false;
        }
        true
    }
}

/// Splits on commas outside parentheses and string literals.
pub(super) fn split_top_level(text: &str) -> Result<Vec<&str>, SpecSyntaxError> {
    let mut parts = Vec::new();
    let (mut depth, mut strings, mut start) = (0i32, Strings::default(), 0);
    for (i, c) in text.char_indices() {
        if !strings.outside(c) {
            continue;
        }
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(SpecSyntaxError::UnbalancedParen);
        }
    }
    if strings.open || depth != 0 {
        return Err(SpecSyntaxError::Unclosed);
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_options(inner: &str) -> Result<Vec<(String, OptionValue)>, SpecSyntaxError> {
    let mut out = Vec::new();
    for item in split_top_level(inner)? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| SpecSyntaxError::NotKeyValue(item.to_string()))?;
        let value = value.trim();
        let value = if value == "true" || value == "false" {
            OptionValue::Bool(value == "true")
        } else if value.starts_with('"') {
            let s: String = serde_json::from_str(value)
                .map_err(|_| SpecSyntaxError::BadString(value.to_string()))?;
            OptionValue::Str(s.into())
        } else if let Ok(n) = value.parse::<f64>() {
            OptionValue::Num(n)
        } else {
            return Err(SpecSyntaxError::BadValue(value.to_string()));
        };
        out.push((key.trim().to_string(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::TextMetric;
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
            MetricKind::Text(TextMetric::ExactMatch {
                case_sensitive: true
            })
        );
        assert_eq!(
            specs[2].kind,
            MetricKind::Text(TextMetric::Regex {
                pattern: Some(r"a, (b)\d+".into()),
                case_sensitive: false
            })
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

    #[test]
    fn parse_errors_are_typed() {
        let e = parse_specs("contains(case_sensitive = yes)").unwrap_err();
        assert_eq!(
            e.0,
            SpecErrorKind::BadOptions {
                part: "contains(case_sensitive = yes)".into(),
                error: SpecSyntaxError::BadValue("yes".into())
            }
        );
        assert_eq!(
            e.to_string(),
            "`contains(case_sensitive = yes)`: `yes` is not true, false, a number or a string"
        );
        let e = parse_specs("contains)").unwrap_err();
        assert_eq!(e.0, SpecErrorKind::Syntax(SpecSyntaxError::UnbalancedParen));
        assert_eq!(e.to_string(), "unbalanced `)`");
        let e = parse_specs("contains >= x").unwrap_err();
        assert_eq!(
            (e.to_string().as_str(), e.1),
            ("`contains >= x`: `x` is not a number", SpecPart::Threshold)
        );
        assert_eq!(parse_specs("").unwrap_err().0, SpecErrorKind::NoMetrics);
    }
}
