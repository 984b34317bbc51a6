//! Section 5: does "N samples would be needed (80% power)" deliver 80%?
//!
//! For a known truth, the count a comparison prints is the one its
//! observed rates give; here the truth's own rates give it. Then pairs of
//! runs of that many samples are compared as `report diff` does, and the
//! share called a regression is the power actually delivered, beside the
//! exact power computed at that count and what the normal approximation
//! of earlier versions printed.

use eval_runtime::__cli::diff::Outcome;
use eval_runtime::__cli::verdict::{
    Level, SampleSize, mcnemar_power, mcnemar_samples, paired_t_power, paired_t_samples,
};
use eval_runtime::Repeat;
use eval_runtime::diff::{self, Allow};

use crate::sim::{Agent, rate, run, samples};

/// Pairs of runs (old agent `a`, new agent `b`) of `n` samples, `metrics`
/// at `repeat`: how many were called a regression.
fn detected(pairs: usize, n: usize, (a, b): (Agent, Agent), repeat: Repeat) -> usize {
    let dataset = samples(n);
    (0..pairs)
        .filter(|_| {
            let old = run(&dataset, a, "contains", repeat);
            let new = run(&dataset, b, "contains", repeat);
            let d = diff::compare(&old, &new, 0.0, Allow::default()).expect("comparable runs");
            d.comparisons[0].outcome == Outcome::Regression
        })
        .count()
}

/// The normal approximation earlier versions printed:
/// `((z(0.975) + z(0.8))·sd/δ)²`, rounded up.
fn normal_approximation(sd: f64, delta: f64) -> u64 {
    let z = 1.959_963_984_540_054 + 0.841_621_233_572_914_3;
    (z * sd / delta).powi(2).ceil() as u64
}

fn count(size: SampleSize) -> u64 {
    match size {
        SampleSize::Samples(n) | SampleSize::About(n) | SampleSize::Beyond(n) => n,
        SampleSize::NoDifference => 0,
    }
}

/// Section 5.
pub(crate) fn section(pairs: usize) {
    let level = Level::STANDARD;
    println!(
        "\n== \"Needed at 80% power\": the count a comparison prints, then {pairs} pairs of runs of that many samples =="
    );
    let seventy: Agent = |_| 0.7;
    let sixty: Agent = |_| 0.6;
    // One run per sample: pass/fail pairs, the exact McNemar test.
    // Independent answers: pass → fail 0.7·0.4, fail → pass 0.3·0.6.
    let (worse, better) = (0.28, 0.18);
    let exact = count(mcnemar_samples(worse, better, level, 0.8));
    let sd = (worse + better - 0.01f64).sqrt();
    let old = normal_approximation(sd, 0.1);
    for (label, n) in [("printed now", exact), ("printed before", old)] {
        let k = detected(pairs, n as usize, (seventy, sixty), Repeat::Runs(1));
        println!(
            "McNemar, p 0.7 → 0.6, {label}: {n} samples; detected {}; exact power {:.3}",
            rate(k, pairs),
            mcnemar_power(n, worse, better, level)
        );
    }
    // Three runs per sample: each score the mean of three, the paired t
    // test. A difference's variance: 0.7·0.3/3 + 0.6·0.4/3 = 0.15.
    let sd = 0.15f64.sqrt();
    let exact = count(paired_t_samples(sd, 0.1, level, 0.8));
    let old = normal_approximation(sd, 0.1);
    for (label, n) in [("printed now", exact), ("printed before", old)] {
        let k = detected(pairs, n as usize, (seventy, sixty), Repeat::Runs(3));
        println!(
            "paired t, p 0.7 → 0.6 at repeat 3, {label}: {n} samples; detected {}; exact power {:.3}",
            rate(k, pairs),
            paired_t_power(0.1 / sd, n, level)
        );
    }
    // The same test's power at every count from 20 to 2000 for a range of
    // rates: the count printed always has at least 80%, the one before
    // has less (by up to how much, shown).
    let mut lowest_before = 1.0f64;
    let mut lowest_now = 1.0f64;
    for (worse, better) in [
        (0.28f64, 0.18f64),
        (0.1, 0.02),
        (0.05, 0.15),
        (0.3, 0.25),
        (0.02, 0.06),
    ] {
        let now = count(mcnemar_samples(worse, better, level, 0.8));
        let sd = (worse + better - (worse - better) * (worse - better)).sqrt();
        let before = normal_approximation(sd, (worse - better).abs());
        lowest_now = lowest_now.min(mcnemar_power(now, worse, better, level));
        lowest_before = lowest_before.min(mcnemar_power(before, worse, better, level));
    }
    println!(
        "exact McNemar power at the printed count, five rate pairs: lowest {lowest_now:.3} now, {lowest_before:.3} before"
    );
}
