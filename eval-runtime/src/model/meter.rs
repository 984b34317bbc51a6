//! What a sample's run has spent so far, seen by the engine when it cuts
//! the run short: a run that times out (or whose agent fails) keeps the
//! calls, tokens and cache hits made before, instead of reporting 0 calls
//! and $0 though the agent and the judge were called.
//!
//! The engine runs the agent, then the scoring, inside a [`Meter`]'s scope
//! (a task-local, so only work polled by the sample's own task is seen: an
//! in-process agent that runs on a thread of its own reports its usage in
//! its answer, as before). Every count of [`Usage`] — an HTTP attempt, a
//! reply's tokens, a re-ask, a cache hit — is also added to the meter in
//! scope, to the part its [`Role`] says: the agent's while the agent runs,
//! the judge's while scoring, the embeddings' inside an embeddings call.
//! What the meter holds is read only when the run was cut short; a run that
//! completes reports the usage its answer and its metrics carry.

use std::future::Future;
use std::sync::{Arc, Mutex};

use super::usage::Usage;

/// Whose counts a scope records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The agent (and a retrieval query's retriever).
    Agent,
    /// The judge.
    Judge,
    /// The embeddings server.
    Embeddings,
}

/// The usage counted so far in a run: the agent's, the judge's and the
/// embeddings'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Spent {
    pub(crate) agent: Usage,
    pub(crate) judge: Usage,
    pub(crate) embeddings: Usage,
}

/// A run's meter, shared by the engine and the work it scopes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Meter(Arc<Mutex<Spent>>);

tokio::task_local! {
    static METER: (Meter, Role);
}

impl Meter {
    /// A meter with nothing counted.
    pub(crate) fn new() -> Meter {
        Meter::default()
    }

    /// Runs `work` with its counts recorded in this meter as `role`'s.
    pub(crate) async fn scope<F: Future>(&self, role: Role, work: F) -> F::Output {
        METER.scope((self.clone(), role), work).await
    }

    /// What was counted so far.
    pub(crate) fn spent(&self) -> Spent {
        self.0
            .lock()
            .map(|s| *s)
            .unwrap_or_else(|p| *p.into_inner())
    }
}

/// Runs `work` with its counts recorded as `role`'s in the meter of the
/// scope it runs in (if any): an embeddings call made while scoring.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) async fn as_role<F: Future>(role: Role, work: F) -> F::Output {
    match METER.try_with(|(meter, _)| meter.clone()) {
        Ok(meter) => meter.scope(role, work).await,
        Err(_) => work.await,
    }
}

/// Adds `delta` to the meter in scope, to its role's part; nothing outside
/// a scope.
pub(crate) fn record(delta: Usage) {
    let _ = METER.try_with(|(meter, role)| {
        let mut spent = meter.0.lock().unwrap_or_else(|p| p.into_inner());
        match role {
            Role::Agent => spent.agent.add(delta),
            Role::Judge => spent.judge.add(delta),
            Role::Embeddings => spent.embeddings.add(delta),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn counts_reach_the_meter_in_scope_even_when_the_work_is_cancelled() {
        let meter = Meter::new();
        let work = meter.scope(Role::Agent, async {
            let mut usage = Usage::ZERO;
            usage.count_attempt(false);
            let _ = usage.count_reply(12, 3);
            as_role(Role::Embeddings, async {
                let mut u = Usage::ZERO;
                u.count_cache_hits(2);
            })
            .await;
            // Never finishes: the timeout drops `usage`.
            std::future::pending::<()>().await;
        });
        let cut = tokio::time::timeout(std::time::Duration::from_millis(10), work).await;
        assert!(cut.is_err());
        let spent = meter.spent();
        assert_eq!(
            (
                spent.agent.calls,
                spent.agent.prompt_tokens,
                spent.agent.completion_tokens
            ),
            (1, 12, 3)
        );
        assert_eq!(spent.embeddings.cache_hits, 2);
        assert_eq!(spent.judge, Usage::ZERO);
        // Outside a scope nothing is recorded (and nothing fails).
        let mut u = Usage::ZERO;
        u.count_attempt(true);
        assert_eq!(meter.spent().agent.calls, 1);
    }
}
