//! eval-runtime's integration tests: every integration test of the crate in one binary (one link
//! instead of one per file), a module per former file.

mod common;

mod attribute_paths;
mod cassette;
// Exact counts need the `tokenizer` feature (CI tests the workspace, where
// eval-cli turns it on).
#[cfg(feature = "tokenizer")]
mod estimate;
mod features_table;
mod geval;
mod harness;
mod http_agent;
mod http_limits;
mod http_pace;
mod json_metrics;
mod judge;
mod judge_prompt;
mod judge_real_servers;
mod judge_replies;
mod latency_cost;
mod loader_refusals;
mod local_models;
mod module_layout;
mod openai_agent;
mod pass_k;
mod pinned_macro;
mod providers;
mod public_api;
mod ragas_metrics;
mod readme_links;
mod recorded_llama_cpp;
mod rerank_cohere; // issue38:models
mod retrieval;
mod settings_table;
// The OTLP receiver is the `otel` feature's (CI tests the workspace, where
// eval-cli turns it on).
#[cfg(feature = "otel")]
mod spans;
mod streamed;
mod suite_models; // issue38:models
mod tools;
mod untrusted_replies;
mod usage_never_zero;
mod user_metrics;
