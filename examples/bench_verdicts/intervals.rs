//! Section 4: how often a sample's verdict over repeated runs is on the
//! wrong side of its threshold, simulated against a known truth.
//!
//! Each simulated sample has a true mean score μ (the agent's answers are
//! drawn from a distribution whose mean is computed exactly), runs through
//! the engine with `repeat = 3`, `5`, `10` or `"auto"` (at most 10), and is
//! scored as any run is. A verdict is on the wrong side when it is a
//! proven pass while μ is below the threshold, or a proven fail while μ is
//! at or above it. The truths are the hardest there are: μ at the
//! threshold (where a proven fail is wrong) and just below it (where a
//! proven pass is). The documented bound is 2.5% for each side (each end of
//! a 95% interval). The last column shows what the honesty costs: how
//! often a sample that is always right is proven to pass.
//!
//! Score kinds (each through a real metric):
//! * `0/1 contains`: a pass/fail metric, right with probability μ;
//! * `0/1 partial_match`: the same answers scored as a score in 0..1;
//! * `discrete`: `partial_match` against a two-word answer, each word
//!   given with probability r: scores 0, 2/3 or 1;
//! * `continuous`: `partial_match` against a hundred-word answer, each word
//!   given with probability 0.999 in a run that goes well and 0.5 in one
//!   that does not: a hundred and one values, bunched near 1 and near 2/3.

use std::sync::Mutex;

use eval_runtime::plan::PlanBuilder;
use eval_runtime::verdict::Decision;
use eval_runtime::{Repeat, Response, Sample};

use crate::sim::{evaluate, rate, uniform};

/// How one run's answer is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    ContainsZeroOne,
    PartialZeroOne,
    Discrete,
    Continuous,
}

/// Words of the continuous kind's expected answer; its two run qualities.
const WORDS: usize = 100;
const GOOD: f64 = 0.999;
const POOR: f64 = 0.5;

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::ContainsZeroOne => "0/1 contains",
            Kind::PartialZeroOne => "0/1 partial_match",
            Kind::Discrete => "discrete (3 values)",
            Kind::Continuous => "continuous (101 values)",
        }
    }

    fn metric(self, threshold: f64) -> String {
        match self {
            Kind::ContainsZeroOne => format!("contains >= {threshold}"),
            _ => format!("partial_match >= {threshold}"),
        }
    }

    fn expected(self) -> String {
        match self {
            Kind::ContainsZeroOne | Kind::PartialZeroOne => "paris".into(),
            Kind::Discrete => "alpha beta".into(),
            Kind::Continuous => (0..WORDS)
                .map(|i| format!("w{i}"))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// One run's answer when the kind's parameter is `param`.
    fn answer(self, param: f64) -> String {
        let words = |p: f64, names: &mut dyn Iterator<Item = String>| {
            let said: Vec<String> = names.filter(|_| uniform() < p).collect();
            if said.is_empty() {
                "nothing".to_string()
            } else {
                said.join(" ")
            }
        };
        match self {
            Kind::ContainsZeroOne | Kind::PartialZeroOne => {
                if uniform() < param { "paris" } else { "berlin" }.into()
            }
            Kind::Discrete => words(param, &mut ["alpha", "beta"].iter().map(|s| s.to_string())),
            Kind::Continuous => {
                let p = if uniform() < param { GOOD } else { POOR };
                words(p, &mut (0..WORDS).map(|i| format!("w{i}")))
            }
        }
    }

    /// The true mean score at `param`, exactly.
    fn mean(self, param: f64) -> f64 {
        match self {
            Kind::ContainsZeroOne | Kind::PartialZeroOne => param,
            // Both words: 1; one: precision 1, recall ½, F1 2/3.
            Kind::Discrete => param * param + 4.0 / 3.0 * param * (1.0 - param),
            Kind::Continuous => param * f1_mean(GOOD) + (1.0 - param) * f1_mean(POOR),
        }
    }

    /// The parameter whose true mean is `mu` (the mean rises with it).
    fn param_for(self, mu: f64) -> f64 {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.mean(mid) < mu {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

/// The mean token F1 of an answer holding each of [`WORDS`] words with
/// probability `p` (k words: precision 1, recall k/100, F1 2k/(100 + k)).
fn f1_mean(p: f64) -> f64 {
    let n = WORDS as f64;
    let mut ln_choose = 0.0f64;
    let mut total = 0.0;
    for k in 0..=WORDS {
        if k > 0 {
            ln_choose += ((n - k as f64 + 1.0) / k as f64).ln();
        }
        let kf = k as f64;
        let ln_pmf = ln_choose + kf * p.ln() + (n - kf) * (1.0 - p).ln();
        total += ln_pmf.exp() * 2.0 * kf / (n + kf);
    }
    total
}

/// The kind and parameter the agent answers with.
static CURRENT: Mutex<(Kind, f64)> = Mutex::new((Kind::ContainsZeroOne, 0.0));

async fn agent(_: &Sample) -> Response {
    let (kind, param) = *CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    Response::new(kind.answer(param))
}

/// `n` samples of `kind`, run `repeat` times each against `threshold` by an
/// agent of true mean `mu`: how many were proven to pass and to fail.
fn verdicts(kind: Kind, threshold: f64, mu: f64, repeat: Repeat, n: usize) -> (usize, usize) {
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = (kind, kind.param_for(mu));
    let expected = kind.expected();
    let samples: Vec<Sample> = (0..n)
        .map(|i| {
            let mut s = Sample::new(format!("question {i}")).with_expected(expected.as_str());
            s.id = format!("q{i:05}");
            s
        })
        .collect();
    let plan = PlanBuilder::new()
        .samples("qa", samples, &kind.metric(threshold))
        .repeat(repeat);
    let results = evaluate(plan, &eval_runtime::FnAgent(agent));
    let decided = |want: Decision| {
        results
            .samples
            .iter()
            .filter(|s| s.metrics.first().and_then(|m| m.decision()) == Some(want))
            .count()
    };
    (decided(Decision::Pass), decided(Decision::Fail))
}

/// Section 4, `n` samples per cell; returns the largest wrong-side rate
/// seen (its count and total).
pub(crate) fn section(n: usize) -> (usize, usize) {
    println!(
        "\n== Wrong-side verdicts of a sample over repeated runs: {n} samples per cell, bound 2.5% per side =="
    );
    println!(
        "kind | threshold | repeat | proven pass at μ just below (wrong) | proven fail at μ = threshold (wrong) | always right: proven pass"
    );
    let mut worst = (0usize, n);
    for kind in [
        Kind::ContainsZeroOne,
        Kind::PartialZeroOne,
        Kind::Discrete,
        Kind::Continuous,
    ] {
        for threshold in [0.5, 0.8, 0.9, 0.99] {
            let below = threshold - if threshold > 0.95 { 0.005 } else { 0.01 };
            for repeat in [
                Repeat::Runs(3),
                Repeat::Runs(5),
                Repeat::Runs(10),
                Repeat::Auto { max: 10 },
            ] {
                let (false_pass, _) = verdicts(kind, threshold, below, repeat, n);
                let (_, false_fail) = verdicts(kind, threshold, threshold, repeat, n);
                let (sure, _) = verdicts(kind, threshold, 1.0, repeat, n);
                for k in [false_pass, false_fail] {
                    if k * worst.1 > worst.0 * n {
                        worst = (k, n);
                    }
                }
                println!(
                    "{} | {threshold} | {repeat} | {} | {} | {:.0}%",
                    kind.label(),
                    rate(false_pass, n),
                    rate(false_fail, n),
                    100.0 * sure as f64 / n as f64
                );
            }
        }
    }
    println!("largest wrong-side rate: {}", rate(worst.0, worst.1));
    (worst.0, worst.1)
}

/// The issue's own case: an agent right 80% of the time, `partial_match >=
/// 0.9`, at `repeat = 5` and `auto` — how many samples are proven to pass.
pub(crate) fn eighty_percent_agent(n: usize) {
    println!("\n== An agent right 80% of the time, partial_match >= 0.9, {n} samples ==");
    for repeat in [Repeat::Runs(5), Repeat::Auto { max: 10 }] {
        let (pass, fail) = verdicts(Kind::PartialZeroOne, 0.9, 0.8, repeat, n);
        println!(
            "repeat {repeat}: proven pass {} (wrong: 0.8 < 0.9), proven fail {}",
            rate(pass, n),
            rate(fail, n)
        );
    }
}
