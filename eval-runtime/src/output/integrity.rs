//! Files that never claim more than they hold.
//!
//! * [`Results::check_consistency`]: a results file's own totals against the
//!   records it holds — per dataset its samples, passed, failed, errors and
//!   inconclusive counts, each metric's scored, unscored and inconclusive
//!   samples, whether it is complete (against its `planned` count) and
//!   whether its gates were judged, and the run's `complete`. The records
//!   are counted again the way the writer counts them (the same
//!   [`Summaries`]), so a file as written always agrees; a hand-edited or
//!   damaged one (`complete: true` over 10 of 30 records) does not.
//!   Consistency is not completeness: the file of a killed run that says
//!   it is incomplete is consistent. Means, intervals and gate verdicts are
//!   not compared (their method may change between versions; a gate is
//!   recomputed whenever files are joined).
//! * [`missing_from_join`]: what a join of parts lacks beyond its own
//!   datasets' counts — the datasets a part's run did not reach (its
//!   `missing_datasets`), the datasets a part planned and holds no sample of
//!   (its provenance's), unless another part supplies them whole; and a
//!   part that says it is incomplete without saying why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::Summaries;
use super::results::{DatasetSummary, MetricSummary, Results, ResultsError};

/// How many problems an [`ResultsError::Inconsistent`] error lists.
const SHOWN_PROBLEMS: usize = 8;

impl Results {
    /// `Ok` when the file's totals are what its records give; else
    /// [`ResultsError::Inconsistent`] naming `path` and what does not add
    /// up. The records are counted again as the run counted them: per
    /// dataset its samples, passed, failed, errors and inconclusive ones,
    /// whether it is complete (against `planned`) and its gates judged;
    /// per metric its scored, unscored and inconclusive samples; and a
    /// run that says `complete` must have every dataset complete and none
    /// missing. Means, intervals and gate verdicts are not compared.
    /// Consistency is not completeness: a killed run's file that says it
    /// is incomplete is consistent. Fields that files of earlier versions
    /// lack read as their defaults (no `planned`: what is there counts as
    /// complete), so such a file passes when its counts agree.
    #[doc(hidden)]
    pub fn check_consistency(&self, path: &Path) -> Result<(), ResultsError> {
        let mut problems = self.inconsistencies();
        if problems.is_empty() {
            return Ok(());
        }
        if problems.len() > SHOWN_PROBLEMS {
            let more = problems.len() - SHOWN_PROBLEMS;
            problems.truncate(SHOWN_PROBLEMS);
            problems.push(format!("{more} more"));
        }
        Err(ResultsError::Inconsistent {
            path: path.to_path_buf(),
            problems,
        })
    }

    /// [`Results::read`], then its consistency check: what a
    /// summary, a comparison, a baseline or a join may rely on.
    pub fn read_consistent(path: &Path) -> Result<Results, ResultsError> {
        let results = Results::read(path)?;
        results.check_consistency(path)?;
        Ok(results)
    }

    /// What does not add up in this file, one entry each (empty when it is
    /// consistent).
    #[doc(hidden)]
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for s in &self.samples {
            if !seen.insert((s.dataset.as_str(), s.test_name.as_str())) {
                problems.push(format!(
                    "sample {} of `{}` is recorded twice",
                    s.test_name, s.dataset
                ));
            }
        }
        let mut named = BTreeSet::new();
        for d in &self.datasets {
            if !named.insert(d.name.as_str()) {
                problems.push(format!("dataset `{}` is summarised twice", d.name));
            }
        }
        let terms = self.terms();
        let mut summaries = Summaries::new(&terms);
        self.samples.iter().for_each(|s| summaries.add(s));
        let counted: BTreeMap<String, DatasetSummary> = summaries
            .finish(&terms)
            .into_iter()
            .map(|d| (d.name.clone(), d))
            .collect();
        for (name, d) in &counted {
            if !named.contains(name.as_str()) {
                problems.push(format!(
                    "{} record(s) of dataset `{name}`, which the file does not summarise",
                    d.samples
                ));
            }
        }
        for d in &self.datasets {
            dataset_problems(d, counted.get(&d.name), &mut problems);
        }
        if self.complete {
            let short: Vec<String> = self
                .datasets
                .iter()
                .filter(|d| !counted.get(&d.name).is_some_and(|c| c.complete))
                .map(|d| match d.planned {
                    Some(p) => format!(
                        "`{}` holds {} of {p} planned samples",
                        d.name,
                        held(&counted, d)
                    ),
                    None => format!("`{}` holds no sample", d.name),
                })
                .collect();
            if !short.is_empty() {
                problems.push(format!("it says complete, but {}", short.join(", ")));
            }
            if !self.missing_datasets.is_empty() {
                problems.push(format!(
                    "it says complete, but lists dataset(s) that did not run: {}",
                    self.missing_datasets.join(", ")
                ));
            }
        }
        problems
    }
}

/// Records of `d` in the file.
fn held(counted: &BTreeMap<String, DatasetSummary>, d: &DatasetSummary) -> usize {
    counted.get(&d.name).map_or(0, |c| c.samples)
}

/// What does not add up in dataset `d` against `counted`, its records
/// counted again (`None`: the file holds no record of it).
fn dataset_problems(d: &DatasetSummary, counted: Option<&DatasetSummary>, out: &mut Vec<String>) {
    let counts = |s: &DatasetSummary| [s.samples, s.passed, s.failed, s.errors, s.inconclusive];
    let have = counted.map_or([0; 5], counts);
    for ((what, said), have) in ["samples", "passed", "failed", "errors", "inconclusive"]
        .into_iter()
        .zip(counts(d))
        .zip(have)
    {
        if said != have {
            out.push(format!(
                "dataset `{}` says {said} {what}, its records give {have}",
                d.name
            ));
        }
    }
    // With no record, a dataset is complete only when nothing was planned.
    let complete = counted.map_or(d.planned.is_none_or(|p| p == 0), |c| c.complete);
    if d.complete != complete {
        let planned = d.planned.map_or("?".to_string(), |p| p.to_string());
        out.push(format!(
            "dataset `{}` says it is {}complete, and holds {} of {planned} planned samples",
            d.name,
            if d.complete { "" } else { "not " },
            have[0]
        ));
    }
    let none = Vec::new();
    let metrics = counted.map_or(&none, |c| &c.metrics);
    for m in &d.metrics {
        let c = metrics.iter().find(|c| c.name == m.name);
        metric_problems(&d.name, m, c, out);
        for g in m.gates() {
            if g.judged != complete {
                out.push(format!(
                    "gate {} of `{}` is {}judged over {} of {} planned samples",
                    g.gate,
                    d.name,
                    if g.judged { "" } else { "not " },
                    have[0],
                    d.planned.map_or("?".to_string(), |p| p.to_string())
                ));
            }
        }
    }
    for c in metrics {
        if !d.metrics.iter().any(|m| m.name == c.name) && c.scored + c.unscored > 0 {
            out.push(format!(
                "metric `{}` of `{}` is on {} record(s) and not summarised",
                c.name,
                d.name,
                c.scored + c.unscored
            ));
        }
    }
}

/// What does not add up in metric `m` of `dataset` against `counted`.
fn metric_problems(
    dataset: &str,
    m: &MetricSummary,
    counted: Option<&MetricSummary>,
    out: &mut Vec<String>,
) {
    let counts = |s: &MetricSummary| [s.scored, s.unscored, s.inconclusive];
    let have = counted.map_or([0; 3], counts);
    for ((what, said), have) in ["scored", "unscored", "inconclusive"]
        .into_iter()
        .zip(counts(m))
        .zip(have)
    {
        if said != have {
            out.push(format!(
                "metric `{}` of `{dataset}` says {said} {what}, its records give {have}",
                m.name
            ));
        }
    }
}

/// What a join of `parts` (named `names`, their files) lacks beyond what
/// `merged`, their join, says of its own datasets: each dataset a part's
/// run did not reach (its `missing_datasets`) or planned and holds no
/// sample of (in its provenance), unless `merged` holds it complete; and,
/// for a part that says it is incomplete without saying why (a file of an
/// earlier version, or edited), an entry saying so. In the order the parts
/// name them, each once.
pub(crate) fn missing_from_join(
    parts: &[Results],
    names: &[String],
    merged: &Results,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |entry: String| {
        if !out.contains(&entry) {
            out.push(entry);
        }
    };
    for (i, part) in parts.iter().enumerate() {
        for m in &part.missing_datasets {
            if !supplied(merged, m) {
                add(m.clone());
            }
        }
        let planned: Vec<&str> = part
            .provenance
            .iter()
            .flat_map(|p| &p.datasets)
            .map(|d| d.name.as_str())
            .collect();
        for name in &planned {
            if !merged.datasets.iter().any(|d| d.name == *name) {
                add((*name).to_string());
            }
        }
        let explained = !part.missing_datasets.is_empty()
            || part.datasets.iter().any(|d| !d.complete)
            || planned
                .iter()
                .any(|n| !part.datasets.iter().any(|d| d.name == *n));
        if !part.complete && !explained {
            let name = names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("input {}", i + 1));
            add(format!(
                "(unknown: {name} says it is incomplete and not what it lacks)"
            ));
        }
    }
    out
}

/// Whether `merged` holds the dataset a part names as missing, whole: a
/// dataset of that name, or — the attribute names a dataset of its binary
/// that has not run `function (path)` — the dataset of that function
/// (`function` or `module::function`) read from `path` (when the
/// provenance says where it was read from).
fn supplied(merged: &Results, entry: &str) -> bool {
    let whole = |d: &&DatasetSummary| d.complete;
    if merged
        .datasets
        .iter()
        .filter(whole)
        .any(|d| d.name == entry)
    {
        return true;
    }
    let Some((function, path)) = entry
        .split_once(" (")
        .and_then(|(f, rest)| Some((f, rest.strip_suffix(')')?)))
    else {
        return false;
    };
    if function.is_empty() || !function.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let suffix = format!("::{function}");
    let file = |name: &str| {
        merged
            .provenance
            .iter()
            .flat_map(|p| &p.datasets)
            .find(|s| s.name == name)
            .map(|s| s.file.as_str())
    };
    merged.datasets.iter().filter(whole).any(|d| {
        (d.name == function || d.name.ends_with(&suffix)) && file(&d.name).is_none_or(|f| f == path)
    })
}

#[cfg(test)]
mod tests;
