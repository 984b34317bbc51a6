//! The end's files, written from the spool in bounded memory: a first pass
//! over the records tallies what the head of every file needs (the
//! summaries, what the command's summary shows, the HTML report's plan,
//! JUnit's totals); then each file is written in a pass of its own, one
//! record at a time, in this order: the results file, the HTML report, the
//! JUnit XML. Each is written atomically, and one that cannot be written
//! fails with its own path (the files before it are written).

use std::collections::BTreeMap;
use std::path::Path;

use super::spool::{self, Held};
use super::{Run, for_each_record, provenance};
use crate::model::Provenance;
use crate::output::{
    DatasetSummary, Inline, JunitPlan, PagePlan, Results, ResultsError, ResultsKey, RunMeta, Shown,
    Summaries,
};

/// Where the end's files go (`None`: not written).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Files<'p> {
    pub results: Option<&'p Path>,
    pub html: Option<&'p Path>,
    pub junit: Option<&'p Path>,
    /// Where the samples' relative file paths start: JUnit's `file=` are
    /// written relative to its workspace root.
    pub base: Option<&'p Path>,
}

/// Writes `files` of `runs` (one file for all of them: the attribute's
/// datasets of one process), sorted by dataset and test name, one record at
/// a time (see the [module docs](self)); returns the results' header (its
/// `samples` left empty), and gathers in `shown`, when given, what a
/// summary shows of the samples. `missing`: datasets that should be there
/// and are not (the run is then incomplete).
pub(crate) fn write_streamed(
    runs: &[&Run],
    key: &ResultsKey,
    missing: &[String],
    files: Files<'_>,
    mut shown: Option<&mut Shown>,
) -> Result<Results, ResultsError> {
    let mut terms = BTreeMap::new();
    for run in runs {
        terms.extend(run.terms());
    }
    let provenance = provenance::combine(runs.iter().map(|r| r.provenance()));
    let mut held: Vec<Held<'_>> = runs.iter().map(|r| r.records.hold()).collect();
    let mut summaries = Summaries::new(&terms);
    let mut page = files.html.map(|_| PagePlan::default());
    let mut junit = files.junit.map(|_| JunitPlan::default());
    for_each_record(&mut held, |_, record| {
        summaries.add(&record);
        if let Some(shown) = shown.as_deref_mut() {
            shown.add(&record);
        }
        if let Some(page) = &mut page {
            page.add(&record);
        }
        if let Some(junit) = &mut junit {
            junit.add(&record);
        }
        Ok(())
    })?;
    let (datasets, complete) = summaries.finish_run(&terms);
    if let Some(path) = files.results {
        let run = (datasets.as_slice(), complete, missing);
        results_file(path, key, &mut held, run, provenance.as_ref())?;
    }
    if let (Some(path), Some(plan)) = (files.html, page) {
        // The page links the results file when it is beside it.
        let results_file = files
            .results
            .filter(|r| r.parent() == path.parent())
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        let whole = complete && missing.is_empty();
        let meta = RunMeta {
            binary: &key.binary,
            package: key.package.as_deref(),
            written_unix: crate::output::now_unix(),
            complete: whole,
            incomplete: crate::output::incompleteness(whole, &datasets, missing),
            usage: crate::output::total_usage(&datasets),
            provenance: provenance.as_ref(),
            results_file,
            datasets: &datasets,
        };
        crate::output::write_html_along(path, &key.binary, (plan, Inline::DEFAULT), |page| {
            for_each_record(&mut held, |json, record| {
                // The page takes the record as the results file does.
                page.sample_as(&record, std::str::from_utf8(json).ok());
                Ok(())
            })?;
            page.end_run(&meta);
            Ok(())
        })?;
    }
    if let (Some(path), Some(plan)) = (files.junit, junit) {
        let summaries = (&datasets[..], &plan);
        crate::output::write_junit_along(path, &key.binary, summaries, files.base, |junit| {
            for_each_record(&mut held, |_, record| {
                junit.sample(&record);
                Ok(())
            })
        })?;
    }
    let mut results = Results::new(&key.binary, Vec::new(), &BTreeMap::new());
    results.package = key.package.clone();
    results.provenance = provenance;
    results.complete = complete && missing.is_empty();
    results.missing_datasets = missing.to_vec();
    results.usage = crate::output::total_usage(&datasets);
    results.datasets = datasets;
    Ok(results)
}

/// Writes the results file at `path`, its records copied from the spool as
/// they were serialized.
fn results_file(
    path: &Path,
    key: &ResultsKey,
    held: &mut [Held<'_>],
    run: (&[DatasetSummary], bool, &[String]),
    provenance: Option<&Provenance>,
) -> Result<(), ResultsError> {
    let failed = std::cell::Cell::new(None);
    let records = spool::merged(held)
        .map_err(ResultsError::Records)?
        .map(|entry| {
            let raw = entry.and_then(|e| {
                serde_json::from_slice::<Box<serde_json::value::RawValue>>(e.record())
                    .map_err(std::io::Error::other)
            });
            Copied(raw.map_err(|e| failed.set(Some(e))).ok())
        });
    let names = (key.binary.as_str(), key.package.as_deref());
    let written = crate::output::write_streaming(path, names, run, provenance, records);
    // A record that cannot be read back fails the write (the file is left
    // as it was), and says why.
    match failed.take() {
        Some(e) => Err(ResultsError::Records(e)),
        None => written,
    }
}

/// A record copied into the results file as it was serialized; `None` (it
/// could not be read back) fails the file's serialization, so no partial
/// file replaces the last one.
struct Copied(Option<Box<serde_json::value::RawValue>>);

impl serde::Serialize for Copied {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(raw) => raw.serialize(s),
            None => Err(serde::ser::Error::custom(
                "a record of the run could not be read back",
            )),
        }
    }
}
