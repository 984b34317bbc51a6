//! The datasets of a test binary, written down as it is compiled, so a test
//! process knows from its start every dataset it should evaluate — and a
//! results file written by a process killed half-way through its first run
//! says what it lacks instead of looking complete.
//!
//! Each `#[eval_dataset]` expansion adds one entry (a small JSON file) to
//! the compilation's *session* directory, `<root>/<crate key>/<session>/`:
//! the session is one per compiler process, so a crate compiled again gets
//! a new directory holding exactly its current datasets (a dataset removed
//! from the source is not listed), and the generated code names its own
//! session and entry. The root is the integration test's
//! `CARGO_TARGET_TMPDIR` (under `target/`), else the system's temporary
//! directory. Sessions older than a week are removed as new ones are made
//! (the newest few are always kept). Check-only builds (`cargo check`,
//! clippy, an IDE) write nothing: their code is never run.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One dataset of a test binary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// Unique in the binary: the function and the dataset path
    /// (`rag evals/rag.jsonl`, then `#2`… for a repeat).
    pub key: String,
    /// The function's name (the dataset's name is its module path, which
    /// only the compiled code knows).
    pub function: String,
    /// The dataset path as written in the attribute.
    pub path: String,
}

impl Entry {
    /// How a dataset that did not run is named in a results file:
    /// `rag (evals/rag.jsonl)`.
    pub fn shown(&self) -> String {
        format!("{} ({})", self.function, self.path)
    }
}

/// Why a binary's registry could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The session directory or an entry could not be read.
    #[error("{dir}: cannot read this test binary's list of datasets ({source}); rebuild the tests")]
    Read {
        /// The session directory.
        dir: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An entry is not what the macro writes.
    #[error("{file}: not a dataset entry ({detail}); rebuild the tests")]
    Malformed {
        /// The entry's file.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// More entries than any binary has.
    #[error("{dir}: more than {MAX_ENTRIES} dataset entries; rebuild the tests")]
    TooMany {
        /// The session directory.
        dir: String,
    },
}

/// Most entries read from one session (a binary with more datasets is not
/// one this registry describes).
pub const MAX_ENTRIES: usize = 100_000;
/// Sessions of one crate kept whatever their age.
const KEEP_NEWEST: usize = 16;
/// Sessions older than this (and not among the newest) are removed.
const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// Records `function`'s dataset at `path` in this compilation's session
/// for the crate being compiled (read from cargo's environment) and
/// returns the session directory and the entry's key, which the generated
/// code carries. `None` when nothing is recorded: a check-only build, or a
/// directory that cannot be written (the binary then says it cannot tell
/// which datasets it has, and its results are never complete).
pub fn record(function: &str, path: &str) -> Option<(PathBuf, String)> {
    if check_only() {
        return None;
    }
    let dir = session_dir()?;
    static KEYS: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());
    let mut keys = KEYS.lock().unwrap_or_else(|p| p.into_inner());
    let base = format!("{function} {path}");
    let mut key = base.clone();
    let mut n = 1;
    while keys.iter().any(|(d, k)| *d == dir && *k == key) {
        n += 1;
        key = format!("{base} #{n}");
    }
    keys.push((dir.clone(), key.clone()));
    drop(keys);
    let entry = Entry {
        key: key.clone(),
        function: function.to_string(),
        path: path.to_string(),
    };
    let file = dir.join(format!(
        "{:016x}.json",
        crate::hash::fnv1a64(&[key.as_bytes()])
    ));
    let bytes = serde_json::to_vec(&entry).ok()?;
    crate::files::write_atomically(&file, &bytes).ok()?;
    Some((dir, key))
}

/// Every entry of the session directory `dir` (written by [`record`]).
pub fn read(dir: &Path) -> Result<Vec<Entry>, RegistryError> {
    let shown = || dir.display().to_string();
    let read_err = |source| RegistryError::Read {
        dir: shown(),
        source,
    };
    let mut entries = Vec::new();
    for item in std::fs::read_dir(dir).map_err(read_err)? {
        let item = item.map_err(read_err)?;
        let name = item.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        if entries.len() == MAX_ENTRIES {
            return Err(RegistryError::TooMany { dir: shown() });
        }
        let file = item.path();
        let bytes =
            crate::files::read_checked(&file, 64 << 10).map_err(|e| RegistryError::Malformed {
                file: file.display().to_string(),
                detail: e.to_string(),
            })?;
        let entry: Entry =
            serde_json::from_slice(&bytes).map_err(|e| RegistryError::Malformed {
                file: file.display().to_string(),
                detail: e.to_string(),
            })?;
        entries.push(entry);
    }
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(entries)
}

/// Whether this compiler process only checks (emits metadata, no code).
fn check_only() -> bool {
    let mut args = std::env::args();
    while let Some(arg) = args.next() {
        let emit = match arg.strip_prefix("--emit=") {
            Some(v) => v.to_string(),
            None if arg == "--emit" => args.next().unwrap_or_default(),
            None => continue,
        };
        if !emit
            .split(',')
            .any(|e| e.starts_with("link") || e.starts_with("obj"))
        {
            return true;
        }
    }
    false
}

/// This compiler process's session directory for the crate it compiles,
/// created (and old sessions swept) on first use.
fn session_dir() -> Option<PathBuf> {
    static SESSION: OnceLock<Option<PathBuf>> = OnceLock::new();
    SESSION
        .get_or_init(|| {
            let root = std::env::var_os("CARGO_TARGET_TMPDIR")
                .map(PathBuf::from)
                .unwrap_or_else(std::env::temp_dir)
                .join("eval-registry");
            let crate_dir = root.join(crate_key());
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let session = format!("{:020}-{}", now.as_nanos(), std::process::id());
            let dir = crate_dir.join(session);
            std::fs::create_dir_all(&dir).ok()?;
            sweep(&crate_dir, now);
            Some(dir)
        })
        .clone()
}

/// `<crate name>-<hash of its package directory and name>`: one folder per
/// compiled crate (a package's test `evals` and another package's are two).
fn crate_key() -> String {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let name = var("CARGO_CRATE_NAME");
    let id = format!(
        "{}\0{name}\0{}",
        var("CARGO_MANIFEST_DIR"),
        var("CARGO_PKG_NAME")
    );
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!("{safe}-{:016x}", crate::hash::fnv1a64(&[id.as_bytes()]))
}

/// Removes the crate's sessions older than [`MAX_AGE`], keeping the
/// [`KEEP_NEWEST`] newest (session names start with their time).
fn sweep(crate_dir: &Path, now: Duration) {
    let Ok(items) = std::fs::read_dir(crate_dir) else {
        return;
    };
    let mut sessions: Vec<(u128, PathBuf)> = items
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let nanos = name.to_str()?.split('-').next()?.parse::<u128>().ok()?;
            Some((nanos, e.path()))
        })
        .collect();
    sessions.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (nanos, path) in sessions.into_iter().skip(KEEP_NEWEST) {
        if now.as_nanos().saturating_sub(nanos) > MAX_AGE.as_nanos() {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_and_refusals_say_why() {
        let dir = std::env::temp_dir().join(format!("eval-registry-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let one = Entry {
            key: "rag evals/rag.jsonl".into(),
            function: "rag".into(),
            path: "evals/rag.jsonl".into(),
        };
        std::fs::write(dir.join("a.json"), serde_json::to_vec(&one).unwrap()).unwrap();
        std::fs::write(dir.join(".a.json.tmp.1.1"), b"half").unwrap();
        assert_eq!(read(&dir).unwrap(), vec![one.clone()]);
        assert_eq!(one.shown(), "rag (evals/rag.jsonl)");
        std::fs::write(dir.join("b.json"), b"{}").unwrap();
        let err = read(&dir).unwrap_err().to_string();
        assert!(err.contains("b.json: not a dataset entry"), "{err}");
        let gone = read(&dir.join("gone")).unwrap_err().to_string();
        assert!(gone.contains("rebuild the tests"), "{gone}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn old_sessions_go_and_the_newest_stay() {
        let dir = std::env::temp_dir().join(format!("eval-registry-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let now = Duration::from_secs(100 * 24 * 3600);
        let old = now - Duration::from_secs(30 * 24 * 3600);
        for n in 0..20u128 {
            std::fs::create_dir_all(dir.join(format!("{:020}-1", old.as_nanos() + n))).unwrap();
        }
        std::fs::create_dir_all(dir.join(format!("{:020}-1", now.as_nanos()))).unwrap();
        sweep(&dir, now);
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(
            left, KEEP_NEWEST,
            "the newest are kept, the other old ones removed"
        );
        assert!(dir.join(format!("{:020}-1", now.as_nanos())).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
