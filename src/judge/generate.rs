//! The test set generation tasks (`generate/<type>`): a question built from
//! the content words of the passages, different from those already
//! written, and a reference answer from their sentences.

use serde_json::{Value, json};

use super::read::Question;
use super::words::{content_words, sentences};

/// A generated question and reference answer, in the shape the prompt
/// asks for.
pub fn generated(q: &Question) -> Result<Value, String> {
    let task = q.task.as_str();
    let system = q.instructions.as_str();
    if !(system.contains("\"query\"") && system.contains("\"ground_truth\"")) {
        return Err(format!(
            "`{task}`: the prompt asks for no `query` and `ground_truth`"
        ));
    }
    let passages = q.numbered("passage");
    let Some(first) = passages.first() else {
        return Err(format!(
            "`{task}`: no passages (data blocks `passage_1`, ...)"
        ));
    };
    let avoid: Vec<String> = q
        .get("written")
        .lines()
        .map(|w| w.trim().to_lowercase())
        .collect();
    let difficulty = system
        .split_once("Difficulty: ")
        .map_or("", |(_, rest)| rest.split(':').next().unwrap_or(""))
        .trim();
    let words = |i: usize| content_words(passages.get(i).unwrap_or(first));
    let lead = |i: usize| {
        // The first sentence, a Markdown heading's marks left out.
        sentences(passages.get(i).unwrap_or(first))
            .first()
            .map(|s| s.trim_start_matches(['#', ' ']).to_string())
            .unwrap_or_default()
    };
    // Topic words from passage `i`, shifted by `v` for a different question.
    let topic = |i: usize, v: usize, n: usize| {
        let w = words(i);
        if w.is_empty() {
            return "this".to_string();
        }
        (0..n)
            .map(|k| w[(v * n + k) % w.len()].clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let kind = task.trim_start_matches("generate/");
    let ask = |v: usize| -> String {
        match (kind, difficulty) {
            ("factual", "easy") => format!("What is stated about {}?", topic(0, v, 3)),
            ("factual", "medium") => format!("How would you describe {}?", topic(0, v, 3)),
            ("factual", _) => format!(
                "Why does {} matter for {}?",
                topic(0, v, 2),
                topic(0, v + 1, 2)
            ),
            ("multi_hop", _) => format!(
                "How does {} relate to {} ({difficulty})?",
                topic(0, v, 2),
                topic(1, v, 2)
            ),
            ("analytical", _) => format!(
                "Why do {}, {} and {} go together ({difficulty})?",
                topic(0, v, 1),
                topic(1, v, 1),
                topic(2, v, 1)
            ),
            ("procedural", _) => format!(
                "What are the steps to set up {} ({difficulty})?",
                topic(0, v, 2)
            ),
            ("temporal", _) => format!(
                "Since which version does {} apply ({difficulty})?",
                topic(0, v, 2)
            ),
            ("contradictory", _) => format!(
                "Do the documents agree on {} and {} ({difficulty})?",
                topic(0, v, 2),
                topic(1, v, 2)
            ),
            ("ambiguous", _) => format!(
                "Which {} is meant by {} here?",
                topic(0, v, 1),
                topic(1, v, 1)
            ),
            ("unanswerable", _) => {
                format!("In which year was {} first introduced?", topic(0, v, 2))
            }
            ("out_of_scope", _) => format!(
                "What is a good holiday recipe named after {}?",
                topic(0, v, 2)
            ),
            _ => format!("What about {}?", topic(0, v, 3)),
        }
    };
    let query = (0..8)
        .map(ask)
        .find(|q| !avoid.contains(&q.to_lowercase()))
        .unwrap_or_else(|| ask(8));
    let truth = match kind {
        "multi_hop" | "analytical" => (0..passages.len()).map(lead).collect::<Vec<_>>().join(" "),
        "contradictory" => format!(
            "The documents differ on this: one says {} The other says {} The assistant should point out the conflict.",
            lead(0),
            lead(1)
        ),
        "temporal" => format!(
            "The documents state it for the time or version they name: {}",
            lead(0)
        ),
        "ambiguous" => format!(
            "The question is ambiguous: the documents use these words in more than one sense. {} {} The assistant should ask which one is meant.",
            lead(0),
            lead(1)
        ),
        "unanswerable" => format!(
            "The documents do not say when this was introduced, so the assistant should say it cannot find the answer. What they do say is: {}",
            lead(0)
        ),
        "out_of_scope" => "This question is outside what the documents cover, so the assistant should decline politely instead of inventing an answer.".to_string(),
        _ => first.trim_start_matches(['#', ' ']).to_string(),
    };
    Ok(json!({"query": query, "ground_truth": truth}))
}
