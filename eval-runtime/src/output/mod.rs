//! What a run leaves behind: the [`results`] file (written atomically, saying
//! whether the run was complete), where it goes ([`location`]), the one
//! [`verdict`] contract, merging parts and shards ([`merge()`]), comparing
//! runs and baselines ([`diff()`]), the per-sample [`report`] a person
//! reads, and the [`html()`] report of whole runs.

mod calibration;
mod diff;
mod html;
mod integrity;
mod junit;
mod layout;
mod markdown;
mod md;
mod merge;
mod paint;
mod reader;
mod report;
mod results;
mod runs_gate;
mod summary;
mod text;
mod unproven;
mod verdict;
mod workspace;

pub use crate::config::{
    ResultsKey, binary_name, calibration_dir, project_calibration_dir, results_dir,
};
pub use crate::model::{
    AgentProvenance, Allow, Bound, CalibrationSummary, DatasetProvenance, Differences,
    EmbeddingsFingerprint, GitState, JudgeFingerprint, MetricVersions, Provenance, QuestionChange,
    UserMetricProvenance,
};
pub(crate) use crate::model::{MetricResult, SampleReport, Spread};
pub use calibration::{
    CALIBRATION_VERSION, CalibrateError, Calibration, Disagreement, RankCorrelation, Unscored,
    matching as matching_calibrations,
};
pub use diff::{
    ALPHA, BaselineOutcome, Change, Comparison, Count, Diff, GateChange, GateNeeded, GateOutcome,
    Needed, Only, Outcome, POWER, Regression, SHOWN_CHANGES, accept, check_baseline, compare, diff,
    diff_markdown,
};
pub use html::{html, html_path, write_html};
pub use junit::junit_xml;
pub use markdown::{append_step_summary, summary_markdown};
pub use merge::{merge, merge_allowing, merge_dir, merge_paths, merge_paths_allowing};
pub use paint::Paint;
pub use results::{
    DatasetSummary, DatasetTerms, FORMAT_VERSION, Gate, GateResult, KEPT_CHARS, KEPT_CHUNKS,
    MetricRecord, MetricSummary, Results, ResultsError, RunSpread, SampleRecord, UsageTotals,
    Verdict, WrittenMetric, failed_gates, total_usage,
};
pub use text::{SHOWN_FAILURES, summary_text};
pub use unproven::unproven_lines;
pub use verdict::RunVerdict;

pub(crate) use crate::model::hex;
pub(crate) use crate::model::numbered;
pub(crate) use calibration::{
    attached as attached_calibrations, spec_options as calibration_spec_options,
    spec_text as calibration_spec_text,
};
pub(crate) use html::{Inline, PagePlan, RunMeta, write_along as write_html_along};
pub(crate) use junit::{JunitPlan, write_junit_along};
pub(crate) use markdown::{auto_step_summary, auto_step_summary_streamed};
pub(crate) use results::{incompleteness, now_unix, write_streaming};
pub(crate) use summary::Summaries;
pub(crate) use text::{Rest, Shown, summary_text_of};
pub(crate) use unproven::Unproven;

use std::path::Path;

/// Writes `value` as JSON to `path` (one line per sample, see [`layout`]), atomically (a temporary file
/// beside it, then a rename), creating the directory.
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), ResultsError> {
    let error = |source| ResultsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    eval_datasets::files::write_atomically_with(path, |out| {
        layout::to_writer(out, value).map_err(std::io::Error::other)
    })
    .map_err(error)
}

/// Records of dataset `qa` for tests, `s000`, `s001`...: passed where
/// `passes` says, failed elsewhere (see [`test_record`]).
#[cfg(test)]
pub(crate) fn test_records(passes: &[bool]) -> Vec<SampleRecord> {
    passes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = if *p { Verdict::Pass } else { Verdict::Fail };
            test_record("qa", &format!("s{i:03}"), v)
        })
        .collect()
}

/// A one-metric (`contains`) sample record for tests: scored 1 when it
/// passes, 0 when it fails, not at all on an error.
#[cfg(test)]
pub(crate) fn test_record(dataset: &str, name: &str, verdict: Verdict) -> SampleRecord {
    let score = match verdict {
        Verdict::Pass => Some(1.0),
        Verdict::Fail => Some(0.0),
        Verdict::Inconclusive => Some(0.8),
        Verdict::Error => None,
    };
    SampleRecord {
        dataset: dataset.into(),
        test_name: name.into(),
        verdict,
        counted_as: None,
        cluster: None,
        hash: None,
        metrics: vec![MetricRecord {
            name: "contains".into(),
            score,
            op: ">=".into(),
            threshold: 1.0,
            passed: verdict == Verdict::Pass,
            error: None,
            method: None,
            raw: None,
            spread: None,
            reason: None,
        }],
        latency_ms: 1.0,
        error: (verdict == Verdict::Error).then(|| "agent error: down".into()),
        id: name.into(),
        source: "f.jsonl:1".into(),
        ..SampleRecord::describing(&eval_datasets::Sample::new("q"))
    }
}
