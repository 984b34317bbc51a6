//! The receiver over real HTTP on loopback: protobuf, JSON and gzip bodies
//! decoded by opentelemetry-proto, spans kept only under a running sample's
//! trace, a sample's wait ending as soon as its trace is complete.

use std::io::Write;

use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};
use prost::Message;

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

/// A receiver with short timeouts and few connections, for the tests of
/// its bounds.
fn bounded(connections: usize) -> Arc<Receiver> {
    Receiver::start_with(
        "127.0.0.1:0".parse().unwrap(),
        Bounds {
            header: Duration::from_millis(400),
            body: Duration::from_millis(600),
            connections,
            ..BOUNDS
        },
    )
    .unwrap()
}

/// A raw client: `head` sent at once, then `drip` a byte at a time.
fn raw_client(
    addr: SocketAddr,
    head: String,
    drip: usize,
    every: Duration,
) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        use std::io::Read as _;
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = c.write_all(head.as_bytes());
        for _ in 0..drip {
            std::thread::sleep(every);
            if c.write_all(b"x").is_err() {
                break;
            }
        }
        let mut answer = String::new();
        let mut buf = [0u8; 512];
        while let Ok(n) = c.read(&mut buf) {
            if n == 0 {
                break;
            }
            answer.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        answer
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bombs_over_http_are_refused_quickly_with_an_otlp_status_and_counted() {
    let r = receiver();
    // The issue's request: 16 MiB of empty spans, gzipped to ~16 KB.
    let spans = [0x12u8, 0x00].repeat(((16 << 20) - 16) / 2);
    let body = ExportTraceServiceRequest {
        resource_spans: vec![],
    }
    .encode_to_vec();
    assert!(body.is_empty());
    let bomb = {
        let mut b = vec![0x0a];
        let scope = {
            let mut s = vec![0x12];
            prost::encoding::encode_varint(spans.len() as u64, &mut s);
            s.extend_from_slice(&spans);
            s
        };
        prost::encoding::encode_varint(scope.len() as u64, &mut b);
        b.extend_from_slice(&scope);
        b
    };
    let started = Instant::now();
    let (status, why) = post(&r, "/v1/traces", "application/x-protobuf", true, bomb).await;
    assert_eq!(status, 413, "{why}");
    assert!(why.contains("more than 8192 spans"), "{why}");
    // The body is a google.rpc.Status: field 2, the message.
    assert!(why.as_bytes().contains(&0x12));
    // A ratio bomb: 17 MiB of zeros.
    let (status, _) = post(
        &r,
        "/v1/traces",
        "application/x-protobuf",
        true,
        vec![0; 17 << 20],
    )
    .await;
    assert_eq!(status, 413);
    // In JSON, the refusal is JSON.
    let json = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
        vec!["{}"; 9000].join(",")
    );
    let (status, why) = post(
        &r,
        "/v1/traces",
        "application/json",
        true,
        json.into_bytes(),
    )
    .await;
    assert_eq!(status, 413);
    let status_body: serde_json::Value = serde_json::from_str(&why).unwrap();
    assert_eq!(status_body["code"], 8);
    assert!(status_body["message"].as_str().unwrap().contains("spans"));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let t = r.tally();
    assert_eq!((t.too_large, t.refused()), (3, 3), "{t:?}");
}

#[tokio::test]
async fn spans_a_trace_cannot_keep_are_a_partial_success() {
    let r = receiver();
    let sample = SampleTrace::new(Some(r.registry()));
    sample
        .scope(async { crate::otel::next_traceparent() })
        .await
        .unwrap();
    let t = sample.turns()[0].clone();
    let mut spans = vec![span(&t, 1, None, "root")];
    spans.push(Span {
        span_id: vec![1; 3],
        ..span(&t, 2, Some(1), "bad id")
    });
    let (status, body) = post(
        &r,
        "/v1/traces",
        "application/json",
        false,
        serde_json::to_vec(&request(spans)).unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let response: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(response["partialSuccess"]["rejectedSpans"], 1, "{body}");
    let got = r.collect(&sample, Duration::from_secs(5)).await.unwrap();
    assert_eq!(got.steps.len(), 1);
}

#[tokio::test]
async fn cycles_self_parents_and_duplicate_ids_are_refused_not_steps() {
    let r = receiver();
    let sample = SampleTrace::new(Some(r.registry()));
    sample
        .scope(async { crate::otel::next_traceparent() })
        .await
        .unwrap();
    let t = sample.turns()[0].clone();
    let mut twin = span(&t, 2, Some(1), "twin");
    twin.name = "another twin".into();
    let body = request(vec![
        span(&t, 1, None, "root"),
        span(&t, 2, Some(1), "twin"),
        twin,
        span(&t, 3, Some(3), "its own parent"),
        span(&t, 4, Some(5), "loop a"),
        span(&t, 5, Some(4), "loop b"),
        span(&t, 6, Some(1), "fine"),
        span(&t, 6, Some(1), "fine"),
    ])
    .encode_to_vec();
    post(&r, "/v1/traces", "application/x-protobuf", false, body).await;
    let waited = Instant::now();
    let got = r.collect(&sample, Duration::from_secs(30)).await.unwrap();
    assert!(
        waited.elapsed() < Duration::from_secs(5),
        "complete: nothing to wait for"
    );
    let names: Vec<&str> = got.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["root", "fine"], "a resent span counted once");
    assert!(!got.incomplete);
    let note = got.note.unwrap();
    assert!(
        note.contains("3 spans refused: their parent links form a loop"),
        "{note}"
    );
    assert!(
        note.contains("2 spans refused: their span id is another span's"),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_do_not_starve_the_receiver_and_are_cut_off() {
    let r = bounded(8);
    let addr = r.addr();
    // Two slow-loris clients: headers at once, then the body a byte every
    // 200 ms (of 1000 bytes).
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/x-protobuf\r\ncontent-length: 1000\r\n\r\n"
    );
    let slow: Vec<_> = (0..2)
        .map(|_| raw_client(addr, head.clone(), 1000, Duration::from_millis(200)))
        .collect();
    // One that never finishes its headers.
    let stalled = raw_client(
        addr,
        "POST /v1/traces HTTP/1.1\r\nhost: x\r\n".into(),
        0,
        Duration::ZERO,
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Meanwhile, a sample's spans go through at once.
    let sample = SampleTrace::new(Some(r.registry()));
    sample
        .scope(async { crate::otel::next_traceparent() })
        .await
        .unwrap();
    let t = sample.turns()[0].clone();
    let started = Instant::now();
    let body = request(vec![span(&t, 1, None, "root")]).encode_to_vec();
    let (status, _) = post(&r, "/v1/traces", "application/x-protobuf", false, body).await;
    assert_eq!(status, 200);
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    let got = r.collect(&sample, Duration::from_secs(5)).await.unwrap();
    assert_eq!(got.steps.len(), 1);
    // The slow ones are cut off at the body deadline, the stalled one at
    // the header deadline.
    for c in slow {
        let answer = tokio::task::spawn_blocking(move || c.join().unwrap())
            .await
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    }
    let answer = tokio::task::spawn_blocking(move || stalled.join().unwrap())
        .await
        .unwrap();
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let tally = r.tally();
    assert_eq!(tally.slow, 3, "{tally:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_bound_are_turned_away_and_a_sample_says_so() {
    let r = bounded(3);
    let addr = r.addr();
    let sample = SampleTrace::new(Some(r.registry()));
    sample
        .scope(async { crate::otel::next_traceparent() })
        .await
        .unwrap();
    // Three idle connections hold every slot (until the header deadline).
    let idle: Vec<std::net::TcpStream> = (0..3)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let fourth = raw_client(
        addr,
        "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n".into(),
        0,
        Duration::ZERO,
    );
    let answer = tokio::task::spawn_blocking(move || fourth.join().unwrap())
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert_eq!(r.tally().busy, 1);
    // The sample's spans never came: the note blames the receiver's load,
    // not the agent.
    let got = r.collect(&sample, Duration::from_millis(50)).await.unwrap();
    let note = got.note.unwrap();
    assert!(note.contains("starved or overloaded"), "{note}");
    assert!(note.contains("1 over the bound on connections"), "{note}");
    assert!(!note.contains("does the agent export"), "{note}");
    // Idle connections are closed at the header deadline, not counted as
    // slow clients, and the slots are free again.
    tokio::time::sleep(Duration::from_millis(600)).await;
    drop(idle);
    let (status, _) = post(
        &r,
        "/v1/traces",
        "application/x-protobuf",
        false,
        Vec::new(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(r.tally().slow, 0);
}

#[tokio::test]
async fn what_all_the_traces_in_flight_hold_is_bounded_and_given_back() {
    let one = decode::memory(&span(
        &TurnTrace {
            trace_id: [1; 16],
            span_id: [1; 8],
            earlier: Vec::new(),
            start: std::time::SystemTime::now(),
            end: None,
        },
        1,
        None,
        "root",
    ));
    let r = Receiver::start_with(
        "127.0.0.1:0".parse().unwrap(),
        Bounds {
            held: 3 * one,
            ..BOUNDS
        },
    )
    .unwrap();
    let started = |r: &Arc<Receiver>| {
        let sample = SampleTrace::new(Some(r.registry()));
        let turn = async { crate::otel::next_traceparent().unwrap() };
        (sample, turn)
    };
    let (a, turn) = started(&r);
    a.scope(turn).await;
    let (b, turn) = started(&r);
    b.scope(turn).await;
    let (ta, tb) = (a.turns()[0].clone(), b.turns()[0].clone());
    // Sample a takes two of the three spans' room, sample b one: its second
    // is over.
    let body = request(vec![
        span(&ta, 1, None, "a1"),
        span(&ta, 2, Some(1), "a2"),
        span(&tb, 1, None, "b1"),
        span(&tb, 2, Some(1), "b2"),
    ])
    .encode_to_vec();
    let (status, answer) = post(&r, "/v1/traces", "application/x-protobuf", false, body).await;
    assert_eq!(status, 200);
    let response =
        opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse::decode(
            answer.as_bytes(),
        )
        .unwrap();
    assert_eq!(response.partial_success.unwrap().rejected_spans, 1);
    let got = r.collect(&b, Duration::from_millis(50)).await.unwrap();
    assert_eq!(got.steps.len(), 1);
    let note = got.note.unwrap();
    assert!(
        note.contains("1 spans not kept: the receiver holds at most"),
        "{note}"
    );
    let got = r.collect(&a, Duration::from_secs(5)).await.unwrap();
    assert_eq!(got.steps.len(), 2);
    // Taken: the room is free again.
    assert_eq!(r.store.lock().held, 0);
}

/// The issue's reproducer, for measuring peak RSS (`/usr/bin/time -v`):
/// 16 MiB of empty spans, gzipped, POSTed to the receiver.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn reproducer_gzip_bomb_of_empty_spans() {
    let r = receiver();
    let spans = [0x12u8, 0x00].repeat(((16 << 20) - 16) / 2);
    let mut scope = vec![0x12];
    prost::encoding::encode_varint(spans.len() as u64, &mut scope);
    scope.extend_from_slice(&spans);
    let mut bomb = vec![0x0a];
    prost::encoding::encode_varint(scope.len() as u64, &mut bomb);
    bomb.extend_from_slice(&scope);
    drop((spans, scope));
    let t = Instant::now();
    let (status, _) = post(&r, "/v1/traces", "application/x-protobuf", true, bomb).await;
    eprintln!("REPRO status {status} in {:?}", t.elapsed());
    // Before issue 37: 200 after 6.7 s, 2.23 GB peak; now 413 at once.
    assert_eq!(status, 413);
}
