//! agentspec `agent.yaml` manifests (seed 000) and letta-evals suites (seed
//! 001): which datasets to evaluate, with which metrics, thresholds and CI
//! gate.
//!
//! ```yaml
//! spec:
//!   evaluation:
//!     framework: ragas
//!     datasets:
//!       - name: rag-quality
//!         path: $file:evals/rag.jsonl
//!         metrics: [faithfulness, context_recall, answer_relevancy]
//!     thresholds:
//!       faithfulness: 0.80
//!     ciGate: true
//!     repeat: 3          # ours: agent runs per sample (letta's num_runs), or auto / "auto:20"
//!     agent:             # ours: how the agent is spoken to (all optional)
//!       protocol: openai # json (default) | openai (OpenAI chat completions)
//!       model: my-model  # the `model` of OpenAI requests
//!       stream: true     # ask for a streamed answer (SSE)
//! ```
//!
//! A dataset entry may also offer tools to the agent: `tools:
//! $file:evals/tools.json` (a JSON array of OpenAI tool definitions, or an
//! object with a `tools` array; relative to the manifest, inside the
//! project) or the list inline; they are added to each of its samples (a
//! sample's own definition of a tool wins). `spec.evaluation.agent` is
//! applied by `evals evaluate` (its flags win over it, and it wins over the
//! `EVAL_AGENT_*` variables).
//!
//! A letta-evals suite (seed 001) is read as a manifest of one dataset, so
//! every front end that takes a manifest runs it: its dataset (relative to
//! the suite), `max_samples` and `sample_tags` ([`ManifestDataset::subset`]),
//! `num_runs`, its graders as metrics named by their keys and its `reward`
//! (letta-evals 0.26; before it, a `gate`) as a gate
//! ([`ManifestDataset::gates`], which alone decides:
//! [`ManifestDataset::threshold_gates`] is `false`). What cannot run here
//! (Python graders and extractors, letta-only extractors, logical gates) is
//! refused at its line; the mapping is in the guide's "letta-evals suites".
//!
//! Rules, each broken rule reported with the manifest's file:line:
//! - dataset paths (`$file:` prefix optional) are relative to the manifest and
//!   must exist inside the project root the caller names;
//! - a dataset's `metrics` override the evaluation-level `metrics`; every
//!   metric must be known, every threshold must name a metric some dataset
//!   uses, and thresholds take the metric's direction;
//! - with `framework: deepeval`, the thresholds of `toxicity` and `bias` are
//!   deepeval's (the most toxicity allowed, e.g. `toxicity: 0.1`) and become
//!   our safety-score minimum `1 - t`; otherwise they are safety minimums as
//!   in seed 000 (`toxicity: 0.90`). `hallucination` is a maximum either way;
//! - [`ManifestDataset::check_fields`] applies seed 000's field table to the
//!   loaded samples, before any agent call.

mod agentspec;
mod model;
mod paths;
mod suite;
mod suite_models;
mod suite_reward;

use std::path::Path;

use crate::files::{DEFAULT_MAX_DATASET_BYTES, ReadError, read_checked};

pub use model::{Manifest, ManifestDataset, ManifestError};
pub use paths::project_root;
use paths::utf8;
/// A grader as a suite reads it (for the reward, which is built from them).
use suite::Graded;

/// Most agent runs per sample a manifest may ask for.
pub use crate::repeat::MAX_REPEAT;

impl Manifest {
    /// Reads the manifest at `path` (shown as `shown`). Dataset paths must
    /// lie inside `root` (the crate, or the project the CLI runs in).
    pub fn load(path: &Path, shown: &str, root: &Path) -> Result<Manifest, ManifestError> {
        Self::load_with(path, shown, root, false)
    }

    /// [`load`](Self::load), but with `allow_outside` dataset paths may lead
    /// outside `root` (the explicit opt-out: `allow_outside = true`,
    /// `--allow-outside`).
    pub fn load_with(
        path: &Path,
        shown: &str,
        root: &Path,
        allow_outside: bool,
    ) -> Result<Manifest, ManifestError> {
        let bytes = read_checked(path, DEFAULT_MAX_DATASET_BYTES).map_err(|e| match e {
            ReadError::Io(source) => ManifestError::Io {
                path: shown.to_string(),
                source,
            },
            other => ManifestError::Unreadable {
                path: shown.to_string(),
                source: other,
            },
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let text = utf8(&bytes, shown)?;
        parse_in(text, shown, dir, root, allow_outside)
    }

    /// Parses manifest `bytes` (UTF-8 text; a byte that is not is reported
    /// with its line and column), as [`parse`](Self::parse) does.
    pub fn parse_bytes(
        bytes: &[u8],
        shown: &str,
        dir: &Path,
        root: &Path,
    ) -> Result<Manifest, ManifestError> {
        Self::parse(utf8(bytes, shown)?, shown, dir, root)
    }

    /// Parses manifest `text`; relative dataset paths resolve against `dir`.
    pub fn parse(
        text: &str,
        shown: &str,
        dir: &Path,
        root: &Path,
    ) -> Result<Manifest, ManifestError> {
        parse_in(text, shown, dir, root, false)
    }
}

/// A letta-evals suite or an agentspec manifest, by its top-level keys.
fn parse_in(
    text: &str,
    shown: &str,
    dir: &Path,
    root: &Path,
    allow_outside: bool,
) -> Result<Manifest, ManifestError> {
    if suite::is_suite(text) {
        suite::parse(text, shown, dir, root, allow_outside)
    } else {
        agentspec::parse(text, shown, dir, root, allow_outside)
    }
}
