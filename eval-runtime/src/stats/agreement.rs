//! Agreement between a judge and human labels: the confusion matrix of
//! pass/fail verdicts, Cohen's κ with its interval, accuracy, true-positive
//! and true-negative rates; Spearman's ρ between scores.

use super::{Interval, Level};

/// Judge verdicts against human labels, "pass" being the positive class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Confusion {
    /// The judge and the human both say pass.
    pub true_pass: u64,
    /// The judge says pass, the human fail.
    pub false_pass: u64,
    /// The judge says fail, the human pass.
    pub false_fail: u64,
    /// Both say fail.
    pub true_fail: u64,
}

impl Confusion {
    /// Adds one labelled sample: the judge's verdict and the human's.
    pub fn add(&mut self, judge_passes: bool, human_passes: bool) {
        match (judge_passes, human_passes) {
            (true, true) => self.true_pass += 1,
            (true, false) => self.false_pass += 1,
            (false, true) => self.false_fail += 1,
            (false, false) => self.true_fail += 1,
        }
    }

    /// Samples counted.
    pub fn total(&self) -> u64 {
        self.true_pass + self.false_pass + self.false_fail + self.true_fail
    }
}

/// How far a judge agrees with human labels.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Agreement {
    /// The counts.
    pub confusion: Confusion,
    /// Share of samples on which they agree.
    pub accuracy: f64,
    /// Cohen's κ: agreement beyond chance (`None` when chance explains
    /// everything: both always say the same one thing).
    pub kappa: Option<f64>,
    /// κ's 95% interval (Cohen's large-sample standard error).
    pub kappa_interval: Option<Interval>,
    /// True-positive rate: of the samples humans pass, the share the judge
    /// passes (`None` when humans pass none).
    pub true_pass_rate: Option<f64>,
    /// True-negative rate: of the samples humans fail, the share the judge
    /// fails.
    pub true_fail_rate: Option<f64>,
}

/// Cohen's κ (Cohen 1960, "A coefficient of agreement for nominal
/// scales"): `(p_o − p_e) / (1 − p_e)`, `p_o` the observed agreement and
/// `p_e` the agreement expected by chance from the two raters' margins;
/// its interval `κ ± z·√(p_o(1 − p_o) / (n(1 − p_e)²))`, Cohen's
/// large-sample standard error, cut to −1..1.
pub(crate) fn cohen_kappa(confusion: Confusion, level: Level) -> Agreement {
    let c = confusion;
    let n = c.total() as f64;
    let ratio = |num: u64, den: u64| (den > 0).then(|| num as f64 / den as f64);
    let agree = c.true_pass + c.true_fail;
    let accuracy = ratio(agree, c.total()).unwrap_or(0.0);
    let (judge_pass, human_pass) = (
        (c.true_pass + c.false_pass) as f64,
        (c.true_pass + c.false_fail) as f64,
    );
    let (judge_fail, human_fail) = (n - judge_pass, n - human_pass);
    let (kappa, kappa_interval) = if n > 0.0 {
        let p_e = (judge_pass * human_pass + judge_fail * human_fail) / (n * n);
        if p_e < 1.0 {
            let kappa = (accuracy - p_e) / (1.0 - p_e);
            let se = (accuracy * (1.0 - accuracy) / (n * (1.0 - p_e).powi(2))).sqrt();
            let half = level.z() * se;
            (
                Some(kappa),
                Some(Interval {
                    low: (kappa - half).max(-1.0),
                    high: (kappa + half).min(1.0),
                }),
            )
        } else {
            (None, None)
        }
    } else {
        (None, None)
    };
    Agreement {
        confusion,
        accuracy,
        kappa,
        kappa_interval,
        true_pass_rate: ratio(c.true_pass, c.true_pass + c.false_fail),
        true_fail_rate: ratio(c.true_fail, c.true_fail + c.false_pass),
    }
}

/// Spearman's rank correlation ρ of paired values: Pearson's correlation
/// of their ranks, tied values sharing the mean of their ranks; with its
/// interval by Fisher's z transform, `tanh(atanh ρ ± z/√(n − 3))`. `None`
/// for fewer than three pairs or when one side does not vary.
pub(crate) fn spearman(pairs: &[(f64, f64)], level: Level) -> Option<(f64, Option<Interval>)> {
    let n = pairs.len();
    if n < 3 {
        return None;
    }
    let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let (rx, ry) = (ranks(&xs), ranks(&ys));
    let mean = (n as f64 + 1.0) / 2.0;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mean) * (b - mean);
        sxx += (a - mean).powi(2);
        syy += (b - mean).powi(2);
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    let rho = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let interval = (n > 3 && rho.abs() < 1.0).then(|| {
        let half = level.z() / ((n - 3) as f64).sqrt();
        let z = rho.atanh();
        Interval {
            low: (z - half).tanh(),
            high: (z + half).tanh(),
        }
    });
    Some((rho, interval))
}

/// 1-based ranks, ties given the mean of the ranks they span.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|a, b| values[*a].total_cmp(&values[*b]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            out[order[k]] = rank;
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn kappa_matches_a_hand_computed_table() {
        // 20 both pass, 5 judge-only pass, 10 human-only pass, 15 both fail:
        // p_o = 35/50 = 0.7; p_e = (25·30 + 25·20)/2500 = 0.5; κ = 0.4;
        // SE = √(0.7·0.3 / (50·0.25)) = 0.129615; 95%: 0.4 ± 0.254040.
        let c = Confusion {
            true_pass: 20,
            false_pass: 5,
            false_fail: 10,
            true_fail: 15,
        };
        let a = cohen_kappa(c, Level::STANDARD);
        assert!(close(a.kappa.unwrap(), 0.4, 1e-12));
        assert!(close(a.accuracy, 0.7, 1e-12));
        let i = a.kappa_interval.unwrap();
        assert!(close(i.low, 0.4 - 0.254040, 1e-5), "{i:?}");
        assert!(close(i.high, 0.4 + 0.254040, 1e-5), "{i:?}");
        assert!(close(a.true_pass_rate.unwrap(), 20.0 / 30.0, 1e-12));
        assert!(close(a.true_fail_rate.unwrap(), 15.0 / 20.0, 1e-12));
        // Both always pass: chance explains the agreement, κ is undefined.
        let all = Confusion {
            true_pass: 5,
            ..Confusion::default()
        };
        assert_eq!(cohen_kappa(all, Level::STANDARD).kappa, None);
        // Perfect agreement on both classes: κ = 1.
        let perfect = Confusion {
            true_pass: 3,
            true_fail: 2,
            ..Confusion::default()
        };
        assert_eq!(cohen_kappa(perfect, Level::STANDARD).kappa, Some(1.0));
    }

    #[test]
    fn spearman_ranks_ties_by_their_mean() {
        // y = 5, 6, 7, 8, 7 ranks 1, 2, 3.5, 5, 3.5; Pearson with 1..5:
        // Σdxdy = 8, Σdx² = 10, Σdy² = 9.5: ρ = 8/√95 = 0.820783.
        let pairs: Vec<(f64, f64)> = [1.0, 2.0, 3.0, 4.0, 5.0]
            .into_iter()
            .zip([5.0, 6.0, 7.0, 8.0, 7.0])
            .collect();
        let (rho, interval) = spearman(&pairs, Level::STANDARD).unwrap();
        assert!(close(rho, 8.0 / 95f64.sqrt(), 1e-12), "{rho}");
        let i = interval.unwrap();
        assert!(i.low < rho && rho < i.high);
        assert_eq!(ranks(&[3.0, 1.0, 3.0]), vec![2.5, 1.0, 2.5]);
        assert!(spearman(&[(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)], Level::STANDARD).is_none());
    }
}
