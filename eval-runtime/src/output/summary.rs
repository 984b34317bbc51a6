//! Per-dataset summaries, tallied one record at a time (a run of 100,000
//! samples never needs all its records at once), and the gate verdicts:
//! a gate is judged only over a complete dataset.
//!
//! A metric without a gate needs only running sums; a gated metric keeps
//! its values, in the results file's order (8 bytes a sample, only for the
//! metrics so gated): a percentile needs them, and so does the interval of
//! a mean that holds for any distribution (the betting interval bets on
//! them in order). A gate on what the engine measures (`latency_ms`,
//! `ttft_ms`, `cost_usd`) keeps each sample's measured value, whether or
//! not the dataset is scored with the metric. Only scored samples give values: a sample that could not
//! be scored misses every gate of its dataset, as for means.
//!
//! Every judged gate also gets an interval and a three-valued decision: a
//! mean's from its values (Clopper–Pearson's for a pass rate, the betting
//! interval for a score in a known range, Student's t for a value without
//! one; with a cluster field, Student's t on the CR1 cluster-robust
//! standard error, never narrower than the betting interval of the cluster
//! means), a percentile's from order statistics. A `pass@k` or `pass^k`
//! gate keeps each sample's runs and how many passed instead
//! (`runs_gate.rs`). Whether an inconclusive gate is met is the dataset's
//! [`OnInconclusive`] setting.
//!
//! No sample is left out of a metric's figures: one that could not be
//! scored (the agent failed, the sample timed out, the metric had no score)
//! counts in the pass rate as not passed and is counted as `unscored` beside
//! the mean, which only scores can make. A sample that errored before any
//! metric ran counts as unscored for every metric of its dataset.

use std::collections::BTreeMap;

use eval_datasets::metric::{Measure, Stat};

use super::results::{
    DatasetSummary, DatasetTerms, FORMAT_VERSION, Gate, GateResult, MetricSummary, Results,
    SampleRecord, UsageTotals, Verdict, now_unix, total_usage,
};
use super::runs_gate::RunTally;
use crate::model::Usage;
use crate::stats::{
    Decision, Design, Interval, Level, MeanTally, Method, OnInconclusive, Scale, mean_interval,
};

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
    /// Metrics with a gate (not measured ones): their values, for a
    /// percentile or for the interval of their mean.
    values: Vec<String>,
    /// Measured quantities with a gate.
    measured: Vec<Measure>,
    /// Metrics with a `pass@k` or `pass^k` gate, and the largest k.
    runs: Vec<(String, u32)>,
    /// Values carry a cluster.
    clustered: bool,
}

#[derive(Default)]
struct Tally {
    samples: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    /// Samples whose verdict is inconclusive (counted in `passed` or
    /// `failed` too, as the setting says).
    inconclusive: usize,
    /// Samples that could not be scored and hold no metric at all (an agent
    /// error): unscored for every metric.
    bare_errors: usize,
    metrics: Vec<MetricTally>,
    /// Per gated measure: the values of scored samples, and how many scored
    /// samples had none (no ttft: the agent did not stream; cost unknown).
    measured: Vec<(Measure, Vec<f64>, usize)>,
    /// Metrics whose scores a percentile gate needs.
    keep_values: Vec<String>,
    /// Metrics whose runs a `pass@k` gate needs, and the largest k.
    keep_runs: Vec<(String, u32)>,
    /// Scores carry their sample's cluster.
    clustered: bool,
    usage: UsageTotals,
}

/// One metric of a dataset, in first-seen order.
struct MetricTally {
    name: String,
    /// Count, mean, spread (and clusters) of the scores.
    tally: MeanTally,
    passed: usize,
    /// Samples whose verdict on this metric is inconclusive.
    inconclusive: usize,
    /// Samples holding the metric without a score.
    unscored: usize,
    /// Every score, when a percentile gate needs them.
    values: Option<Vec<f64>>,
    /// Each sample's runs and passes, when a `pass@k` gate needs them.
    runs: Option<RunTally>,
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

    fn get(&self, m: Measure) -> Option<f64> {
        match m {
            Measure::LatencyMs => self.per_run[0],
            Measure::TtftMs => self.per_run[1],
            _ => self.per_run[2],
        }
    }
}

/// One sample's place in its dataset's summary.
pub(crate) struct Sample<'a> {
    /// Its dataset.
    pub dataset: &'a str,
    /// Its verdict.
    pub verdict: Verdict,
    /// Whether it counts as passed (an inconclusive sample, as the setting says).
    pub passed: bool,
    /// Its cluster, when the dataset names a cluster field and it has one.
    pub cluster: Option<&'a str>,
    /// Its id.
    pub id: &'a str,
}

/// One metric of one sample.
pub(crate) struct ScoreOf<'a> {
    /// The metric.
    pub name: &'a str,
    /// Its score, when it has one.
    pub score: Option<f64>,
    /// Whether it counts as passed.
    pub passed: bool,
    /// Whether its verdict is inconclusive (over repeated runs).
    pub inconclusive: bool,
    /// Runs scored, and how many passed the per-sample threshold (`None`
    /// when the record does not say).
    pub runs: (u32, Option<u32>),
}

impl Summaries {
    /// Tallies for datasets summarised under `terms` (which says what their
    /// gates need kept).
    pub(crate) fn new(terms: &BTreeMap<String, DatasetTerms>) -> Summaries {
        let keep = terms
            .iter()
            .map(|(name, t)| {
                let mut keep = Keep {
                    clustered: t.cluster.is_some(),
                    ..Keep::default()
                };
                for g in &t.gates {
                    if let Some(k) = g.stat.over_runs() {
                        match keep.runs.iter_mut().find(|(m, _)| *m == g.metric) {
                            Some((_, most)) => *most = (*most).max(k),
                            None => keep.runs.push((g.metric.clone(), k)),
                        }
                        continue;
                    }
                    match g.measured() {
                        Some(m) if !keep.measured.contains(&m) => keep.measured.push(m),
                        Some(_) => {}
                        // A mean's interval needs its values too (in the
                        // results file's order): 8 bytes per sample.
                        None if !keep.values.contains(&g.metric) => {
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
            Sample {
                dataset: &record.dataset,
                verdict: record.verdict,
                passed: record.counts_as_passed(),
                cluster: record.cluster.as_deref(),
                id: &record.id,
            },
            record.metrics.iter().map(|m| ScoreOf {
                name: &m.name,
                score: m.score,
                passed: m.passed,
                inconclusive: m.decision() == Some(Decision::Inconclusive),
                runs: m.runs_passed(),
            }),
            &Measured::of(record),
        );
    }

    /// Adds one sample: its verdict, each metric's score and what was
    /// measured of it.
    pub(crate) fn add_scores<'a>(
        &mut self,
        sample: Sample<'_>,
        metrics: impl Iterator<Item = ScoreOf<'a>>,
        measured: &Measured,
    ) {
        let dataset = sample.dataset;
        if !self.datasets.contains_key(dataset) {
            let keep = self.keep.get(dataset).cloned().unwrap_or_default();
            let tally = Tally {
                measured: keep.measured.iter().map(|m| (*m, Vec::new(), 0)).collect(),
                keep_values: keep.values,
                keep_runs: keep.runs,
                clustered: keep.clustered,
                ..Tally::default()
            };
            self.datasets.insert(dataset.to_string(), tally);
        }
        let Some(t) = self.datasets.get_mut(dataset) else {
            return;
        };
        t.samples += 1;
        let verdict = sample.verdict;
        match verdict {
            Verdict::Pass => t.passed += 1,
            Verdict::Fail => t.failed += 1,
            Verdict::Inconclusive => {
                t.inconclusive += 1;
                if sample.passed {
                    t.passed += 1;
                } else {
                    t.failed += 1;
                }
            }
            Verdict::Error => t.errors += 1,
        }
        let mut any = false;
        for m in metrics {
            any = true;
            let i = match t.metrics.iter().position(|x| x.name == m.name) {
                Some(i) => i,
                None => {
                    let keep = t.keep_values.iter().any(|k| k == m.name);
                    let mut tally = MetricTally::new(m.name, keep, t.clustered);
                    tally.runs = t
                        .keep_runs
                        .iter()
                        .find(|(k, _)| k == m.name)
                        .map(|(_, most)| RunTally::new(*most));
                    t.metrics.push(tally);
                    t.metrics.len() - 1
                }
            };
            let entry = &mut t.metrics[i];
            match m.score {
                Some(score) => {
                    entry.tally.add(score, sample.cluster);
                    entry.passed += usize::from(m.passed);
                    entry.inconclusive += usize::from(m.inconclusive);
                    if let Some(v) = &mut entry.values {
                        v.push(score);
                    }
                    if let Some(r) = &mut entry.runs {
                        r.add(sample.id, m.runs.0, m.runs.1);
                    }
                }
                None => entry.unscored += 1,
            }
        }
        if !any && verdict == Verdict::Error {
            t.bare_errors += 1;
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
                        t.metrics
                            .push(MetricTally::new(&g.metric, false, t.clustered));
                    }
                }
                let errors = t.errors;
                let bare_errors = t.bare_errors;
                let measured = std::mem::take(&mut t.measured);
                let judge = GateJudge {
                    complete,
                    errors,
                    policy: terms.inconclusive,
                    ran: (t.samples, terms.planned.unwrap_or(0)),
                };
                let metrics: Vec<MetricSummary> = t
                    .metrics
                    .into_iter()
                    .map(|m| {
                        // A measured metric's values are what the engine
                        // measured; with no per-sample threshold, no pass rate.
                        let from_measured = eval_datasets::metric::lookup(&m.name)
                            .and_then(|i| i.measured())
                            .and_then(|k| measured.iter().find(|(x, ..)| *x == k));
                        let mut gates = terms
                            .gates
                            .iter()
                            .filter(|g| g.metric == m.name)
                            .map(|g| judge.gate(g, &m, from_measured));
                        let gate = gates.next();
                        let more_gates = gates.collect();
                        // No sample is left out: one that could not be
                        // scored counts as not passed.
                        let unscored = m.unscored + bare_errors;
                        let scored_n = m.tally.count();
                        let applies = scored_n + unscored;
                        let (scored, mean, pass_rate) = match from_measured {
                            Some((_, values, _)) if scored_n == 0 => {
                                (values.len(), Stat::Mean.of(values), None)
                            }
                            _ => (
                                scored_n,
                                m.tally.mean(),
                                (applies > 0).then(|| m.passed as f64 / applies as f64),
                            ),
                        };
                        MetricSummary {
                            name: m.name,
                            scored,
                            unscored,
                            mean,
                            pass_rate,
                            inconclusive: m.inconclusive,
                            gate,
                            more_gates,
                        }
                    })
                    .collect();
                let gates_passed = metrics.iter().flat_map(|m| m.gates()).all(|g| g.passed);
                DatasetSummary {
                    name,
                    description: terms.description.clone(),
                    samples: t.samples,
                    planned: terms.planned,
                    complete,
                    ci_gate: terms.ci_gate,
                    passed: t.passed,
                    failed: t.failed,
                    errors: t.errors,
                    inconclusive: t.inconclusive,
                    on_inconclusive: terms.inconclusive,
                    cluster_by: terms.cluster.clone(),
                    gates_passed,
                    metrics,
                    gates: terms.gates.clone(),
                    metric_specs: terms.metric_specs.clone(),
                    metrics_per_sample: terms.metrics_per_sample,
                    usage: t.usage,
                }
            })
            .collect()
    }
}

/// What judging one dataset's gates needs to know of the dataset.
struct GateJudge {
    /// Every planned sample ran.
    complete: bool,
    /// Samples that could not be scored.
    errors: usize,
    /// What an inconclusive gate counts as.
    policy: OnInconclusive,
    /// Samples that ran, and planned.
    ran: (usize, usize),
}

impl GateJudge {
    /// `gate` over `m`'s scores (or, for a measured metric, the measured
    /// values): its statistic, interval and decision, and whether it is met.
    fn gate(
        &self,
        gate: &Gate,
        m: &MetricTally,
        from_measured: Option<&(Measure, Vec<f64>, usize)>,
    ) -> GateResult {
        if let Some(k) = gate.stat.over_runs() {
            let r = match &m.runs {
                Some(r) => r.judge(gate.stat, k),
                None => RunTally::new(k).judge(gate.stat, k),
            };
            return self.result(gate, (r.value, 0, r.over, r.interval), r.error);
        }
        let scale = gate.scale();
        let (value, missing, over, interval) = match (from_measured, gate.measured()) {
            (Some((_, values, missing)), Some(_)) => (
                gate.stat.of(values),
                *missing,
                values.len(),
                values_interval(gate.stat, values, scale),
            ),
            _ if gate.stat == Stat::Mean && m.tally.clusters().is_some() => (
                m.tally.mean(),
                0,
                m.tally.count(),
                m.tally.clustered(Level::STANDARD, scale),
            ),
            _ => {
                let values = m.values.as_deref().unwrap_or(&[]);
                (
                    gate.stat.of(values),
                    0,
                    values.len(),
                    values_interval(gate.stat, values, scale),
                )
            }
        };
        self.result(gate, (value, missing, over, interval), None)
    }

    /// The gate's result from its statistic's `value`, the samples
    /// `missing` a value, the values it is `over`, its interval, and why it
    /// cannot be judged (`error`: then it is missed).
    fn result(
        &self,
        gate: &Gate,
        (value, missing, over, interval): (Option<f64>, usize, usize, Option<(Interval, Method)>),
        error: Option<String>,
    ) -> GateResult {
        // A sample that could not be scored (or measured) must not vanish
        // from a gate: any misses it.
        let unscored = self.errors + missing;
        let op = gate.op();
        let decision = value.filter(|_| error.is_none()).map(|_| match interval {
            // A sample that could not be scored misses the gate, whatever
            // the others say.
            _ if unscored > 0 => Decision::Fail,
            Some((i, _)) => Decision::of(i, op, gate.threshold),
            // One value: nothing to say how far off it could be.
            None => Decision::Inconclusive,
        });
        let estimate_passes = value.is_some_and(|v| gate.passes(v));
        GateResult {
            gate: gate.clone(),
            judged: self.complete,
            passed: self.complete
                && unscored == 0
                && decision.is_some_and(|d| self.policy.passes(d, estimate_passes)),
            margin: value
                .filter(|_| error.is_none())
                .map(|v| v - gate.threshold),
            unscored,
            ran: (!self.complete).then_some(self.ran),
            samples: self.ran.0,
            scored: over,
            interval: interval.map(|(i, _)| i),
            method: interval.map(|(_, how)| how),
            decision: decision.filter(|_| self.complete),
            error: error.filter(|_| self.complete),
        }
    }
}

/// The interval of `stat` over `values` (in the results file's order): a
/// mean's from [`mean_interval`] (Clopper–Pearson for a pass rate, the
/// betting interval for a bounded score, Student's t for a value without a
/// finite range), a percentile's by order statistics.
fn values_interval(stat: Stat, values: &[f64], scale: Scale) -> Option<(Interval, Method)> {
    match stat {
        Stat::Mean => mean_interval(values, scale, Design::across(values.len()))
            .map(|m| (m.interval, m.method)),
        Stat::Percentile(p) => {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            crate::stats::quantile_interval(&sorted, f64::from(p) / 100.0, Level::STANDARD)
                .map(|i| (i, Method::OrderStatistics))
        }
        // Judged from each sample's runs (`runs_gate.rs`), not from values.
        Stat::PassAt(_) | Stat::PassHat(_) => None,
    }
}

impl MetricTally {
    fn new(name: &str, keep_values: bool, clustered: bool) -> Self {
        MetricTally {
            name: name.to_string(),
            tally: MeanTally::new(clustered),
            passed: 0,
            inconclusive: 0,
            unscored: 0,
            values: keep_values.then(Vec::new),
            runs: None,
        }
    }
}

impl Results {
    /// Results for `samples` under `terms` (per dataset name); aggregates
    /// and gate verdicts computed here.
    #[doc(hidden)]
    pub fn new(
        binary: &str,
        mut samples: Vec<SampleRecord>,
        terms: &BTreeMap<String, DatasetTerms>,
    ) -> Self {
        samples.sort_by(|a, b| (&a.dataset, &a.test_name).cmp(&(&b.dataset, &b.test_name)));
        let mut summaries = Summaries::new(terms);
        samples.iter().for_each(|s| summaries.add(s));
        let (datasets, complete) = summaries.finish_run(terms);
        Results {
            version: FORMAT_VERSION,
            binary: binary.to_string(),
            package: None,
            written_unix: now_unix(),
            complete,
            missing_datasets: Vec::new(),
            provenance: None,
            usage: total_usage(&datasets),
            datasets,
            samples,
        }
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
        let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.5);
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
