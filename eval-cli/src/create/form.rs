//! Step 3's per-pair form on a terminal, as seed 002 shows it: the query,
//! a candidate answer when there is one, then "Expected answer",
//! "Source document(s)", "Relevant context passage(s)", "Confidence
//! level" and "Difficulty". A confidence or difficulty that is not one of
//! the choices is asked again. Nothing is changed until the form is
//! complete: input that ends half-way leaves the pair as it was.

use eval_datasets::terminal::escaped;
use serde_json::Value;

use super::{Ask, Pair};

/// How a pair's form ended.
pub(super) enum Outcome {
    /// Answered (accepted, edited or written).
    Done,
    /// Skipped (no answer typed) or its candidate rejected with `skip`.
    Skipped,
    /// The input ended: no more forms.
    Ended,
}

/// Splits a typed list on `sep`, items trimmed, empty ones left out.
pub(super) fn split(text: &str, sep: char) -> Vec<String> {
    text.split(sep)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Asks `prompt` until the answer is one of `choices` (or its first
/// letter); `None` when the input ends.
pub(super) fn pick(ask: &Ask, prompt: &str, choices: &[&'static str]) -> Option<&'static str> {
    ask.choose(prompt, |a| {
        let a = a.to_ascii_lowercase();
        choices
            .iter()
            .copied()
            .find(|c| *c == a || (a.len() == 1 && c.starts_with(&a)))
            .ok_or_else(|| format!("answer {}", choices.join(", ")))
    })
    .ok()
}

/// The form for `p`; its candidate is its current answer, if any.
/// `candidates`: a missing candidate is said ("no candidate answer").
pub(super) fn pair_form(p: &mut Pair, ask: &Ask, candidates: bool) -> Outcome {
    errln!("\nQuery: \"{}\"", escaped(&p.query));
    let candidate = p.ground_truth.clone();
    if let Some(c) = &candidate {
        errln!("  Candidate answer: \"{}\"", escaped(c));
        if !p.source_docs.is_empty() {
            errln!("  From: {}", escaped(&p.source_docs.join(", ")));
        }
    } else if candidates {
        errln!("  (no candidate answer)");
    }
    let prompt = if candidate.is_some() {
        "  Expected answer [Enter accepts the candidate, `skip` rejects it]: "
    } else {
        "  Expected answer: "
    };
    let Some(typed) = ask.line(prompt) else {
        return Outcome::Ended;
    };
    let (answer, written) = match (typed.as_str(), &candidate) {
        ("skip", Some(_)) => {
            p.ground_truth = None;
            p.metadata.remove("generator_model");
            p.metadata.remove("reviewed");
            return Outcome::Skipped;
        }
        ("skip", None) | ("", None) => return Outcome::Skipped,
        ("", Some(c)) => (c.clone(), false),
        (t, _) => (t.to_string(), true),
    };
    let keep = |list: &[String]| {
        if list.is_empty() {
            String::new()
        } else {
            format!(" [Enter keeps {}]", list.len())
        }
    };
    let Some(docs) = ask.line(&format!("  Source document(s){}: ", keep(&p.source_docs))) else {
        return Outcome::Ended;
    };
    let Some(passages) = ask.line(&format!(
        "  Relevant context passage(s){}: ",
        keep(&p.contexts)
    )) else {
        return Outcome::Ended;
    };
    let Some(confidence) = pick(
        ask,
        "  Confidence level: [high/medium/low]: ",
        &["high", "medium", "low"],
    ) else {
        return Outcome::Ended;
    };
    let Some(difficulty) = pick(
        ask,
        "  Difficulty: [easy/medium/hard]: ",
        &["easy", "medium", "hard"],
    ) else {
        return Outcome::Ended;
    };
    p.ground_truth = Some(answer);
    if !docs.is_empty() {
        p.source_docs = split(&docs, ',');
    }
    if !passages.is_empty() {
        p.contexts = split(&passages, '|');
    }
    let m = &mut p.metadata;
    if written || candidate.is_none() {
        m.insert("annotator".into(), Value::from("human"));
        m.remove("generator_model");
    }
    if candidate.is_some() {
        m.insert("reviewed".into(), Value::from(true));
    }
    m.insert("confidence".into(), Value::from(confidence));
    m.insert("difficulty".into(), Value::from(difficulty));
    Outcome::Done
}
