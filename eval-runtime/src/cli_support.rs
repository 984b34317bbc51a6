//! What the `evals` command (eval-cli) uses of this crate beyond the API a
//! test author is promised. Not a public API: hidden from the docs, free to
//! change in any release, and compiled only with the internal `_cli`
//! feature, which eval-cli alone enables. It only re-exports or forwards;
//! the behaviour lives in the modules it names.

/// The single-threaded runtime every way in evaluates on (agents, HTTP
/// connections and timers on the calling thread).
pub fn local_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    crate::engine::schedule::local_runtime()
}

/// The sentences of `text`, trimmed, by Unicode's sentence boundaries.
pub fn sentences(text: &str) -> Vec<String> {
    crate::model::sentences(text)
}
