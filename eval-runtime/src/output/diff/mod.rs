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
//! regression only when the evidence says so — the new run's gate is proven
//! missed (its interval wholly on the wrong side, or a sample not scored),
//! or the paired comparison of the gated metric regressed — and otherwise
//! inconclusive, with what would decide it; a gate whose threshold,
//! operator or statistic changed is labelled "threshold changed". What
//! differs in the question the runs asked (thresholds, options, metrics,
//! gates: [`Diff::question`]) is said in every output. The per-sample
//! movements beyond ε are listed as evidence ([`Diff::changes`]): they
//! never decide alone.
//!
//! ```no_run
//! use eval_runtime::{diff, results::Results};
//! let old = Results::read("baseline.json".as_ref()).unwrap();
//! let new = Results::read("target/evals/evals.json".as_ref()).unwrap();
//! let d = diff::diff(&old, &new, 0.01);
//! print!("{}", d.render());
//! assert!(d.regressions().is_empty());
//! ```

mod baseline;
mod compare;
mod gates;
mod model;
mod render;

pub use baseline::{accept, check_baseline};
pub use compare::{compare, diff};
pub use model::{
    ALPHA, BaselineOutcome, Change, Comparison, Count, Diff, GateChange, GateNeeded, GateOutcome,
    Needed, Only, Outcome, POWER, Regression,
};
pub(crate) use render::baseline_markdown;
pub use render::{SHOWN_CHANGES, diff_markdown};
