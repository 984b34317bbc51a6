//! `g_eval`: a judged metric defined by criteria text, after G-Eval (Liu et
//! al., "G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment",
//! EMNLP 2023) and deepeval's `GEval` (deepeval 4.3.1,
//! `deepeval/metrics/g_eval/`): criteria → evaluation steps (given, or
//! written once by the judge) → a form-filled integer on a scale,
//! normalised to 0–1. This file holds its options; the runtime scores it.
//!
//! ```text
//! g_eval(name = "helpfulness", criteria = "...", steps = "step one | step two",
//!        scale = 10, params = "input,output,expected,context", strict = false,
//!        logprobs = true) >= 0.6
//! ```

use std::borrow::Cow;

use super::catalog::{MetricInfo, Op, OptionDef, Threshold};
use super::options::Resolved;
use super::{JudgedMetric, MetricKind, MetricSpecError, OptionValue, SpecErrorKind, SpecPart};

/// The definition of `g_eval`: a judged metric (scored by eval-runtime's
/// `metrics::judged::geval`), named `g_eval:<name>` in results.
pub(super) static METRICS: &[MetricInfo] = &[MetricInfo {
    name: "g_eval",
    aliases: &["geval"],
    op: Op::AtLeast,
    threshold: Threshold::Default(0.5),
    range: (0.0, 1.0),
    pass_fail: false,
    needs: &[],
    options: &[
        OptionDef::text("name"),
        OptionDef::text("criteria"),
        OptionDef::text("criteria_file"),
        OptionDef::text("steps"),
        OptionDef::number("scale"),
        OptionDef::flag("strict", false),
        OptionDef {
            name: "logprobs",
            kind: super::OptionKind::Bool,
            default: None,
        },
        OptionDef::text("params"),
    ],
    summary: "G-Eval (Liu et al. 2023, as deepeval's GEval): the judge scores the answer against `criteria` (or `criteria_file`) by evaluation `steps` it writes once (or given), an integer 1..`scale` (default 5) weighted by its token probabilities where the server gives them, normalised to 0..1; named `g_eval:<name>`",
    reference: "Liu et al., G-Eval (EMNLP 2023); deepeval 4.3.1 GEval",
    build,
}];

/// A `g_eval` spec's definition from its checked options.
fn build(o: &Resolved<'_>) -> Result<MetricKind, MetricSpecError> {
    let mut builder = Builder::default();
    for (key, value, part) in o.written() {
        builder
            .set(key, value)
            .map_err(|kind| MetricSpecError(kind, part))?;
    }
    let g = builder
        .build()
        .map_err(|kind| MetricSpecError(kind, SpecPart::Name))?;
    Ok(MetricKind::Judged(JudgedMetric::GEval(Box::new(g))))
}

/// The highest top of a scale (`scale = 10`: 1 to 10): every score is one
/// token in the usual tokenizers, so its probability can be read.
pub(super) const MAX_SCALE: u8 = 10;
/// The longest `name`.
const MAX_NAME: usize = 64;
/// The most evaluation steps given.
pub(super) const MAX_STEPS: usize = 12;

/// What of the sample and the answer the judge is shown (deepeval's
/// `evaluation_params`, as far as this crate's samples have them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GEvalParam {
    /// The sample's input (`input`).
    Input,
    /// The agent's answer (`output`; deepeval's actual output).
    Output,
    /// The expected answer (`expected`).
    Expected,
    /// The retrieved context: the agent's, else the sample's (`context`;
    /// deepeval's retrieval context).
    Context,
}

impl GEvalParam {
    /// `input`, `output`, `expected` or `context`.
    pub fn parse(name: &str) -> Option<GEvalParam> {
        Some(match name {
            "input" => GEvalParam::Input,
            "output" | "actual_output" => GEvalParam::Output,
            "expected" | "expected_output" => GEvalParam::Expected,
            "context" | "retrieval_context" => GEvalParam::Context,
            _ => return None,
        })
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(self) -> &'static str {
        match self {
            GEvalParam::Input => "input",
            GEvalParam::Output => "output",
            GEvalParam::Expected => "expected",
            GEvalParam::Context => "context",
        }
    }

    /// What the judge's instructions call it (deepeval's names).
    pub fn label(self) -> &'static str {
        match self {
            GEvalParam::Input => "Input",
            GEvalParam::Output => "Actual Output",
            GEvalParam::Expected => "Expected Output",
            GEvalParam::Context => "Retrieval Context",
        }
    }
}

/// A `g_eval` metric's definition.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GEval {
    /// `name`: the result is named `g_eval:<name>` (`g_eval` without it),
    /// so several criteria metrics score side by side.
    pub name: Option<String>,
    /// `criteria`: what a good answer is, in words.
    pub criteria: Option<String>,
    /// `criteria_file`: a file holding the criteria (relative to the crate,
    /// read when the plan loads, as `rubric_file`).
    pub criteria_file: Option<String>,
    /// `steps`, split at `|`: the evaluation steps; none: the judge writes
    /// them from the criteria, once.
    pub steps: Vec<String>,
    /// `scale`: the judge answers an integer from 1 to this (default 5,
    /// G-Eval's); `strict = true`: 0 or 1.
    pub scale: u8,
    /// `strict`: deepeval's strict mode, 1 when the steps are fully met,
    /// else 0 (no weighting).
    pub strict: bool,
    /// `logprobs` (default true): ask for token probabilities and weight
    /// the score by them where the server gives them.
    pub logprobs: bool,
    /// `params`: what the judge is shown (default `input,output`).
    pub params: Vec<GEvalParam>,
}

impl GEval {
    /// The lowest and highest integer the judge may answer.
    pub fn range(&self) -> (u8, u8) {
        if self.strict { (0, 1) } else { (1, self.scale) }
    }

    /// The spec's name: `g_eval:<name>`, or `g_eval`.
    pub fn spec_name(&self) -> String {
        match &self.name {
            Some(n) => format!("g_eval:{n}"),
            None => "g_eval".to_string(),
        }
    }

    /// The options written back (what its option reader takes), for a
    /// spec's declaration parts.
    pub fn options(&self) -> Vec<(String, OptionValue)> {
        let s = |v: &str| OptionValue::Str(Cow::Owned(v.to_string()));
        let mut out = Vec::new();
        if let Some(n) = &self.name {
            out.push(("name".to_string(), s(n)));
        }
        if let Some(c) = &self.criteria {
            out.push(("criteria".to_string(), s(c)));
        }
        if let Some(f) = &self.criteria_file {
            out.push(("criteria_file".to_string(), s(f)));
        }
        if !self.steps.is_empty() {
            out.push(("steps".to_string(), s(&self.steps.join(" | "))));
        }
        if self.scale != DEFAULT_SCALE {
            out.push(("scale".to_string(), OptionValue::Num(f64::from(self.scale))));
        }
        if self.strict {
            out.push(("strict".to_string(), OptionValue::Bool(true)));
        }
        if !self.logprobs {
            out.push(("logprobs".to_string(), OptionValue::Bool(false)));
        }
        if self.params != DEFAULT_PARAMS {
            let names: Vec<&str> = self.params.iter().map(|p| p.name()).collect();
            out.push(("params".to_string(), s(&names.join(","))));
        }
        out
    }
}

/// The name a spec of `kind`, written `name`, is known by: `g_eval:<name>`
/// for a criteria metric, else as written.
pub(super) fn spec_name(name: &str, kind: &super::MetricKind) -> String {
    match kind {
        super::MetricKind::Judged(super::JudgedMetric::GEval(g)) => g.spec_name(),
        _ => name.to_string(),
    }
}

impl super::MetricSpec {
    /// The name the catalogue knows the spec by as written (`g_eval` for
    /// `g_eval:<name>`; an alias stays an alias).
    pub(super) fn catalogue_name(&self) -> &str {
        match &self.kind {
            super::MetricKind::Judged(super::JudgedMetric::GEval(_)) => "g_eval",
            _ => self.base_name(),
        }
    }
}

/// G-Eval's scale for its SummEval criteria: 1 to 5.
pub(super) const DEFAULT_SCALE: u8 = 5;
const DEFAULT_PARAMS: [GEvalParam; 2] = [GEvalParam::Input, GEvalParam::Output];

/// The options of a `g_eval` spec as they are read.
#[derive(Debug, Default)]
pub(super) struct Builder {
    name: Option<String>,
    criteria: Option<String>,
    criteria_file: Option<String>,
    steps: Vec<String>,
    scale: Option<u8>,
    strict: bool,
    logprobs: Option<bool>,
    params: Option<Vec<GEvalParam>>,
}

fn bad(text: impl Into<String>) -> SpecErrorKind {
    SpecErrorKind::GEval(text.into())
}

impl Builder {
    /// Reads one option (its name already checked against the catalogue).
    pub(super) fn set(&mut self, key: &str, value: &OptionValue) -> Result<(), SpecErrorKind> {
        let text = || match value {
            OptionValue::Str(s) => Ok(s.to_string()),
            _ => Err(bad(format!("option `{key}` of `g_eval` expects a string"))),
        };
        let flag = || match value {
            OptionValue::Bool(b) => Ok(*b),
            _ => Err(bad(format!(
                "option `{key}` of `g_eval` expects true or false"
            ))),
        };
        match key {
            "name" => {
                let n = text()?;
                let ok = !n.is_empty()
                    && n.len() <= MAX_NAME
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !ok {
                    return Err(bad(format!(
                        "`name = \"{n}\"` of `g_eval`: a name is 1 to {MAX_NAME} ASCII letters, digits, `_` or `-` (the result is named `g_eval:<name>`)"
                    )));
                }
                self.name = Some(n);
            }
            "criteria" => {
                let c = text()?;
                if c.trim().is_empty() {
                    return Err(bad(
                        "`criteria` of `g_eval` is empty: say what a good answer is",
                    ));
                }
                self.criteria = Some(c);
            }
            "criteria_file" => self.criteria_file = Some(text()?),
            "steps" => {
                let steps: Vec<String> = text()?
                    .split('|')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if steps.is_empty() || steps.len() > MAX_STEPS {
                    return Err(bad(format!(
                        "`steps` of `g_eval`: 1 to {MAX_STEPS} evaluation steps, separated by `|`"
                    )));
                }
                self.steps = steps;
            }
            "scale" => {
                let n = match value {
                    OptionValue::Num(n) if n.fract() == 0.0 && (2.0..=10.0).contains(n) => *n as u8,
                    _ => {
                        return Err(bad(format!(
                            "`scale` of `g_eval` takes an integer from 2 to {MAX_SCALE}: the judge answers 1 to it"
                        )));
                    }
                };
                self.scale = Some(n);
            }
            "strict" => self.strict = flag()?,
            "logprobs" => self.logprobs = Some(flag()?),
            "params" => {
                let mut params = Vec::new();
                for p in text()?.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let Some(param) = GEvalParam::parse(p) else {
                        return Err(bad(format!(
                            "`params` of `g_eval`: `{p}` is not one of input, output, expected, context"
                        )));
                    };
                    if !params.contains(&param) {
                        params.push(param);
                    }
                }
                if !params.contains(&GEvalParam::Output) {
                    return Err(bad(
                        "`params` of `g_eval` must include `output`: the answer is what is judged",
                    ));
                }
                self.params = Some(params);
            }
            other => return Err(bad(format!("`g_eval` takes no option `{other}`"))),
        }
        Ok(())
    }

    /// The definition, when the options make one.
    pub(super) fn build(self) -> Result<GEval, SpecErrorKind> {
        match (&self.criteria, &self.criteria_file) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "`g_eval` takes `criteria` or `criteria_file`, not both",
                ));
            }
            (None, None) if self.steps.is_empty() => {
                return Err(bad(
                    "`g_eval` needs `criteria = \"...\"` (or `criteria_file = \"...\"`), or `steps = \"step one | step two\"`",
                ));
            }
            _ => {}
        }
        if self.strict && self.scale.is_some() {
            return Err(bad(
                "`g_eval` takes `scale` or `strict = true` (0 or 1), not both",
            ));
        }
        Ok(GEval {
            name: self.name,
            criteria: self.criteria,
            criteria_file: self.criteria_file,
            steps: self.steps,
            scale: self.scale.unwrap_or(DEFAULT_SCALE),
            strict: self.strict,
            logprobs: self.logprobs.unwrap_or(true),
            params: self.params.unwrap_or_else(|| DEFAULT_PARAMS.to_vec()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MetricKind, MetricSpec, OptionValue, parse_specs};

    fn s(v: &'static str) -> OptionValue {
        OptionValue::Str(v.into())
    }

    #[test]
    fn options_resolve_round_trip_and_name_the_result() {
        let spec = MetricSpec::new(
            "g_eval",
            &[
                ("name", s("helpfulness")),
                ("criteria", s("Is it helpful?")),
                ("steps", s("Read the input | Check the answer helps ")),
                ("scale", OptionValue::Num(10.0)),
                ("params", s("input, output,expected")),
            ],
            None,
        )
        .unwrap();
        assert_eq!(spec.name, "g_eval:helpfulness");
        assert_eq!(spec.identity(), ("g_eval:helpfulness", None));
        assert_eq!(spec.info().map(|i| i.name).unwrap_or_default(), "g_eval");
        let MetricKind::Judged(super::JudgedMetric::GEval(g)) = &spec.kind else {
            panic!("{:?}", spec.kind)
        };
        assert_eq!(g.steps, ["Read the input", "Check the answer helps"]);
        assert_eq!((g.range(), g.logprobs), ((1, 10), true));
        let (name, options, bound) = spec.decl_parts();
        assert_eq!(name, "g_eval");
        let options: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        assert_eq!(MetricSpec::new(&name, &options, bound).unwrap(), spec);
        // Per turn too.
        let turn = spec.clone().for_turn(1);
        assert_eq!(turn.name, "g_eval:helpfulness@turn2");
        assert_eq!(turn.info().map(|i| i.name).unwrap_or_default(), "g_eval");
    }

    #[test]
    fn two_named_criteria_metrics_coexist_and_bad_options_say_what_to_change() {
        let two = parse_specs(
            r#"g_eval(name = "a", criteria = "x"), g_eval(name = "b", criteria = "y", strict = true) >= 1"#,
        )
        .unwrap();
        assert_eq!(two[0].name, "g_eval:a");
        assert_eq!(two[1].name, "g_eval:b");
        assert!(
            parse_specs(
                r#"g_eval(name = "a", criteria = "x"), g_eval(name = "a", criteria = "y")"#
            )
            .unwrap_err()
            .to_string()
            .contains("listed twice")
        );
        for (options, says) in [
            (vec![], "needs `criteria"),
            (
                vec![("criteria", s("x")), ("scale", OptionValue::Num(11.0))],
                "from 2 to 10",
            ),
            (
                vec![("criteria", s("x")), ("scale", OptionValue::Num(2.5))],
                "integer",
            ),
            (
                vec![("criteria", s("x")), ("criteria_file", s("c.txt"))],
                "not both",
            ),
            (
                vec![("criteria", s("x")), ("params", s("input,answer"))],
                "`answer` is not one of",
            ),
            (
                vec![("criteria", s("x")), ("params", s("input"))],
                "must include `output`",
            ),
            (
                vec![("criteria", s("x")), ("name", s("a b"))],
                "ASCII letters",
            ),
            (vec![("criteria", s("  "))], "is empty"),
            (vec![("steps", s(" | "))], "1 to 12 evaluation steps"),
            (
                vec![
                    ("criteria", s("x")),
                    ("strict", OptionValue::Bool(true)),
                    ("scale", OptionValue::Num(5.0)),
                ],
                "not both",
            ),
        ] {
            let e = MetricSpec::new("g_eval", &options, None).unwrap_err();
            assert!(e.to_string().contains(says), "{options:?}: {e}");
        }
    }
}
