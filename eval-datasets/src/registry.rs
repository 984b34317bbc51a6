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
//! clippy) and hosts that are no compiler (rust-analyzer's proc-macro
//! server) write nothing: their code is never run ([`records_here`]). In
//! one process an attribute site expanded again keeps its key and file,
//! so files and keys are bounded by the sites ([`MAX_SITES`]).

use std::collections::BTreeMap;
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

/// Most attribute sites one compiler process records; past them nothing
/// more is recorded (the binary then says its list is incomplete).
pub const MAX_SITES: usize = 10_000;

/// Records `function`'s dataset at `path`, whose attribute is at `site`
/// (`file:line:column`), in this compilation's session for the crate being
/// compiled (read from cargo's environment) and returns the session
/// directory and the entry's key, which the generated code carries.
///
/// `None` when nothing is recorded: a host that does not compile code
/// ([`records_here`]: a check-only build, rust-analyzer's proc-macro
/// server), more than [`MAX_SITES`] sites, or a directory that cannot be
/// written (the binary then says it cannot tell which datasets it has, and
/// its results are never complete).
///
/// The same site expanded again in one process gets the same key and
/// rewrites the same file: what a process holds and writes is bounded by
/// the attribute sites it sees.
pub fn record(function: &str, path: &str, site: &str) -> Option<(PathBuf, String)> {
    if !records_here(std::env::args()) {
        return None;
    }
    record_in(session_dir()?, function, path, site)
}

/// [`record`] into the session directory `dir`, whatever the host.
fn record_in(dir: PathBuf, function: &str, path: &str, site: &str) -> Option<(PathBuf, String)> {
    let key = KEYS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .key(&dir, function, path, site)?;
    write_entry(&dir, &key, function, path)?;
    Some((dir, key))
}

/// The keys given in this process: one per (session, attribute site).
static KEYS: Mutex<Keys> = Mutex::new(Keys::new());

/// The key of every (session, site) recorded, at most [`MAX_SITES`], and
/// how many sites of each session share a `function path`.
struct Keys {
    by_site: BTreeMap<(PathBuf, String), String>,
    sharing: BTreeMap<(PathBuf, String), usize>,
}

impl Keys {
    const fn new() -> Keys {
        Keys {
            by_site: BTreeMap::new(),
            sharing: BTreeMap::new(),
        }
    }

    /// Sites held.
    fn len(&self) -> usize {
        self.by_site.len()
    }

    /// `function path`, then `#2`… for another site with the same function
    /// and path; the same site again gets its key back.
    fn key(&mut self, dir: &Path, function: &str, path: &str, site: &str) -> Option<String> {
        let at = (dir.to_path_buf(), site.to_string());
        if let Some(key) = self.by_site.get(&at) {
            return Some(key.clone());
        }
        if self.len() >= MAX_SITES {
            return None;
        }
        let base = format!("{function} {path}");
        let n = self
            .sharing
            .entry((dir.to_path_buf(), base.clone()))
            .or_insert(0);
        *n += 1;
        let key = if *n == 1 {
            base
        } else {
            format!("{base} #{n}")
        };
        self.by_site.insert(at, key.clone());
        Some(key)
    }
}

/// Writes the entry's file in `dir`, named by its key's hash.
fn write_entry(dir: &Path, key: &str, function: &str, path: &str) -> Option<()> {
    let entry = Entry {
        key: key.to_string(),
        function: function.to_string(),
        path: path.to_string(),
    };
    let file = dir.join(format!(
        "{:016x}.json",
        crate::hash::fnv1a64(&[key.as_bytes()])
    ));
    let bytes = serde_json::to_vec(&entry).ok()?;
    crate::files::write_atomically(&file, &bytes).ok()
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

/// Whether the process expanding the macro, whose command line is `args`,
/// is a compiler building code that will run: it names a crate
/// (`--crate-name` or `--crate-type`, as cargo and rustdoc's doctest
/// builds pass to rustc) and, when it says what it emits, emits `link` or
/// `obj`. A check-only build (`--emit=dep-info,metadata`: `cargo check`,
/// clippy) and a host that is no compiler — rust-analyzer's long-lived
/// proc-macro server, whose command line names no crate and which may
/// expand an attribute at every keystroke — record nothing.
/// `std::env::args()` is the usual `args`.
pub fn records_here(args: impl Iterator<Item = String>) -> bool {
    // `@file` arguments (cargo's and rustdoc's argument files) hold one
    // argument a line.
    let mut expanded = Vec::new();
    for arg in args {
        match arg.strip_prefix('@') {
            Some(file) => match crate::files::read_checked(Path::new(file), 1 << 20) {
                Ok(bytes) => {
                    expanded.extend(String::from_utf8_lossy(&bytes).lines().map(str::to_string))
                }
                Err(_) => expanded.push(arg),
            },
            None => expanded.push(arg),
        }
    }
    let mut names_a_crate = false;
    let mut emits_code = true;
    let mut args = expanded.into_iter();
    while let Some(arg) = args.next() {
        if ["--crate-name", "--crate-type"]
            .iter()
            .any(|flag| arg == *flag || arg.starts_with(&format!("{flag}=")))
        {
            names_a_crate = true;
            continue;
        }
        let emit = match arg.strip_prefix("--emit=") {
            Some(v) => v.to_string(),
            None if arg == "--emit" => args.next().unwrap_or_default(),
            None => continue,
        };
        emits_code = emit
            .split(',')
            .any(|e| e.starts_with("link") || e.starts_with("obj"));
    }
    names_a_crate && emits_code
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

    fn args(line: &str) -> impl Iterator<Item = String> {
        line.split(' ')
            .map(str::to_string)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn only_a_compiler_building_code_records() {
        // cargo build / cargo test (rustc, as cargo runs it).
        assert!(records_here(args(
            "rustc --crate-name evals --edition=2024 tests/evals.rs --crate-type bin --emit=dep-info,link -C debuginfo=1 --test"
        )));
        // cargo check, clippy: metadata only.
        assert!(!records_here(args(
            "rustc --crate-name evals tests/evals.rs --emit=dep-info,metadata --test"
        )));
        assert!(!records_here(args(
            "clippy-driver rustc --crate-name evals --emit dep-info,metadata"
        )));
        // rustdoc's doctest build names a crate type and emits the default (link).
        assert!(records_here(args(
            "rustc --crate-type bin -o /tmp/rust_out /tmp/doctest.rs"
        )));
        // rust-analyzer's proc-macro server: no crate on its command line.
        assert!(!records_here(args(
            "/usr/lib/rust-analyzer/rust-analyzer-proc-macro-srv"
        )));
        assert!(!records_here(args("rust-analyzer proc-macro")));
        // This test process: no compiler.
        assert!(!records_here(std::env::args()));
        // An argument file holds the arguments, one a line.
        let dir = std::env::temp_dir().join(format!("eval-registry-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("args");
        std::fs::write(&file, "--crate-name\nevals\n--emit=dep-info,metadata\n").unwrap();
        assert!(!records_here(args(&format!("rustc @{}", file.display()))));
        std::fs::write(&file, "--crate-name\nevals\n--emit=dep-info,link\n").unwrap();
        assert!(records_here(args(&format!("rustc @{}", file.display()))));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The keys this process holds for session `dir`.
    fn held(dir: &Path) -> usize {
        let keys = KEYS.lock().unwrap_or_else(|p| p.into_inner());
        keys.by_site.keys().filter(|(d, _)| d == dir).count()
    }

    fn files(dir: &Path) -> usize {
        std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
    }

    /// An IDE expands one attribute again and again in one long-lived
    /// process: whatever the host, files written and keys held stay one
    /// per attribute site. (Before, each expansion took a new key
    /// `rag evals/rag.jsonl #n` and wrote a new file: 1,000 of each here.)
    #[test]
    fn bounded_under_repeated_expansion() {
        let dir = std::env::temp_dir().join(format!("eval-registry-again-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The entry point, as this process (no compiler) runs it: nothing.
        for _ in 0..1_000 {
            assert_eq!(record("rag", "evals/rag.jsonl", "tests/evals.rs:3:1"), None);
        }
        // Recording as a compiler would, 1,000 times over two sites.
        let mut first = None;
        for n in 0..1_000 {
            let site = if n % 2 == 0 {
                "tests/evals.rs:3:1"
            } else {
                "tests/evals.rs:9:1"
            };
            let (at, key) = record_in(dir.clone(), "rag", "evals/rag.jsonl", site).unwrap();
            assert_eq!(at, dir);
            if n == 0 {
                first = Some(key.clone());
            }
            if n % 2 == 0 {
                assert_eq!(Some(&key), first.as_ref(), "the same site keeps its key");
            } else {
                assert_eq!(key, "rag evals/rag.jsonl #2");
            }
        }
        assert_eq!(files(&dir), 2, "one file per site");
        assert_eq!(held(&dir), 2, "one key per site");
        let entries = read(&dir).unwrap();
        assert_eq!(entries.len(), 2);
        assert!(KEYS.lock().unwrap_or_else(|p| p.into_inner()).len() <= MAX_SITES);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sites_past_the_bound_are_not_recorded() {
        let mut keys = Keys::new();
        let dir = Path::new("/nonexistent-session");
        for n in 0..MAX_SITES {
            assert!(
                keys.key(dir, "f", "d.jsonl", &format!("a.rs:{n}:1"))
                    .is_some()
            );
        }
        assert_eq!(
            keys.key(dir, "f", "d.jsonl", "a.rs:0:1").as_deref(),
            Some("f d.jsonl")
        );
        assert_eq!(keys.key(dir, "f", "d.jsonl", "b.rs:1:1"), None);
        assert_eq!(keys.len(), MAX_SITES);
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
