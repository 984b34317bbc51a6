//! How many samples (or runs per sample) a paired comparison needs to be
//! decided with a given probability — computed for the test that will be
//! run, not from the normal approximation: the paired t test's power from
//! the noncentral t distribution (as statsmodels' `TTestPower`), the exact
//! McNemar test's by summing over the binomial outcomes it can see
//! (unconditional on the number of discordant pairs, as Connor 1987's
//! approximation is).

use statrs::distribution::{Binomial, Discrete, DiscreteCDF};
use statrs::function::gamma::ln_gamma;

use super::Level;
use super::student::{incomplete_beta, z_quantile};

/// Samples a comparison would need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleSize {
    /// The runs showed no difference at all (or one below floating-point
    /// noise): no number of samples is "enough to detect" it.
    NoDifference,
    /// This many, the fewest with the power asked for.
    Samples(u64),
    /// About this many: the normal approximation, where exact sums would
    /// cost more than they tell (tens of thousands of samples).
    About(u64),
    /// More than this many (beyond what is worth computing exactly).
    Beyond(u64),
}

/// Differences smaller than this (relative to their spread) are noise.
const NOISE: f64 = 1e-9;
/// Most samples computed exactly.
const MOST_PAIRED_T: u64 = 1_000_000_000;
const MOST_MCNEMAR: u64 = 2_000_000;

/// `P(T ≤ t)` for the noncentral t with `df` degrees of freedom and
/// noncentrality `delta`: Lenth's algorithm AS 243 (Applied Statistics
/// 38(1), 1989), the series of incomplete beta functions weighted by the
/// Poisson terms of δ²/2, to 10⁻¹³; for δ² beyond 1400 (where the weights
/// underflow) the normal approximation A&S 26.7.10.
pub(crate) fn noncentral_t_cdf(t: f64, df: f64, delta: f64) -> f64 {
    if t.is_nan() || df.is_nan() || delta.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t == f64::INFINITY {
        return 1.0;
    }
    if t == f64::NEG_INFINITY {
        return 0.0;
    }
    let (tt, del, flip) = if t < 0.0 {
        (-t, -delta, true)
    } else {
        (t, delta, false)
    };
    let lambda = del * del;
    let cdf = if lambda > 1400.0 {
        let z = (tt * (1.0 - 1.0 / (4.0 * df)) - del) / (1.0 + tt * tt / (2.0 * df)).sqrt();
        normal_cdf(z)
    } else {
        lenth_series(tt, df, del) + normal_cdf(-del)
    };
    let cdf = cdf.clamp(0.0, 1.0);
    if flip { 1.0 - cdf } else { cdf }
}

/// AS 243's sum for `t ≥ 0` (without its `Φ(−δ)` term).
fn lenth_series(t: f64, df: f64, del: f64) -> f64 {
    const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
    const LN_SQRT_PI: f64 = 0.572_364_942_924_700_1;
    let x = t * t / (t * t + df);
    if x <= 0.0 {
        return 0.0;
    }
    let lambda = del * del;
    let mut p = 0.5 * (-0.5 * lambda).exp();
    let mut q = SQRT_2_OVER_PI * p * del;
    // ½ − p, the Poisson mass not yet summed (exact for small λ).
    let mut s = -0.5 * (-0.5 * lambda).exp_m1();
    let mut a = 0.5;
    let b = 0.5 * df;
    let rxb = (1.0 - x).powf(b);
    let albeta = LN_SQRT_PI + ln_gamma(b) - ln_gamma(a + b);
    let mut xodd = incomplete_beta(a, b, x);
    let mut godd = 2.0 * rxb * (a * x.ln() - albeta).exp();
    let mut xeven = 1.0 - rxb;
    let mut geven = b * x * rxb;
    let mut sum = p * xodd + q * xeven;
    let mut en = 1.0;
    while en <= 5000.0 {
        a += 1.0;
        xodd -= godd;
        xeven -= geven;
        godd *= x * (a + b - 1.0) / a;
        geven *= x * (a + b - 0.5) / (a + 0.5);
        p *= lambda / (2.0 * en);
        q *= lambda / (2.0 * en + 1.0);
        s -= p;
        en += 1.0;
        sum += p * xodd + q * xeven;
        if 2.0 * s * (xodd - godd) <= 1e-13 {
            break;
        }
    }
    sum
}

fn normal_cdf(z: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2)
}

/// The power of the two-sided paired t test at `level` with `n` pairs
/// when the mean difference is `effect` standard deviations of the
/// differences: `P(|T| > t(1 − α/2, n − 1))`, T noncentral t on `n − 1`
/// degrees of freedom with noncentrality `effect·√n` (statsmodels'
/// `TTestPower().power`).
pub fn paired_t_power(effect: f64, n: u64, level: Level) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let df = (n - 1) as f64;
    let crit = level.t(df);
    let nc = effect.abs() * (n as f64).sqrt();
    (1.0 - noncentral_t_cdf(crit, df, nc)) + noncentral_t_cdf(-crit, df, nc)
}

/// The fewest pairs (at least 2) with which the paired t test at `level`
/// detects a mean difference of `delta` (differences of standard
/// deviation `sd`) with probability `power`.
pub fn paired_t_samples(sd: f64, delta: f64, level: Level, power: f64) -> SampleSize {
    if !sd.is_finite() || !delta.is_finite() {
        return SampleSize::NoDifference;
    }
    if delta.abs() <= NOISE * sd.max(f64::MIN_POSITIVE) || delta == 0.0 {
        return SampleSize::NoDifference;
    }
    if sd == 0.0 {
        return SampleSize::Samples(2);
    }
    let effect = delta.abs() / sd;
    fewest(MOST_PAIRED_T, power, |n| paired_t_power(effect, n, level))
}

/// The probability that the paired t interval at `level` of `n` pairs
/// lies within ±`epsilon` when the true mean difference is `delta`
/// (differences of standard deviation `sd`): both of its ends inside,
/// each end a one-sided test at α/2 (the two one-sided tests' power,
/// Schuirmann 1987, bounded below by the sum of the two minus one).
pub(crate) fn within_power(sd: f64, delta: f64, epsilon: f64, n: u64, level: Level) -> f64 {
    if n < 2 || sd <= 0.0 {
        return if delta.abs() < epsilon { 1.0 } else { 0.0 };
    }
    let df = (n - 1) as f64;
    let crit = level.t(df);
    let root = (n as f64).sqrt();
    let side = |gap: f64| 1.0 - noncentral_t_cdf(crit, df, gap * root / sd);
    (side(epsilon - delta) + side(epsilon + delta) - 1.0).max(0.0)
}

/// The fewest pairs with which the interval of a mean difference of
/// `delta` lies within ±`epsilon` with probability `power`.
pub(crate) fn within_samples(
    sd: f64,
    delta: f64,
    epsilon: f64,
    level: Level,
    power: f64,
) -> SampleSize {
    if !(sd.is_finite() && delta.is_finite()) || delta.abs() >= epsilon {
        return SampleSize::NoDifference;
    }
    fewest(MOST_PAIRED_T, power, |n| {
        within_power(sd, delta, epsilon, n, level)
    })
}

/// The power of McNemar's exact test (two-sided, at `level`) with `n`
/// pairs, each going pass → fail with probability `worse` and fail → pass
/// with probability `better`: the sum over the discordant counts `d` it
/// may see (`Binomial(n, worse + better)`, within 9 standard deviations of
/// their mean: the rest weighs less than 10⁻¹⁸) of the chance that their
/// split (`Binomial(d, worse/(worse + better))`) lands where the test
/// rejects (`2·P(X ≤ min(b, d − b)) < α`, X `Binomial(d, ½)`).
pub fn mcnemar_power(n: u64, worse: f64, better: f64, level: Level) -> f64 {
    let discordant = worse + better;
    if n == 0 || discordant <= 0.0 || discordant > 1.0 {
        return 0.0;
    }
    let Ok(counts) = Binomial::new(discordant, n) else {
        return 0.0;
    };
    let share = worse / discordant;
    let mean = n as f64 * discordant;
    let spread = 9.0 * (mean * (1.0 - discordant)).sqrt() + 9.0;
    let low = (mean - spread).max(0.0) as u64;
    let high = ((mean + spread).ceil() as u64).min(n);
    let mut edge = RejectionEdge::new(level.alpha());
    let mut total = 0.0;
    for d in low..=high {
        let Some(k) = edge.at(d) else {
            continue;
        };
        let Ok(split) = Binomial::new(share, d) else {
            continue;
        };
        // b ≤ k or b ≥ d − k.
        let reject = split.cdf(k) + split.sf(d - k - 1);
        total += counts.pmf(d) * reject;
    }
    total.min(1.0)
}

/// The exact McNemar test's rejection edge for each number of discordant
/// pairs `d`, asked in increasing order: the largest `k` with `2·P(X ≤ k)
/// < α`, X `Binomial(d, ½)` (the test rejects when the smaller count is at
/// most k). It never falls as d grows by one, and rises by at most one, so
/// each d costs a look or two.
struct RejectionEdge {
    alpha: f64,
    /// The last d asked and its edge (`None`: no split of d is significant).
    last: Option<(u64, Option<u64>)>,
}

impl RejectionEdge {
    fn new(alpha: f64) -> Self {
        RejectionEdge { alpha, last: None }
    }

    fn rejects(&self, d: u64, k: u64) -> bool {
        Binomial::new(0.5, d).is_ok_and(|half| 2.0 * half.cdf(k) < self.alpha)
    }

    /// The edge for `d`.
    fn at(&mut self, d: u64) -> Option<u64> {
        let start = match self.last {
            Some((prev, edge)) if prev + 1 == d => edge,
            // The first d asked: from the normal approximation, stepped
            // down to an edge.
            _ => {
                let z = z_quantile(1.0 - self.alpha / 2.0);
                let guess = (d as f64 / 2.0 - z * (d as f64).sqrt() / 2.0 - 1.0).floor();
                let mut k = guess.max(0.0) as u64;
                while k > 0 && !self.rejects(d, k) {
                    k -= 1;
                }
                self.rejects(d, k).then_some(k)
            }
        };
        let mut edge = start.or_else(|| self.rejects(d, 0).then_some(0));
        while let Some(k) = edge {
            if k < d / 2 && self.rejects(d, k + 1) {
                edge = Some(k + 1);
            } else {
                break;
            }
        }
        self.last = Some((d, edge));
        edge
    }
}

/// Counts beyond which the exact computations give way to the normal
/// approximation (said "about"): the exact test's discreteness matters
/// little there, and its sums grow with the count.
const EXACT_UP_TO: f64 = 20_000.0;

/// The fewest pairs (at least 2) with which McNemar's exact test at
/// `level` detects pass → fail and fail → pass rates of `worse` and
/// `better` with probability `power` (see `fewest_discrete`). Beyond
/// 20,000 pairs, Connor's (1987) normal approximation
/// `(z(1 − α/2)·√ψ + z(power)·√(ψ − δ²))² / δ²` (ψ = worse + better, δ
/// their difference), said to be about that many.
pub fn mcnemar_samples(worse: f64, better: f64, level: Level, power: f64) -> SampleSize {
    if !(worse.is_finite() && better.is_finite()) || (worse - better).abs() <= NOISE {
        return SampleSize::NoDifference;
    }
    let (psi, delta) = (worse + better, worse - better);
    let connor = ((level.z() * psi.sqrt()
        + z_quantile(power) * (psi - delta * delta).max(0.0).sqrt())
        / delta)
        .powi(2);
    fewest_discrete(connor, power, |n| mcnemar_power(n, worse, better, level))
}

/// The fewest n with `power_at(n) ≥ power` for a discrete test, whose
/// power does not rise steadily with n: found by bisection on its trend,
/// then the fewest of the 30 counts below that still have the power. When
/// the normal approximation `normal` says beyond 20,000, that, said about
/// (the exact sums would cost more than they tell).
fn fewest_discrete(normal: f64, power: f64, power_at: impl Fn(u64) -> f64) -> SampleSize {
    if normal > EXACT_UP_TO {
        return SampleSize::About(normal.ceil().min(u64::MAX as f64) as u64);
    }
    let found = fewest(MOST_MCNEMAR, power, &power_at);
    let SampleSize::Samples(n) = found else {
        return found;
    };
    let below = (n.saturating_sub(30)..n)
        .filter(|m| *m >= 2)
        .find(|m| power_at(*m) >= power);
    SampleSize::Samples(below.unwrap_or(n))
}

/// The probability that the exact (Clopper–Pearson) interval at `level`
/// of a pass rate over `n` samples lies wholly on the side of `threshold`
/// that the true `rate` is on: at or above it (the rate proven to meet a
/// `>=` gate: `P(X ≥ k | threshold) ≤ α/2` for the count k seen), or below
/// it (`P(X ≤ k | threshold) < α/2`), X binomial. 0 when the rate is on
/// the threshold.
pub(crate) fn rate_power(n: u64, rate: f64, threshold: f64, level: Level) -> f64 {
    let tail = level.alpha() / 2.0;
    let (Ok(null), Ok(truth)) = (Binomial::new(threshold, n), Binomial::new(rate, n)) else {
        return 0.0;
    };
    if rate > threshold {
        // The fewest passes k with P(X ≥ k) = sf(k − 1) ≤ α/2.
        let proves = |k: u64| k > 0 && null.sf(k - 1) <= tail;
        let Some(k) = first(0, n, proves) else {
            return 0.0;
        };
        if k == 0 { 1.0 } else { truth.sf(k - 1) }
    } else if rate < threshold {
        // The most passes k with P(X ≤ k) < α/2.
        let fails = |k: u64| null.cdf(k) < tail;
        if !fails(0) {
            return 0.0;
        }
        let k = first(0, n, |k| !fails(k)).map_or(n, |k| k - 1);
        truth.cdf(k)
    } else {
        0.0
    }
}

/// The first k in `low..=high` where `holds` (which, once it holds, holds
/// for every larger k), by bisection.
fn first(low: u64, high: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
    if !holds(high) {
        return None;
    }
    let (mut lo, mut hi) = (low, high);
    if holds(lo) {
        return Some(lo);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The fewest samples with which the exact interval of a pass rate of
/// `rate` lies wholly on its side of `threshold` with probability
/// `power` (see [`rate_power`]; found by [`fewest_discrete`]). Beyond
/// 20,000 samples, the normal
/// approximation `((z(1 − α/2)·√(t(1 − t)) + z(power)·√(r(1 − r))) / (r −
/// t))²`, said about.
pub(crate) fn rate_samples(rate: f64, threshold: f64, level: Level, power: f64) -> SampleSize {
    if !(rate.is_finite() && threshold.is_finite()) || (rate - threshold).abs() <= NOISE {
        return SampleSize::NoDifference;
    }
    let spread = |p: f64| (p * (1.0 - p)).max(0.0).sqrt();
    let normal = ((level.z() * spread(threshold) + z_quantile(power) * spread(rate))
        / (rate - threshold))
        .powi(2);
    fewest_discrete(normal, power, |n| rate_power(n, rate, threshold, level))
}

/// The fewest runs per sample (above `runs`, at most `most`) with which the
/// paired t test on `n` pairs detects `delta`, when a pair's difference
/// varies by `between` (variance between samples) plus twice the
/// run-to-run variance `within` over the runs averaged; `None` when no
/// such number of runs would do.
pub(crate) fn paired_t_runs(
    (n, delta): (u64, f64),
    (between, within): (f64, f64),
    runs: u32,
    most: u32,
    (level, power): (Level, f64),
) -> Option<u32> {
    if within <= 0.0 || n < 2 || delta == 0.0 {
        return None;
    }
    (runs + 1..=most).find(|k| {
        let sd = (between + 2.0 * within / f64::from(*k)).sqrt();
        paired_t_power(delta.abs() / sd, n, level) >= power
    })
}

/// The fewest n in `2..=most` with `power_at(n) ≥ power`, assuming it
/// grows with n: doubling to a bracket, then bisection.
fn fewest(most: u64, power: f64, power_at: impl Fn(u64) -> f64) -> SampleSize {
    if power_at(2) >= power {
        return SampleSize::Samples(2);
    }
    // power_at(low) < power throughout.
    let mut low = 2u64;
    let mut high = 4u64;
    loop {
        if high >= most {
            if power_at(most) < power {
                return SampleSize::Beyond(most);
            }
            high = most;
            break;
        }
        if power_at(high) >= power {
            break;
        }
        low = high;
        high *= 2;
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if power_at(mid) >= power {
            high = mid;
        } else {
            low = mid;
        }
    }
    SampleSize::Samples(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_noncentral_t_matches_scipy() {
        // scipy 1.17.1 `stats.nct.cdf(t, df, nc)`.
        for (t, df, nc, want) in [
            (2.0, 10.0, 1.0, 0.8076115625303752),
            (-1.5, 5.0, 0.5, 0.03926767466196869),
            (3.0, 30.0, 2.8, 0.5644974637636304),
            (1.96, 400.0, 2.8, 0.2006746409486538),
            (0.0, 3.0, -1.0, 0.8413447460685429),
            (5.0, 2.0, 3.0, 0.6894905962120523),
        ] {
            let got = noncentral_t_cdf(t, df, nc);
            assert!(
                (got - want).abs() < 1e-10,
                "nct({t}, {df}, {nc}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn paired_t_power_and_samples_match_statsmodels() {
        // statsmodels 0.15.0 `TTestPower().power(effect_size, nobs,
        // alpha=0.05, alternative="two-sided")`.
        for (effect, n, want) in [
            (0.1 / 0.67, 353, 0.7985923671913798),
            (0.5, 34, 0.8077775012792737),
            (0.2, 199, 0.8016910240370655),
            (1.0, 10, 0.8030968566327218),
            (0.05, 3142, 0.8000667584554337),
            (2.0, 5, 0.9088848681009402),
        ] {
            let got = paired_t_power(effect, n, Level::STANDARD);
            assert!(
                (got - want).abs() < 1e-9,
                "{effect} {n}: {got}, want {want}"
            );
        }
        // `solve_power(effect_size, alpha=0.05, power=0.8)`, rounded up:
        // 354.26 → 355 where the normal approximation said 353.
        for (sd, delta, want) in [
            (0.67, 0.1, 355),
            (1.0, 0.5, 34),
            (1.0, 0.2, 199),
            (1.0, 1.0, 10),
            (1.0, 0.05, 3142),
            (1.0, 2.0, 5),
            (1.0, 0.3, 90),
        ] {
            assert_eq!(
                paired_t_samples(sd, delta, Level::STANDARD, 0.8),
                SampleSize::Samples(want),
                "{sd} {delta}"
            );
        }
        assert_eq!(
            paired_t_samples(0.5, 0.0, Level::STANDARD, 0.8),
            SampleSize::NoDifference
        );
        // A difference that is floating-point noise is none.
        assert_eq!(
            paired_t_samples(0.5, 1e-17, Level::STANDARD, 0.8),
            SampleSize::NoDifference
        );
    }

    #[test]
    fn mcnemar_power_is_exact() {
        // 0.7 → 0.6 with independent answers: pass → fail 0.7·0.4 = 0.28,
        // fail → pass 0.3·0.6 = 0.18. By an independent sum in Python
        // (scipy.stats.binom): power 0.7742 at 354 pairs (the normal
        // approximation's count), 0.7803 at Connor's 359, and 377 the
        // fewest pairs with 80%.
        let p = |n| mcnemar_power(n, 0.28, 0.18, Level::STANDARD);
        assert!((p(354) - 0.7742234456055738).abs() < 1e-9, "{}", p(354));
        assert!((p(359) - 0.7802584011189431).abs() < 1e-9, "{}", p(359));
        assert_eq!(
            mcnemar_samples(0.28, 0.18, Level::STANDARD, 0.8),
            SampleSize::Samples(377)
        );
        assert_eq!(
            mcnemar_samples(0.1, 0.02, Level::STANDARD, 0.8),
            SampleSize::Samples(153)
        );
        assert_eq!(
            mcnemar_samples(0.05, 0.15, Level::STANDARD, 0.8),
            SampleSize::Samples(168)
        );
        assert_eq!(
            mcnemar_samples(0.2, 0.2, Level::STANDARD, 0.8),
            SampleSize::NoDifference
        );
    }

    #[test]
    fn a_pass_rate_is_proven_on_its_side_with_the_power_named() {
        // A rate of 0.75 against 0.7: by hand over the binomial, 30 of 30
        // samples prove 0.7 (P(X ≥ 30 | 0.7) = 0.7³⁰ ≤ 0.025)…
        assert!(rate_power(30, 0.75, 0.7, Level::STANDARD) > 0.0);
        let SampleSize::Samples(n) = rate_samples(0.75, 0.7, Level::STANDARD, 0.8) else {
            panic!("a count");
        };
        assert!(rate_power(n, 0.75, 0.7, Level::STANDARD) >= 0.8, "{n}");
        // …and the count is the fewest: the normal approximation,
        // ((1.96 + 0.8416)·√(0.75·0.25)/0.05)² = 589, is short of it.
        assert!(n > 589, "{n}");
        assert!(rate_power(589, 0.75, 0.7, Level::STANDARD) < 0.8);
        // Below the threshold: proven missed.
        let SampleSize::Samples(m) = rate_samples(0.6, 0.7, Level::STANDARD, 0.8) else {
            panic!("a count");
        };
        assert!(rate_power(m, 0.6, 0.7, Level::STANDARD) >= 0.8, "{m}");
        assert_eq!(
            rate_samples(0.7, 0.7, Level::STANDARD, 0.8),
            SampleSize::NoDifference
        );
        // So close that the exact sums would run to millions: about.
        assert!(matches!(
            rate_samples(0.699, 0.7, Level::STANDARD, 0.8),
            SampleSize::About(n) if n > 1_000_000
        ));
    }

    #[test]
    fn runs_and_equivalence_have_the_power_they_name() {
        // Differences varying 0.01 between samples and 0.09 run to run: at
        // K runs their variance is 0.01 + 0.18/K.
        let k = paired_t_runs((50, 0.1), (0.01, 0.09), 3, 100, (Level::STANDARD, 0.8)).unwrap();
        let power = |k: u32| {
            let sd = (0.01 + 0.18 / f64::from(k)).sqrt();
            paired_t_power(0.1 / sd, 50, Level::STANDARD)
        };
        assert!(power(k) >= 0.8 && power(k - 1) < 0.8, "{k}");
        assert!(paired_t_runs((50, 0.01), (0.01, 0.09), 3, 100, (Level::STANDARD, 0.8)).is_none());
        // Within ±0.1 when the difference is 0.02 and sd 0.3.
        let SampleSize::Samples(n) = within_samples(0.3, 0.02, 0.1, Level::STANDARD, 0.8) else {
            panic!("a count");
        };
        assert!(within_power(0.3, 0.02, 0.1, n, Level::STANDARD) >= 0.8);
        assert!(within_power(0.3, 0.02, 0.1, n - 1, Level::STANDARD) < 0.8);
    }
}
