//! How the judge is asked to answer: `EVAL_JUDGE_MAX_TOKENS` (the bound on
//! every judge answer) and `EVAL_JUDGE_STRUCTURED` (the structured-output
//! mode asked of the server).

use super::BadVar;

/// The largest `EVAL_JUDGE_MAX_TOKENS` accepted.
const MAX_TOKENS_LIMIT: u32 = 1_000_000;

/// How the judge's answers are asked for (see the guide's "Judges" page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct JudgeAnswers {
    /// `EVAL_JUDGE_MAX_TOKENS`: the `max_tokens` of every judge request;
    /// `None`: each question's own bound, sized from the answer it asks for.
    pub max_tokens: Option<u32>,
    /// `EVAL_JUDGE_STRUCTURED`: the structured-output mode (default `auto`).
    pub structured: Structured,
}

/// The `response_format` a judge request carries (`EVAL_JUDGE_STRUCTURED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum Structured {
    /// `auto` (default): [`JsonSchema`](Self::JsonSchema) first; a server
    /// that refuses it is asked the next mode, remembered for the run.
    #[default]
    Auto,
    /// `json_schema`: OpenAI's `{"type": "json_schema", "json_schema":
    /// {"name", "schema", "strict": true}}` (OpenAI, vLLM, llama.cpp's
    /// server, Ollama, LM Studio).
    JsonSchema,
    /// `json_object_schema`: `{"type": "json_object", "schema": {...}}`
    /// (llama-cpp-python's server, which refuses `json_schema`).
    JsonObjectSchema,
    /// `json_object`: `{"type": "json_object"}`, JSON of any shape.
    JsonObject,
    /// `none`: no `response_format` at all.
    None,
}

impl Structured {
    /// The setting's value for this mode.
    pub fn name(self) -> &'static str {
        match self {
            Structured::Auto => "auto",
            Structured::JsonSchema => "json_schema",
            Structured::JsonObjectSchema => "json_object_schema",
            Structured::JsonObject => "json_object",
            Structured::None => "none",
        }
    }

    /// The mode `auto` tries after this one is refused (`None`: no other).
    pub fn next(self) -> Option<Structured> {
        match self {
            Structured::Auto | Structured::JsonSchema => Some(Structured::JsonObjectSchema),
            Structured::JsonObjectSchema => Some(Structured::JsonObject),
            Structured::JsonObject => Some(Structured::None),
            Structured::None => None,
        }
    }

    fn parse(text: &str) -> Option<Structured> {
        [
            Structured::Auto,
            Structured::JsonSchema,
            Structured::JsonObjectSchema,
            Structured::JsonObject,
            Structured::None,
        ]
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// The raw values, read with the others and parsed at the end.
pub(super) struct JudgeAnswerVars {
    max_tokens: Option<String>,
    structured: Option<String>,
}

impl JudgeAnswerVars {
    pub(super) fn get(get: &mut impl FnMut(&'static str, bool) -> Option<String>) -> Self {
        JudgeAnswerVars {
            max_tokens: get("EVAL_JUDGE_MAX_TOKENS", false),
            structured: get("EVAL_JUDGE_STRUCTURED", false),
        }
    }

    pub(super) fn parse(self, bad: &mut Vec<BadVar>) -> JudgeAnswers {
        let max_tokens = self.max_tokens.and_then(|v| match v.trim().parse::<u32>() {
            Ok(n) if (1..=MAX_TOKENS_LIMIT).contains(&n) => Some(n),
            _ => {
                bad.push(BadVar {
                    var: "EVAL_JUDGE_MAX_TOKENS",
                    value: v,
                    expected: format!("a whole number of tokens from 1 to {MAX_TOKENS_LIMIT}"),
                });
                None
            }
        });
        let structured = match self.structured {
            None => Structured::Auto,
            Some(v) => Structured::parse(&v).unwrap_or_else(|| {
                bad.push(BadVar {
                    var: "EVAL_JUDGE_STRUCTURED",
                    value: v,
                    expected: "auto, json_schema, json_object_schema, json_object or none".into(),
                });
                Structured::Auto
            }),
        };
        JudgeAnswers {
            max_tokens,
            structured,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(max: Option<&str>, mode: Option<&str>) -> (JudgeAnswers, Vec<BadVar>) {
        let vars = JudgeAnswerVars {
            max_tokens: max.map(str::to_string),
            structured: mode.map(str::to_string),
        };
        let mut bad = Vec::new();
        (vars.parse(&mut bad), bad)
    }

    #[test]
    fn reads_both_settings_and_names_what_is_wrong() {
        assert_eq!(read(None, None).0, JudgeAnswers::default());
        let (ok, bad) = read(Some("512"), Some("JSON_OBJECT_SCHEMA"));
        assert!(bad.is_empty());
        assert_eq!(
            (ok.max_tokens, ok.structured),
            (Some(512), Structured::JsonObjectSchema)
        );
        let (_, bad) = read(Some("0"), Some("xml"));
        assert_eq!(bad.len(), 2);
        assert_eq!(bad[0].var, "EVAL_JUDGE_MAX_TOKENS");
        assert!(bad[1].expected.contains("json_object_schema"));
        assert_eq!(
            Structured::JsonSchema.next(),
            Some(Structured::JsonObjectSchema)
        );
        assert_eq!(Structured::None.next(), None);
    }
}
