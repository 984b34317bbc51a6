//! Verdicts under nondeterminism: `cargo run --release --example bench_verdicts [-- --pairs 200]`.
//!
//! Agents here are in-process and random: each answer to a sample is right
//! with the sample's probability (drawn fresh for every call, from a seeded
//! generator, so a run is repeatable), and `contains` scores it 1 or 0.
//! Every run goes through the engine ([`Runner`]) and every comparison
//! through [`diff::compare`], what `evals report diff` and `--baseline`
//! call. Prints:
//!
//! 1. **A/A**: the same agent (p = 0.7), N = 200 samples, evaluated twice,
//!    `--pairs` times: the share of pairs called a regression, with its
//!    95% (Wilson) interval, at one run per sample and at `repeat = 5`; and,
//!    for comparison, the share the per-sample rule of earlier versions
//!    ("a sample's score fell") would have failed; and how many pairs
//!    are "no change" when a movement within ±0.1 is (`--epsilon 0.1`).
//! 2. **Power**: p = 0.7 against p = 0.6, N = 500, `--pairs` times: the
//!    share of pairs called a regression (the detection rate), with its
//!    interval, and how often the other verdicts came out.
//! 3. **`repeat = "auto"` against `repeat = 5`** on 100 samples of which 85
//!    are always answered right, 10 always wrong and 5 right half the
//!    time: the verdicts on the clear-cut ones under each, and the agent
//!    calls (and their ratio), for a score (`partial_match >= 0.5`, whose
//!    runs do not vary on a clear-cut sample) and for a pass/fail metric
//!    (`contains >= 0.5`, where every run carries one bit).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use eval_runtime::diff::{self, Allow, Outcome};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::results::{Results, Verdict};
use eval_runtime::verdict::{Interval, Level};
use eval_runtime::{Config, Repeat, Response, Runner, Sample};

/// A seeded generator (SplitMix64): the same draws every run of the bench.
static RNG: Mutex<u64> = Mutex::new(0x5eed_2026_1124_0001);

fn uniform() -> f64 {
    let mut s = RNG.lock().unwrap_or_else(|p| p.into_inner());
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Agent calls made by the bench's agents.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// `n` samples (the same dataset for every agent: only the agent differs).
fn samples(n: usize) -> Vec<Sample> {
    (0..n)
        .map(|i| {
            let mut s = Sample::new(format!("question {i}")).with_expected("paris");
            s.id = format!("q{i:04}");
            s
        })
        .collect()
}

/// The agent of the current run: how likely it answers sample `i` right.
type Agent = fn(usize) -> f64;
static AGENT: Mutex<Agent> = Mutex::new(|_| 0.0);

/// The agent: right (`paris`) with its probability for the sample, else wrong.
async fn answer(sample: &Sample) -> Response {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let i: usize = sample.id[1..].parse().unwrap_or(0);
    let p = (*AGENT.lock().unwrap_or_else(|e| e.into_inner()))(i);
    Response::new(if uniform() < p { "paris" } else { "berlin" })
}

/// One run of `samples` scored with `metrics`, `repeat` runs per sample, by
/// the agent `p`.
fn run(samples: &[Sample], p: Agent, metrics: &str, repeat: Repeat) -> Results {
    *AGENT.lock().unwrap_or_else(|e| e.into_inner()) = p;
    let plan = PlanBuilder::new()
        .samples("qa", samples.to_vec(), metrics)
        .repeat(repeat);
    let runner = Runner::new().config(Config::empty());
    let prepared = runner.prepare(plan).expect("a valid plan");
    let agent = eval_runtime::FnAgent(answer);
    prepared
        .evaluate(&agent, |_| {})
        .expect("the run ends")
        .results
}

/// `k of n = 4.5% (95% 2.4%..8.4%)`.
fn rate(k: usize, n: usize) -> String {
    let i = Interval::of_rate(k as u64, n as u64, Level::STANDARD).expect("n > 0");
    format!(
        "{k} of {n} = {:.1}% (95% {:.1}%..{:.1}%)",
        100.0 * k as f64 / n as f64,
        100.0 * i.low,
        100.0 * i.high
    )
}

/// Pairs of runs: how many `compare` called a regression, how many the
/// earlier per-sample rule would have (a sample's score fell), the outcomes
/// (regression, improvement, no change, inconclusive) at ε = 0, and how
/// many were no change at ε = 0.1.
fn pairs(
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

fn main() {
    let mut n_pairs = 200usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--pairs" => n_pairs = args.next().and_then(|v| v.parse().ok()).unwrap_or(n_pairs),
            other => {
                eprintln!(
                    "unknown argument {other}; see the doc comment of examples/bench_verdicts.rs"
                );
                std::process::exit(2);
            }
        }
    }
    let started = Instant::now();

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
        "\n== repeat = \"auto\" against repeat = 5: 85 always right, 10 always wrong, 5 right half the time =="
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
        for repeat in [Repeat::Runs(5), Repeat::Auto { max: 10 }] {
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
            "{metrics}: repeat 5: {} calls, pass {} / fail {} of the clear-cut; auto: {} calls, pass {} / fail {}; same verdicts on the clear-cut: {same_on_clear}; calls auto / fixed = {:.2}",
            calls[0],
            clear(&verdicts[0], Verdict::Pass, 0..85),
            clear(&verdicts[0], Verdict::Fail, 85..95),
            calls[1],
            clear(&verdicts[1], Verdict::Pass, 0..85),
            clear(&verdicts[1], Verdict::Fail, 85..95),
            calls[1] as f64 / calls[0] as f64
        );
    }
    println!("\n(wall time {:.1} s)", started.elapsed().as_secs_f64());
}
