//! Where results go, keyed so that nothing clobbers anything else: two
//! crates with a `tests/evals.rs` in one target directory, two test binaries
//! of one crate, the processes of one nextest run.
//!
//! * directory: `$EVAL_RESULTS_DIR`, else `evals/` in the cargo target
//!   directory holding the running binary, else the temp directory;
//! * a run's file: `<dir>/<package>/<binary>.json` (`target/evals/my-crate/evals.json`);
//!   the package is the one the attribute was compiled in, else
//!   `CARGO_PKG_NAME` (cargo and nextest set it when they run a test); a
//!   binary run by hand with neither keeps cargo's hash in its name instead
//!   (`<dir>/evals_harness-1a2b….json`);
//! * under nextest, each test process's part:
//!   `<dir>/<package>/<binary>.parts/<run id>/<test>.json` — the first
//!   process of a new run removes the parts of earlier runs.

use std::path::{Path, PathBuf};

use crate::config::Config;

/// Where calibrations of the project the settings are read in are kept
/// and looked for: [`project_calibration_dir`] of `CARGO_MANIFEST_DIR`, else
/// of the working directory.
pub fn calibration_dir(config: &Config) -> PathBuf {
    project_calibration_dir(config, &config.base_dir())
}

/// Where calibrations of the project holding `dir` are kept and looked for:
/// `calibration/<project>-<12 hex digits>/` in the results directory
/// ([`results_dir`]), the project named by its root directory's name and the
/// SHA-256 of its path (the nearest directory holding `.git`, else a Cargo
/// `[workspace]`, else a `Cargo.toml`), so that two projects sharing a
/// results directory (an installed `evals`, whose default is the user's
/// `~/.cache/evals`; one `EVAL_RESULTS_DIR` or `CARGO_TARGET_DIR` for
/// several checkouts) never see each other's calibrations.
pub fn project_calibration_dir(config: &Config, dir: &Path) -> PathBuf {
    results_dir(config)
        .join("calibration")
        .join(project_key(&project_root(dir)))
}

/// The project holding `dir`: the nearest directory at or above it holding
/// `.git`; outside a repository, the nearest holding a `Cargo.toml` that
/// declares a `[workspace]`, else the nearest holding a `Cargo.toml`, else
/// `dir` itself (made absolute, symbolic links resolved where it exists).
pub(crate) fn project_root(dir: &Path) -> PathBuf {
    let start = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf());
    let manifest = |d: &Path| d.join("Cargo.toml");
    let workspace = |d: &Path| {
        eval_datasets::files::read_text(&manifest(d), 1 << 20)
            .is_ok_and(|text| text.lines().any(|l| l.trim() == "[workspace]"))
    };
    let found = start
        .ancestors()
        .find(|d| d.join(".git").exists())
        .or_else(|| start.ancestors().find(|d| workspace(d)))
        .or_else(|| start.ancestors().find(|d| manifest(d).is_file()))
        .unwrap_or(&start);
    found.to_path_buf()
}

/// `<name>-<12 hex digits of the SHA-256 of its path>` for a project root.
fn project_key(root: &Path) -> String {
    use sha2::Digest as _;
    let digest = crate::model::hex(&sha2::Sha256::digest(root.to_string_lossy().as_bytes()));
    let name: String = file_safe(
        &root
            .file_name()
            .map_or("project".into(), |n| n.to_string_lossy()),
    )
    .chars()
    .take(40)
    .collect();
    format!("{name}-{}", &digest[..12])
}

/// The directory results go to: `$EVAL_RESULTS_DIR`, else `evals/` in the
/// cargo target directory holding the running binary, else `evals/` in the
/// user's own cache directory (`~/.cache/evals`), never a directory shared
/// with other users (the judge cache is kept under it).
pub fn results_dir(config: &Config) -> PathBuf {
    if let Some(dir) = &config.results_dir {
        return dir.clone();
    }
    if let Ok(exe) = std::env::current_exe() {
        // cargo marks its target directory with CACHEDIR.TAG.
        for dir in exe.ancestors().skip(1) {
            if dir.join("CACHEDIR.TAG").is_file() {
                return dir.join("evals");
            }
        }
        // An unpacked nextest archive has no tag: `<target>/<profile>/deps/<exe>`.
        let mut up = exe.ancestors().skip(1);
        if let (Some(deps), Some(_profile), Some(target)) = (up.next(), up.next(), up.next())
            && deps.file_name().is_some_and(|n| n == "deps")
        {
            return target.join("evals");
        }
    }
    match &config.user_cache_dir {
        Some(dir) => dir.join("evals"),
        // No home at all: the working directory, which is the user's own.
        None => PathBuf::from("evals-results"),
    }
}

/// Which results a process writes: its package and test binary.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResultsKey {
    /// The package, when known.
    pub package: Option<String>,
    /// The test binary's name without cargo's `-<hash>`.
    pub binary: String,
    /// The binary's file stem as it is (with the hash).
    pub stem: String,
}

impl ResultsKey {
    /// The running binary's key; `compiled_package` is the package the
    /// attribute was compiled in (the harness does not know it).
    pub fn current(config: &Config, compiled_package: Option<&str>) -> ResultsKey {
        let stem = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "evals".into());
        ResultsKey {
            // The package the attribute was compiled in is certain; the
            // environment's may be inherited from another cargo process.
            package: compiled_package
                .map(str::to_string)
                .or_else(|| config.package.clone()),
            binary: binary_name(&stem),
            stem,
        }
    }

    /// A key for results not written by a test binary (the `evals` command).
    pub fn named(binary: &str) -> ResultsKey {
        ResultsKey {
            package: None,
            binary: binary.to_string(),
            stem: binary.to_string(),
        }
    }

    /// The run's results file under `dir`.
    pub fn file(&self, dir: &Path) -> PathBuf {
        match &self.package {
            Some(p) => dir.join(file_safe(p)).join(format!("{}.json", self.binary)),
            None => dir.join(format!("{}.json", self.stem)),
        }
    }

    /// Where one test process's part goes under `cargo nextest run` (run
    /// `run_id`). The first process of a new run removes the parts of
    /// earlier runs, so the directory holds one run.
    pub fn part(&self, dir: &Path, run_id: Option<&str>, test_name: &str) -> PathBuf {
        let file = self.file(dir);
        let parts = file.with_extension("parts");
        let run = parts.join(file_safe(run_id.unwrap_or("run")));
        if !run.exists()
            && let Ok(entries) = std::fs::read_dir(&parts)
        {
            for e in entries.flatten() {
                if e.path() != run && e.path().is_dir() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        run.join(format!("{}.json", file_safe(test_name)))
    }
}

/// A binary's name without cargo's `-<16 hex digits>` suffix.
pub fn binary_name(stem: &str) -> String {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_string()
        }
        _ => stem.to_string(),
    }
}

/// A file-name-safe form of a test or package name.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '.'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_crates_and_two_binaries_never_share_a_file() {
        let dir = Path::new("/t/evals");
        let key = |package: Option<&str>, stem: &str| ResultsKey {
            package: package.map(str::to_string),
            binary: binary_name(stem),
            stem: stem.to_string(),
        };
        let a = key(Some("crate-a"), "evals-0123456789abcdef");
        let b = key(Some("crate-b"), "evals-fedcba9876543210");
        let c = key(Some("crate-a"), "evals_harness-0123456789abcdef");
        assert_eq!(a.file(dir), Path::new("/t/evals/crate-a/evals.json"));
        assert_eq!(b.file(dir), Path::new("/t/evals/crate-b/evals.json"));
        assert_eq!(
            c.file(dir),
            Path::new("/t/evals/crate-a/evals_harness.json")
        );
        let unknown = key(None, "evals-0123456789abcdef");
        assert_eq!(
            unknown.file(dir),
            Path::new("/t/evals/evals-0123456789abcdef.json")
        );
        assert_eq!(binary_name("evals-0123456789abcdef"), "evals");
        assert_eq!(binary_name("my-evals"), "my-evals");
    }

    #[test]
    fn each_project_has_its_own_calibrations() {
        let dir = std::env::temp_dir().join(format!("eval-projects-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A repository with a crate inside; a workspace without git; a
        // lone directory.
        for d in ["repo/.git", "repo/crates/a", "ws/member/src", "lone/sub"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("repo/crates/a/Cargo.toml"), "[package]\n").unwrap();
        std::fs::write(
            dir.join("ws/Cargo.toml"),
            "[workspace]\nmembers = [\"member\"]\n",
        )
        .unwrap();
        std::fs::write(dir.join("ws/member/Cargo.toml"), "[package]\n").unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(project_root(&dir.join("repo/crates/a")), dir.join("repo"));
        assert_eq!(project_root(&dir.join("ws/member/src")), dir.join("ws"));
        assert_eq!(project_root(&dir.join("ws/member")), dir.join("ws"));
        // No marker: the directory itself (the temp dir holds no project).
        let lone = project_root(&dir.join("lone/sub"));
        assert!(lone.starts_with(&dir), "{}", lone.display());
        let mut config = Config::empty();
        config.results_dir = Some("/r".into());
        let of = |d: &str| project_calibration_dir(&config, &dir.join(d));
        assert_eq!(of("repo"), of("repo/crates/a"));
        assert_ne!(of("repo"), of("ws/member"));
        let key = of("repo");
        let key = key
            .strip_prefix("/r/calibration")
            .unwrap()
            .to_string_lossy();
        assert!(
            key.starts_with("repo-") && key.len() == "repo-".len() + 12,
            "{key}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn parts_of_a_new_nextest_run_replace_the_old_ones() {
        let dir = std::env::temp_dir().join(format!("eval-location-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let key = ResultsKey {
            package: Some("p".into()),
            binary: "evals".into(),
            stem: "evals".into(),
        };
        let old = key.part(&dir, Some("r1"), "rag::a b");
        assert_eq!(old, dir.join("p/evals.parts/r1/rag..a.b.json"));
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::write(&old, "{}").unwrap();
        let new = key.part(&dir, Some("r2"), "rag::a");
        assert!(!old.exists(), "the earlier run's parts are gone");
        assert_eq!(new, dir.join("p/evals.parts/r2/rag..a.json"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
