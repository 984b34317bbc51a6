//! issue36:json — the options of the structured-output metrics `is_json`,
//! `json_schema` and `json_pointer` (scored by eval-runtime's
//! `metrics::json`): read, checked and turned into their [`MetricKind`],
//! and written out again for [`MetricSpec::decl_parts`](super::MetricSpec::decl_parts).
//!
//! What is checked here, where the macro sees it at compile time: a
//! `schema` that is not JSON, `schema` and `schema_file` both or neither,
//! a `pointer` that is not an RFC 6901 JSON pointer, `equals` with
//! `pattern`. Whether a schema compiles is checked when a plan loads
//! (eval-runtime; this crate has no JSON Schema validator).

use std::borrow::Cow;

use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::options::OptionValue;
use super::spec::MetricKind;

/// The structured-output options of a spec, as written.
#[derive(Debug, Default)]
pub(super) struct JsonOptions {
    /// `extract` (default false).
    extract: bool,
    /// `schema`, with the option's place.
    schema: Option<(String, SpecPart)>,
    /// `schema_file`, with the option's place.
    schema_file: Option<(String, SpecPart)>,
    /// `pointer`, with the option's place.
    pointer: Option<(String, SpecPart)>,
    /// `equals`, with the option's place.
    equals: Option<(OptionValue, SpecPart)>,
}

impl JsonOptions {
    /// Whether `key` is one of these options.
    pub(super) fn takes(key: &str) -> bool {
        matches!(
            key,
            "extract" | "schema" | "schema_file" | "pointer" | "equals"
        )
    }

    /// Reads option `key` of metric `name` (one [`takes`](Self::takes)).
    pub(super) fn set(
        &mut self,
        name: &str,
        key: &str,
        value: &OptionValue,
        part: SpecPart,
    ) -> Result<(), MetricSpecError> {
        let expects = |kind: fn(String, String) -> SpecErrorKind| {
            Err(MetricSpecError(kind(name.into(), key.into()), part))
        };
        match (key, value) {
            ("extract", OptionValue::Bool(b)) => self.extract = *b,
            ("extract", _) => {
                return expects(|name, key| SpecErrorKind::ExpectsBool { name, key });
            }
            ("equals", v) => self.equals = Some((v.clone(), part)),
            (_, OptionValue::Str(s)) => {
                let s = s.to_string();
                match key {
                    "schema" => self.schema = Some((s, part)),
                    "schema_file" => self.schema_file = Some((s, part)),
                    _ => self.pointer = Some((s, part)),
                }
            }
            _ => return expects(|name, key| SpecErrorKind::ExpectsString { name, key }),
        }
        Ok(())
    }

    /// The kind of metric `metric` (`is_json`, `json_schema` or
    /// `json_pointer`) with these options and `pattern` (already checked
    /// as a regex).
    pub(super) fn into_kind(
        self,
        metric: &str,
        pattern: Option<String>,
    ) -> Result<MetricKind, MetricSpecError> {
        let refuse = |given: String, expected: &'static str, part: SpecPart| {
            Err(MetricSpecError(
                SpecErrorKind::UnknownChoice { given, expected },
                part,
            ))
        };
        let extract = self.extract;
        match metric {
            "json_schema" => match (self.schema, self.schema_file) {
                (Some(_), Some((_, part))) => refuse(
                    "`json_schema` given both `schema` and `schema_file`".into(),
                    "one of them",
                    part,
                ),
                (None, None) => refuse(
                    "`json_schema` without a schema".into(),
                    "`schema = \"{...}\"` (the schema's JSON) or `schema_file = \"path.json\"`",
                    SpecPart::Name,
                ),
                (Some((text, part)), None) => match schema_shape(&text) {
                    Err(why) => refuse(
                        format!("`schema` of `json_schema` is not a JSON Schema ({why})"),
                        "the schema as JSON text: an object such as `{\"type\": \"object\"}`, or true / false",
                        part,
                    ),
                    Ok(()) => Ok(MetricKind::JsonSchema {
                        schema: Some(text),
                        file: None,
                        extract,
                    }),
                },
                (None, Some((file, part))) if file.trim().is_empty() => refuse(
                    "`schema_file = \"\"` of `json_schema`".into(),
                    "the path of a JSON Schema file, relative to the crate (the attribute) or the working directory (`evals`)",
                    part,
                ),
                (None, Some((file, _))) => Ok(MetricKind::JsonSchema {
                    schema: None,
                    file: Some(file),
                    extract,
                }),
            },
            "json_pointer" => {
                let Some((pointer, pointer_part)) = self.pointer else {
                    return refuse(
                        "`json_pointer` without `pointer`".into(),
                        "`pointer = \"/path/to/value\"` (RFC 6901)",
                        SpecPart::Name,
                    );
                };
                if let Err(why) = check_pointer(&pointer) {
                    return refuse(
                        format!("`pointer = {pointer:?}` of `json_pointer` {why}"),
                        "an RFC 6901 JSON pointer: \"\" (the whole value) or `/` and reference tokens, `~0` for `~` and `~1` for `/` (e.g. \"/refund/amount\", \"/items/0\")",
                        pointer_part,
                    );
                }
                match (self.equals, pattern) {
                    (Some((_, part)), Some(_)) => refuse(
                        "`json_pointer` given both `equals` and `pattern`".into(),
                        "one of them (or neither: the expected answer)",
                        part,
                    ),
                    (equals, pattern) => Ok(MetricKind::JsonPointer {
                        pointer,
                        equals: equals.map(|(v, _)| v),
                        pattern,
                        extract,
                    }),
                }
            }
            _ => Ok(MetricKind::IsJson { extract }),
        }
    }
}

/// Whether `text` can be a JSON Schema: JSON, an object or a boolean
/// (JSON Schema 2020-12 §4.3.1); why not.
fn schema_shape(text: &str) -> Result<(), String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => Err(format!("it does not parse: {e}")),
        Ok(serde_json::Value::Object(_) | serde_json::Value::Bool(_)) => Ok(()),
        Ok(_) => Err("it is JSON but neither an object nor a boolean".into()),
    }
}

/// Why `pointer` is not an RFC 6901 JSON pointer (§3: empty, or `/` and
/// reference tokens, where `~` is only followed by `0` or `1`).
fn check_pointer(pointer: &str) -> Result<(), &'static str> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err("does not start with `/`");
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err("has a `~` not followed by 0 or 1");
        }
    }
    Ok(())
}

/// The options of a structured-output `kind` as written, defaults left out.
pub(super) fn decl_parts(kind: &MetricKind, options: &mut Vec<(String, OptionValue)>) {
    let mut text = |key: &str, value: &str| {
        options.push((key.into(), OptionValue::Str(Cow::Owned(value.into()))));
    };
    let extract = match kind {
        MetricKind::IsJson { extract } => *extract,
        MetricKind::JsonSchema {
            schema,
            file,
            extract,
        } => {
            if let Some(s) = schema {
                text("schema", s);
            }
            if let Some(f) = file {
                text("schema_file", f);
            }
            *extract
        }
        MetricKind::JsonPointer {
            pointer,
            equals,
            pattern,
            extract,
        } => {
            text("pointer", pointer);
            if let Some(p) = pattern {
                text("pattern", p);
            }
            if let Some(v) = equals {
                options.push(("equals".into(), v.clone()));
            }
            *extract
        }
        _ => false,
    };
    if extract {
        options.push(("extract".into(), OptionValue::Bool(true)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::MetricSpec;
    use super::*;

    fn spec(name: &str, options: &[(&str, OptionValue)]) -> Result<MetricSpec, MetricSpecError> {
        MetricSpec::new(name, options, None)
    }

    fn s(v: &'static str) -> OptionValue {
        OptionValue::Str(v.into())
    }

    #[test]
    fn the_json_metrics_resolve_and_round_trip() {
        let specs = [
            spec("is_json", &[]).unwrap(),
            spec("is_json", &[("extract", OptionValue::Bool(true))]).unwrap(),
            spec("json_schema", &[("schema", s(r#"{"type": "object"}"#))]).unwrap(),
            spec("json_schema", &[("schema_file", s("schemas/refund.json"))]).unwrap(),
            spec(
                "json_pointer",
                &[
                    ("pointer", s("/refund/amount")),
                    ("equals", OptionValue::Num(42.0)),
                ],
            )
            .unwrap(),
            spec(
                "json_pointer",
                &[("pointer", s("/id")), ("pattern", s("^T-[0-9]+$"))],
            )
            .unwrap(),
            spec("json_pointer", &[("pointer", s(""))]).unwrap(),
        ];
        assert_eq!(
            specs[1].kind,
            MetricKind::IsJson { extract: true },
            "extract is read"
        );
        assert_eq!(
            specs[4].kind,
            MetricKind::JsonPointer {
                pointer: "/refund/amount".into(),
                equals: Some(OptionValue::Num(42.0)),
                pattern: None,
                extract: false
            }
        );
        for spec in &specs {
            assert_eq!((spec.op, spec.threshold), (super::super::Op::AtLeast, 1.0));
            assert!(spec.info().pass_fail(), "{}", spec.name);
            let (name, options, bound) = spec.decl_parts();
            let options: Vec<(&str, OptionValue)> = options
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            assert_eq!(&MetricSpec::new(&name, &options, bound).unwrap(), spec);
        }
        // `equals` or `pattern` stands in for the expected answer.
        assert!(specs[4].needs().is_empty() && specs[5].needs().is_empty());
        assert_eq!(specs[6].needs(), &[super::super::Need::Expected]);
        // Parsed from the command line's syntax too, numbers and all.
        let parsed = crate::metric::parse_specs(
            r#"json_pointer(pointer = "/refund/amount", equals = 42), json_schema(schema = "{\"type\": \"integer\"}", extract = true)"#,
        )
        .unwrap();
        assert_eq!(parsed[0], specs[4]);
    }

    #[test]
    fn bad_json_options_are_refused_with_what_to_write() {
        let msg = |name: &str, options: &[(&str, OptionValue)]| {
            spec(name, options).unwrap_err().to_string()
        };
        let m = msg("json_schema", &[("schema", s(r#"{"type": "#))]);
        assert!(
            m.starts_with("`schema` of `json_schema` is not a JSON Schema (it does not parse: EOF while parsing a value at line 1 column 9): expected the schema as JSON text"),
            "{m}"
        );
        let m = msg("json_schema", &[("schema", s("[1]"))]);
        assert!(m.contains("neither an object nor a boolean"), "{m}");
        let m = msg("json_schema", &[]);
        assert!(m.contains("`schema_file = \"path.json\"`"), "{m}");
        let m = msg(
            "json_schema",
            &[("schema", s("true")), ("schema_file", s("a.json"))],
        );
        assert!(m.contains("both `schema` and `schema_file`"), "{m}");
        let m = msg("json_pointer", &[]);
        assert!(m.contains("without `pointer`"), "{m}");
        let m = msg("json_pointer", &[("pointer", s("refund.amount"))]);
        assert!(m.contains("does not start with `/`"), "{m}");
        let m = msg("json_pointer", &[("pointer", s("/a~2b"))]);
        assert!(m.contains("`~` not followed by 0 or 1"), "{m}");
        let m = msg(
            "json_pointer",
            &[
                ("pointer", s("/a")),
                ("equals", OptionValue::Bool(true)),
                ("pattern", s("x")),
            ],
        );
        assert!(m.contains("both `equals` and `pattern`"), "{m}");
        let m = msg("is_json", &[("extract", s("yes"))]);
        assert_eq!(m, "option `extract` of `is_json` expects true or false");
        let m = msg("json_pointer", &[("pointer", OptionValue::Num(1.0))]);
        assert_eq!(m, "option `pointer` of `json_pointer` expects a string");
        let m = msg("is_json", &[("pointer", s("/a"))]);
        assert_eq!(m, "`is_json` has no option `pointer`; its options: extract");
        // A number is still refused where no option takes one.
        let m = msg("contains", &[("case_sensitive", OptionValue::Num(1.0))]);
        assert!(m.contains("expects true or false"), "{m}");
    }
}
