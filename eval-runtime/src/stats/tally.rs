//! A running tally of values for their mean, its standard error (plain,
//! or cluster-robust when values share clusters) and Student's t interval.

use std::collections::BTreeMap;

use super::bounded::{Bets, Scale, betting};
use super::{Interval, Level, Method};

/// A running tally of values for their mean and its interval: count, mean
/// and sum of squared deviations (Welford's update, stable in one pass),
/// and per cluster the sums the cluster-robust standard error needs.
/// Memory: one entry per cluster, nothing per value.
#[derive(Debug, Clone, Default)]
pub(crate) struct MeanTally {
    n: usize,
    mean: f64,
    m2: f64,
    /// `cluster -> (sum, sum of squares, count)`, when clustered, in the
    /// clusters' order (a value without a cluster is its own, keyed by its
    /// place so that no named cluster can take its key).
    clusters: Option<BTreeMap<String, (f64, f64, usize)>>,
}

impl MeanTally {
    /// An empty tally; `clustered`: values come with their cluster.
    pub(crate) fn new(clustered: bool) -> Self {
        MeanTally {
            clusters: clustered.then(BTreeMap::new),
            ..MeanTally::default()
        }
    }

    /// Adds `value`, of `cluster` (a value without one is its own cluster).
    pub(crate) fn add(&mut self, value: f64, cluster: Option<&str>) {
        self.n += 1;
        let delta = value - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (value - self.mean);
        if let Some(map) = &mut self.clusters {
            let key = match cluster {
                Some(c) => c.to_string(),
                None => format!("\u{0}{}", self.n),
            };
            let e = map.entry(key).or_insert((0.0, 0.0, 0));
            e.0 += value;
            e.1 += value * value;
            e.2 += 1;
        }
    }

    /// Values added.
    pub(crate) fn count(&self) -> usize {
        self.n
    }

    /// Their mean (`None` for none).
    pub(crate) fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Their sample standard deviation (`None` for fewer than two).
    pub(crate) fn sd(&self) -> Option<f64> {
        (self.n > 1).then(|| (self.m2 / (self.n - 1) as f64).max(0.0).sqrt())
    }

    /// Clusters (values without one each count as one) when clustered.
    pub(crate) fn clusters(&self) -> Option<usize> {
        self.clusters.as_ref().map(BTreeMap::len)
    }

    /// The standard error of the mean and its degrees of freedom: `s/√n` on
    /// `n − 1`; when clustered, the cluster-robust standard error with the
    /// small-sample correction CR1 (Cameron & Miller 2015, §VI.B):
    /// `√(C/(C − 1) · Σ_c (Σ_{i∈c} (x_i − x̄))² / n²)` on `C − 1` degrees of
    /// freedom — Miller's equation (2024, eq. 4), whose diagonal uses `s²`,
    /// scaled so that with every value its own cluster it is `s/√n` again.
    pub(crate) fn se(&self) -> Option<(f64, f64)> {
        let sd = self.sd()?;
        let n = self.n as f64;
        let Some(map) = &self.clusters else {
            return Some((sd / n.sqrt(), n - 1.0));
        };
        let m = self.mean;
        let between: f64 = map
            .values()
            .map(|&(sum, _, count)| {
                let e = sum - count as f64 * m;
                e * e
            })
            .sum();
        let c = map.len() as f64;
        if c < 2.0 {
            return None;
        }
        let se2 = (c / (c - 1.0) * between / (n * n)).max(0.0);
        Some((se2.sqrt(), c - 1.0))
    }

    /// The t interval around the mean (clustered when the tally is).
    pub(crate) fn t_interval(&self, level: Level) -> Option<Interval> {
        let (se, df) = self.se()?;
        if df < 1.0 {
            return None;
        }
        let half = if se == 0.0 { 0.0 } else { level.t(df) * se };
        Some(Interval {
            low: self.mean - half,
            high: self.mean + half,
        })
    }

    /// The interval of a clustered mean on `scale`: the CR1 t interval,
    /// cut to the range; for a score in a finite range, widened to hold the
    /// betting interval of the cluster means (in the clusters' order), so
    /// that clusters whose values happen to agree cannot make it collapse.
    /// `None` unless clustered, with at least two clusters.
    pub(crate) fn clustered_interval(&self, level: Level, scale: Scale) -> Option<Interval> {
        let map = self.clusters.as_ref()?;
        let t = self.t_interval(level)?.clamped(scale.range());
        let (min, max) = scale.range();
        if !(min.is_finite() && max.is_finite()) {
            return Some(t);
        }
        let means: Vec<f64> = map
            .values()
            .map(|&(sum, _, count)| ((sum / count as f64 - min) / (max - min)).clamp(0.0, 1.0))
            .collect();
        let b = betting(&means, level, Bets::Horizon(means.len()));
        Some(Interval {
            low: t.low.min(min + b.low * (max - min)),
            high: t.high.max(min + b.high * (max - min)),
        })
    }

    /// [`clustered_interval`](Self::clustered_interval) with its method.
    pub(crate) fn clustered(&self, level: Level, scale: Scale) -> Option<(Interval, Method)> {
        self.clustered_interval(level, scale)
            .map(|i| (i, Method::TClustered))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn the_mean_interval_is_students_t() {
        // 0.6, 0.8, 1.0: mean 0.8, s = 0.2, half = 4.302653 · 0.2 / √3 = 0.496828.
        let mut tally = MeanTally::new(false);
        [0.6, 0.8, 1.0].iter().for_each(|v| tally.add(*v, None));
        let i = tally.t_interval(Level::STANDARD).unwrap();
        assert!(close(tally.mean().unwrap(), 0.8, 1e-12));
        assert!(close(i.low, 0.8 - 0.496828, 1e-6), "{i:?}");
        assert!(close(i.high, 0.8 + 0.496828, 1e-6), "{i:?}");
        let mut one = MeanTally::new(false);
        one.add(1.0, None);
        assert!(one.t_interval(Level::STANDARD).is_none());
    }

    #[test]
    fn clustered_standard_error_is_cr1() {
        // Values 1, 1 in cluster a and 0, 0 in cluster b: mean 0.5, the
        // clusters' summed residuals +1 and −1. CR1: C/(C − 1) · (1 + 1) /
        // n² = 2 · 2 / 16 = 0.25, on 2 − 1 = 1 degree of freedom. (Miller's
        // uncorrected form: 1/12 + 1/16 = 7/48, too small by a third.)
        let mut t = MeanTally::new(true);
        for (v, c) in [(1.0, "a"), (1.0, "a"), (0.0, "b"), (0.0, "b")] {
            t.add(v, Some(c));
        }
        let (se, df) = t.se().unwrap();
        assert!(close(se, 0.5, 1e-12), "{se}");
        assert_eq!(df, 1.0);
        assert_eq!(t.clusters(), Some(2));
        // The same values unclustered: s²/n = 1/12 on 3.
        let mut u = MeanTally::new(false);
        [1.0, 1.0, 0.0, 0.0].iter().for_each(|v| u.add(*v, None));
        let (se, df) = u.se().unwrap();
        assert!(close(se, (1.0f64 / 12.0).sqrt(), 1e-12));
        assert_eq!(df, 3.0);
        // Values each in its own cluster (or none): CR1 is s/√n again.
        let mut s = MeanTally::new(true);
        for (v, c) in [(1.0, Some("a")), (0.0, Some("b")), (1.0, None), (0.0, None)] {
            s.add(v, c);
        }
        let (se, df) = s.se().unwrap();
        assert!(close(se, (1.0f64 / 12.0).sqrt(), 1e-12));
        assert_eq!(df, 3.0);
        // One cluster: no standard error.
        let mut one = MeanTally::new(true);
        [1.0, 0.0].iter().for_each(|v| one.add(*v, Some("a")));
        assert!(one.se().is_none());
    }

    #[test]
    fn clusters_that_agree_do_not_collapse_a_bounded_interval() {
        // Three clusters whose values are all 1.0: the CR1 standard error
        // is 0, the interval is the betting interval of three means of 1.0.
        let mut t = MeanTally::new(true);
        for c in ["a", "b", "c"] {
            for _ in 0..4 {
                t.add(1.0, Some(c));
            }
        }
        let (i, method) = t
            .clustered(Level::STANDARD, Scale::Bounded(0.0, 1.0))
            .unwrap();
        assert_eq!(method, Method::TClustered);
        let b = betting(&[1.0; 3], Level::STANDARD, Bets::Horizon(3));
        assert!(close(i.low, b.low, 1e-12) && i.low < 0.5, "{i:?}");
        // Unbounded values keep the t interval (a point, here).
        let (i, _) = t
            .clustered(Level::STANDARD, Scale::Open(0.0, f64::INFINITY))
            .unwrap();
        assert_eq!((i.low, i.high), (1.0, 1.0));
    }
}
