//! The dry judge and embedder of an estimate (`evals evaluate --estimate`):
//! they answer every question as the estimate assumes, count calls and
//! tokens with the model's tokenizer, and send nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::prompt::JudgePrompt;
use crate::model::{Usage, sentences};

/// A reason a dry judge's answer gives (about 8 tokens).
const REASON: &str = "The context states this directly.";

/// The boundary of the dry run's data blocks: fixed, so that an estimate's
/// token counts do not vary, and one that `o200k_base` cuts into as many
/// tokens as the mean random boundary (in a block's markers, over 2,000
/// drawn from the OS).
const DRY_BOUNDARY: &str = "fe800d6569fa1b4d";

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
    /// The input of the sample being scored: the judge's questions
    /// (`answer_relevancy`) are assumed to be as long.
    input: Mutex<String>,
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

    pub(crate) fn set_input(&self, input: &str) {
        *self.input.lock().unwrap_or_else(|p| p.into_inner()) = input.to_string();
    }

    /// The judge and embedding calls `f` makes.
    pub(crate) fn count<R>(&self, f: impl FnOnce() -> R) -> (Calls, Calls) {
        *self.tally.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
        let _ = f();
        *self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers a judge's question `prompt` with a JSON object of the shape
    /// `check` accepts, as the estimate assumes (see the [module
    /// docs](self)); its tokens are those of the prompt rendered (with a
    /// fixed boundary, so that estimates do not vary).
    pub(crate) fn judge(
        &self,
        model: &str,
        prompt: &JudgePrompt,
        check: &(dyn Fn(&Value) -> Result<(), String> + Sync),
        usage: &mut Usage,
    ) -> Value {
        let input = self.input.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let answer = dry_answer(prompt, &input, check);
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

/// The dry judge's answer to `prompt`: the shape the metric reads, sized
/// as the estimate assumes (the answer's sentences as its statements, the
/// expected answer's as the reference's), and accepted by `check` (when
/// none of the shapes is, `{}`: the metric then fails as it would on such
/// an answer).
fn dry_answer(
    prompt: &JudgePrompt,
    input: &str,
    check: &(dyn Fn(&Value) -> Result<(), String> + Sync),
) -> Value {
    let id = prompt.task();
    let answer = prompt
        .get("answer")
        .or_else(|| prompt.get("submission"))
        .unwrap_or("");
    let answer_sentences = sentences(answer);
    let reference = sentences(prompt.get("expected_answer").unwrap_or(""));
    let flag = if id.starts_with("hallucination") {
        json!("yes")
    } else if id.ends_with("/verdicts") && !id.starts_with("faithfulness") {
        json!("no")
    } else {
        json!(1)
    };
    let list = |key: &str, n: usize| -> Value {
        let items: Vec<Value> = match key {
            "statements" => answer_sentences
                .iter()
                .take(n)
                .map(|s| json!(s))
                .chain(std::iter::repeat_n(
                    json!("A statement of the answer."),
                    n.saturating_sub(answer_sentences.len()),
                ))
                .collect(),
            "questions" => (0..n).map(|_| json!(input)).collect(),
            "opinions" => (0..n).map(|_| json!("x")).collect(),
            _ => std::iter::repeat_n(flag.clone(), n).collect(),
        };
        let mut v = json!({ key: items });
        if key == "questions" {
            v["noncommittal"] = json!(0);
        }
        v
    };
    // What each question is first assumed to hold.
    let (key, preferred) = if id.ends_with("statements") {
        ("statements", answer_sentences.len().max(1))
    } else if id.ends_with("opinions") {
        ("opinions", 0)
    } else if id.starts_with("answer_relevancy") {
        ("questions", 3)
    } else if id.starts_with("context_recall") {
        ("classifications", reference.len().max(1))
    } else {
        ("verdicts", 1)
    };
    let mut candidates = vec![list(key, preferred)];
    candidates.push(json!({"score": 1, "rationale": REASON}));
    candidates.push(json!({"rating": 5, "reason": REASON}));
    if let Some(found) = candidates.iter().find(|c| check(c).is_ok()) {
        return found.clone();
    }
    // A list whose length the metric checks (one verdict per statement,
    // chunk, context or opinion): the first length it accepts.
    for key in [
        "verdicts",
        "classifications",
        "statements",
        "opinions",
        "questions",
    ] {
        for n in 0..=512 {
            let v = list(key, n);
            if check(&v).is_ok() {
                return v;
            }
        }
    }
    json!({})
}
