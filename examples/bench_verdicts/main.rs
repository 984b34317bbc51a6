//! Verdicts under nondeterminism: `cargo run --release --example
//! bench_verdicts [-- --pairs 200] [--samples 1000] [--only SECTION]`
//! (sections: `comparisons`, `gates`, `intervals`, `power`, `clusters`).
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
//! 3. **`repeat = "auto"` against `repeat = 6`** (the fewest runs whose
//!    interval can lie above 0.5) on 100 samples of which 85
//!    are always answered right, 10 always wrong and 5 right half the
//!    time: the verdicts on the clear-cut ones under each, and the agent
//!    calls (and their ratio), for a score (`partial_match >= 0.5`, whose
//!    runs do not vary on a clear-cut sample) and for a pass/fail metric
//!    (`contains >= 0.5`, where every run carries one bit).
//! 4. **Wrong-side verdicts** of a sample over repeated runs (`intervals.rs`):
//!    0/1, discrete and continuous scores at thresholds 0.5, 0.8, 0.9 and
//!    0.99, `repeat = 3, 5, 10, "auto"`, `--samples` samples per cell, true
//!    means at and just below the threshold; and an 80%-right agent at
//!    `partial_match >= 0.9`.
//! 5. **"Needed at 80% power"** (`power.rs`): the samples an inconclusive
//!    comparison says would decide it, then pairs of runs of that many
//!    samples: the share detected, with its interval, against the exact
//!    power at that count.
//! 6. **Clustered gates** (`clusters.rs`): how often a gate's 95% interval
//!    holds the true mean with 3, 5, 10 and 30 clusters.

mod clusters;
mod comparisons;
mod gates;
mod intervals;
mod power;
mod sim;

use std::time::Instant;

fn main() {
    let mut n_pairs = 200usize;
    let mut n_samples = 1000usize;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--pairs" => n_pairs = args.next().and_then(|v| v.parse().ok()).unwrap_or(n_pairs),
            "--samples" => {
                n_samples = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(n_samples)
            }
            "--only" => only = args.next(),
            other => {
                eprintln!(
                    "unknown argument {other}; see the doc comment of examples/bench_verdicts/main.rs"
                );
                std::process::exit(2);
            }
        }
    }
    let started = Instant::now();

    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if wanted("comparisons") {
        comparisons::sections(n_pairs);
    }
    if wanted("gates") {
        gates::section(n_pairs);
    }
    if wanted("intervals") {
        intervals::section(n_samples);
        intervals::eighty_percent_agent(n_samples);
    }
    if wanted("power") {
        power::section(n_pairs);
    }
    if wanted("clusters") {
        clusters::section(n_pairs);
    }
    println!("\n(wall time {:.1} s)", started.elapsed().as_secs_f64());
}
