//! The verdict contract, the same for every front end (the guide's "Verdicts"
//! chapter has it as a table):
//!
//! * a sample fails when a metric is on the wrong side of its threshold or
//!   when it cannot be scored; under `ciGate` a sample fails only when it
//!   cannot be scored, and its scores count in the gates' means;
//! * a gate judges a dataset's mean only when the dataset is complete (every
//!   sample of the plan evaluated); otherwise it is "not judged", which is
//!   neither a pass nor a failure of the run;
//! * the run fails when a sample fails, a judged gate is missed, or a
//!   baseline comparison finds a regression — except a gate that is not
//!   enforced (a manifest's thresholds under `ciGate: false`): it is judged
//!   and reported, and missing it fails nothing.

use eval_datasets::terminal::escaped;

use super::paint::Paint;
use super::results::{DatasetSummary, GateResult};

/// What a run (or merged runs) amounts to.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct RunVerdict {
    /// Samples that fail: on a score where samples are judged singly, or
    /// because they could not be scored.
    pub failed_samples: usize,
    /// Samples evaluated.
    pub samples: usize,
    /// Samples that could not be scored.
    pub unscored: usize,
    /// Gates judged and missed, with their dataset.
    #[doc(hidden)]
    pub missed_gates: Vec<(String, GateResult)>,
    /// Gates not judged (their dataset is incomplete here), with their dataset.
    #[doc(hidden)]
    pub unjudged_gates: Vec<(String, GateResult)>,
    /// Gates judged and met, with their dataset.
    #[doc(hidden)]
    pub met_gates: Vec<(String, GateResult)>,
    /// Gates judged and missed that are not enforced (a manifest's
    /// thresholds under `ciGate: false`), with their dataset: reported,
    /// failing nothing.
    #[doc(hidden)]
    pub unenforced_gates: Vec<(String, GateResult)>,
    /// Samples whose verdict is inconclusive (counted as passed or failed
    /// as their dataset's setting says, and so in `failed_samples` or not).
    pub inconclusive_samples: usize,
    /// Sample metrics that got worse than the baseline allows.
    #[doc(hidden)]
    pub regressions: usize,
    /// Metrics that could not be scored on any sample of their dataset (a
    /// judge that is down), with their dataset.
    #[doc(hidden)]
    pub unscorable_metrics: Vec<(String, String)>,
}

impl RunVerdict {
    /// The verdict of `datasets`' summaries.
    #[doc(hidden)]
    pub fn of(datasets: &[DatasetSummary]) -> RunVerdict {
        let mut v = RunVerdict::default();
        for d in datasets {
            v.samples += d.samples;
            v.unscored += d.errors;
            v.inconclusive_samples += d.inconclusive;
            v.failed_samples += if d.ci_gate {
                d.errors
            } else {
                d.failed + d.errors
            };
            if d.samples > 0 {
                for m in d.metrics.iter().filter(|m| m.scored == 0) {
                    v.unscorable_metrics.push((d.name.clone(), m.name.clone()));
                }
            }
            for g in d.metrics.iter().flat_map(|m| m.gates()) {
                let entry = (d.name.clone(), g.clone());
                if !g.judged {
                    v.unjudged_gates.push(entry);
                } else if g.passed {
                    v.met_gates.push(entry);
                } else if !g.gate.enforced {
                    v.unenforced_gates.push(entry);
                } else {
                    v.missed_gates.push(entry);
                }
            }
        }
        v
    }

    /// Nothing failed: no sample, no judged gate, no baseline comparison.
    pub fn passed(&self) -> bool {
        self.failed_samples == 0 && self.missed_gates.is_empty() && self.regressions == 0
    }

    /// Why the run did not really run, if it did not: samples were evaluated
    /// and not one could be scored (an agent that is down), or a metric could
    /// not be scored on any sample (a judge that is down or misconfigured).
    #[doc(hidden)]
    pub fn not_scored(&self) -> Option<String> {
        if self.unscorable_metrics.is_empty() {
            return (self.samples > 0 && self.unscored == self.samples).then(|| {
                "no sample could be scored (every one ended in an error; see above)".into()
            });
        }
        let list: Vec<String> = self
            .unscorable_metrics
            .iter()
            .map(|(dataset, metric)| format!("`{metric}` of `{dataset}`"))
            .collect();
        Some(format!(
            "{} could not be scored on any sample (see the reasons above)",
            list.join(", ")
        ))
    }

    /// One line per gate: `gate <dataset> passed|FAILED: ...`, or `gate
    /// <dataset>: gate ... not judged: ...`; a gate missed because samples
    /// could not be scored says how many.
    #[doc(hidden)]
    pub fn gate_lines(&self) -> Vec<String> {
        self.gate_lines_with(Paint::plain())
    }

    /// [`gate_lines`](Self::gate_lines), the verdicts painted.
    #[doc(hidden)]
    pub fn gate_lines_with(&self, paint: Paint) -> Vec<String> {
        let mut lines = Vec::new();
        let doubt = |g: &GateResult| {
            if g.decision == Some(crate::stats::Decision::Inconclusive) {
                " (inconclusive)"
            } else {
                ""
            }
        };
        // Dataset and metric names come from files: shown escaped.
        let shown = |text: &dyn std::fmt::Display| escaped(&text.to_string()).into_owned();
        for (dataset, g) in &self.met_gates {
            let word = format!("passed{}", doubt(g));
            lines.push(format!(
                "gate {} {}: {}",
                shown(dataset),
                paint.pass(&word),
                shown(g)
            ));
        }
        for (dataset, g) in &self.missed_gates {
            let word = format!("FAILED{}", doubt(g));
            lines.push(format!(
                "gate {} {}: {}",
                shown(dataset),
                paint.fail(&word),
                shown(g)
            ));
        }
        for (dataset, g) in &self.unenforced_gates {
            let word = format!("missed{}", doubt(g));
            lines.push(format!(
                "gate {} {}: {}",
                shown(dataset),
                paint.note(&word),
                shown(g)
            ));
        }
        for (dataset, g) in &self.unjudged_gates {
            lines.push(format!(
                "gate {}: {}",
                shown(dataset),
                paint.note(&shown(g))
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::output::results::{DatasetTerms, Gate, Results, SampleRecord, Verdict};
    use crate::output::test_record as record;

    fn verdict(records: Vec<SampleRecord>, planned: usize, ci_gate: bool) -> RunVerdict {
        let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.5);
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(planned), vec![gate], ci_gate),
        )]);
        RunVerdict::of(&Results::new("evals", records, &terms).datasets)
    }

    #[test]
    fn samples_fail_singly_unless_ci_gate_judges_them_by_the_mean() {
        let three = || {
            vec![
                record("rag", "a", Verdict::Pass),
                record("rag", "b", Verdict::Pass),
                record("rag", "c", Verdict::Fail),
            ]
        };
        let singly = verdict(three(), 3, false);
        assert_eq!(singly.failed_samples, 1);
        assert!(!singly.passed(), "a failed sample fails the run");
        assert_eq!(singly.met_gates.len(), 1, "mean 2/3 meets 0.5");

        let gated = verdict(three(), 3, true);
        assert_eq!(gated.failed_samples, 0);
        assert!(gated.passed(), "under ciGate the mean decides");

        let down = verdict(
            vec![
                record("rag", "a", Verdict::Pass),
                record("rag", "b", Verdict::Error),
            ],
            2,
            true,
        );
        assert_eq!(
            down.failed_samples, 1,
            "an unscored sample fails in both modes"
        );
        assert_eq!(down.missed_gates.len(), 1, "and misses the gate");
        assert!(down.not_scored().is_none());
        assert!(
            verdict(vec![record("rag", "b", Verdict::Error)], 1, true)
                .not_scored()
                .is_some()
        );
    }

    #[test]
    fn a_threshold_not_enforced_is_judged_and_reported_and_fails_nothing() {
        // Seed 000: a manifest's thresholds fail the run only under ciGate: true.
        let records = || {
            vec![
                record("rag", "a", Verdict::Pass),
                record("rag", "b", Verdict::Fail),
                record("rag", "c", Verdict::Fail),
            ]
        };
        let with = |enforced: bool| {
            let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.5).enforced(enforced);
            let terms = BTreeMap::from([(
                "rag".to_string(),
                DatasetTerms::new(Some(3), vec![gate], true),
            )]);
            Results::new("evals", records(), &terms)
        };
        let reported = with(false);
        let v = RunVerdict::of(&reported.datasets);
        assert!(
            v.passed(),
            "a missed threshold without ciGate fails nothing"
        );
        assert!(v.missed_gates.is_empty() && reported.failed_gates().is_empty());
        assert_eq!(v.unenforced_gates.len(), 1, "mean 1/3 misses 0.5");
        let lines = v.gate_lines();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("gate rag missed (inconclusive): mean contains = 0.3333")
                && lines[0].ends_with(", not enforced (ciGate is false)"),
            "{}",
            lines[0]
        );
        // The same gate enforced fails the run.
        let enforced = RunVerdict::of(&with(true).datasets);
        assert!(!enforced.passed() && enforced.missed_gates.len() == 1);
        // Written and read back, the gate keeps its enforcement; an
        // enforced gate writes no field (files of earlier versions read as
        // enforced).
        let json = serde_json::to_value(&reported).unwrap();
        assert_eq!(json["datasets"][0]["metrics"][0]["gate"]["enforced"], false);
        let json = serde_json::to_value(with(true)).unwrap();
        assert!(
            json["datasets"][0]["metrics"][0]["gate"]
                .get("enforced")
                .is_none()
        );
    }

    #[test]
    fn a_gate_missed_for_an_unscored_sample_says_so() {
        // The case: contains scores 1, 0, 0 and one sample the agent
        // never answered. The mean of the three scores, 0.3333, is above
        // 0.3; the gate is missed because a sample was not scored, and the
        // line must not read "missed by 0.0333".
        let mut unanswered = record("rag", "d", Verdict::Error);
        unanswered.metrics.clear();
        let records = vec![
            record("rag", "a", Verdict::Pass),
            record("rag", "b", Verdict::Fail),
            record("rag", "c", Verdict::Fail),
            unanswered,
        ];
        let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.3);
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(4), vec![gate], true),
        )]);
        let v = RunVerdict::of(&Results::new("evals", records, &terms).datasets);
        assert_eq!(v.missed_gates.len(), 1);
        let (_, g) = &v.missed_gates[0];
        assert_eq!((g.samples, g.scored, g.unscored), (4, 3, 1));
        assert_eq!(
            v.gate_lines(),
            [
                "gate rag FAILED: mean(contains) >= 0.3 missed: 1 of 4 samples not scored (counted as not passed); mean of the 3 scored = 0.3333"
            ]
        );
        let painted = v.gate_lines_with(Paint::always());
        assert!(
            painted[0].starts_with("gate rag \u{1b}[1m\u{1b}[31mFAILED\u{1b}[0m: "),
            "{painted:?}"
        );
        // Not one sample scored: nothing to take a mean of.
        let none = vec![
            record("rag", "a", Verdict::Error),
            record("rag", "b", Verdict::Error),
        ];
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(
                Some(2),
                vec![Gate::new("contains", eval_datasets::Op::AtLeast, 0.3)],
                false,
            ),
        )]);
        let v = RunVerdict::of(&Results::new("evals", none, &terms).datasets);
        assert_eq!(
            v.gate_lines(),
            ["gate rag FAILED: mean(contains) >= 0.3 missed: none of the 2 samples was scored"]
        );
    }

    #[test]
    fn a_partial_dataset_leaves_its_gate_unjudged() {
        let v = verdict(vec![record("rag", "c", Verdict::Fail)], 3, true);
        assert!(v.passed(), "not judged is not failed");
        assert_eq!(v.unjudged_gates.len(), 1);
        assert_eq!(
            v.gate_lines(),
            [
                "gate rag: gate contains >= 0.5 not judged: 1 of 3 samples ran (gates judge whole datasets only)"
            ]
        );
    }
}
