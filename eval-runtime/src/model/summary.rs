//! What the results file says of each dataset: its gates and their
//! verdicts, its metrics' means and pass rates, what it used, and whether
//! the run was complete.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use eval_datasets::metric::{GateSpec, Measure, MetricSpec, Op, Stat};
use serde::{Deserialize, Serialize};

use super::Usage;
use super::written::WrittenMetric;
use crate::stats::Decision;
/// An aggregate gate: a statistic of a metric over a dataset's scored
/// samples — the mean (agentspec's `ciGate` meaning), or a percentile
/// (`p95(latency_ms) <= 3000`, see [`eval_datasets::metric::percentile`]) —
/// must be on the right side of a threshold. A gate on what the engine
/// measures (`latency_ms`, `ttft_ms`, `cost_usd`) takes each sample's
/// measured value per run of the agent, whether or not the dataset is
/// scored with the metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Gate {
    /// Metric name.
    pub metric: String,
    /// `>=` or `<=`.
    pub op: String,
    /// Threshold on the statistic.
    pub threshold: f64,
    /// The statistic: `mean` (files of earlier versions hold mean gates
    /// only), `p50`, `p95`...
    #[serde(default)]
    pub stat: Stat,
    /// Whether missing it fails the run. A manifest's thresholds under
    /// `ciGate: false` (or none) are judged and reported, not enforced
    /// (seed 000: exit 1 only when `ciGate: true`).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub enforced: bool,
    /// The scores of a metric the catalogue does not know by this name (a
    /// user's metric, an external scorer, a named judged criterion), as its
    /// definition declares them, when both ends are finite: what bounds its
    /// interval. `None` for the catalogue's metrics (known by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Whether that metric scores 1 or 0 only (its mean a pass rate).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pass_fail: bool,
}

impl Gate {
    /// A gate on the mean of `spec`'s metric, with `spec`'s operator and threshold.
    #[doc(hidden)]
    pub fn from_spec(spec: &MetricSpec) -> Self {
        Gate {
            metric: spec.name.clone(),
            op: spec.op.to_string(),
            threshold: spec.threshold,
            stat: Stat::Mean,
            enforced: true,
            range: None,
            pass_fail: false,
        }
        .scaled_as(spec)
    }

    /// The same gate on `spec`'s metric, with its declared scale when the
    /// catalogue does not know the metric by its name.
    pub(crate) fn scaled_as(mut self, spec: &MetricSpec) -> Self {
        if eval_datasets::metric::lookup_named(&spec.name).is_none() {
            let (min, max) = spec.range();
            self.range = (min.is_finite() && max.is_finite()).then_some([min, max]);
            self.pass_fail = spec.pass_fail();
        }
        self
    }

    /// The gate `gate` describes.
    #[doc(hidden)]
    pub fn from_gate(gate: &GateSpec) -> Self {
        Gate {
            stat: gate.stat,
            ..Gate::from_spec(&gate.spec)
        }
    }

    /// A gate on the mean of `metric`.
    #[doc(hidden)]
    pub fn new(metric: &str, op: Op, threshold: f64) -> Self {
        Gate {
            metric: metric.to_string(),
            op: op.to_string(),
            threshold,
            stat: Stat::Mean,
            enforced: true,
            range: None,
            pass_fail: false,
        }
    }

    /// The same gate, judged and reported but not failing the run when
    /// missed (`enforced = false`).
    #[doc(hidden)]
    pub fn enforced(mut self, enforced: bool) -> Self {
        self.enforced = enforced;
        self
    }

    /// The same gate on another statistic.
    #[doc(hidden)]
    pub fn with_stat(mut self, stat: Stat) -> Self {
        self.stat = stat;
        self
    }

    /// The scale of the gate's metric: the one it declares, else its name's.
    pub(crate) fn scale(&self) -> crate::stats::Scale {
        use crate::stats::Scale;
        match self.range {
            _ if self.pass_fail => Scale::PassFail,
            Some([min, max]) => Scale::of_range((min, max)),
            None => Scale::of_metric(&self.metric),
        }
    }

    /// What the engine measures for the gate's metric, if it is a measured one.
    #[doc(hidden)]
    pub fn measured(&self) -> Option<Measure> {
        eval_datasets::metric::lookup(&self.metric).and_then(|i| i.measured())
    }

    /// `<=` or `>=`.
    #[doc(hidden)]
    pub fn op(&self) -> Op {
        if self.op == Op::AtMost.to_string() {
            Op::AtMost
        } else {
            Op::AtLeast
        }
    }

    pub(crate) fn passes(&self, value: f64) -> bool {
        match self.op() {
            Op::AtMost => value <= self.threshold,
            Op::AtLeast => value >= self.threshold,
        }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stat {
            Stat::Mean => write!(f, "{} {} {}", self.metric, self.op, self.threshold),
            stat => write!(f, "{stat}({}) {} {}", self.metric, self.op, self.threshold),
        }
    }
}

/// A gate's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GateResult {
    /// The gate.
    #[serde(flatten)]
    pub gate: Gate,
    /// Whether it was judged: only over a complete dataset (every sample of
    /// the plan evaluated), never over a filtered or `--exact` subset.
    #[serde(default = "yes")]
    pub judged: bool,
    /// Judged and met (false when not judged, or when no sample was scored).
    pub passed: bool,
    /// `value - threshold`, the value being the gate's statistic (negative
    /// = short of a minimum), when there is one.
    pub margin: Option<f64>,
    /// Samples of the dataset that could not be scored: any fails the gate.
    #[serde(default)]
    pub unscored: usize,
    /// When not judged: samples evaluated and samples planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<(usize, usize)>,
    /// Samples of the dataset (0 in files of earlier versions).
    #[serde(default)]
    pub samples: usize,
    /// Values the statistic is over: the samples scored with the metric (or
    /// measured, for `latency_ms`, `ttft_ms`, `cost_usd`).
    #[serde(default)]
    pub scored: usize,
    /// The statistic's 95% interval: a mean's from its values
    /// (Clopper–Pearson's for a pass rate, the betting interval for a score
    /// in a known range, Student's t for a value without one; Student's t
    /// on the CR1 cluster-robust standard error, never narrower than the
    /// betting interval of the cluster means, when the dataset names a
    /// cluster field), a percentile's from order statistics (an end the
    /// sample cannot bound is infinite, written `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<crate::stats::Interval>,
    /// How the interval was computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::stats::Method>,
    /// Where the interval lies against the threshold, when judged (an
    /// inconclusive gate is met or missed as the dataset's setting says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Why the gate could not be judged though its dataset is complete (a
    /// `pass@3` gate over samples that ran fewer than 3 times): it is missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

fn is_no(b: &bool) -> bool {
    !*b
}

/// Aggregates of one metric over one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricSummary {
    /// Metric name.
    pub name: String,
    /// Samples with a score.
    pub scored: usize,
    /// Samples of the dataset without a score for it (the agent failed, the
    /// sample timed out, the metric failed): not in the mean, not passed.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub unscored: usize,
    /// Mean score over the scored samples (those `unscored` cannot be in it:
    /// when there are any, the dataset's gates are missed).
    pub mean: Option<f64>,
    /// Share of the samples it applies to (scored and unscored) that passed
    /// the per-sample threshold: an unscored sample did not pass.
    pub pass_rate: Option<f64>,
    /// Samples whose verdict on this metric is inconclusive (over repeated
    /// runs, an interval straddling the threshold).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub inconclusive: usize,
    /// The aggregate gate on this metric, if any (the first, when several
    /// statistics of it are gated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateResult>,
    /// Further gates on other statistics of this metric (`p50` beside `p95`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_gates: Vec<GateResult>,
}

impl MetricSummary {
    /// Every gate on this metric.
    pub fn gates(&self) -> impl Iterator<Item = &GateResult> {
        self.gate.iter().chain(&self.more_gates)
    }
}

/// Calls, tokens and cost of a dataset or a run: the agent's, the judge's
/// and the embeddings server's, as the samples recorded them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageTotals {
    /// The agent's calls and tokens (as it reported them).
    #[serde(default)]
    pub agent: Usage,
    /// Judge calls and tokens.
    #[serde(default)]
    pub judge: Usage,
    /// Embedding calls and tokens.
    #[serde(default)]
    pub embeddings: Usage,
    /// The cost of the samples whose cost is known, US dollars (`None`
    /// without a price table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Samples whose cost is unknown (a model missing from the price
    /// table): `cost_usd` leaves them out.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub cost_unknown: usize,
}

impl UsageTotals {
    /// Adds one sample's (or one total's) usage.
    pub fn add(&mut self, other: &UsageTotals) {
        self.agent.add(other.agent);
        self.judge.add(other.judge);
        self.embeddings.add(other.embeddings);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(UsageTotals::add_cost(a, b)),
            (a, b) => a.or(b),
        };
        super::usage::saturating(&mut self.cost_unknown, other.cost_unknown);
    }

    /// `a + b` for costs in US dollars, never infinite nor NaN: a sum that
    /// would be is `f64::MAX` (said once per process on stderr), so a gate
    /// on `cost_usd` is missed rather than met by a cost JSON cannot hold
    /// (it would be written `null`). Every sum of costs goes through it.
    pub(crate) fn add_cost(a: f64, b: f64) -> f64 {
        UsageTotals::finite_cost(a + b)
    }

    /// `cost` when it is a finite number, else `f64::MAX` (said once per
    /// process on stderr).
    pub(crate) fn finite_cost(cost: f64) -> f64 {
        if cost.is_finite() {
            return cost;
        }
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            crate::notice::warn(&format!(
                "a cost came to {cost} (a price or token count too large to add up): counted as {} US dollars",
                f64::MAX
            ));
        });
        f64::MAX
    }

    /// Nothing was used or counted.
    pub fn is_empty(&self) -> bool {
        *self == UsageTotals::default()
    }

    /// One line: `agent 10 calls, 1200 + 300 tokens; judge ...; cost $0.0123`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        for (what, u) in [
            ("agent", &self.agent),
            ("judge", &self.judge),
            ("embeddings", &self.embeddings),
        ] {
            if u.calls > 0
                || u.cache_hits > 0
                || u.tokens() > 0
                || u.not_credible > 0
                || u.unreported > 0
            {
                let mut part = format!("{what} {} call(s), {}", u.calls, u.tokens_text());
                if u.cached_tokens > 0 {
                    part.push_str(&format!(
                        " ({} prompt tokens from the server's prompt cache)",
                        u.cached_tokens
                    ));
                }
                if u.cache_hits > 0 {
                    part.push_str(&format!(", {} cached", u.cache_hits));
                }
                if u.not_credible > 0 {
                    part.push_str(&format!(
                        ", {} repl{} claiming over 10^12 tokens not counted (not credible)",
                        u.not_credible,
                        if u.not_credible == 1 { "y" } else { "ies" }
                    ));
                }
                parts.push(part);
            }
        }
        // A cost from estimated tokens is an estimate too.
        let about = if [self.agent, self.judge, self.embeddings]
            .iter()
            .any(|u| u.estimated_tokens > 0)
        {
            "~"
        } else {
            ""
        };
        match (self.cost_usd, self.cost_unknown) {
            (Some(c), 0) => parts.push(format!("cost {about}${}", usd(c))),
            (Some(c), n) => parts.push(format!(
                "cost {about}${} + unknown for {n} sample(s) (a model without a price, or no usage reported)",
                usd(c)
            )),
            (None, n) if n > 0 => parts.push(format!(
                "cost unknown for {n} sample(s) (a model without a price, or no usage reported)"
            )),
            _ => {}
        }
        if parts.is_empty() {
            "no calls counted".into()
        } else {
            parts.join("; ")
        }
    }
}

/// Aggregates of one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSummary {
    /// Dataset name.
    pub name: String,
    /// What the dataset says it is (a runevals document's
    /// `metadata.description`, an Unrag dataset's, a manifest entry's or a
    /// letta suite's `description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Samples evaluated.
    pub samples: usize,
    /// Samples the plan holds for this dataset (`None` in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<usize>,
    /// Every planned sample was evaluated.
    #[serde(default = "yes")]
    pub complete: bool,
    /// `ciGate`: samples are judged by the gates on the means (a sample then
    /// fails only when it cannot be scored).
    #[serde(default)]
    pub ci_gate: bool,
    /// Samples that passed (inconclusive ones counted as passed included).
    pub passed: usize,
    /// Samples with a failing metric (inconclusive ones counted as failed
    /// included).
    pub failed: usize,
    /// Samples that could not be scored.
    pub errors: usize,
    /// Samples whose verdict is inconclusive (also counted in `passed` or
    /// `failed`, as `on_inconclusive` says).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub inconclusive: usize,
    /// What an inconclusive sample or gate counts as.
    #[serde(default)]
    pub on_inconclusive: crate::stats::OnInconclusive,
    /// The sample field gates cluster by, when one is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_by: Option<String>,
    /// Per metric, in first-seen order.
    pub metrics: Vec<MetricSummary>,
    /// Gates declared for this dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    /// The metrics the dataset was asked, as written (name, options,
    /// operator, per-sample threshold), so two runs can be compared
    /// question for question (empty in files of earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metric_specs: Vec<WrittenMetric>,
    /// The samples name their own metrics (a runevals item's evaluators, or
    /// a dataset's own metrics by kind of sample): `metric_specs` are those
    /// of the samples evaluated, which parts of one run may not share.
    #[serde(default, skip_serializing_if = "is_no")]
    pub metrics_per_sample: bool,
    /// True when every gate was judged and passed (true when there are none).
    pub gates_passed: bool,
    /// Calls, tokens and cost of the dataset's samples.
    #[serde(default, skip_serializing_if = "UsageTotals::is_empty")]
    pub usage: UsageTotals,
}

/// What the plan says of one dataset, for its summary: how many samples it
/// holds, its gates, whether samples are judged by the gates.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct DatasetTerms {
    /// Samples the plan holds (`None`: unknown, results of older versions).
    pub planned: Option<usize>,
    /// Gates on the means.
    pub gates: Vec<Gate>,
    /// `ciGate`.
    pub ci_gate: bool,
    /// What an inconclusive gate counts as.
    pub inconclusive: crate::stats::OnInconclusive,
    /// The sample field gates cluster by.
    pub cluster: Option<String>,
    /// What the dataset says it is (shown in report headers).
    pub description: Option<String>,
    /// The metrics asked, as written.
    pub metric_specs: Vec<WrittenMetric>,
    /// The samples name their own metrics.
    pub metrics_per_sample: bool,
}

impl DatasetTerms {
    /// Terms with `planned` samples and `gates`.
    pub fn new(planned: Option<usize>, gates: Vec<Gate>, ci_gate: bool) -> Self {
        DatasetTerms {
            planned,
            gates,
            ci_gate,
            inconclusive: crate::stats::OnInconclusive::default(),
            cluster: None,
            description: None,
            metric_specs: Vec::new(),
            metrics_per_sample: false,
        }
    }

    /// The same terms, asking `metrics` (as written); `per_sample` when the
    /// samples name their own metrics.
    pub fn asking(mut self, metrics: Vec<WrittenMetric>, per_sample: bool) -> Self {
        self.metric_specs = metrics;
        self.metrics_per_sample = per_sample;
        self
    }

    /// The same terms, an inconclusive gate counting as `on` says.
    pub fn on_inconclusive(mut self, on: crate::stats::OnInconclusive) -> Self {
        self.inconclusive = on;
        self
    }

    /// The same terms, gates clustering samples by `field`.
    pub fn clustered_by(mut self, field: Option<String>) -> Self {
        self.cluster = field;
        self
    }

    /// The same terms, with the dataset's description.
    pub fn described(mut self, description: Option<String>) -> Self {
        self.description = description;
        self
    }
}

impl GateResult {
    /// ` (95% interval 0.6200..0.9100)`, or nothing without an interval.
    fn interval_text(&self) -> String {
        let end = |x: f64| {
            if x.is_finite() {
                format!("{x:.4}")
            } else {
                "unbounded".to_string()
            }
        };
        match self.interval {
            Some(i) => format!(" (95% interval {}..{})", end(i.low), end(i.high)),
            None => String::new(),
        }
    }
}

impl fmt::Display for GateResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f)?;
        if self.gate.enforced {
            Ok(())
        } else {
            f.write_str(", not enforced (ciGate is false)")
        }
    }
}

impl GateResult {
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = &self.gate;
        if !self.judged {
            let (ran, planned) = self.ran.unwrap_or((0, 0));
            return write!(
                f,
                "gate {g} not judged: {ran} of {planned} samples ran (gates judge whole datasets only)"
            );
        }
        let what = format!("{}({}) {} {}", g.stat, g.metric, g.op, g.threshold);
        if let Some(error) = &self.error {
            return write!(f, "{what} missed: cannot be judged: {error}");
        }
        let not = match g.measured() {
            // An unknown cost is not a pass: say why it is missing.
            Some(Measure::CostUsd) => "with an unknown cost (see their `cost_unknown`)",
            Some(_) => "not measured",
            None => "not scored",
        };
        match self.margin {
            // A sample without a score is not in the statistic, and misses
            // the gate whatever the others score: say so, never "missed by"
            // a margin the statistic does meet.
            Some(m) if self.unscored > 0 => {
                let of = if self.samples > 0 {
                    format!("{} of {} samples", self.unscored, self.samples)
                } else {
                    format!("{} sample(s)", self.unscored)
                };
                write!(
                    f,
                    "{what} missed: {of} {not} (counted as not passed); {} of the {} {} = {:.4}",
                    g.stat,
                    self.scored,
                    if g.measured().is_some() {
                        "measured"
                    } else {
                        "scored"
                    },
                    g.threshold + m
                )
            }
            Some(m) => write!(
                f,
                "{} {} = {:.4}{}, gate {} {} ({} by {:.4}{})",
                g.stat,
                g.metric,
                g.threshold + m,
                self.interval_text(),
                g.op,
                g.threshold,
                if self.passed { "met" } else { "missed" },
                m.abs(),
                if self.decision == Some(Decision::Inconclusive) {
                    "; inconclusive: its interval straddles the threshold"
                } else {
                    ""
                }
            ),
            None if self.samples > 0 => write!(
                f,
                "{what} missed: none of the {} samples was {}",
                self.samples,
                if g.measured() == Some(Measure::CostUsd) {
                    "of a known cost (see their `cost_unknown`)"
                } else if g.measured().is_some() {
                    "measured"
                } else {
                    "scored"
                }
            ),
            None => write!(f, "{what} missed: no sample was scored"),
        }
    }
}

/// What a run lacks, if it is incomplete (see [`Results::incompleteness`]).
pub(crate) fn incompleteness(
    complete: bool,
    datasets: &[DatasetSummary],
    missing: &[String],
) -> Option<String> {
    if complete {
        return None;
    }
    let mut parts: Vec<String> = datasets
        .iter()
        .filter(|d| !d.complete)
        .map(|d| match d.planned {
            Some(p) => format!("{} of {p} samples of `{}`", d.samples, d.name),
            None => format!("part of `{}`", d.name),
        })
        .collect();
    if !missing.is_empty() {
        parts.push(format!(
            "dataset(s) {} did not run",
            missing
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if parts.is_empty() {
        parts.push("marked incomplete".into());
    }
    Some(parts.join("; "))
}

/// The usage of a run: its datasets' together.
pub fn total_usage(datasets: &[DatasetSummary]) -> UsageTotals {
    let mut total = UsageTotals::default();
    for d in datasets {
        total.add(&d.usage);
    }
    total
}

/// The gates that were judged and missed in `datasets` and fail the run
/// (enforced ones), as `(dataset, gate result)`.
pub fn failed_gates(datasets: &[DatasetSummary]) -> Vec<(&str, &GateResult)> {
    datasets
        .iter()
        .flat_map(|d| {
            d.metrics
                .iter()
                .flat_map(MetricSummary::gates)
                .filter(|g| g.judged && !g.passed && g.gate.enforced)
                .map(move |g| (d.name.as_str(), g))
        })
        .collect()
}

/// A cost in US dollars for a usage line: 4 decimals (`0.0123`), or, for a
/// cost above 0 that would show as `0.0000`, two significant digits
/// (`0.000028`): a cost that is known is never shown as nothing.
pub(crate) fn usd(cost: f64) -> String {
    if cost <= 0.0 || cost >= 0.000_05 || !cost.is_finite() {
        return format!("{cost:.4}");
    }
    let decimals = (-cost.log10()).ceil() as usize + 1;
    format!("{cost:.*}", decimals.min(12))
}

pub(crate) fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

pub(super) fn is_zero_count(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_costs_keep_two_significant_digits() {
        assert_eq!(usd(0.0), "0.0000");
        assert_eq!(usd(0.00081), "0.0008");
        assert_eq!(usd(0.000_049), "0.000049");
        assert_eq!(usd(28e-6), "0.000028");
        assert_eq!(usd(3e-9), "0.0000000030");
        assert_eq!(usd(1.5), "1.5000");
    }

    use super::*;

    #[test]
    fn cost_sums_stop_at_the_largest_finite_number() {
        assert_eq!(UsageTotals::add_cost(0.25, 0.5), 0.75);
        assert_eq!(UsageTotals::add_cost(f64::MAX, f64::MAX), f64::MAX);
        assert_eq!(UsageTotals::add_cost(f64::INFINITY, 1.0), f64::MAX);
        assert_eq!(UsageTotals::add_cost(f64::NAN, 1.0), f64::MAX);
        let mut total = UsageTotals {
            cost_usd: Some(f64::MAX),
            cost_unknown: usize::MAX,
            ..UsageTotals::default()
        };
        total.agent.prompt_tokens = u64::MAX;
        total.add(&total.clone());
        assert_eq!(total.cost_usd, Some(f64::MAX));
        assert_eq!(total.cost_unknown, usize::MAX);
        assert_eq!(total.agent.prompt_tokens, u64::MAX);
    }

    #[test]
    fn the_usage_line_says_what_was_not_credible_and_never_overflows() {
        let mut total = UsageTotals::default();
        total.judge.calls = 2;
        total.judge.not_credible = 1;
        total.agent.prompt_tokens = u64::MAX;
        total.agent.completion_tokens = u64::MAX;
        total.agent.calls = u32::MAX;
        total.agent.cache_hits = u32::MAX;
        let line = total.line();
        assert!(
            line.contains(
                "judge 2 call(s), 0 + 0 tokens, 1 reply claiming over 10^12 tokens not counted (not credible)"
            ),
            "{line}"
        );
        assert!(
            line.starts_with(
                "agent 4294967295 call(s), 18446744073709551615 + 18446744073709551615 tokens"
            ),
            "{line}"
        );
    }
}
