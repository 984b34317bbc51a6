//! How agent calls are paced: an answer saying the agent is overloaded
//! (`429 Too Many Requests`, `503 Service Unavailable`) is retried, and the
//! calls in flight to one agent adapt to what it can take.
//!
//! **Retries.** An overloaded answer is retried after
//! `max(Retry-After, backoff)`: the wait the agent asked for (seconds, a
//! fraction of one, or an HTTP date; at most 60 s), and never less than an
//! exponential backoff with jitter (0.25 s doubling up to [`BACKOFF_MAX`],
//! drawn from [base/2, base]), so that calls told the same `Retry-After` do
//! not all come back at the same instant. At most `EVAL_AGENT_MAX_RETRIES`
//! retries (default [`DEFAULT_AGENT_MAX_RETRIES`](crate::config::DEFAULT_AGENT_MAX_RETRIES));
//! the sample timeout bounds them all anyway. Every attempt is counted in the
//! sample's agent usage (`calls`, `retries`); when the retries run out, the
//! error names the attempts made ([`AgentError::Overloaded`]).
//!
//! Nothing else is retried: a connection failure, a timeout, a cut-off
//! answer or another status could mean the agent acted on the request (an
//! agent with state or side effects would act twice), and an agent that is
//! not running should fail the run at once, not after a round of backoffs.
//! 429 and 503 say the request was not served.
//!
//! **Adaptive concurrency** (default; `EVAL_AGENT_ADAPTIVE=off` turns it
//! off). The calls in flight to one agent are limited by an AIMD limit, as
//! TCP's congestion window is: an overloaded answer multiplies it by
//! [`DECREASE`] (from the number of calls in flight when the answer came, if
//! lower), at most once per round — answers to calls sent before
//! the last decrease do not decrease it again, so a burst of 429s from one
//! window counts once — and each answered call adds `1 / limit` (one per
//! round) while the limit is what holds calls back. The limit starts
//! unbounded (an agent that never says it is overloaded is called exactly as
//! before) and never goes below 1; the engine's own cap (`EVAL_CONCURRENCY`)
//! applies on top. The limit belongs to the agent's origin (scheme, host
//! and port), not to one agent value: every adaptive agent of the process
//! calling the same origin shares it — clones, and agents built anew for
//! each sample (`HttpAgent::from_env()?.respond(sample)` in an attribute
//! test) alike — so what one call learns from a `429` holds back all of
//! them. Waiting for a slot, and waiting out a `Retry-After`, lend the engine's
//! permit back (see [`permit`](crate::engine::permit)).

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::config::MAX_CONCURRENCY;
use crate::model::AgentError;
use crate::model::Usage;
use crate::permit::without_permit;

/// The longest backoff between two attempts of an agent call (a
/// `Retry-After` may ask for more). Short, because the limit, not the
/// backoff, is what slows a throttled run down: a long backoff only leaves
/// the last samples of a run waiting while the agent has room.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// What an overloaded answer multiplies the limit by.
pub(crate) const DECREASE: f64 = 0.7;

/// The outcome of one HTTP attempt.
pub(crate) enum Attempt<T> {
    /// An answer.
    Done(T),
    /// The agent said it is overloaded (429, 503): worth retrying, after
    /// `retry_after` when it said how long.
    Overloaded {
        error: AgentError,
        retry_after: Option<Duration>,
    },
    /// Anything else: not retried.
    Failed(AgentError),
}

/// Paces the calls to one origin; every adaptive pacer of the process for
/// that origin shares its limit.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    /// `scheme://host:port`: whose limit is used.
    origin: Arc<str>,
    max_retries: u32,
    limiter: Option<Arc<Limiter>>,
}

impl Pacer {
    /// A pacer for calls to `origin` (e.g. `http://127.0.0.1:8080`),
    /// retrying an overloaded answer up to `max_retries` times, with the
    /// origin's adaptive limit on calls in flight when `adaptive` (shared by
    /// every pacer of the process for that origin: see the module docs).
    pub(crate) fn for_origin(origin: &str, max_retries: u32, adaptive: bool) -> Pacer {
        Pacer {
            origin: origin.into(),
            max_retries,
            limiter: adaptive.then(|| Limiter::of_origin(origin)),
        }
    }

    /// The same pacer with an adaptive limit (its origin's) or none.
    pub(crate) fn adaptive(mut self, on: bool) -> Pacer {
        self.limiter = on.then(|| Limiter::of_origin(&self.origin));
        self
    }

    /// The same limit, with at most `max_retries` retries.
    pub(crate) fn with_max_retries(mut self, max_retries: u32) -> Pacer {
        self.max_retries = max_retries;
        self
    }

    /// The current limit on calls in flight (`None`: fixed, the engine's cap).
    pub(crate) fn limit(&self) -> Option<f64> {
        self.limiter.as_ref().map(|l| l.limit())
    }

    /// Runs `attempt` until it is done or fails for good, counting every
    /// attempt in `usage` (`calls`, `retries`). See the [module docs](self).
    pub(crate) async fn run<T, F, Fut>(
        &self,
        usage: &mut Usage,
        mut attempt: F,
    ) -> Result<T, AgentError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Attempt<T>>,
    {
        let mut attempts = 0u32;
        loop {
            let slot = match &self.limiter {
                Some(limiter) => Some(limiter.acquire().await),
                None => None,
            };
            attempts += 1;
            usage.count_attempt(attempts > 1);
            let (error, retry_after) = match attempt().await {
                Attempt::Done(value) => {
                    if let Some(slot) = slot {
                        slot.answered();
                    }
                    return Ok(value);
                }
                // Dropping the slot frees it without moving the limit.
                Attempt::Failed(error) => return Err(error),
                Attempt::Overloaded { error, retry_after } => (error, retry_after),
            };
            if let Some(slot) = slot {
                slot.overloaded();
            }
            if attempts > self.max_retries {
                return Err(exhausted(error, attempts));
            }
            let wait = overload_wait(attempts, retry_after);
            tracing::debug!(?retry_after, ?wait, attempts, limit = ?self.limit(), "agent overloaded");
            without_permit(tokio::time::sleep(wait)).await;
        }
    }
}

/// How long to wait after the `attempt`-th attempt was answered as
/// overloaded: what the agent asked for, and at least a backoff.
pub(crate) fn overload_wait(attempt: u32, retry_after: Option<Duration>) -> Duration {
    let backoff = crate::http::backoff(attempt, BACKOFF_MAX);
    retry_after.map_or(backoff, |asked| asked.max(backoff))
}

/// The error of a call whose every attempt was answered as overloaded.
fn exhausted(error: AgentError, attempts: u32) -> AgentError {
    match error {
        AgentError::Status { url, status, body } => AgentError::Overloaded {
            url,
            status,
            attempts,
            body,
        },
        other => other,
    }
}

/// The AIMD limit on calls in flight to one agent (see the [module docs](self)).
pub(crate) struct Limiter {
    /// Holds `permits` permits, less those out and those forgotten.
    semaphore: Semaphore,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The limit, ≥ 1; `floor(limit)` calls may be in flight.
    limit: f64,
    /// `floor(limit)`: the permits that exist.
    permits: usize,
    /// Permits out beyond `permits` (the limit went down while they were
    /// out): forgotten as they come back.
    debt: usize,
    /// Calls in flight.
    in_flight: usize,
    /// Calls sent so far: a call's ticket is its number.
    sent: u64,
    /// `sent` at the last decrease: calls with a ticket up to it were sent
    /// before it, and their overloaded answers do not decrease again.
    decreased_at: u64,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter")
            .field("limit", &self.limit())
            .finish_non_exhaustive()
    }
}

/// One call's place under the limit; dropping it frees the place without
/// moving the limit (a call that failed otherwise, or was cancelled).
pub(crate) struct Slot<'a> {
    limiter: &'a Limiter,
    permit: Option<SemaphorePermit<'a>>,
    ticket: u64,
    /// It took the last free place (or one handed over from a call that
    /// ended while others waited): the limit was what held calls back.
    binding: bool,
}

/// The most origins whose limits the process keeps; past it, limits no
/// agent holds any more are let go.
const KEPT_ORIGINS: usize = 1024;

impl Limiter {
    /// The limit of calls to `origin`, one per origin in the process: made
    /// (unbounded) the first time an agent calls it, kept while the
    /// process runs.
    pub(crate) fn of_origin(origin: &str) -> Arc<Limiter> {
        use std::collections::HashMap;
        use std::sync::OnceLock;
        static BY_ORIGIN: OnceLock<Mutex<HashMap<String, Arc<Limiter>>>> = OnceLock::new();
        let mut all = BY_ORIGIN
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(limiter) = all.get(origin) {
            return limiter.clone();
        }
        if all.len() >= KEPT_ORIGINS {
            all.retain(|_, l| Arc::strong_count(l) > 1);
        }
        let limiter = Arc::new(Limiter::new());
        all.insert(origin.to_string(), limiter.clone());
        limiter
    }

    /// A limit that starts unbounded ([`MAX_CONCURRENCY`]).
    pub(crate) fn new() -> Limiter {
        Limiter {
            semaphore: Semaphore::new(MAX_CONCURRENCY),
            state: Mutex::new(State {
                limit: MAX_CONCURRENCY as f64,
                permits: MAX_CONCURRENCY,
                debt: 0,
                in_flight: 0,
                sent: 0,
                decreased_at: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current limit.
    pub(crate) fn limit(&self) -> f64 {
        self.lock().limit
    }

    /// Calls in flight now.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.lock().in_flight
    }

    /// Waits for a place under the limit (lending the engine's permit back
    /// meanwhile), first come first served.
    pub(crate) async fn acquire(&self) -> Slot<'_> {
        let permit = match self.semaphore.try_acquire() {
            Ok(permit) => Some(permit),
            Err(_) => without_permit(self.semaphore.acquire()).await.ok(),
        };
        let mut state = self.lock();
        state.in_flight += 1;
        state.sent += 1;
        Slot {
            limiter: self,
            permit,
            ticket: state.sent,
            binding: self.semaphore.available_permits() == 0,
        }
    }

    /// Sets the limit, creating or retiring permits to match.
    fn set(&self, state: &mut State, limit: f64) {
        state.limit = limit.clamp(1.0, MAX_CONCURRENCY as f64);
        let target = state.limit.floor() as usize;
        while state.permits < target {
            if state.debt > 0 {
                state.debt -= 1;
            } else {
                self.semaphore.add_permits(1);
            }
            state.permits += 1;
        }
        if state.permits > target {
            let excess = state.permits - target;
            let retired = self.semaphore.forget_permits(excess);
            state.debt += excess - retired;
            state.permits = target;
        }
    }
}

impl Slot<'_> {
    /// The call was answered: additive increase, when the limit binds.
    pub(crate) fn answered(self) {
        if self.binding {
            let mut state = self.limiter.lock();
            let limit = state.limit;
            self.limiter.set(&mut state, limit + 1.0 / limit);
        }
    }

    /// The agent said it is overloaded: multiplicative decrease, once per round.
    pub(crate) fn overloaded(self) {
        let mut state = self.limiter.lock();
        if self.ticket > state.decreased_at {
            // From the calls out now (this one included) when fewer than
            // the limit: the load the agent refused.
            let from = state.limit.min(state.in_flight as f64);
            self.limiter.set(&mut state, from * DECREASE);
            state.decreased_at = state.sent;
            tracing::debug!(
                limit = state.limit,
                "agent overloaded: fewer calls in flight"
            );
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut state = self.limiter.lock();
        state.in_flight -= 1;
        if let Some(permit) = self.permit.take() {
            if state.debt > 0 {
                state.debt -= 1;
                permit.forget();
            } else {
                drop(permit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_honours_retry_after_and_is_never_below_a_backoff() {
        for attempt in 1..=12u32 {
            let base = Duration::from_millis(250u64 << (attempt - 1).min(10)).min(BACKOFF_MAX);
            for _ in 0..20 {
                let wait = overload_wait(attempt, None);
                assert!(wait >= base / 2 && wait <= base, "{attempt}: {wait:?}");
            }
        }
        let asked = Duration::from_millis(2500);
        assert_eq!(
            overload_wait(3, Some(asked)),
            asked,
            "a longer Retry-After wins"
        );
        let short = overload_wait(1, Some(Duration::from_millis(10)));
        assert!(
            short >= Duration::from_millis(125),
            "a Retry-After shorter than the backoff: the backoff ({short:?})"
        );
    }

    /// `n` calls through `limiter`, all started at once (so each waits for
    /// a place, as the engine's jobs do); each is answered as `outcome(k)`
    /// says (true: answered, false: overloaded) after a yield.
    async fn calls(limiter: &Limiter, n: usize, outcome: impl Fn(usize) -> bool) {
        let calls = (0..n).map(|k| {
            let ok = outcome(k);
            async move {
                let slot = limiter.acquire().await;
                tokio::task::yield_now().await;
                if ok {
                    slot.answered();
                } else {
                    slot.overloaded();
                }
            }
        });
        futures_util::future::join_all(calls).await;
    }

    #[tokio::test]
    async fn the_limit_goes_down_once_per_round_and_back_up() {
        let limiter = Limiter::new();
        assert_eq!(limiter.limit(), MAX_CONCURRENCY as f64, "starts unbounded");
        // 20 calls in flight, every one answered 429 (one window): one
        // decrease, from the 20 out: 20 × 0.7 = 14, not 0.7^20.
        let out: Vec<Slot<'_>> = {
            let mut v = Vec::new();
            for _ in 0..20 {
                v.push(limiter.acquire().await);
            }
            v
        };
        assert_eq!(limiter.in_flight(), 20);
        for slot in out {
            slot.overloaded();
        }
        assert!((limiter.limit() - 14.0).abs() < 1e-9, "{}", limiter.limit());
        assert_eq!(limiter.in_flight(), 0);
        assert_eq!(limiter.semaphore.available_permits(), 14, "14 places");
        // Calls sent after the decrease are a new round: 14 out; two 429s
        // of that round decrease once more: 14 × 0.7 = 9.8.
        let mut round = Vec::new();
        for _ in 0..14 {
            round.push(limiter.acquire().await);
        }
        assert!(
            limiter.semaphore.try_acquire().is_err(),
            "a 15th call waits: the limit is 14"
        );
        round.pop().unwrap().overloaded();
        round.pop().unwrap().overloaded();
        assert!((limiter.limit() - 9.8).abs() < 1e-9, "{}", limiter.limit());
        drop(round);
        assert_eq!(limiter.semaphore.available_permits(), 9, "9 places");
        // Down to 1 at the least (a 429 with one call out: from 1).
        for _ in 0..12 {
            calls(&limiter, 1, |_| false).await;
        }
        assert_eq!(limiter.limit(), 1.0);
        let one = limiter.acquire().await;
        assert!(
            limiter.semaphore.try_acquire().is_err(),
            "one call at a time"
        );
        drop(one);
        // Back up: 200 calls waiting for places, every one answered: each
        // adds 1/limit, so after n answers limit² ≈ 1 + 2n: about 20.
        calls(&limiter, 200, |_| true).await;
        let grown = limiter.limit();
        assert!((18.0..21.0).contains(&grown), "{grown}");
        // A 429 with 10 calls out: 10 × 0.7 = 7; then 100 answers bring it
        // back up (7² + 2·100 ≈ 249: about 15.8).
        let out: Vec<Slot<'_>> = {
            let mut v = Vec::new();
            for _ in 0..10 {
                v.push(limiter.acquire().await);
            }
            v
        };
        let mut out = out.into_iter();
        out.next().unwrap().overloaded();
        assert!((limiter.limit() - 7.0).abs() < 1e-9, "{}", limiter.limit());
        drop(out);
        calls(&limiter, 100, |_| true).await;
        let back = limiter.limit();
        assert!((14.0..17.0).contains(&back), "{back}");
        assert_eq!(limiter.in_flight(), 0);
    }

    #[tokio::test]
    async fn an_unused_limit_does_not_grow_and_a_decrease_starts_from_the_calls_out() {
        let limiter = Limiter::new();
        limiter.set(&mut limiter.lock(), 50.0);
        // One call at a time under a limit of 50: the limit is not what
        // holds calls back, so answers do not raise it.
        for _ in 0..10 {
            limiter.acquire().await.answered();
        }
        assert_eq!(limiter.limit(), 50.0);
        // A 429 with 3 calls out: from 3, not from 50 (3 × 0.7 = 2.1).
        let a = limiter.acquire().await;
        let b = limiter.acquire().await;
        let c = limiter.acquire().await;
        c.overloaded();
        assert!((limiter.limit() - 2.1).abs() < 1e-9, "{}", limiter.limit());
        // 2 places, both taken by a and b.
        assert_eq!(limiter.semaphore.available_permits(), 0);
        drop(a);
        drop(b);
        assert_eq!(limiter.in_flight(), 0);
        assert_eq!(
            limiter.semaphore.available_permits(),
            2,
            "places match the limit"
        );
    }

    #[tokio::test]
    async fn places_retired_while_out_are_forgotten_as_they_come_back() {
        let limiter = Limiter::new();
        limiter.set(&mut limiter.lock(), 10.0);
        let out: Vec<_> = {
            let mut v = Vec::new();
            for _ in 0..10 {
                v.push(limiter.acquire().await);
            }
            v
        };
        // Down to 3 while 10 are out: 7 places are owed.
        limiter.set(&mut limiter.lock(), 3.0);
        assert_eq!(limiter.lock().debt, 7);
        drop(out);
        assert_eq!(limiter.lock().debt, 0);
        assert_eq!(limiter.semaphore.available_permits(), 3);
        // Up to 5 with none out: 2 new places.
        limiter.set(&mut limiter.lock(), 5.5);
        assert_eq!(limiter.semaphore.available_permits(), 5);
    }
}
