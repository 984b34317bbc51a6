//! Answers to questions someone already has, from a corpus: the passages
//! that best match each question (BM25 over the corpus's chunks), then the
//! answer extracted from them or written from them by the judge (seed
//! 002's "document-based" and "LLM-assisted" ground truth, `evals create`'s
//! strategies 3 and 4).
//!
//! * [`Index`] ranks the chunks of a [`Corpus`] for a question with Okapi
//!   BM25 (`k1` 1.2, `b` 0.75) over lower-case words (a plural `s`
//!   dropped, common words left out); a chunk sharing no word scores 0 and
//!   is never returned.
//! * [`Index::extract`]: without a judge, the passages' sentence that
//!   holds the most of the question's words (weighted by their rarity in
//!   the corpus), with the next sentence when it is a short one: an answer
//!   quoted word for word.
//! * [`answer`] asks the judge, the passages in data blocks: in
//!   [`AnswerMode::Document`] for `{"answer", "quote"}`, the quote copied
//!   word for word from a passage (checked: an answer whose quote is in no
//!   passage is asked again, see [`Judge::ask_checked`]); in
//!   [`AnswerMode::Llm`] for `{"answer"}` written from the passages only.
//!   An empty answer means the passages do not answer the question.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::GenerateError;
use super::corpus::{Chunk, Corpus};
use eval_runtime::__cli::sentences;
use eval_runtime::__cli::services::Answer;
use eval_runtime::services::{Judge, JudgePrompt, ServiceError, Usage};

/// Version of the answering prompts (part of the judge's cache key).
pub const ANSWER_PROMPT_VERSION: u32 = 1;

/// Longest answer kept, in characters.
const MAX_ANSWER_CHARS: usize = 4000;

const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOP: &[&str] = &[
    "a", "about", "after", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "being", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "many",
    "may", "me", "might", "much", "must", "my", "no", "not", "of", "on", "or", "our", "she",
    "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "would", "you", "your",
];

/// The words BM25 counts: lower case, letters and digits, a plural `s`
/// dropped, common words left out.
fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') => stem.to_string(),
            _ => w,
        })
        .collect()
}

/// A BM25 index of a corpus's chunks.
#[derive(Debug)]
pub struct Index<'a> {
    corpus: &'a Corpus,
    /// Per chunk: its term counts and its length in terms.
    chunks: Vec<(HashMap<String, u32>, usize)>,
    /// Chunks holding each term.
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl<'a> Index<'a> {
    /// Indexes every chunk of `corpus`.
    pub fn new(corpus: &'a Corpus) -> Index<'a> {
        let mut df: HashMap<String, u32> = HashMap::new();
        let mut chunks = Vec::with_capacity(corpus.chunks.len());
        let mut total = 0usize;
        for c in &corpus.chunks {
            let ts = terms(&c.text);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in &ts {
                *tf.entry(t.clone()).or_insert(0) += 1;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_insert(0) += 1;
            }
            total += ts.len();
            chunks.push((tf, ts.len()));
        }
        let avg_len = if chunks.is_empty() {
            1.0
        } else {
            (total as f64 / chunks.len() as f64).max(1.0)
        };
        Index {
            corpus,
            chunks,
            df,
            avg_len,
        }
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.chunks.len() as f64;
        let df = f64::from(self.df.get(term).copied().unwrap_or(0));
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The `k` chunks that best match `query`, best first, with their
    /// scores; chunks sharing no word with it are left out (ties in corpus
    /// order).
    pub fn top(&self, query: &str, k: usize) -> Vec<(&'a Chunk, f64)> {
        let mut q = terms(query);
        q.sort();
        q.dedup();
        let mut scored: Vec<(usize, f64)> = self
            .chunks
            .iter()
            .enumerate()
            .map(|(i, (tf, len))| {
                let norm = K1 * (1.0 - B + B * *len as f64 / self.avg_len);
                let s = q
                    .iter()
                    .filter_map(|t| tf.get(t).map(|&f| (t, f64::from(f))))
                    .map(|(t, f)| self.idf(t) * f * (K1 + 1.0) / (f + norm))
                    .sum::<f64>();
                (i, s)
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
            .into_iter()
            .take(k)
            .map(|(i, s)| (&self.corpus.chunks[i], s))
            .collect()
    }

    /// The sentence of `passages` holding most of `query`'s words (each
    /// weighted by its rarity), with the next one when it has fewer than 8
    /// words; `None` when no sentence shares a word with the query.
    pub fn extract(&self, query: &str, passages: &[&Chunk]) -> Option<String> {
        let mut q = terms(query);
        q.sort();
        q.dedup();
        let mut best: Option<(f64, Vec<String>, usize)> = None;
        for p in passages {
            let ss = sentences(&p.text);
            for (i, s) in ss.iter().enumerate() {
                let have = terms(s);
                let score: f64 = q
                    .iter()
                    .filter(|t| have.contains(t))
                    .map(|t| self.idf(t))
                    .sum();
                if score > 0.0 && best.as_ref().is_none_or(|(b, _, _)| score > *b) {
                    best = Some((score, ss.clone(), i));
                }
            }
        }
        let (_, ss, i) = best?;
        let mut out = flat(&ss[i]);
        if out.split_whitespace().count() < 8
            && let Some(next) = ss.get(i + 1)
        {
            out = format!("{out} {}", flat(next));
        }
        Some(out)
    }
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How the judge answers: extracting (quoting a passage) or writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerMode {
    /// The answer extracted from the passages, grounded in a quote copied
    /// from one of them (seed 002's "document-based").
    Document,
    /// The answer written by the judge from the passages (seed 002's
    /// "LLM-assisted").
    Llm,
}

/// The judge's answer to one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The answer; `None` when the passages do not answer the question.
    pub answer: Option<String>,
    /// [`AnswerMode::Document`]: the passage text the answer rests on.
    pub quote: Option<String>,
}

/// What an answer must be: the keys asked for, strings, a quote found in a
/// passage.
struct Shape {
    mode: AnswerMode,
    /// The passages, whitespace flattened and lower case.
    passages: Vec<String>,
}

impl Shape {
    fn keys(&self) -> &'static [&'static str] {
        match self.mode {
            AnswerMode::Document => &["answer", "quote"],
            AnswerMode::Llm => &["answer"],
        }
    }
}

impl Answer for Shape {
    fn check(&self, v: &Value) -> Result<(), String> {
        let Value::Object(map) = v else {
            return Err("not a JSON object".into());
        };
        let keys = self.keys();
        if let Some(k) = map.keys().find(|k| !keys.contains(&k.as_str())) {
            return Err(format!(
                "unexpected key `{k}`: the answer holds exactly {}",
                keys.join(", ")
            ));
        }
        for k in keys {
            match map.get(*k) {
                Some(Value::String(_)) => {}
                Some(other) => return Err(format!("`{k}` is not a string: {other}")),
                None => return Err(format!("no `{k}`")),
            }
        }
        let answer = map.get("answer").and_then(Value::as_str).unwrap_or("");
        if answer.chars().count() > MAX_ANSWER_CHARS {
            return Err(format!("`answer` is over {MAX_ANSWER_CHARS} characters"));
        }
        if self.mode == AnswerMode::Document && !answer.trim().is_empty() {
            let quote = flat(map.get("quote").and_then(Value::as_str).unwrap_or("")).to_lowercase();
            if quote.is_empty() {
                return Err("`quote` is empty: copy the passage text the answer rests on".into());
            }
            if !self.passages.iter().any(|p| p.contains(&quote)) {
                return Err(
                    "`quote` is in no passage: copy it word for word from one passage".into(),
                );
            }
        }
        Ok(())
    }

    fn assumed(&self, _prompt: &JudgePrompt) -> Value {
        match self.mode {
            AnswerMode::Document => json!({"answer": "", "quote": ""}),
            AnswerMode::Llm => json!({"answer": ""}),
        }
    }

    fn schema(&self) -> Option<Value> {
        let keys = self.keys();
        let properties: serde_json::Map<String, Value> = keys
            .iter()
            .map(|k| (k.to_string(), json!({"type": "string"})))
            .collect();
        Some(json!({"type": "object", "properties": properties,
                    "required": keys, "additionalProperties": false}))
    }

    fn max_tokens(&self) -> Option<u32> {
        Some(768)
    }
}

/// The question to the judge for `query` from `passages`.
pub(crate) fn prompt(mode: AnswerMode, query: &str, passages: &[&Chunk]) -> JudgePrompt {
    let n = passages.len();
    let (task, instructions) = match mode {
        AnswerMode::Document => (
            "answer/document",
            format!(
                "You extract the reference answer to a question from document passages, for an evaluation dataset. The question is in data block \"question\"; the passages in data blocks \"passage_1\" to \"passage_{n}\", the name of each one's document in \"source_1\" to \"source_{n}\". Use only what the passages say. Reply with one JSON object {{\"answer\": \"...\", \"quote\": \"...\"}}: \"quote\" is the sentence or sentences that state the answer, copied word for word from one passage; \"answer\" answers the question in one or two sentences, saying only what the quote says. When the passages do not answer the question, reply {{\"answer\": \"\", \"quote\": \"\"}}."
            ),
        ),
        AnswerMode::Llm => (
            "answer/llm",
            format!(
                "You write the reference answer to a question for an evaluation dataset, from document passages. The question is in data block \"question\"; the passages in data blocks \"passage_1\" to \"passage_{n}\", the name of each one's document in \"source_1\" to \"source_{n}\". Write a complete, correct answer in one to three sentences using only what the passages say. Reply with one JSON object {{\"answer\": \"...\"}}. When the passages do not answer the question, reply {{\"answer\": \"\"}}."
            ),
        ),
    };
    let mut p =
        JudgePrompt::new(task, ANSWER_PROMPT_VERSION, instructions).block("question", flat(query));
    for (i, c) in passages.iter().enumerate() {
        p.push(&format!("passage_{}", i + 1), flat(&c.text));
        p.push(&format!("source_{}", i + 1), c.doc.as_str());
    }
    p
}

/// The judge's answer to `query` from `passages` (no passage: not
/// answered, nothing asked).
pub async fn answer(
    judge: &Judge,
    mode: AnswerMode,
    query: &str,
    passages: &[&Chunk],
    usage: &mut Usage,
) -> Result<Answered, ServiceError> {
    if passages.is_empty() {
        return Ok(Answered {
            answer: None,
            quote: None,
        });
    }
    let shape = Shape {
        mode,
        passages: passages
            .iter()
            .map(|c| flat(&c.text).to_lowercase())
            .collect(),
    };
    let v = judge
        .ask_checked(&prompt(mode, query, passages), usage, &shape)
        .await?;
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .map(flat)
            .filter(|s| !s.is_empty())
    };
    let answer = text("answer");
    Ok(Answered {
        quote: answer.as_ref().and_then(|_| text("quote")),
        answer,
    })
}

/// [`answer`] for each `(query, passages)` in turn, on a runtime of its
/// own (the calling thread must not be inside one); `each` sees every
/// result as it comes, and answering stops at the first error it returns.
pub fn answer_blocking<E>(
    judge: &Judge,
    mode: AnswerMode,
    items: &[(String, Vec<&Chunk>)],
    usage: &mut Usage,
    each: &mut dyn FnMut(usize, Result<Answered, ServiceError>) -> Result<(), E>,
) -> Result<Result<(), E>, GenerateError> {
    let runtime = eval_runtime::__cli::local_runtime().map_err(GenerateError::Runtime)?;
    Ok(runtime.block_on(async {
        for (i, (query, passages)) in items.iter().enumerate() {
            let got = answer(judge, mode, query, passages, usage).await;
            each(i, got)?;
        }
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        Corpus::from_documents(
            "test",
            &[
                (
                    "policy.md".into(),
                    "Items can be returned within 30 days of purchase for a full refund. Clearance items are final sale.".into(),
                ),
                (
                    "upload.md".into(),
                    "File uploads are limited to 100MB per file for standard accounts. Enterprise accounts can upload files up to 500MB.".into(),
                ),
                (
                    "other.md".into(),
                    "The office is open from nine to five on weekdays and closed on public holidays.".into(),
                ),
            ],
            200,
        )
        .unwrap()
    }

    #[test]
    fn bm25_ranks_the_passage_that_shares_the_rare_words_first() {
        let c = corpus();
        let index = Index::new(&c);
        let top = index.top("What is the maximum file upload size?", 2);
        assert_eq!(top[0].0.doc, "upload.md");
        assert!(
            top.iter().all(|(ch, _)| ch.doc != "other.md"),
            "a chunk sharing no word is never returned"
        );
        let top = index.top("How many days do I have to return items?", 3);
        assert_eq!(top[0].0.doc, "policy.md");
        assert!(index.top("zebra quantum", 3).is_empty());
    }

    #[test]
    fn extraction_quotes_the_best_sentence() {
        let c = corpus();
        let index = Index::new(&c);
        let top: Vec<&Chunk> = index
            .top("Can enterprise accounts upload larger files?", 2)
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let got = index
            .extract("Can enterprise accounts upload larger files?", &top)
            .unwrap();
        assert_eq!(got, "Enterprise accounts can upload files up to 500MB.");
        assert!(index.extract("zebra", &top).is_none());
    }

    #[test]
    fn a_document_answer_must_quote_a_passage() {
        let shape = Shape {
            mode: AnswerMode::Document,
            passages: vec!["items can be returned within 30 days.".into()],
        };
        assert!(shape
            .check(&json!({"answer": "30 days.", "quote": "Items can be  returned within 30 days."}))
            .is_ok());
        let e = shape
            .check(&json!({"answer": "60 days.", "quote": "Returns take 60 days."}))
            .unwrap_err();
        assert!(e.contains("in no passage"), "{e}");
        assert!(shape.check(&json!({"answer": "", "quote": ""})).is_ok());
        assert!(shape.check(&json!({"answer": "x"})).is_err());
        let llm = Shape {
            mode: AnswerMode::Llm,
            passages: vec![],
        };
        assert!(llm.check(&json!({"answer": "x", "quote": "y"})).is_err());
        assert!(llm.check(&json!({"answer": "x"})).is_ok());
    }
}
