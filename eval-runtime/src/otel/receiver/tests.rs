//! The receiver over real HTTP on loopback: protobuf, JSON and gzip bodies
//! decoded by opentelemetry-proto, spans kept only under a running sample's
//! trace, a sample's wait ending as soon as its trace is complete.

use std::io::Write;

use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};

use super::*;
use crate::model::hex;
use crate::otel::context::SampleTrace;

fn span(trace: &TurnTrace, id: u8, parent: Option<u8>, name: &str) -> Span {
    Span {
        trace_id: trace.trace_id.to_vec(),
        span_id: vec![id; 8],
        parent_span_id: match parent {
            Some(p) => vec![p; 8],
            None => trace.span_id.to_vec(),
        },
        name: name.into(),
        start_time_unix_nano: 1_000_000_000 + u64::from(id) * 1_000_000,
        end_time_unix_nano: 1_000_000_000 + u64::from(id) * 2_000_000,
        attributes: vec![opentelemetry_proto::tonic::common::v1::KeyValue {
            key: "gen_ai.operation.name".into(),
            value: Some(opentelemetry_proto::tonic::common::v1::AnyValue {
                value: Some(
                    opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(
                        "execute_tool".into(),
                    ),
                ),
            }),
            ..Default::default()
        }],
        ..Span::default()
    }
}

fn request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

async fn post(
    receiver: &Receiver,
    path: &str,
    content_type: &str,
    gzip: bool,
    body: Vec<u8>,
) -> (u16, String) {
    let url = format!("http://{}{path}", receiver.addr());
    let client = crate::http::runtime_client(&url).unwrap();
    let mut builder = client.post(&url).header("content-type", content_type);
    let body = if gzip {
        builder = builder.header("content-encoding", "gzip");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&body).unwrap();
        e.finish().unwrap()
    } else {
        body
    };
    let r = builder.body(body).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

fn receiver() -> Arc<Receiver> {
    // Each test its own (a different address than any other test asks for).
    Receiver::start("127.0.0.1:0".parse().unwrap()).unwrap()
}

#[tokio::test]
async fn protobuf_json_and_gzip_bodies_are_received_under_the_samples_trace() {
    let r = receiver();
    let sample = SampleTrace::new(Some(r.registry()));
    sample
        .scope(async {
            crate::otel::next_traceparent().unwrap();
            crate::otel::next_traceparent().unwrap();
        })
        .await;
    let (t1, t2) = (sample.turns()[0].clone(), sample.turns()[1].clone());
    // Turn 1 in protobuf, gzipped: a root under our span and a child.
    let body = request(vec![
        span(&t1, 2, Some(1), "child"),
        span(&t1, 1, None, "root"),
    ])
    .encode_to_vec();
    assert_eq!(
        post(&r, "/v1/traces", "application/x-protobuf", true, body)
            .await
            .0,
        200
    );
    // Turn 2 in OTLP/JSON as the specification writes it: hex ids, times as
    // strings, enums as numbers.
    let json = format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"agent"}}}}]}},
        "scopeSpans":[{{"scope":{{"name":"x"}},"spans":[{{"traceId":"{}","spanId":"0303030303030303","parentSpanId":"{}",
        "name":"llm","kind":1,"startTimeUnixNano":"1000000000","endTimeUnixNano":"1500000000",
        "attributes":[{{"key":"openinference.span.kind","value":{{"stringValue":"LLM"}}}},
        {{"key":"llm.token_count.prompt","value":{{"intValue":"12"}}}}],
        "status":{{"code":2,"message":"boom"}}}}]}}]}}]}}"#,
        hex(&t2.trace_id).to_uppercase(),
        hex(&t2.span_id)
    );
    let (status, body) = post(
        &r,
        "/v1/traces",
        "application/json",
        false,
        json.into_bytes(),
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "{}"));
    // Another program's spans: counted, not kept.
    let other = TurnTrace {
        trace_id: [9; 16],
        span_id: [9; 8],
        earlier: Vec::new(),
        start: std::time::SystemTime::now(),
        end: None,
    };
    let body = request(vec![span(&other, 5, None, "elsewhere")]).encode_to_vec();
    assert_eq!(
        post(&r, "/v1/traces", "application/x-protobuf", false, body)
            .await
            .0,
        200
    );
    let waited = Instant::now();
    let t = r.collect(&sample, Duration::from_secs(30)).await.unwrap();
    assert!(
        waited.elapsed() < Duration::from_secs(5),
        "complete: no wait"
    );
    let steps: Vec<(&str, usize)> = t.steps.iter().map(|s| (s.name.as_str(), s.turn)).collect();
    assert_eq!(steps, [("root", 0), ("child", 0), ("llm", 1)]);
    assert_eq!(t.steps[2].input_tokens, Some(12));
    assert_eq!(t.steps[2].error.as_deref(), Some("boom"));
    assert_eq!(t.steps[2].duration_ms, Some(500.0));
    assert_eq!(t.traces, [hex(&t1.trace_id), hex(&t2.trace_id)]);
    assert_eq!(t.note, None);
    assert_eq!(r.counts(), (1, 0), "one unclaimed span, no refusal");
}

#[tokio::test]
async fn an_incomplete_trace_is_waited_for_then_said() {
    let r = receiver();
    let sample = SampleTrace::new(Some(r.registry()));
    sample
        .scope(async { crate::otel::next_traceparent() })
        .await
        .unwrap();
    let t1 = sample.turns()[0].clone();
    // A child whose parent (span 1) never arrives.
    let body = request(vec![span(&t1, 2, Some(1), "orphan")]).encode_to_vec();
    post(&r, "/v1/traces", "application/x-protobuf", false, body).await;
    let waited = Instant::now();
    let t = r
        .collect(&sample, Duration::from_millis(300))
        .await
        .unwrap();
    assert!(waited.elapsed() >= Duration::from_millis(300));
    assert_eq!(t.steps.len(), 1, "what came is kept");
    assert!(t.incomplete);
    let note = t.note.unwrap();
    assert!(note.contains("incomplete after 300 ms (1 spans"), "{note}");
    // Nothing at all: said so, with where spans should go.
    let none = SampleTrace::new(Some(r.registry()));
    none.scope(async { crate::otel::next_traceparent() })
        .await
        .unwrap();
    let t = r.collect(&none, Duration::from_millis(50)).await.unwrap();
    assert!(t.steps.is_empty());
    let note = t.note.unwrap();
    assert!(
        note.contains(&format!("http://{}/v1/traces", r.addr())),
        "{note}"
    );
    // A sample that sent nothing has no trajectory.
    assert!(
        r.collect(&SampleTrace::new(Some(r.registry())), Duration::ZERO)
            .await
            .is_none()
    );
}

#[tokio::test]
async fn what_is_not_otlp_is_refused_with_a_reason() {
    let r = receiver();
    let (status, why) = post(&r, "/v1/traces", "text/plain", false, b"hi".to_vec()).await;
    assert_eq!(status, 415);
    assert!(why.contains("application/x-protobuf"), "{why}");
    let (status, why) = post(
        &r,
        "/v1/traces",
        "application/x-protobuf",
        false,
        b"\xff\xff\xff".to_vec(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        why.contains("not an OTLP ExportTraceServiceRequest"),
        "{why}"
    );
    let (status, _) = post(
        &r,
        "/v1/metrics",
        "application/x-protobuf",
        false,
        Vec::new(),
    )
    .await;
    assert_eq!(status, 404);
    let (status, why) = post(
        &r,
        "/v1/traces",
        "application/json",
        true,
        b"{not json".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{why}");
    let url = format!("http://{}/v1/traces", r.addr());
    let client = crate::http::runtime_client(&url).unwrap();
    let r2 = client
        .post(&url)
        .header("content-type", "application/x-protobuf")
        .header("content-encoding", "gzip")
        .body(b"plain".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r2.status().as_u16(), 400);
    assert_eq!(r.counts().1, 5);
}

#[test]
fn a_busy_address_is_an_error_that_says_what_to_do() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = Receiver::on(taken.local_addr().unwrap()).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("EVAL_OTLP_RECEIVER"), "{text}");
    assert!(text.contains("another program"), "{text}");
}

#[tokio::test]
async fn a_retried_requests_earlier_attempt_is_not_the_samples_steps() {
    let r = receiver();
    let sample = SampleTrace::new(Some(r.registry()));
    let first = sample
        .scope(async {
            let request = crate::otel::next_request().unwrap();
            let first = request.attempt();
            request.attempt();
            first
        })
        .await;
    let t = sample.turns()[0].clone();
    assert_eq!(t.earlier.len(), 1);
    assert!(first.contains(&hex(&t.earlier[0])));
    // The refused attempt's server span and a step under it, then the
    // answered attempt's.
    let stale_root = Span {
        parent_span_id: t.earlier[0].to_vec(),
        ..span(&t, 1, None, "stale root")
    };
    let body = request(vec![
        stale_root,
        span(&t, 2, Some(1), "stale step"),
        span(&t, 3, None, "fresh root"),
        span(&t, 4, Some(3), "fresh step"),
    ])
    .encode_to_vec();
    post(&r, "/v1/traces", "application/x-protobuf", false, body).await;
    let waited = Instant::now();
    let got = r.collect(&sample, Duration::from_secs(30)).await.unwrap();
    assert!(waited.elapsed() < Duration::from_secs(5), "complete");
    let names: Vec<&str> = got.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fresh root", "fresh step"]);
    assert!(!got.incomplete);
}
