//! Price tables (`EVAL_PRICES`): models and their prices in US dollars
//! per million tokens, read and checked once with the other settings (the
//! cost of a sample is computed in [`cost`](crate::cost)).
//!
//! A table is refused, naming the file, line and model, when a model is
//! named twice (or a model gives `input` or `output` twice): JSON parsers
//! keep the last, so a forgotten `$0` entry further down would silently
//! make a model free and pass a cost gate. A price must be a finite number
//! from 0 to [`PriceTable::MAX_PRICE`] ($1,000,000 per million tokens, a
//! dollar a token): `1e308` would make every cost infinite.

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
    /// Per million prompt tokens the server read from its prompt cache
    /// (`cached_input`), when the table gives it; else such tokens are
    /// priced at `input` (never less than billed).
    pub cached_input: Option<f64>,
}

impl Price {
    /// A model's prices.
    pub fn new(input: f64, output: Option<f64>) -> Price {
        Price {
            input,
            output,
            cached_input: None,
        }
    }

    /// The same prices, cached prompt tokens at `rate` per million.
    pub fn with_cached_input(mut self, rate: f64) -> Price {
        self.cached_input = Some(rate);
        self
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
    /// A model is named twice, or a model gives a price twice.
    #[error(
        "{path}:{line}:{column}: {what} is given twice in one object (a JSON reader keeps the last one silently): give each model, and each of its prices, once"
    )]
    Duplicate {
        /// The file.
        path: String,
        /// Line (1-based) of the second one.
        line: usize,
        /// Column (1-based) of the second one.
        column: usize,
        /// The key given twice (`` `gpt-4o` ``, `` `input` ``).
        what: String,
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
    /// The most a price may be, US dollars per million tokens (a dollar a
    /// token): a table with a larger one is refused as a typo.
    pub const MAX_PRICE: f64 = 1e6;

    /// A table of `prices` (tests, programs that build their own). Prices
    /// are not checked here (costs still never become infinite: see
    /// [`cost`](Self::cost)).
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
        let text = std::str::from_utf8(bytes).map_err(|e| PriceError::Shape {
            path: shown.to_string(),
            problem: format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        })?;
        let value = eval_datasets::json::parse_strict(text).map_err(|e| {
            let said = e.to_string();
            let said = said
                .rfind(" at line ")
                .map_or(said.as_str(), |at| &said[..at]);
            match said.strip_prefix("duplicate key ") {
                Some(rest) => PriceError::Duplicate {
                    path: shown.to_string(),
                    line: e.line(),
                    column: e.column(),
                    what: rest
                        .split(" in one object")
                        .next()
                        .unwrap_or(rest)
                        .to_string(),
                },
                None => PriceError::Json {
                    path: shown.to_string(),
                    line: e.line(),
                    column: e.column(),
                    reason: crate::model::one_line(&e.to_string(), 200),
                    source: SharedError::new(e),
                },
            }
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
                .find(|k| !matches!(k.as_str(), "input" | "output" | "cached_input"))
            {
                return Err(shape(format!(
                    "`{model}`: unknown field `{other}` (expected `input`, `output`, `cached_input`)"
                )));
            }
            let number = |key: &str| -> Result<Option<f64>, PriceError> {
                match fields.get(key) {
                    None => Ok(None),
                    Some(v) => match v.as_f64() {
                        Some(x) if x.is_finite() && (0.0..=Self::MAX_PRICE).contains(&x) => {
                            Ok(Some(x))
                        }
                        Some(x) if x.is_finite() && x > Self::MAX_PRICE => Err(shape(format!(
                            "`{model}`.`{key}` is {v}: more than {} USD per million tokens, the most a price may be (a dollar a token)",
                            Self::MAX_PRICE
                        ))),
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
            let mut price = Price::new(input, output);
            price.cached_input = number("cached_input")?;
            prices.insert(model, price);
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
    /// No tokens cost nothing, whatever the model; replies whose tokens are
    /// unknown ([`Usage::unreported`]) make it unknown. Estimated tokens
    /// ([`Usage::estimated_tokens`]) are priced as reported ones. Never infinite nor NaN
    /// (a price too large for the tokens gives `f64::MAX`, said on stderr).
    pub fn cost(&self, what: &str, model: Option<&str>, usage: &Usage) -> Result<f64, CostError> {
        let (prompt, completion) = (usage.prompt_tokens, usage.completion_tokens);
        if usage.unreported > 0 {
            return Err(CostError::NoUsage {
                what: what.to_string(),
                replies: usage.unreported,
            });
        }
        if usage.tokens() == 0 {
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
        // Prompt tokens read from the server's cache at its cached rate.
        let cached = usage.cached_tokens.min(prompt);
        let input = (prompt - cached) as f64 * price.input
            + cached as f64 * price.cached_input.unwrap_or(price.input);
        Ok(crate::model::UsageTotals::finite_cost(
            (input + output) / 1e6,
        ))
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
    fn replies_without_usage_make_the_cost_unknown_never_zero() {
        let table =
            PriceTable::parse("prices.json", br#"{"m": {"input": 1, "output": 2}}"#).unwrap();
        let mut u = usage(0, 0);
        u.unreported = 2;
        let e = table.cost("agent", Some("m"), &u).unwrap_err();
        assert_eq!(
            e,
            CostError::NoUsage {
                what: "agent".into(),
                replies: 2
            }
        );
        assert!(
            e.to_string()
                .starts_with("the agent reported no usage for 2 repl(ies)"),
            "{e}"
        );
        // Estimated tokens are priced as reported ones.
        let mut u = usage(1_000_000, 0);
        u.estimated_tokens = 1_000_000;
        assert_eq!(table.cost("agent", Some("m"), &u), Ok(1.0));
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
    fn cached_prompt_tokens_cost_the_cached_rate() {
        let table = PriceTable::parse(
            "prices.json",
            br#"{"gpt-4.1-mini": {"input": 0.4, "output": 1.6, "cached_input": 0.1},
                 "no-cache-price": {"input": 1.0, "output": 2.0}}"#,
        )
        .unwrap();
        // 1,000 prompt tokens of which 600 cached, 100 completion:
        // 400 × 0.4 + 600 × 0.1 + 100 × 1.6 = 160 + 60 + 160 = 380 per million.
        let u = Usage {
            cached_tokens: 600,
            ..usage(1000, 100)
        };
        let c = table.cost("judge", Some("gpt-4.1-mini"), &u).unwrap();
        assert!((c - 380e-6).abs() < 1e-15, "{c}");
        // Without a cached rate, cached tokens cost the input rate.
        let c = table.cost("judge", Some("no-cache-price"), &u).unwrap();
        assert!((c - 1200e-6).abs() < 1e-15, "{c}");
        // More cached tokens than prompt tokens (a server's mistake) count
        // as every prompt token cached, no more.
        let odd = Usage {
            cached_tokens: 5000,
            ..usage(1000, 0)
        };
        let c = table.cost("judge", Some("gpt-4.1-mini"), &odd).unwrap();
        assert!((c - 100e-6).abs() < 1e-15, "{c}");
        assert_eq!(
            table.price("gpt-4.1-mini"),
            Some(Price::new(0.4, Some(1.6)).with_cached_input(0.1))
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
            (
                r#"{"m": {"input": 1e308, "output": 1}}"#,
                "p.json: `m`.`input` is 1e+308: more than 1000000 USD per million tokens",
            ),
            (
                r#"{"m": {"input": 1, "output": 1000000.5}}"#,
                "p.json: `m`.`output` is 1000000.5: more than 1000000 USD",
            ),
        ] {
            let e = PriceTable::parse("p.json", text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_model_or_a_price_given_twice_is_refused_where_it_is() {
        let text = "{\n  \"gpt-4o\": {\"input\": 2.5, \"output\": 10},\n  \"gpt-4o\": {\"input\": 0, \"output\": 0}\n}";
        let e = PriceTable::parse("p.json", text.as_bytes()).unwrap_err();
        assert!(
            matches!(&e, PriceError::Duplicate { line: 3, what, .. } if what == "`gpt-4o`"),
            "{e:?}"
        );
        let line = e.to_string();
        assert!(
            line.starts_with("p.json:3:")
                && line.contains(
                    ": `gpt-4o` is given twice in one object (a JSON reader keeps the last one silently)"
                ),
            "{line}"
        );
        let e = PriceTable::parse("p.json", br#"{"m": {"input": 3, "input": 0}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("p.json:1:") && e.contains("`input` is given twice"),
            "{e}"
        );
        // The same key in two models is no duplicate; nor is a model whose
        // name only starts like another's.
        let t = PriceTable::parse(
            "p.json",
            br#"{"a": {"input": 1, "output": 2}, "a-mini": {"input": 3, "output": 4}}"#,
        )
        .unwrap();
        assert_eq!(t.price("a-mini"), Some(Price::new(3.0, Some(4.0))));
        // A syntax error is still one.
        let e = PriceTable::parse("p.json", br#"{"a": }"#).unwrap_err();
        assert!(matches!(e, PriceError::Json { .. }), "{e:?}");
    }

    #[test]
    fn costs_are_never_infinite_and_huge_counts_do_not_overflow() {
        let table = PriceTable::parse("p.json", br#"{"m": {"input": 1000000, "output": 1000000}}"#)
            .unwrap();
        // u64::MAX + u64::MAX tokens: no overflow, a finite cost.
        let c = table
            .cost("agent", Some("m"), &usage(u64::MAX, u64::MAX))
            .unwrap();
        assert!(c.is_finite() && c > 3.6e19, "{c}");
        // A table built in code is not checked, and still never gives inf.
        let table = PriceTable::new("code", [("m".to_string(), Price::new(f64::MAX, None))]);
        let c = table.cost("agent", Some("m"), &usage(10, 0)).unwrap();
        assert_eq!(c, f64::MAX);
    }
}
