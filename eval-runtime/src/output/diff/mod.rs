//! What changed between two runs, judged as a paired experiment.
//!
//! Samples are matched by dataset and id. For each dataset and metric the
//! scores of the samples scored in both runs are paired, and the mean of
//! their differences is compared with 0 (Miller 2024, "Adding Error Bars to
//! Evals", §4: paired differences remove the variance the samples share):
//! exact McNemar on the discordant pairs when every score is 0 or 1 (a
//! pass/fail metric run once), Student's paired t otherwise, each with the
//! 95% interval of the mean difference. The p-values of all the dataset ×
//! metric comparisons are adjusted together (Holm), so a comparison of many
//! metrics does not cry wolf more often than one of a single metric. Each
//! comparison is then one of:
//!
//! * **no change**: the interval lies inside ±ε (`--epsilon`);
//! * **regression** / **improvement**: the difference is significant
//!   (adjusted p < 0.05) against the metric's direction / with it;
//! * **inconclusive**: neither — with the samples that would decide it at
//!   the observed variance (80% power), and, when the runs were repeated,
//!   the repeats per sample that would;
//!
//! and a metric that samples could be scored on before and cannot be now is
//! a regression (lost coverage). A gate met before and missed now is a
//! regression too. The per-sample movements beyond ε are listed as evidence
//! ([`Diff::changes`]): they never decide alone.
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
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::provenance::Allow;
use super::results::{Results, ResultsError, SampleRecord, Verdict};
use crate::stats::{Interval, Level, PairedTest};

mod render;

pub(crate) use render::baseline_markdown;
pub use render::{SHOWN_CHANGES, diff_markdown};

/// The significance level of a comparison (after Holm's adjustment).
pub const ALPHA: f64 = 0.05;
/// The power the samples a comparison would need are computed for.
pub const POWER: f64 = 0.8;

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

/// What a comparison of one dataset's metric found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Significantly worse (against the metric's direction), or samples
    /// that were scored can no longer be.
    Regression,
    /// Significantly better.
    Improvement,
    /// The difference's interval lies inside ±ε.
    NoChange,
    /// Neither: the samples cannot tell.
    Inconclusive,
}

impl Outcome {
    /// `regression`, `improvement`, `no change`, `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Regression => "regression",
            Outcome::Improvement => "improvement",
            Outcome::NoChange => "no change",
            Outcome::Inconclusive => "inconclusive",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What would decide an inconclusive comparison, at the observed variance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Needed {
    /// Samples (paired) that would decide it with 80% power: detect the
    /// observed difference, or — when it lies within ±ε — show that it does.
    pub samples: Option<u64>,
    /// Runs per sample that would decide it with the samples at hand,
    /// when the runs were repeated (so their run-to-run variance is known)
    /// and more runs can decide it at all.
    pub repeats: Option<u32>,
}

/// One dataset's metric, compared between the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// Dataset name.
    pub dataset: String,
    /// Metric name.
    pub metric: String,
    /// `>=` (higher is better) or `<=`.
    pub op: String,
    /// Samples scored in both runs (the pairs).
    pub pairs: usize,
    /// Mean over the pairs before.
    pub old_mean: Option<f64>,
    /// Mean over the pairs now.
    pub new_mean: Option<f64>,
    /// Mean of the per-sample differences, now − before.
    pub difference: Option<f64>,
    /// Its 95% interval.
    pub interval: Option<Interval>,
    /// Standard deviation of the per-sample differences.
    pub sd: Option<f64>,
    /// Two-sided p-value of "no difference".
    pub p_value: Option<f64>,
    /// The p-value after Holm's adjustment over every comparison of the diff.
    pub adjusted_p: Option<f64>,
    /// McNemar's exact test (every score 0 or 1) or the paired t test.
    pub test: Option<PairedTest>,
    /// Pass/fail pairs that went pass → fail and fail → pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discordant: Option<(u64, u64)>,
    /// Samples scored before and not now (agent errors, a judge that failed).
    pub lost: usize,
    /// The verdict.
    pub outcome: Outcome,
    /// For an inconclusive comparison: what would decide it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed: Option<Needed>,
}

impl Comparison {
    /// Whether a lower score is better.
    fn lower_is_better(&self) -> bool {
        self.op == "<="
    }
}

/// A gate present in both runs, and how its outcome moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct GateChange {
    /// Dataset name.
    pub dataset: String,
    /// The gate as written (`mean(contains) >= 0.7`).
    pub gate: String,
    /// Met before.
    pub was_met: bool,
    /// Met now.
    pub met: bool,
}

impl GateChange {
    /// Met before, missed now.
    pub fn flipped_to_missed(&self) -> bool {
        self.was_met && !self.met
    }
}

/// Something that got worse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Regression<'a> {
    /// A dataset's metric.
    Metric(&'a Comparison),
    /// A gate met before and missed now.
    Gate(&'a GateChange),
}

impl fmt::Display for Regression<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Regression::Metric(c) => write!(f, "{}: {}", c.dataset, render::comparison_line(c)),
            Regression::Gate(g) => write!(f, "{}: gate {} met → missed", g.dataset, g.gate),
        }
    }
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Diff {
    /// Per dataset and metric, the paired comparison and its verdict.
    pub comparisons: Vec<Comparison>,
    /// Gates judged in both runs, and how their outcome moved.
    pub gates: Vec<GateChange>,
    /// Per sample and metric, movements beyond `epsilon`, worst first:
    /// evidence, never a verdict on their own.
    pub changes: Vec<Change>,
    /// Samples only in the new run.
    pub added: Vec<Only>,
    /// Samples only in the old run.
    pub removed: Vec<Only>,
    /// Samples in both runs whose content changed (their hashes differ):
    /// not paired.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Only>,
    /// Samples compared.
    pub compared: usize,
    /// A difference whose interval lies within ±`epsilon` is no change.
    pub epsilon: f64,
    /// What differs between the runs' provenance and was allowed (a judge
    /// or dataset change): every output of the comparison says so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
}

impl Diff {
    /// What got worse: comparisons that regressed, gates met before and
    /// missed now. A run with none passes a baseline.
    pub fn regressions(&self) -> Vec<Regression<'_>> {
        self.comparisons
            .iter()
            .filter(|c| c.outcome == Outcome::Regression)
            .map(Regression::Metric)
            .chain(
                self.gates
                    .iter()
                    .filter(|g| g.flipped_to_missed())
                    .map(Regression::Gate),
            )
            .collect()
    }

    /// The comparisons with `outcome`.
    pub fn with_outcome(&self, outcome: Outcome) -> impl Iterator<Item = &Comparison> {
        self.comparisons
            .iter()
            .filter(move |c| c.outcome == outcome)
    }

    /// The per-sample movements for the worse.
    pub fn worse(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| !c.better).collect()
    }

    /// The per-sample movements for the better.
    pub fn better(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.better).collect()
    }

    /// A report a person can read.
    pub fn render(&self) -> String {
        render::text(self)
    }
}

fn key(s: &SampleRecord) -> (String, String) {
    (s.dataset.clone(), s.id.clone())
}

/// Compares `old` with `new` when their provenance allows it: the judge of
/// every metric both scored (model, host, settings, prompt and definition
/// versions) and the content of every dataset both hold must be the same,
/// unless `allow` accepts the difference; then the comparison says so in
/// [`Diff::caveats`]. Otherwise [`ResultsError::Incomparable`], naming what
/// differs. See [`diff`] for the comparison itself.
pub fn compare(
    old: &Results,
    new: &Results,
    epsilon: f64,
    allow: Allow,
) -> Result<Diff, ResultsError> {
    let d = diff(old, new, epsilon);
    let (Some(a), Some(b)) = (&old.provenance, &new.provenance) else {
        return Ok(d);
    };
    let metrics: Vec<String> = d.comparisons.iter().map(|c| c.metric.clone()).collect();
    let found = b.differences(a, &metrics);
    let mut refused = Vec::new();
    if !allow.judge_change {
        refused.extend(found.judge.iter().cloned());
    }
    if !allow.dataset_change {
        refused.extend(found.datasets.iter().cloned());
    }
    if refused.is_empty() {
        Ok(d)
    } else {
        Err(ResultsError::Incomparable {
            differences: refused,
        })
    }
}

/// What `new`'s provenance says differs from `old`'s, as a comparison's
/// caveats: judge and dataset changes (allowed, since they are compared),
/// then the rest (the agent, the revision).
fn caveats(old: &Results, new: &Results, metrics: &[String]) -> Vec<String> {
    let (Some(a), Some(b)) = (&old.provenance, &new.provenance) else {
        return Vec::new();
    };
    let found = b.differences(a, metrics);
    found
        .judge
        .into_iter()
        .map(|j| format!("compared across a judge change: {j}"))
        .chain(
            found
                .datasets
                .into_iter()
                .map(|d| format!("compared across a dataset change: {d} (samples whose content changed are not paired)")),
        )
        .chain(found.notes)
        .collect()
}

/// Compares `old` with `new` (see the [module docs](self)); a difference
/// whose 95% interval lies within ±`epsilon` is no change, and per-sample
/// movements of at most `epsilon` are not listed. Samples whose content
/// changed (their hashes differ) are not paired. Whatever differs in the
/// runs' provenance is said in [`Diff::caveats`]; [`compare`] refuses
/// runs scored by different judges or on different data.
pub fn diff(old: &Results, new: &Results, epsilon: f64) -> Diff {
    let epsilon = epsilon.abs();
    let before: BTreeMap<(String, String), &SampleRecord> =
        old.samples.iter().map(|s| (key(s), s)).collect();
    let after: BTreeMap<(String, String), &SampleRecord> =
        new.samples.iter().map(|s| (key(s), s)).collect();
    let mut changes = Vec::new();
    let mut compared = 0;
    // Per (dataset, metric): the op, the pairs, the run counts and run
    // variances (for repeats), the samples that lost their score.
    let mut cells: BTreeMap<(String, String), Cell> = BTreeMap::new();
    let mut changed = Vec::new();
    for (k, n) in &after {
        let Some(o) = before.get(k) else { continue };
        // The same id with other content is another sample.
        if let (Some(a), Some(b)) = (&o.hash, &n.hash)
            && a != b
        {
            changed.push(Only {
                dataset: n.dataset.clone(),
                id: n.id.clone(),
                test_name: n.test_name.clone(),
            });
            continue;
        }
        compared += 1;
        for m in &n.metrics {
            let was = o.metrics.iter().find(|x| x.name == m.name);
            let old_score = was.and_then(|x| x.score);
            let lower_is_better = m.op == "<=";
            if was.is_some() {
                let cell = cells
                    .entry((n.dataset.clone(), m.name.clone()))
                    .or_insert_with(|| Cell::new(&m.op));
                match (old_score, m.score) {
                    (Some(a), Some(b)) => {
                        cell.pairs.push((a, b));
                        cell.runs.push((
                            (o.runs, was.and_then(|x| x.spread).and_then(|s| s.sd)),
                            (n.runs, m.spread.and_then(|s| s.sd)),
                        ));
                    }
                    (Some(_), None) => cell.lost += 1,
                    _ => {}
                }
            }
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
                cells
                    .entry((n.dataset.clone(), m.name.clone()))
                    .or_insert_with(|| Cell::new(&m.op))
                    .lost += 1;
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
    let comparisons = judge(cells, epsilon);
    let metrics: Vec<String> = comparisons.iter().map(|c| c.metric.clone()).collect();
    Diff {
        caveats: caveats(old, new, &metrics),
        comparisons,
        gates: gate_changes(old, new),
        added: only(&after, &before),
        removed: only(&before, &after),
        changed,
        changes,
        compared,
        epsilon,
    }
}

/// One side of a pair: the sample's runs and the standard deviation of
/// their scores (when repeated).
type RunsOf = (u32, Option<f64>);

/// The pairs of one dataset's metric.
struct Cell {
    op: String,
    pairs: Vec<(f64, f64)>,
    /// Per pair: (runs, run-to-run standard deviation) before and now.
    runs: Vec<(RunsOf, RunsOf)>,
    lost: usize,
}

impl Cell {
    fn new(op: &str) -> Cell {
        Cell {
            op: op.to_string(),
            pairs: Vec::new(),
            runs: Vec::new(),
            lost: 0,
        }
    }
}

/// Each cell's paired comparison and verdict, the p-values adjusted
/// together (Holm).
fn judge(cells: BTreeMap<(String, String), Cell>, epsilon: f64) -> Vec<Comparison> {
    let level = Level::STANDARD;
    let mut out: Vec<Comparison> = Vec::with_capacity(cells.len());
    let mut needed_inputs = Vec::with_capacity(cells.len());
    for ((dataset, metric), cell) in cells {
        let paired = crate::stats::paired(&cell.pairs, level);
        // A difference of two scores lies within ± the metric's range.
        let span = eval_core::metric::lookup(&metric)
            .map(|i| i.range())
            .map_or(f64::INFINITY, |(min, max)| max - min);
        let n = cell.pairs.len() as f64;
        let mean_of = |f: fn(&(f64, f64)) -> f64| {
            (!cell.pairs.is_empty()).then(|| cell.pairs.iter().map(f).sum::<f64>() / n)
        };
        out.push(Comparison {
            old_mean: mean_of(|p| p.0),
            new_mean: mean_of(|p| p.1),
            dataset,
            metric,
            op: cell.op.clone(),
            pairs: cell.pairs.len(),
            difference: paired.map(|p| p.mean),
            interval: paired.map(|p| p.interval.clamped((-span, span))),
            sd: paired.map(|p| p.sd),
            p_value: paired.map(|p| p.p_value),
            adjusted_p: None,
            test: paired.map(|p| p.test),
            discordant: paired.and_then(|p| p.discordant),
            lost: cell.lost,
            outcome: Outcome::Inconclusive,
            needed: None,
        });
        needed_inputs.push(run_variance(&cell.runs));
    }
    // Holm over the comparisons that have a p-value.
    let tested: Vec<usize> = (0..out.len())
        .filter(|i| out[*i].p_value.is_some())
        .collect();
    let adjusted = crate::stats::holm(
        &tested
            .iter()
            .map(|i| out[*i].p_value.unwrap_or(1.0))
            .collect::<Vec<_>>(),
    );
    for (i, p) in tested.into_iter().zip(adjusted) {
        out[i].adjusted_p = Some(p);
    }
    for (c, within) in out.iter_mut().zip(needed_inputs) {
        c.outcome = outcome(c, epsilon);
        if c.outcome == Outcome::Inconclusive {
            c.needed = Some(needed(c, epsilon, within));
        }
    }
    out
}

/// A comparison's verdict (see the [module docs](self)).
fn outcome(c: &Comparison, epsilon: f64) -> Outcome {
    if c.lost > 0 {
        return Outcome::Regression;
    }
    let (Some(d), Some(i), Some(p)) = (c.difference, c.interval, c.adjusted_p) else {
        return Outcome::Inconclusive;
    };
    // Float error aside, an interval within ±ε is no change.
    let tol = 1e-12;
    if i.low >= -epsilon - tol && i.high <= epsilon + tol {
        return Outcome::NoChange;
    }
    if c.pairs < 2 || p >= ALPHA {
        return Outcome::Inconclusive;
    }
    let gain = if c.lower_is_better() { -d } else { d };
    if gain < 0.0 {
        Outcome::Regression
    } else {
        Outcome::Improvement
    }
}

/// The average run-to-run variance of one sample's score (both runs'
/// samples), and the runs per sample, when every pair was repeated.
fn run_variance(runs: &[(RunsOf, RunsOf)]) -> Option<(f64, u32)> {
    if runs.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    let mut k = u32::MAX;
    for ((ko, so), (kn, sn)) in runs {
        let (so, sn) = ((*so)?, (*sn)?);
        if *ko < 2 || *kn < 2 {
            return None;
        }
        sum += so * so + sn * sn;
        k = k.min(*ko).min(*kn);
    }
    Some((sum / (2 * runs.len()) as f64, k))
}

/// What would decide an inconclusive comparison: samples to detect the
/// observed difference (or, within ±ε, to show it is no change), and runs
/// per sample that would do it with the samples at hand.
fn needed(c: &Comparison, epsilon: f64, within: Option<(f64, u32)>) -> Needed {
    let (Some(d), Some(sd)) = (c.difference, c.sd) else {
        return Needed {
            samples: None,
            repeats: None,
        };
    };
    // The distance the interval's half-width must shrink below.
    let target = if d.abs() > epsilon {
        d.abs()
    } else {
        epsilon - d.abs()
    };
    let level = Level::STANDARD;
    let samples = crate::stats::samples_needed(sd, target, level, POWER);
    // With K runs per sample, a difference's variance is the samples'
    // own (between) plus twice the run-to-run variance over K.
    let repeats = within.and_then(|(w, k)| {
        let n = c.pairs as f64;
        if target <= 0.0 || n < 2.0 {
            return None;
        }
        let z = level.z() + crate::stats::z_quantile(POWER);
        let allowed = n * (target / z).powi(2);
        let between = (sd * sd - 2.0 * w / f64::from(k)).max(0.0);
        let room = allowed - between;
        if room <= 0.0 || w <= 0.0 {
            return None;
        }
        let k_needed = (2.0 * w / room).ceil();
        (k_needed <= f64::from(eval_core::repeat::MAX_REPEAT) && k_needed > f64::from(k))
            .then_some(k_needed as u32)
    });
    Needed { samples, repeats }
}

/// Every gate judged in both runs, with how its outcome moved.
fn gate_changes(old: &Results, new: &Results) -> Vec<GateChange> {
    let mut out = Vec::new();
    for d in &new.datasets {
        let Some(before) = old.datasets.iter().find(|o| o.name == d.name) else {
            continue;
        };
        for g in d.metrics.iter().flat_map(|m| m.gates()) {
            let was = before
                .metrics
                .iter()
                .flat_map(|m| m.gates())
                .find(|o| o.gate == g.gate);
            if let Some(was) = was.filter(|w| w.judged && g.judged) {
                out.push(GateChange {
                    dataset: d.name.clone(),
                    gate: format!(
                        "{}({}) {} {}",
                        g.gate.stat, g.gate.metric, g.gate.op, g.gate.threshold
                    ),
                    was_met: was.passed,
                    met: g.passed,
                });
            }
        }
    }
    out
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
    /// What got worse since the baseline (see [`Diff::regressions`]).
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
                    out.push_str("baseline gate FAILED: a regression since the baseline; EVAL_ACCEPT_BASELINE=1 accepts these results as the new baseline\n");
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
    allow: Allow,
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
    compare(&old, current, epsilon, allow)
        .map(BaselineOutcome::Compared)
        .map_err(|e| match e {
            ResultsError::Incomparable { differences } => ResultsError::BaselineIncomparable {
                path: baseline.to_path_buf(),
                differences,
            },
            other => other,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::results::{MetricRecord, RunSpread};
    use crate::output::test_record as record;

    /// A run of `scores` of `partial_match` (a score, not pass/fail).
    fn scored(scores: &[f64]) -> Results {
        let records = scores
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut r = record("qa", &format!("s{i:03}"), Verdict::Pass);
                r.metrics[0].name = "partial_match".into();
                r.metrics[0].score = Some(*s);
                r.metrics[0].threshold = 0.5;
                r
            })
            .collect();
        Results::new("evals", records, &BTreeMap::new())
    }

    fn pass_fail(passes: &[bool]) -> Results {
        let records = passes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let v = if *p { Verdict::Pass } else { Verdict::Fail };
                record("qa", &format!("s{i:03}"), v)
            })
            .collect();
        Results::new("evals", records, &BTreeMap::new())
    }

    #[test]
    fn identical_runs_are_no_change_and_a_clear_drop_is_a_regression() {
        let all = pass_fail(&[true; 40]);
        let d = diff(&all, &all, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::NoChange);
        assert!(d.regressions().is_empty());
        // 12 of 40 go pass → fail, none back: McNemar p = 2 · 0.5^12 = 0.000488.
        let mut now = vec![true; 40];
        now[..12].iter_mut().for_each(|p| *p = false);
        let d = diff(&all, &pass_fail(&now), 0.0);
        let c = &d.comparisons[0];
        assert_eq!(c.discordant, Some((12, 0)));
        assert!((c.p_value.unwrap() - 2.0 * 0.5f64.powi(12)).abs() < 1e-12);
        assert_eq!(c.outcome, Outcome::Regression);
        assert_eq!(d.regressions().len(), 1);
        // The other way round it is an improvement.
        let d = diff(&pass_fail(&now), &all, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::Improvement);
        assert!(d.regressions().is_empty());
    }

    #[test]
    fn noise_is_inconclusive_with_the_samples_that_would_decide_it() {
        // 20 pairs, 3 pass → fail and 2 fail → pass: p = 1, inconclusive.
        let mut old = vec![true; 20];
        let mut new = vec![true; 20];
        old[..2].iter_mut().for_each(|p| *p = false);
        new[10..13].iter_mut().for_each(|p| *p = false);
        let d = diff(&pass_fail(&old), &pass_fail(&new), 0.0);
        let c = &d.comparisons[0];
        assert_eq!(c.outcome, Outcome::Inconclusive);
        // Differences: 3 × −1, 2 × +1, 15 × 0: mean −0.05, s² = (5 − 20 ·
        // 0.0025)/19 = 0.260526; n = (1.959964 + 0.841621)² · 0.260526 /
        // 0.0025 = 817.9 → 818.
        assert_eq!(c.needed.unwrap().samples, Some(818));
        assert!(d.render().contains(
            "about 818 samples would be needed to detect a difference this size (80% power)"
        ));
        // With a margin: the interval must also lie within ±ε to be no change.
        let d = diff(&pass_fail(&old), &pass_fail(&new), 0.5);
        assert_eq!(d.comparisons[0].outcome, Outcome::NoChange);
    }

    #[test]
    fn a_lower_is_better_metric_regresses_upwards() {
        let mut old = scored(&[0.1; 30]);
        let mut new = scored(&[0.4; 30]);
        for r in [&mut old, &mut new] {
            for s in &mut r.samples {
                s.metrics[0].name = "hallucination".into();
                s.metrics[0].op = "<=".into();
            }
        }
        // A constant difference: a point interval, p = 0, against the direction.
        let d = diff(&old, &new, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::Regression);
        assert_eq!(
            diff(&new, &old, 0.0).comparisons[0].outcome,
            Outcome::Improvement
        );
    }

    #[test]
    fn repeats_that_would_decide_come_from_the_run_to_run_variance() {
        // 10 samples, each the mean of 3 runs whose scores vary (sd 0.3):
        // the differences vary mostly from run to run, so more runs decide.
        let spread = |r: &mut MetricRecord| {
            r.spread = Some(RunSpread {
                runs: 3,
                low: 0.0,
                high: 1.0,
                straddles: true,
                sd: Some(0.3),
                level: 0.95,
                method: None,
                decision: None,
            });
        };
        let wobble = |base: f64, k: usize| base + if k.is_multiple_of(2) { 0.1 } else { -0.1 };
        let mut old = scored(&(0..10).map(|k| wobble(0.6, k)).collect::<Vec<_>>());
        let mut new = scored(&(0..10).map(|k| wobble(0.55, k + 1)).collect::<Vec<_>>());
        for r in [&mut old, &mut new] {
            for s in &mut r.samples {
                s.runs = 3;
                spread(&mut s.metrics[0]);
            }
        }
        let d = diff(&old, &new, 0.0);
        let c = &d.comparisons[0];
        assert_eq!(c.outcome, Outcome::Inconclusive, "{c:?}");
        // Differences alternate −0.25 / +0.15: mean −0.05, s² = 0.0444...;
        // run-to-run part 2 · 0.09 / 3 = 0.06 ≥ s²: none of it is left to
        // the samples themselves. Allowed variance for 80% power at δ = 0.05
        // with 10 pairs: 10 · (0.05 / 2.801585)² = 0.003185; runs needed
        // ⌈2 · 0.09 / 0.003185⌉ = 57.
        let n = c.needed.unwrap();
        assert_eq!(n.repeats, Some(57), "{n:?}");
        assert!(n.samples.is_some());
    }
}
