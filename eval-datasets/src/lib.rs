//! Shared core of the eval crates: the one [`Sample`] model, the dataset
//! adapters that load files into it, the test-name scheme, and the metric
//! declarations both the `#[eval_dataset]` macro (at compile time) and
//! `eval-runtime` (at run time) agree on.
//!
//! Nothing here does I/O beyond reading a dataset file, and nothing is async:
//! the proc-macro crate depends on this crate, so it stays small.
//!
//! ```
//! use eval_datasets::dataset::Dataset;
//!
//! let data = "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval Augmented Generation\", \"tags\": [\"basics\"]}\n";
//! let ds = Dataset::from_bytes("evals/rag.jsonl", data.as_bytes()).unwrap();
//! assert_eq!(ds.samples.len(), 1);
//! assert_eq!(ds.samples[0].source.line, 1);
//! assert_eq!(ds.test_names(), vec!["what_is_rag__basics__".to_string()]);
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(unreachable_pub)]

// The public API: these modules and the re-exports below.
pub mod agent;
pub mod append;
pub mod dataset;
pub mod error;
pub mod files;
pub mod hash;
pub mod index;
pub mod json;
pub mod lint;
pub mod manifest;
pub mod metric;
pub mod naming;
pub mod registry;
pub mod repeat;
pub mod retrieval;
pub mod sample;
pub mod similarity;
pub mod subset;
pub mod suggest;
pub mod terminal;
pub mod tool;
pub mod write;

/// Microsoft 365 Agents Toolkit `runevals` documents (the runevals schema
/// adapter of the dataset formats).
pub use formats::runevals;

// Internal: the dataset adapters (syntaxes and schemas, `formats/mod.rs`
// describes them), the index entry type, the rank metrics (public through
// `retrieval`).
mod formats;
mod index_entry;
mod rank;

pub use agent::{AgentSettings, HttpMapping, Protocol};
pub use dataset::{Dataset, Format};
pub use error::{DatasetError, Problem};
pub use manifest::{Manifest, ManifestDataset, ManifestError};
pub use metric::{MetricSpec, Op};
pub use repeat::Repeat;
pub use sample::{Expected, Input, Sample, Source};
pub use subset::Subset;
pub use tool::{InvalidArguments, ToolCall};
