//! The LLM judge: any OpenAI-compatible chat-completions server.
//!
//! * `EVAL_JUDGE_URL` (e.g. `http://127.0.0.1:8000/v1`), `EVAL_JUDGE_MODEL`,
//!   `EVAL_JUDGE_API_KEY` (else `OPENAI_API_KEY`; sent as a bearer token,
//!   never printed), `EVAL_JUDGE_TIMEOUT_SECS` (default 120).
//! * A question is a [`JudgePrompt`]: our instructions in its task section,
//!   everything from the agent or the dataset in data blocks, delimited by
//!   a boundary drawn at random once per judge (a question holding it gets
//!   one of its own; see [`super::prompt`]): agent output reaches the
//!   judge only as data. Every question's system message is the same bytes,
//!   and a sample's questions on its retrieved context begin with the same
//!   context blocks, so a provider's prompt cache serves them; the first of
//!   them is answered before the others are sent ([`super::warm`]). Cached
//!   prompt tokens, as the server reports them, are counted in [`Usage`].
//! * Every request asks for JSON (`response_format: json_object`) with
//!   temperature 0 and a fixed seed, so the same input gets the same verdict
//!   from servers that honour them.
//! * Replies are read strictly: one JSON object (the whole text, or inside
//!   one ```` ```json ```` fence), no key twice, and `check` (the metric's)
//!   then wants exactly the keys asked for, each of the type asked for.
//!   An answer that cannot be used (no message, not JSON, not that shape)
//!   is re-asked (at most twice) in the same conversation, showing the
//!   judge its answer and the problem; then the metric fails, alone.
//! * 429 and 5xx are retried with backoff, honouring `Retry-After`.
//! * Answers are cached (see [`Cache`](super::Cache)); [`Usage`] counts calls,
//!   retries, re-asks, tokens and cache hits.

use serde_json::{Value, json};

use super::cache::Cache;
use super::endpoint::{Endpoint, ServiceError, Usage};
use super::prompt::JudgePrompt;
use crate::config::Config;
pub use crate::model::AnswerProblem;

/// Default seed sent with every judge request.
pub const DEFAULT_SEED: u64 = 42;
/// The sampling temperature of every judge request.
const TEMPERATURE: u8 = 0;
/// Re-asks after an answer that cannot be used.
pub const MAX_REASKS: u32 = 2;

/// What an answer to a judge's question must be: the asker (a metric, the
/// generator) checks it, and says what an estimate assumes it to be.
pub trait Answer: Sync {
    /// `Ok` when `v` is an answer the asker can use; else the first
    /// problem, told to the judge when it is re-asked.
    fn check(&self, v: &Value) -> Result<(), String>;

    /// The answer an estimate's dry judge gives to `prompt` (its tokens
    /// are counted as the judge's output, and the asker reads it, so any
    /// further question it leads to is counted too). Default: `{}`.
    fn assumed(&self, _prompt: &JudgePrompt) -> Value {
        json!({})
    }
}

/// A check alone (an estimate assumes `{}`).
impl<F: Fn(&Value) -> Result<(), String> + Sync> Answer for F {
    fn check(&self, v: &Value) -> Result<(), String> {
        self(v)
    }
}

/// A configured judge. Cheap to clone.
///
/// ```no_run
/// use eval_runtime::services::{Judge, JudgePrompt};
/// use eval_runtime::Usage;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let judge = Judge::new("http://127.0.0.1:9000/v1/chat/completions", "gpt-4o-mini")?;
/// // A question of your own: the answer to judge goes in a data block.
/// let prompt = JudgePrompt::new("politeness", 1, "Is the answer polite? Reply {\"polite\": 0 or 1}.")
///     .block("answer", "Thanks for asking!");
/// let mut usage = Usage::default();
/// let reply = judge.ask_json(&prompt, &mut usage).await?;
/// println!("{reply} ({} call)", usage.calls);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Judge {
    endpoint: Endpoint,
    model: String,
    seed: u64,
    cache: Option<Cache>,
    /// An estimate's dry run: questions are answered by it, never sent.
    dry: Option<std::sync::Arc<super::DryRun>>,
    /// The boundary every question is rendered with (drawn the first time;
    /// `None`: no random source, each question draws its own and fails
    /// saying why), so that every question's system message, and a
    /// sample's context blocks, are the same bytes: see [`super::prompt`].
    boundary: std::sync::Arc<std::sync::OnceLock<Option<String>>>,
    /// Questions on one context sent one after the other (see [`super::warm`]).
    warming: std::sync::Arc<super::warm::Warming>,
}

impl Judge {
    /// A judge at `url` (base such as `http://host/v1`, or the full
    /// `.../chat/completions`) using `model`, without a cache (add one with
    /// [`cache`](Self::cache); [`from_config`](Self::from_config) uses the
    /// one the settings name).
    pub fn new(url: &str, model: &str) -> Result<Judge, ServiceError> {
        Ok(Judge {
            endpoint: Endpoint::new("judge", url, "chat/completions")?,
            model: model.to_string(),
            seed: DEFAULT_SEED,
            cache: None,
            dry: None,
            boundary: Default::default(),
            warming: Default::default(),
        })
    }

    /// The judge `config` names (`EVAL_JUDGE_*`), with its cache;
    /// `Err(NotConfigured)` without `EVAL_JUDGE_URL`.
    pub fn from_config(config: &Config) -> Result<Judge, ServiceError> {
        let (endpoint, model) = Endpoint::from_settings(
            "LLM judge",
            &config.judge,
            "chat/completions",
            "set EVAL_JUDGE_URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1), EVAL_JUDGE_MODEL and EVAL_JUDGE_API_KEY or OPENAI_API_KEY",
            config.judge_concurrency(),
        )?;
        Ok(Judge {
            endpoint,
            model,
            seed: DEFAULT_SEED,
            cache: Cache::from_config(config),
            dry: None,
            boundary: Default::default(),
            warming: Default::default(),
        })
    }

    /// Shares `permits` for calls in flight (a run's judge and embeddings
    /// share one bound, `EVAL_JUDGE_CONCURRENCY`).
    pub(crate) fn share_permits(mut self, permits: std::sync::Arc<tokio::sync::Semaphore>) -> Self {
        self.endpoint.permits = permits;
        self
    }

    /// Sets (or clears) the API key.
    pub fn api_key(mut self, key: Option<String>) -> Self {
        self.endpoint = self.endpoint.with_key(key);
        self
    }

    /// Sets (or clears) the cache.
    pub fn cache(mut self, cache: Option<Cache>) -> Self {
        self.cache = cache;
        self
    }

    /// Sets the per-request timeout.
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.endpoint.timeout = timeout;
        self
    }

    /// Sets how many times a 429/5xx/unreachable call is retried (default 4).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.endpoint.max_retries = n;
        self
    }

    /// The model asked.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// This judge in an estimate's dry run: every question is answered by
    /// `dry` (and counted there), none is sent.
    pub(crate) fn dry_run(mut self, dry: std::sync::Arc<super::DryRun>) -> Self {
        self.dry = Some(dry);
        self
    }

    /// The endpoint's host (and port, when the URL gives one): no scheme,
    /// path, query or credentials. For a fingerprint of the judge.
    pub fn host(&self) -> String {
        self.endpoint.host()
    }

    /// The sampling temperature every request asks for (0).
    pub fn temperature(&self) -> f64 {
        f64::from(TEMPERATURE)
    }

    /// The seed every request sends.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Asks `prompt` for a JSON object. The prompt's task and version, its
    /// instructions and data blocks, the model and the endpoint make the
    /// cache key (never the boundary it is rendered with): a new prompt
    /// version never reuses an old answer. Calls, retries, re-asks, tokens
    /// and cache hits are added to `usage`, also when the question fails.
    pub async fn ask_json(
        &self,
        prompt: &JudgePrompt,
        usage: &mut Usage,
    ) -> Result<Value, ServiceError> {
        self.ask_checked(prompt, usage, &|_: &Value| Ok(())).await
    }

    /// [`ask_json`](Self::ask_json) whose answer must also be an `answer`
    /// (the shape a metric needs): one that is not is re-asked like one
    /// that does not parse, in the same conversation, and only answers that
    /// pass are cached. In an estimate's dry run the answer is the one
    /// `answer` assumes, and nothing is sent.
    pub async fn ask_checked(
        &self,
        prompt: &JudgePrompt,
        usage: &mut Usage,
        answer: &dyn Answer,
    ) -> Result<Value, ServiceError> {
        prompt.check()?;
        if let Some(dry) = &self.dry {
            return Ok(dry.judge(&self.model, prompt, answer, usage));
        }
        let check = |v: &Value| answer.check(v);
        let key = Cache::key(&[
            "judge",
            self.endpoint.cache_id(),
            &self.model,
            &self.parameters().to_string(),
            &prompt.cache_text(),
        ]);
        if let Some(cache) = &self.cache
            && let Some(value) = cache.get(&key)
            && value.is_object()
            && check(&value).is_ok()
        {
            usage.count_cache_hits(1);
            return Ok(value);
        }
        let rendered = self.render(prompt)?;
        // Held until this question is answered: others on the same context
        // wait for it, then find it in the provider's prompt cache.
        let _lead = self.warming.enter(rendered.shared_prefix()).await;
        let mut messages = vec![
            json!({"role": "system", "content": rendered.system}),
            json!({"role": "user", "content": rendered.user}),
        ];
        let mut reasks = 0;
        loop {
            let answer = self.endpoint.post(&self.body(&messages), usage).await?;
            usage.count_reported(
                &format!("the judge at {}", self.endpoint.shown),
                crate::model::Reported::of(answer.get("usage")),
            );
            // A missing content (a refusal, a content filter) is re-asked too.
            let content = answer["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let judged = message_content(&answer).and_then(|content| {
                let value = parse_json_answer(content)?;
                check(&value).map_err(AnswerProblem::Shape)?;
                Ok(value)
            });
            match judged {
                Ok(value) => {
                    if let Some(cache) = &self.cache {
                        cache.put(&key, &value);
                    }
                    return Ok(value);
                }
                Err(problem) if reasks < MAX_REASKS => {
                    reasks += 1;
                    usage.count_reask();
                    messages.push(json!({"role": "assistant", "content": content}));
                    messages.push(json!({
                        "role": "user",
                        "content": format!("That answer could not be used ({problem}). Answer again with only the JSON object asked for, with exactly the keys asked for, nothing else.")
                    }));
                }
                Err(problem) => {
                    return Err(ServiceError::UnusableAnswer {
                        attempts: reasks + 1,
                        problem: problem.shown(),
                    });
                }
            }
        }
    }

    /// `prompt`'s messages with this judge's boundary, or with one of its
    /// own when the prompt holds the judge's anywhere.
    fn render(&self, prompt: &JudgePrompt) -> Result<super::Rendered, super::PromptError> {
        let shared = self
            .boundary
            .get_or_init(|| super::prompt::random_boundary().ok());
        match shared {
            Some(b) if !prompt.mentions(b) => prompt.render_with(b),
            _ => prompt.render(),
        }
    }

    /// What every request asks besides its messages.
    fn parameters(&self) -> Value {
        json!({
            "temperature": TEMPERATURE,
            "seed": self.seed,
            "response_format": {"type": "json_object"},
        })
    }

    fn body(&self, messages: &[Value]) -> Value {
        let mut body = self.parameters();
        body["model"] = json!(self.model);
        body["messages"] = json!(messages);
        body
    }
}

/// The text of an OpenAI chat answer's first choice.
fn message_content(answer: &Value) -> Result<&str, AnswerProblem> {
    let choices = match answer.get("choices") {
        Some(Value::Array(choices)) => choices,
        Some(_) => return Err(AnswerProblem::NoMessage("`choices` is not a list".into())),
        None => return Err(AnswerProblem::NoMessage("no `choices`".into())),
    };
    let Some(first) = choices.first() else {
        return Err(AnswerProblem::NoMessage("`choices` is empty".into()));
    };
    match first.pointer("/message/content") {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text),
        Some(Value::String(_)) => Err(AnswerProblem::NoMessage(
            "`choices[0].message.content` is empty".into(),
        )),
        _ => {
            let reason = first
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(|r| format!(", finish_reason `{r}`"))
                .unwrap_or_default();
            Err(AnswerProblem::NoMessage(format!(
                "`choices[0].message.content` is missing{reason}"
            )))
        }
    }
}

/// A JSON object from a judge's text: the whole text, or the inside of one
/// Markdown fence opened by ```` ```json ```` (nothing before or after it).
/// An object with a key twice is not one answer: refused.
fn parse_json_answer(content: &str) -> Result<Value, AnswerProblem> {
    let text = content.trim();
    let text = match text.strip_prefix("```json") {
        Some(fenced) => fenced
            .strip_suffix("```")
            .filter(|inside| !inside.contains("```"))
            .ok_or_else(|| {
                AnswerProblem::NotJson(
                    "a ```json fence that does not close once, at the end".into(),
                )
            })?
            .trim(),
        None => text,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => match repeated_key(text) {
            Some(key) => Err(AnswerProblem::Shape(format!(
                "the key `{key}` is given twice"
            ))),
            None => Ok(v),
        },
        Ok(other) => Err(AnswerProblem::NotObject(crate::model::one_line(
            &other.to_string(),
            60,
        ))),
        Err(e) => Err(AnswerProblem::NotJson(e.to_string())),
    }
}

/// A key the JSON object `text` has twice at its top level (where the
/// answer's keys are; `serde_json` would keep the last silently).
fn repeated_key(text: &str) -> Option<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut seen = std::collections::HashSet::new();
            let mut repeated = None;
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                if !seen.insert(key.clone()) && repeated.is_none() {
                    repeated = Some(key);
                }
            }
            Ok(repeated)
        }
    }
    serde_json::Deserializer::from_str(text)
        .deserialize_map(Keys)
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::{AnswerProblem, message_content, parse_json_answer};
    use serde_json::json;

    #[test]
    fn answers_in_fences_parse() {
        assert!(parse_json_answer("```json\n{\"a\": 1}\n```").is_ok());
        // One fence, opened by ```json, nothing around it.
        assert!(parse_json_answer("```\n{\"a\": 1}\n```").is_err());
        assert!(parse_json_answer("```json\n{\"a\": 1}\n``` ```json\n{}\n```").is_err());
        assert!(parse_json_answer("```json\n{\"a\": 1}").is_err());
        // A key given twice (the last would win silently) is refused.
        assert!(matches!(
            parse_json_answer("{\"verdicts\": [0], \"verdicts\": [1]}"),
            Err(AnswerProblem::Shape(_))
        ));
        assert!(parse_json_answer(" {\"a\": 1} ").is_ok());
        assert!(matches!(
            parse_json_answer("[1]"),
            Err(AnswerProblem::NotObject(_))
        ));
        assert!(matches!(
            parse_json_answer("Sure! {\"a\": 1}"),
            Err(AnswerProblem::NotJson(_))
        ));
    }

    #[test]
    fn an_answer_without_a_message_says_so() {
        let problem = message_content(&json!({"choices": []})).unwrap_err();
        assert_eq!(
            problem.to_string(),
            "no message text in the answer (`choices` is empty)"
        );
        let problem = message_content(
            &json!({"choices": [{"message": {"content": null}, "finish_reason": "content_filter"}]}),
        )
        .unwrap_err();
        assert!(
            problem
                .to_string()
                .contains("finish_reason `content_filter`"),
            "{problem}"
        );
        assert!(matches!(
            message_content(&json!({"error": "x"})),
            Err(AnswerProblem::NoMessage(_))
        ));
        assert_eq!(
            message_content(&json!({"choices": [{"message": {"content": "{}"}}]})).unwrap(),
            "{}"
        );
    }
}
