//! The OTLP receiver: an HTTP server on loopback that takes the agent's
//! spans (`POST /v1/traces`, OTLP/HTTP with a protobuf or a JSON body,
//! gzip or not, as the OTLP specification defines it), keeps those under a
//! trace a running sample started, and hands each sample its spans once its
//! trace is complete.
//!
//! It runs on a thread of its own, with its own runtime, for the rest of the
//! process: the attribute's tests, each on its own runtime, share it.
//! Spans under no running sample's trace are counted and dropped, so memory
//! is bounded by the samples in flight ([`MAX_SPANS`] spans or
//! [`MAX_TRACE_BYTES`] each, [`MAX_HELD`] in all), by what a request may
//! build once decoded ([`decode::LIMITS`]) and by the server's bounds
//! ([`server::BOUNDS`]: connections, bodies buffered, time to send them).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;

use super::context::{Registry, SampleTrace, TurnTrace};
use super::decode;
use super::tree::{Place, places};
use crate::model::{TraceError, Trajectory};

mod server;

pub(crate) use server::{BOUNDS, Bounds};

/// Most spans kept under one trace; beyond, they are counted.
pub(crate) const MAX_SPANS: usize = 4096;
/// Most bytes of spans (in memory, decoded) kept under one trace; beyond,
/// counted.
pub(crate) const MAX_TRACE_BYTES: usize = 8 << 20;
/// Most bytes of spans (in memory) kept under all the traces in flight;
/// beyond, counted.
pub(crate) const MAX_HELD: usize = 64 << 20;

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
    /// Bytes of `spans`, in memory.
    bytes: usize,
    /// Spans not kept: beyond [`MAX_SPANS`] or [`MAX_TRACE_BYTES`].
    over: u64,
    /// Spans not kept: beyond [`MAX_HELD`] across traces.
    over_all: u64,
    /// Spans not kept: a span id that is not 8 bytes.
    malformed: u64,
    /// The receiver's troubles ([`Counts::trouble`]) when the trace began.
    trouble_at: u64,
}

#[derive(Default)]
struct Traces {
    pending: HashMap<[u8; 16], Pending>,
    /// Bytes of all the spans kept, in memory.
    held: usize,
}

/// What the receiver did not take, counted for the run's notes.
#[derive(Default)]
struct Counts {
    /// Spans under no running sample's trace (another program's, or late).
    unclaimed: AtomicU64,
    /// Requests over a limit of what they may build (413).
    too_large: AtomicU64,
    /// Requests that are not OTLP, or nest values too deep (400).
    malformed: AtomicU64,
    /// Requests elsewhere than `POST /v1/traces`, or of another type.
    other: AtomicU64,
    /// Requests whose headers or body took too long.
    slow: AtomicU64,
    /// Connections over the bound, bodies over the buffer budget.
    busy: AtomicU64,
    /// Times the receiver turned a request away (all but `other`).
    trouble: AtomicU64,
}

/// The counts of a receiver, read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) unclaimed: u64,
    pub(crate) too_large: u64,
    pub(crate) malformed: u64,
    pub(crate) other: u64,
    pub(crate) slow: u64,
    pub(crate) busy: u64,
}

impl Tally {
    /// Requests refused, all reasons.
    pub(crate) fn refused(&self) -> u64 {
        self.too_large + self.malformed + self.other + self.slow + self.busy
    }

    /// What was refused, by reason (those that happened).
    pub(crate) fn reasons(&self) -> String {
        let parts: Vec<String> = [
            (self.too_large, "over the limits of what a request may hold"),
            (self.malformed, "not OTLP or nested too deep"),
            (self.other, "not a POST of OTLP traces to /v1/traces"),
            (self.slow, "too slow to send their headers or body"),
            (self.busy, "over the bound on connections or bodies at once"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| format!("{n} {why}"))
        .collect();
        parts.join(", ")
    }
}

struct Store {
    traces: Mutex<Traces>,
    changed: tokio::sync::Notify,
    counts: Counts,
    bounds: Bounds,
    /// Bytes of request bodies buffered at once ([`Bounds::buffered`]).
    budget: tokio::sync::Semaphore,
    /// Bodies decoded at once ([`Bounds::decodes`]).
    decodes: tokio::sync::Semaphore,
}

impl Store {
    fn new(bounds: Bounds) -> Store {
        Store {
            traces: Mutex::default(),
            changed: tokio::sync::Notify::new(),
            counts: Counts::default(),
            bounds,
            budget: tokio::sync::Semaphore::new(bounds.buffered),
            decodes: tokio::sync::Semaphore::new(bounds.decodes),
        }
    }
}

impl Registry for Store {
    fn register(&self, trace: &TurnTrace) {
        let trouble_at = self.counts.trouble.load(Ordering::Relaxed);
        self.lock()
            .pending
            .entry(trace.trace_id)
            .or_insert_with(|| Pending {
                trouble_at,
                ..Pending::default()
            });
    }

    fn forget(&self, trace: &TurnTrace) {
        let mut traces = self.lock();
        if let Some(p) = traces.pending.remove(&trace.trace_id) {
            traces.held -= p.bytes;
        }
    }
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, Traces> {
        self.traces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request turned away: counted, for the samples waiting meanwhile.
    fn troubled(&self) {
        self.counts.trouble.fetch_add(1, Ordering::Relaxed);
    }

    /// Keeps the spans of `request` under the traces being waited for; the
    /// spans not kept (to say so in a partial success), and why.
    fn ingest(&self, request: ExportTraceServiceRequest) -> (u64, String) {
        let (mut unclaimed, mut rejected, mut why) = (0, 0, String::new());
        {
            let mut guard = self.lock();
            let traces = &mut *guard;
            for resource in request.resource_spans {
                for scope in resource.scope_spans {
                    for span in scope.spans {
                        let Ok(id) = <[u8; 16]>::try_from(span.trace_id.as_slice()) else {
                            unclaimed += 1;
                            continue;
                        };
                        let Some(p) = traces.pending.get_mut(&id) else {
                            unclaimed += 1;
                            continue;
                        };
                        rejected += 1;
                        if span.span_id.len() != 8 {
                            p.malformed += 1;
                            why = "a span id that is not 8 bytes".into();
                            continue;
                        }
                        let bytes = decode::memory(&span);
                        if p.spans.len() >= MAX_SPANS || p.bytes + bytes > MAX_TRACE_BYTES {
                            p.over += 1;
                            why = format!(
                                "over {MAX_SPANS} spans or {} MiB in one trace",
                                MAX_TRACE_BYTES >> 20
                            );
                            continue;
                        }
                        if traces.held + bytes > self.bounds.held {
                            p.over_all += 1;
                            why = format!(
                                "over {} MiB of spans held for all the samples in flight",
                                self.bounds.held >> 20
                            );
                            continue;
                        }
                        rejected -= 1;
                        p.bytes += bytes;
                        traces.held += bytes;
                        p.spans.push(span);
                    }
                }
            }
        }
        self.counts
            .unclaimed
            .fetch_add(unclaimed, Ordering::Relaxed);
        self.changed.notify_waiters();
        (rejected, why)
    }

    /// Whether every trace of `turns` is complete: a span has the request's
    /// (last attempt's) span as parent, and every span's chain of parents
    /// ends (at that span, an earlier attempt's, or a loop or an ambiguous
    /// id that no later span can mend), none at a span yet to arrive.
    fn complete(&self, turns: &[TurnTrace]) -> bool {
        let traces = self.lock();
        turns.iter().all(|t| {
            let Some(p) = traces.pending.get(&t.trace_id) else {
                return false;
            };
            let rooted = p.spans.iter().any(|s| s.parent_span_id == t.span_id);
            rooted && !places(&p.spans, &t.span_id, &t.earlier).contains(&Place::Dangling)
        })
    }
}

/// What was taken out of a turn's spans: those that are its steps, and the
/// counts of those refused.
#[derive(Default)]
struct Placed {
    spans: Vec<Span>,
    cycles: u64,
    duplicates: u64,
}

/// The spans of `spans` that are the turn's: those of the attempt whose
/// answer was used (not under an earlier attempt's span), whose chain of
/// parents holds no loop and no ambiguous id.
fn placed(spans: Vec<Span>, t: &TurnTrace, out: &mut Placed) {
    let at = places(&spans, &t.span_id, &t.earlier);
    for (span, place) in spans.into_iter().zip(at) {
        match place {
            Place::Kept | Place::Dangling => out.spans.push(span),
            Place::Cycle => out.cycles += 1,
            Place::Duplicate => out.duplicates += 1,
            Place::Earlier | Place::Copy => {}
        }
    }
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
        Receiver::start_with(addr, BOUNDS)
    }

    /// [`Receiver::start`] with other bounds (the tests' shorter timeouts).
    fn start_with(addr: SocketAddr, bounds: Bounds) -> Result<Arc<Receiver>, TraceError> {
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
        let store = Arc::new(Store::new(bounds));
        let served = store.clone();
        std::thread::Builder::new()
            .name("evals-otlp-receiver".into())
            .spawn(move || runtime.block_on(server::serve(listener, served)))
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

    /// Spans received under no running sample's trace, and requests
    /// refused.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64) {
        let t = self.tally();
        (t.unclaimed, t.refused())
    }

    /// [`Receiver::counts`], the refusals by reason.
    pub(crate) fn tally(&self) -> Tally {
        let c = &self.store.counts;
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Tally {
            unclaimed: n(&c.unclaimed),
            too_large: n(&c.too_large),
            malformed: n(&c.malformed),
            other: n(&c.other),
            slow: n(&c.slow),
            busy: n(&c.busy),
        }
    }

    /// The trajectory of `sample`'s spans: waits until each of its traces is
    /// complete, or `wait` has passed (then says what was missing). `None`
    /// when the sample sent no request (an in-process agent).
    pub(crate) async fn collect(&self, sample: &SampleTrace, wait: Duration) -> Option<Trajectory> {
        let mut taken = Taken {
            trouble_at: u64::MAX,
            ..Taken::default()
        };
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
        let spans: Vec<Vec<Span>> = {
            let mut guard = self.store.lock();
            let traces = &mut *guard;
            turns
                .iter()
                .map(|t| match traces.pending.get_mut(&t.trace_id) {
                    Some(p) => {
                        taken.over += p.over;
                        taken.over_all += p.over_all;
                        taken.malformed += p.malformed;
                        taken.trouble_at = taken.trouble_at.min(p.trouble_at);
                        traces.held -= p.bytes;
                        p.bytes = 0;
                        std::mem::take(&mut p.spans)
                    }
                    None => Vec::new(),
                })
                .collect()
        };
        let mut placed_all = Placed::default();
        let spans: Vec<Vec<Span>> = spans
            .into_iter()
            .zip(&turns)
            .map(|(s, t)| {
                let before = placed_all.spans.len();
                placed(s, t, &mut placed_all);
                placed_all.spans.split_off(before)
            })
            .collect();
        let notes = self.notes(&spans, complete, wait, &taken, &placed_all);
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        let traces = turns.iter().map(TurnTrace::trace_hex).collect();
        Some(super::steps::trajectory(&spans, traces, note, !complete))
    }
}

/// What a sample's traces lost before their spans were taken.
#[derive(Default)]
struct Taken {
    over: u64,
    over_all: u64,
    malformed: u64,
    /// The receiver's troubles when its first trace began.
    trouble_at: u64,
}

impl Receiver {
    /// What a sample's trajectory says of how its spans came.
    fn notes(
        &self,
        spans: &[Vec<Span>],
        complete: bool,
        wait: Duration,
        taken: &Taken,
        placed: &Placed,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        // Requests the receiver turned away while the sample ran: the
        // spans may have been among them, the agent not to blame.
        let troubles = self
            .store
            .counts
            .trouble
            .load(Ordering::Relaxed)
            .saturating_sub(taken.trouble_at);
        if !complete {
            let got: usize = spans.iter().map(Vec::len).sum();
            let ms = wait.as_millis();
            notes.push(if troubles > 0 {
                format!(
                    "{} within {ms} ms of the answer; meanwhile the OTLP receiver on {} turned {troubles} requests or connections away ({}): it was starved or overloaded by its clients, and the sample's spans may have been among those turned away",
                    if got == 0 {
                        "no span arrived".to_string()
                    } else {
                        format!("the trace was incomplete ({got} spans, some of their parents missing)")
                    },
                    self.addr,
                    self.tally().reasons()
                )
            } else if got == 0 {
                format!(
                    "no span arrived within {ms} ms of the answer (does the agent export its spans to http://{}/v1/traces, under the traceparent it was sent?)",
                    self.addr
                )
            } else {
                format!("the trace was incomplete after {ms} ms ({got} spans, some of their parents missing)")
            });
        }
        if taken.over > 0 {
            notes.push(format!(
                "{} spans over the limit of {MAX_SPANS} spans or {} MiB per trace not kept",
                taken.over,
                MAX_TRACE_BYTES >> 20
            ));
        }
        if taken.over_all > 0 {
            notes.push(format!(
                "{} spans not kept: the receiver holds at most {} MiB of spans for all the samples in flight",
                taken.over_all,
                self.store.bounds.held >> 20
            ));
        }
        if taken.malformed > 0 {
            notes.push(format!(
                "{} spans with a span id that is not 8 bytes not kept",
                taken.malformed
            ));
        }
        if placed.cycles > 0 {
            notes.push(format!(
                "{} spans refused: their parent links form a loop (a span its own parent, or a cycle) or hang from one",
                placed.cycles
            ));
        }
        if placed.duplicates > 0 {
            notes.push(format!(
                "{} spans refused: their span id is another span's (or the request's), or they hang from such a span",
                placed.duplicates
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests;
