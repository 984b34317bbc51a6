use super::*;
use crate::metric::{MetricKind, MetricSpec, Need, Op};

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
        MetricKind::Text(TextMetric::Json(JsonCheck::IsJson { extract: true })),
        "extract is read"
    );
    assert_eq!(
        specs[4].kind,
        MetricKind::Text(TextMetric::Json(JsonCheck::Pointer {
            pointer: "/refund/amount".into(),
            equals: Some(OptionValue::Num(42.0)),
            pattern: None,
            extract: false
        }))
    );
    for spec in &specs {
        assert_eq!((spec.op, spec.threshold), (Op::AtLeast, 1.0));
        assert!(spec.pass_fail(), "{}", spec.name);
        let (name, options, bound) = spec.decl_parts();
        let options: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        assert_eq!(&MetricSpec::new(&name, &options, bound).unwrap(), spec);
    }
    // `equals` or `pattern` stands in for the expected answer.
    assert!(specs[4].needs().is_empty() && specs[5].needs().is_empty());
    assert_eq!(specs[6].needs(), &[Need::Expected]);
    // Parsed from the command line's syntax too, numbers and all.
    let parsed = crate::metric::parse_specs(
        r#"json_pointer(pointer = "/refund/amount", equals = 42), json_schema(schema = "{\"type\": \"integer\"}", extract = true)"#,
    )
    .unwrap();
    assert_eq!(parsed[0], specs[4]);
}

#[test]
fn bad_json_options_are_refused_with_what_to_write() {
    let msg =
        |name: &str, options: &[(&str, OptionValue)]| spec(name, options).unwrap_err().to_string();
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
