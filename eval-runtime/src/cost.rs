//! What a run costs: a price table (`EVAL_PRICES`) and the cost of a sample.
//!
//! The table is a JSON object mapping a model name to its prices in US
//! dollars per million tokens:
//!
//! ```json
//! {
//!   "gpt-4o-mini": {"input": 0.15, "output": 0.60},
//!   "text-embedding-3-small": {"input": 0.02}
//! }
//! ```
//!
//! `input` (prompt tokens) is required, `output` (completion tokens) is
//! optional (embeddings have none; a model with completion tokens and no
//! `output` price has an unknown cost), and `cached_input` prices the
//! prompt tokens the server says it read from its prompt cache (e.g.
//! `{"input": 0.40, "cached_input": 0.10, "output": 1.60}`); without it they
//! cost `input`, as if nothing were cached. A model is found by its exact name,
//! else by the longest name in the table that it starts with followed by
//! `-` (`gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`), as servers
//! answer with dated versions of the model asked for.
//!
//! A sample's cost is its agent tokens at the agent model's prices (the
//! model the agent's answer names, else `EVAL_AGENT_MODEL`), plus its judge
//! tokens at `EVAL_JUDGE_MODEL`'s and its embedding tokens at
//! `EVAL_EMBED_MODEL`'s. Tokens nobody reported (a JSON-contract agent
//! that returns no `usage`, answers served from the cache) cost nothing
//! here; a streamed OpenAI-protocol answer without `usage` has its tokens
//! counted from its text ([`Usage::estimated_tokens`](crate::Usage::estimated_tokens),
//! priced as reported ones), or, when they could not be counted
//! ([`Usage::unreported`](crate::Usage::unreported)), makes the cost
//! unknown. A model with tokens and no price makes the sample's cost
//! unknown — never 0 — and is named once per process on stderr. A sample
//! that timed out or failed is priced from what it spent (see
//! [`meter`](crate::model::meter)).
//!
//! Costs are never infinite or NaN. A price above $1,000,000 per million
//! tokens, or one that is not a finite number ≥ 0, is refused when the table
//! is read (see [`PriceTable`]); a model named twice in the table is refused
//! too. Tokens count at most 10^12 per reply (a reply claiming more is not
//! counted, see [`Usage`](crate::Usage)), and every sum of costs goes through
//! one function (`UsageTotals::add_cost`), which stops at the largest finite
//! number (`f64::MAX`, said once on stderr) rather than becoming infinite —
//! written as `null` in JSON, it would otherwise pass a `cost_usd` gate as if
//! nothing were spent.

use std::sync::{Mutex, OnceLock};

#[cfg(doc)]
use crate::config::PriceTable;
pub(crate) use crate::config::Pricing;
pub(crate) use crate::model::CostError;
use crate::model::{SampleReport, UsageTotals};
use crate::services::Services;

impl Pricing {
    /// The cost of one evaluated sample (`None`: no price table), or why it
    /// is unknown. A model without a price is said once per process.
    pub fn cost(
        &self,
        report: &SampleReport,
        services: &Services,
    ) -> Option<Result<f64, CostError>> {
        let table = self.table.as_ref()?;
        let agent_model = report.model.as_deref().or(self.agent_model.as_deref());
        let judge_model = services.judge.as_ref().ok().map(|j| j.model());
        let embed_model = services.embedder.as_ref().ok().map(|e| e.model());
        let parts = [
            table.cost("agent", agent_model, &report.agent),
            table.cost("judge", judge_model, &report.usage),
            table.cost("embeddings", embed_model, &report.embeddings),
        ];
        let mut total = 0.0;
        for part in parts {
            match part {
                Ok(c) => total = UsageTotals::add_cost(total, c),
                Err(why) => {
                    say_once(&why.to_string());
                    return Some(Err(why));
                }
            }
        }
        Some(Ok(total))
    }
}

/// Warns about `why` on stderr the first time it happens in this process.
fn say_once(why: &str) {
    static SAID: OnceLock<Mutex<std::collections::BTreeSet<String>>> = OnceLock::new();
    let said = SAID.get_or_init(Mutex::default);
    let first = said
        .lock()
        .map(|mut s| s.insert(why.to_string()))
        .unwrap_or(false);
    if first {
        crate::notice::warn(&format!("cost unknown: {why}"));
    }
}
