//! The metrics a runevals item's evaluators stand for.

use serde_json::{Map, Value};

use crate::metric::{MetricSpec, Op, OptionValue};

/// The metrics a sample's runevals `evaluators` stand for: Relevance,
/// Coherence, Groundedness and Similarity as 1–5 ratings (threshold `t`,
/// default 3, becomes `(t - 1) / 4` on the normalised score), Citations as a
/// count (default 1), ExactMatch, PartialMatch (default 0.5).
/// RetrievalQuery/RetrievalResult (Microsoft 365 retrieval diagnostics) and
/// custom evaluators have no equivalent here: an error names them.
pub fn specs(evaluators: &Map<String, Value>) -> Result<Vec<MetricSpec>, String> {
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
                unsupported.push("PartialMatch with case_sensitive: true (token F1 compares normalised, lower-cased tokens)".to_string());
                continue;
            }
            "PartialMatch" => MetricSpec::new(
                "partial_match",
                &[],
                Some((Op::AtLeast, threshold.unwrap_or(0.5))),
            ),
            "RetrievalQuery" | "RetrievalResult" => {
                unsupported.push(format!(
                    "{name} (it reads Microsoft 365 Copilot retrieval diagnostics)"
                ));
                continue;
            }
            other => {
                unsupported.push(format!(
                    "{other} (a custom evaluator: its code lives in the runevals project)"
                ));
                continue;
            }
        };
        specs.push(spec.map_err(|e| format!("evaluator `{name}`: {e}"))?);
    }
    if !unsupported.is_empty() {
        return Err(format!(
            "unsupported runevals evaluator(s): {}",
            unsupported.join("; ")
        ));
    }
    Ok(specs)
}
