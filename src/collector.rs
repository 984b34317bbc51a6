//! A local OpenTelemetry collector for tests and the bench: an OTLP/HTTP
//! receiver (`POST /v1/traces`, protobuf or JSON, gzip or not) that keeps
//! every span it is sent, with the headers of the requests that carried
//! them. It can be made slow ([`CollectorConfig::delay`]) or refuse with a
//! status ([`CollectorConfig::status`]), to see what an exporter does then.

use std::io::Read as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

pub use opentelemetry_proto::tonic::trace::v1::Span;

use crate::demo::DemoServer;

/// How the collector behaves.
#[derive(Debug, Clone, Default)]
pub struct CollectorConfig {
    /// Wait this long before answering each request.
    pub delay: Duration,
    /// Answer with this status instead of taking the spans (e.g. 503).
    pub status: Option<u16>,
}

/// What the collector was sent.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    spans: Vec<Span>,
    /// The `service.name` of each span's resource.
    services: Vec<String>,
    requests: Vec<Request>,
}

/// One request: its content type, and the headers a test may look for.
#[derive(Debug, Clone)]
pub struct Request {
    /// `Content-Type`.
    pub content_type: String,
    /// `Content-Encoding`, if any.
    pub encoding: Option<String>,
    /// Every header, lowercase name and value.
    pub headers: Vec<(String, String)>,
}

impl Collected {
    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.lock().spans.clone()
    }

    /// The `service.name` of each span's resource, in the order of
    /// [`spans`](Self::spans).
    pub fn services(&self) -> Vec<String> {
        self.lock().services.clone()
    }

    /// Every request received so far (refused ones too).
    pub fn requests(&self) -> Vec<Request> {
        self.lock().requests.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts a collector on `127.0.0.1` (a free port): its server (whose
/// [`url`](DemoServer::url) is the OTLP endpoint to give an exporter) and
/// what it collects.
pub fn spawn(config: CollectorConfig) -> std::io::Result<(DemoServer, Collected)> {
    let collected = Collected::default();
    let app = Router::new()
        .route("/v1/traces", post(traces))
        .with_state((Arc::new(config), collected.clone()));
    let server = crate::demo::spawn_router(app, "demo-collector")?;
    Ok((server, collected))
}

async fn traces(
    State((config, collected)): State<(Arc<CollectorConfig>, Collected)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !config.delay.is_zero() {
        tokio::time::sleep(config.delay).await;
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let request = Request {
        content_type: header("content-type").unwrap_or_default(),
        encoding: header("content-encoding"),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
    };
    let json = request.content_type.starts_with("application/json");
    collected.lock().requests.push(request.clone());
    if let Some(status) = config.status {
        return StatusCode::from_u16(status)
            .unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
            .into_response();
    }
    let bytes = if request.encoding.as_deref() == Some("gzip") {
        let mut out = Vec::new();
        // issue37:otel-in: inflated up to 64 MiB (a test's batches are far smaller).
        if let Err(e) = flate2::read::GzDecoder::new(&body[..])
            .take(64 << 20)
            .read_to_end(&mut out)
        {
            return (StatusCode::BAD_REQUEST, format!("not gzip: {e}")).into_response();
        }
        out
    } else {
        body.to_vec()
    };
    let decoded = if json {
        serde_json::from_slice::<ExportTraceServiceRequest>(&bytes).map_err(|e| e.to_string())
    } else {
        ExportTraceServiceRequest::decode(&bytes[..]).map_err(|e| e.to_string())
    };
    let decoded = match decoded {
        Ok(d) => d,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    let mut inner = collected.lock();
    for resource in decoded.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.as_ref())
            .and_then(|v| match &v.value {
                Some(opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(s)) => {
                    Some(s.clone())
                }
                _ => None,
            })
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                inner.services.push(service.clone());
                inner.spans.push(span);
            }
        }
    }
    if json {
        ([("content-type", "application/json")], "{}").into_response()
    } else {
        (
            [("content-type", "application/x-protobuf")],
            Vec::<u8>::new(),
        )
            .into_response()
    }
}
