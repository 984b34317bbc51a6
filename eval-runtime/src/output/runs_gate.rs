//! `pass@k` and `pass^k` gates: what they need kept of each sample (its
//! runs, and how many passed the metric's per-sample threshold) and how
//! they are computed at the end of a run.
//!
//! A sample's estimate (see `stats::pass_k`) is in [0, 1]; the gate's value
//! is their mean over the samples, its interval the betting interval of a
//! bounded mean (the one every score in a known range gets), and its
//! decision pass, fail or inconclusive as for any gate.
//!
//! A sample with fewer than k runs makes the gate an error naming it (never
//! left out: the statistic would then be over the samples that happened to
//! run longer). A sample that errored (the agent failed in one of its runs,
//! which stops its runs, or a run left the metric without a score) is not a
//! pass: it counts as unscored, and an unscored sample misses every gate of
//! its dataset, as for the other statistics.

use eval_datasets::metric::Stat;

use crate::stats::{Design, Interval, Method, Scale, mean_interval, over_runs};

/// Most sample ids an error names (then "and N more").
const NAMED: usize = 5;

/// Per sample of a metric gated by `pass@k` or `pass^k`: its runs and
/// passes (8 bytes a sample), and the ids of those a gate cannot use.
#[derive(Debug, Default)]
pub(crate) struct RunTally {
    /// The largest k the metric's gates ask.
    k_max: u32,
    /// `(runs, passes)` of each sample scored.
    counts: Vec<(u32, u32)>,
    /// Samples with fewer than `k_max` runs, and their runs.
    short: Vec<(String, u32)>,
    /// Samples whose record does not say how many runs passed (files of
    /// earlier versions).
    unknown: Vec<String>,
}

/// What a `pass@k`/`pass^k` gate comes to over one dataset.
pub(crate) struct RunsGate {
    /// The mean of the samples' estimates.
    pub value: Option<f64>,
    /// Samples it is over.
    pub over: usize,
    /// Its interval, and how it was made.
    pub interval: Option<(Interval, Method)>,
    /// Why it cannot be judged.
    pub error: Option<String>,
}

impl RunTally {
    /// A tally for gates asking up to `k_max` runs.
    pub(crate) fn new(k_max: u32) -> RunTally {
        RunTally {
            k_max,
            ..RunTally::default()
        }
    }

    /// Adds sample `id`: `runs` runs, of which `passes` passed (`None`: not
    /// recorded).
    pub(crate) fn add(&mut self, id: &str, runs: u32, passes: Option<u32>) {
        match passes {
            Some(c) => self.counts.push((runs, c.min(runs))),
            None => self.unknown.push(id.to_string()),
        }
        if runs < self.k_max {
            self.short.push((id.to_string(), runs));
        }
    }

    /// The gate `stat` (with its `k`) over the samples tallied.
    pub(crate) fn judge(&self, stat: Stat, k: u32) -> RunsGate {
        let short: Vec<&(String, u32)> = self.short.iter().filter(|(_, n)| *n < k).collect();
        let error = if !short.is_empty() {
            let fewest = short.iter().map(|(_, n)| *n).min().unwrap_or(0);
            Some(format!(
                "{} sample(s) ran fewer than {k} times ({}; fewest {fewest}): {stat} needs {k} runs of every sample; set `repeat = N` with N ≥ {k} (a fixed number: under `auto` a sample whose verdict is decided early stops sooner)",
                short.len(),
                named(short.iter().map(|(id, _)| id.as_str()), short.len()),
            ))
        } else if !self.unknown.is_empty() {
            Some(format!(
                "{} sample(s) do not say how many of their runs passed ({}; results written by an earlier version): run them again",
                self.unknown.len(),
                named(self.unknown.iter().map(String::as_str), self.unknown.len()),
            ))
        } else {
            None
        };
        let values: Vec<f64> = self
            .counts
            .iter()
            .filter_map(|(n, c)| over_runs(stat, *n, *c))
            .collect();
        let scale = Scale::of_range((0.0, 1.0));
        RunsGate {
            value: stat.of(&values),
            over: values.len(),
            interval: mean_interval(&values, scale, Design::across(values.len()))
                .map(|m| (m.interval, m.method)),
            error,
        }
    }
}

/// The first few ids, quoted, and how many more.
fn named<'a>(ids: impl Iterator<Item = &'a str>, total: usize) -> String {
    let mut text: Vec<String> = ids.take(NAMED).map(|id| format!("`{id}`")).collect();
    if total > NAMED {
        text.push(format!("and {} more", total - NAMED));
    }
    text.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_sample_is_an_error_that_names_it() {
        let mut t = RunTally::new(3);
        t.add("a", 3, Some(3));
        t.add("b", 2, Some(1));
        t.add("c", 3, Some(0));
        let g = t.judge(Stat::PassAt(3), 3);
        let e = g.error.unwrap();
        assert!(
            e.starts_with("1 sample(s) ran fewer than 3 times (`b`; fewest 2)"),
            "{e}"
        );
        assert!(e.contains("set `repeat = N` with N ≥ 3"), "{e}");
        // pass@2 of the same samples: every one ran twice at least.
        let g = t.judge(Stat::PassAt(2), 2);
        assert_eq!(g.error, None);
        // a: 1, b: 1 − C(1,2)/C(2,2) = 1, c: 0.
        assert_eq!((g.value, g.over), (Some(2.0 / 3.0), 3));
        let (i, how) = g.interval.unwrap();
        assert_eq!(how, Method::Betting);
        assert!(i.low < 2.0 / 3.0 && 2.0 / 3.0 < i.high, "{i:?}");
        t.add("d", 3, None);
        let e = t.judge(Stat::PassHat(2), 2).error.unwrap();
        assert!(
            e.contains("(`d`; results written by an earlier version)"),
            "{e}"
        );
        let ids = named(["a", "b", "c", "d", "e", "f", "g"].into_iter(), 7);
        assert_eq!(ids, "`a`, `b`, `c`, `d`, `e`, and 2 more");
    }

    #[test]
    fn a_results_file_judges_pass_gates_from_its_records() {
        use std::collections::BTreeMap;

        use crate::output::results::{DatasetTerms, Gate, Results, Verdict};
        use crate::output::test_record as record;

        // One run each (no `repeat`): pass@1 is the pass rate; pass@2
        // cannot be judged, and says which samples and what to change.
        let records = vec![
            record("qa", "a", Verdict::Pass),
            record("qa", "b", Verdict::Fail),
        ];
        let gate = |stat| Gate::new("contains", eval_datasets::Op::AtLeast, 0.4).with_stat(stat);
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(
                Some(2),
                vec![gate(Stat::PassAt(1)), gate(Stat::PassAt(2))],
                false,
            ),
        )]);
        let results = Results::new("evals", records, &terms);
        let gates: Vec<_> = results.datasets[0].metrics[0].gates().collect();
        assert_eq!(gates[0].margin.map(|m| m + 0.4), Some(0.5));
        assert_eq!(gates[0].error, None);
        let short = gates[1];
        assert!(short.judged && !short.passed && short.decision.is_none());
        assert_eq!(short.margin, None);
        let shown = short.to_string();
        assert!(
            shown.starts_with(
                "pass@2(contains) >= 0.4 missed: cannot be judged: 2 sample(s) ran fewer than 2 times (`a`, `b`; fewest 1)"
            ),
            "{shown}"
        );
        assert_eq!(results.failed_gates().len(), 1);
    }
}
