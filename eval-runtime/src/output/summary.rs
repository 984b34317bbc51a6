//! Per-dataset summaries, tallied one record at a time (a run of 100,000
//! samples never needs all its records at once), and the gate verdicts:
//! a gate is judged only over a complete dataset.

use std::collections::BTreeMap;

use super::results::{
    DatasetSummary, DatasetTerms, GateResult, MetricSummary, SampleRecord, Verdict,
};

/// Running per-dataset, per-metric tallies: records are added one at a time,
/// so a huge run never needs all its records at once.
#[derive(Default)]
pub(crate) struct Summaries {
    datasets: BTreeMap<String, Tally>,
}

#[derive(Default)]
struct Tally {
    samples: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    /// (name, scored, sum, passed), in first-seen order.
    metrics: Vec<(String, usize, f64, usize)>,
}

impl Summaries {
    pub(crate) fn add(&mut self, record: &SampleRecord) {
        self.add_scores(
            &record.dataset,
            record.verdict,
            record
                .metrics
                .iter()
                .map(|m| (m.name.as_str(), m.score, m.passed)),
        );
    }

    /// Adds one sample of `dataset`: its verdict and each metric's
    /// `(name, score, passed)`.
    pub(crate) fn add_scores<'a>(
        &mut self,
        dataset: &str,
        verdict: Verdict,
        metrics: impl Iterator<Item = (&'a str, Option<f64>, bool)>,
    ) {
        if !self.datasets.contains_key(dataset) {
            self.datasets.insert(dataset.to_string(), Tally::default());
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
            let i = match t.metrics.iter().position(|(n, ..)| n == name) {
                Some(i) => i,
                None => {
                    t.metrics.push((name.to_string(), 0, 0.0, 0));
                    t.metrics.len() - 1
                }
            };
            if let Some(score) = score {
                let entry = &mut t.metrics[i];
                entry.1 += 1;
                entry.2 += score;
                entry.3 += usize::from(passed);
            }
        }
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
                    if !t.metrics.iter().any(|(n, ..)| *n == g.metric) {
                        t.metrics.push((g.metric.clone(), 0, 0.0, 0));
                    }
                }
                let metrics: Vec<MetricSummary> =
                    t.metrics
                        .into_iter()
                        .map(|(metric, n, sum, passed)| {
                            let mean = (n > 0).then(|| sum / n as f64);
                            // A sample that could not be scored must not vanish from a gate.
                            let gate = terms.gates.iter().find(|g| g.metric == metric).map(|g| {
                                GateResult {
                                    gate: g.clone(),
                                    judged: complete,
                                    passed: complete
                                        && t.errors == 0
                                        && mean.is_some_and(|m| g.passes(m)),
                                    margin: mean.map(|m| m - g.threshold),
                                    unscored: t.errors,
                                    ran: (!complete)
                                        .then(|| (t.samples, terms.planned.unwrap_or(0))),
                                }
                            });
                            MetricSummary {
                                name: metric,
                                scored: n,
                                mean,
                                pass_rate: (n > 0).then(|| passed as f64 / n as f64),
                                gate,
                            }
                        })
                        .collect();
                DatasetSummary {
                    name,
                    samples: t.samples,
                    planned: terms.planned,
                    complete,
                    ci_gate: terms.ci_gate,
                    passed: t.passed,
                    failed: t.failed,
                    errors: t.errors,
                    gates_passed: metrics
                        .iter()
                        .all(|m| m.gate.as_ref().is_none_or(|g| g.passed)),
                    metrics,
                    gates: terms.gates.clone(),
                }
            })
            .collect()
    }
}
