//! The receiver's HTTP server: bounded in connections, in the time a
//! client may take to send a request's headers and its body, and in the
//! bytes of bodies buffered at once, so that slow or many clients cannot
//! starve it; each request answered as the OTLP/HTTP specification says
//! (an error's body a `google.rpc.Status`, a partial success an
//! `ExportTraceServiceResponse` with `partial_success`).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceResponse,
};
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::Store;
use crate::otel::decode::{self, Limits, Refusal};

/// How the server is bounded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Longest a client may take to send a request's headers (and longest
    /// a connection stays idle between requests).
    pub(crate) header: Duration,
    /// Longest a client may take to send a request's body, once its
    /// headers are in.
    pub(crate) body: Duration,
    /// Most connections open at once; beyond, a connection is answered
    /// 503 and closed. Each holds at most [`READ_BUFFER`] of what it has
    /// sent but not yet had read.
    pub(crate) connections: usize,
    /// Most bytes of request bodies buffered at once, across connections.
    pub(crate) buffered: usize,
    /// Bodies decoded at once (each up to `limits.body` inflated, and what
    /// `limits` lets it build).
    pub(crate) decodes: usize,
    /// What one request may build.
    pub(crate) limits: Limits,
    /// Most bytes of spans (in memory) kept under all the traces in flight;
    /// beyond, counted.
    pub(crate) held: usize,
}

/// The most a connection buffers of what it has sent (headers over it are
/// refused, `431`).
const READ_BUFFER: usize = 64 << 10;

/// The receiver's bounds (documented in the guide's "Traces" chapter).
pub(crate) const BOUNDS: Bounds = Bounds {
    header: Duration::from_secs(10),
    body: Duration::from_secs(10),
    connections: 256,
    buffered: 2 * decode::LIMITS.body,
    decodes: 2,
    limits: decode::LIMITS,
    held: super::MAX_HELD,
};

/// A connection's stream, noting whether bytes of a request came since its
/// last answer (a header timeout on an idle connection is not a slow client).
struct Watched {
    stream: tokio::net::TcpStream,
    started: Arc<AtomicBool>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.started.store(true, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

pub(super) async fn serve(listener: std::net::TcpListener, store: Arc<Store>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let connections = Arc::new(tokio::sync::Semaphore::new(store.bounds.connections));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: try again shortly.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let Ok(slot) = connections.clone().try_acquire_owned() else {
            store.counts.busy.fetch_add(1, Ordering::Relaxed);
            store.troubled();
            tokio::spawn(turn_away(stream));
            continue;
        };
        let store = store.clone();
        tokio::spawn(async move {
            let started = Arc::new(AtomicBool::new(false));
            let io = Watched {
                stream,
                started: started.clone(),
            };
            let served = store.clone();
            let answered = started.clone();
            let service = hyper::service::service_fn(move |req| {
                let store = served.clone();
                let answered = answered.clone();
                async move {
                    let response = handle(req, &store).await;
                    answered.store(false, Ordering::Relaxed);
                    Ok::<_, Infallible>(response)
                }
            });
            let done = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(store.bounds.header)
                .max_buf_size(READ_BUFFER)
                .serve_connection(hyper_util::rt::TokioIo::new(io), service)
                .await;
            if let Err(e) = done
                && e.is_timeout()
                && started.load(Ordering::Relaxed)
            {
                store.counts.slow.fetch_add(1, Ordering::Relaxed);
                store.troubled();
            }
            drop(slot);
        });
    }
}

/// A connection over the bound: answered 503 (try again later) and closed.
async fn turn_away(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let answer = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(answer).await;
        let _ = stream.shutdown().await;
    })
    .await;
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

type Answer = Response<Full<Bytes>>;

fn answer(status: StatusCode, body: Body, bytes: Vec<u8>) -> Answer {
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(body.content_type()),
    );
    r
}

/// An error answer: a `google.rpc.Status` (code, message), as the OTLP/HTTP
/// specification asks of every 4xx and 5xx, in the request's encoding.
fn failure(status: StatusCode, body: Body, message: &str) -> Answer {
    // The gRPC code nearest the HTTP status (the specification lets
    // clients ignore it).
    let code: i32 = match status {
        StatusCode::PAYLOAD_TOO_LARGE => 8,
        StatusCode::SERVICE_UNAVAILABLE => 14,
        StatusCode::REQUEST_TIMEOUT => 4,
        StatusCode::NOT_FOUND => 5,
        StatusCode::METHOD_NOT_ALLOWED | StatusCode::UNSUPPORTED_MEDIA_TYPE => 12,
        _ => 3,
    };
    let bytes = match body {
        Body::Json => serde_json::json!({"code": code, "message": message})
            .to_string()
            .into_bytes(),
        Body::Protobuf => {
            let mut b = Vec::new();
            prost::encoding::int32::encode(1, &code, &mut b);
            prost::encoding::string::encode(2, &message.to_string(), &mut b);
            b
        }
    };
    let mut r = answer(status, body, bytes);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("1"),
        );
    }
    r
}

/// The success answer: an `ExportTraceServiceResponse`, with
/// `partial_success` when spans of the request were not kept.
fn success(body: Body, rejected: u64, why: String) -> Answer {
    let response = ExportTraceServiceResponse {
        partial_success: (rejected > 0).then(|| ExportTracePartialSuccess {
            rejected_spans: i64::try_from(rejected).unwrap_or(i64::MAX),
            error_message: why,
        }),
    };
    let bytes = match (body, rejected) {
        (Body::Protobuf, _) => response.encode_to_vec(),
        // An empty response: `{}` (serde would write `null` for the field).
        (Body::Json, 0) => b"{}".to_vec(),
        (Body::Json, _) => serde_json::to_vec(&response).unwrap_or_else(|_| b"{}".to_vec()),
    };
    answer(StatusCode::OK, body, bytes)
}

/// Bytes of the shared body budget held by one request, given back when
/// it is done.
struct Held<'a> {
    budget: &'a tokio::sync::Semaphore,
    bytes: usize,
}

impl Held<'_> {
    async fn grow(&mut self, bytes: usize) -> Result<(), ()> {
        let n = u32::try_from(bytes).map_err(|_| ())?;
        self.budget.acquire_many(n).await.map_err(|_| ())?.forget();
        self.bytes += bytes;
        Ok(())
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.budget.add_permits(self.bytes);
    }
}

/// Why a body was not read.
enum Unread {
    TooLarge,
    Slow,
    Busy,
    Broken(String),
}

/// The body of `req`, read within the body deadline and the shared budget.
async fn read_body<'a>(
    req: Request<hyper::body::Incoming>,
    store: &'a Store,
) -> Result<(Vec<u8>, Held<'a>), Unread> {
    let max = store.bounds.limits.body;
    let declared = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(Unread::TooLarge);
    }
    let mut held = Held {
        budget: &store.budget,
        bytes: 0,
    };
    let mut waiting_for_budget = false;
    let mut out: Vec<u8> = Vec::new();
    let mut body = req.into_body();
    let read = tokio::time::timeout(store.bounds.body, async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Unread::Broken(e.to_string()))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if out.len() + data.len() > max {
                return Err(Unread::TooLarge);
            }
            if out.capacity() - out.len() < data.len() {
                let want = (out.capacity() * 2).max(out.len() + data.len()).min(max);
                waiting_for_budget = true;
                held.grow(want - out.capacity())
                    .await
                    .map_err(|()| Unread::Busy)?;
                waiting_for_budget = false;
                out.reserve_exact(want - out.len());
            }
            out.extend_from_slice(&data);
        }
        Ok(())
    })
    .await;
    match read {
        Ok(Ok(())) => Ok((out, held)),
        Ok(Err(e)) => Err(e),
        Err(_) if waiting_for_budget => Err(Unread::Busy),
        Err(_) => Err(Unread::Slow),
    }
}

async fn handle(req: Request<hyper::body::Incoming>, store: &Arc<Store>) -> Answer {
    let header = |name| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default()
    };
    let content_type = header(hyper::header::CONTENT_TYPE);
    let kind = if content_type.starts_with("application/json") {
        Body::Json
    } else {
        Body::Protobuf
    };
    let refuse = |status: StatusCode, why: &str| {
        store.counts.other.fetch_add(1, Ordering::Relaxed);
        failure(status, kind, why)
    };
    if req.uri().path() != "/v1/traces" {
        return refuse(StatusCode::NOT_FOUND, "OTLP traces are taken at /v1/traces");
    }
    if req.method() != hyper::Method::POST {
        return refuse(StatusCode::METHOD_NOT_ALLOWED, "POST OTLP traces");
    }
    if !(content_type.starts_with("application/x-protobuf")
        || content_type.starts_with("application/protobuf")
        || content_type.starts_with("application/json"))
    {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &format!(
                "expected application/x-protobuf or application/json, not `{}`",
                crate::model::one_line(&content_type, 100)
            ),
        );
    }
    let gzip = match header(hyper::header::CONTENT_ENCODING).as_str() {
        "" | "identity" => false,
        "gzip" => true,
        other => {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                &format!(
                    "content encoding `{}` is not gzip",
                    crate::model::one_line(other, 100)
                ),
            );
        }
    };
    let (bytes, held) = match read_body(req, store).await {
        Ok(read) => read,
        Err(unread) => return store.unread(unread, kind),
    };
    // Decoding is work for a core, not for the server's thread: a few at
    // a time, on the blocking pool.
    let Ok(_decoding) = store.decodes.acquire().await else {
        return failure(StatusCode::SERVICE_UNAVAILABLE, kind, "shutting down");
    };
    let decoding = store.clone();
    let decoded = tokio::task::spawn_blocking(move || {
        let bytes = if gzip {
            decode::inflate(&bytes, decoding.bounds.limits.body)?
        } else {
            bytes
        };
        let (request, _shape) =
            decode::decode(&bytes, kind == Body::Json, &decoding.bounds.limits)?;
        drop(bytes);
        Ok::<_, Refusal>(decoding.ingest(request))
    })
    .await;
    drop(held);
    match decoded {
        Ok(Ok((rejected, why))) => success(kind, rejected, why),
        Ok(Err(refusal)) => store.refused(&refusal, kind),
        Err(e) => failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            kind,
            &format!("decoding failed: {e}"),
        ),
    }
}

impl Store {
    fn unread(&self, unread: Unread, kind: Body) -> Answer {
        match unread {
            Unread::TooLarge => self.refused(
                &Refusal::TooLarge(format!(
                    "the body is over {} bytes",
                    self.bounds.limits.body
                )),
                kind,
            ),
            Unread::Slow => {
                self.counts.slow.fetch_add(1, Ordering::Relaxed);
                self.troubled();
                failure(
                    StatusCode::REQUEST_TIMEOUT,
                    kind,
                    &format!(
                        "the body took over {} ms to arrive",
                        self.bounds.body.as_millis()
                    ),
                )
            }
            Unread::Busy => {
                self.counts.busy.fetch_add(1, Ordering::Relaxed);
                self.troubled();
                failure(
                    StatusCode::SERVICE_UNAVAILABLE,
                    kind,
                    "the receiver is reading as many bodies as it holds at once: try again",
                )
            }
            Unread::Broken(e) => {
                self.counts.malformed.fetch_add(1, Ordering::Relaxed);
                self.troubled();
                failure(
                    StatusCode::BAD_REQUEST,
                    kind,
                    &format!("the body could not be read: {e}"),
                )
            }
        }
    }

    fn refused(&self, refusal: &Refusal, kind: Body) -> Answer {
        let status = match refusal {
            Refusal::TooLarge(_) => {
                self.counts.too_large.fetch_add(1, Ordering::Relaxed);
                StatusCode::PAYLOAD_TOO_LARGE
            }
            Refusal::Malformed(_) => {
                self.counts.malformed.fetch_add(1, Ordering::Relaxed);
                StatusCode::BAD_REQUEST
            }
        };
        self.troubled();
        failure(status, kind, &refusal.to_string())
    }
}
