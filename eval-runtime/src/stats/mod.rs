//! The statistics verdicts rest on, in one place: intervals around a mean
//! or a rate, paired comparisons of two runs, how many samples would decide
//! a comparison, and agreement between a judge and human labels.
//!
//! The reference is Miller, "Adding Error Bars to Evals: A Statistical
//! Approach to Language Model Evaluations" (2024, arXiv 2411.00640): report
//! an interval around every mean (clustered when samples share a cluster),
//! compare two runs by their paired, per-sample differences, and size an
//! eval by a power calculation. Where a metric's range is known the
//! intervals are those that hold whatever the distribution of its values
//! (`bounded.rs`: Clopper–Pearson for a pass rate, Waudby-Smith & Ramdas'
//! betting interval for a score), so values that happen to agree never
//! make an interval collapse; Student's t (`student.rs`, `tally.rs`) is left
//! to values without a finite range. Sample sizes are computed for the test
//! that will be run (`power.rs`: the noncentral t, the exact McNemar
//! test). Every function is plain arithmetic, tested against reference
//! implementations (scipy, statsmodels, confseq) or values computed by hand.

mod agreement;
mod bounded;
mod interval;
mod paired;
mod pass_k;
mod power;
mod student;
mod tally;

pub use agreement::{Agreement, Confusion};
pub(crate) use agreement::{cohen_kappa, spearman};
pub(crate) use bounded::{Design, Scale, mean_interval};
pub(crate) use interval::quantile_interval;
pub use interval::{Interval, Level, Method};
pub use paired::PairedTest;
pub(crate) use paired::{holm, paired};
pub(crate) use pass_k::over_runs;
pub use power::{SampleSize, mcnemar_power, mcnemar_samples, paired_t_power, paired_t_samples};
pub(crate) use power::{paired_t_runs, rate_samples, within_samples};
pub(crate) use student::z_quantile;
pub(crate) use tally::MeanTally;

/// Where an interval lies against a threshold: wholly on the side that
/// passes, wholly on the side that fails, or across it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Every value of the interval passes.
    Pass,
    /// Every value of the interval fails.
    Fail,
    /// The interval holds values that pass and values that fail.
    Inconclusive,
}

impl Decision {
    /// Where `interval` lies against `threshold` under `op`: for `>=`, it
    /// passes when its low end is at least the threshold and fails when its
    /// high end is below it (for `<=`, the other way round).
    #[doc(hidden)]
    pub fn of(interval: Interval, op: eval_datasets::Op, threshold: f64) -> Decision {
        match op {
            eval_datasets::Op::AtLeast if interval.low >= threshold => Decision::Pass,
            eval_datasets::Op::AtLeast if interval.high < threshold => Decision::Fail,
            eval_datasets::Op::AtMost if interval.high <= threshold => Decision::Pass,
            eval_datasets::Op::AtMost if interval.low > threshold => Decision::Fail,
            _ => Decision::Inconclusive,
        }
    }

    /// `pass`, `fail` or `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Fail => "fail",
            Decision::Inconclusive => "inconclusive",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an inconclusive verdict counts as — one setting for every front
/// end (`EVAL_INCONCLUSIVE`, `inconclusive = "..."`, `.inconclusive()`,
/// `--inconclusive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnInconclusive {
    /// The point estimate decides, as without an interval (seed 000's rule:
    /// a mean below its threshold fails); the verdict is still shown as
    /// inconclusive. The default.
    #[default]
    Estimate,
    /// Only a proven pass passes: strict CI.
    Fail,
    /// Only a proven failure fails: lenient CI.
    Pass,
}

impl OnInconclusive {
    /// `estimate`, `fail` or `pass`.
    pub fn parse(text: &str) -> Option<OnInconclusive> {
        match text.trim().to_ascii_lowercase().as_str() {
            "estimate" => Some(OnInconclusive::Estimate),
            "fail" => Some(OnInconclusive::Fail),
            "pass" => Some(OnInconclusive::Pass),
            _ => None,
        }
    }

    /// Whether something with `decision` and a point estimate that
    /// `estimate_passes` passes.
    pub fn passes(self, decision: Decision, estimate_passes: bool) -> bool {
        match (decision, self) {
            (Decision::Pass, _) => true,
            (Decision::Fail, _) => false,
            (Decision::Inconclusive, OnInconclusive::Estimate) => estimate_passes,
            (Decision::Inconclusive, OnInconclusive::Fail) => false,
            (Decision::Inconclusive, OnInconclusive::Pass) => true,
        }
    }

    /// `estimate`, `fail` or `pass`.
    pub fn as_str(self) -> &'static str {
        match self {
            OnInconclusive::Estimate => "estimate",
            OnInconclusive::Fail => "fail",
            OnInconclusive::Pass => "pass",
        }
    }
}

impl std::fmt::Display for OnInconclusive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval_datasets::Op;

    #[test]
    fn an_interval_decides_only_when_it_lies_on_one_side() {
        let i = |low, high| Interval { low, high };
        assert_eq!(Decision::of(i(0.6, 0.9), Op::AtLeast, 0.5), Decision::Pass);
        assert_eq!(Decision::of(i(0.5, 0.9), Op::AtLeast, 0.5), Decision::Pass);
        assert_eq!(Decision::of(i(0.1, 0.49), Op::AtLeast, 0.5), Decision::Fail);
        assert_eq!(
            Decision::of(i(0.4, 0.6), Op::AtLeast, 0.5),
            Decision::Inconclusive
        );
        assert_eq!(Decision::of(i(0.0, 0.05), Op::AtMost, 0.05), Decision::Pass);
        assert_eq!(Decision::of(i(0.06, 0.2), Op::AtMost, 0.05), Decision::Fail);
        assert_eq!(
            Decision::of(i(0.0, 0.2), Op::AtMost, 0.05),
            Decision::Inconclusive
        );
    }

    #[test]
    fn the_setting_maps_inconclusive_only() {
        use OnInconclusive::*;
        for policy in [Estimate, Fail, Pass] {
            assert!(policy.passes(Decision::Pass, false));
            assert!(!policy.passes(Decision::Fail, true));
        }
        assert!(Estimate.passes(Decision::Inconclusive, true));
        assert!(!Estimate.passes(Decision::Inconclusive, false));
        assert!(!Fail.passes(Decision::Inconclusive, true));
        assert!(Pass.passes(Decision::Inconclusive, false));
        assert_eq!(OnInconclusive::parse(" FAIL "), Some(Fail));
        assert_eq!(OnInconclusive::parse("strict"), None);
    }
}
