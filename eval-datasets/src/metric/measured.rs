//! What the engine measures for each sample rather than computes from its
//! answer: [`Measure`] and the metrics `latency_ms`, `ttft_ms`, `cost_usd`.
//! No default threshold (a budget is the user's), lower is better, 0 and up.

use super::MetricKind;
use super::catalog::{MetricInfo, Op, Threshold};

/// A quantity the engine measures for each sample rather than computes from
/// its answer. Gates on them are judged over what was measured, whether or
/// not the dataset is scored with the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Time in the agent (every turn, retries included), milliseconds.
    LatencyMs,
    /// Time to the agent's first streamed token, milliseconds.
    TtftMs,
    /// What the sample cost in US dollars: agent, judge and embeddings
    /// tokens at the price table's prices.
    CostUsd,
}

impl Measure {
    /// Every measure.
    pub const ALL: [Measure; 3] = [Measure::LatencyMs, Measure::TtftMs, Measure::CostUsd];

    /// The measure a catalogue name stands for.
    pub fn of(name: &str) -> Option<Measure> {
        Measure::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The metric's name.
    pub const fn name(self) -> &'static str {
        match self {
            Measure::LatencyMs => "latency_ms",
            Measure::TtftMs => "ttft_ms",
            Measure::CostUsd => "cost_usd",
        }
    }
}

macro_rules! measured {
    ($measure:expr, $example:expr, $summary:literal) => {
        MetricInfo {
            name: $measure.name(),
            aliases: &[],
            op: Op::AtMost,
            threshold: Threshold::Required { example: $example },
            range: (0.0, f64::INFINITY),
            pass_fail: false,
            needs: &[],
            options: &[],
            summary: $summary,
            reference: "",
            build: |_| Ok(MetricKind::Measured($measure)),
        }
    };
}

/// The measured metrics.
pub(super) static METRICS: &[MetricInfo] = &[
    measured!(
        Measure::LatencyMs,
        2000.0,
        "time in the agent for the sample (every turn), milliseconds; lower is better, e.g. latency_ms <= 2000"
    ),
    measured!(
        Measure::TtftMs,
        500.0,
        "time to the agent's first streamed token, milliseconds (an agent that did not stream has none: an error); e.g. ttft_ms <= 500"
    ),
    measured!(
        Measure::CostUsd,
        0.01,
        "what the sample cost in USD: agent, judge and embeddings tokens at EVAL_PRICES' prices; e.g. cost_usd <= 0.01"
    ),
];
