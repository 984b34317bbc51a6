//! A metric measured against human labels, as a calibration file holds it:
//! the agreement (Cohen's κ, accuracy, true-pass and true-fail rates, the
//! confusion matrix, Spearman's ρ), the judge's fingerprint it holds for,
//! the samples the metric and the humans disagree on. Computed by
//! [`calibrate`](crate::calibrate::calibrate); a run whose judge has the
//! same fingerprint shows its κ beside the metric.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{CalibrationSummary, JudgeFingerprint, hex};
use crate::stats::{Agreement, Interval};

/// Version of the calibration file layout.
pub const CALIBRATION_VERSION: u32 = 1;

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

/// A metric measured against human labels (see the [`calibrate`](crate::calibrate) module).
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
    /// What a run records of it.
    pub fn summary(&self) -> CalibrationSummary {
        CalibrationSummary {
            metric: self.metric.clone(),
            spec: self.spec.clone(),
            kappa: self.agreement.kappa,
            kappa_interval: self.agreement.kappa_interval,
            accuracy: self.agreement.accuracy,
            samples: self.agreement.confusion.total(),
            labels: self.labels.clone(),
            written_unix: self.written_unix,
        }
    }

    /// The file name it is kept under in a calibrations directory:
    /// `<metric>-<12 hex digits of its judge's fingerprint>.json`, so a
    /// calibration under another judge never replaces this one.
    pub fn file_name(&self) -> String {
        use sha2::Digest as _;
        let judge = serde_json::to_vec(&self.judge).unwrap_or_default();
        let digest = hex(&sha2::Sha256::digest(&judge));
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
        if c.version != CALIBRATION_VERSION {
            return Err(error(format!(
                "layout version {} (this version reads {CALIBRATION_VERSION})",
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

/// The calibrations in `dir` (files written by [`Calibration::write`]) that
/// hold for `judge`, the newest per metric. Unreadable files are skipped.
pub fn matching(dir: &Path, judge: Option<&JudgeFingerprint>) -> Vec<Calibration> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Calibration> = Vec::new();
    for entry in entries.flatten().take(1000) {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(c) = Calibration::read(&path) else {
            continue;
        };
        if !c.holds_for(judge) {
            continue;
        }
        match found.iter_mut().find(|f| f.metric == c.metric) {
            Some(f) if f.written_unix < c.written_unix => *f = c,
            Some(_) => {}
            None => found.push(c),
        }
    }
    found.sort_by(|a, b| a.metric.cmp(&b.metric));
    found
}
