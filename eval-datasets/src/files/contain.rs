//! The containment rule: a path given in a file or an attribute (a
//! manifest's `$file:`, a `loaderRef`, `#[eval_dataset("...")]`) must lead to
//! a file inside the directory it belongs to — no `..` out of it, no
//! absolute path elsewhere, no symlink (to a file or through a directory)
//! out of it. Each front end offers an explicit opt-out.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused by [`contained`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContainmentError {
    /// The path leads out of the root: by `..` or an absolute path, or
    /// (`symlink`) through a symlink to somewhere else.
    #[error("resolves to {}{}, outside {}", .resolved.display(), if *.symlink { " (through a symlink)" } else { "" }, .root.display())]
    Outside {
        /// Where the path leads (the real path, when a symlink led there).
        resolved: PathBuf,
        /// The directory it had to stay in.
        root: PathBuf,
        /// Whether a symlink led out (the path itself stays inside).
        symlink: bool,
    },
    /// Nothing is there (or a symlink leads nowhere), so where it leads
    /// cannot be checked.
    #[error("{} does not exist ({source})", .resolved.display())]
    Missing {
        /// The path, made absolute.
        resolved: PathBuf,
        /// Why it could not be resolved.
        #[source]
        source: std::io::Error,
    },
}

/// `path` (absolute, or relative to the working directory) checked to lead
/// inside `root`, first as written (`.` and `..` resolved without reading
/// the file system, so a path out is refused whether or not it exists),
/// then as it really is (every symlink followed). Returns the real path:
/// open that one, not `path`.
pub fn contained(root: &Path, path: &Path) -> Result<PathBuf, ContainmentError> {
    let root_abs = normalize(&absolute(root));
    let full = normalize(&absolute(path));
    if !full.starts_with(&root_abs) {
        return Err(ContainmentError::Outside {
            resolved: full,
            root: root_abs,
            symlink: false,
        });
    }
    let missing = |source| ContainmentError::Missing {
        resolved: full.clone(),
        source,
    };
    let real = full.canonicalize().map_err(missing)?;
    let real_root = root_abs
        .canonicalize()
        .map_err(|source| ContainmentError::Missing {
            resolved: root_abs.clone(),
            source,
        })?;
    if !real.starts_with(&real_root) {
        return Err(ContainmentError::Outside {
            resolved: real,
            root: root_abs,
            symlink: true,
        });
    }
    Ok(real)
}

/// `path` made absolute against the working directory.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    }
}

/// Removes `.` and resolves `..` without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
