//! Price tables (`EVAL_PRICES`): models and their prices in US dollars
//! per million tokens, read and checked once with the other settings (the
//! cost of a sample is computed in [`cost`](crate::cost)).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::model::{CostError, SharedError, Usage};

/// Prices of one model, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Price {
    /// Per million prompt (input) tokens.
    pub input: f64,
    /// Per million completion (output) tokens, when the table gives it.
    pub output: Option<f64>,
}

impl Price {
    /// A model's prices.
    pub fn new(input: f64, output: Option<f64>) -> Price {
        Price { input, output }
    }
}

/// Why a price table cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PriceError {
    /// The file cannot be read.
    #[error("{path}: cannot read it: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why (an [`eval_datasets::files::ReadError`]: I/O, not a
        /// regular file, too large).
        #[source]
        source: SharedError,
    },
    /// The file is not JSON.
    #[error("{path}:{line}:{column}: invalid JSON: {reason}")]
    Json {
        /// The file.
        path: String,
        /// Line (1-based).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// What the parser said, on one line.
        reason: String,
        /// The parser's error (a [`serde_json::Error`]).
        #[source]
        source: SharedError,
    },
    /// The JSON is not the table's shape.
    #[error("{path}: {problem}")]
    Shape {
        /// The file.
        path: String,
        /// What is wrong, naming the model and field.
        problem: String,
    },
}

/// Models and their prices (`EVAL_PRICES`; see the guide's configuration
/// reference).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriceTable {
    /// Where it was read from, for messages.
    pub source: String,
    prices: BTreeMap<String, Price>,
}

impl PriceTable {
    /// A table of `prices` (tests, programs that build their own).
    pub fn new(source: &str, prices: impl IntoIterator<Item = (String, Price)>) -> PriceTable {
        PriceTable {
            source: source.to_string(),
            prices: prices.into_iter().collect(),
        }
    }

    /// Reads the table at `path`.
    pub fn read(path: &Path) -> Result<PriceTable, PriceError> {
        let shown = path.display().to_string();
        let bytes =
            eval_datasets::files::read_checked(path, 16 << 20).map_err(|e| PriceError::Read {
                path: shown.clone(),
                source: SharedError::new(e),
            })?;
        Self::parse(&shown, &bytes)
    }

    /// Parses a table's JSON; `shown` names it in messages.
    pub fn parse(shown: &str, bytes: &[u8]) -> Result<PriceTable, PriceError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| PriceError::Json {
            path: shown.to_string(),
            line: e.line(),
            column: e.column(),
            reason: crate::model::one_line(&e.to_string(), 200),
            source: SharedError::new(e),
        })?;
        let shape = |problem: String| PriceError::Shape {
            path: shown.to_string(),
            problem,
        };
        let Value::Object(models) = value else {
            return Err(shape(
                "expected an object of model name → {\"input\": USD per million tokens, \"output\": ...}".into(),
            ));
        };
        let mut prices = BTreeMap::new();
        for (model, entry) in models {
            let Value::Object(fields) = entry else {
                return Err(shape(format!(
                    "`{model}`: expected an object such as {{\"input\": 0.15, \"output\": 0.6}} (USD per million tokens)"
                )));
            };
            if let Some(other) = fields
                .keys()
                .find(|k| !matches!(k.as_str(), "input" | "output"))
            {
                return Err(shape(format!(
                    "`{model}`: unknown field `{other}` (expected `input`, `output`)"
                )));
            }
            let number = |key: &str| -> Result<Option<f64>, PriceError> {
                match fields.get(key) {
                    None => Ok(None),
                    Some(v) => match v.as_f64() {
                        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                        _ => Err(shape(format!(
                            "`{model}`.`{key}` is {v}: expected USD per million tokens, a number ≥ 0"
                        ))),
                    },
                }
            };
            let Some(input) = number("input")? else {
                return Err(shape(format!(
                    "`{model}`: missing `input` (USD per million prompt tokens)"
                )));
            };
            let output = number("output")?;
            prices.insert(model, Price::new(input, output));
        }
        Ok(PriceTable {
            source: shown.to_string(),
            prices,
        })
    }

    /// The prices of `model`: by exact name, else the longest name in the
    /// table that `model` starts with, followed by `-`.
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.prices.get(model) {
            return Some(*p);
        }
        self.prices
            .iter()
            .filter(|(name, _)| {
                model
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| *p)
    }

    /// The cost of `usage` tokens at `model`'s prices, or why it is unknown.
    /// No tokens cost nothing, whatever the model.
    pub fn cost(&self, what: &str, model: Option<&str>, usage: &Usage) -> Result<f64, CostError> {
        let (prompt, completion) = (usage.prompt_tokens, usage.completion_tokens);
        if prompt + completion == 0 {
            return Ok(0.0);
        }
        let Some(model) = model else {
            return Err(CostError::UnknownModel {
                what: what.to_string(),
            });
        };
        let Some(price) = self.price(model) else {
            return Err(CostError::NoPrice {
                what: what.to_string(),
                model: model.to_string(),
                table: self.source.clone(),
            });
        };
        let output = match (completion, price.output) {
            (0, _) => 0.0,
            (n, Some(p)) => n as f64 * p,
            (_, None) => {
                return Err(CostError::NoOutputPrice {
                    what: what.to_string(),
                    model: model.to_string(),
                    table: self.source.clone(),
                });
            }
        };
        Ok((prompt as f64 * price.input + output) / 1e6)
    }
}

/// The prices a run uses and the agent's model when its answers do not name
/// it: from [`Config`](crate::Config) (`EVAL_PRICES`, `EVAL_AGENT_MODEL`).
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    /// The price table, when one is set.
    pub table: Option<Arc<PriceTable>>,
    /// The agent's model when its answers do not say (`EVAL_AGENT_MODEL`).
    pub agent_model: Option<String>,
}

impl Pricing {
    /// No price table: costs are not computed.
    pub fn none() -> Pricing {
        Pricing::default()
    }

    /// Prices from `table`, the agent's model `agent_model`.
    pub fn new(table: Option<PriceTable>, agent_model: Option<String>) -> Pricing {
        Pricing {
            table: table.map(Arc::new),
            agent_model,
        }
    }
}

/// The price table at `path` for [`Config`](crate::Config): a problem as the
/// one-line reason the setting is refused.
pub(crate) fn read_setting(path: &str) -> Result<PriceTable, String> {
    PriceTable::read(&PathBuf::from(path)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, completion: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            ..Usage::default()
        }
    }

    #[test]
    fn costs_are_tokens_at_the_tables_prices() {
        let table = PriceTable::parse(
            "prices.json",
            br#"{"gpt-4o-mini": {"input": 0.15, "output": 0.6}, "gpt-4o": {"input": 2.5, "output": 10},
                 "text-embedding-3-small": {"input": 0.02}}"#,
        )
        .unwrap();
        // 1,000 prompt tokens at $0.15/M + 200 completion at $0.60/M
        // = 0.00015 + 0.00012 = 0.00027.
        let c = table
            .cost("judge", Some("gpt-4o-mini"), &usage(1000, 200))
            .unwrap();
        assert!((c - 0.000_27).abs() < 1e-12, "{c}");
        // A dated version is priced as its base name (the longest prefix).
        assert_eq!(
            table.price("gpt-4o-mini-2024-07-18"),
            Some(Price::new(0.15, Some(0.6)))
        );
        assert_eq!(
            table.price("gpt-4o-2024-08-06"),
            Some(Price::new(2.5, Some(10.0)))
        );
        assert_eq!(table.price("gpt-4"), None);
        // 5,000 embedding tokens at $0.02/M = 0.0001.
        let c = table
            .cost(
                "embeddings",
                Some("text-embedding-3-small"),
                &usage(5000, 0),
            )
            .unwrap();
        assert!((c - 0.0001).abs() < 1e-12, "{c}");
        assert_eq!(
            table
                .cost("agent", Some("llama-3"), &usage(10, 1))
                .unwrap_err()
                .to_string(),
            "agent model `llama-3` has no price in prices.json"
        );
        assert_eq!(
            table
                .cost("embeddings", Some("text-embedding-3-small"), &usage(1, 1))
                .unwrap_err()
                .to_string(),
            "embeddings model `text-embedding-3-small` has no `output` price in prices.json"
        );
        assert_eq!(table.cost("agent", None, &usage(0, 0)), Ok(0.0));
        assert!(
            table
                .cost("agent", None, &usage(3, 0))
                .unwrap_err()
                .to_string()
                .contains("EVAL_AGENT_MODEL")
        );
    }

    #[test]
    fn a_bad_table_is_refused_naming_the_model_and_field() {
        for (text, want) in [
            ("[1]", "p.json: expected an object of model name"),
            (r#"{"m": 3}"#, "p.json: `m`: expected an object"),
            (r#"{"m": {"output": 1}}"#, "p.json: `m`: missing `input`"),
            (
                r#"{"m": {"input": -1}}"#,
                "p.json: `m`.`input` is -1: expected USD per million tokens",
            ),
            (
                r#"{"m": {"input": 1, "cached": 0.5}}"#,
                "p.json: `m`: unknown field `cached`",
            ),
            ("{\n  \"m\": {\"input\": }\n}", "p.json:2:18: invalid JSON"),
        ] {
            let e = PriceTable::parse("p.json", text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }
}
