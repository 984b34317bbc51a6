//! Sections 1–3: A/A comparisons, power, and the cost of `repeat = "auto"`.

use std::sync::atomic::Ordering;

use eval_runtime::__cli::diff::Outcome;
use eval_runtime::diff::{self, Allow};
use eval_runtime::results::Verdict;
use eval_runtime::{Repeat, Sample};

use crate::sim::{Agent, CALLS, rate, run, samples};

/// Pairs of runs: how many `compare` called a regression, how many the
/// earlier per-sample rule would have (a sample's score fell), the outcomes
/// (regression, improvement, no change, inconclusive) at ε = 0, and how
/// many were no change at ε = 0.1.
pub(crate) fn pairs(
    pairs: usize,
    samples: &[Sample],
    (old, new): (Agent, Agent),
    repeat: Repeat,
) -> (usize, usize, [usize; 4], usize) {
    let (mut regressions, mut per_sample, mut within_tenth) = (0, 0, 0);
    let mut outcomes = [0usize; 4];
    for _ in 0..pairs {
        let a = run(samples, old, "contains", repeat);
        let b = run(samples, new, "contains", repeat);
        let d = diff::compare(&a, &b, 0.0, Allow::default()).expect("comparable runs");
        if !d.regressions().is_empty() {
            regressions += 1;
        }
        if !d.worse().is_empty() {
            per_sample += 1;
        }
        let wide = diff::compare(&a, &b, 0.1, Allow::default()).expect("comparable runs");
        if wide.comparisons[0].outcome == Outcome::NoChange {
            within_tenth += 1;
        }
        let o = d.comparisons[0].outcome;
        outcomes[match o {
            Outcome::Regression => 0,
            Outcome::Improvement => 1,
            Outcome::NoChange => 2,
            _ => 3,
        }] += 1;
    }
    (regressions, per_sample, outcomes, within_tenth)
}

/// Sections 1 to 3.
pub(crate) fn sections(n_pairs: usize) {
    println!("== A/A: the same agent (p = 0.7), N = 200, {n_pairs} pairs of runs ==");
    let dataset = samples(200);
    let seventy: Agent = |_| 0.7;
    for repeat in [Repeat::Runs(1), Repeat::Runs(5)] {
        let (reg, per_sample, o, tenth) = pairs(n_pairs, &dataset, (seventy, seventy), repeat);
        println!(
            "repeat {repeat}: called a regression in {}; outcomes: {} regression, {} improvement, {} no change, {} inconclusive; no change within ±0.1 (--epsilon 0.1): {}",
            rate(reg, n_pairs),
            o[0],
            o[1],
            o[2],
            o[3],
            rate(tenth, n_pairs)
        );
        println!(
            "  the per-sample rule of earlier versions (a sample's score fell) would have failed {}",
            rate(per_sample, n_pairs)
        );
    }

    println!("\n== Power: p = 0.7 against p = 0.6, N = 500, {n_pairs} pairs ==");
    let dataset = samples(500);
    let (reg, _, o, _) = pairs(n_pairs, &dataset, (seventy, |_| 0.6), Repeat::Runs(1));
    println!(
        "detected as a regression in {}; outcomes: {} regression, {} improvement, {} no change, {} inconclusive",
        rate(reg, n_pairs),
        o[0],
        o[1],
        o[2],
        o[3]
    );

    println!(
        "\n== repeat = \"auto\" against repeat = 6 (the fewest runs that can prove a mean above 0.5): 85 always right, 10 always wrong, 5 right half the time =="
    );
    let mixed = samples(100);
    let agent: Agent = |i| match i {
        0..85 => 1.0,
        85..95 => 0.0,
        _ => 0.5,
    };
    for metrics in ["partial_match >= 0.5", "contains >= 0.5"] {
        let mut verdicts = Vec::new();
        let mut calls = Vec::new();
        for repeat in [Repeat::Runs(6), Repeat::Auto { max: 10 }] {
            let before = CALLS.load(Ordering::Relaxed);
            let r = run(&mixed, agent, metrics, repeat);
            calls.push(CALLS.load(Ordering::Relaxed) - before);
            verdicts.push(
                r.samples
                    .iter()
                    .map(|s| (s.id.clone(), s.verdict))
                    .collect::<Vec<_>>(),
            );
        }
        // The clear-cut samples: the first 95.
        let clear = |v: &[(String, Verdict)], want: Verdict, range: std::ops::Range<usize>| {
            v.iter()
                .filter(|(id, _)| range.contains(&id[1..].parse::<usize>().unwrap_or(0)))
                .filter(|(_, got)| *got == want)
                .count()
        };
        let same_on_clear = verdicts[0]
            .iter()
            .zip(&verdicts[1])
            .filter(|((id, _), _)| id[1..].parse::<usize>().unwrap_or(99) < 95)
            .all(|(a, b)| a == b);
        println!(
            "{metrics}: repeat 6: {} calls, pass {} / fail {} of the clear-cut; auto: {} calls, pass {} / fail {}; same verdicts on the clear-cut: {same_on_clear}; calls auto / fixed = {:.2}",
            calls[0],
            clear(&verdicts[0], Verdict::Pass, 0..85),
            clear(&verdicts[0], Verdict::Fail, 85..95),
            calls[1],
            clear(&verdicts[1], Verdict::Pass, 0..85),
            clear(&verdicts[1], Verdict::Fail, 85..95),
            calls[1] as f64 / calls[0] as f64
        );
    }
}
