//! Calibrating a metric against human labels: does a faithfulness score of
//! 0.8 mean anything, and did a prompt or judge-model change make it worse?
//!
//! A labels file is a dataset (JSONL, CSV, JSON) whose samples also carry
//! the answer to grade (`output`, or `response`, `answer`, deepeval's
//! `actual_output`) and a human's verdict on it: `label` (`pass`/`fail`,
//! `true`/`false`, `1`/`0`, `yes`/`no`) and/or `human_score` (a number on
//! the metric's own scale, passing when it meets the metric's threshold);
//! a sample whose verdicts conflict (`label` pass, `human_score` failing)
//! is an error naming it and both values, never settled by a preference.
//! [`calibrate`] scores every answer with the metric — the same scoring as
//! a run, the context being the sample's — and measures how far the
//! metric's pass/fail agrees with the human's: Cohen's κ with its interval,
//! accuracy, the true-pass and true-fail rates and the confusion matrix;
//! with human scores, Spearman's ρ between the metric's and the human's.
//! The result carries its scope: the judge's fingerprint (model, host,
//! settings, the metric's prompt and definition versions), the metric's
//! operator, threshold and options, and the labels file with the SHA-256 of
//! its content. A run shows its κ beside a dataset's metric only when that
//! metric is the same (operator, threshold, options) and the same judge
//! scored it.

use std::path::Path;

use eval_datasets::{Dataset, MetricSpec, Sample};
use futures_util::StreamExt;

use eval_datasets::terminal::escaped;

use crate::agent::Response;
use crate::output::{
    CALIBRATION_VERSION, CalibrateError, Calibration, Disagreement, RankCorrelation, Unscored, hex,
};
use crate::services::Services;
use crate::stats::{Confusion, Level, cohen_kappa, spearman};

/// Fields holding the answer to grade, in the order looked for.
pub const OUTPUT_FIELDS: &[&str] = &["output", "response", "answer", "actual_output"];

/// What the human said of one answer.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Human {
    /// Pass or fail (from `label`, else from `human_score` against the threshold).
    passes: bool,
    /// `human_score`, when given.
    score: Option<f64>,
}

/// The answer to grade and the human's verdict in `sample`, or what is
/// wrong with them.
fn labelled(sample: &Sample, spec: &MetricSpec) -> Result<(String, Human), String> {
    let at = &sample.source;
    let output = OUTPUT_FIELDS
        .iter()
        .find_map(|f| sample.extra.get(*f).map(|v| (*f, v)));
    let output = match output {
        Some((_, serde_json::Value::String(s))) => s.clone(),
        Some((f, other)) => return Err(format!("{at}: field `{f}`: {other} is not a text")),
        None => {
            return Err(format!(
                "{at}: no `output` (or `response`, `answer`, `actual_output`): the answer to grade"
            ));
        }
    };
    let score = match sample.extra.get("human_score") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => match v.as_f64().filter(|x| x.is_finite()) {
            Some(x) => Some(x),
            None => return Err(format!("{at}: field `human_score`: {v} is not a number")),
        },
    };
    // Every verdict the sample gives, each read on its own: they must agree.
    let mut verdicts: Vec<(String, String, bool)> = Vec::new();
    for f in ["label", "human_label"] {
        let Some(v) = sample.extra.get(f).filter(|v| !v.is_null()) else {
            continue;
        };
        match label_value(v) {
            Some(p) => verdicts.push((format!("`{f}`"), v.to_string(), p)),
            None => {
                return Err(format!(
                    "{at}: field `{f}`: {} is not a label (pass/fail, true/false, 1/0, yes/no)",
                    escaped(&v.to_string())
                ));
            }
        }
    }
    if let Some(x) = score.filter(|_| !verdicts.is_empty()) {
        let passes = spec.passes(x);
        verdicts.push((
            "`human_score`".to_string(),
            format!(
                "{x} ({} `{} {}`)",
                if passes { "passing" } else { "failing" },
                spec.op,
                spec.threshold
            ),
            passes,
        ));
    }
    if let Some(((f1, v1, _), (f2, v2, _))) = verdicts
        .iter()
        .find_map(|a| verdicts.iter().find(|b| b.2 != a.2).map(|b| (a, b)))
    {
        return Err(format!(
            "{at}: sample `{}`: conflicting labels: {f1} is {} but {f2} is {}: keep one, or make them agree",
            escaped(&sample.id),
            escaped(v1),
            escaped(v2)
        ));
    }
    let passes = match verdicts.first() {
        Some((_, _, p)) => *p,
        None => match score {
            Some(x) => spec.passes(x),
            None => {
                return Err(format!(
                    "{at}: no human label: give `label` (pass or fail) or `human_score` (a number on the metric's scale)"
                ));
            }
        },
    };
    Ok((output, Human { passes, score }))
}

/// `pass`/`fail` and their synonyms.
fn label_value(v: &serde_json::Value) -> Option<bool> {
    match v {
        serde_json::Value::Bool(b) => Some(*b),
        serde_json::Value::Number(n) if n.as_f64() == Some(1.0) => Some(true),
        serde_json::Value::Number(n) if n.as_f64() == Some(0.0) => Some(false),
        serde_json::Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "pass" | "passed" | "true" | "yes" | "1" | "good" => Some(true),
            "fail" | "failed" | "false" | "no" | "0" | "bad" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Measures `spec` against the human labels of the file at `path` (see the
/// `calibrate` module), scoring up to `concurrency` samples at once with
/// `services`' judge and embeddings. Every problem of the file is reported
/// at once, before any judge call.
pub fn calibrate(
    path: &Path,
    shown: &str,
    spec: &MetricSpec,
    services: &Services,
    concurrency: usize,
) -> Result<Calibration, CalibrateError> {
    let dataset = Dataset::load_as(path, shown)?;
    let mut problems = Vec::new();
    let mut items = Vec::new();
    for sample in &dataset.samples {
        match labelled(sample, spec) {
            Ok((output, human)) => items.push((sample, output, human)),
            Err(e) => problems.push(e),
        }
    }
    if items.is_empty() && problems.is_empty() {
        problems.push(format!("{shown}: no labelled sample"));
    }
    if !problems.is_empty() {
        return Err(CalibrateError::Labels { problems });
    }
    if let Some(why) = crate::metrics::judged::unavailable(spec, services) {
        return Err(CalibrateError::Unavailable(why));
    }
    let runtime = crate::engine::schedule::local_runtime().map_err(CalibrateError::Runtime)?;
    let specs = std::slice::from_ref(spec);
    let scored: Vec<_> = runtime.block_on(
        futures_util::stream::iter(items.iter().map(|(sample, output, human)| async move {
            let response = Response {
                output: output.clone(),
                context: sample.context.clone(),
                ..Response::default()
            };
            let report =
                crate::engine::evaluate::score_one(sample, specs, response, services).await;
            (*sample, *human, report)
        }))
        .buffered(concurrency.max(1))
        .collect(),
    );
    let mut confusion = Confusion::default();
    let mut ranked = Vec::new();
    let mut disagreements = Vec::new();
    let mut unscored = Vec::new();
    for (sample, human, report) in scored {
        let metric = report.metrics.first();
        match metric.and_then(|m| m.score.map(|s| (s, m))) {
            Some((score, m)) => {
                let judge_passes = spec.passes(score);
                confusion.add(judge_passes, human.passes);
                if let Some(h) = human.score {
                    ranked.push((score, h));
                }
                if judge_passes != human.passes {
                    disagreements.push(Disagreement {
                        id: sample.id.clone(),
                        source: sample.source.to_string(),
                        human_passes: human.passes,
                        score,
                        reason: m.reason.clone(),
                    });
                }
            }
            None => unscored.push(Unscored {
                id: sample.id.clone(),
                source: sample.source.to_string(),
                error: report
                    .error
                    .as_ref()
                    .map(ToString::to_string)
                    .or_else(|| metric.and_then(|m| m.error.as_ref().map(ToString::to_string)))
                    .unwrap_or_else(|| "no score".into()),
            }),
        }
    }
    let level = Level::STANDARD;
    Ok(Calibration {
        version: CALIBRATION_VERSION,
        metric: spec.name.clone(),
        spec: crate::output::calibration_spec_text(spec),
        op: Some(spec.op.to_string()),
        threshold: Some(spec.threshold),
        options: Some(crate::output::calibration_spec_options(spec)),
        labels: shown.to_string(),
        labels_sha256: file_sha256(path).unwrap_or_default(),
        samples: dataset.samples.len(),
        agreement: cohen_kappa(confusion, level),
        spearman: spearman(&ranked, level).map(|(rho, interval)| RankCorrelation {
            rho,
            interval,
            pairs: ranked.len(),
        }),
        judge: crate::metrics::judged::fingerprint(&[spec], services),
        disagreements,
        unscored,
        written_unix: crate::output::now_unix(),
    })
}

/// SHA-256 of a file's bytes.
fn file_sha256(path: &Path) -> Option<String> {
    use sha2::Digest as _;
    let bytes =
        eval_datasets::files::read_checked(path, eval_datasets::files::DEFAULT_MAX_DATASET_BYTES)
            .ok()?;
    Some(hex(&sha2::Sha256::digest(&bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(line: &str) -> Sample {
        let d = Dataset::from_bytes("labels.jsonl", line.as_bytes()).unwrap();
        d.samples.into_iter().next().unwrap()
    }

    fn spec() -> MetricSpec {
        eval_datasets::metric::parse_specs("faithfulness >= 0.8")
            .unwrap()
            .remove(0)
    }

    #[test]
    fn a_label_and_a_human_score_that_disagree_are_refused_with_both() {
        let s = sample(
            r#"{"id": "q\u001b7", "input": "x", "output": "y", "label": "pass", "human_score": 0.2}"#,
        );
        let e = labelled(&s, &spec()).unwrap_err();
        assert!(e.starts_with("labels.jsonl:1: sample `"), "{e}");
        assert!(e.contains("conflicting labels"), "{e}");
        assert!(e.contains("`label` is \"pass\""), "{e}");
        assert!(e.contains("`human_score` is 0.2 (failing `>= 0.8`)"), "{e}");
        assert!(!e.contains('\u{1b}'), "{e}");
    }

    #[test]
    fn two_label_fields_that_disagree_are_refused() {
        let s = sample(
            r#"{"id": "a", "input": "x", "output": "y", "label": true, "human_label": "fail"}"#,
        );
        let e = labelled(&s, &spec()).unwrap_err();
        assert!(
            e.contains(
                "sample `a`: conflicting labels: `label` is true but `human_label` is \"fail\""
            ),
            "{e}"
        );
    }

    #[test]
    fn agreeing_verdicts_are_fine() {
        let s = sample(
            r#"{"id": "a", "input": "x", "output": "y", "label": "fail", "human_label": 0, "human_score": 0.5}"#,
        );
        let (_, human) = labelled(&s, &spec()).unwrap();
        assert_eq!(
            human,
            Human {
                passes: false,
                score: Some(0.5)
            }
        );
        let s = sample(r#"{"id": "b", "input": "x", "output": "y", "human_score": 0.9}"#);
        assert!(labelled(&s, &spec()).unwrap().1.passes);
    }
}
