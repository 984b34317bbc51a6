//! What a judged score depends on besides the answer, for results files:
//! the judge (model, host, temperature, seed) and, per metric the run
//! scores with it, its prompts' and scoring definition's versions; the
//! embeddings server and the metrics it scores.

use std::collections::BTreeMap;

use eval_datasets::metric::{MetricKind, MetricSpec};

use super::{is_model_based, versions};
use crate::model::{EmbeddingsFingerprint, JudgeFingerprint, MetricVersions};
use crate::services::Services;

/// The judge's fingerprint over the judged metrics among `specs` it scores
/// (`None` when none is, or no judge is configured: they are then scored
/// offline, as each metric's `method` says).
pub(crate) fn fingerprint(specs: &[&MetricSpec], services: &Services) -> Option<JudgeFingerprint> {
    let judge = services.judge.as_ref().ok()?;
    let mut metrics = BTreeMap::new();
    for spec in specs.iter().filter(|s| is_model_based(s)) {
        if let Some(v) = versions(&spec.kind) {
            // issue36:geval — a criteria metric's text and steps
            let (criteria_sha256, steps_sha256) = match &spec.kind {
                MetricKind::GEval(g) => super::geval::hashes(g, services),
                _ => (None, None),
            };
            metrics.insert(
                spec.name.clone(),
                MetricVersions {
                    prompts: v
                        .prompts
                        .iter()
                        .map(|p| (p.task.to_string(), p.version))
                        .collect(),
                    definition: v.definition,
                    criteria_sha256,
                    steps_sha256,
                },
            );
        }
    }
    (!metrics.is_empty()).then(|| JudgeFingerprint {
        model: judge.model().to_string(),
        host: judge.host(),
        temperature: judge.temperature(),
        seed: judge.seed(),
        metrics,
    })
}

/// The embeddings server's fingerprint, when one scores a metric of `specs`.
pub(crate) fn embeddings_fingerprint(
    specs: &[&MetricSpec],
    services: &Services,
) -> Option<EmbeddingsFingerprint> {
    let embedder = services.embedder.as_ref().ok()?;
    let mut metrics: Vec<String> = specs
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                MetricKind::AnswerSimilarity | MetricKind::AnswerRelevancy
            )
        })
        .map(|s| s.name.clone())
        .collect();
    metrics.dedup();
    (!metrics.is_empty()).then(|| EmbeddingsFingerprint {
        model: embedder.model().to_string(),
        host: embedder.host(),
        metrics,
    })
}
