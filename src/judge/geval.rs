//! The scripted judge's G-Eval answers (`g_eval` criteria metrics):
//!
//! | task | answer |
//! |---|---|
//! | `g_eval/steps` | one step per sentence of the criteria (at most 4): `Check that the Actual Output meets this: <sentence>` |
//! | `g_eval/score` | on the scale the instructions give (`an integer from L to H`; strict: 0 or 1), `L + (H − L) ×` the share of the expected output's content words (else the input's) found in the actual output, rounded |
//!
//! When a request asks for `logprobs`, a `g_eval/score` answer carries
//! them in OpenAI's documented shape (openai-python 3.57.0,
//! `ChoiceLogprobs` / `ChatCompletionTokenLogprob`: `choices[0].logprobs.
//! content[]` of `{token, bytes, logprob, top_logprobs: [{token, bytes,
//! logprob}]}`): the answer's text in three tokens, the score's middle one
//! with alternatives 60 % the score, 20 % each neighbour on the scale.

use serde_json::{Value, json};

use super::read::Question;
use super::words::{content_words, sentences};

/// The steps written from the criteria.
pub fn steps(q: &Question) -> Value {
    let mut steps: Vec<String> = sentences(q.get("criteria"))
        .into_iter()
        .take(4)
        .map(|s| format!("Check that the Actual Output meets this: {s}"))
        .collect();
    if steps.is_empty() {
        steps.push("Check that the Actual Output answers the Input.".into());
    }
    json!({ "steps": steps })
}

/// The scale the instructions ask for: `(low, high)`.
pub fn scale(instructions: &str) -> (i64, i64) {
    let Some((_, rest)) = instructions.split_once("an integer from ") else {
        return (0, 1); // strict: 1 when followed, else 0
    };
    let mut numbers = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .filter_map(|n| n.parse::<i64>().ok());
    match (numbers.next(), numbers.next()) {
        (Some(low), Some(high)) if low < high => (low, high),
        _ => (1, 5),
    }
}

/// The score on the scale, by word overlap.
pub fn score(q: &Question) -> Value {
    let (low, high) = scale(&q.instructions);
    let against = match q.get("expected_output") {
        "" => q.get("input"),
        e => e,
    };
    let wanted = content_words(against);
    let got = content_words(q.get("actual_output"));
    let share = if wanted.is_empty() {
        0.0
    } else {
        wanted.iter().filter(|w| got.contains(w)).count() as f64 / wanted.len() as f64
    };
    let score = if high - low == 1 {
        low + i64::from(share >= 0.5)
    } else {
        low + ((high - low) as f64 * share).round() as i64
    };
    json!({
        "reason": format!("{:.0}% of the reference's content words are in the answer.", share * 100.0),
        "score": score,
    })
}

/// The score given when told to grade `grade` (0 worst, 1 best).
pub fn graded(instructions: &str, grade: f64) -> Value {
    let (low, high) = scale(instructions);
    let score = low + ((high - low) as f64 * grade.clamp(0.0, 1.0)).round() as i64;
    json!({"reason": "As instructed.", "score": score})
}

/// OpenAI-shaped `logprobs` for `text`, an answer whose `score` is
/// `score` on `instructions`' scale; `None` for an answer without one.
pub fn logprobs(text: &str, answer: &Value, instructions: &str) -> Option<Value> {
    let score = answer["score"].as_i64()?;
    let (low, high) = scale(instructions);
    let spelled = score.to_string();
    let at = text.rfind(&spelled)?;
    let token = |t: &str, top: &[(String, f64)]| {
        let alt = |t: &str, p: f64| json!({"token": t, "bytes": t.as_bytes(), "logprob": p.ln()});
        json!({
            "token": t, "bytes": t.as_bytes(), "logprob": top[0].1.ln(),
            "top_logprobs": top.iter().map(|(t, p)| alt(t, *p)).collect::<Vec<_>>(),
        })
    };
    let mut alternatives = vec![(spelled.clone(), 0.6)];
    for n in [score - 1, score + 1] {
        if (low..=high).contains(&n) {
            alternatives.push((n.to_string(), 0.2));
        }
    }
    let (before, after) = (&text[..at], &text[at + spelled.len()..]);
    let mut content = Vec::new();
    if !before.is_empty() {
        content.push(token(before, &[(before.to_string(), 1.0)]));
    }
    content.push(token(&spelled, &alternatives));
    if !after.is_empty() {
        content.push(token(after, &[(after.to_string(), 1.0)]));
    }
    Some(json!({"content": content, "refusal": null}))
}
