//! A dataset described from itself (seed 002's outputs beside the dataset):
//! its statistical summary, `<dataset>-stats.json` ([`DatasetStats`],
//! `evals stats --write`), and its annotation guide,
//! `<dataset>-annotation-guide.md` ([`guide()`], `evals guide`).
//!
//! Both are functions of the file's samples alone: the same dataset gives
//! the same bytes (no time, no path beyond the file's name), so they can be
//! committed beside it and checked for being current.

mod guide;
mod stats;

pub use guide::guide;
pub use stats::{DatasetStats, Lengths};

use std::path::{Path, PathBuf};

/// `<dir>/<stem>-<suffix>` beside `dataset` (`evals/rag.jsonl` →
/// `evals/rag-stats.json`).
fn beside(dataset: &Path, suffix: &str) -> PathBuf {
    let stem = dataset
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    dataset.with_file_name(format!("{stem}-{suffix}"))
}

/// Where `evals stats --write` puts the summary of `dataset`:
/// `<stem>-stats.json` beside it.
pub fn stats_path(dataset: &Path) -> PathBuf {
    beside(dataset, "stats.json")
}

/// Where `evals guide` puts the annotation guide of `dataset`:
/// `<stem>-annotation-guide.md` beside it.
pub fn guide_path(dataset: &Path) -> PathBuf {
    beside(dataset, "annotation-guide.md")
}

/// What `path` is when its name is one [`stats_path`] or [`guide_path`]
/// gives: a file written beside a dataset, not a dataset (for `evals lint`
/// given a folder or a glob that also matches these files).
pub fn companion_kind(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if name.len() > "-stats.json".len() && name.ends_with("-stats.json") {
        Some("the statistical summary `evals stats --write` writes")
    } else if name.len() > "-annotation-guide.md".len() && name.ends_with("-annotation-guide.md") {
        Some("the annotation guide `evals guide` writes")
    } else {
        None
    }
}

/// The name a dataset goes by in its summary and guide: the file's name.
pub fn dataset_name(dataset: &Path) -> String {
    dataset
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| dataset.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests;
