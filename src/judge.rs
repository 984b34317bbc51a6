//! A scripted LLM judge and embeddings server, served over HTTP like the
//! demo agent: what the bench and tests point `EVAL_JUDGE_URL` and
//! `EVAL_EMBED_URL` at when they need model-based metrics without a model.
//!
//! It answers the judge prompts of `eval-runtime`'s ragas metrics (told
//! apart by their `TASK` line) the way a careful model would, by word
//! overlap: a statement is supported when most of its content words are in
//! the context. It answers **in the shape the prompt asks for**: an item
//! field such as `"statement"` or `"reason"` is written only when the
//! prompt's JSON example has it, so the tokens it spends follow the prompt,
//! as a model's would. Token counts in `usage` are [`approx_tokens`].
//!
//! | route | request | response |
//! |---|---|---|
//! | `POST /v1/chat/completions` | OpenAI chat request, system prompt `TASK <name>. ...` | OpenAI chat response, `content` the JSON asked for |
//! | `POST /v1/embeddings` | `{"input": [..], "model"}` | OpenAI embeddings (64-dimensional hashed bag of words) |
//! | `GET /stats` | — | `{"chat_calls", "embed_calls", "max_in_flight"}` so far |
//!
//! Tasks it knows: `faithfulness/statements`, `faithfulness/verdicts`,
//! `context_recall/attribution`, `context_precision/usefulness`,
//! `answer_relevancy/questions`, and the test set generation prompts of
//! `eval_runtime::generate` (`generate/single_hop`, `generate/multi_hop`,
//! `generate/abstract`, `generate/ambiguous`, `generate/unanswerable`,
//! `generate/out_of_scope`: a question built from the content words of the
//! numbered passages, different from the "already written" ones, and a
//! reference answer from their sentences); any other gets `400` naming it.
//!
//! [`JudgeConfig::fail_after`] makes it fail: every chat call after that
//! many answers `500` (with `Retry-After: 0`, so retries are quick), as a
//! judge that goes down mid-way would.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::demo::DemoServer;

/// How the scripted judge behaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JudgeConfig {
    /// Delay before each answer (chat and embeddings alike).
    pub latency: Duration,
    /// Chat calls answered before every further one gets `500` (`None`: never).
    pub fail_after: Option<u64>,
}

struct JudgeState {
    config: JudgeConfig,
    chat_calls: AtomicU64,
    embed_calls: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

impl JudgeState {
    /// Counts a request in flight until the guard drops.
    fn enter(&self) -> InFlight<'_> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(&self.in_flight)
    }
}

struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The judge's routes.
pub fn router(config: JudgeConfig) -> Router {
    let state = Arc::new(JudgeState {
        config,
        chat_calls: AtomicU64::new(0),
        embed_calls: AtomicU64::new(0),
        in_flight: AtomicU64::new(0),
        max_in_flight: AtomicU64::new(0),
    });
    Router::new()
        .route("/v1/chat/completions", post(chat_route))
        .route("/v1/embeddings", post(embeddings_route))
        .route("/stats", get(stats_route))
        .with_state(state)
}

/// Starts the scripted judge on `127.0.0.1:0`, like [`crate::demo::spawn`];
/// its base URL (`…/v1`) is what `EVAL_JUDGE_URL` and `EVAL_EMBED_URL` take.
pub fn spawn(config: JudgeConfig) -> std::io::Result<DemoServer> {
    crate::demo::spawn_router(router(config), "demo-judge")
}

/// Tokens of `text` as the judge counts them: each run of letters or digits
/// is one, and so is each other visible character (JSON punctuation costs
/// tokens too). Close to what BPE tokenizers give for English and JSON.
pub fn approx_tokens(text: &str) -> u64 {
    let mut n = 0u64;
    let mut in_word = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if !in_word {
                n += 1;
                in_word = true;
            }
        } else {
            in_word = false;
            if !c.is_whitespace() {
                n += 1;
            }
        }
    }
    n
}

fn bad(why: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({ "error": why }))).into_response()
}

async fn stats_route(State(state): State<Arc<JudgeState>>) -> Json<Value> {
    Json(json!({
        "chat_calls": state.chat_calls.load(Ordering::SeqCst),
        "embed_calls": state.embed_calls.load(Ordering::SeqCst),
        "max_in_flight": state.max_in_flight.load(Ordering::SeqCst),
    }))
}

async fn chat_route(State(state): State<Arc<JudgeState>>, Json(body): Json<Value>) -> Response {
    let _counted = state.enter();
    tokio::time::sleep(state.config.latency).await;
    let n = state.chat_calls.fetch_add(1, Ordering::Relaxed) + 1;
    if state.config.fail_after.is_some_and(|limit| n > limit) {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            [("retry-after", "0")],
            Json(json!({"error": "the scripted judge is down"})),
        )
            .into_response();
    }
    let text = |i: usize| body["messages"][i]["content"].as_str().unwrap_or("");
    let (system, user) = (text(0), text(1));
    let answer = match answer(system, user) {
        Ok(answer) => answer.to_string(),
        Err(why) => return bad(why),
    };
    let prompt_tokens: u64 = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| approx_tokens(m["content"].as_str().unwrap_or("")))
        .sum();
    Json(json!({
        "id": format!("chatcmpl-judge-{n}"),
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": answer},
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": approx_tokens(&answer),
            "total_tokens": prompt_tokens + approx_tokens(&answer),
        },
    }))
    .into_response()
}

async fn embeddings_route(
    State(state): State<Arc<JudgeState>>,
    Json(body): Json<Value>,
) -> Response {
    let _counted = state.enter();
    tokio::time::sleep(state.config.latency).await;
    state.embed_calls.fetch_add(1, Ordering::Relaxed);
    let inputs: Vec<&str> = match &body["input"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => return bad("`input` must be a string or an array of strings".into()),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed(text)}))
        .collect();
    let tokens: u64 = inputs.iter().map(|t| approx_tokens(t)).sum();
    Json(json!({
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }))
    .into_response()
}

/// A hashed bag of content words, 64 dimensions, unit length.
fn embed(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; 64];
    for word in content_words(text) {
        let h = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        v[(h % 64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "are", "was", "were", "with", "that", "this", "from", "its", "has",
    "have", "what", "which", "how", "why", "who", "does", "can", "you", "your", "into", "than",
    "then", "they", "them", "their", "there", "been", "being", "also", "not", "but", "all", "any",
];

/// Lower-case words of three or more letters or digits, stop words left out.
fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Whether most of `statement`'s content words occur in `source`.
fn supported(statement: &str, source: &str) -> bool {
    let known: HashSet<String> = content_words(source).into_iter().collect();
    let words = content_words(statement);
    if words.is_empty() {
        return true;
    }
    let found = words.iter().filter(|w| known.contains(*w)).count();
    found * 2 >= words.len()
}

/// The sentences of `text` (split after `.`, `!`, `?`), trimmed, non-empty.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '.' | '!' | '?') {
            let s = current.trim();
            if s.chars().any(char::is_alphanumeric) {
                out.push(s.to_string());
            }
            current.clear();
        }
    }
    let s = current.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s.to_string());
    }
    out
}

/// The text after `label` (e.g. `Answer: `) up to the next line starting
/// with one of `next`, or the end.
fn section<'a>(user: &'a str, label: &str, next: &[&str]) -> &'a str {
    let Some(start) = user.find(label) else {
        return "";
    };
    let rest = &user[start + label.len()..];
    let end = next
        .iter()
        .filter_map(|n| rest.find(&format!("\n{n}")))
        .min()
        .unwrap_or(rest.len());
    rest[..end].trim()
}

/// Numbered items (`1. x` or `[1] x`), one per line.
fn numbered(block: &str) -> Vec<String> {
    block
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = if let Some(r) = line.strip_prefix('[') {
                r.split_once(']')
            } else {
                line.split_once(". ")
            };
            rest.filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                .map(|(_, t)| t.trim().to_string())
        })
        .collect()
}

/// One verdict item in the shape `system` asks for: a bare `0`/`1`, or an
/// object with `flag` and, when the prompt's example has them,
/// `"statement"` (echoing `text`) and `"reason"`.
fn item(system: &str, flag: &str, verdict: bool, text: &str) -> Value {
    let v = u8::from(verdict);
    if !system.contains(&format!("\"{flag}\"")) {
        return json!(v);
    }
    let mut obj = serde_json::Map::new();
    if system.contains("\"statement\"") {
        obj.insert("statement".into(), json!(text));
    }
    if system.contains("\"reason\"") {
        let why = if verdict {
            "The context states this."
        } else {
            "The context does not say this."
        };
        obj.insert("reason".into(), json!(why));
    }
    obj.insert(flag.into(), json!(v));
    Value::Object(obj)
}

/// The judge's answer to one prompt.
fn answer(system: &str, user: &str) -> Result<Value, String> {
    let task = system
        .strip_prefix("TASK ")
        .and_then(|s| s.split(['.', ' ']).next())
        .unwrap_or("");
    Ok(match task {
        "faithfulness/statements" => {
            json!({"statements": sentences(section(user, "Answer: ", &[]))})
        }
        "faithfulness/verdicts" => {
            let context = section(user, "Context:\n", &["Statements:"]);
            let items: Vec<Value> = numbered(section(user, "Statements:\n", &[]))
                .iter()
                .map(|s| item(system, "verdict", supported(s, context), s))
                .collect();
            json!({"verdicts": items})
        }
        "context_recall/attribution" => {
            let context = section(user, "Context:\n", &["Reference answer:"]);
            let items: Vec<Value> = sentences(section(user, "Reference answer: ", &[]))
                .iter()
                .map(|s| item(system, "attributed", supported(s, context), s))
                .collect();
            json!({"classifications": items})
        }
        "context_precision/usefulness" => {
            let reference = section(user, "Reference answer: ", &["Context chunks:"]);
            let items: Vec<Value> = numbered(section(user, "Context chunks:\n", &[]))
                .iter()
                .map(|chunk| item(system, "verdict", supported(reference, chunk), chunk))
                .collect();
            json!({"verdicts": items})
        }
        "answer_relevancy/questions" => {
            let answer = section(user, "Answer: ", &[]);
            let lower = answer.to_lowercase();
            let noncommittal = lower.contains("don't know") || lower.contains("do not know");
            let words = content_words(answer);
            let topic = words.iter().take(4).cloned().collect::<Vec<_>>().join(" ");
            json!({
                "questions": [
                    format!("What is {topic}?"),
                    format!("Can you explain {topic}?"),
                    format!("What should I know about {topic}?"),
                ],
                "noncommittal": u8::from(noncommittal),
            })
        }
        generate if generate.starts_with("generate/") => generated(generate, system, user)?,
        other => return Err(format!("the demo judge does not know the task `{other}`")),
    })
}

/// A generated question and reference answer (`generate/<type>` tasks),
/// in the shape the prompt asks for.
fn generated(task: &str, system: &str, user: &str) -> Result<Value, String> {
    if !(system.contains("\"query\"") && system.contains("\"ground_truth\"")) {
        return Err(format!(
            "`{task}`: the prompt asks for no `query` and `ground_truth`"
        ));
    }
    let passages: Vec<String> =
        numbered(section(user, "Passages:\n", &["Questions already written"]))
            .into_iter()
            .map(
                |p| match p.strip_prefix("(source: ").and_then(|r| r.split_once(") ")) {
                    Some((_, text)) => text.to_string(),
                    None => p,
                },
            )
            .collect();
    let Some(first) = passages.first() else {
        return Err(format!("`{task}`: no numbered passages"));
    };
    let avoid: Vec<String> = section(
        user,
        "Questions already written (write a different one):\n",
        &[],
    )
    .lines()
    .filter_map(|l| l.trim().strip_prefix("- "))
    .map(str::to_lowercase)
    .collect();
    let difficulty = section(user, "Difficulty: ", &[])
        .split(':')
        .next()
        .unwrap_or("")
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
            ("single_hop", "easy") => format!("What is stated about {}?", topic(0, v, 3)),
            ("single_hop", "medium") => format!("How would you describe {}?", topic(0, v, 3)),
            ("single_hop", _) => format!(
                "Why does {} matter for {}?",
                topic(0, v, 2),
                topic(0, v + 1, 2)
            ),
            ("multi_hop", _) => format!(
                "How does {} relate to {} ({difficulty})?",
                topic(0, v, 2),
                topic(1, v, 2)
            ),
            ("abstract", _) => format!(
                "Summarise the common theme of {}, {} and {} ({difficulty}).",
                topic(0, v, 1),
                topic(1, v, 1),
                topic(2, v, 1)
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
        "multi_hop" | "abstract" => (0..passages.len()).map(lead).collect::<Vec<_>>().join(" "),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_the_shape_asked_for() {
        let user = "Context:\nParis is the capital of France.\n\nStatements:\n1. Paris is the capital of France.\n2. Paris has ten million people.\n";
        let long = answer(
            "TASK faithfulness/verdicts. Reply: {\"verdicts\": [{\"statement\": \"...\", \"reason\": \"...\", \"verdict\": 1}]}",
            user,
        )
        .unwrap();
        assert_eq!(
            long["verdicts"][0]["statement"],
            "Paris is the capital of France."
        );
        assert_eq!(long["verdicts"][0]["verdict"], 1);
        assert_eq!(long["verdicts"][1]["verdict"], 0);
        let short = answer(
            "TASK faithfulness/verdicts. Reply: {\"verdicts\": [1, 0]}",
            user,
        )
        .unwrap();
        assert_eq!(short, json!({"verdicts": [1, 0]}));
        assert!(approx_tokens(&short.to_string()) < approx_tokens(&long.to_string()));
        assert!(answer("TASK nope. x", "").unwrap_err().contains("`nope`"));
    }

    #[test]
    fn counts_tokens_and_splits_text() {
        // {"a": [1, 0]}: the words a, 1, 0 and the marks { " " : [ , ] }.
        assert_eq!(approx_tokens(r#"{"a": [1, 0]}"#), 3 + 8);
        assert_eq!(approx_tokens("Hello world."), 3);
        assert_eq!(sentences("One. Two! Three"), vec!["One.", "Two!", "Three"]);
        assert_eq!(numbered("[1] a\n[2] b\n"), vec!["a", "b"]);
        assert_eq!(numbered("1. a\n2. b"), vec!["a", "b"]);
        assert!(supported("Paris is in France", "France's capital is Paris"));
        assert!(!supported("Berlin is in Germany", "Paris is in France"));
    }
}
