//! A dataset's samples as read, before its metric sets and gates: held
//! (read whole) or on disk ([`streamed`](super::streamed)), with what the
//! plan says of each sample applied and their metric sets found.

use eval_datasets::Sample;
use eval_datasets::metric::MetricSpec;

use super::samples::{Names, Samples};
use super::specs::SpecSets;
use super::{DatasetPlan, DatasetSource, Metrics};

/// A dataset's samples read, before its metric sets and gates.
pub(super) struct Read {
    pub samples: Samples,
    pub names: Names,
    pub planned: usize,
    /// The samples' metric sets, from [`SpecSets`].
    pub specs: SpecSets,
    /// Some sample is a retrieval query.
    pub retrieval: bool,
    /// Some sample is not.
    pub ordinary: bool,
    pub sha256: Option<String>,
    pub description: Option<String>,
}

/// Held `samples` (of the plan's subset) with their `names`: the tools of
/// `d` added, its retrieval setting applied, their metric sets found.
pub(super) fn held(
    d: &DatasetPlan,
    mut samples: Vec<Sample>,
    names: Names,
    planned: usize,
) -> Read {
    let mut specs = SpecSets::new(given(d));
    for s in &mut samples {
        apply_plan(d, s);
        specs.add(s);
    }
    Read {
        retrieval: samples.iter().any(|s| s.retrieval.is_some()),
        ordinary: samples.iter().any(|s| s.retrieval.is_none()),
        samples: Samples::Held(samples),
        names,
        planned,
        specs,
        sha256: None,
        description: None,
    }
}

/// The metrics a front end gave `d`, if any.
pub(super) fn given(d: &DatasetPlan) -> Option<Vec<MetricSpec>> {
    match &d.metrics {
        Metrics::Given(specs) => Some(specs.clone()),
        Metrics::Own => None,
    }
}

/// What `d` says of each of its samples: its tools, its retrieval setting,
/// the model its agent runs as (`agent_args.model`, the dataset's model
/// over the sample's own: the dataset is that model's run).
pub(super) fn apply_plan(d: &DatasetPlan, s: &mut Sample) {
    if let Some(model) = &d.model {
        s.agent_args
            .insert("model".into(), serde_json::Value::String(model.clone()));
    }
    if !d.tools.is_empty() {
        eval_datasets::tool::add_definitions(&mut s.tools, &d.tools);
    }
    if d.allow_custom_prefix
        && let Some(q) = s.retrieval.as_mut()
    {
        q.allow_custom_prefix = true;
    }
}

/// SHA-256 of what `d`'s samples were read from: the file's bytes (read
/// again, in blocks), the attribute's embedded bytes, or inline samples as
/// JSON.
pub(super) fn digest(d: &DatasetPlan, samples: &[Sample]) -> Option<String> {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    match &d.source {
        DatasetSource::File { path, .. } => {
            use std::io::Read as _;
            let (mut file, _) =
                eval_datasets::files::open_checked(path, d.max_dataset_bytes).ok()?;
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = file.read(&mut buf).ok()?;
                if n == 0 {
                    break;
                }
                h.update(&buf[..n]);
            }
        }
        DatasetSource::Embedded { bytes, .. } => h.update(bytes),
        DatasetSource::Samples(_) => h.update(serde_json::to_vec(samples).ok()?),
    }
    Some(crate::output::hex(&h.finalize()))
}
