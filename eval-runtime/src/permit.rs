//! The engine's concurrency permit, lent back while a job only waits.
//!
//! Each job (one sample) holds one of the run's permits (`EVAL_CONCURRENCY`)
//! from its start to its report. A job whose agent call is only waiting —
//! for a slot of the agent's own limit, or out a `Retry-After` — hands its
//! permit back with [`without_permit`] and takes one again before it calls,
//! so a throttled agent does not hold the process's permits that samples of
//! other datasets (sharing them under the attribute) or other agents could
//! use. Agent calls in flight stay within the cap: a permit is always held
//! while a request is out.
//!
//! No cycle can form: a job waiting for a permit holds at most a slot of its
//! agent's limit, and every permit holder is calling, scoring or waiting
//! without one.

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The permit a job holds (kept, and so held, by being stored here; only
/// the HTTP client's pacing lends it back, so without the `http` feature
/// nothing reads it).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
struct Held {
    semaphore: Arc<Semaphore>,
    permit: RefCell<Option<OwnedSemaphorePermit>>,
}

tokio::task_local! {
    static HELD: Held;
}

/// Runs `job` holding one of `semaphore`'s permits, which the job may lend
/// back while it waits (see the [module docs](self)).
///
/// The job is kept on the heap, once: held inline, an `async fn` keeps its
/// argument and the scope it is moved into side by side (twice a sample's
/// several-kilobyte future), and the attribute's test threads fault in
/// every page of that on their fresh stacks.
pub(crate) fn holding<F: Future>(
    semaphore: Arc<Semaphore>,
    job: F,
) -> impl Future<Output = F::Output> {
    let job = Box::pin(job);
    async move {
        let permit = semaphore.clone().acquire_owned().await.ok();
        HELD.scope(
            Held {
                semaphore,
                permit: RefCell::new(permit),
            },
            job,
        )
        .await
    }
}

/// Runs `wait` without the engine permit the current job holds (when it
/// holds one: outside the engine this is just `wait`), then takes a permit
/// again. A job cancelled meanwhile (its sample timed out) goes on without
/// one: what is left of it makes no agent call.
#[cfg(feature = "http")]
pub(crate) async fn without_permit<F: Future>(wait: F) -> F::Output {
    let lent = HELD
        .try_with(|held| {
            let permit = held.permit.borrow_mut().take();
            permit.map(|p| {
                drop(p);
                held.semaphore.clone()
            })
        })
        .ok()
        .flatten();
    let out = wait.await;
    if let Some(semaphore) = lent {
        let permit = semaphore.acquire_owned().await.ok();
        let _ = HELD.try_with(|held| *held.permit.borrow_mut() = permit);
    }
    out
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_waiting_job_lends_its_permit_and_takes_one_back() {
        let semaphore = Arc::new(Semaphore::new(1));
        let s = semaphore.clone();
        holding(semaphore.clone(), async move {
            assert_eq!(s.available_permits(), 0, "the job holds the only permit");
            let seen = without_permit(async { s.available_permits() }).await;
            assert_eq!(seen, 1, "lent back while waiting");
            assert_eq!(s.available_permits(), 0, "held again after");
        })
        .await;
        assert_eq!(semaphore.available_permits(), 1, "returned at the end");
        // Outside a job there is nothing to lend.
        assert_eq!(without_permit(async { 7 }).await, 7);
        assert_eq!(semaphore.available_permits(), 1);
    }

    #[tokio::test]
    async fn another_job_runs_while_one_waits() {
        // One permit, two jobs: the first waits (lending its permit) until
        // the second has run, which it could not without the permit.
        let semaphore = Arc::new(Semaphore::new(1));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let first = holding(semaphore.clone(), async move {
            without_permit(rx).await.is_ok()
        });
        let second = holding(semaphore.clone(), async move {
            let _ = tx.send(());
        });
        let (first, ()) = tokio::time::timeout(std::time::Duration::from_secs(5), async {
            tokio::join!(first, second)
        })
        .await
        .expect("no deadlock");
        assert!(first);
    }
}
