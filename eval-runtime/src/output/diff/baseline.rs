//! A run gated on a baseline results file: written when there is none or
//! when accepted on purpose, compared otherwise, never from a partial run.

use std::path::{Path, PathBuf};

use super::compare::compare;
use super::model::BaselineOutcome;
use crate::model::Allow;
use crate::output::results::{Results, ResultsError};

/// Makes `results` the baseline at `path` (the old one backed up first).
pub fn accept(results: &Results, path: &Path) -> Result<Option<PathBuf>, ResultsError> {
    let backup = if path.exists() {
        Some(
            eval_datasets::files::backup(path).map_err(|source| ResultsError::Write {
                path: path.to_path_buf(),
                source,
            })?,
        )
    } else {
        None
    };
    results.write(path)?;
    Ok(backup)
}

/// Gates a run on a baseline results file: a complete run is compared with
/// it (or, with `accept` or no baseline yet, becomes it); a partial run is
/// never compared, nor written as a baseline.
pub fn check_baseline(
    current: &Results,
    baseline: &Path,
    epsilon: f64,
    accept_run: bool,
    allow: Allow,
) -> Result<BaselineOutcome, ResultsError> {
    if !current.complete {
        return Ok(BaselineOutcome::NotCompared);
    }
    if accept_run || !baseline.exists() {
        let backup = accept(current, baseline)?;
        return Ok(BaselineOutcome::Written {
            accepted: accept_run,
            backup,
        });
    }
    // A baseline that contradicts itself is refused, as `report diff` refuses it.
    let old = Results::read_consistent(baseline)?;
    compare(&old, current, epsilon, allow)
        .map(BaselineOutcome::Compared)
        .map_err(|e| match e {
            ResultsError::Incomparable { differences } => ResultsError::BaselineIncomparable {
                path: baseline.to_path_buf(),
                differences,
            },
            other => other,
        })
}
