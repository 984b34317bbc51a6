//! A metric measured against human labels, as a calibration file holds it:
//! the agreement (Cohen's κ, accuracy, true-pass and true-fail rates, the
//! confusion matrix, Spearman's ρ), the judge's fingerprint it holds for,
//! the samples the metric and the humans disagree on. Computed by
//! [`calibrate`](crate::calibrate::calibrate).
//!
//! A calibration records what it measured — its scope: the metric with its
//! operator, threshold and options, the label set (its file and the
//! SHA-256 of its content) and the judge's fingerprint. A run records it
//! and shows its κ beside a dataset's metric only when the metric, its
//! operator, threshold and options are the same and the judge's
//! fingerprint holds ([`attached`]): a κ measured at `faithfulness >= 0.8`
//! says nothing of a gate at `faithfulness >= 0.3`. Files of layout 1
//! record no scope and are never attached (the run says to calibrate
//! again).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use eval_datasets::MetricSpec;

use crate::model::{CalibrationSummary, JudgeFingerprint, hex};
use crate::stats::{Agreement, Interval};

/// Version of the calibration file layout (2: with its scope).
pub const CALIBRATION_VERSION: u32 = 2;
/// The oldest layout still read (1: no scope recorded; never attached).
const OLDEST_READ: u32 = 1;
/// Most calibration files read from one directory.
const MAX_FILES: usize = 1000;

/// Why a calibration could not be made, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// The labels file is not a dataset.
    #[error(transparent)]
    Dataset(#[from] eval_datasets::DatasetError),
    /// Samples without an answer or a label, or with a label that is not
    /// one: every problem, each with its file and line.
    #[error("{}", .problems.join("\n"))]
    Labels {
        /// One line per problem.
        problems: Vec<String>,
    },
    /// The metric cannot be scored in this setup (no judge configured).
    #[error("{0}")]
    Unavailable(String),
    /// No async runtime could be started.
    #[error("cannot start an async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A calibration file could not be written.
    #[error("cannot write calibration {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A calibration file could not be read.
    #[error("cannot read calibration {}: {reason}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// A sample the metric and the human disagree on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Disagreement {
    /// The sample's id.
    pub id: String,
    /// `file:line`.
    pub source: String,
    /// The human's verdict.
    pub human_passes: bool,
    /// The metric's score.
    pub score: f64,
    /// Why the metric scored as it did, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A labelled sample the metric could not score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Unscored {
    /// The sample's id.
    pub id: String,
    /// `file:line`.
    pub source: String,
    /// Why.
    pub error: String,
}

/// Spearman's ρ between the metric's scores and the human scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RankCorrelation {
    /// ρ.
    pub rho: f64,
    /// Its 95% interval (Fisher's z), for four pairs or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// Pairs.
    pub pairs: usize,
}

/// A metric measured against human labels (`evals calibrate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Calibration {
    /// [`CALIBRATION_VERSION`].
    pub version: u32,
    /// The metric's name.
    pub metric: String,
    /// The metric as calibrated (`faithfulness >= 0.8`): its threshold
    /// decides the metric's pass or fail.
    pub spec: String,
    /// Its operator, `>=` or `<=` (`None` in files of layout 1, which
    /// record no scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Its threshold (`None` in files of layout 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Its options as resolved, every one with its default
    /// (the Rust form of its resolved kind, e.g. `Faithfulness`; `None` in
    /// files of layout 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<String>,
    /// The labels file as named.
    pub labels: String,
    /// SHA-256 of the labels file.
    pub labels_sha256: String,
    /// Labelled samples.
    pub samples: usize,
    /// Agreement over the samples the metric scored.
    pub agreement: Agreement,
    /// With human scores: Spearman's ρ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spearman: Option<RankCorrelation>,
    /// The judge that scored it, with only this metric's versions (`None`
    /// for a metric no judge scores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeFingerprint>,
    /// The samples the metric and the human disagree on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<Disagreement>,
    /// The samples the metric could not score (left out of the agreement).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unscored: Vec<Unscored>,
    /// When it was made, seconds since the Unix epoch.
    pub written_unix: f64,
}

impl Calibration {
    /// What a run records of it (the datasets it is attached to: none yet).
    pub fn summary(&self) -> CalibrationSummary {
        CalibrationSummary {
            metric: self.metric.clone(),
            spec: self.spec.clone(),
            kappa: self.agreement.kappa,
            kappa_interval: self.agreement.kappa_interval,
            accuracy: self.agreement.accuracy,
            samples: self.agreement.confusion.total(),
            labels: self.labels.clone(),
            labels_sha256: Some(self.labels_sha256.clone()).filter(|h| !h.is_empty()),
            datasets: Vec::new(),
            written_unix: self.written_unix,
        }
    }

    /// Whether it records its scope (the metric's operator, threshold and
    /// options): files of layout 1 do not, and are never attached to a run.
    pub fn is_scoped(&self) -> bool {
        self.version >= 2 && self.op.is_some() && self.threshold.is_some() && self.options.is_some()
    }

    /// Whether it measured `spec`: the same metric, operator, threshold
    /// and options (its judge is [`holds_for`](Self::holds_for)'s to say).
    pub fn measures(&self, spec: &MetricSpec) -> bool {
        self.is_scoped()
            && self.metric == spec.name
            && self.op.as_deref() == Some(spec.op.to_string().as_str())
            && self.threshold == Some(spec.threshold)
            && self.options.as_deref() == Some(spec_options(spec).as_str())
    }

    /// The file name it is kept under in a calibrations directory:
    /// `<metric>-<12 hex digits>.json`, the digits of the SHA-256 of its
    /// judge's fingerprint, its operator, threshold and options and its
    /// labels file as named, so a calibration under another judge, at
    /// another threshold or on other labels never replaces this one (the
    /// same labels file calibrated again does).
    pub fn file_name(&self) -> String {
        use sha2::Digest as _;
        let scope = serde_json::json!({
            "judge": self.judge,
            "op": self.op,
            "threshold": self.threshold,
            "options": self.options,
            "labels": self.labels,
        });
        let digest = hex(&sha2::Sha256::digest(scope.to_string().as_bytes()));
        let metric: String = self
            .metric
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{metric}-{}.json", &digest[..12])
    }

    /// Writes it to `path`, atomically.
    pub fn write(&self, path: &Path) -> Result<(), CalibrateError> {
        let error = |source| CalibrateError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(error)?;
        }
        let text = serde_json::to_vec_pretty(self).map_err(|e| error(std::io::Error::other(e)))?;
        eval_datasets::files::write_atomically(path, &text).map_err(error)
    }

    /// Reads a calibration file.
    pub fn read(path: &Path) -> Result<Calibration, CalibrateError> {
        let error = |reason: String| CalibrateError::Read {
            path: path.to_path_buf(),
            reason,
        };
        let bytes =
            eval_datasets::files::read_checked(path, 16 << 20).map_err(|e| error(e.to_string()))?;
        let c: Calibration = serde_json::from_slice(&bytes).map_err(|e| error(e.to_string()))?;
        if !(OLDEST_READ..=CALIBRATION_VERSION).contains(&c.version) {
            return Err(error(format!(
                "layout version {} (this version reads {OLDEST_READ} to {CALIBRATION_VERSION})",
                c.version
            )));
        }
        Ok(c)
    }

    /// Whether it was made with the judge that scores its metric in a run
    /// fingerprinted `judge` (same model, host, settings, and this metric's
    /// prompt and definition versions).
    pub fn holds_for(&self, judge: Option<&JudgeFingerprint>) -> bool {
        let (Some(mine), Some(run)) = (&self.judge, judge) else {
            return false;
        };
        let Some(versions) = run.metrics.get(&self.metric) else {
            return false;
        };
        mine.model == run.model
            && mine.host == run.host
            && mine.temperature == run.temperature
            && mine.seed == run.seed
            && mine.metrics.get(&self.metric) == Some(versions)
    }
}

/// A metric with its threshold as a calibration names it: `faithfulness >= 0.8`.
pub(crate) fn spec_text(spec: &MetricSpec) -> String {
    format!("{} {} {}", spec.name, spec.op, spec.threshold)
}

/// A metric's options as resolved, every one with its default, as a
/// calibration records them: two specs with the same text here score alike
/// (`faithfulness` and `faithfulness()` both give `Faithfulness`; a rubric
/// its text or file). The metric within its family, as files written before
/// the families were named it.
pub(crate) fn spec_options(spec: &MetricSpec) -> String {
    use eval_datasets::metric::MetricKind;
    match &spec.kind {
        MetricKind::Text(k) => format!("{k:?}"),
        MetricKind::Judged(k) => format!("{k:?}"),
        MetricKind::Rank(k) => format!("Rank({k:?})"),
        MetricKind::Tools(k) => format!("{k:?}"),
        MetricKind::Trajectory(k) => format!("{k:?}"),
        MetricKind::Measured(k) => format!("Measured({k:?})"),
        MetricKind::User(u) => format!("User({} {})", u.name, u.version),
        MetricKind::Exec(m) => format!("Exec({})", m.command),
    }
}

/// Every readable calibration file in `dir` (at most [`MAX_FILES`] looked at).
fn read_all(dir: &Path) -> Vec<(PathBuf, Calibration)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(MAX_FILES)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| Calibration::read(&p).ok().map(|c| (p, c)))
        .collect()
}

/// The calibrations in `dir` (files written by [`Calibration::write`]) that
/// record their scope and hold for `judge`, the newest of each scope (the
/// same [`file_name`](Calibration::file_name)), by metric. Unreadable files
/// are skipped.
pub fn matching(dir: &Path, judge: Option<&JudgeFingerprint>) -> Vec<Calibration> {
    let mut found: Vec<Calibration> = Vec::new();
    for (_, c) in read_all(dir) {
        if !c.is_scoped() || !c.holds_for(judge) {
            continue;
        }
        match found.iter_mut().find(|f| f.file_name() == c.file_name()) {
            Some(f) if f.written_unix < c.written_unix => *f = c,
            Some(_) => {}
            None => found.push(c),
        }
    }
    found.sort_by(|a, b| {
        a.metric
            .cmp(&b.metric)
            .then(b.written_unix.total_cmp(&a.written_unix))
    });
    found
}

/// What a run records of the calibrations in `dir`, for its judge `judge`
/// and its datasets (each name with the metric specs it scores): each
/// calibration that [`measures`](Calibration::measures) a metric of a
/// dataset and [`holds_for`](Calibration::holds_for) the judge, naming those
/// datasets; and notes on those of a judged metric of the run that are not
/// attached — made at another threshold, operator or options, or recording
/// no scope.
pub(crate) fn attached(
    dir: &Path,
    judge: Option<&JudgeFingerprint>,
    datasets: &[(&str, Vec<&MetricSpec>)],
) -> (Vec<CalibrationSummary>, Vec<String>) {
    let mut summaries = Vec::new();
    for c in matching(dir, judge) {
        let names: Vec<String> = datasets
            .iter()
            .filter(|(_, specs)| specs.iter().any(|s| c.measures(s)))
            .map(|(name, _)| name.to_string())
            .collect();
        if !names.is_empty() {
            summaries.push(CalibrationSummary {
                datasets: names,
                ..c.summary()
            });
        }
    }
    (summaries, unattached_notes(dir, judge, datasets))
}

/// [`attached`]'s notes: per judged metric of the run (by name) scored by
/// `judge`, the calibrations of it not attached, once each.
fn unattached_notes(
    dir: &Path,
    judge: Option<&JudgeFingerprint>,
    datasets: &[(&str, Vec<&MetricSpec>)],
) -> Vec<String> {
    let Some(fingerprint) = judge else {
        return Vec::new();
    };
    let specs: Vec<&MetricSpec> = datasets
        .iter()
        .flat_map(|(_, s)| s.iter().copied())
        .collect();
    let mut notes = Vec::new();
    for (path, c) in read_all(dir) {
        let mine: Vec<&&MetricSpec> = specs.iter().filter(|s| s.name == c.metric).collect();
        if mine.is_empty() || !fingerprint.metrics.contains_key(&c.metric) {
            continue;
        }
        let note = if !c.is_scoped() {
            format!(
                "calibration {} of {} records no scope (made by an earlier version): its κ is not shown; run `evals calibrate {} --metric \"{}\"` again",
                path.display(),
                c.spec,
                c.labels,
                c.spec
            )
        } else if c.holds_for(judge) && !mine.iter().any(|s| c.measures(s)) {
            format!(
                "{} was calibrated with this judge at `{}` (labels {}), not at this run's `{}`: its κ is not shown",
                c.metric,
                c.spec,
                c.labels,
                spec_text(mine[0])
            )
        } else {
            continue;
        };
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes.sort();
    notes
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::MetricVersions;
    use crate::stats::{Confusion, Level, cohen_kappa};

    fn judge(model: &str) -> JudgeFingerprint {
        JudgeFingerprint {
            model: model.into(),
            host: "127.0.0.1:1".into(),
            temperature: 0.0,
            seed: 42,
            metrics: BTreeMap::from([(
                "faithfulness".to_string(),
                MetricVersions {
                    prompts: BTreeMap::from([("faithfulness/statements".to_string(), 3)]),
                    definition: 1,
                    criteria_sha256: None,
                    steps_sha256: None,
                },
            )]),
        }
    }

    fn spec(text: &str) -> MetricSpec {
        eval_datasets::metric::parse_specs(text).unwrap().remove(0)
    }

    /// A calibration of `text` on `labels`, made with the judge `model`.
    fn made(text: &str, labels: &str, model: &str) -> Calibration {
        let s = spec(text);
        Calibration {
            version: CALIBRATION_VERSION,
            metric: s.name.clone(),
            spec: spec_text(&s),
            op: Some(s.op.to_string()),
            threshold: Some(s.threshold),
            options: Some(spec_options(&s)),
            labels: labels.into(),
            labels_sha256: format!("{:064x}", labels.len()),
            samples: 4,
            agreement: cohen_kappa(
                Confusion {
                    true_pass: 2,
                    false_pass: 0,
                    false_fail: 1,
                    true_fail: 1,
                },
                Level::STANDARD,
            ),
            spearman: None,
            judge: Some(judge(model)),
            disagreements: Vec::new(),
            unscored: Vec::new(),
            written_unix: 1.0,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("eval-cal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_calibration_measures_its_metric_operator_threshold_and_options_only() {
        let c = made("faithfulness >= 0.8", "l.jsonl", "m");
        assert!(c.is_scoped());
        assert!(c.measures(&spec("faithfulness >= 0.8")));
        assert!(
            c.measures(&spec("faithfulness() >= 0.8")),
            "defaults resolved alike"
        );
        assert!(!c.measures(&spec("faithfulness >= 0.3")));
        let mut other_op = spec("faithfulness >= 0.8");
        other_op.op = eval_datasets::Op::AtMost;
        assert!(!c.measures(&other_op));
        assert!(!c.measures(&spec("answer_relevancy >= 0.8")));
        let rubric = made("rubric(rubric = \"polite\") >= 0.5", "l.jsonl", "m");
        assert!(rubric.measures(&spec("rubric(rubric = \"polite\") >= 0.5")));
        assert!(!rubric.measures(&spec("rubric(rubric = \"rude\") >= 0.5")));
        // Another threshold, labels file or judge: another file.
        let names = [
            c.file_name(),
            made("faithfulness >= 0.3", "l.jsonl", "m").file_name(),
            made("faithfulness >= 0.8", "k.jsonl", "m").file_name(),
            made("faithfulness >= 0.8", "l.jsonl", "n").file_name(),
        ];
        for (i, a) in names.iter().enumerate() {
            assert!(
                a.starts_with("faithfulness-") && a.ends_with(".json"),
                "{a}"
            );
            assert!(!names[i + 1..].contains(a), "{names:?}");
        }
    }

    #[test]
    fn a_run_records_the_calibrations_of_its_datasets_metrics_only() {
        let dir = scratch("attached");
        let at_08 = made("faithfulness >= 0.8", "l.jsonl", "m");
        let other_labels = made("faithfulness >= 0.8", "other.jsonl", "m");
        let at_03 = made("faithfulness >= 0.3", "l.jsonl", "m");
        let other_judge = made("faithfulness >= 0.8", "l.jsonl", "n");
        for c in [&at_08, &other_labels, &at_03, &other_judge] {
            c.write(&dir.join(c.file_name())).unwrap();
        }
        let (strict, loose) = (spec("faithfulness >= 0.8"), spec("faithfulness >= 0.5"));
        let datasets = [
            ("a", vec![&strict]),
            ("b", vec![&loose]),
            ("c", vec![&strict]),
        ];
        let (summaries, notes) = attached(&dir, Some(&judge("m")), &datasets);
        let mut got: Vec<(&str, &[String], Option<&str>)> = summaries
            .iter()
            .map(|s| {
                (
                    s.labels.as_str(),
                    s.datasets.as_slice(),
                    s.labels_sha256.as_deref(),
                )
            })
            .collect();
        got.sort();
        // Each label set with its own hash (the test's: its name's length).
        let (a_c, hash_l, hash_other) = (
            ["a".to_string(), "c".to_string()],
            format!("{:064x}", 7),
            format!("{:064x}", 11),
        );
        assert_eq!(
            got,
            [
                ("l.jsonl", &a_c[..], Some(hash_l.as_str())),
                ("other.jsonl", &a_c[..], Some(hash_other.as_str())),
            ]
        );
        // Dataset b gates another threshold: a note, not a κ.
        assert!(
            notes.iter().any(|n| n.contains(
                "faithfulness was calibrated with this judge at `faithfulness >= 0.3` (labels l.jsonl), not at this run's"
            )),
            "{notes:?}"
        );
        // No judge, or another: nothing.
        assert!(attached(&dir, None, &datasets).0.is_empty());
        assert!(attached(&dir, Some(&judge("x")), &datasets).0.is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_of_layout_1_is_read_and_never_attached() {
        let dir = scratch("layout-1");
        let mut old = made("faithfulness >= 0.8", "l.jsonl", "m");
        old.version = 1;
        (old.op, old.threshold, old.options) = (None, None, None);
        old.write(&dir.join("faithfulness-old.json")).unwrap();
        let read = Calibration::read(&dir.join("faithfulness-old.json")).unwrap();
        assert!(!read.is_scoped());
        assert!(!read.measures(&spec("faithfulness >= 0.8")));
        let strict = spec("faithfulness >= 0.8");
        let (summaries, notes) = attached(&dir, Some(&judge("m")), &[("a", vec![&strict])]);
        assert!(summaries.is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("records no scope"), "{notes:?}");
        // A layout this version does not know is refused.
        let mut future = made("faithfulness >= 0.8", "l.jsonl", "m");
        future.version = CALIBRATION_VERSION + 1;
        future.write(&dir.join("future.json")).unwrap();
        assert!(Calibration::read(&dir.join("future.json")).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
