//! A run's provenance, gathered once: the tool, the project's git revision,
//! each loaded dataset's content hash and agent, the judge's and
//! embeddings' fingerprints for the metrics they score.

use std::path::Path;
use std::sync::OnceLock;

use crate::agent::Agent;
use crate::output::{AgentProvenance, DatasetProvenance, GitState, Provenance};
use crate::plan::LoadedDataset;
use crate::services::Services;

/// The tool, as results files name it.
pub(crate) fn tool() -> String {
    format!("eval-runtime {}", env!("CARGO_PKG_VERSION"))
}

/// What `agent` says of itself: an HTTP agent its protocol, model,
/// streaming and sampling; an in-process one nothing.
pub(crate) fn agent_settings(agent: &dyn Agent) -> AgentProvenance {
    let settings = agent.cassette_settings();
    AgentProvenance {
        kind: if settings.is_null() {
            "in-process".into()
        } else {
            "http".into()
        },
        settings,
    }
}

/// The provenance of `datasets` scored with `services`, their agent
/// `agent` (when known), in the project at `dir`.
pub(crate) fn gather(
    datasets: &[LoadedDataset],
    services: &Services,
    agent: Option<&AgentProvenance>,
    dir: Option<&Path>,
) -> Provenance {
    let specs: Vec<&eval_datasets::MetricSpec> = datasets
        .iter()
        .flat_map(|d| d.spec_sets.iter().flatten())
        .collect();
    Provenance {
        tool: tool(),
        git: dir.and_then(git_state),
        datasets: datasets
            .iter()
            .map(|d| DatasetProvenance {
                name: d.plan.name.clone(),
                file: d.shown(),
                sha256: d.sha256.clone(),
                agent: agent.cloned(),
            })
            .collect(),
        judge: crate::metrics::judged::fingerprint(&specs, services),
        embeddings: crate::metrics::judged::embeddings_fingerprint(&specs, services),
        calibrations: Vec::new(),
        user_metrics: user_metrics(&specs),
        scorers: specs
            .iter()
            .filter_map(|s| {
                crate::metrics::exec::fingerprint(s, &services.base_dir)
                    .map(|f| (s.name.clone(), f))
            })
            .collect(),
    }
}

/// The user metrics among `specs`, as the provenance records them (and
/// their scales, remembered for the statistics that know a metric by name).
fn user_metrics(
    specs: &[&eval_datasets::MetricSpec],
) -> std::collections::BTreeMap<String, crate::output::UserMetricProvenance> {
    specs
        .iter()
        .filter_map(|s| s.user())
        .map(|u| (u.name.clone(), crate::output::UserMetricProvenance::of(u)))
        .collect()
}

/// The git state of the checkout holding `dir`, asked once per process and
/// with one `git status --porcelain=v2 --branch --untracked-files=no` (its
/// `# branch.oid` header is the revision; any entry line, a tracked file
/// changed); `None` outside a checkout, without git, or before the first
/// commit.
pub(crate) fn git_state(dir: &Path) -> Option<GitState> {
    static STATE: OnceLock<Option<GitState>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let output = std::process::Command::new("git")
                .arg("-C")
                .arg(dir)
                .args([
                    "status",
                    "--porcelain=v2",
                    "--branch",
                    "--untracked-files=no",
                ])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())?;
            git_status(&String::from_utf8_lossy(&output.stdout))
        })
        .clone()
}

/// Reads `git status --porcelain=v2 --branch` output.
fn git_status(text: &str) -> Option<GitState> {
    let mut revision = None;
    let mut dirty = false;
    for line in text.lines() {
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            revision = Some(oid.trim().to_string());
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            dirty = true;
        }
    }
    let revision =
        revision.filter(|r| r.len() >= 40 && r.chars().all(|c| c.is_ascii_hexdigit()))?;
    Some(GitState {
        revision,
        dirty: Some(dirty),
    })
}

/// The provenance of several runs written into one file (the attribute's
/// datasets of one process): their datasets together, the judge of the
/// first that has one.
pub(crate) fn combine(parts: impl IntoIterator<Item = Provenance>) -> Option<Provenance> {
    let mut out: Option<Provenance> = None;
    for p in parts {
        match &mut out {
            None => out = Some(p),
            Some(all) => {
                all.datasets.extend(p.datasets);
                if all.judge.is_none() {
                    all.judge = p.judge;
                } else if let (Some(a), Some(b)) = (&mut all.judge, p.judge) {
                    a.metrics.extend(b.metrics);
                }
                // The same calibration attached to datasets of several
                // runs: once, naming them all.
                all.join_calibrations(&p.calibrations);
                all.user_metrics.extend(p.user_metrics);
                all.scorers.extend(p.scorers);
                if all.embeddings.is_none() {
                    all.embeddings = p.embeddings;
                } else if let (Some(a), Some(b)) = (&mut all.embeddings, p.embeddings) {
                    for m in b.metrics {
                        if !a.metrics.contains(&m) {
                            a.metrics.push(m);
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_calibration_attached_in_two_runs_names_both_datasets() {
        let cal = |spec: &str, dataset: &str| crate::output::CalibrationSummary {
            metric: "faithfulness".into(),
            spec: spec.into(),
            kappa: Some(0.5),
            kappa_interval: None,
            accuracy: 0.75,
            samples: 4,
            labels: "l.jsonl".into(),
            labels_sha256: Some("ab".repeat(32)),
            datasets: vec![dataset.into()],
            written_unix: 1.0,
        };
        let run = |c| Provenance {
            calibrations: vec![c],
            ..Provenance::default()
        };
        let all = combine([
            run(cal("faithfulness >= 0.8", "a")),
            run(cal("faithfulness >= 0.8", "b")),
            run(cal("faithfulness >= 0.3", "c")),
        ])
        .unwrap();
        let got: Vec<(&str, &[String])> = all
            .calibrations
            .iter()
            .map(|c| (c.spec.as_str(), c.datasets.as_slice()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "faithfulness >= 0.8",
                    &["a".to_string(), "b".to_string()][..]
                ),
                ("faithfulness >= 0.3", &["c".to_string()][..]),
            ]
        );
    }

    #[test]
    fn git_status_gives_the_revision_and_whether_tracked_files_changed() {
        let oid = "086d98443bdce7a632d5326325aa4b42f8092490";
        let clean = format!("# branch.oid {oid}\n# branch.head main\n");
        let state = git_status(&clean).expect("a revision");
        assert_eq!(state.revision, oid);
        assert_eq!(state.dirty, Some(false));
        let changed = format!("{clean}1 .M N... 100644 100644 100644 {oid} {oid} src/lib.rs\n");
        assert_eq!(git_status(&changed).and_then(|s| s.dirty), Some(true));
        // Before the first commit there is no revision to name.
        assert!(git_status("# branch.oid (initial)\n# branch.head main\n").is_none());
        assert!(git_status("").is_none());
    }
}
