//! The demo agent's own steps as OpenTelemetry spans, when told where to
//! send them ([`DemoConfig::with_otlp`](super::DemoConfig::with_otlp)): for
//! each answer of `POST /` and `/v1/respond`, a server span under the
//! request's W3C `traceparent` (a new trace without one), and under it, as
//! the GenAI semantic conventions name them:
//!
//! * a question answered from the corpus: `retrieval` (the corpus search),
//!   `execute_tool lookup` (arguments `{"query": ...}`, the best passage as
//!   result), then `chat demo-agent` (the answer, with token counts);
//! * arithmetic: `execute_tool calculator` (`{"expression": ...}`), then
//!   `chat demo-agent`;
//! * anything else: `chat demo-agent`.
//!
//! The answer itself carries no tool call: the steps are in the spans only.
//! They are sent after the answer, as OTLP/HTTP protobuf, from a task of
//! their own (as an SDK's batch exporter would), so the evaluation must
//! wait for them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, span::SpanKind};
use prost::Message;

use super::agent::{Found, Reply};

/// One step's span, before it is sent.
struct Pending {
    name: String,
    kind: SpanKind,
    start: SystemTime,
    end: SystemTime,
    attributes: Vec<KeyValue>,
}

/// The spans of one answer, recorded as it is worked out.
pub(crate) struct Recorder {
    trace_id: [u8; 16],
    /// The caller's span (the request), when it sent a `traceparent`.
    parent: Option<[u8; 8]>,
    started: SystemTime,
    steps: Vec<Pending>,
}

impl Recorder {
    /// A recorder for a request with this `traceparent` header (if any).
    pub(crate) fn new(traceparent: Option<&str>) -> Recorder {
        let (trace_id, parent) = match traceparent.and_then(parse_traceparent) {
            Some((t, p)) => (t, Some(p)),
            None => (random(), None),
        };
        Recorder {
            trace_id,
            parent,
            started: SystemTime::now(),
            steps: Vec::new(),
        }
    }

    /// The steps that found `found` for `input` (retrieval and tool
    /// calls), taking no time of their own worth measuring.
    pub(crate) fn tools(&mut self, found: &Found, input: &str) {
        let now = SystemTime::now();
        let step = |name: String, attributes| Pending {
            name,
            kind: SpanKind::Internal,
            start: now,
            end: now + Duration::from_micros(50),
            attributes,
        };
        match found {
            Found::Corpus(doc) => {
                self.steps.push(step(
                    "retrieval demo-corpus".into(),
                    vec![
                        text("gen_ai.operation.name", "retrieval"),
                        text("gen_ai.data_source.id", "demo-corpus"),
                    ],
                ));
                let mut tool = step(
                    format!("execute_tool {}", super::LOOKUP),
                    vec![
                        text("gen_ai.operation.name", "execute_tool"),
                        text("gen_ai.tool.name", super::LOOKUP),
                        text(
                            "gen_ai.tool.call.arguments",
                            &serde_json::json!({ "query": input }).to_string(),
                        ),
                        text("gen_ai.tool.call.result", doc.text),
                    ],
                );
                tool.start += Duration::from_micros(60);
                tool.end += Duration::from_micros(60);
                self.steps.push(tool);
            }
            Found::Arithmetic(expression) => {
                let result = super::agent::arithmetic(expression).unwrap_or_default();
                self.steps.push(step(
                    format!("execute_tool {}", super::CALCULATOR),
                    vec![
                        text("gen_ai.operation.name", "execute_tool"),
                        text("gen_ai.tool.name", super::CALCULATOR),
                        text(
                            "gen_ai.tool.call.arguments",
                            &serde_json::json!({ "expression": expression }).to_string(),
                        ),
                        text("gen_ai.tool.call.result", &result),
                    ],
                ));
            }
            Found::Other => {}
        }
    }

    /// The final LLM step, from `start` to now, writing `reply` for
    /// `input`: tokens counted as words (prompt: the input and the context).
    pub(crate) fn chat(&mut self, start: SystemTime, input: &str, reply: &Reply) {
        // After the steps before it (whose times were laid out ahead).
        let start = self
            .steps
            .iter()
            .map(|p| p.end)
            .fold(start, SystemTime::max);
        let words = |t: &str| t.split_whitespace().count() as i64;
        let prompt = words(input) + reply.context.iter().map(|c| words(c)).sum::<i64>();
        self.steps.push(Pending {
            name: format!("chat {}", super::MODEL_NAME),
            kind: SpanKind::Client,
            start,
            end: SystemTime::now().max(start + Duration::from_micros(50)),
            attributes: vec![
                text("gen_ai.operation.name", "chat"),
                text("gen_ai.request.model", super::MODEL_NAME),
                int("gen_ai.usage.input_tokens", prompt),
                int("gen_ai.usage.output_tokens", words(&reply.output)),
            ],
        });
    }

    /// The spans as an OTLP request: the server span (child of the
    /// caller's) and the steps under it.
    fn request(self, route: &str) -> ExportTraceServiceRequest {
        let server_id = random::<8>();
        let nanos = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        };
        let span = |id: [u8; 8], parent: Option<[u8; 8]>, p: Pending| Span {
            trace_id: self.trace_id.to_vec(),
            span_id: id.to_vec(),
            parent_span_id: parent.map_or_else(Vec::new, |p| p.to_vec()),
            name: p.name,
            kind: p.kind as i32,
            start_time_unix_nano: nanos(p.start),
            end_time_unix_nano: nanos(p.end),
            attributes: p.attributes,
            ..Span::default()
        };
        let mut spans = vec![span(
            server_id,
            self.parent,
            Pending {
                name: format!("POST {route}"),
                kind: SpanKind::Server,
                start: self.started,
                end: SystemTime::now(),
                attributes: vec![
                    text("http.request.method", "POST"),
                    text("http.route", route),
                ],
            },
        )];
        for step in self.steps {
            spans.push(span(random(), Some(server_id), step));
        }
        // Children first, as a batch exporter sends spans as they end.
        spans.rotate_left(1);
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![text("service.name", "demo-agent")],
                    ..Resource::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "eval-examples demo agent".into(),
                        ..InstrumentationScope::default()
                    }),
                    spans,
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        }
    }

    /// Sends the spans to `endpoint` (an OTLP/HTTP traces URL) from a task
    /// of their own; a failure is printed, never the answer's.
    pub(crate) fn send(self, route: &str, endpoint: &str) {
        let body = self.request(route).encode_to_vec();
        let endpoint = endpoint.to_string();
        tokio::spawn(async move {
            let sent = client()
                .post(&endpoint)
                .header("content-type", "application/x-protobuf")
                .body(body)
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => {}
                Ok(r) => eprintln!("demo agent: spans refused by {endpoint}: {}", r.status()),
                Err(e) => eprintln!("demo agent: spans not sent to {endpoint}: {e}"),
            }
        });
    }
}

/// One HTTP client for the process (plain HTTP to a local collector).
fn client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .tls_certs_only(Vec::new())
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// The traces URL of an OTLP endpoint: `<base>/v1/traces`, unless given.
pub(crate) fn traces_url(endpoint: &str) -> String {
    let base = endpoint.trim().trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

/// `00-<32 hex>-<16 hex>-<2 hex>`: the trace and parent span ids.
fn parse_traceparent(header: &str) -> Option<([u8; 16], [u8; 8])> {
    let mut parts = header.trim().split('-');
    let (version, trace, span, _flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version.len() != 2 || trace.len() != 32 || span.len() != 16 {
        return None;
    }
    let mut t = [0u8; 16];
    let mut s = [0u8; 8];
    for (i, b) in t.iter_mut().enumerate() {
        *b = u8::from_str_radix(trace.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    for (i, b) in s.iter_mut().enumerate() {
        *b = u8::from_str_radix(span.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    (t != [0; 16] && s != [0; 8]).then_some((t, s))
}

/// Random bytes (a new id): the standard library's hasher keys, mixed
/// with a counter and the time, are enough for a demo's span ids.
fn random<const N: usize>() -> [u8; N] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let v = h.finish().max(1).to_be_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    out
}

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.into())),
        }),
        ..KeyValue::default()
    }
}

fn int(key: &str, value: i64) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::IntValue(value)),
        }),
        ..KeyValue::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_gives_the_trace_and_the_parent() {
        let (t, s) =
            parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").unwrap();
        assert_eq!(t[0], 0x0a);
        assert_eq!(s[7], 0x31);
        assert_eq!(
            parse_traceparent("00-00000000000000000000000000000000-b7ad6b7169203331-01"),
            None
        );
        assert_eq!(parse_traceparent("garbage"), None);
        assert_eq!(
            traces_url("http://127.0.0.1:4318/"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(traces_url("http://h/v1/traces"), "http://h/v1/traces");
    }

    #[test]
    fn a_corpus_answer_is_a_retrieval_a_lookup_and_a_chat_under_the_request() {
        let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let mut r = Recorder::new(Some(tp));
        let (reply, found) = super::super::agent::answer::<&str>(&[], "What is RAG?", 2);
        r.tools(&found, "What is RAG?");
        r.chat(SystemTime::now(), "What is RAG?", &reply);
        let req = r.request("/v1/respond");
        let spans = &req.resource_spans[0].scope_spans[0].spans;
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "retrieval demo-corpus",
                "execute_tool lookup",
                "chat demo-agent",
                "POST /v1/respond"
            ]
        );
        let server = &spans[3];
        assert_eq!(
            server.parent_span_id,
            [0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]
        );
        assert!(
            spans[..3]
                .iter()
                .all(|s| s.parent_span_id == server.span_id)
        );
        assert!(
            spans
                .iter()
                .all(|s| s.trace_id == server.trace_id && s.trace_id[0] == 0x0a)
        );
    }

    /// A sample evaluated directly (`evaluate_with`, not through a run's
    /// scheduling) gets its trajectory from the agent's spans too, with a
    /// receiver on a port the system picks (`Services::trace_receiver`).
    #[tokio::test]
    async fn a_sample_evaluated_directly_is_scored_from_these_spans() {
        use eval_runtime::{HttpAgent, MetricSpec, Op, Sample, Services, StepKind, ToolCall};
        let config = eval_runtime::Config::from_vars(
            |k| Ok((k == "EVAL_OTLP_RECEIVER").then(|| "127.0.0.1:0".to_string())),
            &[],
        )
        .unwrap();
        let services = Services::none().with_traces(&config.traces);
        let addr = services.trace_receiver().expect("the receiver listens");
        assert_ne!(addr.port(), 0);
        let server = crate::demo::spawn(
            crate::demo::DemoConfig::default().with_otlp(format!("http://{addr}")),
        )
        .unwrap();
        let agent = HttpAgent::new(&server.url()).unwrap();
        let mut sample = Sample::new("What is 2 + 2?");
        sample.expected_tools = Some(vec![
            ToolCall::new("calculator").with_arguments(serde_json::json!({"expression": "2 + 2"})),
        ]);
        let specs = [
            MetricSpec::new("trajectory_match", &[], None).unwrap(),
            MetricSpec::new("steps", &[], Some((Op::AtMost, 2.0))).unwrap(),
        ];
        let report = eval_runtime::evaluate_with(
            "direct::sum".into(),
            &sample,
            &specs,
            std::time::Duration::from_secs(30),
            async { agent.respond_to(&sample).await },
            &services,
        )
        .await;
        assert!(report.passed(), "{}", report.render());
        let t = report.trajectory.expect("a trajectory from spans");
        let steps: Vec<(StepKind, &str)> =
            t.steps.iter().map(|s| (s.kind, s.name.as_str())).collect();
        assert_eq!(
            steps,
            [
                (StepKind::Tool, "calculator"),
                (StepKind::Llm, "demo-agent")
            ]
        );
        assert_eq!(
            report.tool_calls.len(),
            1,
            "the tool call came from the spans"
        );
    }
}
