//! The guide's examples, compiled: each chapter of `src/` and the README is
//! included below as the documentation of an empty module, so rustdoc
//! compiles every Rust block in them as a doctest of this crate (blocks that
//! would call an agent are `no_run`: compiled, not run). Paths such as
//! `evals/rag.jsonl` are relative to this directory, as they are to a
//! user's crate. `eval-cli/tests/docs.rs` checks that every chapter is listed
//! here, and checks the shell blocks.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}

#[cfg(doctest)]
#[doc = include_str!("src/agents.md")]
mod guide_agents {}

#[cfg(doctest)]
#[doc = include_str!("src/architecture.md")]
mod guide_architecture {}

#[cfg(doctest)]
#[doc = include_str!("src/ci-nextest.md")]
mod guide_ci_nextest {}

#[cfg(doctest)]
#[doc = include_str!("src/ci-summaries.md")]
mod guide_ci_summaries {}

#[cfg(doctest)]
#[doc = include_str!("src/compile-time.md")]
mod guide_compile_time {}

#[cfg(doctest)]
#[doc = include_str!("src/configuration.md")]
mod guide_configuration {}

#[cfg(doctest)]
#[doc = include_str!("src/datasets.md")]
mod guide_datasets {}

#[cfg(doctest)]
#[doc = include_str!("src/demo-agent.md")]
mod guide_demo_agent {}

#[cfg(doctest)]
#[doc = include_str!("src/evals-command.md")]
mod guide_evals_command {}

#[cfg(doctest)]
#[doc = include_str!("src/generate.md")]
mod guide_generate {}

#[cfg(doctest)]
#[doc = include_str!("src/getting-started.md")]
mod guide_getting_started {}

#[cfg(doctest)]
#[doc = include_str!("src/harness.md")]
mod guide_harness {}

#[cfg(doctest)]
#[doc = include_str!("src/html-report.md")]
mod guide_html_report {}

#[cfg(doctest)]
#[doc = include_str!("src/interactive.md")]
mod guide_interactive {}

#[cfg(doctest)]
#[doc = include_str!("src/introduction.md")]
mod guide_introduction {}

#[cfg(doctest)]
#[doc = include_str!("src/judges.md")]
mod guide_judges {}

#[cfg(doctest)]
#[doc = include_str!("src/limitations.md")]
mod guide_limitations {}

#[cfg(doctest)]
#[doc = include_str!("src/local-models.md")]
mod guide_local_models {}

#[cfg(doctest)]
#[doc = include_str!("src/manifests.md")]
mod guide_manifests {}

#[cfg(doctest)]
#[doc = include_str!("src/metrics.md")]
mod guide_metrics {}

#[cfg(doctest)]
#[doc = include_str!("src/own-metrics.md")]
mod guide_own_metrics {}

#[cfg(doctest)]
#[doc = include_str!("src/performance.md")]
mod guide_performance {}

#[cfg(doctest)]
#[doc = include_str!("src/results.md")]
mod guide_results {}

#[cfg(doctest)]
#[doc = include_str!("src/retrieval.md")]
mod guide_retrieval {}

#[cfg(doctest)]
#[doc = include_str!("src/stats-and-guide.md")]
mod guide_stats_and_guide {}

#[cfg(doctest)]
#[doc = include_str!("src/traces.md")]
mod guide_traces {}

#[cfg(doctest)]
#[doc = include_str!("src/verdicts.md")]
mod guide_verdicts {}
