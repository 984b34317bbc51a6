//! the structured-output metrics, each 1 (passed) or 0
//! (failed, with a reason):
//!
//! | metric | passes when |
//! |---|---|
//! | `is_json` | the trimmed answer is one JSON value — promptfoo's `is-json` ("checks if the LLM output is a valid JSON string": `JSON.parse` of the output, promptfoo `src/assertions/json.ts` `handleIsJson`). With `extract = true`, JSON inside the text counts — promptfoo's `contains-json` ("checks if the LLM output contains a valid JSON structure", `handleContainsJson`). |
//! | `json_schema` | the answer's JSON is valid against the JSON Schema (`schema` or `schema_file`), validated by the `jsonschema` crate (Stranger6667; draft from `$schema`, else 2020-12). promptfoo's `is-json` / `contains-json` with a schema `value`: with `extract = true`, passes when *any* JSON value found validates, as `handleContainsJson` does. |
//! | `json_pointer` | the value at the RFC 6901 `pointer` of the answer's JSON equals `equals`, matches the regex `pattern`, or (neither given) equals the expected answer. |
//!
//! **Extraction** (`extract = true`, promptfoo's `contains-json`): the whole
//! trimmed answer when it is JSON; else each ` ```json ` fenced block that
//! parses, then each JSON object in the text, in order. Objects are found
//! as promptfoo's `extractJsonObjects` (`src/util/json.ts`) finds them:
//! from each `{`, the balanced text that parses, the scan going on after
//! it. Two differences: brackets inside strings are not counted (a `}` in
//! a string does not end the object), and at most [`EXTRACT_STARTS`]
//! `{` are tried (promptfoo bounds each candidate at 100 000 characters
//! instead). Arrays count as the whole answer or a fenced block, not in
//! prose (promptfoo looks for objects only; a `[1]` citation is not
//! JSON output). `json_pointer` reads the first value found.
//!
//! **Schemas** are compiled once per run: when the plan loads
//! ([`prepare`], which also reads `schema_file` relative to the plan's
//! base directory, as `rubric_file` is read — the crate for the attribute
//! (a manifest it names too), the harness's `base_dir`, the working
//! directory for `evals evaluate`), and kept compiled by their text
//! ([`validator`]). A schema that does not parse or compile is a setup
//! error then, before any agent call. References are never fetched: the
//! crate is built without its HTTP and file retrieval, and the validator is
//! built `offline()`, so a `$ref` outside the schema fails to compile.
//!
//! Comparisons: `equals` as a number compares a JSON number numerically
//! (`42` equals `42.0`), as a string a JSON string, as `true`/`false` a
//! boolean. `pattern` matches the value's text (a string's content, other
//! values' compact JSON), case-sensitively. The expected answer is parsed
//! as JSON when it parses (`42`, `"x"`, `{"a": 1}`) and compared as JSON
//! (numbers numerically, objects key by key), else compared with the
//! value's text.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use eval_datasets::metric::{JsonCheck, MetricKind, MetricSpec, OptionValue, TextMetric};
use serde_json::Value;

use crate::model::{MetricError, one_line};

/// Most `{` tried as the start of an object when extracting.
pub(crate) const EXTRACT_STARTS: usize = 64;

/// Most JSON values kept from one answer when extracting.
const MAX_FOUND: usize = 16;

/// Validation errors a reason lists.
const SHOWN_ERRORS: usize = 3;

/// Characters of one error, or one value, a reason shows.
const SHOWN_CHARS: usize = 160;

/// Compiled schemas kept at once (the cache starts over when full).
const CACHED_SCHEMAS: usize = 16;

/// Whether `spec` is one of these metrics.
pub(crate) fn handles(spec: &MetricSpec) -> bool {
    matches!(spec.kind, MetricKind::Text(TextMetric::Json(_)))
}

/// 1 when `output` passes `spec`, else 0. `Err`: it cannot be scored (no
/// expected answer to compare with, a schema that does not compile).
pub(crate) fn score(
    spec: &MetricSpec,
    output: &str,
    expected: Option<&str>,
) -> Result<f64, MetricError> {
    Ok(match check(spec, output, expected)? {
        None => 1.0,
        Some(_) => 0.0,
    })
}

/// Why `output` failed `spec` (one line, bounded, escaped); `None` when it
/// passed, could not be scored, or `spec` is not one of these metrics.
pub(crate) fn explain(spec: &MetricSpec, output: &str, expected: Option<&str>) -> Option<String> {
    if !handles(spec) {
        return None;
    }
    check(spec, output, expected)
        .ok()
        .flatten()
        .map(|why| one_line(&why, 4 * SHOWN_CHARS))
}

/// `None`: passed; `Some(why)`: failed.
fn check(
    spec: &MetricSpec,
    output: &str,
    expected: Option<&str>,
) -> Result<Option<String>, MetricError> {
    let MetricKind::Text(TextMetric::Json(check)) = &spec.kind else {
        return Err(format!("`{}` is not a structured-output metric", spec.name).into());
    };
    match check {
        JsonCheck::IsJson { extract } => Ok(found(output, *extract).err()),
        JsonCheck::Schema {
            schema,
            file,
            extract,
        } => match (schema, file) {
            (Some(text), _) => check_schema(text, output, *extract),
            (None, Some(f)) => {
                Err(format!("schema_file `{f}` was not read: a plan reads it when it loads").into())
            }
            (None, None) => Err("`json_schema` has no schema".into()),
        },
        JsonCheck::Pointer {
            pointer,
            equals,
            pattern,
            extract,
        } => {
            let values = match found(output, *extract) {
                Ok(values) => values,
                Err(why) => return Ok(Some(why)),
            };
            let Some(value) = values[0].pointer(pointer) else {
                return Ok(Some(format!(
                    "the answer's JSON has no value at `{pointer}`"
                )));
            };
            let shown = one_line(&value.to_string(), SHOWN_CHARS);
            match (equals, pattern) {
                (Some(want), _) => Ok((!equals_option(value, want))
                    .then(|| format!("`{pointer}` is {shown}, not {}", option_json(want)))),
                (None, Some(p)) => {
                    let re = pattern_regex(p).map_err(|e| {
                        format!(
                            "`pattern` is not a valid regex: {}",
                            one_line(&e.to_string(), 200)
                        )
                    })?;
                    Ok((!re.is_match(&text_of(value))).then(|| {
                        format!(
                            "`{pointer}` is {shown}, which `pattern` {} does not match",
                            one_line(p, 80)
                        )
                    }))
                }
                (None, None) => {
                    let expected = match expected.map(str::trim) {
                        None => {
                            return Err(format!(
                                "`{}` needs an expected answer, or `equals` or `pattern`",
                                spec.name
                            )
                            .into());
                        }
                        Some("") => {
                            return Err(format!(
                                "`{}` cannot score against an empty expected answer",
                                spec.name
                            )
                            .into());
                        }
                        Some(e) => e,
                    };
                    let same = match serde_json::from_str::<Value>(expected) {
                        Ok(want) => json_equal(value, &want),
                        Err(_) => text_of(value) == expected,
                    };
                    Ok((!same).then(|| {
                        format!(
                            "`{pointer}` is {shown}, not the expected answer {}",
                            one_line(expected, SHOWN_CHARS)
                        )
                    }))
                }
            }
        }
    }
}

/// `json_schema` with the schema's text: `None` when a JSON value of
/// `output` is valid, else the first value's first errors.
fn check_schema(schema: &str, output: &str, extract: bool) -> Result<Option<String>, MetricError> {
    let validator =
        validator(schema).map_err(|why| MetricError::from(format!("the schema {why}")))?;
    let values = match found(output, extract) {
        Ok(values) => values,
        Err(why) => return Ok(Some(why)),
    };
    if values.iter().any(|v| validator.is_valid(v)) {
        return Ok(None);
    }
    let mut errors = validator.iter_errors(&values[0]);
    let shown: Vec<String> = errors
        .by_ref()
        .take(SHOWN_ERRORS)
        .map(|e| {
            let at = e.instance_path().as_str();
            let at = if at.is_empty() { "(root)" } else { at };
            // A key's newline shows as `\n`, not as a space.
            let at = one_line(&at.escape_debug().to_string(), 80);
            format!("at {at}: {}", one_line(&e.to_string(), SHOWN_CHARS))
        })
        .collect();
    let more = errors.count();
    let of = if values.len() > 1 {
        format!(
            "none of the {} JSON values found matches the schema; the first's errors",
            values.len()
        )
    } else {
        "the JSON does not match the schema".to_string()
    };
    let more = if more > 0 {
        format!("; and {more} more")
    } else {
        String::new()
    };
    Ok(Some(format!("{of}: {}{more}", shown.join("; "))))
}

/// The JSON values of `output`: the trimmed answer; with `extract`, else
/// the fenced ` ```json ` blocks and the objects in its text. `Err`: why
/// there are none.
fn found(output: &str, extract: bool) -> Result<Vec<Value>, String> {
    let trimmed = output.trim();
    if trimmed.is_empty() {
        return Err("the answer is empty, not JSON".into());
    }
    let whole = match crate::config::inner_json(trimmed) {
        Ok(value) => return Ok(vec![value]),
        Err(e) => e,
    };
    if !extract {
        return Err(format!(
            "the answer is not JSON ({whole}; `extract = true` looks for JSON inside the text)"
        ));
    }
    let mut values = fenced(output);
    values.extend(objects(output));
    values.truncate(MAX_FOUND);
    if values.is_empty() {
        return Err(
            "the answer holds no JSON: no ```json block parses and no JSON object is in its text"
                .into(),
        );
    }
    Ok(values)
}

/// The content of each ` ```json ` fenced block that parses, in order.
fn fenced(text: &str) -> Vec<Value> {
    let mut values = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("```") {
        let after = &rest[at + 3..];
        let line_end = after.find('\n').unwrap_or(after.len());
        let info = after[..line_end].trim();
        let body = after.get(line_end + 1..).unwrap_or("");
        let Some(close) = body.find("```") else {
            break;
        };
        if info.eq_ignore_ascii_case("json")
            && let Ok(value) = serde_json::from_str::<Value>(body[..close].trim())
        {
            values.push(value);
        }
        rest = &body[close + 3..];
    }
    values
}

/// The JSON objects in `text`, in order (see the module's note): from each
/// `{`, the balanced text, if it parses; the scan goes on after it.
fn objects(text: &str) -> Vec<Value> {
    let bytes = text.as_bytes();
    let (mut values, mut tried, mut i) = (Vec::new(), 0usize, 0usize);
    while i < bytes.len() && tried < EXTRACT_STARTS && values.len() < MAX_FOUND {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        tried += 1;
        // `{` and the closing bracket are ASCII: the slice is on char boundaries.
        if let Some(end) = balanced_end(bytes, i)
            && let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(&text[i..=end])
        {
            values.push(value);
            i = end + 1;
            continue;
        }
        i += 1;
    }
    values
}

/// Where the bracket opened at `start` closes, brackets in strings not
/// counted.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (k, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// A value's text: a string's content, other values' compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether `value` is what `equals` gives: a number numerically, a string
/// or a boolean exactly.
fn equals_option(value: &Value, want: &OptionValue) -> bool {
    match want {
        OptionValue::Num(n) => value.is_number() && value.as_f64() == Some(*n),
        OptionValue::Str(s) => value.as_str() == Some(s.as_ref()),
        OptionValue::Bool(b) => value.as_bool() == Some(*b),
    }
}

/// `equals` as JSON, for a reason.
fn option_json(want: &OptionValue) -> String {
    match want {
        OptionValue::Num(n) => n.to_string(),
        OptionValue::Str(s) => one_line(&Value::String(s.to_string()).to_string(), SHOWN_CHARS),
        OptionValue::Bool(b) => b.to_string(),
    }
}

/// JSON equality with numbers compared by value (`42` equals `42.0`;
/// integers exactly, others as f64).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// `json_pointer`'s `pattern` compiled (case-sensitive, at most 4 MiB
/// compiled, as the `regex` metric's), once per pattern: at most
/// [`CACHED_SCHEMAS`] kept.
fn pattern_regex(pattern: &str) -> Result<Arc<regex::Regex>, regex::Error> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(re) = cache.lock().ok().and_then(|c| c.get(pattern).cloned()) {
        return Ok(re);
    }
    let re = Arc::new(
        regex::RegexBuilder::new(pattern)
            .size_limit(1 << 22)
            .build()?,
    );
    if let Ok(mut c) = cache.lock() {
        if c.len() >= CACHED_SCHEMAS {
            c.clear();
        }
        c.insert(pattern.to_string(), re.clone());
    }
    Ok(re)
}

/// The schema `text` compiled, from the cache when it was compiled before
/// (by its text). `Err`: why it cannot be used ("is not JSON: …", "does not
/// compile: …"). References outside it are refused, never fetched.
pub(crate) fn validator(text: &str) -> Result<Arc<jsonschema::Validator>, String> {
    type Cache = HashMap<String, Arc<jsonschema::Validator>>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(v) = cache.lock().ok().and_then(|c| c.get(text).cloned()) {
        return Ok(v);
    }
    let schema: Value = serde_json::from_str(text).map_err(|e| format!("is not JSON: {e}"))?;
    let compiled = jsonschema::options()
        .offline()
        .build(&schema)
        .map_err(|e| {
            format!(
                "does not compile: {}",
                one_line(&e.to_string(), 2 * SHOWN_CHARS)
            )
        })?;
    let compiled = Arc::new(compiled);
    if let Ok(mut c) = cache.lock() {
        if c.len() >= CACHED_SCHEMAS {
            c.clear();
        }
        c.insert(text.to_string(), compiled.clone());
    }
    Ok(compiled)
}

/// A `json_schema` spec made ready when its plan loads: its `schema_file`
/// read (relative to `base`), and its schema compiled (kept for the run).
/// `Err`: the setup error, naming the file or option and what is wrong.
pub(crate) fn prepare(spec: &mut MetricSpec, base: &Path) -> Result<(), String> {
    let MetricKind::Text(TextMetric::Json(JsonCheck::Schema {
        schema,
        file,
        extract,
    })) = &spec.kind
    else {
        return Ok(());
    };
    let (text, origin) = match (schema, file) {
        (Some(text), _) => (text.clone(), "`schema`".to_string()),
        (None, Some(f)) => {
            let path = base.join(f);
            let text =
                eval_datasets::files::read_text(&path, eval_datasets::files::PROMPT_MAX_BYTES)
                    .map_err(|e| {
                        format!(
                            "schema_file `{f}` of metric `{}`: cannot read {}: {e}",
                            spec.name,
                            path.display()
                        )
                    })?;
            (text, format!("schema_file `{f}` ({})", path.display()))
        }
        (None, None) => return Ok(()),
    };
    validator(&text).map_err(|why| format!("{origin} of metric `{}` {why}", spec.name))?;
    spec.kind = MetricKind::Text(TextMetric::Json(JsonCheck::Schema {
        schema: Some(text),
        file: None,
        extract: *extract,
    }));
    Ok(())
}

#[cfg(test)]
mod tests;
