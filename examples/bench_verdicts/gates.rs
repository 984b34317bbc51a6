//! Gate A/A: the same agent (p = 0.7) run twice with a gate on the mean of
//! `contains` at 0.65 and at its true rate 0.7, N = 20, 40 and 60 samples:
//! how often `diff::compare` (what `evals report diff` and `--baseline`
//! call) finds a regression — split into metric and gate regressions — and
//! how often the rule of earlier versions (any gate met → missed) would have.

use eval_runtime::__cli::diff::GateOutcome;
use eval_runtime::__cli::diff::Outcome;
use eval_runtime::diff::{self, Allow};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::results::Results;
use eval_runtime::{Repeat, Sample};

use crate::sim::{AGENT, Agent, answer, evaluate, rate, samples};

/// One run of `samples` scored with `contains`, its mean gated at `gate`.
fn gated_run(samples: &[Sample], p: Agent, gate: &str) -> Results {
    *AGENT.lock().unwrap_or_else(|e| e.into_inner()) = p;
    let plan = PlanBuilder::new()
        .samples("qa", samples.to_vec(), "contains")
        .gate(gate)
        .repeat(Repeat::Runs(1));
    evaluate(plan, &eval_runtime::FnAgent(answer))
}

/// Counts over pairs of runs.
#[derive(Default)]
struct Tally {
    /// `compare` found a regression.
    any: usize,
    /// Of the paired comparison of `contains`.
    metric: usize,
    /// Of the gate (proven missed now, or the paired comparison regressed).
    gate: usize,
    /// The gate went met → missed (what earlier versions called a regression).
    old_rule: usize,
    /// The flip was inconclusive.
    inconclusive: usize,
}

/// The section: A/A pairs at each threshold and sample count.
pub(crate) fn section(n_pairs: usize) {
    println!(
        "\n== Gate A/A: the same agent (p = 0.7) twice, a gate on mean(contains), {n_pairs} pairs per row =="
    );
    let seventy: Agent = |_| 0.7;
    for threshold in ["0.65", "0.7"] {
        for n in [20, 40, 60] {
            let dataset = samples(n);
            let gate = format!("contains >= {threshold}");
            let mut t = Tally::default();
            for _ in 0..n_pairs {
                let a = gated_run(&dataset, seventy, &gate);
                let b = gated_run(&dataset, seventy, &gate);
                let d = diff::compare(&a, &b, 0.0, Allow::default()).expect("comparable runs");
                let metric = d
                    .comparisons
                    .iter()
                    .any(|c| c.outcome == Outcome::Regression);
                let gates = d.gates.iter().any(|g| g.outcome == GateOutcome::Regression);
                t.any += usize::from(!d.regressions().is_empty());
                t.metric += usize::from(metric);
                t.gate += usize::from(gates);
                t.old_rule += usize::from(metric || d.gates.iter().any(|g| g.flipped_to_missed()));
                t.inconclusive += usize::from(
                    d.gates
                        .iter()
                        .any(|g| g.outcome == GateOutcome::Inconclusive),
                );
            }
            println!(
                "gate {gate}, N = {n}: called a regression in {} (metric {}, gate {}); gate flips inconclusive in {}; the rule of earlier versions (any met → missed) would have failed {}",
                rate(t.any, n_pairs),
                t.metric,
                t.gate,
                t.inconclusive,
                rate(t.old_rule, n_pairs)
            );
        }
    }
}
