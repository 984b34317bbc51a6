//! Run LLM-agent evaluation datasets as ordinary cargo tests.
//!
//! Put a dataset next to your tests and write one function:
//!
//! ```no_run
//! use eval_runtime::prelude::*;
//!
//! // tests/evals.rs — one #[test] per line of the dataset, in module `rag`.
//! #[eval_dataset("tests/data/rag.jsonl", metrics(contains >= 1.0, partial_match >= 0.5))]
//! async fn rag(sample: &Sample) -> eval_runtime::Result<Response> {
//!     HttpAgent::from_env()?.respond(sample).await
//! }
//! # fn main() {}
//! ```
//!
//! `cargo test --test evals` then sends every sample to the agent at
//! `EVAL_AGENT_URL`, scores each metric and fails the samples whose score is
//! on the wrong side of its threshold, with a report a person can read:
//!
//! ```text
//! ---- rag::what_is_rag__basics__ stdout ----
//! FAILED rag::what_is_rag__basics__ (tests/data/rag.jsonl:1, id 0)
//!   input:    What is RAG?
//!   expected: Retrieval Augmented Generation
//!   actual:   I don't know.
//!   metric         score   threshold  verdict
//!   contains       0.000   >= 1.000    FAIL
//!   partial_match  0.000   >= 0.500    FAIL
//!   tags:     basics
//! ```
//!
//! The guide, [evals as cargo tests](https://evals-rs.github.io/evals/index.html), starts at
//! [Getting started](https://evals-rs.github.io/evals/getting-started.html).
//!
//! The agent can equally be in-process: the function is the agent.
//!
//! ```
//! use eval_runtime::prelude::*;
//!
//! async fn my_agent(sample: &Sample) -> Response {
//!     Response::new(format!("You asked: {}", sample.input.last()))
//! }
//!
//! # fn main() {
//! let sample = Sample::new("What is RAG?").with_expected("what is rag");
//! let spec = MetricSpec::new("contains", &[], None).unwrap();
//! let report = eval_runtime::evaluate_blocking("demo::one", &sample, &[spec], my_agent);
//! assert!(report.passed(), "{}", report.render());
//! # }
//! ```
//!
//! # The attribute
//!
//! `#[eval_dataset("<path>", metrics(<metric>, ...), gate(<metric>, ...), timeout_secs = N)]`
//! on an `async fn` (or plain `fn`) taking `&Sample` and returning a
//! [`Response`] (or a `Result` of one with any displayable error):
//!
//! * `<path>` is relative to the crate's `CARGO_MANIFEST_DIR`; `.jsonl` /
//!   `.ndjson` (agentspec, letta-evals, OpenAI evals, promptflow), `.csv`
//!   (letta-evals, deepeval, ragas, promptfoo) and `.json` (runevals
//!   documents, Unrag retrieval datasets, deepeval and golden-dataset
//!   arrays). See [`dataset::FIELD_ALIASES`] for the field names understood.
//! * Or `manifest = "agent.yaml", dataset = "<name>"`: the metrics,
//!   thresholds, `ciGate` and `repeat` of that dataset of an agentspec
//!   manifest (see [`eval_datasets::manifest`]); samples lacking a field a metric
//!   needs are a compile error.
//! * `<metric>` is `name`, `name >= x`, `name <= x` or
//!   `name(option = value, ...) >= x`; the guide's
//!   [metrics reference](https://evals-rs.github.io/evals/metrics.html) lists them. A missing
//!   threshold takes the metric's default.
//! * `gate(...)` gates the dataset's *means* (same syntax), judged by one
//!   more test, `<fn>::gates`, when every sample ran in the process;
//!   `ci_gate = true` makes every threshold a gate and samples fail only
//!   when they cannot be scored; a manifest's thresholds are always gates,
//!   enforced only under its `ciGate: true` (else reported, "not enforced
//!   (ciGate is false)"). See the verdict table in
//!   the guide's [Verdicts](https://evals-rs.github.io/evals/verdicts.html) chapter.
//! * `timeout_secs` bounds one sample's agent interaction, and separately
//!   its scoring (default `EVAL_SAMPLE_TIMEOUT_SECS`, else 300).
//! * `repeat = n` runs the agent n times per sample (`repeat = "auto"`:
//!   more only while a verdict is in doubt); scores are means with their
//!   interval, and a sample passes, fails or is
//!   inconclusive by where the interval lies; `inconclusive = "fail"` makes
//!   an inconclusive one fail, `cluster = "field"` clusters the gates'
//!   samples (see [`verdict`]).
//!
//! Test names are `<fn>::<sample key>__<tag>__<tag>` (see
//! [`eval_datasets::naming`]), so `cargo test -- advanced` runs the samples
//! tagged `advanced` and `cargo test -- rag::` one dataset. A malformed
//! dataset, an unknown metric or a wrong threshold is a compile error naming
//! the file and line.
//!
//! # One engine
//!
//! The attribute, the [`Harness`] (datasets found at run time, in a
//! `harness = false` test) and the [`Runner`] behind the `evals` command
//! each build a [`plan`] and hand it to one engine: selection, scheduling,
//! panic containment, scoring, [`results`], gates and baselines are written
//! once, so each gives the same verdict ([`results::RunVerdict`]). Every
//! setting comes from one [`Config`], read once (the `EVAL_*` variables are
//! listed there).
//!
//! Known limitations are listed once, in the guide:
//! [known limitations](https://evals-rs.github.io/evals/limitations.html).
//!
//! # Features
//!
//! `http` (default): HTTP agents, the judge and embeddings clients; `otel`:
//! the agent's OpenTelemetry spans as trajectories, evaluations exported;
//! `tokenizer`: exact token counts. See the guide's
//! [Cargo features](https://evals-rs.github.io/evals/getting-started.html#cargo-features).

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// docs.rs (`--cfg docsrs`, all features): each feature-gated item shows
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub, unnameable_types)]
// Without the internal `_cli` feature, what only the `evals` command uses
// (the `__cli` module's re-exports) is still compiled, much of it by the
// engine, but nothing outside can reach it: those lints hold for the build
// with `_cli`, which the workspace's clippy and tests use.
#![cfg_attr(
    not(feature = "_cli"),
    allow(dead_code, unused_imports, unreachable_pub, unnameable_types)
)]

mod agent;
mod cassette;
mod config;
mod cost;
mod engine;
mod estimate;
mod front;
#[cfg(feature = "http")]
mod http;
mod metrics;
mod model;
mod notice;
mod otel;
mod output;
mod permit;
pub mod plan;
#[cfg(feature = "http")]
mod provider;
pub mod retrieval;
mod secrets;
pub mod services;
mod stats;

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __private;
// What only the `evals` command uses: hidden, unstable, behind the internal
// `_cli` feature that only eval-cli enables.
#[cfg(feature = "_cli")]
#[doc(hidden)]
#[path = "cli_support.rs"]
pub mod __cli;
// `__private_<version>`, re-exporting `__private`: the name the attribute's
// expansion uses (build.rs writes it from this crate's version).
include!(concat!(env!("OUT_DIR"), "/private.rs"));

/// Results files: reading one, its samples' verdicts and scores, and the
/// verdict the run amounts to. The file's format, field by field, is in the
/// guide's "Results files" chapter; these are a typed view of it.
pub mod results {
    pub use crate::output::{
        FORMAT_VERSION, Results, ResultsError, RunVerdict, SampleRecord, Verdict,
    };
}

/// Comparing two runs' results, sample by sample and metric by metric.
pub mod diff {
    pub use crate::output::{Allow, Diff, compare, diff};
}

/// The statistics of verdicts: where a score's interval lies against its
/// threshold, and what an inconclusive verdict counts as (see the guide's
/// "Verdicts" chapter).
pub mod verdict {
    pub use crate::stats::{Decision, OnInconclusive};
}

/// Datasets and the [`Sample`] model (from `eval-datasets`).
pub mod dataset {
    pub use eval_datasets::dataset::*;
    pub use eval_datasets::error::{DatasetError, Problem};
    pub use eval_datasets::naming;
    pub use eval_datasets::sample::*;
}

pub use agent::{
    Agent, AgentReply, AgentRequest, AgentSettings, BoxFuture, FnAgent, IntoAgentResult, Message,
    Protocol, Response, Sampling, SyncFnAgent,
};
#[cfg(feature = "http")]
pub use agent::{HttpAgent, default_reply, openai, stream};
pub use config::{Config, HeaderError, Headers};
pub use eval_datasets::metric::{self as metric_spec, MetricSpec, Op};
pub use eval_datasets::{Dataset, Expected, Input, Repeat, Sample, ToolCall, tool};
pub use eval_macros::eval_dataset;
pub use front::direct::{evaluate_blocking, evaluate_with, score};
pub use front::harness::{Harness, Outcome};
pub use front::runner::{Prepared, RunOutcome, Runner};
pub use metrics::user::{
    FnMetric, IntoMetric, IntoScore, Metric, MetricContext, MetricFailure, Score, async_metric_fn,
    metric_fn,
};
pub use model::ScorerError;
pub use model::{
    AgentError, BadVar, CassetteError, CassetteMode, ConfigError, CostError, Error, MetricError,
    MetricResult, Refusal, ReplyError, Result, SampleError, SampleReport, Scored, SharedError,
    TraceError, Usage,
};
pub use model::{Step, StepKind, Trajectory, TrajectorySource};
pub use secrets::Secret;
pub use services::Services;

/// Everything an eval test file needs.
pub mod prelude {
    #[cfg(feature = "http")]
    pub use crate::agent::HttpAgent;
    pub use crate::agent::Response;
    pub use crate::eval_dataset;
    pub use eval_datasets::metric::MetricSpec;
    pub use eval_datasets::{Expected, Input, Sample, ToolCall};
}
