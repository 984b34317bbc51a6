//! Samples that passed or failed without proof: their verdict over
//! repeated runs is inconclusive (the interval straddles the threshold),
//! and the `inconclusive` setting counted them as passed or failed. Every
//! place that tells a person about a run says how many there were in the
//! same words: the `evals` command's summary ([`summary_text`](super::summary_text)),
//! the attribute's and the harness's test output once per run, and
//! `evals report merge` ([`unproven_lines`]).

use std::path::Path;

use eval_datasets::terminal::escaped;

use super::results::{Results, SampleRecord, Verdict};

/// How many samples a front end's line names before `and N more`.
const NAMED: usize = 5;

/// `3 sample(s) passed with an inconclusive verdict (more runs,
/// `repeat = "auto"`, would decide them)` (`failed` when `passed` is false).
pub(crate) fn heading(count: usize, passed: bool) -> String {
    format!(
        "{count} sample(s) {} with an inconclusive verdict (more runs, `repeat = \"auto\"`, would decide them)",
        if passed { "passed" } else { "failed" }
    )
}

/// One side of [`Unproven`]: how many, and the first names.
#[derive(Debug, Default, Clone, PartialEq)]
struct Side {
    count: usize,
    names: Vec<String>,
}

impl Side {
    fn add(&mut self, name: &str) {
        self.count += 1;
        if self.names.len() < NAMED {
            self.names.push(name.to_string());
        }
    }

    /// `<heading>: a, b and 3 more (every one in <file>)`, when any.
    fn line(&self, passed: bool, listed_in: Option<&Path>) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let mut line = format!("{}: ", heading(self.count, passed));
        let names: Vec<String> = self.names.iter().map(|n| escaped(n).into_owned()).collect();
        line.push_str(&names.join(", "));
        if self.count > self.names.len() {
            line.push_str(&format!(" and {} more", self.count - self.names.len()));
        }
        if let Some(path) = listed_in {
            line.push_str(&format!(
                " (every one in {}; `evals report summary` lists them with their intervals)",
                escaped(&path.display().to_string())
            ));
        }
        Some(line)
    }
}

/// The samples of a run whose verdict is inconclusive, by what they were
/// counted as, gathered one record at a time.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Unproven {
    passed: Side,
    failed: Side,
}

impl Unproven {
    /// Counts `s` when its verdict is inconclusive.
    pub(crate) fn add(&mut self, s: &SampleRecord) {
        if s.verdict != Verdict::Inconclusive {
            return;
        }
        if s.counts_as_passed() {
            self.passed.add(&s.test_name);
        } else {
            self.failed.add(&s.test_name);
        }
    }

    /// Samples counted as passed without proof.
    pub(crate) fn passed(&self) -> usize {
        self.passed.count
    }

    /// One line per side that has samples: how many passed (then failed)
    /// with an inconclusive verdict, the first few named, and where every
    /// one is listed (`listed_in`, the results file).
    pub(crate) fn lines(&self, listed_in: Option<&Path>) -> Vec<String> {
        [
            self.passed.line(true, listed_in),
            self.failed.line(false, listed_in),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// How many samples of `results` passed and how many failed with an
/// inconclusive verdict, one line each (none when there were none), the
/// first few named, pointing at `path` (the results file) for the rest: what
/// the attribute and the harness print once per run, for a file of merged
/// parts (`evals report merge`) too.
pub fn unproven_lines(results: &Results, path: Option<&Path>) -> Vec<String> {
    let mut unproven = Unproven::default();
    results.samples.iter().for_each(|s| unproven.add(s));
    unproven.lines(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_record as record;

    fn inconclusive(name: &str, counted: Verdict) -> SampleRecord {
        let mut s = record("qa", name, Verdict::Inconclusive);
        s.counted_as = Some(counted);
        s
    }

    #[test]
    fn each_side_is_counted_named_and_pointed_at() {
        let mut u = Unproven::default();
        for k in 0..7 {
            u.add(&inconclusive(&format!("qa::p{k}"), Verdict::Pass));
        }
        u.add(&inconclusive("qa::f", Verdict::Fail));
        u.add(&record("qa", "qa::proven", Verdict::Pass));
        u.add(&record("qa", "qa::failed", Verdict::Fail));
        assert_eq!((u.passed(), u.failed.count), (7, 1));
        let lines = u.lines(Some(Path::new("target/evals/x.json")));
        assert_eq!(
            lines,
            [
                "7 sample(s) passed with an inconclusive verdict (more runs, `repeat = \"auto\"`, would decide them): qa::p0, qa::p1, qa::p2, qa::p3, qa::p4 and 2 more (every one in target/evals/x.json; `evals report summary` lists them with their intervals)",
                "1 sample(s) failed with an inconclusive verdict (more runs, `repeat = \"auto\"`, would decide them): qa::f (every one in target/evals/x.json; `evals report summary` lists them with their intervals)",
            ]
        );
    }

    #[test]
    fn nothing_to_say_without_inconclusive_samples() {
        let mut u = Unproven::default();
        u.add(&record("qa", "qa::a", Verdict::Pass));
        u.add(&record("qa", "qa::b", Verdict::Error));
        assert!(u.lines(None).is_empty());
        let results = Results::new(
            "evals",
            vec![
                inconclusive("qa::a", Verdict::Fail),
                record("qa", "qa::b", Verdict::Pass),
            ],
            &std::collections::BTreeMap::new(),
        );
        assert_eq!(
            unproven_lines(&results, None),
            [
                "1 sample(s) failed with an inconclusive verdict (more runs, `repeat = \"auto\"`, would decide them): qa::a"
            ]
        );
    }

    #[test]
    fn names_are_escaped_for_the_terminal() {
        let mut u = Unproven::default();
        u.add(&inconclusive("qa::\u{1b}[31mred", Verdict::Pass));
        assert!(!u.lines(None)[0].contains('\u{1b}'), "{:?}", u.lines(None));
    }
}
