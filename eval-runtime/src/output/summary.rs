//! Per-dataset summaries, tallied one record at a time (a run of 100,000
//! samples never needs all its records at once), and the gate verdicts:
//! a gate is judged only over a complete dataset.
//!
//! No sample is left out of a metric's figures: one that could not be
//! scored (the agent failed, the sample timed out, the metric had no score)
//! counts in the pass rate as not passed and is counted as `unscored` beside
//! the mean, which only scores can make; and its dataset misses its gates.
//! A sample that errored before any metric ran counts as unscored for every
//! metric of its dataset.

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
    /// Samples that could not be scored and hold no metric at all (an agent
    /// error): unscored for every metric.
    bare_errors: usize,
    /// Per metric, in first-seen order.
    metrics: Vec<MetricTally>,
}

struct MetricTally {
    name: String,
    scored: usize,
    sum: f64,
    passed: usize,
    /// Samples holding the metric without a score.
    unscored: usize,
}

impl MetricTally {
    fn new(name: &str) -> Self {
        MetricTally {
            name: name.to_string(),
            scored: 0,
            sum: 0.0,
            passed: 0,
            unscored: 0,
        }
    }
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
        let mut any = false;
        for (name, score, passed) in metrics {
            any = true;
            let i = match t.metrics.iter().position(|m| m.name == name) {
                Some(i) => i,
                None => {
                    t.metrics.push(MetricTally::new(name));
                    t.metrics.len() - 1
                }
            };
            let entry = &mut t.metrics[i];
            match score {
                Some(score) => {
                    entry.scored += 1;
                    entry.sum += score;
                    entry.passed += usize::from(passed);
                }
                None => entry.unscored += 1,
            }
        }
        if !any && verdict == Verdict::Error {
            t.bare_errors += 1;
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
                    if !t.metrics.iter().any(|m| m.name == g.metric) {
                        t.metrics.push(MetricTally::new(&g.metric));
                    }
                }
                let bare_errors = t.bare_errors;
                let metrics: Vec<MetricSummary> =
                    t.metrics
                        .into_iter()
                        .map(|m| {
                            let (metric, n) = (m.name, m.scored);
                            let unscored = m.unscored + bare_errors;
                            let mean = (n > 0).then(|| m.sum / n as f64);
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
                            let applies = n + unscored;
                            MetricSummary {
                                name: metric,
                                scored: n,
                                unscored,
                                mean,
                                pass_rate: (applies > 0).then(|| m.passed as f64 / applies as f64),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::output::results::{DatasetTerms, Gate, Results, Verdict};
    use crate::output::test_record as record;

    #[test]
    fn samples_that_errored_are_never_left_out_of_a_pass_rate() {
        // The run: 14 samples answered (13 pass, 1 fails), 986 agent
        // errors. Over the samples answered the pass rate would be 13/14 =
        // 93%; over the dataset it is 13/1000 = 1.3%.
        let mut records = Vec::new();
        for k in 0..13 {
            records.push(record("rag", &format!("p{k}"), Verdict::Pass));
        }
        records.push(record("rag", "f", Verdict::Fail));
        for k in 0..986 {
            let mut r = record("rag", &format!("e{k}"), Verdict::Error);
            // An agent error: no metric ran.
            r.metrics.clear();
            records.push(r);
        }
        let gate = Gate::new("contains", eval_core::Op::AtLeast, 0.5);
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(1000), vec![gate], false),
        )]);
        let results = Results::new("evals", records, &terms);
        let d = &results.datasets[0];
        assert_eq!(
            (d.samples, d.passed, d.failed, d.errors),
            (1000, 13, 1, 986)
        );
        let m = &d.metrics[0];
        assert_eq!((m.scored, m.unscored), (14, 986));
        // mean over the 14 scores: 13/14.
        assert!((m.mean.unwrap() - 13.0 / 14.0).abs() < 1e-12);
        // pass rate over all 1000: 13/1000.
        assert_eq!(m.pass_rate, Some(0.013));
        let g = m.gate.as_ref().unwrap();
        assert!(g.judged && !g.passed, "mean 0.93 >= 0.5, but 986 unscored");
        assert_eq!(g.unscored, 986);
        let v = crate::output::RunVerdict::of(&results.datasets);
        assert_eq!(v.failed_samples, 987);
        assert!(!v.passed());
    }

    #[test]
    fn a_metric_without_a_score_counts_for_that_metric_only() {
        // Two metrics; sample c's judge failed on `faithfulness` only (it
        // still holds a `contains` score), sample d errored before scoring.
        let mut a = record("rag", "a", Verdict::Pass);
        let mut c = record("rag", "c", Verdict::Error);
        c.metrics[0].score = Some(1.0);
        c.metrics[0].passed = true;
        let mut unscored = c.metrics[0].clone();
        unscored.name = "faithfulness".into();
        unscored.score = None;
        unscored.passed = false;
        c.metrics.push(unscored);
        let mut scored = a.metrics[0].clone();
        scored.name = "faithfulness".into();
        scored.score = Some(0.5);
        scored.passed = false;
        a.metrics.push(scored);
        let mut d = record("rag", "d", Verdict::Error);
        d.metrics.clear();
        let results = Results::new("evals", vec![a, c, d], &BTreeMap::new());
        let m = &results.datasets[0].metrics;
        // contains: a 1 (pass), c 1 (pass), d unscored → 2/3 passed, mean 1.
        assert_eq!(
            (m[0].name.as_str(), m[0].scored, m[0].unscored),
            ("contains", 2, 1)
        );
        assert_eq!(m[0].mean, Some(1.0));
        assert_eq!(m[0].pass_rate, Some(2.0 / 3.0));
        // faithfulness: a 0.5 (fails), c and d unscored → 0/3, mean 0.5.
        assert_eq!((m[1].scored, m[1].unscored), (1, 2));
        assert_eq!(m[1].mean, Some(0.5));
        assert_eq!(m[1].pass_rate, Some(0.0));
    }
}
