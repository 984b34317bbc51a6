//! What every section of the bench shares: a seeded generator, random
//! in-process agents, one run through the engine, a rate with its interval.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use eval_runtime::__cli::verdict::Interval;
use eval_runtime::__cli::verdict::Level;
use eval_runtime::plan::PlanBuilder;
use eval_runtime::results::Results;
use eval_runtime::{Config, Repeat, Response, Runner, Sample};

/// A seeded generator (SplitMix64): the same draws every run of the bench.
pub(crate) static RNG: Mutex<u64> = Mutex::new(0x5eed_2026_1124_0001);

pub(crate) fn uniform() -> f64 {
    let mut s = RNG.lock().unwrap_or_else(|p| p.into_inner());
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Agent calls made by the bench's agents.
pub(crate) static CALLS: AtomicU64 = AtomicU64::new(0);

/// `n` samples (the same dataset for every agent: only the agent differs).
pub(crate) fn samples(n: usize) -> Vec<Sample> {
    (0..n)
        .map(|i| {
            let mut s = Sample::new(format!("question {i}")).with_expected("paris");
            s.id = format!("q{i:04}");
            s
        })
        .collect()
}

/// The agent of the current run: how likely it answers sample `i` right.
pub(crate) type Agent = fn(usize) -> f64;
pub(crate) static AGENT: Mutex<Agent> = Mutex::new(|_| 0.0);

/// The agent: right (`paris`) with its probability for the sample, else wrong.
pub(crate) async fn answer(sample: &Sample) -> Response {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let i: usize = sample.id[1..].parse().unwrap_or(0);
    let p = (*AGENT.lock().unwrap_or_else(|e| e.into_inner()))(i);
    Response::new(if uniform() < p { "paris" } else { "berlin" })
}

/// One run of `samples` scored with `metrics`, `repeat` runs per sample, by
/// the agent `p`.
pub(crate) fn run(samples: &[Sample], p: Agent, metrics: &str, repeat: Repeat) -> Results {
    *AGENT.lock().unwrap_or_else(|e| e.into_inner()) = p;
    let plan = PlanBuilder::new()
        .samples("qa", samples.to_vec(), metrics)
        .repeat(repeat);
    evaluate(plan, &eval_runtime::FnAgent(answer))
}

/// One run of `plan` through the engine, answered by `agent`.
pub(crate) fn evaluate(plan: PlanBuilder, agent: &dyn eval_runtime::Agent) -> Results {
    let runner = Runner::new().config(Config::empty());
    let prepared = runner.prepare(plan).expect("a valid plan");
    prepared
        .evaluate(agent, |_| {})
        .expect("the run ends")
        .results
}

/// `k of n = 4.5% (95% 2.4%..8.4%)`.
pub(crate) fn rate(k: usize, n: usize) -> String {
    let i = Interval::of_rate(k as u64, n as u64, Level::STANDARD).expect("n > 0");
    format!(
        "{k} of {n} = {:.1}% (95% {:.1}%..{:.1}%)",
        100.0 * k as f64 / n as f64,
        100.0 * i.low,
        100.0 * i.high
    )
}
