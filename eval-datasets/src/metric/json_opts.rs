//! the structured-output metrics `is_json`, `json_schema`
//! and `json_pointer` (scored by eval-runtime's `metrics::json`): their
//! options read, checked and resolved into a [`JsonCheck`], and written out
//! again for [`MetricSpec::decl_parts`](super::MetricSpec::decl_parts).
//!
//! What is checked here, where the macro sees it at compile time: a
//! `schema` that is not JSON, `schema` and `schema_file` both or neither,
//! a `pointer` that is not an RFC 6901 JSON pointer, `equals` with
//! `pattern`. Whether a schema compiles is checked when a plan loads
//! (eval-runtime; this crate has no JSON Schema validator).

use super::catalog::{MetricInfo, Need, Op, OptionDef, OptionKind, Threshold};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::options::{OptionValue, Resolved};
use super::{MetricKind, TextMetric};

/// `extract = true`: JSON inside the text counts.
const EXTRACT: OptionDef = OptionDef::flag("extract", false);

/// The structured-output metrics: text metrics (scored by eval-runtime's
/// `metrics::json` through `metrics::text`), pass/fail.
pub(super) static METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "is_json",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[],
        options: &[EXTRACT],
        summary: "promptfoo is-json: 1 if the trimmed answer is one JSON value, else 0; extract = true: promptfoo contains-json, a ```json block or a JSON object in the text counts",
        reference: "promptfoo is-json / contains-json assertions",
        build,
    },
    MetricInfo {
        name: "json_schema",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[],
        options: &[
            OptionDef::text("schema"),
            OptionDef::text("schema_file"),
            EXTRACT,
        ],
        summary: "1 if the answer is JSON valid against the JSON Schema `schema = \"{...}\"` or `schema_file = \"...\"` (promptfoo is-json / contains-json with a schema), else 0 with the first errors and their JSON pointers",
        reference: "JSON Schema 2020-12, validated by the jsonschema crate; promptfoo is-json with a schema",
        build,
    },
    MetricInfo {
        name: "json_pointer",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[Need::Expected],
        options: &[
            OptionDef::text("pointer"),
            OptionDef {
                name: "equals",
                kind: OptionKind::Value,
                default: None,
            },
            OptionDef::text("pattern"),
            EXTRACT,
        ],
        summary: "1 if the answer's JSON has at `pointer` (RFC 6901, e.g. \"/refund/amount\") the value `equals` gives, a match of the regex `pattern`, or else the expected answer; else 0",
        reference: "RFC 6901 (JSON Pointer)",
        build,
    },
];

/// The check of a structured-output spec from its checked options.
fn build(o: &Resolved<'_>) -> Result<MetricKind, MetricSpecError> {
    let pattern = super::text::checked_pattern(o)?;
    let options: Vec<(String, OptionValue, SpecPart)> = o
        .written()
        .filter(|(key, _, _)| *key != "pattern")
        .map(|(key, value, part)| (key.to_string(), value.clone(), part))
        .collect();
    let check = JsonCheck::resolve(o.name, o.info_name(), &options, pattern)?;
    Ok(MetricKind::Text(TextMetric::Json(check)))
}

/// A structured-output metric with its options resolved: the kind of
/// `TextMetric::Json`. Exhaustive, so that its
/// scoring matches every check with no catch-all arm.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonCheck {
    /// `is_json`.
    IsJson {
        /// `extract = true`: JSON inside the text counts (promptfoo `contains-json`).
        extract: bool,
    },
    /// `json_schema`.
    Schema {
        /// The schema's JSON text (`schema`, or `schema_file`'s once read).
        schema: Option<String>,
        /// `schema_file`, relative to the run's base directory (as
        /// `rubric_file`), until read.
        file: Option<String>,
        /// `extract = true`: JSON inside the text counts.
        extract: bool,
    },
    /// `json_pointer`.
    Pointer {
        /// The RFC 6901 pointer (`pointer`).
        pointer: String,
        /// The value wanted there (`equals`).
        equals: Option<OptionValue>,
        /// A regex its text must match (`pattern`).
        pattern: Option<String>,
        /// `extract = true`: JSON inside the text counts.
        extract: bool,
    },
}

impl JsonCheck {
    /// Whether JSON inside the text counts (`extract = true`).
    pub fn extract(&self) -> bool {
        match self {
            JsonCheck::IsJson { extract }
            | JsonCheck::Schema { extract, .. }
            | JsonCheck::Pointer { extract, .. } => *extract,
        }
    }

    /// Whether it compares with the expected answer: a `json_pointer`
    /// without `equals` or `pattern`.
    pub fn needs_expected(&self) -> bool {
        matches!(
            self,
            JsonCheck::Pointer {
                equals: None,
                pattern: None,
                ..
            }
        )
    }
}

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

impl JsonCheck {
    /// The check of metric `metric` (`is_json`, `json_schema` or
    /// `json_pointer`), written `name`, from its `options` (as written,
    /// with their places) and `pattern` (already checked as a regex).
    pub(super) fn resolve(
        name: &str,
        metric: &str,
        options: &[(String, OptionValue, SpecPart)],
        pattern: Option<String>,
    ) -> Result<JsonCheck, MetricSpecError> {
        let mut read = JsonOptions::default();
        for (key, value, part) in options {
            read.set(name, key, value, *part)?;
        }
        read.into_check(metric, pattern)
    }
}

impl JsonOptions {
    /// Reads option `key` of metric `name`.
    fn set(
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

    /// The check of metric `metric` (`is_json`, `json_schema` or
    /// `json_pointer`) with these options and `pattern` (already checked
    /// as a regex).
    fn into_check(
        self,
        metric: &str,
        pattern: Option<String>,
    ) -> Result<JsonCheck, MetricSpecError> {
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
                    Ok(()) => Ok(JsonCheck::Schema {
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
                (None, Some((file, _))) => Ok(JsonCheck::Schema {
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
                    (equals, pattern) => Ok(JsonCheck::Pointer {
                        pointer,
                        equals: equals.map(|(v, _)| v),
                        pattern,
                        extract,
                    }),
                }
            }
            _ => Ok(JsonCheck::IsJson { extract }),
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

#[cfg(test)]
mod tests;
