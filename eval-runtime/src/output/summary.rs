//! Per-dataset summaries, tallied one record at a time (a run of 100,000
//! samples never needs all its records at once), and the gate verdicts:
//! a gate is judged only over a complete dataset.
//!
//! A gate on the mean needs only a running sum; a gate on a percentile
//! keeps the values of its metric (only of the metrics so gated), and a
//! gate on what the engine measures (`latency_ms`, `ttft_ms`, `cost_usd`)
//! keeps each sample's measured value, whether or not the dataset is scored
//! with the metric. Only scored samples give values: a sample that could not
//! be scored misses every gate of its dataset, as for means.

use std::collections::BTreeMap;

use eval_core::metric::{Measure, Stat};

use super::results::{
    DatasetSummary, DatasetTerms, GateResult, MetricSummary, SampleRecord, UsageTotals, Verdict,
};
use crate::services::Usage;

/// Running per-dataset, per-metric tallies: records are added one at a time,
/// so a huge run never needs all its records at once.
#[derive(Default)]
pub(crate) struct Summaries {
    datasets: BTreeMap<String, Tally>,
    /// Per dataset: what its gates need kept (from the terms).
    keep: BTreeMap<String, Keep>,
}

/// What a dataset's gates need beyond sums.
#[derive(Default, Clone)]
struct Keep {
    /// Metrics with a gate on a percentile (not a measured one).
    values: Vec<String>,
    /// Measured quantities with a gate.
    measured: Vec<Measure>,
}

#[derive(Default)]
struct Tally {
    samples: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    metrics: Vec<MetricTally>,
    /// Per gated measure: the values of scored samples, and how many scored
    /// samples had none (no ttft: the agent did not stream; cost unknown).
    measured: Vec<(Measure, Vec<f64>, usize)>,
    /// Metrics whose scores a percentile gate needs.
    keep_values: Vec<String>,
    usage: UsageTotals,
}

/// One metric of a dataset, in first-seen order.
struct MetricTally {
    name: String,
    scored: usize,
    sum: f64,
    passed: usize,
    /// Every score, when a percentile gate needs them.
    values: Option<Vec<f64>>,
}

/// What one sample brings to its dataset's summary beyond its scores.
pub(crate) struct Measured {
    /// `(latency_ms, ttft_ms, cost_usd)` per run of the agent.
    pub per_run: [Option<f64>; 3],
    /// Agent, judge and embeddings usage.
    pub usage: [Usage; 3],
    /// The sample's cost (all runs), when known.
    pub cost_usd: Option<f64>,
    /// A price table is set and a model the sample used has no price.
    pub cost_unknown: bool,
}

impl Measured {
    pub(crate) fn of(record: &SampleRecord) -> Measured {
        Measured {
            per_run: [Measure::LatencyMs, Measure::TtftMs, Measure::CostUsd]
                .map(|m| record.measured(m)),
            usage: [record.agent, record.usage, record.embeddings],
            cost_usd: record.cost_usd,
            cost_unknown: record.cost_unknown.is_some(),
        }
    }

    /// From a sample's totals over its `runs` runs of the agent.
    pub(crate) fn from_totals(
        (latency_ms, ttft_ms, cost_usd): (f64, Option<f64>, Option<f64>),
        runs: u32,
        usage: [Usage; 3],
        cost_unknown: bool,
    ) -> Measured {
        let runs = f64::from(runs.max(1));
        Measured {
            per_run: [Some(latency_ms / runs), ttft_ms, cost_usd.map(|c| c / runs)],
            usage,
            cost_usd,
            cost_unknown,
        }
    }

    fn get(&self, m: Measure) -> Option<f64> {
        match m {
            Measure::LatencyMs => self.per_run[0],
            Measure::TtftMs => self.per_run[1],
            _ => self.per_run[2],
        }
    }
}

impl Summaries {
    /// Tallies for datasets summarised under `terms` (which says what their
    /// gates need kept).
    pub(crate) fn new(terms: &BTreeMap<String, DatasetTerms>) -> Summaries {
        let keep = terms
            .iter()
            .map(|(name, t)| {
                let mut keep = Keep::default();
                for g in &t.gates {
                    match g.measured() {
                        Some(m) if !keep.measured.contains(&m) => keep.measured.push(m),
                        Some(_) => {}
                        None if g.stat != Stat::Mean && !keep.values.contains(&g.metric) => {
                            keep.values.push(g.metric.clone())
                        }
                        None => {}
                    }
                }
                (name.clone(), keep)
            })
            .collect();
        Summaries {
            datasets: BTreeMap::new(),
            keep,
        }
    }

    pub(crate) fn add(&mut self, record: &SampleRecord) {
        self.add_scores(
            &record.dataset,
            record.verdict,
            record
                .metrics
                .iter()
                .map(|m| (m.name.as_str(), m.score, m.passed)),
            &Measured::of(record),
        );
    }

    /// Adds one sample of `dataset`: its verdict, each metric's
    /// `(name, score, passed)` and what was measured of it.
    pub(crate) fn add_scores<'a>(
        &mut self,
        dataset: &str,
        verdict: Verdict,
        metrics: impl Iterator<Item = (&'a str, Option<f64>, bool)>,
        measured: &Measured,
    ) {
        if !self.datasets.contains_key(dataset) {
            let keep = self.keep.get(dataset).cloned().unwrap_or_default();
            let tally = Tally {
                measured: keep.measured.iter().map(|m| (*m, Vec::new(), 0)).collect(),
                keep_values: keep.values,
                ..Tally::default()
            };
            self.datasets.insert(dataset.to_string(), tally);
        }
        let Some(t) = self.datasets.get_mut(dataset) else {
            return;
        };
        t.samples += 1;
        match verdict {
            Verdict::Pass => t.passed += 1,
            Verdict::Fail => t.failed += 1,
            Verdict::Error => t.errors += 1,
        }
        for (name, score, passed) in metrics {
            let i = match t.metrics.iter().position(|m| m.name == name) {
                Some(i) => i,
                None => {
                    let keep = t.keep_values.iter().any(|k| k == name);
                    t.metrics.push(MetricTally::new(name, keep));
                    t.metrics.len() - 1
                }
            };
            if let Some(score) = score {
                let entry = &mut t.metrics[i];
                entry.scored += 1;
                entry.sum += score;
                entry.passed += usize::from(passed);
                if let Some(v) = &mut entry.values {
                    v.push(score);
                }
            }
        }
        if verdict != Verdict::Error {
            for (m, values, missing) in &mut t.measured {
                match measured.get(*m) {
                    Some(v) => values.push(v),
                    None => *missing += 1,
                }
            }
        }
        let [agent, judge, embeddings] = measured.usage;
        t.usage.add(&UsageTotals {
            agent,
            judge,
            embeddings,
            cost_usd: measured.cost_usd,
            cost_unknown: usize::from(measured.cost_unknown),
        });
    }

    /// One summary per dataset with evaluated samples, by name, and whether
    /// the whole plan is there: every dataset of `terms` complete (one none
    /// of whose samples ran makes the run incomplete).
    pub(crate) fn finish_run(
        self,
        terms: &BTreeMap<String, DatasetTerms>,
    ) -> (Vec<DatasetSummary>, bool) {
        let datasets = self.finish(terms);
        let complete = datasets.iter().all(|d| d.complete)
            && terms
                .iter()
                .all(|(name, t)| t.planned == Some(0) || datasets.iter().any(|d| d.name == *name));
        (datasets, complete)
    }

    /// One summary per dataset with evaluated samples, by name. A gate is
    /// judged only when its dataset is complete (every planned sample is
    /// here; with no plan known, as in files of older versions, what is here
    /// counts as complete). Datasets none of whose samples ran are left out.
    pub(crate) fn finish(self, terms: &BTreeMap<String, DatasetTerms>) -> Vec<DatasetSummary> {
        let none = DatasetTerms::default();
        self.datasets
            .into_iter()
            .map(|(name, mut t)| {
                let terms = terms.get(&name).unwrap_or(&none);
                let complete = terms.planned.is_none_or(|p| t.samples >= p);
                for g in &terms.gates {
                    if !t.metrics.iter().any(|m| m.name == g.metric) {
                        t.metrics.push(MetricTally::new(&g.metric, false));
                    }
                }
                let errors = t.errors;
                let measured = std::mem::take(&mut t.measured);
                let metrics: Vec<MetricSummary> = t
                    .metrics
                    .into_iter()
                    .map(|m| {
                        let mean = (m.scored > 0).then(|| m.sum / m.scored as f64);
                        // A measured metric's values are what the engine
                        // measured; with no per-sample threshold, no pass rate.
                        let from_measured = eval_core::metric::lookup(&m.name)
                            .and_then(|i| i.measured())
                            .and_then(|k| measured.iter().find(|(x, ..)| *x == k));
                        let mut gates =
                            terms.gates.iter().filter(|g| g.metric == m.name).map(|g| {
                                let (value, missing) = match (from_measured, g.measured()) {
                                    (Some((_, values, missing)), Some(_)) => {
                                        (g.stat.of(values), *missing)
                                    }
                                    _ if g.stat == Stat::Mean => (mean, 0),
                                    _ => (g.stat.of(m.values.as_deref().unwrap_or(&[])), 0),
                                };
                                // A sample that could not be scored (or measured)
                                // must not vanish from a gate.
                                let unscored = errors + missing;
                                GateResult {
                                    gate: g.clone(),
                                    judged: complete,
                                    passed: complete
                                        && unscored == 0
                                        && value.is_some_and(|v| g.passes(v)),
                                    margin: value.map(|v| v - g.threshold),
                                    unscored,
                                    ran: (!complete)
                                        .then(|| (t.samples, terms.planned.unwrap_or(0))),
                                }
                            });
                        let gate = gates.next();
                        let more_gates = gates.collect();
                        let (scored, mean, pass_rate) = match from_measured {
                            Some((_, values, _)) if m.scored == 0 => {
                                (values.len(), Stat::Mean.of(values), None)
                            }
                            _ => (
                                m.scored,
                                mean,
                                (m.scored > 0).then(|| m.passed as f64 / m.scored as f64),
                            ),
                        };
                        MetricSummary {
                            name: m.name,
                            scored,
                            mean,
                            pass_rate,
                            gate,
                            more_gates,
                        }
                    })
                    .collect();
                let gates_passed = metrics.iter().flat_map(|m| m.gates()).all(|g| g.passed);
                DatasetSummary {
                    name,
                    samples: t.samples,
                    planned: terms.planned,
                    complete,
                    ci_gate: terms.ci_gate,
                    passed: t.passed,
                    failed: t.failed,
                    errors: t.errors,
                    gates_passed,
                    metrics,
                    gates: terms.gates.clone(),
                    usage: t.usage,
                }
            })
            .collect()
    }
}

impl MetricTally {
    fn new(name: &str, keep_values: bool) -> Self {
        MetricTally {
            name: name.to_string(),
            scored: 0,
            sum: 0.0,
            passed: 0,
            values: keep_values.then(Vec::new),
        }
    }
}
