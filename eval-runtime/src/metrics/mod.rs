//! Scoring. Which metrics exist, their defaults and needs are declared in
//! [`eval_core::metric`]; this module computes them.
//!
//! | metric | score |
//! |---|---|
//! | `exact_match` (alias `string_match`) | 1 if the trimmed output equals the trimmed expected answer, else 0. Case-insensitive unless `case_sensitive = true` (the default of runevals' ExactMatch). |
//! | `contains` | 1 if the output contains the trimmed expected answer, else 0. Case-insensitive unless `case_sensitive = true`. |
//! | `regex` | 1 if the regex (the expected answer, as letta-evals datasets write it, or the `pattern` option) matches anywhere in the output, else 0. Case-insensitive unless `case_sensitive = true`. |
//! | `partial_match` | SQuAD token F1 (see [`token_f1`]), 0..1, default threshold 0.5 as runevals' PartialMatch. |
//!
//! | `faithfulness`, `answer_similarity`, `context_recall` | see [`judged`]: LLM judge / embeddings, with offline variants |
//!
//! A sample whose `expected` is one answer per turn is scored turn by turn
//! and gets the mean.

use std::collections::HashMap;

pub mod judged;
pub mod rank;

/// Why a metric could not score a sample (the sample then fails).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MetricError {
    /// The LLM judge or the embeddings server failed (after its retries).
    #[error(transparent)]
    Service(#[from] crate::services::ServiceError),
    /// The sample or the answer lacks what the metric needs, an option is
    /// unusable (an invalid regex), or the judge's answer could not be used.
    #[error("{0}")]
    Unscorable(String),
    /// One of several runs of the agent (`repeat`) could not be scored.
    #[error("run {run}/{runs}: {error}")]
    Run {
        /// Which run (1-based).
        run: usize,
        /// Runs asked for.
        runs: usize,
        /// Why.
        error: Box<MetricError>,
    },
}

impl From<String> for MetricError {
    fn from(reason: String) -> Self {
        MetricError::Unscorable(reason)
    }
}

impl From<&str> for MetricError {
    fn from(reason: &str) -> Self {
        MetricError::Unscorable(reason.to_string())
    }
}

use eval_core::metric::{MetricKind, MetricSpec};

/// Scores one output against one expected answer. `Err` is a one-line reason
/// the metric could not be computed (e.g. an invalid regex).
pub fn score(spec: &MetricSpec, output: &str, expected: Option<&str>) -> Result<f64, MetricError> {
    let expected = || -> Result<&str, MetricError> {
        match expected.map(str::trim) {
            None => Err(format!("`{}` needs an expected answer", spec.name).into()),
            // An empty answer is contained in, and matched by, everything.
            Some("") => Err(format!(
                "`{}` cannot score against an empty expected answer",
                spec.name
            )
            .into()),
            Some(e) => Ok(e),
        }
    };
    Ok(match &spec.kind {
        MetricKind::ExactMatch { case_sensitive } => {
            let (out, exp) = (output.trim(), expected()?);
            bool_score(if *case_sensitive {
                out == exp
            } else {
                out.to_lowercase() == exp.to_lowercase()
            })
        }
        MetricKind::Contains { case_sensitive } => {
            let exp = expected()?;
            bool_score(if *case_sensitive {
                output.contains(exp)
            } else {
                output.to_lowercase().contains(&exp.to_lowercase())
            })
        }
        MetricKind::Regex {
            pattern,
            case_sensitive,
        } => {
            let (source, pattern) = match pattern {
                Some(p) => ("the `pattern` option", p.as_str()),
                None => ("the expected answer", expected()?),
            };
            let re = regex::RegexBuilder::new(pattern)
                .case_insensitive(!case_sensitive)
                .size_limit(1 << 22)
                .build()
                .map_err(|e| {
                    format!(
                        "{source} is not a valid regex: {}",
                        crate::error::one_line(&e.to_string(), 200)
                    )
                })?;
            bool_score(re.is_match(output))
        }
        MetricKind::PartialMatch => token_f1(output, expected()?),
        MetricKind::Citations => citations(output) as f64,
        _ => return Err(format!("`{}` cannot be scored by this version", spec.name).into()),
    })
}

fn bool_score(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// runevals' Citations: the number of distinct citation markers in the
/// answer — `[1]`, `[^1]`, `[^1^]` and `【1】`/`【1†source】` — counted once
/// per number.
pub fn citations(output: &str) -> usize {
    static MARKERS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = MARKERS.get_or_init(|| {
        regex::Regex::new(r"\[\^?(\d{1,4})\^?\]|【(\d{1,4})(?:†[^】]*)?】")
            .expect("a valid pattern")
    });
    let mut seen: Vec<&str> = re
        .captures_iter(output)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| m.as_str())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// Token-overlap F1 as defined by the SQuAD v1.1/v2.0 evaluation script
/// (Rajpurkar et al., 2016, `evaluate-v2.0.py`, `compute_f1`):
///
/// 1. normalise both texts: lower-case, remove punctuation, remove the
///    articles `a`, `an`, `the`, split on whitespace;
/// 2. if either token list is empty, F1 is 1 when both are empty, else 0;
/// 3. `common` = size of the multiset intersection; 0 common tokens gives 0;
/// 4. precision = common / |output|, recall = common / |expected|,
///    F1 = 2·P·R / (P + R).
///
/// Extension for text without spaces: each CJK ideograph, kana or hangul
/// syllable is its own token (as the MLQA evaluation does for Chinese), and
/// Unicode punctuation is removed along with ASCII punctuation.
pub fn token_f1(output: &str, expected: &str) -> f64 {
    let pred = normalize_tokens(output);
    let gold = normalize_tokens(expected);
    if pred.is_empty() || gold.is_empty() {
        return bool_score(pred == gold);
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in &gold {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let mut common = 0usize;
    for t in &pred {
        if let Some(c) = counts.get_mut(t.as_str())
            && *c > 0
        {
            *c -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / pred.len() as f64;
    let recall = common as f64 / gold.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32, 0x2010..=0x2027 | 0x2030..=0x205E | 0x3000..=0x303F | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
        || matches!(c, '¡' | '¿' | '«' | '»' | '§' | '¶' | '·')
}

fn normalize_tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut spaced = String::with_capacity(lower.len());
    for c in lower.chars() {
        if is_punctuation(c) {
            continue;
        }
        if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    spaced
        .split_whitespace()
        .filter(|t| !matches!(*t, "a" | "an" | "the"))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval_core::metric::{MetricSpec, OptionValue};

    fn spec(name: &str) -> MetricSpec {
        MetricSpec::new(name, &[], None).unwrap()
    }

    #[test]
    fn token_f1_matches_hand_computed_squad_values() {
        // pred tokens: [paris, is, capital, of, france] (the removed)
        // gold tokens: [paris]  -> common 1, P = 1/5, R = 1, F1 = 2*(0.2*1)/(1.2) = 1/3
        let f = token_f1("Paris is the capital of France.", "Paris");
        assert!((f - 1.0 / 3.0).abs() < 1e-12, "{f}");
        // identical after normalisation
        assert_eq!(token_f1("The Eiffel Tower!", "eiffel tower"), 1.0);
        // pred [a? no] -> [cat, sat, on, mat] vs gold [cat, sat] : common 2, P=0.5, R=1 -> 2/3
        let f = token_f1("A cat sat on a mat", "the cat sat");
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
        // repeated tokens count as a multiset: pred [rag, rag, rag], gold [rag]: common 1, P=1/3, R=1 -> 0.5
        assert!((token_f1("rag rag rag", "rag") - 0.5).abs() < 1e-12);
        assert_eq!(token_f1("nothing shared", "else"), 0.0);
        assert_eq!(token_f1("...", "the"), 1.0);
        assert_eq!(token_f1("", "x"), 0.0);
        // CJK: 巴 黎 vs 巴 黎 是 首 都 -> common 2, P=1, R=2/5 -> 2*0.4/1.4
        let f = token_f1("巴黎", "巴黎是首都");
        assert!((f - 0.8 / 1.4).abs() < 1e-12, "{f}");
    }

    #[test]
    fn string_metrics() {
        assert_eq!(
            score(&spec("exact_match"), "  Paris ", Some("paris")),
            Ok(1.0)
        );
        assert_eq!(
            score(&spec("string_match"), "Paris.", Some("Paris")),
            Ok(0.0)
        );
        let cs = MetricSpec::new(
            "exact_match",
            &[("case_sensitive", OptionValue::Bool(true))],
            None,
        )
        .unwrap();
        assert_eq!(score(&cs, "paris", Some("Paris")), Ok(0.0));
        assert_eq!(
            score(&spec("contains"), "It is PARIS.", Some(" paris ")),
            Ok(1.0)
        );
        assert_eq!(score(&spec("contains"), "Lyon", Some("paris")), Ok(0.0));
        assert_eq!(
            score(
                &spec("regex"),
                "quantity change of 15",
                Some(r"change of \d+")
            ),
            Ok(1.0)
        );
        assert_eq!(score(&spec("regex"), "none", Some(r"\d+")), Ok(0.0));
        let e = score(&spec("regex"), "x", Some("(")).unwrap_err();
        assert!(e.to_string().contains("not a valid regex"), "{e}");
        assert_eq!(
            citations("See [1] and [2], also [1] and [^3] and 【4†doc】."),
            4
        );
        assert_eq!(score(&spec("citations"), "no sources", None), Ok(0.0));
        let e = score(&spec("contains"), "x", None).unwrap_err();
        assert!(matches!(e, MetricError::Unscorable(_)), "{e}");
        assert!(e.to_string().contains("needs an expected answer"), "{e}");
    }
}
