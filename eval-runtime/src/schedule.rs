//! Concurrent evaluation: many samples in flight at once on the shared
//! runtime, independent of how many test threads libtest or the harness use.
//!
//! A process-wide semaphore caps agent calls in flight (`EVAL_CONCURRENCY`,
//! default [`DEFAULT_CONCURRENCY`]) across every dataset of the process.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use eval_core::Sample;
use eval_core::metric::MetricSpec;
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::agent::Response;
use crate::error::{Error, Result};
use crate::evaluate::evaluate_runs;
use crate::metrics::judged::Services;
use crate::report::SampleReport;

/// Agent calls in flight at once when `EVAL_CONCURRENCY` is not set
/// (ragas uses 16, deepeval 20, promptfoo 4).
pub const DEFAULT_CONCURRENCY: usize = 16;

/// `EVAL_CONCURRENCY` (1..=100000), or the default.
pub fn concurrency() -> Result<usize> {
    match crate::agent::env_var("EVAL_CONCURRENCY")? {
        None => Ok(DEFAULT_CONCURRENCY),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(n) if (1..=100_000).contains(&n) => Ok(n),
            _ => Err(Error::Config {
                what: "EVAL_CONCURRENCY".into(),
                reason: format!("`{v}` is not a whole number between 1 and 100000"),
            }),
        },
    }
}

/// The cap shared by every dataset batch of the process (attribute path).
pub(crate) fn process_permits() -> &'static tokio::sync::Semaphore {
    static SEM: OnceLock<tokio::sync::Semaphore> = OnceLock::new();
    SEM.get_or_init(|| tokio::sync::Semaphore::new(concurrency().unwrap_or(DEFAULT_CONCURRENCY)))
}

/// One sample to evaluate.
pub(crate) struct Job<'a> {
    /// Caller's key for the result (e.g. the sample's index).
    pub key: usize,
    /// Full test name.
    pub name: String,
    /// The sample.
    pub sample: &'a Sample,
}

/// Evaluates `jobs` concurrently and hands each report to `done` as it
/// completes. `call` starts the agent on a sample; a panic inside it becomes
/// that sample's agent error. Each agent call holds one of `permits`; at most
/// `limit` samples are started at once, so memory stays bounded for huge datasets.
pub(crate) async fn evaluate_all<'a, C, Fut>(
    jobs: impl IntoIterator<Item = Job<'a>>,
    specs: &'a [MetricSpec],
    (timeout, repeat, services): (Duration, u32, &'a Services),
    (permits, limit): (&'a tokio::sync::Semaphore, usize),
    call: C,
    mut done: impl FnMut(usize, SampleReport),
) where
    C: Fn(&'a Sample) -> Fut,
    Fut: Future<Output = std::result::Result<Response, String>> + 'a,
{
    let call = &call;
    let mut jobs = jobs.into_iter();
    let mut running = FuturesUnordered::new();
    loop {
        while running.len() < limit.max(1) {
            let Some(job) = jobs.next() else { break };
            running.push(async move {
                let _permit = permits.acquire().await;
                let runs = (0..repeat.max(1))
                    .map(|_| {
                        AssertUnwindSafe(async move { call(job.sample).await })
                            .catch_unwind()
                            .map(|r| r.unwrap_or_else(|panic| Err(panic_message(&panic))))
                    })
                    .collect();
                let report =
                    evaluate_runs(job.name, job.sample, specs, timeout, runs, services).await;
                (job.key, report)
            });
        }
        match running.next().await {
            Some((key, report)) => done(key, report),
            None => break,
        }
    }
}

/// "the agent panicked: <message>".
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    format!("the agent panicked: {}", crate::error::one_line(&msg, 300))
}

/// Reports handed from the evaluation thread to the tests waiting for them.
pub(crate) struct Slots {
    slots: Mutex<SlotState>,
    ready: Condvar,
}

struct SlotState {
    slots: Vec<Slot>,
    /// Threads blocked in `take`: a fill wakes nobody (no syscall) when zero,
    /// the common case since evaluation runs ahead of the tests.
    waiting: usize,
}

enum Slot {
    /// Not scheduled: whoever asks evaluates it alone.
    Unselected,
    Pending,
    Done(Box<SampleReport>),
    Taken,
}

impl Slots {
    /// One slot per item, pending where `selected`.
    pub(crate) fn new(selected: impl IntoIterator<Item = bool>) -> Self {
        Slots {
            slots: Mutex::new(SlotState {
                slots: selected
                    .into_iter()
                    .map(|s| if s { Slot::Pending } else { Slot::Unselected })
                    .collect(),
                waiting: 0,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes the report of item `i`.
    pub(crate) fn fill(&self, i: usize, report: SampleReport) {
        let mut state = self.lock();
        state.slots[i] = Slot::Done(Box::new(report));
        if state.waiting > 0 {
            self.ready.notify_all();
        }
    }

    /// Waits for the report of item `i`; `None` if it was not scheduled (or
    /// was already taken).
    pub(crate) fn take(&self, i: usize) -> Option<SampleReport> {
        let mut state = self.lock();
        loop {
            match state.slots.get_mut(i)? {
                Slot::Pending => {
                    state.waiting += 1;
                    state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
                    state.waiting -= 1;
                }
                slot @ Slot::Done(_) => {
                    return match std::mem::replace(slot, Slot::Taken) {
                        Slot::Done(report) => Some(*report),
                        _ => None,
                    };
                }
                Slot::Unselected | Slot::Taken => return None,
            }
        }
    }

    /// After the evaluation thread died: every pending item becomes
    /// unscheduled, so its waiter evaluates it alone.
    pub(crate) fn abandon(&self) {
        for slot in self.lock().slots.iter_mut() {
            if matches!(slot, Slot::Pending) {
                *slot = Slot::Unselected;
            }
        }
        self.ready.notify_all();
    }
}
