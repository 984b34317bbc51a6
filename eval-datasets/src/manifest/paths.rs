//! Where a manifest's files may be, and its text.

use std::path::{Path, PathBuf};

use super::model::ManifestError;
use crate::error::Problem;
use crate::files::{ContainmentError, absolute, contained, normalize};

/// `$file:relative/path` (or a plain path) resolved against `dir`, checked to
/// exist inside `root` ([`contained`]; anywhere with `allow_outside`).
/// Returns the absolute path and the path to show.
pub(super) fn resolve(
    raw: &str,
    dir: &Path,
    root: &Path,
    allow_outside: bool,
) -> Result<(PathBuf, String), String> {
    let written = raw.trim();
    let rel = written.strip_prefix("$file:").unwrap_or(written).trim();
    if rel.starts_with('$') {
        return Err(format!(
            "`{written}`: a dataset path is a file (`$file:evals/rag.jsonl` or `evals/rag.jsonl`), not an env or secret reference"
        ));
    }
    if rel.is_empty() {
        return Err("empty dataset path".into());
    }
    let root_abs = normalize(&absolute(root));
    let full = normalize(&absolute(&dir.join(rel)));
    if !allow_outside
        && let Err(ContainmentError::Outside {
            resolved,
            root,
            symlink,
        }) = contained(&root_abs, &full)
    {
        return Err(format!(
            "`{written}` resolves to {}{}, outside the project root {}: keep datasets inside the project (or allow it: `allow_outside = true`, `--allow-outside`)",
            resolved.display(),
            if symlink { " (through a symlink)" } else { "" },
            root.display()
        ));
    }
    let shown = full
        .strip_prefix(&root_abs)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| full.to_string_lossy().into_owned());
    if !full.is_file() {
        return Err(if full.exists() {
            format!("`{written}` ({shown}) is not a file")
        } else {
            format!(
                "dataset file `{written}` does not exist (looked for {shown}, relative to the project root)"
            )
        });
    }
    Ok((full, shown))
}

/// The project a manifest's datasets must stay inside: the nearest directory
/// at or above `start` holding `.git` (a repository, so a workspace's shared
/// `evals/` is allowed), else `start` itself.
pub fn project_root(start: &Path) -> PathBuf {
    let start = normalize(&absolute(start));
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&start)
        .to_path_buf()
}

/// `bytes` as UTF-8 text, else the manifest's problem at the line and
/// column of the first byte that is not.
pub(super) fn utf8<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, ManifestError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let line = 1 + good.iter().filter(|b| **b == b'\n').count();
        // Valid UTF-8 up to here: count characters, not bytes.
        let column = 1 + String::from_utf8_lossy(&good[line_start..]).chars().count();
        let byte = bytes[e.valid_up_to()];
        ManifestError::Invalid {
            path: shown.to_string(),
            problems: vec![
                Problem::new(
                    shown,
                    line,
                    format!("invalid UTF-8 (byte {byte:#04x}): a manifest is UTF-8 text"),
                )
                .column(column),
            ],
        }
    })
}

/// A YAML error of `shown` (a manifest, a suite: `what`) as its problem:
/// serde-saphyr's first line, without its own location prefix, at the line
/// and column it names.
pub(super) fn yaml_problem(e: &serde_saphyr::Error, shown: &str, what: &str) -> Problem {
    let line = e.location().map_or(1, |l| l.line() as usize);
    let full = e.to_string();
    let message = full
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid YAML")
        .trim();
    let message = message.strip_prefix("error: ").unwrap_or(message);
    let message = match message.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest,
        _ => message,
    };
    let mut p = Problem::new(shown, line.max(1), format!("invalid {what}: {message}"));
    if let Some(l) = e.location() {
        p = p.column(l.column() as usize);
    }
    p
}
