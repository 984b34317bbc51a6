//! The dry judge and embedder of an estimate (`evals evaluate --estimate`):
//! they answer every question as its asker assumes (`Answer::assumed`),
//! count calls and tokens with the model's tokenizer, and send nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::judge::Answer;
use super::prompt::JudgePrompt;
use crate::model::Usage;

/// The boundary of the dry run's data blocks: fixed, so that an estimate's
/// token counts do not vary; 9 digits, as a judge's are (3 tokens in
/// `o200k_base`, which cuts digits in threes).
const DRY_BOUNDARY: &str = "660918039";

/// Calls and tokens of one service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct Calls {
    /// Calls.
    pub calls: u64,
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
}

impl Calls {
    pub(crate) fn add(&mut self, other: Calls) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }

    pub(crate) fn times(self, n: u64) -> Calls {
        Calls {
            calls: self.calls * n,
            prompt_tokens: self.prompt_tokens * n,
            completion_tokens: self.completion_tokens * n,
        }
    }

    pub(crate) fn usage(self) -> Usage {
        Usage {
            calls: self.calls as u32,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            ..Usage::default()
        }
    }
}

pub(crate) use crate::agent::Tokenizer;

/// The judge and embeddings of an estimate: answers every question as the
/// estimate assumes, counts calls and tokens, sends nothing.
#[derive(Default)]
pub(crate) struct DryRun {
    tally: Mutex<(Calls, Calls)>,
    /// The questions of the sample being estimated: one asked again (the
    /// question context precision and recall share) is sent once in a run.
    asked: Mutex<std::collections::HashSet<String>>,
    tokenizers: Mutex<BTreeMap<String, Arc<Tokenizer>>>,
}

impl std::fmt::Debug for DryRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DryRun")
    }
}

impl DryRun {
    pub(crate) fn tokenizer(&self, model: &str) -> Arc<Tokenizer> {
        let mut map = self.tokenizers.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(model.to_string())
            .or_insert_with(|| Arc::new(Tokenizer::for_model(model)))
            .clone()
    }

    /// The judge and embedding calls `f` makes.
    pub(crate) fn count<R>(&self, f: impl FnOnce() -> R) -> (Calls, Calls) {
        *self.tally.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
        let _ = f();
        *self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next questions are another sample's.
    pub(crate) fn next_sample(&self) {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Answers a judge's question `prompt` with what the asker assumes
    /// ([`Answer::assumed`]); its tokens are those of the prompt rendered
    /// (with a fixed boundary, so that estimates do not vary).
    pub(crate) fn judge(
        &self,
        model: &str,
        prompt: &JudgePrompt,
        answer: &dyn Answer,
        usage: &mut Usage,
    ) -> Value {
        let answer = answer.assumed(prompt);
        let first = self
            .asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(prompt.cache_text());
        if !first {
            // The sample's metrics ask it at once: the run sends it once.
            usage.count_cache_hits(1);
            return answer;
        }
        let tokenizer = self.tokenizer(model);
        let (system, user) = match prompt.render_with(DRY_BOUNDARY) {
            Ok(r) => (r.system, r.user),
            Err(_) => Default::default(),
        };
        let calls = Calls {
            calls: 1,
            prompt_tokens: tokenizer.chat(&[&system, &user]),
            completion_tokens: tokenizer.count(&answer.to_string()),
        };
        usage.calls += 1;
        usage.prompt_tokens += calls.prompt_tokens;
        usage.completion_tokens += calls.completion_tokens;
        self.tally
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .add(calls);
        answer
    }

    /// Vectors for `texts` (all alike), counting one request and its tokens.
    pub(crate) fn embed(&self, model: &str, texts: &[&str], usage: &mut Usage) -> Vec<Vec<f64>> {
        let tokenizer = self.tokenizer(model);
        let calls = Calls {
            calls: 1,
            prompt_tokens: texts.iter().map(|t| tokenizer.count(t)).sum(),
            completion_tokens: 0,
        };
        usage.calls += 1;
        usage.prompt_tokens += calls.prompt_tokens;
        self.tally
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .add(calls);
        texts.iter().map(|_| vec![1.0, 0.0]).collect()
    }
}
