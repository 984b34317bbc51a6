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
    let specs: Vec<&eval_core::MetricSpec> = datasets
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
    }
}

/// The git state of the checkout holding `dir`, asked once per process
/// (`git rev-parse HEAD`, `git status --porcelain --untracked-files=no`);
/// `None` outside a checkout, without git, or before the first commit.
pub(crate) fn git_state(dir: &Path) -> Option<GitState> {
    static STATE: OnceLock<Option<GitState>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let git = |args: &[&str]| {
                std::process::Command::new("git")
                    .arg("-C")
                    .arg(dir)
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .output()
                    .ok()
                    .filter(|o| o.status.success())
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            };
            let revision = git(&["rev-parse", "--verify", "--quiet", "HEAD"])?;
            if revision.is_empty() {
                return None;
            }
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
            Some(GitState { revision, dirty })
        })
        .clone()
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
                for c in p.calibrations {
                    if !all.calibrations.iter().any(|a| a.metric == c.metric) {
                        all.calibrations.push(c);
                    }
                }
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
