//! Shared core of the eval crates: the one [`Sample`] model, the dataset
//! adapters that load files into it, the test-name scheme, and the metric
//! declarations both the `#[eval_dataset]` macro (at compile time) and
//! `eval-runtime` (at run time) agree on.
//!
//! Nothing here does I/O beyond reading a dataset file, and nothing is async:
//! the proc-macro crate depends on this crate, so it stays small.
//!
//! ```
//! use eval_core::dataset::Dataset;
//!
//! let data = "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval Augmented Generation\", \"tags\": [\"basics\"]}\n";
//! let ds = Dataset::from_bytes("evals/rag.jsonl", data.as_bytes()).unwrap();
//! assert_eq!(ds.samples.len(), 1);
//! assert_eq!(ds.samples[0].source.line, 1);
//! assert_eq!(ds.test_names(), vec!["what_is_rag__basics".to_string()]);
//! ```

pub mod dataset;
pub mod error;
pub mod files;
pub mod hash;
pub mod index;
pub mod manifest;
pub mod metric;
pub mod naming;
pub mod retrieval;
pub mod runevals;
pub mod sample;
pub mod suggest;
pub mod write;

mod csv_format;
mod fields;
mod json_format;
mod jsonl_format;
mod shapes;

pub use dataset::{Dataset, Format};
pub use error::{DatasetError, Problem};
pub use manifest::{Manifest, ManifestDataset, ManifestError};
pub use metric::{MetricSpec, Op};
pub use sample::{Expected, Input, Sample, Source};
