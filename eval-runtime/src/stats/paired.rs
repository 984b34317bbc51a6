//! Paired comparisons of two runs over the same samples: the mean of the
//! per-sample differences with its interval and p-value (exact McNemar for
//! pass/fail values, Student's paired t otherwise) and Holm's correction
//! when many comparisons are made at once (the samples a comparison would
//! need are in `power.rs`).

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

use super::{Interval, Level, MeanTally};

/// How the p-value of a paired comparison was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedTest {
    /// McNemar's exact test on the discordant pairs (pass/fail values).
    McNemar,
    /// Student's paired t test.
    PairedT,
}

/// The paired comparison of `n` samples: the mean difference (new − old),
/// the standard deviation of the differences, the interval of the mean
/// difference, and the two-sided p-value of "no difference".
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Paired {
    /// Samples paired.
    pub n: usize,
    /// Mean of the differences.
    pub mean: f64,
    /// Sample standard deviation of the differences (0 for one sample).
    pub sd: f64,
    /// The interval of the mean difference (Student's t; a point when the
    /// differences do not vary).
    pub interval: Interval,
    /// Two-sided p-value of a mean difference of 0.
    pub p_value: f64,
    /// Which test gave the p-value.
    pub test: PairedTest,
    /// Pairs that went from pass to fail (`b`) and from fail to pass (`c`),
    /// when every value is 0 or 1.
    pub discordant: Option<(u64, u64)>,
}

/// Compares paired values `(old, new)`: differences `new − old`. Exact
/// McNemar when every value is 0 or 1, Student's paired t otherwise.
/// `None` for no pair.
pub(crate) fn paired(pairs: &[(f64, f64)], level: Level) -> Option<Paired> {
    if pairs.is_empty() {
        return None;
    }
    let mut tally = MeanTally::new(false);
    let binary = pairs
        .iter()
        .all(|(a, b)| (*a == 0.0 || *a == 1.0) && (*b == 0.0 || *b == 1.0));
    let (mut worse, mut better) = (0u64, 0u64);
    for (old, new) in pairs {
        let d = new - old;
        tally.add(d, None);
        if d < 0.0 {
            worse += 1;
        } else if d > 0.0 {
            better += 1;
        }
    }
    let n = pairs.len();
    let mean = tally.mean().unwrap_or(0.0);
    let sd = tally.sd().unwrap_or(0.0);
    let interval = tally.t_interval(level).unwrap_or(Interval {
        low: mean,
        high: mean,
    });
    let (p_value, test, discordant) = if binary {
        (
            mcnemar_exact(worse, better),
            PairedTest::McNemar,
            Some((worse, better)),
        )
    } else {
        (paired_t_p(mean, sd, n), PairedTest::PairedT, None)
    };
    Some(Paired {
        n,
        mean,
        sd,
        interval,
        p_value,
        test,
        discordant,
    })
}

/// The two-sided p-value of the paired t statistic `mean / (sd / √n)`.
/// Differences that do not vary are no proof by themselves: n equal
/// differences get the exact sign test's `2·½ⁿ` (two that agree: 0.5),
/// not the t statistic's infinity.
fn paired_t_p(mean: f64, sd: f64, n: usize) -> f64 {
    if mean == 0.0 {
        return 1.0;
    }
    if n < 2 || sd == 0.0 {
        return (2.0 * 0.5f64.powi(n.min(2000) as i32)).min(1.0);
    }
    let t = mean / (sd / (n as f64).sqrt());
    match StudentsT::new(0.0, 1.0, (n - 1) as f64) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).min(1.0),
        Err(_) => 1.0,
    }
}

/// McNemar's exact test (McNemar 1947; the exact binomial form): under "no
/// difference" the `b + c` discordant pairs split as `Binomial(b + c, ½)`;
/// the two-sided p-value is `min(1, 2·P(X ≤ min(b, c)))`.
pub(crate) fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    match Binomial::new(0.5, n) {
        Ok(dist) => (2.0 * dist.cdf(b.min(c))).min(1.0),
        Err(_) => 1.0,
    }
}

/// Holm's step-down adjustment (Holm 1979) of `p_values`, in their order:
/// sorted ascending, the `i`-th (from 0) becomes `(m − i)·p`, made
/// non-decreasing and at most 1. Rejecting where the adjusted value is
/// below α keeps the chance of any false rejection among the `m` at most α.
pub(crate) fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p_values[*a].total_cmp(&p_values[*b]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let value = ((m - rank) as f64 * p_values[i]).min(1.0);
        running = running.max(value);
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn mcnemar_exact_matches_the_binomial_by_hand() {
        // b = 2, c = 8: P(X ≤ 2 | n = 10) = (1 + 10 + 45) / 1024 = 56/1024;
        // p = 112/1024 = 0.109375.
        assert!(close(mcnemar_exact(2, 8), 112.0 / 1024.0, 1e-12));
        assert!(close(mcnemar_exact(8, 2), 112.0 / 1024.0, 1e-12));
        // b = 0, c = 6: 2 / 64 = 0.03125.
        assert!(close(mcnemar_exact(0, 6), 0.03125, 1e-12));
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
    }

    #[test]
    fn pass_fail_pairs_use_mcnemar_scores_use_paired_t() {
        // 10 samples: 2 go pass → fail, 8 fail → pass.
        let mut pairs = vec![(1.0, 0.0); 2];
        pairs.extend(vec![(0.0, 1.0); 8]);
        let p = paired(&pairs, Level::STANDARD).unwrap();
        assert_eq!(p.test, PairedTest::McNemar);
        assert_eq!(p.discordant, Some((2, 8)));
        assert!(close(p.mean, 0.6, 1e-12));
        assert!(close(p.p_value, 0.109375, 1e-12));
        // Scores: differences 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t = 0.2 /
        // (0.1/√3) = 3.4641 on 2 df: two-sided p = 0.0742 (t distribution:
        // p = 1 − t/√(t² + 2) exactly for 2 df = 1 − 3.4641/3.7417 = 0.07418).
        let p = paired(&[(0.5, 0.6), (0.5, 0.7), (0.5, 0.8)], Level::STANDARD).unwrap();
        assert_eq!(p.test, PairedTest::PairedT);
        let t = 0.2 / (0.1 / 3f64.sqrt());
        assert!(
            close(p.p_value, 1.0 - t / (t * t + 2.0).sqrt(), 1e-9),
            "{p:?}"
        );
        // half-width t(0.975, 2)·0.1/√3 = 4.302653 · 0.057735 = 0.248414.
        assert!(close(p.interval.low, 0.2 - 0.248414, 1e-6), "{p:?}");
        assert!(paired(&[], Level::STANDARD).is_none());
        // Two scores that each drop by 0.5: the sign test's 2·½² = 0.5,
        // not a proof; ten that do: 2·½¹⁰ = 0.00195.
        let p = paired(&[(1.0, 0.5), (0.8, 0.3)], Level::STANDARD).unwrap();
        assert!(close(p.p_value, 0.5, 1e-12), "{p:?}");
        let p = paired(&[(0.9, 0.4); 10], Level::STANDARD).unwrap();
        assert!(close(p.p_value, 2.0 / 1024.0, 1e-12), "{p:?}");
    }

    #[test]
    fn holm_adjusts_in_steps() {
        // p = 0.01, 0.04, 0.03 (m = 3): sorted 0.01, 0.03, 0.04 → 0.03, 0.06,
        // 0.04 → monotone 0.03, 0.06, 0.06; back in order: 0.03, 0.06, 0.06.
        let adjusted = holm(&[0.01, 0.04, 0.03]);
        for (a, b) in adjusted.iter().zip([0.03, 0.06, 0.06]) {
            assert!(close(*a, b, 1e-12), "{adjusted:?}");
        }
        assert_eq!(holm(&[0.6, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
