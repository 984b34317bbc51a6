//! The question a run asked of each dataset — its metrics as written (name,
//! options, operator, per-sample threshold) and its gates — and how two
//! runs' questions differ, in one place: `report diff` and `--baseline`
//! say every difference, and `report merge` refuses parts that asked
//! different questions of one dataset.
//!
//! A results file records each dataset's metrics as written
//! ([`DatasetSummary::metric_specs`]); for files of earlier versions they are
//! read from the samples' records (name, operator, threshold: options were
//! not recorded, so they are not compared).

use std::fmt;

use serde::Serialize;

use super::results::Results;
use super::summary::{DatasetSummary, DatasetTerms, Gate};
use super::written::WrittenMetric;

/// A metric's operator and per-sample threshold: `>= 0.5`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Bound {
    /// `>=` or `<=`.
    pub op: String,
    /// The threshold.
    pub threshold: f64,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.op, self.threshold)
    }
}

/// One way the questions two runs (or two parts of a run) asked of a
/// dataset differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum QuestionChange {
    /// A metric's per-sample operator or threshold changed: its scores are
    /// still comparable, which samples pass is not.
    ThresholdChanged {
        /// The dataset.
        dataset: String,
        /// The metric.
        metric: String,
        /// Before.
        from: Bound,
        /// Now.
        to: Bound,
    },
    /// A metric's options changed (`case_sensitive`, a rubric...): it
    /// scores something else.
    OptionsChanged {
        /// The dataset.
        dataset: String,
        /// The metric.
        metric: String,
        /// The options before (empty: the defaults).
        from: String,
        /// The options now.
        to: String,
    },
    /// A metric is asked now and was not before.
    MetricAdded {
        /// The dataset.
        dataset: String,
        /// The metric.
        metric: String,
    },
    /// A metric was asked before and is not now.
    MetricRemoved {
        /// The dataset.
        dataset: String,
        /// The metric.
        metric: String,
    },
    /// A gate's operator, threshold, statistic or enforcement changed.
    GateChanged {
        /// The dataset.
        dataset: String,
        /// The gate before.
        from: Gate,
        /// The gate now.
        to: Gate,
    },
    /// A gate is judged now and was not before.
    GateAdded {
        /// The dataset.
        dataset: String,
        /// The gate.
        gate: Gate,
    },
    /// A gate was judged before and is not now.
    GateRemoved {
        /// The dataset.
        dataset: String,
        /// The gate.
        gate: Gate,
    },
}

impl QuestionChange {
    /// The dataset it is about.
    pub fn dataset(&self) -> &str {
        match self {
            QuestionChange::ThresholdChanged { dataset, .. }
            | QuestionChange::OptionsChanged { dataset, .. }
            | QuestionChange::MetricAdded { dataset, .. }
            | QuestionChange::MetricRemoved { dataset, .. }
            | QuestionChange::GateChanged { dataset, .. }
            | QuestionChange::GateAdded { dataset, .. }
            | QuestionChange::GateRemoved { dataset, .. } => dataset,
        }
    }

    /// Whether it changes a metric's scores or the metrics scored (not
    /// only a threshold or a gate).
    fn of_metrics(&self) -> bool {
        matches!(
            self,
            QuestionChange::OptionsChanged { .. }
                | QuestionChange::MetricAdded { .. }
                | QuestionChange::MetricRemoved { .. }
                | QuestionChange::ThresholdChanged { .. }
        )
    }
}

/// `partial_match >= 0.5`, with ` (not enforced)` when it is not.
fn gate_text(g: &Gate) -> String {
    let enforced = if g.enforced { "" } else { " (not enforced)" };
    format!(
        "{}({}) {} {}{enforced}",
        g.stat, g.metric, g.op, g.threshold
    )
}

impl fmt::Display for QuestionChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuestionChange::ThresholdChanged {
                dataset,
                metric,
                from,
                to,
            } => write!(
                f,
                "`{dataset}`: `{metric}` threshold changed, {from} → {to} (scores are compared as before; which samples pass is not comparable)"
            ),
            QuestionChange::OptionsChanged {
                dataset,
                metric,
                from,
                to,
            } => {
                let shown = |o: &str| {
                    if o.is_empty() {
                        "(defaults)".to_string()
                    } else {
                        o.to_string()
                    }
                };
                write!(
                    f,
                    "`{dataset}`: `{metric}` options changed, {} → {} (it scores something else)",
                    shown(from),
                    shown(to)
                )
            }
            QuestionChange::MetricAdded { dataset, metric } => {
                write!(f, "`{dataset}`: `{metric}` is asked now, not before")
            }
            QuestionChange::MetricRemoved { dataset, metric } => {
                write!(f, "`{dataset}`: `{metric}` was asked before, not now")
            }
            QuestionChange::GateChanged { dataset, from, to } => write!(
                f,
                "`{dataset}`: gate changed, {} → {}",
                gate_text(from),
                gate_text(to)
            ),
            QuestionChange::GateAdded { dataset, gate } => {
                write!(f, "`{dataset}`: gate {} is new", gate_text(gate))
            }
            QuestionChange::GateRemoved { dataset, gate } => {
                write!(f, "`{dataset}`: gate {} is gone", gate_text(gate))
            }
        }
    }
}

/// What a run asked of one dataset.
pub(crate) struct Asked<'a> {
    /// Its metrics as written (with options when `options_known`).
    metrics: Vec<WrittenMetric>,
    /// The metrics were recorded with their options (not read from records).
    options_known: bool,
    /// Its gates.
    gates: Vec<&'a Gate>,
}

impl<'a> Asked<'a> {
    /// What `terms` ask.
    pub(crate) fn of_terms(terms: &'a DatasetTerms) -> Self {
        Asked {
            metrics: terms.metric_specs.clone(),
            options_known: !terms.metric_specs.is_empty(),
            gates: terms.gates.iter().collect(),
        }
    }

    /// What `results` asked of `dataset`: as recorded, else as its samples'
    /// records say.
    fn of_results(results: &Results, dataset: &'a DatasetSummary) -> Self {
        let gates = dataset
            .metrics
            .iter()
            .flat_map(|m| m.gates())
            .map(|g| &g.gate)
            .collect();
        if !dataset.metric_specs.is_empty() {
            return Asked {
                metrics: dataset.metric_specs.clone(),
                options_known: true,
                gates,
            };
        }
        let mut metrics: Vec<WrittenMetric> = Vec::new();
        for s in results.samples.iter().filter(|s| s.dataset == dataset.name) {
            for m in &s.metrics {
                let w = WrittenMetric::bare(&m.name, &m.op, m.threshold);
                if !metrics.contains(&w) {
                    metrics.push(w);
                }
            }
        }
        Asked {
            metrics,
            options_known: false,
            gates,
        }
    }
}

/// How `new` differs from `old`, both asked of `dataset`.
pub(crate) fn changes(dataset: &str, old: &Asked<'_>, new: &Asked<'_>) -> Vec<QuestionChange> {
    let mut out = Vec::new();
    let names = |a: &Asked<'_>| {
        let mut names: Vec<String> = Vec::new();
        for m in &a.metrics {
            if !names.contains(&m.name) {
                names.push(m.name.clone());
            }
        }
        names
    };
    let (before, now) = (names(old), names(new));
    for name in &before {
        if !now.contains(name) {
            out.push(QuestionChange::MetricRemoved {
                dataset: dataset.to_string(),
                metric: name.clone(),
            });
        }
    }
    for name in &now {
        if !before.contains(name) {
            out.push(QuestionChange::MetricAdded {
                dataset: dataset.to_string(),
                metric: name.clone(),
            });
            continue;
        }
        metric_changes(dataset, name, (old, new), &mut out);
    }
    let (o, n) = (&old.gates, &new.gates);
    for pair in pair_gates(o, n) {
        let change = match pair {
            (Some(a), Some(b)) if o[a] != n[b] => QuestionChange::GateChanged {
                dataset: dataset.to_string(),
                from: o[a].clone(),
                to: n[b].clone(),
            },
            (Some(_), Some(_)) | (None, None) => continue,
            (Some(a), None) => QuestionChange::GateRemoved {
                dataset: dataset.to_string(),
                gate: o[a].clone(),
            },
            (None, Some(b)) => QuestionChange::GateAdded {
                dataset: dataset.to_string(),
                gate: n[b].clone(),
            },
        };
        out.push(change);
    }
    out
}

/// How metric `name`, asked by both, changed: its bounds, its options.
fn metric_changes(
    dataset: &str,
    name: &str,
    (old, new): (&Asked<'_>, &Asked<'_>),
    out: &mut Vec<QuestionChange>,
) {
    let forms = |a: &'_ Asked<'_>| -> Vec<WrittenMetric> {
        a.metrics
            .iter()
            .filter(|m| m.name == name)
            .cloned()
            .collect()
    };
    let (was, now) = (forms(old), forms(new));
    let bounds = |forms: &[WrittenMetric]| {
        let mut out: Vec<Bound> = Vec::new();
        for m in forms {
            let b = Bound {
                op: m.op.clone(),
                threshold: m.threshold,
            };
            if !out.contains(&b) {
                out.push(b);
            }
        }
        out
    };
    let (b_was, b_now) = (bounds(&was), bounds(&now));
    let gone: Vec<&Bound> = b_was.iter().filter(|b| !b_now.contains(b)).collect();
    let came: Vec<&Bound> = b_now.iter().filter(|b| !b_was.contains(b)).collect();
    // Pairs in order; a bound without a counterpart is paired with the
    // other run's first.
    for i in 0..gone.len().max(came.len()) {
        let (Some(from), Some(to)) = (
            gone.get(i).copied().or(b_was.first()),
            came.get(i).copied().or(b_now.first()),
        ) else {
            continue;
        };
        out.push(QuestionChange::ThresholdChanged {
            dataset: dataset.to_string(),
            metric: name.to_string(),
            from: from.clone(),
            to: to.clone(),
        });
    }
    if old.options_known && new.options_known {
        fn options(forms: &[WrittenMetric]) -> Vec<&str> {
            let mut out: Vec<&str> = forms.iter().map(|m| m.options.as_str()).collect();
            out.sort_unstable();
            out.dedup();
            out
        }
        let (o_was, o_now) = (options(&was), options(&now));
        if o_was != o_now {
            out.push(QuestionChange::OptionsChanged {
                dataset: dataset.to_string(),
                metric: name.to_string(),
                from: o_was.join(" | "),
                to: o_now.join(" | "),
            });
        }
    }
}

/// Which of `old`'s gates each of `new`'s is (by index): the same gate
/// first (whether enforced or not aside), then one on the same metric and
/// statistic (another operator or threshold), then one on the same metric
/// (another statistic); `(Some, None)` a gate gone, `(None, Some)` a new one.
pub(crate) fn pair_gates(old: &[&Gate], new: &[&Gate]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut of_new: Vec<Option<usize>> = vec![None; new.len()];
    let mut used = vec![false; old.len()];
    let rules: [fn(&Gate, &Gate) -> bool; 3] = [
        |a, b| same_gate(a, b),
        |a, b| a.metric == b.metric && a.stat == b.stat,
        |a, b| a.metric == b.metric,
    ];
    for rule in rules {
        for (j, n) in new.iter().enumerate() {
            if of_new[j].is_some() {
                continue;
            }
            if let Some(i) = (0..old.len()).find(|i| !used[*i] && rule(old[*i], n)) {
                used[i] = true;
                of_new[j] = Some(i);
            }
        }
    }
    let mut out: Vec<(Option<usize>, Option<usize>)> = (0..old.len())
        .filter(|i| !used[*i])
        .map(|i| (Some(i), None))
        .collect();
    out.extend(of_new.into_iter().enumerate().map(|(j, i)| (i, Some(j))));
    out
}

/// The same gate (its statistic, metric, operator and threshold), whether
/// enforced or not.
pub(crate) fn same_gate(a: &Gate, b: &Gate) -> bool {
    a.metric == b.metric && a.stat == b.stat && a.op == b.op && a.threshold == b.threshold
}

impl Results {
    /// How the question `new` asked of each dataset both runs hold differs
    /// from this run's: thresholds, options, metrics and gates (see
    /// [`QuestionChange`]).
    #[doc(hidden)]
    pub fn question_changes(&self, new: &Results) -> Vec<QuestionChange> {
        let mut out = Vec::new();
        for d in &new.datasets {
            let Some(was) = self.datasets.iter().find(|o| o.name == d.name) else {
                continue;
            };
            let old = Asked::of_results(self, was);
            let now = Asked::of_results(new, d);
            out.extend(changes(&d.name, &old, &now));
        }
        out
    }
}

impl DatasetTerms {
    /// How `other`'s question of dataset `name` differs from these terms'
    /// (for joining parts of one run). Where either part's samples name
    /// their own metrics, its metrics are those of the samples it holds,
    /// and a part written by an earlier version records none: only the
    /// gates are compared then.
    pub(crate) fn question_changes(&self, name: &str, other: &DatasetTerms) -> Vec<QuestionChange> {
        let mut found = changes(name, &Asked::of_terms(self), &Asked::of_terms(other));
        let unrecorded = self.metric_specs.is_empty() || other.metric_specs.is_empty();
        if self.metrics_per_sample || other.metrics_per_sample || unrecorded {
            found.retain(|c| !c.of_metrics());
        }
        found
    }

    /// These terms joined with `other`'s, of another part of the run:
    /// where samples name their own metrics, the metrics of both parts.
    pub(crate) fn join_question(&mut self, other: &DatasetTerms) {
        self.metrics_per_sample |= other.metrics_per_sample;
        for m in &other.metric_specs {
            if !self.metric_specs.contains(m) {
                self.metric_specs.push(m.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use eval_datasets::metric::{Op, Stat};

    use super::*;

    fn asked<'a>(metrics: &[WrittenMetric], gates: &[&'a Gate]) -> Asked<'a> {
        Asked {
            metrics: metrics.to_vec(),
            options_known: true,
            gates: gates.to_vec(),
        }
    }

    #[test]
    fn every_difference_of_the_question_is_named() {
        let pm = |t: f64| WrittenMetric::bare("partial_match", ">=", t);
        let mut cs = WrittenMetric::bare("contains", ">=", 1.0);
        let g3 = Gate::new("partial_match", Op::AtLeast, 0.3);
        let g5 = Gate::new("partial_match", Op::AtLeast, 0.5);
        let p95 = Gate::new("latency_ms", Op::AtMost, 900.0).with_stat(Stat::Percentile(95));
        let p50 = p95.clone().with_stat(Stat::Percentile(50));
        let old = asked(&[pm(0.3), cs.clone()], &[&g3, &p95]);
        cs.options = "case_sensitive = true".into();
        let faith = WrittenMetric::bare("faithfulness", ">=", 0.8);
        let new = asked(&[pm(0.5), cs, faith], &[&g5, &p50]);
        let found: Vec<String> = changes("qa", &old, &new)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "`qa`: `partial_match` threshold changed, >= 0.3 → >= 0.5 (scores are compared as before; which samples pass is not comparable)",
                "`qa`: `contains` options changed, (defaults) → case_sensitive = true (it scores something else)",
                "`qa`: `faithfulness` is asked now, not before",
                "`qa`: gate changed, mean(partial_match) >= 0.3 → mean(partial_match) >= 0.5",
                "`qa`: gate changed, p95(latency_ms) <= 900 → p50(latency_ms) <= 900",
            ]
        );
        // The same question: nothing; a gate no longer enforced is a change.
        assert!(changes("qa", &old, &old).is_empty());
        let lax = g3.clone().enforced(false);
        let found = changes("qa", &old, &asked(&old.metrics, &[&lax, &p95]));
        assert_eq!(
            found,
            [QuestionChange::GateChanged {
                dataset: "qa".into(),
                from: g3.clone(),
                to: lax
            }]
        );
        let gone = changes("qa", &old, &asked(&[pm(0.3)], &[&p95]));
        assert_eq!(
            gone.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "`qa`: `contains` was asked before, not now",
                "`qa`: gate mean(partial_match) >= 0.3 is gone"
            ]
        );
        let json = serde_json::to_value(&gone[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "metric-removed", "dataset": "qa", "metric": "contains"})
        );
    }

    #[test]
    fn options_unknown_on_either_side_are_not_compared() {
        let mut with = WrittenMetric::bare("contains", ">=", 1.0);
        with.options = "case_sensitive = true".into();
        let old = Asked {
            metrics: vec![WrittenMetric::bare("contains", ">=", 1.0)],
            options_known: false,
            gates: Vec::new(),
        };
        assert!(changes("qa", &old, &asked(&[with.clone()], &[])).is_empty());
        assert_eq!(
            changes("qa", &asked(&[], &[]), &asked(&[with], &[])).len(),
            1,
            "a metric asked by one side only is said whatever is known"
        );
    }

    #[test]
    fn parts_whose_samples_name_their_metrics_compare_only_gates() {
        let g = Gate::new("contains", Op::AtLeast, 0.5);
        let terms = |metric: &str, per_sample: bool, t: f64| {
            DatasetTerms::new(Some(4), vec![g.clone()], false)
                .asking(vec![WrittenMetric::bare(metric, ">=", t)], per_sample)
        };
        let a = terms("contains", false, 1.0);
        assert_eq!(
            a.question_changes("qa", &terms("contains", false, 0.5))
                .len(),
            1
        );
        assert!(
            a.question_changes("qa", &terms("faithfulness", true, 0.5))
                .is_empty()
        );
        let mut other_gate = terms("contains", true, 1.0);
        other_gate.gates[0].threshold = 0.6;
        assert_eq!(a.question_changes("qa", &other_gate).len(), 1);
    }
}
