//! The metrics of the answer's text: their definitions and [`TextMetric`].
//! Scored by eval-runtime's `metrics::text`.

use super::MetricKind;
use super::catalog::{MAX_REGEX_BYTES, MetricInfo, Need, Op, OptionDef, Threshold};
use super::error::{MetricSpecError, SpecErrorKind};
use super::options::Resolved;

/// A metric of the answer's text, with its options resolved.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum TextMetric {
    /// `exact_match`.
    ExactMatch {
        /// Whether case counts.
        case_sensitive: bool,
    },
    /// `contains`.
    Contains {
        /// Whether case counts.
        case_sensitive: bool,
    },
    /// `regex`.
    Regex {
        /// The `pattern` option (without it the expected answer is the pattern).
        pattern: Option<String>,
        /// Whether case counts.
        case_sensitive: bool,
    },
    /// `partial_match`.
    PartialMatch,
    /// `citations`.
    Citations {
        /// Which markers count.
        format: CitationFormat,
    },
    /// `is_json`, `json_schema`, `json_pointer` (`super::json_opts`).
    Json(super::JsonCheck),
}

const CASE: OptionDef = OptionDef::flag("case_sensitive", false);

/// The text metrics.
pub(super) static METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "exact_match",
        aliases: &["string_match"],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[Need::Expected],
        options: &[CASE],
        summary: "1 if the trimmed output equals the expected answer (case-insensitive unless case_sensitive = true), else 0",
        reference: "",
        build: |o| {
            let case_sensitive = o.flag("case_sensitive");
            Ok(MetricKind::Text(TextMetric::ExactMatch { case_sensitive }))
        },
    },
    MetricInfo {
        name: "contains",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[Need::Expected],
        options: &[CASE],
        summary: "1 if the output contains the expected answer (case-insensitive unless case_sensitive = true), else 0",
        reference: "runevals ExactMatch (seed 003)",
        build: |o| {
            let case_sensitive = o.flag("case_sensitive");
            Ok(MetricKind::Text(TextMetric::Contains { case_sensitive }))
        },
    },
    MetricInfo {
        name: "regex",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, 1.0),
        pass_fail: true,
        needs: &[Need::Expected],
        options: &[OptionDef::text("pattern"), CASE],
        summary: "1 if the output matches the regex (the expected answer, or `pattern`), else 0",
        reference: "",
        build: build_regex,
    },
    MetricInfo {
        name: "partial_match",
        aliases: &[],
        op: Op::AtLeast,
        threshold: Threshold::Default(0.5),
        range: (0.0, 1.0),
        pass_fail: false,
        needs: &[Need::Expected],
        options: &[],
        summary: "token-overlap F1 (SQuAD) between output and expected answer, 0..1",
        reference: "SQuAD v1.1 evaluate script's f1_score (Rajpurkar et al., 2016); runevals PartialMatch",
        build: |_| Ok(MetricKind::Text(TextMetric::PartialMatch)),
    },
    MetricInfo {
        name: "citations",
        aliases: &["Citations"],
        op: Op::AtLeast,
        threshold: Threshold::Default(1.0),
        range: (0.0, f64::INFINITY),
        pass_fail: false,
        needs: &[],
        options: &[OptionDef::choice("format", "mixed")],
        summary: "runevals Citations: how many distinct citation markers the answer has, of `format`: oai_unicode (【1】, 【1†source】), bracket ([1]), markdown ([^1]) or mixed (any, the default); a count, not 0..1",
        reference: "runevals Citations evaluator (seed 003)",
        build: |o| {
            let format = o
                .choice(
                    "format",
                    CitationFormat::parse,
                    "oai_unicode (【1】, 【1†source】), bracket ([1]), markdown ([^1]) or mixed (any of them)",
                )?
                .unwrap_or_default();
            Ok(MetricKind::Text(TextMetric::Citations { format }))
        },
    },
];

/// `regex`: a `pattern` is checked here, before any sample is scored.
fn build_regex(o: &Resolved<'_>) -> Result<MetricKind, MetricSpecError> {
    Ok(MetricKind::Text(TextMetric::Regex {
        pattern: checked_pattern(o)?,
        case_sensitive: o.flag("case_sensitive"),
    }))
}

/// The `pattern` option, a regex that parses and is not too long.
pub(super) fn checked_pattern(o: &Resolved<'_>) -> Result<Option<String>, MetricSpecError> {
    let pattern = o.text("pattern");
    if let Some(p) = pattern {
        let part = o.part("pattern");
        if p.len() > MAX_REGEX_BYTES {
            let kind = SpecErrorKind::PatternTooLong {
                len: p.len(),
                limit: MAX_REGEX_BYTES,
            };
            return Err(MetricSpecError(kind, part));
        }
        if let Err(e) = regex_syntax::Parser::new().parse(p) {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or("").trim();
            let last = last.trim_start_matches("error: ");
            return Err(MetricSpecError(
                SpecErrorKind::InvalidPattern(last.to_string()),
                part,
            ));
        }
    }
    Ok(pattern.map(str::to_string))
}

/// The citation markers `citations` counts (runevals' Citations
/// `citation_format`, whose schema names these four).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CitationFormat {
    /// OpenAI's: `【1】`, `【1†source】`, `【1:2†source】` (runevals' default).
    OaiUnicode,
    /// `[1]`.
    Bracket,
    /// Markdown footnotes: `[^1]` (and `[^1^]`).
    Markdown,
    /// Any of them (`citations` written without `format`).
    #[default]
    Mixed,
}

impl CitationFormat {
    /// `oai_unicode`, `bracket`, `markdown` or `mixed`.
    pub fn parse(name: &str) -> Option<CitationFormat> {
        Some(match name {
            "oai_unicode" => CitationFormat::OaiUnicode,
            "bracket" => CitationFormat::Bracket,
            "markdown" => CitationFormat::Markdown,
            "mixed" => CitationFormat::Mixed,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            CitationFormat::OaiUnicode => "oai_unicode",
            CitationFormat::Bracket => "bracket",
            CitationFormat::Markdown => "markdown",
            CitationFormat::Mixed => "mixed",
        }
    }
}
