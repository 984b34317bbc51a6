//! Scheduling: many samples in flight at once on one thread's runtime,
//! however many test threads libtest or the harness use; a panic in an
//! agent fails only its sample; reports handed to the tests waiting for
//! them.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use eval_datasets::Sample;
use eval_datasets::metric::MetricSpec;
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::agent::{Agent, panic_text};
use crate::engine::evaluate::{Runs, evaluate_runs};
use crate::model::CassetteMode;
use crate::model::{AgentError, SampleError};
use crate::output::SampleReport;
use crate::services::Services;

/// One sample to evaluate.
pub(crate) struct Job<'a> {
    /// The caller's key for the result (e.g. the trial's index).
    pub key: usize,
    /// Full test name.
    pub name: String,
    /// The sample (read from its file when the dataset is not held).
    pub sample: std::borrow::Cow<'a, Sample>,
    /// Why the sample could not be read (it is then an error).
    pub unreadable: Option<String>,
    /// Its metrics.
    pub specs: &'a [MetricSpec],
    /// Agent runs, and what an inconclusive verdict counts as.
    pub runs: Runs,
    /// Limit on its agent interaction, and on its scoring.
    pub timeout: Duration,
    /// The agent answering as its dataset's model, instead of the run's.
    pub agent: Option<std::sync::Arc<dyn Agent>>,
}

/// Evaluates one job: its agent runs, then scoring. A panic anywhere in it
/// (an agent's call or future, a metric) fails this sample alone.
pub(crate) async fn evaluate_job(
    job: &Job<'_>,
    agent: &dyn Agent,
    services: &Services,
) -> SampleReport {
    let agent = job.agent.as_deref().unwrap_or(agent);
    if let Some(why) = &job.unreadable {
        let mut report = SampleReport::new(job.name.clone(), &job.sample);
        report.error = Some(SampleError::Dataset(why.clone()));
        return report;
    }
    let cassette = services.cassette.as_deref();
    let replay = cassette.filter(|c| c.mode() == CassetteMode::Replay);
    let record = cassette.filter(|c| c.mode() == CassetteMode::Record);
    let sample: &Sample = &job.sample;
    // Each run is started when the engine asks for it (`repeat = "auto"`
    // asks for more only while a verdict is in doubt).
    let run = |k: usize| {
        let run = k as u32;
        // A replay never calls the agent.
        let call = replay
            .is_none()
            .then(|| std::panic::catch_unwind(AssertUnwindSafe(|| agent.respond(sample))));
        Some(async move {
            let call = match (replay, call) {
                (Some(cassette), _) => {
                    return cassette
                        .replay(sample, run, agent)
                        .map(|(mut response, latency)| {
                            response.measured_latency = Some(latency);
                            response
                        })
                        .map_err(AgentError::from);
                }
                (None, Some(call)) => call,
                (None, None) => unreachable!("the agent is called unless replaying"),
            };
            let started = std::time::Instant::now();
            let mut outcome = match call {
                Ok(future) => AssertUnwindSafe(future)
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|panic| Err(AgentError::Panicked(panic_text(&panic)))),
                Err(panic) => Err(AgentError::Panicked(panic_text(&panic))),
            };
            let took = started.elapsed();
            // The agent's spans, once its trace is complete: part of what
            // it answered (and of what a cassette records), not of its time.
            if let Ok(response) = &mut outcome
                && super::evaluate::collect_trajectory(&services.traces, response).await
            {
                response.measured_latency = Some(took);
            }
            if let (Some(cassette), Ok(response)) = (record, &outcome) {
                cassette.record(sample, run, agent, response, took);
            }
            outcome
        })
    };
    let name = job.name.clone();
    let scored = evaluate_runs(
        job.name.clone(),
        sample,
        job.specs,
        job.timeout,
        job.runs,
        run,
        services,
    );
    match AssertUnwindSafe(scored).catch_unwind().await {
        Ok(mut report) => {
            // An agent (or a judge, in its reasons) that echoes a key does
            // not get it into results or onto the terminal.
            let reasons = report.metrics.iter_mut().filter_map(|m| m.reason.as_mut());
            for text in report.output.iter_mut().chain(reasons) {
                if let std::borrow::Cow::Owned(masked) = crate::secrets::mask(text) {
                    *text = masked;
                }
            }
            report
        }
        Err(panic) => {
            let mut report = SampleReport::new(name, sample);
            report.error = Some(SampleError::Panicked(panic_text(&panic)));
            report
        }
    }
}

/// Evaluates `jobs` concurrently and hands each report to `done` as it
/// completes. Each job holds one of `permits` while it runs (the cap on
/// agent calls in flight, possibly shared with other datasets), lending it
/// back while its agent call only waits (see [`permit`](super::permit)); at
/// most `limit` jobs are started at once, so memory stays bounded for huge runs.
pub(crate) async fn evaluate_all<'a>(
    jobs: impl IntoIterator<Item = Job<'a>>,
    agent: &'a dyn Agent,
    services: &'a Services,
    (permits, limit): (&'a std::sync::Arc<tokio::sync::Semaphore>, usize),
    window: Option<&Slots>,
    mut done: impl FnMut(Job<'a>, SampleReport),
) {
    let mut jobs = jobs.into_iter();
    let mut running = FuturesUnordered::new();
    let (mut started, mut exhausted) = (0usize, false);
    loop {
        while !exhausted
            && running.len() < limit.max(1)
            && window.is_none_or(|w| w.has_room(started))
        {
            let Some(job) = jobs.next() else {
                exhausted = true;
                break;
            };
            started += 1;
            running.push(async move {
                let report =
                    crate::permit::holding(permits.clone(), evaluate_job(&job, agent, services))
                        .await;
                (job, report)
            });
        }
        match running.next().await {
            Some((job, report)) => {
                done(job, report);
                if let Some(cassette) = &services.cassette {
                    cassette.flush_if_due();
                }
            }
            None if exhausted => break,
            // Nothing in flight and no room: wait for a test to take a report.
            None => match window {
                Some(w) => w.room.notified().await,
                None => break,
            },
        }
    }
    if let Some(cassette) = &services.cassette {
        cassette.flush();
    }
}

/// A single-threaded runtime: agent futures, HTTP connections and timers
/// all on the thread that evaluates (the evaluation thread, or a test that
/// evaluates its own sample), so every way in runs agents alike.
pub(crate) fn local_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// The reports after a waited one that tests taking in order are woken for
/// together, at most ([`Slots::fill`]).
const BATCH: usize = 32;

/// Reports filled after which a test whose report is done is woken anyway
/// (one of its batch is slow).
const PATIENCE: u64 = 2 * BATCH as u64;

/// Reports handed from the evaluation thread to the tests waiting for them.
/// A test waiting for its report is woken alone when that report is filled
/// (its thread parked in the slot): filling a report wakes no other test,
/// and none at all when its test has not asked yet (the common case, as
/// evaluation runs ahead of the tests).
pub(crate) struct Slots {
    slots: Mutex<SlotState>,
    /// Signalled when nothing is pending any more ([`Slots::wait_all`]).
    finished: Condvar,
    /// At most this many items started and not yet taken (`None`: no
    /// bound): tests that take their reports in order (the harness's) keep
    /// the evaluation from running far ahead of them, and so bound the
    /// reports waiting in memory.
    ahead: Option<usize>,
    /// Notified when a report is taken (there may be room again).
    room: tokio::sync::Notify,
    /// The reports after a waited one it is woken with ([`Slots::fill`]):
    /// none without a window (tests in any order), [`BATCH`] with one.
    batch: usize,
}

/// One byte per item; the few waiting threads and reports not yet taken
/// beside (a run of a million samples holds a megabyte here).
struct SlotState {
    slots: Vec<Slot>,
    /// The thread waiting for each pending item that has one, and the
    /// reports filled when it began to wait.
    waiters: HashMap<usize, (std::thread::Thread, u64)>,
    /// Reports filled so far.
    fills: u64,
    /// Reports filled and not yet taken.
    done: HashMap<usize, SampleReport>,
    /// Slots not yet done, of those scheduled.
    pending: usize,
    /// Reports taken so far.
    taken: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Not scheduled: whoever asks evaluates it alone.
    Unselected,
    /// Scheduled, not done (its waiter, once one waits, in `waiters`).
    Pending,
    /// Its report is in `done`.
    Done,
    Taken,
}

impl Slots {
    /// One slot per item, pending where `selected`.
    pub(crate) fn new(selected: &[bool]) -> Self {
        Slots {
            slots: Mutex::new(SlotState {
                slots: selected
                    .iter()
                    .map(|s| if *s { Slot::Pending } else { Slot::Unselected })
                    .collect(),
                waiters: HashMap::new(),
                fills: 0,
                done: HashMap::new(),
                pending: selected.iter().filter(|s| **s).count(),
                taken: 0,
            }),
            finished: Condvar::new(),
            ahead: None,
            room: tokio::sync::Notify::new(),
            batch: 0,
        }
    }

    /// The same slots, keeping at most `n` items started and not taken.
    pub(crate) fn ahead(mut self, n: usize) -> Self {
        self.ahead = Some(n.max(1));
        self.batch = BATCH;
        self
    }

    /// The same slots, with `in_flight` items evaluated at once: a waiting
    /// test's batch is no longer than the others in flight beside its own
    /// (none with one at a time, so it sees each report as it comes).
    pub(crate) fn in_flight(mut self, in_flight: usize) -> Self {
        self.batch = in_flight.saturating_sub(1).min(BATCH);
        self
    }

    /// Whether an item may start when `started` have. When none may, every
    /// test waiting for a report that is done is woken (the rest of its
    /// batch cannot start before it takes).
    fn has_room(&self, started: usize) -> bool {
        let Some(ahead) = self.ahead else {
            return true;
        };
        let mut state = self.lock();
        if started < state.taken + ahead {
            return true;
        }
        let SlotState { slots, waiters, .. } = &mut *state;
        let woken: Vec<_> = waiters
            .extract_if(|&w, _| slots[w] == Slot::Done)
            .map(|(_, (thread, _))| thread)
            .collect();
        drop(state);
        for thread in woken {
            thread.unpark();
        }
        false
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes the report of item `i`, waking its test if it waits. With a
    /// bound ahead ([`Slots::ahead`]: tests that take in order), a waiting
    /// test is woken once its item and the batch after it are done (at most
    /// [`BATCH`], fewer than the items in flight: [`Slots::in_flight`]), or
    /// nothing is pending, so it takes them in one go: one wake for a batch
    /// of reports, not one per report. A slow one in its batch holds it
    /// back for at most [`PATIENCE`] reports filled.
    pub(crate) fn fill(&self, i: usize, report: SampleReport) {
        let mut state = self.lock();
        let Some(slot) = state.slots.get_mut(i) else {
            return;
        };
        let was = std::mem::replace(slot, Slot::Done);
        state.done.insert(i, report);
        if was == Slot::Pending {
            state.pending -= 1;
        }
        state.fills += 1;
        let finished = state.pending == 0;
        // Without a batch, only item `i`'s test (any other waiter's item is
        // still pending).
        let SlotState {
            slots,
            waiters,
            fills,
            ..
        } = &mut *state;
        let batch = self.batch;
        let woken: Vec<std::thread::Thread> = waiters
            .extract_if(|&w, (_, since)| {
                slots[w] == Slot::Done
                    && (finished
                        || *fills - *since >= PATIENCE
                        || (w <= i
                            && i <= w + batch
                            && slots[w + 1..slots.len().min(w + 1 + batch)]
                                .iter()
                                .all(|s| *s != Slot::Pending)))
            })
            .map(|(_, (thread, _))| thread)
            .collect();
        drop(state);
        for thread in woken {
            thread.unpark();
        }
        if finished {
            self.finished.notify_all();
        }
    }

    /// Waits for the report of item `i`; `None` if it was not scheduled (or
    /// was already taken).
    pub(crate) fn take(&self, i: usize) -> Option<SampleReport> {
        let mut state = self.lock();
        loop {
            match *state.slots.get(i)? {
                Slot::Pending => {
                    let since = state.fills;
                    state.waiters.insert(i, (std::thread::current(), since));
                    drop(state);
                    // Woken by `fill` or `abandon` (or spuriously: look again).
                    std::thread::park();
                    state = self.lock();
                }
                Slot::Done => {
                    state.slots[i] = Slot::Taken;
                    state.taken += 1;
                    let report = state.done.remove(&i);
                    drop(state);
                    self.room.notify_one();
                    return report;
                }
                Slot::Unselected | Slot::Taken => return None,
            }
        }
    }

    /// Waits until no scheduled item is pending (all evaluated, or abandoned).
    pub(crate) fn wait_all(&self) {
        let mut state = self.lock();
        while state.pending > 0 {
            state = self.finished.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// After the evaluation thread died: every pending item becomes
    /// unscheduled, so its waiter evaluates it alone.
    pub(crate) fn abandon(&self) {
        let mut state = self.lock();
        for slot in state.slots.iter_mut() {
            if *slot == Slot::Pending {
                *slot = Slot::Unselected;
            }
        }
        let waiters: Vec<_> = state.waiters.drain().map(|(_, (t, _))| t).collect();
        state.pending = 0;
        drop(state);
        for thread in waiters {
            thread.unpark();
        }
        self.finished.notify_all();
    }
}

/// Runs `f` and turns a panic into its message.
pub(crate) fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_text(&p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn report(i: usize) -> SampleReport {
        SampleReport::new(format!("d::s{i}"), &eval_datasets::Sample::new("q"))
    }

    #[test]
    fn each_test_gets_its_own_report_whatever_the_order() {
        let n = 200;
        let slots = Arc::new(Slots::new(&vec![true; n]));
        // Tests waiting first, on 8 threads; reports filled in reverse.
        let takers: Vec<_> = (0..8)
            .map(|k| {
                let slots = slots.clone();
                std::thread::spawn(move || {
                    (k..n)
                        .step_by(8)
                        .map(|i| slots.take(i).map(|r| r.test_name == format!("d::s{i}")))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for i in (0..n).rev() {
            slots.fill(i, report(i));
        }
        slots.wait_all();
        for t in takers {
            assert!(t.join().unwrap().iter().all(|ok| *ok == Some(true)));
        }
        assert!(slots.take(0).is_none(), "taken once");
    }

    #[test]
    fn abandoned_slots_send_their_tests_to_evaluate_alone() {
        let slots = Arc::new(Slots::new(&[true, true, false]));
        slots.fill(0, report(0));
        let waiting = {
            let slots = slots.clone();
            std::thread::spawn(move || slots.take(1).is_none())
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        slots.abandon();
        assert!(waiting.join().unwrap(), "the waiter evaluates it alone");
        slots.wait_all();
        assert!(slots.take(0).is_some(), "a report filled before is kept");
        assert!(slots.take(2).is_none());
    }

    #[test]
    fn the_evaluation_stays_a_window_ahead_of_the_reports_taken() {
        let slots = Slots::new(&[true; 10]).ahead(3);
        assert!(
            slots.has_room(2) && !slots.has_room(3),
            "3 started, none taken"
        );
        slots.fill(1, report(1));
        assert!(!slots.has_room(3), "a report filled is not taken yet");
        assert!(slots.take(1).is_some());
        assert!(
            slots.has_room(3) && !slots.has_room(4),
            "one taken: one more"
        );
        assert!(
            Slots::new(&[true; 2]).has_room(1_000),
            "unbounded without a window"
        );
    }

    /// A test taking in order is woken once for a batch: when its report
    /// and the [`BATCH`] after it are done, when nothing is pending, or
    /// when the evaluation has no room to start the rest of the batch.
    #[test]
    fn a_test_taking_in_order_is_woken_for_a_batch_or_when_the_evaluation_waits_for_it() {
        use std::sync::mpsc;
        use std::time::Duration;
        let waiting = |slots: &std::sync::Arc<Slots>, i: usize| {
            let (tx, rx) = mpsc::channel();
            let taker = slots.clone();
            std::thread::spawn(move || tx.send(taker.take(i).is_some()).unwrap());
            // Until it waits in the slot.
            while slots.lock().waiters.is_empty() {
                std::thread::yield_now();
            }
            rx
        };
        let quiet = Duration::from_millis(50);

        let slots = std::sync::Arc::new(Slots::new(&[true; 100]).ahead(1024));
        let taken = waiting(&slots, 0);
        slots.fill(0, report(0));
        for i in 2..=BATCH {
            slots.fill(i, report(i));
        }
        assert!(
            taken.recv_timeout(quiet).is_err(),
            "item 1 is still pending"
        );
        slots.fill(1, report(1));
        assert_eq!(taken.recv(), Ok(true), "the batch after item 0 is done");

        // Nothing pending after it: woken at once.
        let slots = std::sync::Arc::new(Slots::new(&[true, true, false]).ahead(1024));
        let taken = waiting(&slots, 1);
        slots.fill(0, report(0));
        assert!(taken.recv_timeout(quiet).is_err(), "item 1 is pending");
        slots.fill(1, report(1));
        assert_eq!(taken.recv(), Ok(true), "nothing is pending");

        // The evaluation may not start the rest before item 0 is taken.
        let slots = std::sync::Arc::new(Slots::new(&[true; 100]).ahead(3));
        let taken = waiting(&slots, 0);
        slots.fill(0, report(0));
        assert!(
            taken.recv_timeout(quiet).is_err(),
            "items 1 to 32 are pending"
        );
        assert!(!slots.has_room(3));
        assert_eq!(taken.recv(), Ok(true), "the evaluation waits for it");

        // One at a time in flight: no batch, each report as it comes.
        let slots = std::sync::Arc::new(Slots::new(&[true; 100]).ahead(1024).in_flight(1));
        let taken = waiting(&slots, 0);
        slots.fill(0, report(0));
        assert_eq!(taken.recv(), Ok(true));

        // A slow one in the batch holds it back for PATIENCE reports only.
        let slots = std::sync::Arc::new(Slots::new(&[true; 200]).ahead(1024));
        let taken = waiting(&slots, 0);
        slots.fill(0, report(0));
        // Filled: item 0, then PATIENCE - 1 past its batch (item 1 slow).
        let later = BATCH + 2..BATCH + 2 + PATIENCE as usize - 2;
        for i in later.clone() {
            slots.fill(i, report(i));
        }
        assert!(taken.recv_timeout(quiet).is_err(), "item 1 is slow");
        slots.fill(later.end, report(later.end));
        assert_eq!(taken.recv(), Ok(true), "{PATIENCE} reports filled since");

        // Without a window (the attribute's tests, in any order): at once.
        let slots = std::sync::Arc::new(Slots::new(&[true; 100]));
        let taken = waiting(&slots, 0);
        slots.fill(0, report(0));
        assert_eq!(taken.recv(), Ok(true));
    }
}
