//! The generation prompts, one per query type, in our own words.
//!
//! Every prompt tells the judge model the difficulty asked for and shows it,
//! as data blocks (the corpus is content, never instructions: see
//! [`JudgePrompt`]), the passages a question is to be written from
//! (`passage_1`, ... with their documents' names in `source_1`, ...) and
//! the questions already written from the same passages (`written`, one
//! per line: a second question from a passage is a different one), and asks for
//! exactly one JSON object `{"query": ..., "ground_truth": ...}`.
//!
//! The methods followed (described, not copied):
//!
//! * **ragas' knowledge-graph test set generation** (`TestsetGenerator`):
//!   documents become nodes of a graph linked by shared entities and
//!   keyphrases; *query synthesizers* then write a question from a scenario
//!   of one node or of linked nodes. Its *single-hop specific* synthesizer
//!   asks about one concrete fact of one node — our `factual`; its
//!   *multi-hop specific* synthesizer asks a concrete question that needs
//!   two linked nodes — our `multi_hop` (passages from different documents
//!   that share content words, see [`super::Chunk::shared`]); its *multi-hop
//!   abstract* synthesizer asks for an interpretation or summary of a theme
//!   several nodes share — our `analytical`. Seed 002's `procedural`
//!   type and its `temporal` and `contradictory` edge cases have no ragas
//!   synthesizer; their prompts follow the same shape.
//! * **deepeval's `Synthesizer`** writes a plain question from contexts and
//!   then *evolves* it (reasoning, multi-context, concretizing, constrained,
//!   comparative, hypothetical, in-breadth) to make it harder: our `hard`
//!   difficulty asks for such a step, `medium` for a paraphrase, `easy` for
//!   a direct lookup.
//! * The edge cases are seed 002's categories (ambiguous, unanswerable,
//!   out-of-scope queries): their ground truth is the behaviour expected of
//!   the assistant, as the seed's annotation step asks.

use serde_json::Value;

use super::corpus::Chunk;
use super::{Difficulty, QueryType};
use eval_runtime::services::JudgePrompt;

/// Version of the prompts, part of the judge cache's key: a changed prompt
/// never reuses an old answer.
pub const PROMPT_VERSION: u32 = 3;

/// The cache and `TASK` name of a query type's prompt.
pub(crate) fn task(kind: QueryType) -> String {
    format!("generate/{}", kind.name())
}

const REPLY: &str = "Reply with JSON only, exactly this object: {\"query\": \"the question\", \"ground_truth\": \"the reference answer\"}. The question is one sentence a real user could type, without mentioning \"the passage\" or \"the document\". The reference answer is written in full sentences.";

fn instructions(kind: QueryType) -> &'static str {
    match kind {
        QueryType::Factual => {
            "Write one factual question (who, what, when, where) about a specific fact stated in passage 1, one that passage 1 alone answers. The reference answer gives that fact completely, in one or two sentences, using only what the passage says."
        }
        QueryType::Analytical => {
            "Write one analytical question (how, why, or a comparison) that asks to explain or compare what these passages share: not the lookup of a single fact. The reference answer is an explanation of two to four sentences drawn only from the passages."
        }
        QueryType::Procedural => {
            "Write one procedural question (how to, the steps to) about a task passage 1 describes how to do. The reference answer gives the steps in order, as passage 1 states them, using only what it says."
        }
        QueryType::MultiHop => {
            "The passages come from different documents that share a subject. Write one question whose answer needs facts from passage 1 AND passage 2: neither passage alone is enough. The reference answer combines the facts of both passages, using only what they say."
        }
        QueryType::Ambiguous => {
            "Write one question a user might ask that these passages leave ambiguous: it has at least two reasonable readings (a term used in more than one sense, a missing qualifier such as which system or which step). The reference answer says the question is ambiguous, names the readings and what the passages say for each: the right behaviour is to ask which one is meant, or to answer each."
        }
        QueryType::Temporal => {
            "Write one question whose answer depends on a time, date or version that passage 1 states (since when, until when, in which version, what is current). The reference answer gives the answer together with the time or version it holds for, as passage 1 says it."
        }
        QueryType::Contradictory => {
            "The passages come from different documents. Write one question on a point where they give different information (a different number, date, limit or rule for the same thing). The reference answer states what each passage says, says that they disagree, and that a faithful assistant should point out the conflict rather than pick one silently. If the passages do not disagree anywhere, write a question whose answer needs both and say in the reference answer which passage states what."
        }
        QueryType::Unanswerable => {
            "Write one question on the subject of these passages that they do NOT answer (a number, date, name or detail they never give), so a faithful assistant must say it cannot find the answer. The reference answer says the documents do not contain the answer, and states what they do say on the subject."
        }
        QueryType::OutOfScope => {
            "The passages show the domain of a document collection. Write one question a user might ask that lies entirely outside that domain. The reference answer says the question is outside what the assistant's documents cover and that it should decline rather than invent an answer."
        }
    }
}

fn difficulty_text(difficulty: Difficulty) -> &'static str {
    match difficulty {
        Difficulty::Easy => {
            "easy: a direct lookup; the question may use the passages' own words and the answer is stated plainly."
        }
        Difficulty::Medium => {
            "medium: the question paraphrases the passages instead of quoting them, and the answer takes a sentence or two of them."
        }
        Difficulty::Hard => {
            "hard: evolve the question one step further: it needs reasoning over several statements, a comparison, a constraint or a hypothetical case, and uses none of the passages' key phrases verbatim."
        }
    }
}

/// The prompt for one question of `kind` at `difficulty` from `passages`,
/// avoiding the questions in `avoid`.
pub(crate) fn prompt(
    kind: QueryType,
    difficulty: Difficulty,
    passages: &[&Chunk],
    avoid: &[String],
) -> JudgePrompt {
    let mut prompt = JudgePrompt::new(
        &task(kind),
        PROMPT_VERSION,
        format!(
            "You write test questions for evaluating a retrieval-augmented assistant that answers from a document collection. The passages are in data blocks \"passage_1\" to \"passage_{n}\", the name of each one's document in \"source_1\" to \"source_{n}\"{avoid}. {} Difficulty: {} {REPLY}",
            instructions(kind),
            difficulty_text(difficulty),
            n = passages.len(),
            avoid = if avoid.is_empty() {
                String::new()
            } else {
                "; questions already written from them are in data block \"written\", one per line: write a different one".to_string()
            },
        ),
    );
    for (i, chunk) in passages.iter().enumerate() {
        prompt.push(&format!("passage_{}", i + 1), one_line(&chunk.text));
        prompt.push(&format!("source_{}", i + 1), chunk.doc.as_str());
    }
    if !avoid.is_empty() {
        let written: Vec<String> = avoid.iter().map(|q| one_line(q)).collect();
        prompt.push("written", written.join("\n"));
    }
    prompt
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Longest generated question, in characters.
const MAX_QUERY_CHARS: usize = 1000;

/// Why a judge's answer is not a generated question and answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum AnswerError {
    /// The answer is not a JSON object.
    #[error("not a JSON object")]
    NotObject,
    /// A key other than `query` and `ground_truth`.
    #[error("unexpected key `{key}`: the answer holds exactly `query`, `ground_truth`")]
    UnexpectedKey {
        /// The key.
        key: String,
    },
    /// `query` or `ground_truth` is missing.
    #[error("no `{key}`")]
    Missing {
        /// `query` or `ground_truth`.
        key: &'static str,
    },
    /// `query` or `ground_truth` is blank.
    #[error("`{key}` is empty")]
    Empty {
        /// `query` or `ground_truth`.
        key: &'static str,
    },
    /// `query` or `ground_truth` is not a string.
    #[error("`{key}` is not a string: {found}")]
    NotString {
        /// `query` or `ground_truth`.
        key: &'static str,
        /// The value, as JSON.
        found: String,
    },
    /// The question is too long to be one question.
    #[error("`query` is over {limit} characters: one question is asked for")]
    TooLong {
        /// The limit, in characters.
        limit: usize,
    },
}

/// The generated question and answer, or why the judge's answer is not one
/// (it is then re-asked, see [`eval_runtime::services::Judge::ask_checked`]).
pub(crate) fn parse(answer: &Value) -> Result<(String, String), AnswerError> {
    let text = |key: &'static str| -> Result<String, AnswerError> {
        match answer.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(one_line(s)),
            Some(Value::String(_)) => Err(AnswerError::Empty { key }),
            Some(other) => Err(AnswerError::NotString {
                key,
                found: other.to_string(),
            }),
            None => Err(AnswerError::Missing { key }),
        }
    };
    let Value::Object(map) = answer else {
        return Err(AnswerError::NotObject);
    };
    if let Some(extra) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "query" | "ground_truth"))
    {
        return Err(AnswerError::UnexpectedKey { key: extra.clone() });
    }
    let query = text("query")?;
    let truth = text("ground_truth")?;
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(AnswerError::TooLong {
            limit: MAX_QUERY_CHARS,
        });
    }
    Ok((query, truth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompts_show_the_passages_one_per_line_and_the_shape_asked_for() {
        let corpus = super::super::corpus::Corpus::from_documents(
            "t",
            &[
                ("a.md".into(), "Alpha beta gamma\ndelta epsilon.".into()),
                ("b.md".into(), "Zeta eta theta iota kappa.".into()),
            ],
            100,
        )
        .unwrap();
        let passages: Vec<&Chunk> = corpus.chunks.iter().collect();
        let p = prompt(
            QueryType::MultiHop,
            Difficulty::Hard,
            &passages,
            &["What is\nalpha?".into()],
        );
        assert_eq!(p.task(), "generate/multi_hop");
        assert!(p.instructions().contains("{\"query\""));
        assert!(p.instructions().contains("Difficulty: hard"));
        assert!(p.instructions().contains("\"written\""));
        // The corpus and the questions written are data blocks only.
        assert!(!p.instructions().contains("Alpha"));
        assert_eq!(p.get("passage_1"), Some("Alpha beta gamma delta epsilon."));
        assert_eq!(p.get("source_1"), Some("a.md"));
        assert_eq!(p.get("source_2"), Some("b.md"));
        assert_eq!(p.get("written"), Some("What is alpha?"));
        assert_eq!(
            parse(&json!({"query": " Why\nso? ", "ground_truth": "Because."})).unwrap(),
            ("Why so?".to_string(), "Because.".to_string())
        );
        assert_eq!(
            parse(&json!({"query": "x"})).unwrap_err().to_string(),
            "no `ground_truth`"
        );
        assert!(parse(&json!({"query": 3, "ground_truth": "y"})).is_err());
        assert_eq!(
            parse(&json!({"query": "q", "ground_truth": "y", "score": 1}))
                .unwrap_err()
                .to_string(),
            "unexpected key `score`: the answer holds exactly `query`, `ground_truth`"
        );
    }
}
