use super::*;

fn spec(text: &str) -> MetricSpec {
    eval_datasets::metric::parse_specs(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .remove(0)
}

/// The score and, when it failed, why.
fn run(spec: &MetricSpec, output: &str, expected: Option<&str>) -> (f64, Option<String>) {
    let score = score(spec, output, expected).unwrap();
    (score, explain(spec, output, expected))
}

#[test]
fn is_json_takes_one_json_value_as_promptfoo_is_json() {
    let is_json = spec("is_json");
    for good in [r#"{"a": 1}"#, " [1, 2]\n", "42", "\"text\"", "null", "true"] {
        assert_eq!(run(&is_json, good, None), (1.0, None), "{good:?}");
    }
    let (s, why) = run(&is_json, r#"Sure! {"a": 1}"#, None);
    assert_eq!(s, 0.0);
    let why = why.unwrap();
    assert!(
        why.starts_with("the answer is not JSON (expected value at line 1 column 1;"),
        "{why}"
    );
    assert!(
        why.contains("`extract = true`"),
        "it says what to change: {why}"
    );
    for bad in ["", "  ", r#"{"a": 1} {"b": 2}"#, "{'a': 1}", r#"{"a": 1,}"#] {
        assert_eq!(run(&is_json, bad, None).0, 0.0, "{bad:?}");
    }
    assert_eq!(
        run(&is_json, "", None).1.as_deref(),
        Some("the answer is empty, not JSON")
    );
}

#[test]
fn extract_finds_json_in_text_as_promptfoo_contains_json() {
    let found = spec("is_json(extract = true)");
    for good in [
        r#"Sure! {"a": 1} Anything else?"#,
        "Here:\n```json\n[1, 2]\n```\nDone.",
        "```JSON\n{\"a\": 1}\n```",
        r#"{ not json } but {"ok": true}"#,
        // A bracket inside a string does not end the object.
        r#"The reply: {"text": "a } and a {", "n": 1}."#,
        "[1, 2, 3]",
    ] {
        assert_eq!(run(&found, good, None), (1.0, None), "{good:?}");
    }
    for bad in [
        "No JSON here.",
        "As said in [1], it is fine.",
        "{ unclosed",
        "```json\n{broken\n```",
    ] {
        let (s, why) = run(&found, bad, None);
        assert_eq!(s, 0.0, "{bad:?}");
        assert!(
            why.unwrap().starts_with("the answer holds no JSON"),
            "{bad:?}"
        );
    }
    // The fenced block first, then the objects of the text, in order.
    let values = super::found("a {\"x\": 1} b ```json\n{\"y\": 2}\n``` c", true).unwrap();
    assert_eq!(values[0], serde_json::json!({"y": 2}));
    assert_eq!(values[1], serde_json::json!({"x": 1}));
    // At most EXTRACT_STARTS `{` are tried: a flood of them ends the scan.
    let flood = format!("{}{{\"late\": true}}", "{ ".repeat(EXTRACT_STARTS));
    assert!(super::found(&flood, true).is_err());
    let within = format!("{}{{\"late\": true}}", "{ ".repeat(EXTRACT_STARTS - 1));
    assert!(super::found(&within, true).is_ok());
}

/// Cases of the official JSON-Schema-Test-Suite
/// (github.com/json-schema-org/JSON-Schema-Test-Suite, `tests/draft2020-12/`):
/// `required.json` at f6523449, `type.json` at 3162429d,
/// `exclusiveMinimum.json` at a1187928 — schema, data and `valid` copied as
/// written there (a few tests of each group).
const SUITE: &str = r#"[
  {"file": "required.json", "description": "required validation",
   "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "properties": {"foo": {}, "bar": {}}, "required": ["foo"]},
   "tests": [
     {"description": "present required property is valid", "data": {"foo": 1}, "valid": true},
     {"description": "non-present required property is invalid", "data": {"bar": 1}, "valid": false},
     {"description": "ignores arrays", "data": [], "valid": true},
     {"description": "null is valid", "data": null, "valid": true}]},
  {"file": "required.json", "description": "required with escaped characters",
   "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "required": ["foo\nbar", "foo\"bar", "foo\\bar", "foo\rbar", "foo\tbar", "foo\fbar"]},
   "tests": [
     {"description": "object with all properties present is valid",
      "data": {"foo\nbar": 1, "foo\"bar": 1, "foo\\bar": 1, "foo\rbar": 1, "foo\tbar": 1, "foo\fbar": 1},
      "valid": true},
     {"description": "object with some properties missing is invalid",
      "data": {"foo\nbar": "1", "foo\"bar": "1"}, "valid": false}]},
  {"file": "type.json", "description": "integer type matches integers",
   "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer"},
   "tests": [
     {"description": "an integer is an integer", "data": 1, "valid": true},
     {"description": "a float with zero fractional part is an integer", "data": 1.0, "valid": true},
     {"description": "a float is not an integer", "data": 1.1, "valid": false},
     {"description": "a string is still not an integer, even if it looks like one", "data": "1", "valid": false},
     {"description": "null is not an integer", "data": null, "valid": false}]},
  {"file": "type.json", "description": "multiple types can be specified in an array",
   "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": ["integer", "string"]},
   "tests": [
     {"description": "an integer is valid", "data": 1, "valid": true},
     {"description": "a string is valid", "data": "foo", "valid": true},
     {"description": "a float is invalid", "data": 1.1, "valid": false},
     {"description": "an object is invalid", "data": {}, "valid": false}]},
  {"file": "exclusiveMinimum.json", "description": "exclusiveMinimum validation",
   "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "exclusiveMinimum": 1.1},
   "tests": [
     {"description": "above the exclusiveMinimum is valid", "data": 1.2, "valid": true},
     {"description": "boundary point is invalid", "data": 1.1, "valid": false},
     {"description": "below the exclusiveMinimum is invalid", "data": 0.6, "valid": false},
     {"description": "ignores non-numbers", "data": "x", "valid": true}]},
  {"file": "exclusiveMinimum.json", "description": "exclusiveMinimum validation with signed integer",
   "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "exclusiveMinimum": -2},
   "tests": [
     {"description": "boundary point with float is invalid", "data": -2.0, "valid": false},
     {"description": "float below the exclusiveMinimum is invalid", "data": -2.0001, "valid": false},
     {"description": "negative above the exclusiveMinimum is valid", "data": -1, "valid": true}]}
]"#;

#[test]
fn json_schema_agrees_with_the_official_test_suite() {
    let groups: Vec<Value> = serde_json::from_str(SUITE).unwrap();
    let mut checked = 0;
    for group in &groups {
        let schema = group["schema"].to_string();
        let metric = MetricSpec::new(
            "json_schema",
            &[("schema", OptionValue::Str(schema.into()))],
            None,
        )
        .unwrap();
        for case in group["tests"].as_array().unwrap() {
            // The answer is the data written as JSON text.
            let answer = case["data"].to_string();
            let want = if case["valid"] == Value::Bool(true) {
                1.0
            } else {
                0.0
            };
            let (got, why) = run(&metric, &answer, None);
            assert_eq!(
                got, want,
                "{} / {} / {}: {why:?}",
                group["file"], group["description"], case["description"]
            );
            assert_eq!(
                why.is_some(),
                want == 0.0,
                "a failure says why, a pass does not"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 22);
}

#[test]
fn a_schema_failure_lists_the_first_errors_with_their_pointers() {
    let refund = spec(
        r#"json_schema(schema = "{\"type\": \"object\", \"required\": [\"refund\"], \"properties\": {\"refund\": {\"type\": \"object\", \"required\": [\"amount\", \"currency\"], \"properties\": {\"amount\": {\"type\": \"number\", \"minimum\": 0}, \"currency\": {\"enum\": [\"EUR\", \"USD\"]}}}}}")"#,
    );
    let good = r#"{"refund": {"amount": 42.5, "currency": "EUR"}}"#;
    assert_eq!(run(&refund, good, None), (1.0, None));
    let (s, why) = run(
        &refund,
        r#"{"refund": {"amount": -5, "currency": "GBP"}}"#,
        None,
    );
    assert_eq!(s, 0.0);
    let why = why.unwrap();
    assert!(
        why.starts_with("the JSON does not match the schema: "),
        "{why}"
    );
    assert!(
        why.contains("at /refund/amount: -5 is less than the minimum of 0"),
        "{why}"
    );
    assert!(why.contains("at /refund/currency: "), "{why}");
    let (_, why) = run(&refund, r#"{"other": 1}"#, None);
    assert!(
        why.as_deref()
            .is_some_and(|w| w.contains("at (root): \"refund\" is a required property")),
        "{why:?}"
    );
    // Not JSON at all: said so, not a schema error.
    let (_, why) = run(&refund, "I refunded 42 EUR.", None);
    assert!(why.unwrap().starts_with("the answer is not JSON"));

    // Many errors: the first three, and how many more. Keys from the
    // answer are escaped and the reason is bounded.
    let strict =
        spec(r#"json_schema(schema = "{\"additionalProperties\": {\"type\": \"integer\"}}")"#);
    let long_key = "k".repeat(500);
    let answer = format!(r#"{{"a\nb": "x", "c": "y", "d": "z", "e": "w", "{long_key}": "v"}}"#);
    let (s, why) = run(&strict, &answer, None);
    assert_eq!(s, 0.0);
    let why = why.unwrap();
    assert!(
        why.ends_with("; and 2 more") || why.contains("more chars)"),
        "{why}"
    );
    assert!(
        why.contains("at /a\\nb: "),
        "a newline in a key is escaped: {why}"
    );
    assert!(!why.contains('\n'));
    assert!(why.chars().count() <= 4 * SHOWN_CHARS + 40, "{}", why.len());
}

#[test]
fn with_extract_any_json_value_found_may_match_as_in_contains_json() {
    let schema = spec(r#"json_schema(schema = "{\"required\": [\"id\"]}", extract = true)"#);
    let answer = "Example: {\"x\": 1}. Answer:\n```json\n{\"id\": 7}\n```";
    assert_eq!(run(&schema, answer, None), (1.0, None));
    let (s, why) = run(&schema, r#"First {"x": 1} then {"y": 2}"#, None);
    assert_eq!(s, 0.0);
    assert!(
        why.unwrap().starts_with("none of the 2 JSON values found matches the schema; the first's errors: at (root): \"id\" is a required property"),
    );
    // Without extract, the same answer is not JSON.
    let whole = spec(r#"json_schema(schema = "{\"required\": [\"id\"]}")"#);
    assert_eq!(run(&whole, answer, None).0, 0.0);
}

#[test]
fn a_schema_is_compiled_once_and_a_bad_one_says_why() {
    let text = r#"{"type": "object", "title": "compiled once"}"#;
    let a = validator(text).unwrap();
    let b = validator(text).unwrap();
    assert!(Arc::ptr_eq(&a, &b), "the second use takes the compiled one");
    let e = validator(r#"{"type": "objekt"}"#).unwrap_err();
    assert!(e.starts_with("does not compile: "), "{e}");
    let e = validator(r#"{"minimum": "zero"}"#).unwrap_err();
    assert!(e.starts_with("does not compile: "), "{e}");
    let e = validator("{\"type\": ").unwrap_err();
    assert!(e.starts_with("is not JSON: EOF while parsing"), "{e}");
    // Scored outside a plan: the sample's metric cannot be computed.
    let bad = spec(r#"json_schema(schema = "{\"type\": 12}")"#);
    let e = score(&bad, "{}", None).unwrap_err().to_string();
    assert!(e.starts_with("the schema does not compile: "), "{e}");
}

#[test]
fn a_remote_ref_is_refused_and_never_fetched() {
    // A listener on loopback that would see any attempt to fetch.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for reference in [
        format!("http://127.0.0.1:{port}/refund.json"),
        format!("http://127.0.0.1:{port}/defs.json#/$defs/amount"),
        "file:///etc/hostname".to_string(),
    ] {
        let schema = format!(r#"{{"properties": {{"amount": {{"$ref": "{reference}"}}}}}}"#);
        let e = validator(&schema).unwrap_err();
        assert!(e.starts_with("does not compile: "), "{reference}: {e}");
        assert!(e.contains("Retrieval is disabled"), "{reference}: {e}");
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("a $ref was fetched: {other:?}"),
    }
    // A reference inside the schema still resolves.
    let local = r##"{"$defs": {"amount": {"type": "number"}}, "properties": {"amount": {"$ref": "#/$defs/amount"}}}"##;
    let v = validator(local).unwrap();
    assert!(v.is_valid(&serde_json::json!({"amount": 1})));
    assert!(!v.is_valid(&serde_json::json!({"amount": "1"})));
}

#[test]
fn json_pointer_compares_equals_pattern_or_the_expected_answer() {
    let answer = r#"{"refund": {"amount": 42.0, "currency": "EUR", "approved": true}, "ticket": "T-1042", "items": [{"sku": "A"}]}"#;
    let cases: [(&str, Option<&str>, f64); 12] = [
        (
            r#"json_pointer(pointer = "/refund/amount", equals = 42)"#,
            None,
            1.0,
        ),
        (
            r#"json_pointer(pointer = "/refund/amount", equals = 41.5)"#,
            None,
            0.0,
        ),
        (
            r#"json_pointer(pointer = "/refund/currency", equals = "EUR")"#,
            None,
            1.0,
        ),
        // A string is not a number, whatever it reads.
        (
            r#"json_pointer(pointer = "/refund/amount", equals = "42")"#,
            None,
            0.0,
        ),
        (
            r#"json_pointer(pointer = "/refund/approved", equals = true)"#,
            None,
            1.0,
        ),
        (
            r#"json_pointer(pointer = "/ticket", pattern = "^T-[0-9]+$")"#,
            None,
            1.0,
        ),
        (
            r#"json_pointer(pointer = "/ticket", pattern = "^t-")"#,
            None,
            0.0,
        ),
        (r#"json_pointer(pointer = "/items/0/sku")"#, Some("A"), 1.0),
        (
            r#"json_pointer(pointer = "/refund/amount")"#,
            Some("42"),
            1.0,
        ),
        (
            r#"json_pointer(pointer = "/items/0")"#,
            Some(r#"{"sku": "A"}"#),
            1.0,
        ),
        (
            r#"json_pointer(pointer = "/refund/currency")"#,
            Some("\"USD\""),
            0.0,
        ),
        (
            r#"json_pointer(pointer = "/refund/approved")"#,
            Some("true"),
            1.0,
        ),
    ];
    for (text, expected, want) in cases {
        let (got, why) = run(&spec(text), answer, expected);
        assert_eq!(got, want, "{text} against {expected:?}: {why:?}");
    }
    let (_, why) = run(
        &spec(r#"json_pointer(pointer = "/refund/amount", equals = 41.5)"#),
        answer,
        None,
    );
    assert_eq!(why.as_deref(), Some("`/refund/amount` is 42.0, not 41.5"));
    let (_, why) = run(
        &spec(r#"json_pointer(pointer = "/refund/currency")"#),
        answer,
        Some("USD"),
    );
    assert_eq!(
        why.as_deref(),
        Some("`/refund/currency` is \"EUR\", not the expected answer USD")
    );
    // A missing pointer, and an answer that is not JSON, fail with why.
    let (s, why) = run(
        &spec(r#"json_pointer(pointer = "/refund/reason", equals = "late")"#),
        answer,
        None,
    );
    assert_eq!(s, 0.0);
    assert_eq!(
        why.as_deref(),
        Some("the answer's JSON has no value at `/refund/reason`")
    );
    let (s, why) = run(
        &spec(r#"json_pointer(pointer = "/a", equals = 1)"#),
        "a = 1",
        None,
    );
    assert_eq!(s, 0.0);
    assert!(why.unwrap().starts_with("the answer is not JSON"));
    // With extract, the first JSON value of the text is read.
    let extracted = spec(r#"json_pointer(pointer = "/a", equals = 1, extract = true)"#);
    assert_eq!(
        run(&extracted, "Result: {\"a\": 1} (and {\"a\": 2})", None).0,
        1.0
    );
    // Without equals or pattern, an expected answer is needed.
    let e = score(&spec(r#"json_pointer(pointer = "/a")"#), "{\"a\": 1}", None).unwrap_err();
    assert!(e.to_string().contains("needs an expected answer"), "{e}");
}

#[test]
fn json_equality_compares_numbers_by_value() {
    use serde_json::json;
    assert!(json_equal(&json!(42), &json!(42.0)));
    assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
    assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    assert!(!json_equal(
        &json!(9007199254740993u64),
        &json!(9007199254740992u64)
    ));
    assert!(!json_equal(&json!("1"), &json!(1)));
}

#[test]
fn a_schema_file_is_read_and_compiled_when_the_plan_loads() {
    let dir = std::env::temp_dir().join(format!("eval-json-prepare-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::write(dir.join("schemas/ok.json"), r#"{"type": "object"}"#).unwrap();
    std::fs::write(dir.join("schemas/bad.json"), r#"{"type": "objekt"}"#).unwrap();
    std::fs::write(dir.join("schemas/broken.json"), "{\"type\": ").unwrap();
    let mut ok = spec(r#"json_schema(schema_file = "schemas/ok.json", extract = true)"#);
    prepare(&mut ok, &dir).unwrap();
    assert_eq!(
        ok.kind,
        MetricKind::Text(TextMetric::Json(JsonCheck::Schema {
            schema: Some(r#"{"type": "object"}"#.into()),
            file: None,
            extract: true
        }))
    );
    assert_eq!(run(&ok, "say {\"a\": 1}", None), (1.0, None));
    let mut bad = spec(r#"json_schema(schema_file = "schemas/bad.json")"#);
    let e = prepare(&mut bad, &dir).unwrap_err();
    assert!(
        e.starts_with("schema_file `schemas/bad.json` (")
            && e.contains(") of metric `json_schema` does not compile: "),
        "{e}"
    );
    let mut broken = spec(r#"json_schema(schema_file = "schemas/broken.json")"#);
    let e = prepare(&mut broken, &dir).unwrap_err();
    assert!(
        e.contains("of metric `json_schema` is not JSON: EOF while parsing"),
        "{e}"
    );
    let mut missing = spec(r#"json_schema(schema_file = "schemas/nope.json")"#);
    let e = prepare(&mut missing, &dir).unwrap_err();
    assert!(
        e.starts_with("schema_file `schemas/nope.json` of metric `json_schema`: cannot read "),
        "{e}"
    );
    // An inline schema that parses but does not compile is caught here too.
    let mut inline = spec(r#"json_schema(schema = "{\"type\": 12}")"#);
    let e = prepare(&mut inline, &dir).unwrap_err();
    assert!(
        e.starts_with("`schema` of metric `json_schema` does not compile: "),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
