//! What the judge ([`Judge`](super::Judge)) and the embedder
//! ([`Embedder`](super::Embedder)) share as builders, written once: both are
//! a model asked at an [`Endpoint`](super::endpoint::Endpoint) (fields
//! `endpoint` and `model`), which an estimate's dry run may stand in for
//! (field `dry`). Each type adds its own setters (the judge's `cache` also
//! forgets its boundary key; its `max_tokens`, `structured`).

/// The shared setters and readers, expanded inside `impl Judge` and
/// `impl Embedder`.
macro_rules! endpoint_client {
    () => {
        /// Shares `permits` for calls in flight (a run's judge and
        /// embeddings share one bound, `EVAL_JUDGE_CONCURRENCY`).
        pub(crate) fn share_permits(
            mut self,
            permits: std::sync::Arc<tokio::sync::Semaphore>,
        ) -> Self {
            self.endpoint.permits = permits;
            self
        }

        /// Sets (or clears) the API key.
        pub fn api_key(mut self, key: Option<String>) -> Self {
            self.endpoint = self.endpoint.with_key(key);
            self
        }

        /// Sets the per-request timeout (default 120 s;
        /// `EVAL_JUDGE_TIMEOUT_SECS`, `EVAL_EMBED_TIMEOUT_SECS`).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.endpoint.timeout = timeout;
            self
        }

        /// Sets how many times a 429/5xx/unreachable call is retried
        /// (default 4).
        pub fn max_retries(mut self, n: u32) -> Self {
            self.endpoint.max_retries = n;
            self
        }

        /// The model asked.
        pub fn model(&self) -> &str {
            &self.model
        }

        /// The server's host and port (no scheme, path, user or key): for
        /// a fingerprint.
        pub fn host(&self) -> String {
            self.endpoint.host()
        }

        /// This client in an estimate's dry run: what it would send is
        /// answered and counted by `dry`; nothing is sent.
        pub(crate) fn dry_run(mut self, dry: std::sync::Arc<super::DryRun>) -> Self {
            self.dry = Some(dry);
            self
        }
    };
}

pub(crate) use endpoint_client;
