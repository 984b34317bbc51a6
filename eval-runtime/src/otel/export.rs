//! Evaluation results out, as OpenTelemetry: with `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (or `..._TRACES_ENDPOINT`) set, each evaluated sample becomes a span
//! under its run's trace, linked to the traces of the requests its agent was
//! sent, with one `gen_ai.evaluation.result` event per metric (as the GenAI
//! semantic conventions define the event: `gen_ai.evaluation.name`,
//! `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label` —
//! `pass`, `fail` or `inconclusive` — and `gen_ai.evaluation.explanation`,
//! the metric's one-line why; `error.type` when it has no score; and
//! `gen_ai.response.id`, the id the agent gave its answer, when it gave
//! one). The span of each request the agent was sent (the root of the trace
//! it started, the parent of the agent's own spans) is exported with it, so
//! that its links resolve.
//!
//! Nothing waits for the collector: a sample's span goes into a bounded
//! queue ([`ExportSettings::queue`]) and a thread of the exporter's own
//! sends batches as OTLP/HTTP (protobuf or JSON, gzip when asked), retrying
//! `429`/`502`/`503`/`504` twice. A span that finds the queue full, or a
//! collector that is down (for a second after a failure), is dropped and
//! counted; the end of the run waits at most [`FLUSH_WAIT`] for what is
//! queued and says what was sent and dropped. The results file holds every
//! result whatever the collector does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver as Queue, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, InstrumentationScope, KeyValue, any_value::Value as Av,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link, SpanKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use prost::Message as _;

use crate::config::{ExportSettings, OtlpProtocol};
use crate::model::{SampleReport, Verdict, one_line};

/// The longest the end of a run waits for queued spans to be sent: a
/// healthy collector takes the last batch well within it; a slow one does
/// not hold the run up longer (what is left is said, not waited for).
pub(crate) const FLUSH_WAIT: Duration = Duration::from_millis(500);
/// Spans per request, at most.
const BATCH: usize = 512;
/// What the end of a run waits beyond the time the collector should take,
/// at the pace it has been answering.
const SLOW: Duration = Duration::from_millis(100);
/// After a failed send, batches are dropped (not sent) for this long.
const DOWN_FOR: Duration = Duration::from_secs(1);

/// A run's own trace: its root span, and when it started.
#[derive(Debug)]
pub(crate) struct RunTrace {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    start: SystemTime,
    /// Whether its root span was queued (once).
    ended: std::sync::atomic::AtomicBool,
    /// What the process's exporters had sent and dropped when the run
    /// started (the exporter of an endpoint serves every run of a process):
    /// the end of the run reports its own.
    before: (u64, u64),
}

impl RunTrace {
    pub(crate) fn new() -> RunTrace {
        let ids = super::context::new_ids();
        RunTrace {
            trace_id: ids.0,
            span_id: ids.1,
            start: SystemTime::now(),
            ended: false.into(),
            before: (
                TOTAL_SENT.load(Ordering::Relaxed),
                TOTAL_DROPPED.load(Ordering::Relaxed),
            ),
        }
    }

    /// `exported`, with what was sent and dropped since the run started.
    pub(crate) fn own(&self, mut exported: Exported) -> Exported {
        exported.sent = TOTAL_SENT
            .load(Ordering::Relaxed)
            .saturating_sub(self.before.0);
        exported.dropped = TOTAL_DROPPED
            .load(Ordering::Relaxed)
            .saturating_sub(self.before.1);
        exported
    }
}

/// Spans every exporter of the process sent and dropped.
static TOTAL_SENT: AtomicU64 = AtomicU64::new(0);
static TOTAL_DROPPED: AtomicU64 = AtomicU64::new(0);

/// What the exporter did, so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Exported {
    pub(crate) sent: u64,
    pub(crate) dropped: u64,
    /// Still queued when the end of the run stopped waiting.
    pub(crate) queued: u64,
    /// The last reason a send failed.
    pub(crate) failure: Option<String>,
}

impl Exported {
    /// One line saying what was exported to `endpoint`, and dropped.
    pub(crate) fn note(&self, endpoint: &str) -> String {
        let mut note = format!(
            "evaluation results exported to {endpoint}: {} spans sent",
            self.sent
        );
        if self.dropped > 0 {
            note.push_str(&format!(
                ", {} dropped (the collector was slow or down; the results file has them all)",
                self.dropped
            ));
        }
        if self.queued > 0 {
            note.push_str(&format!(", {} still queued", self.queued));
        }
        if let Some(why) = self.failure.as_ref().filter(|_| self.dropped > 0) {
            note.push_str(&format!(" (last failure: {why})"));
        }
        note
    }
}

enum Item {
    Span(Box<Span>),
    Flush(std::sync::mpsc::Sender<()>),
}

#[derive(Default)]
struct Counts {
    /// Spans that went into the queue.
    queued: AtomicU64,
    sent: AtomicU64,
    /// Every span dropped: refused by a full queue, or by the worker.
    dropped: AtomicU64,
    /// Those the worker dropped (after they were queued).
    late: AtomicU64,
    failure: Mutex<Option<String>>,
    /// How long a successful request took, lately (a moving average),
    /// microseconds; 0: none has succeeded yet.
    rtt_us: AtomicU64,
    /// When the request in flight was sent (microseconds after `epoch`),
    /// 0 when none is.
    in_flight_since_us: AtomicU64,
    /// The end of a run is waiting: an overloaded collector is not retried.
    flushing: std::sync::atomic::AtomicBool,
    epoch: OnceLock<Instant>,
}

impl Counts {
    fn drop_n(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
        TOTAL_DROPPED.fetch_add(n, Ordering::Relaxed);
    }

    fn sent_n(&self, n: u64) {
        self.sent.fetch_add(n, Ordering::Relaxed);
        TOTAL_SENT.fetch_add(n, Ordering::Relaxed);
    }

    fn now_us(&self) -> u64 {
        let epoch = *self.epoch.get_or_init(Instant::now);
        u64::try_from(epoch.elapsed().as_micros())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// How long what is queued and in flight should take to be sent, at the
    /// pace the collector answered lately; `None` before it ever answered.
    fn expected_wait(&self) -> Option<Duration> {
        let rtt = self.rtt_us.load(Ordering::Relaxed);
        if rtt == 0 {
            return None;
        }
        let since = self.in_flight_since_us.load(Ordering::Relaxed);
        let in_flight = if since == 0 {
            0
        } else {
            (since + rtt).saturating_sub(self.now_us())
        };
        let waiting = self
            .queued
            .load(Ordering::Relaxed)
            .saturating_sub(self.sent.load(Ordering::Relaxed) + self.late.load(Ordering::Relaxed));
        let batches = waiting.div_ceil(BATCH as u64);
        Some(Duration::from_micros(in_flight + batches * rtt))
    }
}

/// The exporter of one endpoint, for the rest of the process.
pub(crate) struct Exporter {
    settings: ExportSettings,
    queue: SyncSender<Item>,
    counts: Arc<Counts>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("endpoint", &self.shown_endpoint())
            .finish_non_exhaustive()
    }
}

type Exporters = Mutex<Vec<(ExportSettings, Arc<Exporter>)>>;

impl Exporter {
    /// The exporter `settings` describe, started the first time.
    pub(crate) fn for_settings(settings: &ExportSettings) -> Arc<Exporter> {
        static ALL: OnceLock<Exporters> = OnceLock::new();
        let mut all = ALL
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, e)) = all.iter().find(|(s, _)| s == settings) {
            return e.clone();
        }
        let e = Arc::new(Exporter::start(settings.clone()));
        all.push((settings.clone(), e.clone()));
        e
    }

    fn start(settings: ExportSettings) -> Exporter {
        let (queue, items) = std::sync::mpsc::sync_channel(settings.queue);
        let counts = Arc::new(Counts::default());
        let worker = Worker {
            settings: settings.clone(),
            counts: counts.clone(),
            down_until: None,
        };
        let spawned = std::thread::Builder::new()
            .name("evals-otlp-export".into())
            .spawn(move || worker.run(items));
        if let Err(e) = spawned {
            // No thread: every span will find the queue closed, and count.
            *counts
                .failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner) =
                Some(format!("the export thread could not start: {e}"));
        }
        Exporter {
            settings,
            queue,
            counts,
        }
    }

    /// Where it sends, without credentials or query.
    pub(crate) fn shown_endpoint(&self) -> String {
        reqwest::Url::parse(&self.settings.endpoint).map_or_else(
            |_| "the OTLP endpoint".into(),
            |u| crate::http::redact_url(&u),
        )
    }

    /// Queues the span of `report` (a sample of `dataset`) under `run`, and
    /// the spans of the agent requests it links to; never waits.
    pub(crate) fn sample(&self, run: &RunTrace, dataset: &str, report: &SampleReport) {
        for span in request_spans(report) {
            self.queue_span(span);
        }
        self.queue_span(sample_span(run, dataset, report));
    }

    /// Queues `run`'s root span (once), named for its `datasets`.
    pub(crate) fn run_span(&self, run: &RunTrace, datasets: &[&str]) {
        if run.ended.swap(true, Ordering::Relaxed) {
            return;
        }
        self.queue_span(Span {
            trace_id: run.trace_id.to_vec(),
            span_id: run.span_id.to_vec(),
            name: "evals run".into(),
            kind: SpanKind::Internal as i32,
            start_time_unix_nano: nanos(run.start),
            end_time_unix_nano: nanos(SystemTime::now()),
            attributes: vec![text("evals.datasets", &datasets.join(", "))],
            ..Span::default()
        });
    }

    fn queue_span(&self, span: Span) {
        match self.queue.try_send(Item::Span(Box::new(span))) {
            Ok(()) => {
                self.counts.queued.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_)) => self.counts.drop_n(1),
            Err(TrySendError::Disconnected(_)) => self.counts.drop_n(1),
        }
    }

    /// Waits at most `wait` for what is queued to be sent (or dropped); what
    /// was exported so far. A collector that, at the pace it has been
    /// answering, would take longer is not waited for at all (what it has
    /// not taken is said to be still queued), and one that refuses is not
    /// retried.
    pub(crate) fn flush(&self, wait: Duration) -> Exported {
        let wait = match self.counts.expected_wait() {
            Some(expected) if expected > wait => Duration::ZERO,
            Some(expected) => wait.min(expected + SLOW),
            None => wait,
        };
        self.counts.flushing.store(true, Ordering::Relaxed);
        let exported = self.flush_within(wait);
        self.counts.flushing.store(false, Ordering::Relaxed);
        exported
    }

    fn flush_within(&self, wait: Duration) -> Exported {
        let deadline = Instant::now() + wait;
        let (done, flushed) = std::sync::mpsc::channel();
        let mut item = Item::Flush(done);
        loop {
            match self.queue.try_send(item) {
                Ok(()) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let _ = flushed.recv_timeout(left);
                    break;
                }
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    item = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => break,
            }
        }
        self.exported()
    }

    /// What it did so far.
    pub(crate) fn exported(&self) -> Exported {
        let sent = self.counts.sent.load(Ordering::Relaxed);
        let dropped = self.counts.dropped.load(Ordering::Relaxed);
        let queued = self.counts.queued.load(Ordering::Relaxed);
        Exported {
            sent,
            dropped,
            queued: queued.saturating_sub(sent + self.counts.late.load(Ordering::Relaxed)),
            failure: self
                .counts
                .failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }
}

/// The thread that sends.
struct Worker {
    settings: ExportSettings,
    counts: Arc<Counts>,
    down_until: Option<Instant>,
}

impl Worker {
    fn run(mut self, items: Queue<Item>) {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                self.failed(format!("no async runtime for the exporter: {e}"));
                // Drain: every span is dropped and counted.
                for item in items {
                    match item {
                        Item::Span(_) => self.dropped_late(1),
                        Item::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
                return;
            }
        };
        let mut batch: Vec<Span> = Vec::with_capacity(BATCH);
        while let Ok(first) = items.recv() {
            let mut flush = None;
            let mut next = Some(first);
            while let Some(item) = next.take() {
                match item {
                    Item::Span(span) => batch.push(*span),
                    Item::Flush(done) => {
                        flush = Some(done);
                        break;
                    }
                }
                if batch.len() >= BATCH {
                    break;
                }
                next = items.try_recv().ok();
            }
            if !batch.is_empty() {
                let spans = std::mem::take(&mut batch);
                runtime.block_on(self.send(spans));
            }
            if let Some(done) = flush {
                let _ = done.send(());
            }
        }
    }

    fn failed(&self, why: String) {
        *self
            .counts
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why);
    }

    fn dropped_late(&self, n: u64) {
        self.counts.drop_n(n);
        self.counts.late.fetch_add(n, Ordering::Relaxed);
    }

    /// Sends `spans` in one request (retrying an overloaded collector
    /// twice); drops them, counted, when the collector is down or refuses.
    async fn send(&mut self, spans: Vec<Span>) {
        let n = spans.len() as u64;
        if self.down_until.is_some_and(|t| Instant::now() < t) {
            self.dropped_late(n);
            return;
        }
        let body = match self.body(spans) {
            Ok(b) => b,
            Err(why) => {
                self.failed(why);
                self.dropped_late(n);
                return;
            }
        };
        let mut backoff = Duration::from_millis(100);
        for attempt in 0..3 {
            let started = Instant::now();
            self.counts
                .in_flight_since_us
                .store(self.counts.now_us(), Ordering::Relaxed);
            let posted = self.post(body.clone()).await;
            self.counts.in_flight_since_us.store(0, Ordering::Relaxed);
            match posted {
                Ok(()) => {
                    self.counts.sent_n(n);
                    let took = u64::try_from(started.elapsed().as_micros())
                        .unwrap_or(u64::MAX)
                        .max(1);
                    let rtt = self.counts.rtt_us.load(Ordering::Relaxed);
                    let rtt = if rtt == 0 { took } else { (3 * rtt + took) / 4 };
                    self.counts.rtt_us.store(rtt.max(1), Ordering::Relaxed);
                    self.down_until = None;
                    return;
                }
                Err((why, retry)) => {
                    let flushing = self.counts.flushing.load(Ordering::Relaxed);
                    if retry && attempt < 2 && !flushing {
                        // A backoff the end of a run cuts short.
                        let until = Instant::now() + backoff;
                        while Instant::now() < until
                            && !self.counts.flushing.load(Ordering::Relaxed)
                        {
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        backoff *= 4;
                        continue;
                    }
                    self.failed(why);
                    self.down_until = Some(Instant::now() + DOWN_FOR);
                    self.dropped_late(n);
                    return;
                }
            }
        }
    }

    /// The request body: the spans under the run's resource.
    fn body(&self, spans: Vec<Span>) -> Result<bytes::Bytes, String> {
        let mut resource = vec![text("service.name", &self.settings.service_name)];
        resource.extend(self.settings.resource.iter().map(|(k, v)| text(k, v)));
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: resource,
                    ..Resource::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "eval-runtime".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                        ..InstrumentationScope::default()
                    }),
                    spans,
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        };
        let raw = match self.settings.protocol {
            OtlpProtocol::Json => serde_json::to_vec(&request).map_err(|e| e.to_string())?,
            _ => request.encode_to_vec(),
        };
        if !self.settings.gzip {
            return Ok(raw.into());
        }
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&raw).map_err(|e| e.to_string())?;
        gz.finish().map(Into::into).map_err(|e| e.to_string())
    }

    /// One POST; on failure, why, and whether it is worth retrying.
    async fn post(&self, body: bytes::Bytes) -> Result<(), (String, bool)> {
        let url = &self.settings.endpoint;
        let client = crate::http::runtime_client(url).map_err(|e| (e.to_string(), false))?;
        let content_type = match self.settings.protocol {
            OtlpProtocol::Json => "application/json",
            _ => "application/x-protobuf",
        };
        let mut request = client
            .post(url)
            .timeout(self.settings.timeout)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body);
        if self.settings.gzip {
            request = request.header(reqwest::header::CONTENT_ENCODING, "gzip");
        }
        for (name, value) in &self.settings.headers {
            request = request.header(name.as_str(), value.expose());
        }
        let shown =
            crate::http::redact_url(&reqwest::Url::parse(url).map_err(|e| (e.to_string(), false))?);
        match request.send().await {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => {
                let status = r.status().as_u16();
                Err((
                    format!("{shown} answered {status}"),
                    matches!(status, 429 | 502 | 503 | 504),
                ))
            }
            Err(e) => Err((
                format!(
                    "{shown} unreachable: {}",
                    one_line(&crate::http::error_chain(&e), 200)
                ),
                false,
            )),
        }
    }
}

/// Whether `endpoint` (a URL) is `addr`: a loopback host at its port.
#[cfg(test)] // issue37:otel-in: the run asks otel::loopback::reaches (every spelling of its socket)
pub(crate) fn is_at(endpoint: &str, addr: std::net::SocketAddr) -> bool {
    let Ok(url) = reqwest::Url::parse(endpoint) else {
        return false;
    };
    let loopback = match url.host_str() {
        Some(h) if h.eq_ignore_ascii_case("localhost") => true,
        Some(h) => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    };
    loopback && url.port_or_known_default() == Some(addr.port())
}

/// The spans of the requests `report`'s agent was sent (each run's, each
/// turn's last attempt): the root of the trace each request started, the
/// parent of the agent's own spans, with the times it was sent and
/// answered. Exported with the sample's span, which links to them, so that
/// its links resolve in the collector.
pub(crate) fn request_spans(report: &SampleReport) -> Vec<Span> {
    let mut seen = std::collections::HashSet::new();
    report
        .agent_spans
        .iter()
        .filter(|a| seen.insert(a.span_id))
        .map(|a| Span {
            trace_id: a.trace_id.to_vec(),
            span_id: a.span_id.to_vec(),
            name: "evals agent request".into(),
            kind: SpanKind::Client as i32,
            start_time_unix_nano: nanos(a.start),
            end_time_unix_nano: nanos(a.end),
            attributes: vec![
                text("evals.sample.id", &report.id),
                text("evals.test_name", &report.test_name),
            ],
            ..Span::default()
        })
        .collect()
}

/// The span of one evaluated sample (see the [module docs](self)).
pub(crate) fn sample_span(run: &RunTrace, dataset: &str, report: &SampleReport) -> Span {
    let end = SystemTime::now();
    let start = end.checked_sub(report.latency).unwrap_or(end);
    let verdict = Verdict::of(report);
    let mut attributes = vec![
        text("evals.dataset", dataset),
        text("evals.sample.id", &report.id),
        text("evals.test_name", &report.test_name),
        text("evals.source", &report.source.to_string()),
        text("evals.verdict", verdict_label(verdict)),
    ];
    // The answer evaluated, as the agent named it (OpenAI `id`).
    let response_id = report.response_id.as_deref().map(|id| one_line(id, 256));
    if let Some(id) = &response_id {
        attributes.push(text("gen_ai.response.id", id));
    }
    let mut status = None;
    if let Some(e) = &report.error {
        attributes.push(text("error.type", "sample_error"));
        status = Some(Status {
            code: StatusCode::Error as i32,
            message: one_line(&e.to_string(), 500),
        });
    }
    let events = report
        .metrics
        .iter()
        .map(|m| {
            let label = match &m.spread {
                Some(s) if s.straddles => "inconclusive",
                _ if m.passed => "pass",
                _ => "fail",
            };
            let mut attributes = vec![text("gen_ai.evaluation.name", &m.name)];
            if let Some(id) = &response_id {
                attributes.push(text("gen_ai.response.id", id));
            }
            if let Some(score) = m.score {
                attributes.push(KeyValue {
                    key: "gen_ai.evaluation.score.value".into(),
                    value: Some(AnyValue {
                        value: Some(Av::DoubleValue(score)),
                    }),
                    ..KeyValue::default()
                });
            }
            attributes.push(text("gen_ai.evaluation.score.label", label));
            let why = match (&m.error, &m.reason) {
                (Some(e), _) => Some(e.to_string()),
                (None, Some(r)) => Some(r.clone()),
                (None, None) => None,
            };
            if let Some(why) = why {
                attributes.push(text("gen_ai.evaluation.explanation", &one_line(&why, 500)));
            }
            if m.error.is_some() {
                attributes.push(text("error.type", "metric_error"));
            }
            Event {
                time_unix_nano: nanos(end),
                name: "gen_ai.evaluation.result".into(),
                attributes,
                ..Event::default()
            }
        })
        .collect();
    let links = report
        .agent_spans
        .iter()
        .map(|a| Link {
            trace_id: a.trace_id.to_vec(),
            span_id: a.span_id.to_vec(),
            attributes: vec![text("evals.link", "agent request")],
            ..Link::default()
        })
        .collect();
    Span {
        trace_id: run.trace_id.to_vec(),
        span_id: super::context::new_ids().1.to_vec(),
        parent_span_id: run.span_id.to_vec(),
        name: format!("evaluate {}", report.test_name),
        kind: SpanKind::Internal as i32,
        start_time_unix_nano: nanos(start),
        end_time_unix_nano: nanos(end),
        attributes,
        events,
        links,
        status,
        ..Span::default()
    }
}

fn verdict_label(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Inconclusive => "inconclusive",
        _ => "error",
    }
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(Av::StringValue(value.into())),
        }),
        ..KeyValue::default()
    }
}

#[cfg(test)]
mod tests;
