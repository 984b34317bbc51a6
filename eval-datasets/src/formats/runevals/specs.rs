//! The metrics a runevals item's evaluators stand for.

use serde_json::{Map, Value};

use crate::Sample;
use crate::metric::{MetricSpec, MetricSpecError, Op, OptionValue};

/// The dimensions seed 003 says every test is scored on ("每个测试都会在多个
/// 维度上自动评分": Relevance, Coherence, Groundedness, Similarity, each
/// 1–5), in the order they are applied to a runevals file that names no
/// evaluators (no `default_evaluators`, no item's or turn's `evaluators`:
/// every starter template of the seed, every 1.0.0 file).
pub const DEFAULT_EVALUATORS: [&str; 4] = ["Relevance", "Coherence", "Similarity", "Groundedness"];

/// The evaluators a runevals item of a file that names none is scored with
/// ([`Sample::runevals_defaults`]): Relevance and Coherence always,
/// Similarity when the item has an expected response, Groundedness when it
/// gives `context` (the passages the judge checks the answer against;
/// without them there is nothing to ground on). Each is a judge's 1–5
/// rating passing at 3, as an evaluator named with `{}` options. A
/// conversation is scored on its last answer. Empty for any other sample.
///
/// The one rule every front end applies (`evals evaluate`, the harness,
/// `#[eval_dataset]`), unless metrics are given, which then replace these.
pub fn default_evaluators(s: &Sample) -> Map<String, Value> {
    let mut map = Map::new();
    if !s.runevals_defaults {
        return map;
    }
    for name in DEFAULT_EVALUATORS {
        let applies = match name {
            "Similarity" => s.expected.is_some(),
            "Groundedness" => !s.context.is_empty(),
            _ => true,
        };
        if applies {
            map.insert(name.to_string(), Value::Object(Map::new()));
        }
    }
    map
}

/// What every front end says of a runevals file scored on the default
/// dimensions: which metrics, on how many items, and how to choose others.
pub fn default_note(shown: &str, metrics: &[&str], items: usize) -> String {
    format!(
        "{shown}: names no evaluators, so its {items} item(s) are scored on runevals' default dimensions: {} (a judge's 1-5 rating each, passing at 3; similarity where an item has an expected_response, groundedness where it gives context); name evaluators in the file (schemaVersion 1.2.0 `default_evaluators`) or give metrics to score otherwise",
        metrics.join(", ")
    )
}

/// What every front end says when the default dimensions need a judge that
/// is not configured.
pub fn default_needs_judge(shown: &str) -> String {
    format!(
        "{shown}: names no evaluators, so it is scored on runevals' default dimensions (relevance, coherence, similarity, groundedness), which an LLM judge rates: set EVAL_JUDGE_URL, or name the evaluators to run in the file (schemaVersion 1.2.0 `\"default_evaluators\": {{\"PartialMatch\": {{}}}}` needs no judge), or give metrics (`evals evaluate --metrics partial_match`, the attribute's `metrics(partial_match >= 0.5)`)"
    )
}

/// Why a sample's runevals evaluators have no metric specs here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvaluatorsError {
    /// An evaluator's options make no valid metric spec (e.g. a threshold
    /// out of range).
    #[error("evaluator `{name}`: {source}")]
    Spec {
        /// The evaluator.
        name: String,
        /// What is wrong with the spec it stands for.
        #[source]
        source: MetricSpecError,
    },
    /// Evaluators with no equivalent here, in the order given.
    #[error("unsupported runevals evaluator(s): {}", join(.0))]
    Unsupported(Vec<Unsupported>),
}

fn join(list: &[Unsupported]) -> String {
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A runevals evaluator with no equivalent here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// `PartialMatch` with `case_sensitive: true`.
    #[error(
        "PartialMatch with case_sensitive: true (token F1 compares normalised, lower-cased tokens)"
    )]
    CaseSensitivePartialMatch,
    /// `RetrievalQuery` or `RetrievalResult` (this name).
    #[error("{0} (it reads Microsoft 365 Copilot retrieval diagnostics)")]
    RetrievalDiagnostics(String),
    /// A custom evaluator (this name).
    #[error("{0} (a custom evaluator: its code lives in the runevals project)")]
    Custom(String),
}

/// The metrics a sample's runevals `evaluators` stand for: Relevance,
/// Coherence, Groundedness and Similarity as 1–5 ratings (threshold `t`,
/// default 3, becomes `(t - 1) / 4` on the normalised score), Citations as a
/// count (default 1), ExactMatch as `contains` (seed 003: it passes when the
/// answer contains the expected string; case-insensitive unless
/// `case_sensitive: true`), PartialMatch (default 0.5).
/// RetrievalQuery/RetrievalResult (Microsoft 365 retrieval diagnostics) and
/// custom evaluators have no equivalent here: an error names them.
pub fn specs(evaluators: &Map<String, Value>) -> Result<Vec<MetricSpec>, EvaluatorsError> {
    let mut specs = Vec::new();
    let mut unsupported = Vec::new();
    for (name, options) in evaluators {
        let threshold = options.get("threshold").and_then(Value::as_f64);
        let case_sensitive = options
            .get("case_sensitive")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let spec = match name.as_str() {
            "Relevance" | "Coherence" | "Groundedness" | "Similarity" => MetricSpec::new(
                &name.to_ascii_lowercase(),
                &[],
                Some((Op::AtLeast, (threshold.unwrap_or(3.0) - 1.0) / 4.0)),
            ),
            // The schema: `citation_format` oai_unicode (the default),
            // bracket, markdown or mixed.
            "Citations" => MetricSpec::new(
                "citations",
                &[(
                    "format",
                    OptionValue::Str(
                        options
                            .get("citation_format")
                            .and_then(Value::as_str)
                            .unwrap_or("oai_unicode")
                            .to_string()
                            .into(),
                    ),
                )],
                Some((Op::AtLeast, threshold.unwrap_or(1.0))),
            ),
            // Seed 003: ExactMatch passes when the answer contains the
            // expected string: `contains`, not the whole-answer `exact_match`.
            "ExactMatch" => MetricSpec::new(
                "contains",
                &[("case_sensitive", OptionValue::Bool(case_sensitive))],
                None,
            ),
            "PartialMatch" if case_sensitive => {
                unsupported.push(Unsupported::CaseSensitivePartialMatch);
                continue;
            }
            "PartialMatch" => MetricSpec::new(
                "partial_match",
                &[],
                Some((Op::AtLeast, threshold.unwrap_or(0.5))),
            ),
            "RetrievalQuery" | "RetrievalResult" => {
                unsupported.push(Unsupported::RetrievalDiagnostics(name.clone()));
                continue;
            }
            other => {
                unsupported.push(Unsupported::Custom(other.to_string()));
                continue;
            }
        };
        specs.push(spec.map_err(|source| EvaluatorsError::Spec {
            name: name.clone(),
            source,
        })?);
    }
    if !unsupported.is_empty() {
        return Err(EvaluatorsError::Unsupported(unsupported));
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{MetricKind, TextMetric};

    fn evaluators(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn exact_match_passes_when_the_answer_contains_the_expected_string() {
        // Seed 003: "如果响应准确包含预期的字符串，则响应会传递" (it passes when
        // the response contains the expected string exactly), case_sensitive
        // false by default: our `contains`, not the whole-answer `exact_match`.
        // Citations is a count: a minimum of 0 reports it and never fails.
        let got = specs(&evaluators(r#"{"Citations": {"threshold": 0}}"#)).unwrap();
        assert_eq!((got[0].name.as_str(), got[0].threshold), ("citations", 0.0));
        let got = specs(&evaluators(r#"{"ExactMatch": {}}"#)).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].name, "contains");
        assert_eq!(
            got[0].kind,
            MetricKind::Text(TextMetric::Contains {
                case_sensitive: false
            })
        );
        assert_eq!((got[0].op, got[0].threshold), (Op::AtLeast, 1.0));
        let got = specs(&evaluators(r#"{"ExactMatch": {"case_sensitive": true}}"#)).unwrap();
        assert_eq!(
            got[0].kind,
            MetricKind::Text(TextMetric::Contains {
                case_sensitive: true
            })
        );
    }

    #[test]
    fn errors_name_the_evaluators() {
        let e = specs(&evaluators(
            r#"{"PartialMatch": {"case_sensitive": true}, "RetrievalQuery": {}, "MyEval": {}}"#,
        ))
        .unwrap_err();
        assert_eq!(
            e,
            EvaluatorsError::Unsupported(vec![
                Unsupported::CaseSensitivePartialMatch,
                Unsupported::RetrievalDiagnostics("RetrievalQuery".into()),
                Unsupported::Custom("MyEval".into()),
            ])
        );
        assert_eq!(
            e.to_string(),
            "unsupported runevals evaluator(s): PartialMatch with case_sensitive: true (token F1 compares normalised, lower-cased tokens); RetrievalQuery (it reads Microsoft 365 Copilot retrieval diagnostics); MyEval (a custom evaluator: its code lives in the runevals project)"
        );
        let e = specs(&evaluators(r#"{"Relevance": {"threshold": 9}}"#)).unwrap_err();
        assert!(matches!(&e, EvaluatorsError::Spec { name, .. } if name == "Relevance"));
        assert_eq!(
            e.to_string(),
            "evaluator `Relevance`: `relevance` scores between 0 and 1, so a threshold of 2 can never be met as intended"
        );
    }
}
