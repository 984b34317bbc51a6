//! How agent calls are paced: an answer saying the agent is overloaded
//! (429, 503) is retried, and the calls in flight to one agent adapt to
//! what it can take.
//!
//! (Groundwork: one attempt, no retry yet.)

use std::future::Future;
use std::time::Duration;

use crate::error::AgentError;
use crate::services::Usage;

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

/// Paces the calls to one agent; clones share the pace.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pacer {}

impl Pacer {
    /// Runs `attempt` until it is done or fails for good, counting every
    /// attempt in `usage` (`calls`, `retries`).
    pub(crate) async fn run<T, F, Fut>(
        &self,
        usage: &mut Usage,
        mut attempt: F,
    ) -> Result<T, AgentError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Attempt<T>>,
    {
        usage.calls += 1;
        match attempt().await {
            Attempt::Done(value) => Ok(value),
            Attempt::Overloaded { error, retry_after } => {
                tracing::debug!(?retry_after, "agent overloaded");
                Err(error)
            }
            Attempt::Failed(error) => Err(error),
        }
    }
}
