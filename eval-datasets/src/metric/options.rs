//! A metric's options: the values written in a spec ([`OptionValue`]),
//! the named choices some options take ([`CitationFormat`],
//! [`ToolPairing`]), and their checking against the catalogue entry
//! ([`Options::resolve`]): repeated, unknown and mistyped options refused,
//! patterns checked, defaults where an option is not written.

use std::borrow::Cow;

use super::catalog::{MAX_REGEX_BYTES, MetricInfo, OptionKind};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};

/// An option value as written in a metric spec.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// `case_sensitive = true`
    Bool(bool),
    /// `pattern = "..."`
    Str(Cow<'static, str>),
    /// A number (no metric takes one yet; rejected with a clear message).
    Num(f64),
}

/// The citation markers `citations` counts (runevals' Citations
/// `citation_format`, whose schema names these four).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
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

/// How `tool_call_accuracy` pairs the agent's calls with the expected
/// ones (`pairing = "position"` or `"best"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolPairing {
    /// ragas 0.4.3's `ToolCallAccuracy`: the calls must be the expected
    /// ones, name for name, as many as expected; the i-th call is scored
    /// against the i-th expected call. A retried or extra call scores 0.
    #[default]
    Position,
    /// Retry-tolerant (not a released ragas definition): extra and retried
    /// calls are allowed (with `strict_order`, the expected names in order
    /// among the calls'; without, each called at least as often); each
    /// expected call takes the unused call of its name whose arguments
    /// match best.
    Best,
}

impl ToolPairing {
    /// `position` or `best`.
    pub fn parse(name: &str) -> Option<ToolPairing> {
        Some(match name {
            "position" => ToolPairing::Position,
            "best" => ToolPairing::Best,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            ToolPairing::Position => "position",
            ToolPairing::Best => "best",
        }
    }
}

/// How `trajectory_match` compares the agent's tool calls with the
/// expected ones (`mode = "..."`), as LangChain agentevals 0.0.8 defines
/// its trajectory match modes (`agentevals/trajectory/{strict,unordered,
/// subset,superset}.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TrajectoryMode {
    /// The same calls in the same order, as many.
    #[default]
    Strict,
    /// The same calls, as many of each, in any order.
    Unordered,
    /// No call beyond the expected ones (each expected call covers one).
    Subset,
    /// Every expected call made (each made call covers one).
    Superset,
}

impl TrajectoryMode {
    /// `strict`, `unordered`, `subset` or `superset`.
    pub fn parse(name: &str) -> Option<TrajectoryMode> {
        Some(match name {
            "strict" => TrajectoryMode::Strict,
            "unordered" => TrajectoryMode::Unordered,
            "subset" => TrajectoryMode::Subset,
            "superset" => TrajectoryMode::Superset,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            TrajectoryMode::Strict => "strict",
            TrajectoryMode::Unordered => "unordered",
            TrajectoryMode::Subset => "subset",
            TrajectoryMode::Superset => "superset",
        }
    }
}

/// How `trajectory_match` compares two calls' arguments (`args = "..."`,
/// agentevals' `tool_args_match_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ArgsMatch {
    /// Equal arguments.
    #[default]
    Exact,
    /// Arguments not compared.
    Ignore,
    /// The call's arguments are among the expected call's (each key the
    /// call gives, the expected call gives with an equal value).
    Subset,
    /// The call gives every expected argument, with an equal value.
    Superset,
}

impl ArgsMatch {
    /// `exact`, `ignore`, `subset` or `superset`.
    pub fn parse(name: &str) -> Option<ArgsMatch> {
        Some(match name {
            "exact" => ArgsMatch::Exact,
            "ignore" => ArgsMatch::Ignore,
            "subset" => ArgsMatch::Subset,
            "superset" => ArgsMatch::Superset,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            ArgsMatch::Exact => "exact",
            ArgsMatch::Ignore => "ignore",
            ArgsMatch::Subset => "subset",
            ArgsMatch::Superset => "superset",
        }
    }
}

/// What one step of an agent's trajectory was (and what the step metrics'
/// `step = "..."` keeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StepKind {
    /// A call of a language model (GenAI `chat` / `text_completion`,
    /// OpenInference `LLM`).
    Llm,
    /// A tool call (GenAI `execute_tool`, OpenInference `TOOL`, OpenLLMetry
    /// `tool`).
    Tool,
    /// A retrieval (OpenInference `RETRIEVER`, GenAI `retrieval`).
    Retrieval,
    /// An embeddings call (GenAI `embeddings`, OpenInference `EMBEDDING`).
    Embeddings,
}

impl StepKind {
    /// `llm`, `tool`, `retrieval` or `embeddings`.
    pub fn parse(name: &str) -> Option<StepKind> {
        Some(match name {
            "llm" => StepKind::Llm,
            "tool" => StepKind::Tool,
            "retrieval" => StepKind::Retrieval,
            "embeddings" => StepKind::Embeddings,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Llm => "llm",
            StepKind::Tool => "tool",
            StepKind::Retrieval => "retrieval",
            StepKind::Embeddings => "embeddings",
        }
    }
}

/// A spec's options, checked against its catalogue entry, with the defaults
/// of those not written.
#[derive(Debug)]
pub(super) struct Options {
    /// `case_sensitive` (default false).
    pub(super) case_sensitive: bool,
    /// `pattern`, a valid regex.
    pub(super) pattern: Option<String>,
    /// `rubric`.
    pub(super) rubric_text: Option<String>,
    /// `rubric_file`.
    pub(super) rubric_file: Option<String>,
    /// `format` (default [`CitationFormat::Mixed`]).
    pub(super) citation_format: CitationFormat,
    /// `pairing` (default [`ToolPairing::Position`]).
    pub(super) pairing: ToolPairing,
    /// The tool metrics' flags: `parameters` (default false).
    pub(super) parameters: bool,
    /// `ordering` (default false).
    pub(super) ordering: bool,
    /// `exact` (default false).
    pub(super) exact: bool,
    /// `strict_order` (default true).
    pub(super) strict_order: bool,
    /// `trajectory_match`'s `mode` (default strict).
    pub(super) mode: TrajectoryMode,
    /// `trajectory_match`'s `args` (default exact).
    pub(super) args: ArgsMatch,
    /// The step metrics' `step` (default: every step).
    pub(super) step: Option<StepKind>,
    // issue36:geval
    /// `g_eval`'s options (see metric/geval.rs).
    pub(super) geval: super::geval::Builder,
}

impl Options {
    /// Checks `options`, as written for the metric `name` (catalogue entry
    /// `info`), and resolves them: a repeated option, a `threshold` option,
    /// one `info` does not take, a value of the wrong type or an unknown
    /// choice is refused, naming the option.
    pub(super) fn resolve(
        name: &str,
        info: &MetricInfo,
        options: &[(&str, OptionValue)],
    ) -> Result<Options, MetricSpecError> {
        let err = |kind: SpecErrorKind, part: SpecPart| Err(MetricSpecError(kind, part));
        let spec_name = || name.to_string();
        let mut case_sensitive = false;
        let mut pattern = None;
        let mut rubric_text = None;
        let mut citation_format = CitationFormat::default();
        let mut pairing = ToolPairing::default();
        let mut rubric_file = None;
        let (mut parameters, mut ordering, mut exact, mut strict_order) =
            (false, false, false, true);
        let (mut mode, mut args, mut step) =
            (TrajectoryMode::default(), ArgsMatch::default(), None);
        // issue36:geval
        let mut geval = super::geval::Builder::default();
        for (i, (key, _)) in options.iter().enumerate() {
            if options[..i].iter().any(|(k, _)| k == key) {
                return err(
                    SpecErrorKind::RepeatedOption {
                        name: spec_name(),
                        key: key.to_string(),
                    },
                    SpecPart::Option(i),
                );
            }
        }
        for (i, (key, value)) in options.iter().enumerate() {
            let part = SpecPart::Option(i);
            if *key == "threshold" {
                return err(
                    SpecErrorKind::ThresholdAsOption {
                        name: spec_name(),
                        op: info.op,
                        default: info.default_threshold,
                    },
                    part,
                );
            }
            let Some((_, kind)) = info.options.iter().find(|(k, _)| k == key) else {
                let known: Vec<&str> = info.options.iter().map(|(k, _)| *k).collect();
                return err(
                    if known.is_empty() {
                        SpecErrorKind::TakesNoOptions {
                            name: spec_name(),
                            key: key.to_string(),
                        }
                    } else {
                        SpecErrorKind::UnknownOption {
                            name: spec_name(),
                            key: key.to_string(),
                            known,
                        }
                    },
                    part,
                );
            };
            match (kind, value) {
                // issue36:geval — `g_eval` reads its own options.
                _ if info.name == "g_eval" => geval
                    .set(key, value)
                    .map_err(|kind| MetricSpecError(kind, part))?,
                (OptionKind::Bool, OptionValue::Bool(b)) if *key == "case_sensitive" => {
                    case_sensitive = *b
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "pattern" => {
                    if s.len() > MAX_REGEX_BYTES {
                        return err(
                            SpecErrorKind::PatternTooLong {
                                len: s.len(),
                                limit: MAX_REGEX_BYTES,
                            },
                            part,
                        );
                    }
                    if let Err(e) = regex_syntax::Parser::new().parse(s) {
                        let detail = e.to_string();
                        let last = detail.lines().last().unwrap_or("").trim();
                        let last = last.trim_start_matches("error: ");
                        return err(SpecErrorKind::InvalidPattern(last.to_string()), part);
                    }
                    pattern = Some(s.to_string())
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "format" => {
                    citation_format = match CitationFormat::parse(s) {
                        Some(f) => f,
                        None => {
                            return err(SpecErrorKind::UnknownCitationFormat(s.to_string()), part);
                        }
                    }
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "pairing" => {
                    pairing = match ToolPairing::parse(s) {
                        Some(p) => p,
                        None => {
                            return err(SpecErrorKind::UnknownToolPairing(s.to_string()), part);
                        }
                    }
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "mode" => {
                    mode = TrajectoryMode::parse(s).ok_or_else(|| {
                        MetricSpecError(
                            SpecErrorKind::UnknownChoice {
                                given: format!("`{key} = \"{s}\"` of `{name}`"),
                                expected: "strict, unordered, subset or superset (agentevals' trajectory match modes)",
                            },
                            part,
                        )
                    })?
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "args" => {
                    args = ArgsMatch::parse(s).ok_or_else(|| {
                        MetricSpecError(
                            SpecErrorKind::UnknownChoice {
                                given: format!("`{key} = \"{s}\"` of `{name}`"),
                                expected: "exact, ignore, subset or superset (agentevals' tool_args_match_mode)",
                            },
                            part,
                        )
                    })?
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "step" => {
                    step = Some(StepKind::parse(s).ok_or_else(|| {
                        MetricSpecError(
                            SpecErrorKind::UnknownChoice {
                                given: format!("`{key} = \"{s}\"` of `{name}`"),
                                expected: "llm, tool, retrieval or embeddings",
                            },
                            part,
                        )
                    })?)
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "rubric" => {
                    rubric_text = Some(s.to_string())
                }
                (OptionKind::Str, OptionValue::Str(s)) if *key == "rubric_file" => {
                    rubric_file = Some(s.to_string())
                }
                // The tool metrics' flags.
                (OptionKind::Bool, OptionValue::Bool(b)) if *key == "parameters" => parameters = *b,
                (OptionKind::Bool, OptionValue::Bool(b)) if *key == "ordering" => ordering = *b,
                (OptionKind::Bool, OptionValue::Bool(b)) if *key == "exact" => exact = *b,
                (OptionKind::Bool, OptionValue::Bool(b)) if *key == "strict_order" => {
                    strict_order = *b
                }
                (OptionKind::Bool, _) => {
                    return err(
                        SpecErrorKind::ExpectsBool {
                            name: spec_name(),
                            key: key.to_string(),
                        },
                        part,
                    );
                }
                (OptionKind::Str, _) => {
                    return err(
                        SpecErrorKind::ExpectsString {
                            name: spec_name(),
                            key: key.to_string(),
                        },
                        part,
                    );
                }
                // issue36:geval — only `g_eval` takes an integer, read above.
                (OptionKind::Int, _) => {
                    return err(
                        SpecErrorKind::GEval(format!("option `{key}` of `{name}` expects an integer")),
                        part,
                    );
                }
            }
        }
        Ok(Options {
            case_sensitive,
            pattern,
            rubric_text,
            rubric_file,
            citation_format,
            pairing,
            parameters,
            ordering,
            exact,
            strict_order,
            mode,
            args,
            step,
            geval,
        })
    }
}
