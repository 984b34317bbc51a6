//! One bomb per shape, each refused before it is built, and real requests
//! (recorded from the SDKs: `tests/fixtures/spans/`) counted as prost and
//! serde decode them. The wire format is the protobuf encoding
//! (protobuf.dev/programming-guides/encoding) of opentelemetry-proto 0.33's
//! messages; the JSON, the OTLP/JSON mapping (opentelemetry.io/docs/specs/otlp).

use std::io::Write;
use std::time::Instant;

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, KeyValueList};

use super::*;

/// A length-delimited field.
fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2];
    prost::encoding::encode_varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

/// A request of one resource, one scope, holding `spans` (each encoded).
fn request_of(spans: &[u8]) -> Vec<u8> {
    field(1, &field(2, spans))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn too_large(r: Result<(ExportTraceServiceRequest, Shape), Refusal>) -> String {
    match r {
        Err(Refusal::TooLarge(why)) => why,
        other => panic!("not refused as too large: {other:?}"),
    }
}

#[test]
fn the_bounds_hold_what_a_request_may_build() {
    // The worst a request builds: its structure, its strings (at most its
    // bytes), and the inflated body it is decoded from.
    let worst = LIMITS.structure + 2 * LIMITS.body;
    assert!(worst <= 56 << 20, "{worst}");
    // An SDK's batch (512 spans, 128 attributes each, the SDK limits'
    // defaults) fits.
    let batch = 512 * 2 * (Msg::Span.size() + 128 * Msg::KeyValue.size());
    assert!(batch <= 10 << 20, "{batch}: the guide says under 10 MiB");
    const { assert!(512 <= LIMITS.spans) };
}

#[test]
fn a_gzip_ratio_bomb_is_refused_once_inflated_past_the_limit() {
    // 17 MiB of zeros in ~17 KB.
    let bomb = gzip(&vec![0u8; 17 << 20]);
    assert!(bomb.len() < 64 << 10, "{}", bomb.len());
    let started = Instant::now();
    let e = inflate(&bomb, LIMITS.body).unwrap_err();
    assert!(matches!(e, Refusal::TooLarge(_)), "{e:?}");
    assert!(started.elapsed().as_secs() < 5);
    // Within the limit, inflated whole.
    assert_eq!(inflate(&gzip(b"abc"), LIMITS.body).unwrap(), b"abc");
    assert!(matches!(
        inflate(b"not gzip", LIMITS.body),
        Err(Refusal::Malformed(_))
    ));
}

#[test]
fn sixteen_mib_of_empty_spans_is_refused_by_its_count_not_decoded() {
    // The issue's bomb: 16 MiB of empty spans (two bytes each, `0x12 0x00`)
    // under one scope, gzipped to some 16 KB.
    let spans = [0x12u8, 0x00].repeat((LIMITS.body - 16) / 2);
    let body = request_of(&spans);
    assert!(body.len() <= LIMITS.body);
    assert!(gzip(&body).len() < 64 << 10);
    let started = Instant::now();
    let why = too_large(decode(&body, false, &LIMITS));
    assert!(why.contains("more than 8192 spans"), "{why}");
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    // As many empty resources or scopes: refused by what they would take.
    let resources = [0x0au8, 0x00].repeat((LIMITS.body - 16) / 2);
    let why = too_large(decode(&resources, false, &LIMITS));
    assert!(why.contains("MiB to hold decoded"), "{why}");
}

#[test]
fn a_span_with_a_million_empty_attributes_is_refused() {
    // Attributes are field 9 of a span: `0x4a 0x00` each.
    let attributes = [0x4au8, 0x00].repeat(1 << 20);
    let body = request_of(&field(2, &attributes));
    let why = too_large(decode(&body, false, &LIMITS));
    assert!(why.contains("attributes"), "{why}");
    // And as many events, links, or values in one array.
    let events = [0x5au8, 0x00].repeat(1 << 20);
    too_large(decode(&request_of(&field(2, &events)), false, &LIMITS));
    let values = [0x0au8, 0x00].repeat(1 << 20);
    let array = field(5, &values);
    let attribute = field(2, &array); // KeyValue.value
    let body = request_of(&field(2, &field(9, &attribute)));
    too_large(decode(&body, false, &LIMITS));
}

/// An attribute whose value nests `depth` arrays.
fn nested(depth: usize) -> AnyValue {
    let mut v = AnyValue {
        value: Some(Av::IntValue(1)),
    };
    for i in 0..depth {
        v = if i % 2 == 0 {
            AnyValue {
                value: Some(Av::ArrayValue(ArrayValue { values: vec![v] })),
            }
        } else {
            AnyValue {
                value: Some(Av::KvlistValue(KeyValueList {
                    values: vec![KeyValue {
                        key: "k".into(),
                        value: Some(v),
                        ..KeyValue::default()
                    }],
                })),
            }
        };
    }
    v
}

fn with_value(v: AnyValue) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: vec![Span {
                    attributes: vec![KeyValue {
                        key: "deep".into(),
                        value: Some(v),
                        ..KeyValue::default()
                    }],
                    ..Span::default()
                }],
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

#[test]
fn values_nested_deeper_than_the_limit_are_refused_in_both_encodings() {
    let ok = with_value(nested(LIMITS.depth));
    let deep = with_value(nested(LIMITS.depth + 1));
    for json in [false, true] {
        let bytes = |r: &ExportTraceServiceRequest| {
            if json {
                serde_json::to_vec(r).unwrap()
            } else {
                r.encode_to_vec()
            }
        };
        let (decoded, shape) = decode(&bytes(&ok), json, &LIMITS).unwrap();
        assert_eq!(decoded, ok, "json {json}");
        assert_eq!(shape.depth, LIMITS.depth, "json {json}");
        match decode(&bytes(&deep), json, &LIMITS) {
            Err(Refusal::Malformed(why)) => assert!(why.contains("16 deep"), "{why}"),
            other => panic!("json {json}: {other:?}"),
        }
    }
    // Deeper than any limit of ours, the nesting alone: refused without
    // overflowing the stack.
    let mut deep = b"{\"resourceSpans\":".to_vec();
    deep.extend(b"[".repeat(100_000));
    assert!(matches!(
        decode(&deep, true, &LIMITS),
        Err(Refusal::Malformed(_))
    ));
    let mut pb = Vec::new();
    for _ in 0..10_000 {
        pb = field(5, &field(1, &pb));
    }
    assert!(
        decode(
            &request_of(&field(2, &field(9, &field(2, &pb)))),
            false,
            &LIMITS
        )
        .is_err()
    );
}

#[test]
fn json_bombs_are_refused_as_protobuf_ones() {
    // Many empty spans.
    let spans = vec!["{}"; LIMITS.spans + 1].join(",");
    let body = format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{spans}]}}]}}]}}"#);
    let why = too_large(decode(body.as_bytes(), true, &LIMITS));
    assert!(why.contains("spans"), "{why}");
    // Many empty attributes on one span.
    let attributes = vec!["{}"; 1 << 20].join(",");
    let body = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"attributes":[{attributes}]}}]}}]}}]}}"#
    );
    too_large(decode(body.as_bytes(), true, &LIMITS));
    // Many empty resources.
    let resources = vec!["{}"; 1 << 20].join(",");
    let body = format!(r#"{{"resourceSpans":[{resources}]}}"#);
    too_large(decode(body.as_bytes(), true, &LIMITS));
    // Not JSON, or trailing bytes.
    assert!(matches!(
        decode(b"{\"resourceSpans\":[]} x", true, &LIMITS),
        Err(Refusal::Malformed(_))
    ));
}

#[test]
fn recorded_requests_are_counted_as_they_decode() {
    fn count(r: &ExportTraceServiceRequest) -> (usize, usize, usize, usize) {
        fn kvs(kvs: &[KeyValue]) -> usize {
            kvs.iter()
                .map(|kv| 1 + kv.value.as_ref().map_or(0, value))
                .sum()
        }
        fn value(v: &AnyValue) -> usize {
            match &v.value {
                Some(Av::KvlistValue(l)) => kvs(&l.values),
                Some(Av::ArrayValue(a)) => a.values.iter().map(value).sum(),
                _ => 0,
            }
        }
        let (mut spans, mut attributes, mut events, mut links) = (0, 0, 0, 0);
        for rs in &r.resource_spans {
            attributes += rs.resource.as_ref().map_or(0, |r| kvs(&r.attributes));
            for ss in &rs.scope_spans {
                attributes += ss.scope.as_ref().map_or(0, |s| kvs(&s.attributes));
                for s in &ss.spans {
                    spans += 1;
                    attributes += kvs(&s.attributes);
                    events += s.events.len();
                    links += s.links.len();
                    attributes += s.events.iter().map(|e| kvs(&e.attributes)).sum::<usize>();
                    attributes += s.links.iter().map(|l| kvs(&l.attributes)).sum::<usize>();
                }
            }
        }
        (spans, attributes, events, links)
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spans/");
    for name in ["genai", "openinference", "traceloop"] {
        for (ext, json) in [("pb", false), ("json", true)] {
            let body = std::fs::read(format!("{dir}{name}.{ext}")).unwrap();
            let (request, shape) = decode(&body, json, &LIMITS).unwrap();
            let (spans, attributes, events, links) = count(&request);
            assert!(spans > 0);
            assert_eq!(
                (shape.spans, shape.attributes, shape.events, shape.links),
                (spans, attributes, events, links),
                "{name}.{ext}"
            );
        }
    }
}

#[test]
fn what_serde_holds_of_an_attributes_value_is_counted_too() {
    // An attribute's value is read whole by serde before it is decoded
    // (a flattened field), unknown members included: 15 MiB of them took
    // 100 MB, accepted, when only known members were counted.
    let n = (15 << 20) / 3;
    let inner = vec!["[]"; n].join(",");
    for value in [
        format!(r#"{{"x":[{inner}]}}"#),
        format!(
            r#"{{"arrayValue":{{"values":[{}]}}}}"#,
            vec!["{}"; n / 2].join(",")
        ),
    ] {
        let body = format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"attributes":[{{"key":"k","value":{value}}}]}}]}}]}}]}}"#
        );
        let why = too_large(decode(body.as_bytes(), true, &LIMITS));
        assert!(why.contains("MiB to hold decoded"), "{why}");
    }
    // As many members.
    let members = vec![r#""a":0"#; (15 << 20) / 6].join(",");
    let body = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"attributes":[{{"key":"k","value":{{{members}}}}}]}}]}}]}}]}}"#
    );
    too_large(decode(body.as_bytes(), true, &LIMITS));
}

/// What decoding a JSON value nested `depth` deep, `n` values wide at the
/// bottom, takes at its peak: never more than the structure the pass
/// counted (plus the body). The peak is the process's: each case is a test
/// of its own, run alone (`--ignored --exact`).
fn peak_of_nested_json_values(depth: usize, n: usize) {
    fn peak_kib() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let mut v = format!(
        r#"{{"arrayValue":{{"values":[{}]}}}}"#,
        vec!["{}"; n].join(",")
    );
    for _ in 1..depth {
        v = format!(r#"{{"arrayValue":{{"values":[{v}]}}}}"#);
    }
    let body = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"attributes":[{{"key":"k","value":{v}}}]}}]}}]}}]}}"#
    );
    let before = peak_kib();
    let (_, shape) = decode(body.as_bytes(), true, &LIMITS).unwrap();
    let grew = (peak_kib() - before) << 10;
    eprintln!(
        "depth {depth}, {n} values: counted {} bytes, peak grew {grew}",
        shape.structure
    );
    assert!(
        grew > 0 && grew <= shape.structure + body.len(),
        "depth {depth}, {n}: {grew}"
    );
}

#[test]
#[ignore]
fn measured_peak_of_a_wide_json_value() {
    peak_of_nested_json_values(1, 150_000);
}

#[test]
#[ignore]
fn measured_peak_of_a_deep_json_value() {
    peak_of_nested_json_values(16, 14_000);
}
