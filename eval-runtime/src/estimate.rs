//! What a run will cost, before it starts and without a single call
//! (`evals evaluate --estimate`): agent, judge and embedding calls, their
//! tokens, and the price of those tokens.
//!
//! * **Agent calls**: one per user turn, per run (`repeat`), per sample; a
//!   retrieval query is one search. Samples that would fail before the
//!   agent is called (a field a metric needs is missing) make none.
//! * **Judge and embedding calls** are counted by running the metrics' own
//!   code (the engine's scoring) against a *dry* judge and
//!   embedder that answer instead of the servers: every question a metric
//!   asks is counted and its prompt — the real text, built from the
//!   sample's input, context and expected answer — is tokenized, so the
//!   counts follow the metric code as it is. Where the number of calls
//!   depends on the judge's answers, the dry judge answers what the metric
//!   that asks says it assumes (each metric declares, beside the keys it
//!   reads from the judge, how long the lists the judge writes are assumed
//!   to be), so a change to a metric's prompt cannot break the estimate.
//!   Calls per sample of each model-based metric, as the code makes them:
//!
//!   | metric | judge | embeddings |
//!   |---|---|---|
//!   | `faithfulness` | 2 (statements, then their verdicts; 1 when the answer has no statement) | 0 |
//!   | `answer_relevancy` | 1 | 1 (the input and the 3 questions, one request) |
//!   | `answer_similarity` | 0 | 1 (offline: 0) |
//!   | `context_recall`, `context_precision` | 1 (offline: 0) | 0 |
//!   | `hallucination`, `rubric`, `relevance`, `coherence`, `groundedness`, `similarity` | 1 | 0 |
//!   | `toxicity`, `bias` | 1 (opinions), + 1 (verdicts) when the answer holds opinions | 0 |
//!
//!   A metric scored per turn (`@turn2`, or a conversation with an
//!   expected answer per turn) makes its calls once per turn scored.
//! * **Assumptions** (said in [`Estimate::render`]): the agent answers each
//!   turn with that turn's expected answer, else the sample's, else a
//!   [`PLACEHOLDER_ANSWER`] of about 50 tokens, and returns no context of
//!   its own (the sample's is judged); the answer has one statement per
//!   sentence and no opinions; the judge's questions are as long as the
//!   input; no answer comes from the cache.
//! * **Tokens**: with the model's own tokenizer when it is an OpenAI model
//!   that `tiktoken-rs` knows (its BPE tables are compiled in: nothing is
//!   downloaded), chat messages counted as OpenAI's cookbook counts them
//!   (3 tokens per message, 3 to prime the answer); any other model is
//!   approximated with `o200k_base`, and the estimate says so. The agent's
//!   prompt tokens are those of the conversation sent: its own system
//!   prompt and retrieved context are not known, so they are a lower bound.
//! * **Cost**: the tokens at the price table's prices (`EVAL_PRICES`),
//!   the agent's at `EVAL_AGENT_MODEL`'s.

use std::fmt::Write as _;
use std::sync::Arc;

use eval_datasets::Sample;

use crate::agent::Response;
use crate::cost::{CostError, Pricing};
use crate::engine::evaluate;
use crate::metrics::judged;
use crate::output::SampleReport;
use crate::plan::LoadedDataset;
pub use crate::services::dry::Calls;
use crate::services::{DryRun, Services, Tokenizer};

/// The answer assumed for a turn without an expected answer (about 50 tokens).
pub const PLACEHOLDER_ANSWER: &str = "This is an answer of ordinary length that the agent is assumed to give when the sample has no expected answer. It states a fact. It explains that fact in a second sentence of similar length, as agents usually do.";

/// One metric's judge and embedding calls over a dataset.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct MetricCalls {
    /// Metric name as scored.
    pub name: String,
    /// Judge calls and tokens.
    pub judge: Calls,
    /// Embedding calls and tokens.
    pub embeddings: Calls,
}

/// One dataset's estimate.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct DatasetEstimate {
    /// Dataset name.
    pub name: String,
    /// Samples.
    pub samples: usize,
    /// Runs of the agent per sample.
    pub repeat: u32,
    /// Agent calls and tokens (the conversation sent, and the answers assumed).
    pub agent: Calls,
    /// Judge calls and tokens.
    pub judge: Calls,
    /// Embedding calls and tokens.
    pub embeddings: Calls,
    /// Per model-based metric, in the order first scored.
    pub metrics: Vec<MetricCalls>,
}

/// The calls, tokens and cost a run will make.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct Estimate {
    /// Per dataset.
    pub datasets: Vec<DatasetEstimate>,
    /// Agent calls and tokens of the whole run.
    pub agent: Calls,
    /// Judge calls and tokens of the whole run.
    pub judge: Calls,
    /// Embedding calls and tokens of the whole run.
    pub embeddings: Calls,
    /// `(service, model, tokenizer, exact)`: how each service's tokens were
    /// counted; `exact` is false for an approximation (not an OpenAI model).
    pub tokenizers: Vec<(String, String, String, bool)>,
    /// The cost in US dollars, when a price table is set and every model
    /// used has a price.
    pub cost_usd: Option<f64>,
    /// Why the cost is unknown, when a price table is set (serialized as
    /// its message).
    #[serde(serialize_with = "crate::model::serialize_message")]
    pub cost_unknown: Option<CostError>,
}

impl Estimate {
    /// The estimate of evaluating `datasets` with `services` (no call is made).
    pub(crate) fn of(datasets: &[LoadedDataset], services: &Services) -> Estimate {
        let dry = Arc::new(DryRun::default());
        let dry_services = Services {
            judge: services.judge.clone().map(|j| j.dry_run(dry.clone())),
            embedder: services.embedder.clone().map(|e| e.dry_run(dry.clone())),
            pricing: Pricing::none(),
            cassette: None,
            base_dir: services.base_dir.clone(),
            traces: crate::otel::Tracing::default(),
            scorer_permits: services.scorer_permits.clone(),
        };
        let agent_model = services.pricing.agent_model.clone();
        let agent_tokenizer = Tokenizer::for_model(agent_model.as_deref().unwrap_or(""));
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        let mut estimate = Estimate::default();
        for d in datasets {
            let repeat = u64::from(d.plan.repeat.max_runs());
            let mut de = DatasetEstimate {
                name: d.plan.name.clone(),
                samples: d.samples.len(),
                repeat: d.plan.repeat.max_runs(),
                ..DatasetEstimate::default()
            };
            for i in 0..d.samples.len() {
                // One that cannot be read (its file changed) is an error in
                // the run, and calls nothing.
                let Ok(sample) = d.sample(i) else { continue };
                let sample = &*sample;
                dry.next_sample();
                let specs = d.specs(i);
                // Refused before the agent is called: no call at all.
                if crate::metrics::missing(sample, specs, services).is_some() {
                    continue;
                }
                let (answer, agent) = assumed_answer(sample, &agent_tokenizer);
                de.agent.add(agent.times(repeat));
                for spec in specs.iter().filter(|s| judged::is_model_based(s)) {
                    let (judge, embeddings) = match &runtime {
                        Ok(rt) => dry.count(|| {
                            rt.block_on(evaluate::score(
                                SampleReport::new(String::new(), sample),
                                sample,
                                std::slice::from_ref(spec),
                                Ok(answer.clone()),
                                &dry_services,
                            ))
                        }),
                        Err(_) => (Calls::default(), Calls::default()),
                    };
                    let entry = match de.metrics.iter_mut().position(|m| m.name == spec.name) {
                        Some(at) => &mut de.metrics[at],
                        None => {
                            de.metrics.push(MetricCalls {
                                name: spec.name.clone(),
                                ..MetricCalls::default()
                            });
                            let last = de.metrics.len() - 1;
                            &mut de.metrics[last]
                        }
                    };
                    entry.judge.add(judge.times(repeat));
                    entry.embeddings.add(embeddings.times(repeat));
                    de.judge.add(judge.times(repeat));
                    de.embeddings.add(embeddings.times(repeat));
                }
            }
            estimate.agent.add(de.agent);
            estimate.judge.add(de.judge);
            estimate.embeddings.add(de.embeddings);
            estimate.datasets.push(de);
        }
        // How tokens were counted, per service used.
        let mut tokenizers = Vec::new();
        if estimate.agent.calls > 0 {
            tokenizers.push((
                "agent",
                agent_model.clone().unwrap_or_default(),
                agent_tokenizer,
            ));
        }
        if let (true, Ok(j)) = (estimate.judge.calls > 0, &services.judge) {
            tokenizers.push((
                "judge",
                j.model().to_string(),
                Tokenizer::for_model(j.model()),
            ));
        }
        if let (true, Ok(e)) = (estimate.embeddings.calls > 0, &services.embedder) {
            tokenizers.push((
                "embeddings",
                e.model().to_string(),
                Tokenizer::for_model(e.model()),
            ));
        }
        estimate.tokenizers = tokenizers
            .into_iter()
            .map(|(what, model, t)| (what.to_string(), model, t.name.to_string(), t.exact))
            .collect();
        // The cost, as a run's samples are priced.
        if let Some(table) = &services.pricing.table {
            let judge_model = services.judge.as_ref().ok().map(|j| j.model());
            let embed_model = services.embedder.as_ref().ok().map(|e| e.model());
            let parts = [
                table.cost("agent", agent_model.as_deref(), &estimate.agent.usage()),
                table.cost("judge", judge_model, &estimate.judge.usage()),
                table.cost("embeddings", embed_model, &estimate.embeddings.usage()),
            ];
            match parts.into_iter().collect::<Result<Vec<f64>, CostError>>() {
                Ok(costs) => {
                    estimate.cost_usd = Some(
                        costs
                            .iter()
                            .fold(0.0, |a, b| crate::model::UsageTotals::add_cost(a, *b)),
                    )
                }
                Err(why) => estimate.cost_unknown = Some(why),
            }
        }
        estimate
    }

    /// What a person reads before deciding to run.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let samples: usize = self.datasets.iter().map(|d| d.samples).sum();
        let _ = writeln!(
            out,
            "estimate (no call made): {} dataset(s), {samples} sample(s)",
            self.datasets.len()
        );
        let line = |what: &str, c: &Calls| {
            format!(
                "  {what:<11} {} call(s), ~{} prompt + ~{} completion tokens",
                c.calls, c.prompt_tokens, c.completion_tokens
            )
        };
        let _ = writeln!(out, "{}", line("agent", &self.agent));
        let _ = writeln!(out, "{}", line("judge", &self.judge));
        let _ = writeln!(out, "{}", line("embeddings", &self.embeddings));
        for d in &self.datasets {
            let per: Vec<String> = d
                .metrics
                .iter()
                .map(|m| {
                    let n = (d.samples as u64 * u64::from(d.repeat)).max(1) as f64;
                    let mut s = format!("{} {:.2} judge", m.name, m.judge.calls as f64 / n);
                    if m.embeddings.calls > 0 {
                        let _ = write!(s, " + {:.2} embeddings", m.embeddings.calls as f64 / n);
                    }
                    s
                })
                .collect();
            let _ = writeln!(
                out,
                "  {}: {} sample(s) × {} run(s): agent {} call(s), judge {}, embeddings {}{}",
                d.name,
                d.samples,
                d.repeat,
                d.agent.calls,
                d.judge.calls,
                d.embeddings.calls,
                if per.is_empty() {
                    String::new()
                } else {
                    format!(" (calls per sample run: {})", per.join(", "))
                }
            );
        }
        for (what, model, tokenizer, exact) in &self.tokenizers {
            let model = if model.is_empty() {
                "model not named (EVAL_AGENT_MODEL)"
            } else {
                model
            };
            let _ = writeln!(
                out,
                "  tokens of {what} ({model}): {tokenizer}{}",
                if *exact {
                    ""
                } else {
                    ", an approximation (not a tokenizer this model is known to use)"
                }
            );
        }
        match (&self.cost_usd, &self.cost_unknown) {
            (Some(c), _) => {
                let _ = writeln!(out, "  cost: ~${c:.4} (EVAL_PRICES)");
            }
            (None, Some(why)) => {
                let _ = writeln!(out, "  cost: unknown: {why}");
            }
            (None, None) => {
                let _ = writeln!(out, "  cost: no price table (set EVAL_PRICES)");
            }
        }
        let _ = writeln!(
            out,
            "  assumed: the agent answers each turn with its expected answer (else ~50 tokens) and returns no context of its own; agent prompt tokens are the conversation sent (its own prompt and context are not known: a lower bound); one statement per sentence; no opinions (toxicity/bias: 1 call); no cache hits"
        );
        out
    }
}

/// The answer assumed for `sample` (see the [module docs](self)) and the
/// agent's calls and tokens for one run of it.
fn assumed_answer(sample: &Sample, tokenizer: &Tokenizer) -> (Response, Calls) {
    if sample.retrieval.is_some() {
        return (
            Response::new(""),
            Calls {
                calls: 1,
                ..Calls::default()
            },
        );
    }
    let turns = sample.input.turns();
    let n = turns.len().max(1);
    let answers: Vec<String> = (0..n)
        .map(|t| {
            sample
                .expected_for_turn(t)
                .or_else(|| (t + 1 == n).then(|| sample.expected_text()).flatten())
                .unwrap_or(PLACEHOLDER_ANSWER)
                .to_string()
        })
        .collect();
    let mut calls = Calls::default();
    let mut conversation: Vec<&str> = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        conversation.push(turn);
        calls.calls += 1;
        calls.prompt_tokens += tokenizer.chat(&conversation);
        calls.completion_tokens += tokenizer.count(&answers[t]);
        conversation.push(&answers[t]);
    }
    let mut response = Response::new(answers.last().cloned().unwrap_or_default());
    if n > 1 {
        response = response.with_turn_outputs(answers);
    }
    (response, calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "tokenizer")]
    #[test]
    fn openai_models_have_their_tokenizer_others_an_approximation() {
        let t = Tokenizer::for_model("gpt-4o-mini");
        assert_eq!((t.name, t.exact), ("o200k_base", true));
        let t = Tokenizer::for_model("text-embedding-3-small");
        assert_eq!((t.name, t.exact), ("cl100k_base", true));
        let t = Tokenizer::for_model("llama-3.1-8b");
        assert_eq!((t.name, t.exact), ("o200k_base", false));
        // "hello world" is two tokens in cl100k_base and o200k_base.
        assert_eq!(Tokenizer::for_model("gpt-4").count("hello world"), 2);
        assert_eq!(Tokenizer::for_model("gpt-4o").count("hello world"), 2);
        // Two messages of 2 tokens: 3 + (3 + 1 + 2)·2 = 15.
        assert_eq!(
            Tokenizer::for_model("gpt-4o").chat(&["hello world", "hello world"]),
            15
        );
    }

    #[cfg(not(feature = "tokenizer"))]
    #[test]
    fn without_the_tokenizer_a_token_is_four_characters_and_says_so() {
        let t = Tokenizer::for_model("gpt-4o-mini");
        assert!(
            !t.exact && t.name.contains("`tokenizer` feature"),
            "{}",
            t.name
        );
        assert_eq!(t.count("hello world"), 3, "11 characters");
    }
}
