//! What a judged score depends on besides the answer, for results files:
//! the judge (model, host, temperature, seed) and, per metric the run
//! scores with it, its prompts' and scoring definition's versions; the
//! embeddings server and the metrics it scores.

use std::collections::BTreeMap;

use eval_datasets::metric::{JudgedMetric, MetricKind, MetricSpec};

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
            // a criteria metric's text and steps
            let (criteria_sha256, steps_sha256) = match &spec.kind {
                MetricKind::Judged(eval_datasets::metric::JudgedMetric::GEval(g)) => {
                    super::geval::hashes(g, services)
                }
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
                MetricKind::Judged(JudgedMetric::AnswerSimilarity | JudgedMetric::AnswerRelevancy)
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

// A judge is configured only with the HTTP client.
#[cfg(all(test, feature = "http"))]
mod tests {
    use eval_datasets::metric::{MetricSpec, OptionValue};

    fn spec(criteria: &'static str, steps: Option<&'static str>) -> MetricSpec {
        let mut options = vec![
            ("name", OptionValue::Str("h".into())),
            ("criteria", OptionValue::Str(criteria.into())),
        ];
        if let Some(s) = steps {
            options.push(("steps", OptionValue::Str(s.into())));
        }
        MetricSpec::new("g_eval", &options, None).unwrap()
    }

    #[test]
    fn a_changed_criteria_or_new_steps_change_the_fingerprint() {
        let mut services = crate::services::Services::none();
        services.judge = crate::services::Judge::new("http://127.0.0.1:9/v1", "judge");
        let print = |s: &MetricSpec| {
            let f = super::fingerprint(&[s], &services).unwrap();
            f.metrics["g_eval:h"].clone()
        };
        let a = print(&spec("Polite.", Some("x | y")));
        assert_eq!(
            a.prompts.keys().collect::<Vec<_>>(),
            ["g_eval/score", "g_eval/steps"]
        );
        assert_eq!(print(&spec("Polite.", Some("x | y"))), a);
        let b = print(&spec("Polite and brief.", Some("x | y")));
        assert_ne!(a.criteria_sha256, b.criteria_sha256);
        assert_eq!(a.steps_sha256, b.steps_sha256);
        let c = print(&spec("Polite.", Some("x | z")));
        assert_ne!(a.steps_sha256, c.steps_sha256);
        assert_eq!(a.criteria_sha256, c.criteria_sha256);
        // Steps the judge writes: none before it has, its steps' hash after.
        let written = spec("Polite (written).", None);
        assert_eq!(print(&written).steps_sha256, None);
        let eval_datasets::metric::MetricKind::Judged(eval_datasets::metric::JudgedMetric::GEval(
            g,
        )) = &written.kind
        else {
            unreachable!()
        };
        let judge = services.judge.as_ref().unwrap();
        super::super::geval::remember(judge, g, vec!["x".to_string(), "y".to_string()]);
        assert_eq!(print(&written).steps_sha256, a.steps_sha256);
        // A results diff names them.
        let run = |v: &crate::model::MetricVersions| crate::model::Provenance {
            judge: Some(crate::model::JudgeFingerprint {
                model: "judge".into(),
                host: "127.0.0.1:9".into(),
                temperature: 0.0,
                seed: 42,
                metrics: [("g_eval:h".to_string(), v.clone())].into(),
            }),
            ..Default::default()
        };
        let d = run(&b).differences(&run(&a), &["g_eval:h".to_string()]);
        assert_eq!(d.judge.len(), 1);
        assert!(
            d.judge[0].starts_with("`g_eval:h`: judge criteria "),
            "{:?}",
            d.judge
        );
    }
}
