//! Gates judged in both runs, compared with the same honesty as samples: a
//! gate that flipped from met to missed is a regression only when the
//! evidence says so — the new run's gate is proven missed, or the paired
//! comparison of the gated metric regressed — otherwise the flip is
//! inconclusive, with the new run's interval and about how many samples
//! would decide it. A gate whose threshold, operator or statistic changed
//! asked another question: its flip is labelled so, never a verdict.

use eval_datasets::metric::Stat;

use super::model::{Comparison, Count, GateChange, GateNeeded, GateOutcome, Outcome, POWER};
use crate::model::{pair_gates, same_gate};
use crate::output::results::{Gate, GateResult, Results, Verdict};
use crate::stats::{Decision, Level, MeanTally, SampleSize, Scale, rate_samples, z_quantile};

/// `mean(contains) >= 0.7`.
fn written(g: &Gate) -> String {
    format!("{}({}) {} {}", g.stat, g.metric, g.op, g.threshold)
}

/// Every gate judged in both runs, with how its outcome moved and the
/// verdict on it; `comparisons` are the diff's paired comparisons.
pub(super) fn gate_changes(
    old: &Results,
    new: &Results,
    comparisons: &[Comparison],
) -> Vec<GateChange> {
    let mut out = Vec::new();
    for d in &new.datasets {
        let Some(before) = old.datasets.iter().find(|o| o.name == d.name) else {
            continue;
        };
        let was: Vec<&GateResult> = before.metrics.iter().flat_map(|m| m.gates()).collect();
        let now: Vec<&GateResult> = d.metrics.iter().flat_map(|m| m.gates()).collect();
        let pairs = pair_gates(
            &was.iter().map(|g| &g.gate).collect::<Vec<_>>(),
            &now.iter().map(|g| &g.gate).collect::<Vec<_>>(),
        );
        for (i, j) in pairs {
            let (Some(i), Some(j)) = (i, j) else { continue };
            let (a, b) = (was[i], now[j]);
            if !(a.judged && b.judged) {
                continue;
            }
            let compared = |o: Outcome| {
                comparisons
                    .iter()
                    .any(|c| c.dataset == d.name && c.metric == b.gate.metric && c.outcome == o)
            };
            let (regressed, rescored) = (
                compared(Outcome::Regression),
                compared(Outcome::OptionsChanged),
            );
            out.push(change(&d.name, (a, b), (regressed, rescored), new));
        }
    }
    out
}

/// One gate's change: `a` before, `b` now; `regressed` when the paired
/// comparison of its metric on the dataset is a regression, `rescored`
/// when the metric's options changed.
fn change(
    dataset: &str,
    (a, b): (&GateResult, &GateResult),
    (regressed, rescored): (bool, bool),
    new: &Results,
) -> GateChange {
    let same = same_gate(&a.gate, &b.gate);
    // A judged gate without a decision has no statistic (no sample was
    // scored: a miss), or is of a file of an earlier version: as then.
    let proven_missed = matches!(b.decision, Some(Decision::Fail) | None);
    let outcome = match (a.passed, b.passed) {
        _ if !same => GateOutcome::ThresholdChanged,
        _ if rescored => GateOutcome::OptionsChanged,
        (true, true) | (false, false) => GateOutcome::NoChange,
        (true, false) if proven_missed => GateOutcome::Regression,
        (true, false) if regressed && b.gate.stat == Stat::Mean => GateOutcome::Regression,
        (false, true) if b.decision == Some(Decision::Pass) => GateOutcome::Improvement,
        _ => GateOutcome::Inconclusive,
    };
    let value = b.margin.map(|m| b.gate.threshold + m);
    GateChange {
        dataset: dataset.to_string(),
        gate: written(&b.gate),
        was: (!same).then(|| written(&a.gate)),
        was_met: a.passed,
        met: b.passed,
        outcome,
        value,
        interval: b.interval,
        decision: b.decision,
        needed: (outcome == GateOutcome::Inconclusive).then(|| needed(dataset, b, value, new)),
    }
}

/// How many samples would prove gate `b` met or missed, should its mean
/// and the samples' spread in `new` stay as observed: for the pass rate of
/// 0/1 values, exactly (the fewest with which Clopper–Pearson's interval
/// lies on its side of the threshold with 80% probability); for a score,
/// at least the normal approximation (the betting interval that decides
/// needs more).
fn needed(dataset: &str, b: &GateResult, value: Option<f64>, new: &Results) -> GateNeeded {
    let g = &b.gate;
    let proves_met = value.is_some_and(|v| g.passes(v));
    let mut tally = MeanTally::new(false);
    let mut binary = true;
    for s in new
        .samples
        .iter()
        .filter(|s| s.dataset == dataset && s.verdict != Verdict::Error)
    {
        let value = match g.measured() {
            Some(m) => s.measured(m),
            None => s
                .metrics
                .iter()
                .find(|m| m.name == g.metric)
                .and_then(|m| m.score),
        };
        if let Some(x) = value {
            tally.add(x, None);
            binary &= x == 0.0 || x == 1.0;
        }
    }
    let n = tally.count() as u64;
    let pass_rate = binary && g.measured().is_none() && g.scale() == Scale::PassFail;
    let (samples, count) = match value {
        _ if g.stat != Stat::Mean || n < 2 => (None, Count::Exact),
        Some(v) if pass_rate => {
            let size = rate_samples(v, g.threshold, Level::STANDARD, POWER);
            match size {
                SampleSize::Samples(k) | SampleSize::About(k) | SampleSize::Beyond(k) => {
                    (Some(k.max(n + 1)), Count::of(size))
                }
                SampleSize::NoDifference => (None, Count::Exact),
            }
        }
        Some(v) => {
            let sd = tally.sd().unwrap_or(0.0);
            let delta = (v - g.threshold).abs();
            if sd <= 0.0 || !sd.is_finite() || delta < 1e-12 {
                (None, Count::AtLeast)
            } else {
                let z = Level::STANDARD.z() + z_quantile(POWER);
                let about = (z * sd / delta).powi(2).ceil().min(u64::MAX as f64) as u64;
                // Below the samples at hand (whose interval straddles), more
                // are needed all the same.
                (Some(about.max(n + 1)), Count::AtLeast)
            }
        }
        None => (None, Count::Exact),
    };
    GateNeeded {
        samples,
        proves_met,
        count,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::output::diff::diff;
    use crate::output::results::DatasetTerms;
    use crate::output::test_record as record;
    use crate::stats::OnInconclusive;

    /// A run of `passes` of 0/1 `contains` scores, gated on its mean at `threshold`.
    fn gated(passes: &[bool], threshold: f64, on: OnInconclusive) -> Results {
        let records = crate::output::test_records(passes);
        let gate = Gate::new("contains", eval_datasets::Op::AtLeast, threshold);
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(Some(passes.len()), vec![gate], false).on_inconclusive(on),
        )]);
        Results::new("evals", records, &terms)
    }

    /// `k` passes of `n`, the passes first from `offset` (wrapping).
    fn run_of(k: usize, n: usize, offset: usize) -> Vec<bool> {
        (0..n).map(|i| (i + n - offset) % n < k).collect()
    }

    #[test]
    fn a_flip_at_the_true_rate_is_inconclusive_not_a_regression() {
        // An A/A pair: 43 of 60 right (0.717, met at 0.7), then 40 of 60
        // (0.667, missed), the failures on other samples. Clopper–Pearson's
        // interval of 40/60 is 0.5331..0.7831: it straddles 0.7. The old
        // rule (any met → missed) called this a regression.
        let old = gated(&run_of(43, 60, 0), 0.7, OnInconclusive::Estimate);
        let new = gated(&run_of(40, 60, 7), 0.7, OnInconclusive::Estimate);
        let d = diff(&old, &new, 0.0);
        let g = &d.gates[0];
        assert!(g.flipped_to_missed(), "{g:?}");
        assert_eq!(g.decision, Some(Decision::Inconclusive));
        assert_eq!(g.outcome, GateOutcome::Inconclusive);
        assert_ne!(d.comparisons[0].outcome, Outcome::Regression);
        assert!(d.regressions().is_empty(), "{}", d.render());
        // A pass rate of 2/3 is proven below 0.7 (Clopper–Pearson's upper
        // end under it) with 80% power first at 1537 samples: by a scan in
        // Python over scipy's binomial, power 0.7990 at 1536, 0.8040 at
        // 1537 (the normal approximation said 1597).
        let n = g.needed.unwrap();
        assert!(!n.proves_met && n.count == Count::Exact);
        assert_eq!(n.samples, Some(1537));
        let text = d.render();
        assert!(
            text.contains("gate qa mean(contains) >= 0.7: met → missed: inconclusive: the mean now 0.6667 (95% 0.5331..0.7831) straddles 0.7; 1537 samples would prove it missed (80% power) at this mean and spread"),
            "{text}"
        );
        // Counted as failed (--inconclusive fail), the run's own gate is
        // missed; the comparison still cannot call it a regression.
        let strict = gated(&run_of(45, 60, 7), 0.7, OnInconclusive::Fail);
        let d = diff(&old, &strict, 0.0);
        assert!(!d.gates[0].met && d.gates[0].decision == Some(Decision::Inconclusive));
        assert_eq!(d.gates[0].outcome, GateOutcome::Inconclusive);
        assert!(d.regressions().is_empty());
    }

    #[test]
    fn a_proven_miss_or_a_paired_regression_is_a_regression() {
        // 30 of 60 now: Clopper–Pearson 0.368..0.632, wholly below 0.7; the paired
        // comparison (30 pass → fail, 17 fail → pass) is not significant.
        let old = gated(&run_of(43, 60, 0), 0.7, OnInconclusive::Estimate);
        let new = gated(&run_of(30, 60, 30), 0.7, OnInconclusive::Estimate);
        let d = diff(&old, &new, 0.0);
        assert_eq!(d.comparisons[0].discordant, Some((30, 17)));
        assert_ne!(d.comparisons[0].outcome, Outcome::Regression);
        assert_eq!(d.gates[0].decision, Some(Decision::Fail));
        assert_eq!(d.gates[0].outcome, GateOutcome::Regression);
        assert!(d.gates[0].needed.is_none());
        assert!(
            d.regressions()
                .iter()
                .any(|r| matches!(r, crate::output::diff::Regression::Gate(_)))
        );
        // A sample not scored misses the gate, proven.
        let mut broken = gated(&run_of(60, 60, 0), 0.7, OnInconclusive::Estimate);
        broken.samples[0] = record("qa", "s000", Verdict::Error);
        let terms = broken.terms();
        let broken = Results::new("evals", broken.samples, &terms);
        let d = diff(&old, &broken, 0.0);
        assert_eq!(d.gates[0].outcome, GateOutcome::Regression, "{d:#?}");
        // The mean dropped from 1 to 0.8 on the same samples (12 pass →
        // fail, none back: McNemar p = 0.00049): the paired comparison is
        // a regression, and the gate at 0.85 (Clopper–Pearson 0.677..0.892, not
        // proven missed) flips with it.
        let all = gated(&[true; 60], 0.85, OnInconclusive::Estimate);
        let drop = gated(&run_of(48, 60, 0), 0.85, OnInconclusive::Estimate);
        let d = diff(&all, &drop, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::Regression);
        assert_eq!(d.gates[0].decision, Some(Decision::Inconclusive));
        assert_eq!(d.gates[0].outcome, GateOutcome::Regression);
        assert_eq!(d.regressions().len(), 2);
    }

    #[test]
    fn a_gate_is_an_improvement_only_when_proven_met() {
        let low = gated(&run_of(40, 60, 0), 0.7, OnInconclusive::Estimate);
        let barely = gated(&run_of(43, 60, 3), 0.7, OnInconclusive::Estimate);
        let d = diff(&low, &barely, 0.0);
        assert_eq!(d.gates[0].outcome, GateOutcome::Inconclusive);
        assert!(d.gates[0].needed.unwrap().proves_met);
        let high = gated(&run_of(57, 60, 0), 0.7, OnInconclusive::Estimate);
        let d = diff(&low, &high, 0.0);
        assert_eq!(d.gates[0].outcome, GateOutcome::Improvement);
        // Unchanged: met in both.
        let d = diff(&high, &high, 0.0);
        assert_eq!(d.gates[0].outcome, GateOutcome::NoChange);
    }
}
