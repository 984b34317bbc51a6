//! One verdict contract for every front end: the same datasets run through
//! the attribute, the harness, the `evals` command (and, for manifests, both
//! test binaries under nextest's protocol joined by `evals report merge`),
//! against the demo agent on loopback, must give the same verdicts.
//!
//! * [`manifests`]: plain datasets and manifests, `ciGate` enforced or
//!   reported, repeated runs, nextest shards, `report diff` and `merge`;
//! * [`runevals`]: runevals files that name their own evaluators (seed 003),
//!   per turn, with and without metrics given by the front end;
//! * [`kills`]: a test binary killed during its first run never leaves a
//!   results file that claims to be complete;
//! * [`suites`]: a letta-evals suite (seed 001) and the same choice of
//!   samples (`max_samples`, `sample_tags`) on every front end;
//! * [`unproven`]: the attribute and the harness say once per run how many
//!   samples passed or failed with an inconclusive verdict.
//!
//! Each test builds its own scratch crate (the package named like its
//! directory: cargo names test binaries by package, not by path) whose
//! `attr` test binary uses the attribute and whose `harness` binary the
//! harness.

mod kills;
mod manifests;
mod runevals;
mod runevals_defaults; // issue38:runevals
mod suite_models; // issue38:models
mod suites;
mod unproven;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use eval_runtime::results::{Results, Verdict};
use eval_runtime::verdict::Decision;

/// The demo agent and the scripted judge on loopback, for one test.
pub(super) struct Servers {
    pub agent: eval_examples::demo::DemoServer,
    pub judge: eval_examples::demo::DemoServer,
}

impl Servers {
    pub fn start() -> Servers {
        Servers {
            agent: eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default())
                .expect("start the demo agent"),
            judge: eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default())
                .expect("start the scripted judge"),
        }
    }

    /// `EVAL_JUDGE_URL` for the scripted judge.
    pub fn judge_url(&self) -> String {
        format!("{}/v1", self.judge.url())
    }
}

/// A scratch crate `<name>` in `CARGO_TARGET_TMPDIR/<name>` with `files` (path,
/// contents): tests `attr` (libtest) and `harness` (`harness = false`) and
/// a `.git`, so manifests find their project root in it.
pub(super) fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    for sub in ["data", "tests", "src", ".git"] {
        fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let runtime = repo().join("eval-runtime");
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [workspace]\n\n[dev-dependencies]\neval-runtime = {{ path = {:?} }}\n\
             tokio = {{ version = \"1\", features = [\"time\"] }}\n\n\
             [[test]]\nname = \"harness\"\nharness = false\n",
            runtime.to_string_lossy()
        ),
    )
    .unwrap();
    fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    fs::write(dir.join("src/lib.rs"), "").unwrap();
    for (path, contents) in files {
        fs::write(dir.join(path), contents).unwrap();
    }
    dir
}

pub(super) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub(super) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A command with a clean environment for evals: the agent, a results
/// directory, what cargo and nextest set for a test process, nothing of an
/// outer nextest or eval run.
pub(super) fn command(
    program: impl AsRef<std::ffi::OsStr>,
    dir: &Path,
    url: &str,
    results: &Path,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env("CARGO_PKG_NAME", dir.file_name().unwrap_or_default())
        .env("CARGO_MANIFEST_DIR", dir)
        .env("EVAL_AGENT_URL", url)
        .env("EVAL_RESULTS_DIR", results)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if (k.starts_with("EVAL_") && k != "EVAL_AGENT_URL" && k != "EVAL_RESULTS_DIR")
            || k.starts_with("NEXTEST")
        {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// Shared with the root package's fresh-crate test: the dependencies are
/// compiled once for both.
pub(super) fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fresh-crate-target")
}

pub(super) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Builds the two test binaries; their paths.
pub(super) fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let out = Command::new(cargo())
        .current_dir(dir)
        .args(["test", "--no-run", "--message-format=json"])
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let exe = |name: &str| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["target"]["name"] == name && v["executable"].is_string())
            .map(|v| PathBuf::from(v["executable"].as_str().unwrap()))
            .unwrap_or_else(|| panic!("no {name} test binary"))
    };
    (exe("attr"), exe("harness"))
}

pub(super) fn evals(dir: &Path, url: &str, results: &Path, args: &[&str]) -> Output {
    command(env!("CARGO_BIN_EXE_evals"), dir, url, results)
        .args(args)
        .output()
        .unwrap()
}

/// The files under `dir` (at any depth) whose names end in `.ext`.
pub(super) fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path, ext));
        } else if path.extension().is_some_and(|x| x == ext) {
            found.push(path);
        }
    }
    found
}

/// (dataset, id) → verdict, what an inconclusive one counted as, runs.
pub(super) fn verdicts(r: &Results) -> BTreeMap<(String, String), (Verdict, Option<Verdict>, u32)> {
    r.samples
        .iter()
        .map(|s| {
            (
                (s.dataset.clone(), s.id.clone()),
                (s.verdict, s.counted_as, s.runs),
            )
        })
        .collect()
}

/// A gate's (judged, passed, decision, enforced).
pub(super) type GateVerdict = (bool, bool, Option<Decision>, bool);

/// (dataset, metric) → [`GateVerdict`] of every gate.
pub(super) fn gates(r: &Results) -> BTreeMap<(String, String), GateVerdict> {
    r.datasets
        .iter()
        .flat_map(|d| {
            d.metrics.iter().filter_map(move |m| {
                m.gate.as_ref().map(|g| {
                    (
                        (d.name.clone(), m.name.clone()),
                        (g.judged, g.passed, g.decision, g.gate.enforced),
                    )
                })
            })
        })
        .collect()
}

pub(super) fn read(path: &Path) -> Results {
    Results::read(path).unwrap_or_else(|e| panic!("{e}"))
}

/// Every test of `exe`, each run alone in its own process as nextest runs
/// them (`--exact NAME --nocapture`, `NEXTEST_RUN_ID`), in two shards by
/// position, each shard with its own results directory; returns the shards'
/// directories and the tests that failed.
pub(super) fn nextest_protocol(
    dir: &Path,
    exe: &Path,
    url: &str,
    shards: [&Path; 2],
) -> Vec<String> {
    let list = command(exe, dir, url, shards[0])
        .args(["--list", "--format", "terse"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", text(&list));
    let names: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 7, "{names:?}");
    let mut failed = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let shard = shards[i % 2];
        let out = command(exe, dir, url, shard)
            .args(["--exact", name, "--nocapture"])
            .env("NEXTEST", "1")
            .env("NEXTEST_RUN_ID", format!("shard-{}", i % 2))
            .output()
            .unwrap();
        if !out.status.success() {
            failed.push(name.clone());
        }
    }
    failed.sort();
    failed
}
