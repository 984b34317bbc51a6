//! A metric as a run asked it of a dataset — its name, its options, its
//! operator and per-sample threshold — recorded in the results file so two
//! runs (or two parts of one) can be compared question for question (see
//! [`question`](super::question)).

use std::fmt;

use eval_datasets::metric::{MetricSpec, OptionValue};
use serde::{Deserialize, Serialize};

/// An option's text value longer than this is recorded by its length and
/// hash (a rubric's text), not in full.
const SHOWN_OPTION_CHARS: usize = 80;

/// One metric of a dataset as the run asked it: `contains(case_sensitive =
/// true) >= 0.7`. Its options are those written (defaults left out, as
/// [`MetricSpec::decl_parts`] gives them); a long text (a rubric) is
/// recorded by its length and SHA-256, so a changed rubric is a changed
/// option without the file holding it twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WrittenMetric {
    /// The metric's name, as results name it (`contains@turn2`).
    pub name: String,
    /// Its options as written, `key = value` joined by `, ` (empty: the
    /// defaults).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub options: String,
    /// `>=` or `<=`.
    pub op: String,
    /// The per-sample threshold.
    pub threshold: f64,
}

impl WrittenMetric {
    /// `spec` as written.
    pub fn of(spec: &MetricSpec) -> Self {
        let (_, options, _) = spec.decl_parts();
        let options = options
            .iter()
            .map(|(key, value)| format!("{key} = {}", option_text(value)))
            .collect::<Vec<_>>()
            .join(", ");
        WrittenMetric {
            name: spec.name.clone(),
            options,
            op: spec.op.to_string(),
            threshold: spec.threshold,
        }
    }

    /// A metric known only by its name, operator and threshold (what a
    /// sample's record says of it; its options are not recorded there).
    pub(crate) fn bare(name: &str, op: &str, threshold: f64) -> Self {
        WrittenMetric {
            name: name.to_string(),
            options: String::new(),
            op: op.to_string(),
            threshold,
        }
    }
}

/// An option's value as written; a long text by its length and hash.
fn option_text(value: &OptionValue) -> String {
    match value {
        OptionValue::Bool(b) => b.to_string(),
        OptionValue::Num(n) => n.to_string(),
        OptionValue::Str(s) if s.chars().count() > SHOWN_OPTION_CHARS => {
            let hash = super::parts_hash(&[s]);
            format!(
                "<{} chars, sha256 {}>",
                s.chars().count(),
                hash.get(..12).unwrap_or(&hash)
            )
        }
        OptionValue::Str(s) => serde_json::to_string(s.as_ref()).unwrap_or_default(),
    }
}

impl fmt::Display for WrittenMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.options.is_empty() {
            write!(f, "{} {} {}", self.name, self.op, self.threshold)
        } else {
            write!(
                f,
                "{}({}) {} {}",
                self.name, self.options, self.op, self.threshold
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_is_recorded_as_written_with_long_texts_hashed() {
        let spec = |text: &str| eval_datasets::metric::parse_specs(text).unwrap().remove(0);
        assert_eq!(
            WrittenMetric::of(&spec("contains")).to_string(),
            "contains >= 1"
        );
        assert_eq!(
            WrittenMetric::of(&spec("contains(case_sensitive = true) >= 0.7")).to_string(),
            "contains(case_sensitive = true) >= 0.7"
        );
        assert_eq!(
            WrittenMetric::of(&spec(r#"regex(pattern = "a b") >= 1"#)).options,
            r#"pattern = "a b""#
        );
        let long = "x".repeat(200);
        let w = WrittenMetric::of(&spec(&format!(r#"rubric(rubric = "{long}") >= 0.5"#)));
        assert!(
            w.options.starts_with("rubric = <200 chars, sha256 "),
            "{}",
            w.options
        );
        let other = WrittenMetric::of(&spec(&format!(r#"rubric(rubric = "{long}y") >= 0.5"#)));
        assert_ne!(w, other, "another rubric is another option");
        // Files of earlier versions: no options, read back as none.
        let read: WrittenMetric =
            serde_json::from_str(r#"{"name": "contains", "op": ">=", "threshold": 1.0}"#).unwrap();
        assert_eq!(read, WrittenMetric::bare("contains", ">=", 1.0));
    }
}
