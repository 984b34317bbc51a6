//! What changed between two runs: per sample (or retrieval query) and per
//! metric, what got better or worse, and which samples are new or gone.
//!
//! Samples are matched by dataset and id. A metric is worse when it moved
//! against its direction (down for `>=` metrics, up for `<=` ones such as
//! `hallucination`) by more than `epsilon`, or could not be scored any more.
//!
//! ```no_run
//! use eval_runtime::{diff, results::Results};
//! let old = Results::read("baseline.json".as_ref()).unwrap();
//! let new = Results::read("target/evals/evals.json".as_ref()).unwrap();
//! let d = diff::diff(&old, &new, 0.01);
//! print!("{}", d.render());
//! assert!(d.regressions().is_empty());
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::results::{Results, ResultsError, SampleRecord, Verdict};

/// How one metric of one sample moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Change {
    /// Dataset name.
    pub dataset: String,
    /// Sample id.
    pub id: String,
    /// Test name in the new run (else the old).
    pub test_name: String,
    /// Metric name.
    pub metric: String,
    /// Score before (None: not scored).
    pub old: Option<f64>,
    /// Score now (None: not scored).
    pub new: Option<f64>,
    /// `new - old` when both exist.
    pub delta: Option<f64>,
    /// Whether the change is for the better.
    pub better: bool,
}

/// One sample present in only one of the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Only {
    /// Dataset name.
    pub dataset: String,
    /// Sample id.
    pub id: String,
    /// Test name.
    pub test_name: String,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Diff {
    /// Changes beyond `epsilon`, worst first.
    pub changes: Vec<Change>,
    /// Samples only in the new run.
    pub added: Vec<Only>,
    /// Samples only in the old run.
    pub removed: Vec<Only>,
    /// Samples compared.
    pub compared: usize,
    /// Movements up to this size are ignored.
    pub epsilon: f64,
}

impl Diff {
    /// The changes for the worse.
    pub fn regressions(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| !c.better).collect()
    }

    /// The changes for the better.
    pub fn improvements(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.better).collect()
    }

    /// A report a person can read.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} sample(s) compared (epsilon {}): {} worse, {} better, {} new, {} removed\n",
            self.compared,
            self.epsilon,
            self.regressions().len(),
            self.improvements().len(),
            self.added.len(),
            self.removed.len()
        );
        let show = |v: Option<f64>| v.map_or("error".to_string(), |x| format!("{x:.4}"));
        for (title, list) in [
            ("worse", self.regressions()),
            ("better", self.improvements()),
        ] {
            if list.is_empty() {
                continue;
            }
            out.push_str(&format!("{title}:\n"));
            for c in list {
                let delta = c.delta.map_or(String::new(), |d| format!(" ({d:+.4})"));
                out.push_str(&format!(
                    "  {}::{} [{}] {}: {} -> {}{delta}\n",
                    c.dataset,
                    c.id,
                    c.test_name,
                    c.metric,
                    show(c.old),
                    show(c.new)
                ));
            }
        }
        for (title, list) in [("new", &self.added), ("removed", &self.removed)] {
            if list.is_empty() {
                continue;
            }
            out.push_str(&format!("{title}:\n"));
            for o in list {
                out.push_str(&format!("  {}::{} [{}]\n", o.dataset, o.id, o.test_name));
            }
        }
        out
    }
}

fn key(s: &SampleRecord) -> (String, String) {
    (s.dataset.clone(), s.id.clone())
}

/// Compares `old` with `new`; movements of at most `epsilon` are ignored.
pub fn diff(old: &Results, new: &Results, epsilon: f64) -> Diff {
    let epsilon = epsilon.abs();
    let before: BTreeMap<(String, String), &SampleRecord> =
        old.samples.iter().map(|s| (key(s), s)).collect();
    let after: BTreeMap<(String, String), &SampleRecord> =
        new.samples.iter().map(|s| (key(s), s)).collect();
    let mut changes = Vec::new();
    let mut compared = 0;
    for (k, n) in &after {
        let Some(o) = before.get(k) else { continue };
        compared += 1;
        for m in &n.metrics {
            let was = o.metrics.iter().find(|x| x.name == m.name);
            let old_score = was.and_then(|x| x.score);
            let lower_is_better = m.op == "<=";
            let (better, delta) = match (old_score, m.score) {
                (Some(a), Some(b)) => {
                    let d = b - a;
                    // 1.0 -> 0.95 with epsilon 0.05 is within it, float error aside.
                    if d.abs() <= epsilon + 1e-12 {
                        continue;
                    }
                    (if lower_is_better { d < 0.0 } else { d > 0.0 }, Some(d))
                }
                (None, Some(_)) if was.is_some() => (true, None),
                (Some(_), None) => (false, None),
                _ => continue,
            };
            changes.push(Change {
                dataset: n.dataset.clone(),
                id: n.id.clone(),
                test_name: n.test_name.clone(),
                metric: m.name.clone(),
                old: old_score,
                new: m.score,
                delta,
                better,
            });
        }
        // A metric scored before and not at all now is lost coverage.
        for m in o.metrics.iter().filter(|m| m.score.is_some()) {
            if !n.metrics.iter().any(|x| x.name == m.name) {
                changes.push(Change {
                    dataset: n.dataset.clone(),
                    id: n.id.clone(),
                    test_name: n.test_name.clone(),
                    metric: m.name.clone(),
                    old: m.score,
                    new: None,
                    delta: None,
                    better: false,
                });
            }
        }
        // An agent error where there was none is worse, whatever the metrics say.
        if n.verdict == Verdict::Error && o.verdict != Verdict::Error && n.metrics.is_empty() {
            changes.push(Change {
                dataset: n.dataset.clone(),
                id: n.id.clone(),
                test_name: n.test_name.clone(),
                metric: "(agent)".into(),
                old: None,
                new: None,
                delta: None,
                better: false,
            });
        }
    }
    // Worst first: regressions by size, then improvements.
    changes.sort_by(|a, b| {
        a.better
            .cmp(&b.better)
            .then(
                b.delta
                    .map_or(f64::INFINITY, f64::abs)
                    .total_cmp(&a.delta.map_or(f64::INFINITY, f64::abs)),
            )
            .then((&a.dataset, &a.id, &a.metric).cmp(&(&b.dataset, &b.id, &b.metric)))
    });
    let only = |map: &BTreeMap<(String, String), &SampleRecord>,
                other: &BTreeMap<(String, String), &SampleRecord>| {
        map.iter()
            .filter(|(k, _)| !other.contains_key(*k))
            .map(|(_, s)| Only {
                dataset: s.dataset.clone(),
                id: s.id.clone(),
                test_name: s.test_name.clone(),
            })
            .collect::<Vec<_>>()
    };
    Diff {
        added: only(&after, &before),
        removed: only(&before, &after),
        changes,
        compared,
        epsilon,
    }
}

/// Makes `results` the baseline at `path` (the old one backed up first).
pub fn accept(results: &Results, path: &Path) -> Result<Option<PathBuf>, ResultsError> {
    let backup = if path.exists() {
        Some(
            eval_core::files::backup(path).map_err(|source| ResultsError::Write {
                path: path.to_path_buf(),
                source,
            })?,
        )
    } else {
        None
    };
    results.write(path)?;
    Ok(backup)
}

/// A run compared with its baseline (see [`check_baseline`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BaselineOutcome {
    /// The run's results became the baseline (`accepted` on purpose, or
    /// because there was none); the previous one was kept as `backup`.
    Written {
        /// `EVAL_ACCEPT_BASELINE` (or `evals report accept`) asked for it.
        accepted: bool,
        /// The previous baseline's backup.
        backup: Option<PathBuf>,
    },
    /// Compared: what moved.
    Compared(Diff),
    /// Not compared: part of the samples ran (a baseline judges whole runs).
    NotCompared,
}

impl BaselineOutcome {
    /// Sample metrics that regressed beyond epsilon.
    pub fn regressions(&self) -> usize {
        match self {
            BaselineOutcome::Compared(d) => d.regressions().len(),
            _ => 0,
        }
    }

    /// What a person reads about it.
    pub fn render(&self, baseline: &Path) -> String {
        match self {
            BaselineOutcome::Written { backup, .. } => format!(
                "baseline {} written{}\n",
                baseline.display(),
                backup
                    .as_ref()
                    .map(|b| format!(" (previous kept as {})", b.display()))
                    .unwrap_or_default()
            ),
            BaselineOutcome::Compared(d) => {
                let mut out = format!("against baseline {}: {}", baseline.display(), d.render());
                if !d.regressions().is_empty() {
                    out.push_str("baseline gate FAILED: EVAL_ACCEPT_BASELINE=1 accepts these results as the new baseline\n");
                }
                out
            }
            BaselineOutcome::NotCompared => format!(
                "baseline {} not compared: only part of the samples ran\n",
                baseline.display()
            ),
        }
    }
}

/// Gates a run on a baseline results file: a complete run is compared with
/// it (or, with `accept` or no baseline yet, becomes it); a partial run is
/// never compared, nor written as a baseline.
pub fn check_baseline(
    current: &Results,
    baseline: &Path,
    epsilon: f64,
    accept_run: bool,
) -> Result<BaselineOutcome, ResultsError> {
    if !current.complete {
        return Ok(BaselineOutcome::NotCompared);
    }
    if accept_run || !baseline.exists() {
        let backup = accept(current, baseline)?;
        return Ok(BaselineOutcome::Written {
            accepted: accept_run,
            backup,
        });
    }
    let old = Results::read(baseline)?;
    Ok(BaselineOutcome::Compared(diff(&old, current, epsilon)))
}
