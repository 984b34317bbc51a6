//! Intervals and their levels, how an interval was made, and the
//! distribution-free interval of a percentile (order statistics). Means
//! get theirs in `bounded.rs` (a known range) and `tally.rs` (Student's t).

use statrs::distribution::{Binomial, DiscreteCDF};

use super::student::{t_quantile, z_quantile};

/// A closed interval `[low, high]`. In JSON an infinite end (an end a
/// sample cannot bound) is `null`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl serde::Serialize for Interval {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let finite = |x: f64| x.is_finite().then_some(x);
        let mut st = s.serialize_struct("Interval", 2)?;
        st.serialize_field("low", &finite(self.low))?;
        st.serialize_field("high", &finite(self.high))?;
        st.end()
    }
}

impl<'de> serde::Deserialize<'de> for Interval {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Ends {
            low: Option<f64>,
            high: Option<f64>,
        }
        let e = Ends::deserialize(d)?;
        Ok(Interval {
            low: e.low.unwrap_or(f64::NEG_INFINITY),
            high: e.high.unwrap_or(f64::INFINITY),
        })
    }
}

impl Interval {
    /// Wilson's interval of a rate of `passes` in `n`, for stating a
    /// measured rate (the bench's false-alarm rates). Verdicts use the exact
    /// (Clopper–Pearson) interval instead, whose ends are never wrong more
    /// often than they say. `None` for `n = 0`.
    pub fn of_rate(passes: u64, n: u64, level: Level) -> Option<Interval> {
        wilson(passes as f64, n as f64, level)
    }

    /// `[low, high]` cut to `range`.
    pub fn clamped(self, (min, max): (f64, f64)) -> Interval {
        Interval {
            low: self.low.max(min),
            high: self.high.min(max),
        }
    }

    /// Whether `x` lies inside.
    pub fn contains(self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// A confidence level: the share of intervals built this way that hold the
/// true value (0.95 by default).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Level(pub f64);

impl Default for Level {
    fn default() -> Self {
        Level::STANDARD
    }
}

impl Level {
    /// 95%.
    pub const STANDARD: Level = Level(0.95);

    /// The error rate `1 − level`.
    pub fn alpha(self) -> f64 {
        1.0 - self.0
    }

    /// The level whose intervals, looked at `looks` times, are all right
    /// with probability `self` at least (Bonferroni: the error rate split
    /// evenly over the looks).
    pub fn split_over(self, looks: u32) -> Level {
        Level(1.0 - self.alpha() / f64::from(looks.max(1)))
    }

    /// The two-sided normal critical value `z(1 − α/2)` (1.96 at 95%).
    pub fn z(self) -> f64 {
        z_quantile(1.0 - self.alpha() / 2.0)
    }

    /// The two-sided Student's t critical value with `df` degrees of freedom.
    pub fn t(self, df: f64) -> f64 {
        t_quantile(1.0 - self.alpha() / 2.0, df)
    }
}

/// The Wilson score interval of a rate of `successes` in `n` trials
/// (Wilson 1927; Brown, Cai & DasGupta 2001 recommend it over the normal
/// approximation for small `n` and rates near 0 or 1):
/// `(k + z²/2)/(n + z²) ± z/(n + z²)·√(k(n − k)/n + z²/4)`. `None` for `n = 0`.
pub(crate) fn wilson(successes: f64, n: f64, level: Level) -> Option<Interval> {
    if n <= 0.0 {
        return None;
    }
    let z = level.z();
    let z2 = z * z;
    let centre = (successes + z2 / 2.0) / (n + z2);
    let half = z / (n + z2) * (successes * (n - successes) / n + z2 / 4.0).max(0.0).sqrt();
    // At k = 0 and k = n an end is exactly 0 or 1 (rounding would leave it
    // a hair inside, and a threshold of 1 could then look disproved).
    Some(Interval {
        low: if successes <= 0.0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if successes >= n {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    })
}

/// How an interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Clopper–Pearson's exact interval of a pass rate (every value 0 or
    /// 1, a fixed number of them).
    ClopperPearson,
    /// The betting interval of a mean in a known range (Waudby-Smith &
    /// Ramdas 2024): valid for any distribution, at every look.
    Betting,
    /// Student's t around a mean (a value without a finite range).
    T,
    /// Student's t with the cluster-robust standard error (CR1: Miller
    /// 2024's, times C/(C − 1)) on clusters − 1 degrees of freedom; for a
    /// bounded score, never narrower than the betting interval of the
    /// cluster means.
    TClustered,
    /// Order statistics around a percentile (distribution-free).
    OrderStatistics,
    /// Wilson's interval of a pass rate: files of earlier versions.
    Wilson,
}

/// The distribution-free interval of the `q` quantile (0 < q < 1) of the
/// population `sorted` (ascending) was drawn from: `[x_(l), x_(u)]`, the
/// order statistics whose ranks bound the number of values below the
/// quantile, `Binomial(n, q)`, with probability at least `level` (Hahn &
/// Meeker, *Statistical Intervals*, §5.2). An end beyond the sample is
/// infinite: 20 values cannot bound their 95th percentile from above.
pub(crate) fn quantile_interval(sorted: &[f64], q: f64, level: Level) -> Option<Interval> {
    let n = sorted.len();
    if n == 0 || !(0.0 < q && q < 1.0) {
        return None;
    }
    let binomial = Binomial::new(q, n as u64).ok()?;
    let tail = level.alpha() / 2.0;
    // l: the largest rank with P(B ≤ l − 1) ≤ α/2 (B values below the quantile).
    let mut l = 0usize;
    while l < n && binomial.cdf(l as u64) <= tail {
        l += 1;
    }
    // u: the smallest rank with P(B ≥ u) ≤ α/2, i.e. P(B ≤ u − 1) ≥ 1 − α/2.
    let mut u = n + 1;
    for k in 0..=n {
        if binomial.cdf(k as u64) >= 1.0 - tail {
            u = k + 1;
            break;
        }
    }
    let low = if l == 0 {
        f64::NEG_INFINITY
    } else {
        sorted[l - 1]
    };
    let high = if u > n { f64::INFINITY } else { sorted[u - 1] };
    Some(Interval { low, high })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn wilson_matches_hand_computed_values() {
        // 5 of 5 at 95%: z = 1.959964, z² = 3.841459; centre = (5 + 1.920729)
        // / 8.841459 = 0.782759; half = 1.959964 / 8.841459 · √(0 + 0.960365)
        // = 0.217241: [0.565518, 1].
        let i = wilson(5.0, 5.0, Level::STANDARD).unwrap();
        assert!(close(i.low, 0.565518, 1e-6), "{i:?}");
        assert_eq!(i.high, 1.0);
        // 7 of 10: centre (7 + 1.920729)/13.841459 = 0.644493; half =
        // 1.959964/13.841459·√(2.1 + 0.960365) = 0.247715: [0.396778, 0.892209].
        let i = wilson(7.0, 10.0, Level::STANDARD).unwrap();
        assert!(close(i.low, 0.396778, 1e-6), "{i:?}");
        assert!(close(i.high, 0.892209, 1e-6), "{i:?}");
        assert_eq!(wilson(0.0, 4.0, Level::STANDARD).unwrap().low, 0.0);
        assert!(wilson(0.0, 0.0, Level::STANDARD).is_none());
    }

    #[test]
    fn levels_split_over_looks() {
        assert!(close(Level::STANDARD.z(), 1.959964, 1e-6));
        let split = Level::STANDARD.split_over(5);
        assert!(close(split.0, 0.99, 1e-12));
        // z(0.995) = 2.575829.
        assert!(close(split.z(), 2.575829, 1e-6));
        // t(0.975, 4) = 2.776445.
        assert!(close(Level::STANDARD.t(4.0), 2.776445, 1e-6));
    }

    #[test]
    fn percentile_intervals_are_order_statistics() {
        // The median of 1..=10 at 95%: B ~ Bin(10, 0.5); P(B ≤ 1) = 11/1024 =
        // 0.0107 ≤ 0.025 < P(B ≤ 2) = 56/1024: l = 2. P(B ≤ 7) = 968/1024 =
        // 0.9453 < 0.975 ≤ P(B ≤ 8) = 1013/1024: u = 9. So [x_(2), x_(9)] = [2, 9].
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        let i = quantile_interval(&sorted, 0.5, Level::STANDARD).unwrap();
        assert_eq!((i.low, i.high), (2.0, 9.0));
        // 20 values cannot bound the 95th percentile from above:
        // P(B ≤ 19) = 1 − 0.95²⁰ = 0.6415 < 0.975.
        let sorted: Vec<f64> = (1..=20).map(f64::from).collect();
        let i = quantile_interval(&sorted, 0.95, Level::STANDARD).unwrap();
        assert_eq!(i.high, f64::INFINITY);
        assert!(i.low.is_finite());
        // An end the sample cannot bound is `null` in JSON, and reads back.
        let text = serde_json::to_string(&i).unwrap();
        assert!(text.ends_with(r#""high":null}"#), "{text}");
        assert_eq!(serde_json::from_str::<Interval>(&text).unwrap(), i);
    }
}
