//! What a comparison of two runs holds: per dataset and metric the paired
//! comparison and its outcome, the gates that flipped, the samples that
//! moved, new, gone or changed.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::model::QuestionChange;
use crate::stats::{Decision, Interval, PairedTest};

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
    /// The metric's options changed between the runs (`case_sensitive`, a
    /// rubric...): it scores something else, so its scores are no verdict.
    OptionsChanged,
}

impl Outcome {
    /// `regression`, `improvement`, `no change`, `inconclusive`, `options changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Regression => "regression",
            Outcome::Improvement => "improvement",
            Outcome::NoChange => "no change",
            Outcome::Inconclusive => "inconclusive",
            Outcome::OptionsChanged => "options changed",
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
    /// Samples (paired) that would decide it with 80% power, for the test
    /// that will be run (exact McNemar or paired t, at their exact power):
    /// detect the observed difference, or — when it lies within ±ε — show
    /// that it does.
    pub samples: Option<u64>,
    /// Runs per sample that would decide it with the samples at hand,
    /// when the runs were repeated (so their run-to-run variance is known)
    /// and more runs can decide it at all.
    pub repeats: Option<u32>,
    /// The runs showed no difference at all (as many samples went one way
    /// as the other): no number of samples would detect one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_difference: bool,
    /// How `samples` was found: exactly, or (tens of thousands of pairs,
    /// where the exact sums cost more than they tell) about.
    pub count: Count,
}

/// How a count of samples was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Count {
    /// Exactly, for the test or interval that will decide.
    Exact,
    /// By the normal approximation, where the exact sums would cost more
    /// than they tell (tens of thousands of samples).
    About,
    /// By the normal approximation of an interval that needs more (a
    /// score's betting interval): at least this many.
    AtLeast,
    /// Beyond what is worth computing: more than this many.
    MoreThan,
}

impl Count {
    /// How a sentence states the count: ``, `about `, `at least `, `more than `.
    pub fn prefix(self) -> &'static str {
        match self {
            Count::Exact => "",
            Count::About => "about ",
            Count::AtLeast => "at least ",
            Count::MoreThan => "more than ",
        }
    }

    /// How a `SampleSize` was found.
    pub(crate) fn of(size: crate::stats::SampleSize) -> Count {
        match size {
            crate::stats::SampleSize::About(_) => Count::About,
            crate::stats::SampleSize::Beyond(_) => Count::MoreThan,
            _ => Count::Exact,
        }
    }
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
    pub(crate) fn lower_is_better(&self) -> bool {
        self.op == "<="
    }
}

/// What a comparison found of a gate judged in both runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateOutcome {
    /// Met before and missed now, and the evidence says so: the new run's
    /// gate is proven missed (its interval wholly on the wrong side, or a
    /// sample not scored), or the paired comparison of the gated metric
    /// (for a gate on the mean) is a regression.
    Regression,
    /// Missed before and proven met now.
    Improvement,
    /// Met (or missed) in both runs.
    NoChange,
    /// It flipped, but nothing proves it: the new run's interval straddles
    /// the threshold and the paired comparison did not regress.
    Inconclusive,
    /// The gate itself changed (its operator, threshold or statistic): the
    /// runs answered different questions, so the flip is no verdict.
    ThresholdChanged,
    /// The gated metric's options changed: it scores something else, so
    /// the gate's outcome is no verdict either.
    OptionsChanged,
}

impl GateOutcome {
    /// `regression`, `improvement`, `no change`, `inconclusive`, `threshold
    /// changed`, `options changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            GateOutcome::Regression => "regression",
            GateOutcome::Improvement => "improvement",
            GateOutcome::NoChange => "no change",
            GateOutcome::Inconclusive => "inconclusive",
            GateOutcome::ThresholdChanged => "threshold changed",
            GateOutcome::OptionsChanged => "options changed",
        }
    }
}

impl fmt::Display for GateOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What would decide a gate whose flip is inconclusive, at the new run's
/// observed spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct GateNeeded {
    /// How many samples would prove the gate met or missed (as
    /// `proves_met` says) with 80% power, should its mean and the samples'
    /// spread stay as observed — for a pass rate exactly (Clopper–Pearson's
    /// interval on its side of the threshold), for a score at least the
    /// normal approximation `((z₀.₉₇₅ + z₀.₈)·s/|mean − threshold|)²` (the
    /// betting interval that decides needs more) — and at least one more
    /// than the samples at hand; `None` when it cannot be said (a
    /// percentile, the mean on the threshold, scores that did not vary).
    pub samples: Option<u64>,
    /// The mean is on the passing side now: more samples would prove the
    /// gate met (else missed).
    pub proves_met: bool,
    /// How `samples` was found: exactly for a pass rate, at least (the
    /// normal approximation) for a score.
    pub count: Count,
}

/// A gate judged in both runs, and how its outcome moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct GateChange {
    /// Dataset name.
    pub dataset: String,
    /// The gate as written now (`mean(contains) >= 0.7`).
    pub gate: String,
    /// The gate as written before, when it changed (another operator,
    /// threshold or statistic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
    /// Met before.
    pub was_met: bool,
    /// Met now.
    pub met: bool,
    /// The verdict on the change.
    pub outcome: GateOutcome,
    /// The gate's statistic now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Its 95% interval now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// Where that interval lies against the threshold now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// For an inconclusive flip: what would decide it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed: Option<GateNeeded>,
}

impl GateChange {
    /// Met before, missed now (whether or not that is proven: see
    /// [`outcome`](Self::outcome)).
    pub fn flipped_to_missed(&self) -> bool {
        self.was_met && !self.met
    }
}

/// Something that got worse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Regression<'a> {
    /// A dataset's metric.
    Metric(&'a Comparison),
    /// A gate met before and proven missed now (see [`GateOutcome::Regression`]).
    Gate(&'a GateChange),
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Diff {
    /// Per dataset and metric, the paired comparison and its verdict.
    #[doc(hidden)]
    pub comparisons: Vec<Comparison>,
    /// Gates judged in both runs, and how their outcome moved.
    #[doc(hidden)]
    pub gates: Vec<GateChange>,
    /// Per sample and metric, movements beyond `epsilon`, worst first:
    /// evidence, never a verdict on their own.
    #[doc(hidden)]
    pub changes: Vec<Change>,
    /// Samples only in the new run.
    #[doc(hidden)]
    pub added: Vec<Only>,
    /// Samples only in the old run.
    #[doc(hidden)]
    pub removed: Vec<Only>,
    /// Samples in both runs whose content changed (their hashes differ):
    /// not paired.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub changed: Vec<Only>,
    /// Samples compared.
    #[doc(hidden)]
    pub compared: usize,
    /// A difference whose interval lies within ±`epsilon` is no change.
    #[doc(hidden)]
    pub epsilon: f64,
    /// What differs between the runs' provenance and was allowed (a judge
    /// or dataset change): every output of the comparison says so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub caveats: Vec<String>,
    /// How the question the runs asked differs (thresholds, options,
    /// metrics, gates): every output of the comparison says so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)]
    pub question: Vec<QuestionChange>,
}

impl Diff {
    /// Whether anything got worse: a metric that regressed beyond chance,
    /// or a gate met before and proven missed now (what fails a baseline).
    pub fn regressed(&self) -> bool {
        !self.regressions().is_empty()
    }

    /// What got worse: comparisons that regressed, gates met before and
    /// proven missed now. A run with none passes a baseline.
    #[doc(hidden)]
    pub fn regressions(&self) -> Vec<Regression<'_>> {
        self.comparisons
            .iter()
            .filter(|c| c.outcome == Outcome::Regression)
            .map(Regression::Metric)
            .chain(
                self.gates
                    .iter()
                    .filter(|g| g.outcome == GateOutcome::Regression)
                    .map(Regression::Gate),
            )
            .collect()
    }

    /// The comparisons with `outcome`.
    #[doc(hidden)]
    pub fn with_outcome(&self, outcome: Outcome) -> impl Iterator<Item = &Comparison> {
        self.comparisons
            .iter()
            .filter(move |c| c.outcome == outcome)
    }

    /// The per-sample movements for the worse.
    #[doc(hidden)]
    pub fn worse(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| !c.better).collect()
    }

    /// The per-sample movements for the better.
    #[doc(hidden)]
    pub fn better(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.better).collect()
    }
}

/// A run compared with its baseline (`check_baseline`).
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
}
