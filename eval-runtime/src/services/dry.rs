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

/// A tokenizer: the model's own, or `o200k_base` as an approximation (a
/// character count over 4 without the `tokenizer` feature).
pub(crate) struct Tokenizer {
    #[cfg(feature = "tokenizer")]
    bpe: Option<&'static tiktoken_rs::CoreBPE>,
    pub(crate) name: &'static str,
    pub(crate) exact: bool,
}

impl Tokenizer {
    #[cfg(feature = "tokenizer")]
    pub(crate) fn for_model(model: &str) -> Tokenizer {
        use tiktoken_rs::tokenizer::Tokenizer as T;
        let (kind, exact) = match tiktoken_rs::tokenizer::get_tokenizer(model) {
            Some(kind) => (kind, true),
            None => (T::O200kBase, false),
        };
        let name = match kind {
            T::O200kBase => "o200k_base",
            T::O200kHarmony => "o200k_harmony",
            T::Cl100kBase => "cl100k_base",
            T::P50kBase => "p50k_base",
            T::P50kEdit => "p50k_edit",
            _ => "r50k_base",
        };
        Tokenizer {
            bpe: tiktoken_rs::bpe_for_tokenizer(kind).ok(),
            name,
            exact,
        }
    }

    /// Without the `tokenizer` feature: a token per four characters.
    #[cfg(not(feature = "tokenizer"))]
    pub(crate) fn for_model(_model: &str) -> Tokenizer {
        Tokenizer {
            name: "4 characters per token (built without the `tokenizer` feature)",
            exact: false,
        }
    }

    /// Tokens of `text` (a character count over 4 if the tables failed to
    /// load, or without the `tokenizer` feature).
    pub(crate) fn count(&self, text: &str) -> u64 {
        #[cfg(feature = "tokenizer")]
        if let Some(bpe) = self.bpe {
            return bpe.encode_ordinary(text).len() as u64;
        }
        (text.chars().count() as u64).div_ceil(4)
    }

    /// Prompt tokens of a chat whose messages are `contents`, as OpenAI's
    /// cookbook ("How to count tokens with tiktoken") counts them: 3 per
    /// message plus its role and content, and 3 priming the answer.
    pub(crate) fn chat(&self, contents: &[&str]) -> u64 {
        3 + contents.iter().map(|c| 3 + 1 + self.count(c)).sum::<u64>()
    }
}

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
