//! Where a report's file paths start: the workspace root, so that a CI
//! annotator (GitHub's, GitLab's, which read JUnit's `file=`) places a
//! failure on the file in the repository, not on a path relative to the
//! crate that ran it. The root is found without `cargo metadata`: the
//! nearest directory at or above the crate's whose `Cargo.toml` has a
//! `[workspace]` table, else the crate's own directory.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// The workspace root of the crate (or directory) at `dir`: the nearest
/// directory at or above it whose `Cargo.toml` declares `[workspace]`
/// (or a `[workspace.*]` table); else `dir` itself.
pub(crate) fn workspace_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| declares_workspace(&d.join("Cargo.toml")))
        .unwrap_or(dir)
        .to_path_buf()
}

/// Whether the manifest at `path` has a `[workspace]` table (a line that
/// opens it, comments and spaces aside). A file that cannot be read has none.
fn declares_workspace(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    text.lines().any(|line| {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(table) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            return false;
        };
        let table = table.trim();
        table == "workspace" || table.starts_with("workspace.")
    })
}

/// Sample sources' file paths, written relative to `base` (where a run's
/// relative dataset paths start), as paths relative to the workspace root
/// of `base`.
#[derive(Debug, Clone)]
pub(crate) struct FilePaths {
    base: PathBuf,
    root: PathBuf,
}

impl FilePaths {
    /// Paths of files relative to `base`.
    pub(crate) fn under(base: &Path) -> FilePaths {
        FilePaths {
            base: base.to_path_buf(),
            root: workspace_root(base),
        }
    }

    /// `file` (relative to the base, or absolute) relative to the workspace
    /// root, `/`-separated; as it is when it lies outside the root (or is
    /// not a plain path: an inline source such as `--prompts[1]`).
    pub(crate) fn file<'f>(&self, file: &'f str) -> Cow<'f, str> {
        let path = Path::new(file);
        if file.is_empty() || file.starts_with('<') || file.contains('[') {
            return Cow::Borrowed(file);
        }
        let full = normalized(&self.base.join(path));
        match full.strip_prefix(normalized(&self.root)) {
            Ok(rel) if !rel.as_os_str().is_empty() => {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                Cow::Owned(parts.join("/"))
            }
            _ => Cow::Borrowed(file),
        }
    }
}

/// `path` with `.` left out and each `..` taking off the part before it
/// (no file system access: a symlink is not followed).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("Cargo.toml"),
            "[package]\nname = \"top\"\n\n[workspace]\nmembers = [\"crates/app\"]\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("crates/app/evals")).unwrap();
        std::fs::write(
            root.join("crates/app/Cargo.toml"),
            "[package]\nname = \"app\"\n# [workspace] in a comment is not one\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_member_crate_s_paths_start_at_the_workspace_root() {
        let dir = tree();
        let app = dir.path().join("crates/app");
        assert_eq!(workspace_root(&app), dir.path());
        let paths = FilePaths::under(&app);
        assert_eq!(paths.file("evals/qa.jsonl"), "crates/app/evals/qa.jsonl");
        assert_eq!(
            paths.file("./evals/../evals/qa.jsonl"),
            "crates/app/evals/qa.jsonl"
        );
        let absolute = app.join("evals/qa.jsonl");
        assert_eq!(
            paths.file(absolute.to_str().unwrap()),
            "crates/app/evals/qa.jsonl"
        );
        // Outside the root, or not a file: as given.
        assert_eq!(
            paths.file("../../../elsewhere.jsonl"),
            "../../../elsewhere.jsonl"
        );
        assert_eq!(paths.file("--prompts[1]"), "--prompts[1]");
        assert_eq!(paths.file("<inline>"), "<inline>");
    }

    #[test]
    fn without_a_workspace_the_crate_is_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"solo\"\n",
        )
        .unwrap();
        assert_eq!(workspace_root(dir.path()), dir.path());
        let paths = FilePaths::under(dir.path());
        assert_eq!(paths.file("evals/qa.jsonl"), "evals/qa.jsonl");
        // A `[workspace.package]` table declares a workspace too.
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[workspace.package]\nversion = \"1.0.0\"\n",
        )
        .unwrap();
        assert!(declares_workspace(&dir.path().join("Cargo.toml")));
    }
}
