//! The W3C trace context of a sample's requests: each request to the agent
//! (one per user turn) starts a trace of its own, and carries it in a
//! `traceparent` header (W3C Trace Context, version `00`, sampled). The
//! engine runs each run of the agent inside a [`SampleTrace`] scope; the
//! HTTP agent asks it for the next request's header.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use crate::model::hex;

/// A request's trace: the trace id and the id of the span the request
/// stands for (the agent's spans have it, or each other, as parent). A
/// request sent again (an overloaded agent's retry) is a new span of the
/// same trace: `span_id` is the last attempt's, whose answer was used;
/// `earlier` the others', whose spans are not the sample's steps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TurnTrace {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) earlier: Vec<[u8; 8]>,
    /// When the last attempt was sent.
    pub(crate) start: SystemTime,
    /// When the request was answered (or given up), once it was.
    pub(crate) end: Option<SystemTime>,
}

impl TurnTrace {
    /// A new trace with random ids.
    fn new() -> TurnTrace {
        let (trace_id, span_id) = new_ids();
        TurnTrace {
            trace_id,
            span_id,
            earlier: Vec::new(),
            start: SystemTime::now(),
            end: None,
        }
    }

    /// The `traceparent` header's value: `00-<trace>-<span>-01`.
    pub(crate) fn header(&self) -> String {
        format!("00-{}-{}-01", hex(&self.trace_id), hex(&self.span_id))
    }

    /// The trace id as 32 lowercase hex digits.
    pub(crate) fn trace_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// As the model keeps it (a request not yet answered ends now).
    pub(crate) fn agent_span(&self) -> crate::model::AgentSpan {
        let end = self.end.unwrap_or_else(SystemTime::now).max(self.start);
        crate::model::AgentSpan {
            trace_id: self.trace_id,
            span_id: self.span_id,
            start: self.start,
            end,
        }
    }
}

/// A new trace id and span id, random (never all zeros, which W3C
/// forbids).
pub(crate) fn new_ids() -> ([u8; 16], [u8; 8]) {
    let mut trace_id = [0u8; 16];
    let mut span_id = [0u8; 8];
    loop {
        // The OS's randomness; if it failed, a time-and-counter id is
        // still unique in this process.
        if getrandom::getrandom(&mut trace_id).is_err()
            || getrandom::getrandom(&mut span_id).is_err()
        {
            fallback(&mut trace_id, &mut span_id);
        }
        if trace_id != [0; 16] && span_id != [0; 8] {
            return (trace_id, span_id);
        }
    }
}

fn fallback(trace_id: &mut [u8; 16], span_id: &mut [u8; 8]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    trace_id[..8].copy_from_slice(&t.to_be_bytes());
    trace_id[8..].copy_from_slice(&(n ^ u64::from(std::process::id())).to_be_bytes());
    span_id.copy_from_slice(&n.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
}

/// Told of each trace a sample starts (the receiver keeps the spans that
/// come under it), and when the sample is done with them.
pub(crate) trait Registry: Send + Sync {
    /// Spans under `trace` are wanted.
    fn register(&self, trace: &TurnTrace);
    /// They no longer are.
    fn forget(&self, trace: &TurnTrace);
}

/// The traces of one run of the agent on one sample, one per request, in
/// the order they were sent (the user turns').
pub(crate) struct SampleTrace {
    turns: Mutex<Vec<TurnTrace>>,
    registry: Option<Arc<dyn Registry>>,
    /// Its spans were (or are being) collected.
    collected: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for SampleTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleTrace")
            .field("turns", &self.turns())
            .finish_non_exhaustive()
    }
}

impl SampleTrace {
    /// A sample's traces, each registered with `registry` (the receiver),
    /// when spans are collected.
    pub(crate) fn new(registry: Option<Arc<dyn Registry>>) -> Arc<SampleTrace> {
        Arc::new(SampleTrace {
            turns: Mutex::new(Vec::new()),
            registry,
            collected: false.into(),
        })
    }

    /// The running sample's, inside its [`scope`](Self::scope).
    pub(crate) fn current() -> Option<Arc<SampleTrace>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    /// Whether its spans are yet to be collected (then they are, by the
    /// caller: once).
    pub(crate) fn take_collection(&self) -> bool {
        !self
            .collected
            .swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts the next request's trace; its index.
    fn next(&self) -> usize {
        let trace = TurnTrace::new();
        if let Some(r) = &self.registry {
            r.register(&trace);
        }
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        turns.push(trace);
        turns.len() - 1
    }

    /// The `traceparent` of an attempt at request `turn`: its first
    /// attempt's span, then a new span for each attempt after it.
    fn attempt(&self, turn: usize, first: bool) -> String {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let t = &mut turns[turn];
        if !first {
            let (_, span_id) = new_ids();
            let was = std::mem::replace(&mut t.span_id, span_id);
            t.earlier.push(was);
            t.start = SystemTime::now();
        }
        t.header()
    }

    /// Request `turn` was answered (or given up on).
    fn ended(&self, turn: usize) {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = turns.get_mut(turn) {
            t.end = Some(SystemTime::now());
        }
    }

    /// The traces started so far, in order.
    pub(crate) fn turns(&self) -> Vec<TurnTrace> {
        self.turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Runs `f` (the agent's run) with this as the sample's trace.
    pub(crate) async fn scope<F: Future>(self: &Arc<Self>, f: F) -> F::Output {
        CURRENT.scope(self.clone(), f).await
    }
}

impl Drop for SampleTrace {
    fn drop(&mut self) {
        if let Some(r) = &self.registry {
            for t in self
                .turns
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
            {
                r.forget(t);
            }
        }
    }
}

tokio::task_local! {
    static CURRENT: Arc<SampleTrace>;
}

/// One request of the running sample to its agent (a new trace), when the
/// run propagates trace context.
pub(crate) struct Request {
    sample: Arc<SampleTrace>,
    turn: usize,
    attempts: std::sync::atomic::AtomicUsize,
}

impl Request {
    /// The `traceparent` header of the next attempt at it.
    pub(crate) fn attempt(&self) -> String {
        let n = self
            .attempts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.sample.attempt(self.turn, n == 0)
    }
}

/// The request is over when the agent's call lets it go: answered, or
/// given up on.
impl Drop for Request {
    fn drop(&mut self) {
        self.sample.ended(self.turn);
    }
}

/// The next request the running sample sends to its agent; `None` outside
/// a sample's scope (an agent called directly, or traces off).
pub(crate) fn next_request() -> Option<Request> {
    CURRENT
        .try_with(|t| Request {
            sample: t.clone(),
            turn: t.next(),
            attempts: 0.into(),
        })
        .ok()
}

/// The `traceparent` of the next request's first attempt (see
/// [`next_request`]).
#[cfg(test)]
pub(crate) fn next_traceparent() -> Option<String> {
    next_request().map(|r| r.attempt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_w3c_version_00_sampled() {
        let t = TurnTrace::new();
        let h = t.header();
        let parts: Vec<&str> = h.split('-').collect();
        assert_eq!(parts.len(), 4, "{h}");
        assert_eq!((parts[0], parts[3]), ("00", "01"));
        assert_eq!(parts[1].len(), 32);
        assert_eq!(parts[2].len(), 16);
        assert!(
            h.chars()
                .all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(
            TurnTrace::new().trace_id,
            t.trace_id,
            "a new trace each time"
        );
        assert_eq!(parts[1], t.trace_hex());
    }

    #[tokio::test]
    async fn each_request_in_a_sample_scope_starts_its_own_trace() {
        struct Seen(Mutex<(Vec<TurnTrace>, Vec<TurnTrace>)>);
        impl Registry for Seen {
            fn register(&self, t: &TurnTrace) {
                self.0.lock().unwrap().0.push(t.clone());
            }
            fn forget(&self, t: &TurnTrace) {
                self.0.lock().unwrap().1.push(t.clone());
            }
        }
        assert_eq!(next_traceparent(), None, "outside a sample");
        let seen = Arc::new(Seen(Mutex::new((Vec::new(), Vec::new()))));
        let trace = SampleTrace::new(Some(seen.clone()));
        let headers = trace
            .scope(async { [next_traceparent().unwrap(), next_traceparent().unwrap()] })
            .await;
        let turns = trace.turns();
        assert_eq!(turns.len(), 2);
        assert_eq!(headers[1], turns[1].header());
        assert_ne!(turns[0].trace_id, turns[1].trace_id);
        let ids = |t: &[TurnTrace]| t.iter().map(|t| t.trace_id).collect::<Vec<_>>();
        assert_eq!(
            ids(&seen.0.lock().unwrap().0),
            ids(&turns),
            "registered as started"
        );
        // Each request ends when the call lets it go: the span exported for
        // it has its times.
        for t in &turns {
            let end = t.end.expect("answered");
            assert!(t.start <= end);
            assert_eq!(t.agent_span().end, end);
        }
        // A retry is a new span of the same trace; the first is earlier.
        let retried = trace
            .scope(async {
                let r = next_request().unwrap();
                (r.attempt(), r.attempt())
            })
            .await;
        let third = &trace.turns()[2];
        assert_eq!(retried.1, third.header());
        assert_ne!(retried.0, retried.1);
        assert_eq!(retried.0[..36], retried.1[..36], "the same trace");
        assert_eq!(third.earlier.len(), 1);
        let turns = trace.turns();
        drop(trace);
        assert_eq!(
            seen.0.lock().unwrap().1.len(),
            turns.len(),
            "forgotten when done"
        );
    }
}
