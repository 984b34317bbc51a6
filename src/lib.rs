//! Examples and test support for the evals workspace.
//!
//! This crate (`eval-examples`) holds the workspace's integration tests
//! (`tests/`), the example datasets (`examples/evals/`) and a small demo
//! agent to run them against:
//!
//! * [`demo`] — a deterministic retrieval-augmented "agent" served over HTTP
//!   (a built-in corpus, word-overlap retrieval, conversation memory and a
//!   little arithmetic). Integration tests and benchmarks start it
//!   in-process with [`demo::spawn`]; `cargo run --example demo_agent` serves
//!   it on a fixed address for manual use.
//!
//! * [`collector`] — a local OpenTelemetry collector (OTLP/HTTP) that keeps
//!   the spans it is sent, for the trace tests and the bench.
//!
//! ```no_run
//! let server = eval_examples::demo::spawn(Default::default())?;
//! println!("agent at {}", server.url()); // e.g. http://127.0.0.1:41234
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod collector;
pub mod demo;
pub mod judge;
