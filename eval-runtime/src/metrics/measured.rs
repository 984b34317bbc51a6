//! The metrics the engine measures rather than computes from the answer:
//! `latency_ms` (time in the agent, every turn of the sample, retries
//! included), `ttft_ms` (time to the agent's first streamed token) and
//! `cost_usd` (see [`cost`](crate::cost)). Lower is better; each needs a
//! threshold (a budget). They are scored once the run is over — latency is
//! known when the agent has answered, the cost once the judge has — by
//! the engine, over the placeholders it leaves while the other
//! metrics are scored.

use eval_datasets::metric::{Measure, MetricKind, MetricSpec};

use crate::model::MetricError;
use crate::model::{MetricResult, SampleReport};

/// The result a measured metric has until [`fill`] scores it.
pub(crate) fn pending(spec: &MetricSpec) -> MetricResult {
    MetricResult::of(
        spec,
        Err("not measured: the sample was not evaluated".into()),
    )
}

/// Scores the measured metrics of one run of the agent from what was
/// measured of it: `report.latency`, `report.ttft` and `report.cost_usd`.
/// A run without a time to first token (the agent did not stream) or
/// without a known cost gets an error that says why, not 0.
pub(crate) fn fill(report: &mut SampleReport, specs: &[MetricSpec]) {
    for (spec, slot) in specs.iter().zip(report.metrics.iter_mut()) {
        let MetricKind::Measured(measure) = spec.kind else {
            continue;
        };
        let value = match measure {
            Measure::LatencyMs => Ok(report.latency.as_secs_f64() * 1000.0),
            Measure::TtftMs => report.ttft.map(|t| t.as_secs_f64() * 1000.0).ok_or_else(|| {
                MetricError::from(
                    "no time to first token: the agent's answer was not streamed (an HTTP agent streams with `stream: true` / text/event-stream; an in-process agent sets Response::ttft)",
                )
            }),
            Measure::CostUsd => match (report.cost_usd, &report.cost_unknown) {
                (Some(c), _) => Ok(c),
                (None, Some(why)) => Err(MetricError::from(format!("cost unknown: {why}"))),
                (None, None) => Err(MetricError::from(
                    "no price table: set EVAL_PRICES to a JSON file of model → {\"input\": USD per million tokens, \"output\": ...}",
                )),
            },
        };
        *slot = MetricResult::of(spec, value);
    }
}
