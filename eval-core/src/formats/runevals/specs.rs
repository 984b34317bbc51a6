//! The metrics a runevals item's evaluators stand for.

use serde_json::{Map, Value};

use crate::metric::{MetricSpec, MetricSpecError, Op, OptionValue};

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
/// count (default 1), ExactMatch, PartialMatch (default 0.5).
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
            "Citations" => MetricSpec::new(
                "citations",
                &[],
                Some((Op::AtLeast, threshold.unwrap_or(1.0))),
            ),
            "ExactMatch" => MetricSpec::new(
                "exact_match",
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

    fn evaluators(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
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
