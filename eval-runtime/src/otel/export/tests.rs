//! The exporter against real local servers: what it sends (the receiver of
//! this crate decodes it), and that it never makes a run wait on a
//! collector that is slow, down or full.

use std::io::{Read, Write};
use std::net::TcpListener;

use super::*;
use crate::config::ExportSettings;

fn settings(endpoint: String, queue: usize) -> ExportSettings {
    ExportSettings {
        endpoint,
        protocol: OtlpProtocol::Protobuf,
        headers: Vec::new(),
        timeout: Duration::from_secs(10),
        gzip: false,
        service_name: "test".into(),
        resource: Vec::new(),
        queue,
    }
}

fn span(n: u8) -> Span {
    Span {
        trace_id: vec![n; 16],
        span_id: vec![n; 8],
        name: format!("s{n}"),
        ..Span::default()
    }
}

/// An HTTP server that answers every request `200` after `delay` (`None`:
/// never answers), counting requests.
fn server(delay: Option<Duration>) -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let count = Arc::new(AtomicU64::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    // One request per read is enough for these tests' bodies.
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    seen.fetch_add(1, Ordering::Relaxed);
                    match delay {
                        None => std::thread::sleep(Duration::from_secs(3600)),
                        Some(d) => std::thread::sleep(d),
                    }
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    (url, count)
}

#[test]
fn a_full_queue_drops_and_counts_and_the_end_does_not_wait_for_a_hung_collector() {
    let (url, _) = server(None);
    let e = Exporter::start(settings(url, 8));
    // The first span is taken and sent, and the collector never answers.
    e.queue_span(span(0));
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    for n in 1..=100 {
        e.queue_span(span(n));
    }
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "queueing never waits"
    );
    let done = e.flush(FLUSH_WAIT);
    let waited = started.elapsed();
    assert!(
        waited < FLUSH_WAIT + Duration::from_millis(300),
        "{waited:?}"
    );
    // The queue holds 8; the other 92 were dropped, counted; the one in
    // flight and the 8 are still queued when the end stops waiting.
    assert_eq!(
        (done.sent, done.dropped, done.queued),
        (0, 92, 9),
        "{done:?}"
    );
    assert!(
        done.note("x").contains("still queued"),
        "{}",
        done.note("x")
    );
}

#[test]
fn a_collector_known_to_be_slow_is_not_waited_for() {
    let (url, count) = server(Some(Duration::from_millis(400)));
    let e = Exporter::start(settings(url, 64));
    e.queue_span(span(1));
    // The first request is waited for (the pace is unknown)...
    let first = e.flush(Duration::from_secs(5));
    assert_eq!(first.sent, 1, "{first:?}");
    // ...and then, at 400 ms a request, not.
    e.queue_span(span(2));
    std::thread::sleep(Duration::from_millis(20));
    let started = Instant::now();
    let done = e.flush(FLUSH_WAIT);
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((done.sent, done.queued), (1, 1), "{done:?}");
    assert!(count.load(Ordering::Relaxed) >= 1);
}

#[tokio::test]
async fn what_is_sent_is_otlp_the_receiver_decodes() {
    // This crate's receiver as the collector: spans under no sample's trace
    // are counted, which is all this needs.
    let r = crate::otel::receiver::Receiver::on("127.0.0.1:0".parse().unwrap()).unwrap();
    for protocol in [OtlpProtocol::Protobuf, OtlpProtocol::Json] {
        for gzip in [false, true] {
            let before = r.counts();
            let mut s = settings(format!("http://{}/v1/traces", r.addr()), 64);
            s.protocol = protocol;
            s.gzip = gzip;
            let e = Exporter::start(s);
            for n in 1..=3 {
                e.queue_span(span(n));
            }
            let done = tokio::task::spawn_blocking(move || e.flush(Duration::from_secs(5)))
                .await
                .unwrap();
            assert_eq!(done.sent, 3, "{protocol:?} gzip {gzip}: {done:?}");
            let after = r.counts();
            assert_eq!(after.0 - before.0, 3, "{protocol:?} gzip {gzip}: decoded");
            assert_eq!(after.1, before.1, "nothing refused");
        }
    }
}

#[test]
fn an_endpoint_at_the_runs_own_receiver_is_recognised() {
    let addr: std::net::SocketAddr = "127.0.0.1:4318".parse().unwrap();
    assert!(is_at("http://127.0.0.1:4318/v1/traces", addr));
    assert!(is_at("http://localhost:4318/v1/traces", addr));
    assert!(is_at("http://[::1]:4318/", addr));
    assert!(!is_at("http://127.0.0.1:4319/v1/traces", addr));
    assert!(!is_at("http://collector.example:4318/v1/traces", addr));
}

/// What an evaluation links to is exported with it: the span of each
/// request the agent was sent (the root of its trace, the parent of the
/// agent's spans); its events carry the id the agent gave its answer.
#[test]
fn an_evaluation_links_only_to_spans_exported_with_it_and_names_the_answer() {
    use crate::model::{AgentSpan, MetricResult};
    use eval_datasets::metric::MetricSpec;
    let sample = eval_datasets::Sample::new("What is RAG?");
    let mut report = SampleReport::new("rag::0".into(), &sample);
    let sent = SystemTime::now() - Duration::from_millis(300);
    let request = |n: u8, start: SystemTime| AgentSpan {
        trace_id: [n; 16],
        span_id: [n; 8],
        start,
        end: start + Duration::from_millis(100),
    };
    // Two turns; the first run's span listed twice (two runs' records).
    report.agent_spans = vec![
        request(1, sent),
        request(2, sent + Duration::from_millis(150)),
        request(1, sent),
    ];
    report.response_id = Some("chatcmpl-scripted-2".into());
    report.metrics = vec![MetricResult::of(
        &MetricSpec::new("tool_call_f1", &[], None).unwrap(),
        Ok(1.0),
    )];
    let run = RunTrace::new();
    let requests = request_spans(&report);
    let sample = sample_span(&run, "rag", &report);
    assert_eq!(requests.len(), 2, "one span per request");
    for r in &requests {
        assert!(r.parent_span_id.is_empty(), "the root of the agent's trace");
        assert_eq!(r.kind, SpanKind::Client as i32);
        assert_eq!(r.end_time_unix_nano - r.start_time_unix_nano, 100_000_000);
    }
    assert_eq!(sample.links.len(), 3);
    for link in &sample.links {
        assert!(
            requests
                .iter()
                .any(|r| r.trace_id == link.trace_id && r.span_id == link.span_id),
            "a link to a span that is not exported: {link:?}"
        );
    }
    // The sample's own parent is the run's span, exported at the run's end.
    assert_eq!(sample.parent_span_id, run.span_id.to_vec());
    let id = |attributes: &[KeyValue]| {
        attributes
            .iter()
            .find(|kv| kv.key == "gen_ai.response.id")
            .and_then(|kv| kv.value.clone())
            .and_then(|v| v.value)
    };
    let want = Some(Av::StringValue("chatcmpl-scripted-2".into()));
    assert_eq!(id(&sample.attributes), want);
    assert_eq!(sample.events.len(), 1);
    assert_eq!(id(&sample.events[0].attributes), want);
    // No id given: none said.
    report.response_id = None;
    let sample = sample_span(&run, "rag", &report);
    assert_eq!(id(&sample.events[0].attributes), None);
}

/// A real HTTP/1.1 server on loopback that answers `status` to every
/// request and records each request's head (request line and headers).
fn recording_server(status: u16) -> (std::net::SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => data.extend_from_slice(&buf[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&data[..end]).into_owned();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    while data.len() < end + 4 + length {
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => data.extend_from_slice(&buf[..n]),
                        }
                    }
                    data.drain(..end + 4 + length);
                    seen.lock().unwrap().push(head);
                    let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n");
                    if stream.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, heads)
}

/// The export settings `vars` give, as the run reads them.
fn from_vars(vars: &[(&str, String)]) -> ExportSettings {
    let var = |name: &str| {
        Ok(vars
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone()))
    };
    crate::Config::from_vars(var, &[])
        .unwrap()
        .traces
        .export
        .unwrap()
}

/// The reproducer: an endpoint with a query string got
/// `POST /?k=x/v1/traces`. `v1/traces` goes on the path (OTLP exporter
/// specification: the base URL's path plus `v1/traces`); the query stays.
#[tokio::test]
async fn the_request_line_has_v1_traces_on_the_path_and_keeps_the_query() {
    let (addr, heads) = recording_server(200);
    for (var, endpoint, line) in [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://{addr}/?k=x"),
            "POST /v1/traces?k=x HTTP/1.1",
        ),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://{addr}/otlp?k=x&j=%2F"),
            "POST /otlp/v1/traces?k=x&j=%2F HTTP/1.1",
        ),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("http://{addr}/mine?k=x"),
            "POST /mine?k=x HTTP/1.1",
        ),
    ] {
        heads.lock().unwrap().clear();
        let s = from_vars(&[
            (var, endpoint.clone()),
            ("OTEL_EXPORTER_OTLP_HEADERS", "X-Tenant=a%2Cb".into()),
        ]);
        let e = Exporter::start(s);
        e.queue_span(span(1));
        let done = tokio::task::spawn_blocking(move || e.flush(Duration::from_secs(5)))
            .await
            .unwrap();
        assert_eq!(done.sent, 1, "{endpoint}: {done:?}");
        let heads = heads.lock().unwrap().clone();
        assert_eq!(heads.len(), 1, "{heads:?}");
        assert_eq!(heads[0].lines().next(), Some(line), "{endpoint}");
        assert!(
            heads[0].to_ascii_lowercase().contains("\r\nx-tenant: a,b"),
            "{}",
            heads[0]
        );
    }
}

/// Credentials in the endpoint are sent as basic authentication (as the
/// HTTP client does) and never shown: not in the failure, not in `Debug`.
#[tokio::test]
async fn credentials_in_the_endpoint_are_sent_never_shown() {
    let (addr, heads) = recording_server(500);
    let s = from_vars(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://user:SECRET@{addr}/?token=SECRET"),
    )]);
    assert!(!format!("{s:?}").contains("SECRET"), "{s:?}");
    let e = Exporter::start(s);
    assert!(!format!("{e:?}").contains("SECRET"), "{e:?}");
    e.queue_span(span(1));
    let done = tokio::task::spawn_blocking(move || e.flush(Duration::from_secs(5)))
        .await
        .unwrap();
    let failure = done.failure.clone().unwrap_or_default();
    assert!(failure.contains("answered 500"), "{done:?}");
    assert!(!failure.contains("SECRET"), "{failure}");
    assert!(!done.note("x").contains("SECRET"));
    let heads = heads.lock().unwrap().clone();
    // base64("user:SECRET")
    assert!(
        heads[0].contains("authorization: Basic dXNlcjpTRUNSRVQ=")
            || heads[0].contains("Authorization: Basic dXNlcjpTRUNSRVQ="),
        "{heads:?}"
    );
}
