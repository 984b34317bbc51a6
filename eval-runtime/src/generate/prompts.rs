//! The generation prompts, one per query type, in our own words.
//!
//! Every prompt shows the judge model the passages a question is to be
//! written from (numbered `[1] (source: doc) text`, one per line), the
//! difficulty asked for, and questions already written from the same
//! passages (so a second question from a passage is a different one), and
//! asks for one JSON object `{"query": ..., "ground_truth": ...}`.
//!
//! The methods followed (described, not copied):
//!
//! * **ragas' knowledge-graph test set generation** (`TestsetGenerator`):
//!   documents become nodes of a graph linked by shared entities and
//!   keyphrases; *query synthesizers* then write a question from a scenario
//!   of one node or of linked nodes. Its *single-hop specific* synthesizer
//!   asks about one concrete fact of one node — our `single_hop`; its
//!   *multi-hop specific* synthesizer asks a concrete question that needs
//!   two linked nodes — our `multi_hop` (passages from different documents
//!   that share content words, see [`super::Chunk::shared`]); its *multi-hop
//!   abstract* synthesizer asks for an interpretation or summary of a theme
//!   several nodes share — our `abstract`.
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

/// Version of the prompts, part of the judge cache's key: a changed prompt
/// never reuses an old answer.
pub const PROMPT_VERSION: u32 = 1;

/// The cache and `TASK` name of a query type's prompt.
pub fn task(kind: QueryType) -> String {
    format!("generate/{}", kind.name())
}

const REPLY: &str = "Reply with only a JSON object: {\"query\": \"the question\", \"ground_truth\": \"the reference answer\"}. The question is one sentence a real user could type, without mentioning \"the passage\" or \"the document\". The reference answer is written in full sentences.";

fn instructions(kind: QueryType) -> &'static str {
    match kind {
        QueryType::SingleHop => {
            "Write one question about a specific fact stated in passage [1], one that passage [1] alone answers. The reference answer gives that fact completely, in one or two sentences, using only what the passage says."
        }
        QueryType::MultiHop => {
            "The passages come from different documents that share a subject. Write one question whose answer needs facts from passage [1] AND passage [2]: neither passage alone is enough. The reference answer combines the facts of both passages, using only what they say."
        }
        QueryType::Abstract => {
            "Write one question that asks to explain, compare or summarise the theme these passages share: an abstract question, not the lookup of a single fact. The reference answer is a summary of two to four sentences drawn only from the passages."
        }
        QueryType::Ambiguous => {
            "Write one question a user might ask that these passages leave ambiguous: it has at least two reasonable readings (a term used in more than one sense, a missing qualifier such as which system or which step). The reference answer says the question is ambiguous, names the readings and what the passages say for each: the right behaviour is to ask which one is meant, or to answer each."
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

/// The `(system, user)` prompt for one question of `kind` at `difficulty`
/// from `passages`, avoiding the questions in `avoid`.
pub fn prompt(
    kind: QueryType,
    difficulty: Difficulty,
    passages: &[&Chunk],
    avoid: &[String],
) -> (String, String) {
    let system = format!(
        "TASK {}. You write test questions for evaluating a retrieval-augmented assistant that answers from a document collection. {} {REPLY}",
        task(kind),
        instructions(kind),
    );
    let mut user = format!("Difficulty: {}\n\nPassages:\n", difficulty_text(difficulty));
    for (i, chunk) in passages.iter().enumerate() {
        let text = chunk.text.split_whitespace().collect::<Vec<_>>().join(" ");
        user.push_str(&format!("[{}] (source: {}) {text}\n", i + 1, chunk.doc));
    }
    if !avoid.is_empty() {
        user.push_str("\nQuestions already written (write a different one):\n");
        for q in avoid {
            user.push_str(&format!("- {}\n", one_line(q)));
        }
    }
    (system, user)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The generated question and answer, or why the judge's answer is not one
/// (it is then re-asked, see [`crate::services::Judge::ask_checked`]).
pub fn parse(answer: &Value) -> Result<(String, String), String> {
    let text = |key: &str| -> Result<String, String> {
        match answer.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(one_line(s)),
            Some(Value::String(_)) => Err(format!("`{key}` is empty")),
            Some(other) => Err(format!("`{key}` is not a string: {other}")),
            None => Err(format!("no `{key}`")),
        }
    };
    let query = text("query")?;
    let truth = text("ground_truth")?;
    if query.chars().count() > 1000 {
        return Err("`query` is over 1000 characters: one question is asked for".into());
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
        let (system, user) = prompt(
            QueryType::MultiHop,
            Difficulty::Hard,
            &passages,
            &["What is alpha?".into()],
        );
        assert!(system.starts_with("TASK generate/multi_hop. "), "{system}");
        assert!(system.contains("{\"query\""));
        assert!(user.contains("[1] (source: a.md) Alpha beta gamma delta epsilon.\n"));
        assert!(user.contains("[2] (source: b.md) Zeta"));
        assert!(user.contains("Difficulty: hard"));
        assert!(user.contains("- What is alpha?\n"));
        assert_eq!(
            parse(&json!({"query": " Why\nso? ", "ground_truth": "Because."})).unwrap(),
            ("Why so?".to_string(), "Because.".to_string())
        );
        assert_eq!(
            parse(&json!({"query": "x"})).unwrap_err(),
            "no `ground_truth`"
        );
        assert!(parse(&json!({"query": 3, "ground_truth": "y"})).is_err());
    }
}
