//! The OTLP receiver: an HTTP server on loopback that takes the agent's
//! spans (`POST /v1/traces`, OTLP/HTTP with a protobuf or a JSON body,
//! gzip or not, as the OTLP specification defines it), keeps those under a
//! trace a running sample started, and hands each sample its spans once its
//! trace is complete.
//!
//! It runs on a thread of its own, with its own runtime, for the rest of the
//! process: the attribute's tests, each on its own runtime, share it.
//! Spans under no running sample's trace are counted and dropped, so memory
//! is bounded by the samples in flight ([`MAX_SPANS`] spans each, a body
//! at most [`MAX_BODY`]).

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use super::context::{Registry, SampleTrace, TurnTrace};
use crate::model::{TraceError, Trajectory};

/// The largest request body taken (compressed, and once decompressed):
/// above the OTLP specification's recommended 20 MiB... for the bodies an
/// SDK batches (512 spans), not for hostile ones.
pub(crate) const MAX_BODY: usize = 16 << 20;
/// Request bodies read and decoded at once, at most (the rest wait their
/// turn): with [`MAX_BODY`], what a flood of requests can hold.
const BODIES_AT_ONCE: usize = 2;
/// Most spans kept under one trace; beyond, they are counted.
pub(crate) const MAX_SPANS: usize = 4096;
/// Most bytes of spans (as encoded) kept under one trace; beyond, counted.
pub(crate) const MAX_TRACE_BYTES: usize = 8 << 20;

/// The receiver of one address, for the rest of the process.
pub(crate) struct Receiver {
    addr: SocketAddr,
    store: Arc<Store>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Pending {
    spans: Vec<Span>,
    /// Bytes of `spans`, as encoded.
    bytes: usize,
    /// Spans not kept: beyond [`MAX_SPANS`] or [`MAX_TRACE_BYTES`].
    over: u64,
    /// Spans not kept: a span id that is not 8 bytes.
    malformed: u64,
}

struct Store {
    traces: Mutex<HashMap<[u8; 16], Pending>>,
    changed: tokio::sync::Notify,
    /// Spans under no running sample's trace (another program's, or late).
    unclaimed: AtomicU64,
    /// Requests refused: not OTLP, too large, malformed.
    refused: AtomicU64,
    /// Bodies being read and decoded.
    bodies: tokio::sync::Semaphore,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            traces: Mutex::default(),
            changed: tokio::sync::Notify::new(),
            unclaimed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            bodies: tokio::sync::Semaphore::new(BODIES_AT_ONCE),
        }
    }
}

impl Registry for Store {
    fn register(&self, trace: &TurnTrace) {
        self.lock().entry(trace.trace_id).or_default();
    }

    fn forget(&self, trace: &TurnTrace) {
        self.lock().remove(&trace.trace_id);
    }
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 16], Pending>> {
        self.traces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the spans of `request` under the traces being waited for.
    fn ingest(&self, request: ExportTraceServiceRequest) {
        let mut unclaimed = 0;
        {
            let mut traces = self.lock();
            for resource in request.resource_spans {
                for scope in resource.scope_spans {
                    for span in scope.spans {
                        let Ok(id) = <[u8; 16]>::try_from(span.trace_id.as_slice()) else {
                            unclaimed += 1;
                            continue;
                        };
                        let Some(p) = traces.get_mut(&id) else {
                            unclaimed += 1;
                            continue;
                        };
                        if span.span_id.len() != 8 {
                            p.malformed += 1;
                            continue;
                        }
                        let bytes = span.encoded_len();
                        if p.spans.len() >= MAX_SPANS || p.bytes + bytes > MAX_TRACE_BYTES {
                            p.over += 1;
                            continue;
                        }
                        p.bytes += bytes;
                        p.spans.push(span);
                    }
                }
            }
        }
        self.unclaimed.fetch_add(unclaimed, Ordering::Relaxed);
        self.changed.notify_waiters();
    }

    /// Whether every trace of `turns` is complete: a span has the request's
    /// (last attempt's) span as parent, and every span's parent is there
    /// (that span, an earlier attempt's, or another span of the trace).
    fn complete(&self, turns: &[TurnTrace]) -> bool {
        let traces = self.lock();
        turns.iter().all(|t| {
            let Some(p) = traces.get(&t.trace_id) else {
                return false;
            };
            let ids: HashSet<&[u8]> = p.spans.iter().map(|s| s.span_id.as_slice()).collect();
            let rooted = p.spans.iter().any(|s| s.parent_span_id == t.span_id);
            rooted
                && p.spans.iter().all(|s| {
                    s.parent_span_id.is_empty()
                        || s.parent_span_id == t.span_id
                        || t.earlier.iter().any(|e| s.parent_span_id == e)
                        || ids.contains(s.parent_span_id.as_slice())
                })
        })
    }
}

/// The spans of `spans` that belong to the attempt whose answer was used:
/// all but those under an earlier attempt's span (a retried request).
fn of_last_attempt(spans: Vec<Span>, t: &TurnTrace) -> Vec<Span> {
    if t.earlier.is_empty() {
        return spans;
    }
    // A span is an earlier attempt's when its chain of parents reaches one.
    let parent: HashMap<&[u8], &[u8]> = spans
        .iter()
        .map(|s| (s.span_id.as_slice(), s.parent_span_id.as_slice()))
        .collect();
    let earlier = |s: &Span| {
        let mut at = s.parent_span_id.as_slice();
        for _ in 0..=spans.len() {
            if t.earlier.iter().any(|e| e == at) {
                return true;
            }
            match parent.get(at) {
                Some(up) => at = up,
                None => return false,
            }
        }
        false
    };
    let keep: Vec<bool> = spans.iter().map(|s| !earlier(s)).collect();
    spans
        .into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect()
}

/// The receivers started in this process, by the address asked for.
static RECEIVERS: OnceLock<Mutex<Started>> = OnceLock::new();

type Started = HashMap<SocketAddr, Result<Arc<Receiver>, TraceError>>;

impl Receiver {
    /// The receiver listening on `addr`, started the first time it is asked
    /// for (port 0: a free port, kept for the process).
    pub(crate) fn on(addr: SocketAddr) -> Result<Arc<Receiver>, TraceError> {
        let all = RECEIVERS.get_or_init(Default::default);
        let mut all = all.lock().unwrap_or_else(PoisonError::into_inner);
        all.entry(addr)
            .or_insert_with(|| Receiver::start(addr))
            .clone()
    }

    fn start(addr: SocketAddr) -> Result<Arc<Receiver>, TraceError> {
        let error = |reason: String| TraceError::Listen {
            addr: addr.to_string(),
            reason,
        };
        let listener = std::net::TcpListener::bind(addr).map_err(|e| {
            error(if e.kind() == std::io::ErrorKind::AddrInUse {
                format!("{e}: another program (a collector, or another run) listens there; give another port, e.g. EVAL_OTLP_RECEIVER=127.0.0.1:4319, and send the agent's spans there")
            } else {
                e.to_string()
            })
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| error(e.to_string()))?;
        let local = listener.local_addr().map_err(|e| error(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| error(e.to_string()))?;
        let store = Arc::new(Store::default());
        let served = store.clone();
        std::thread::Builder::new()
            .name("evals-otlp-receiver".into())
            .spawn(move || runtime.block_on(serve(listener, served)))
            .map_err(|e| error(e.to_string()))?;
        Ok(Arc::new(Receiver { addr: local, store }))
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What a sample registers its traces with.
    pub(crate) fn registry(&self) -> Arc<dyn Registry> {
        self.store.clone()
    }

    /// Spans received under no running sample's trace, and requests refused.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.store.unclaimed.load(Ordering::Relaxed),
            self.store.refused.load(Ordering::Relaxed),
        )
    }

    /// The trajectory of `sample`'s spans: waits until each of its traces is
    /// complete, or `wait` has passed (then says what was missing). `None`
    /// when the sample sent no request (an in-process agent).
    pub(crate) async fn collect(&self, sample: &SampleTrace, wait: Duration) -> Option<Trajectory> {
        let turns = sample.turns();
        if turns.is_empty() {
            return None;
        }
        let deadline = Instant::now() + wait;
        let complete = loop {
            let changed = self.store.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.store.complete(&turns) {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, changed).await.is_err() {
                break self.store.complete(&turns);
            }
        };
        let (spans, over, malformed): (Vec<Vec<Span>>, u64, u64) = {
            let mut traces = self.store.lock();
            let (mut over, mut malformed) = (0, 0);
            let spans = turns
                .iter()
                .map(|t| match traces.get_mut(&t.trace_id) {
                    Some(p) => {
                        over += p.over;
                        malformed += p.malformed;
                        p.bytes = 0;
                        std::mem::take(&mut p.spans)
                    }
                    None => Vec::new(),
                })
                .collect();
            (spans, over, malformed)
        };
        let spans: Vec<Vec<Span>> = spans
            .into_iter()
            .zip(&turns)
            .map(|(s, t)| of_last_attempt(s, t))
            .collect();
        let mut notes = Vec::new();
        if !complete {
            let got: usize = spans.iter().map(Vec::len).sum();
            notes.push(if got == 0 {
                format!(
                    "no span arrived within {} ms of the answer (does the agent export its spans to http://{}/v1/traces, under the traceparent it was sent?)",
                    wait.as_millis(),
                    self.addr
                )
            } else {
                format!(
                    "the trace was incomplete after {} ms ({got} spans, some of their parents missing)",
                    wait.as_millis()
                )
            });
        }
        if over > 0 {
            notes.push(format!(
                "{over} spans over the limit of {MAX_SPANS} spans or {} MiB per trace not kept",
                MAX_TRACE_BYTES >> 20
            ));
        }
        if malformed > 0 {
            notes.push(format!(
                "{malformed} spans with a span id that is not 8 bytes not kept"
            ));
        }
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        let traces = turns.iter().map(TurnTrace::trace_hex).collect();
        Some(super::steps::trajectory(&spans, traces, note, !complete))
    }
}

async fn serve(listener: std::net::TcpListener, store: Arc<Store>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: try again shortly.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let store = store.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let store = store.clone();
                async move { Ok::<_, Infallible>(handle(req, &store).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The body an OTLP request carries.
#[derive(Clone, Copy, PartialEq)]
enum Body {
    Protobuf,
    Json,
}

impl Body {
    fn content_type(self) -> &'static str {
        match self {
            Body::Protobuf => "application/x-protobuf",
            Body::Json => "application/json",
        }
    }
}

fn answer(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

async fn handle(req: Request<hyper::body::Incoming>, store: &Store) -> Response<Full<Bytes>> {
    let refuse = |status: StatusCode, why: String| {
        store.refused.fetch_add(1, Ordering::Relaxed);
        answer(status, "text/plain; charset=utf-8", why)
    };
    if req.uri().path() != "/v1/traces" {
        return refuse(
            StatusCode::NOT_FOUND,
            "OTLP traces are taken at /v1/traces\n".into(),
        );
    }
    if req.method() != hyper::Method::POST {
        return refuse(StatusCode::METHOD_NOT_ALLOWED, "POST OTLP traces\n".into());
    }
    let header = |name| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default()
    };
    let content_type = header(hyper::header::CONTENT_TYPE);
    let body_kind = if content_type.starts_with("application/x-protobuf")
        || content_type.starts_with("application/protobuf")
    {
        Body::Protobuf
    } else if content_type.starts_with("application/json") {
        Body::Json
    } else {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("expected application/x-protobuf or application/json, not `{content_type}`\n"),
        );
    };
    let gzip = match header(hyper::header::CONTENT_ENCODING).as_str() {
        "" | "identity" => false,
        "gzip" => true,
        other => {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("content encoding `{other}` is not gzip\n"),
            );
        }
    };
    // A few bodies at a time: what a flood of requests holds is bounded.
    let Ok(_reading) = store.bodies.acquire().await else {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "shutting down\n".into());
    };
    let bytes = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return if e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body is over {MAX_BODY} bytes\n"),
                )
            } else {
                refuse(
                    StatusCode::BAD_REQUEST,
                    format!("the body could not be read: {e}\n"),
                )
            };
        }
    };
    let bytes = if gzip {
        let mut out = Vec::new();
        let read = flate2::read::GzDecoder::new(&bytes[..])
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut out);
        match read {
            Ok(n) if n > MAX_BODY => {
                return refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body is over {MAX_BODY} bytes once decompressed\n"),
                );
            }
            Ok(_) => Bytes::from(out),
            Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("not gzip: {e}\n")),
        }
    } else {
        bytes
    };
    let request = match body_kind {
        Body::Protobuf => ExportTraceServiceRequest::decode(bytes).map_err(|e| e.to_string()),
        Body::Json => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
    };
    match request {
        Ok(request) => {
            store.ingest(request);
            // An empty ExportTraceServiceResponse: no bytes in protobuf, `{}` in JSON.
            let body: &'static [u8] = match body_kind {
                Body::Protobuf => b"",
                Body::Json => b"{}",
            };
            answer(StatusCode::OK, body_kind.content_type(), body)
        }
        Err(e) => refuse(
            StatusCode::BAD_REQUEST,
            format!("not an OTLP ExportTraceServiceRequest: {e}\n"),
        ),
    }
}

#[cfg(test)]
mod tests;
