//! The LLM judge: any OpenAI-compatible chat-completions server.
//!
//! * `EVAL_JUDGE_URL` (e.g. `http://127.0.0.1:8000/v1`), `EVAL_JUDGE_MODEL`,
//!   `EVAL_JUDGE_API_KEY` (else `OPENAI_API_KEY`; never printed),
//!   `EVAL_JUDGE_TIMEOUT_SECS` (default 120).
//! * A question is a [`JudgePrompt`]: our instructions in its task section,
//!   everything from the agent or the dataset in data blocks, delimited by
//!   a boundary computed from the question with a secret key kept in the
//!   cache directory ([`BoundaryKey`](super::BoundaryKey)): the same
//!   question is sent as the same bytes run after run, and agent output
//!   reaches the judge only as data (see [`super::prompt`]). A sample's
//!   questions on its retrieved context begin with the same system message
//!   and context blocks, so a provider's prompt cache serves them; the
//!   first of them is answered before the others are sent ([`super::warm`]),
//!   and the same question asked again while it is in flight (context
//!   precision's and recall's, which share one) is sent once. Cached prompt tokens, as the
//!   server reports them, are counted in [`Usage`].
//! * Every request is bounded: `max_tokens` is `EVAL_JUDGE_MAX_TOKENS`, else
//!   the question's own bound ([`Answer::max_tokens`], sized from the
//!   answer it asks for). An answer cut off there (`finish_reason:
//!   "length"`) is asked once more with room to the cap when the bound was
//!   the question's own, else fails saying so ([`ServiceError::CutOff`]).
//! * Every request asks for the answer's JSON schema ([`Answer::schema`]) in
//!   the structured-output mode `EVAL_JUDGE_STRUCTURED` names; `auto`
//!   starts with `json_schema` and, when the server refuses a mode (HTTP
//!   400, 422 or 500 naming `response_format` or the schema), moves to the
//!   next one once, says so, and keeps it for the rest of the run.
//!   Temperature 0 and a fixed seed, so the same input gets the same
//!   verdict from servers that honour them.
//! * Replies are read strictly: one JSON object (the whole text, or inside
//!   one ```` ```json ```` fence), no key twice, and `check` (the metric's)
//!   then wants exactly the keys asked for, each of the type asked for.
//!   An answer that cannot be used (no message, not JSON, not that shape)
//!   is re-asked (at most twice): the question as first sent with a short
//!   correction in its task section, never the previous answers; then the
//!   metric fails, alone, quoting the judge's words on one line.
//! * 429 and 5xx are retried with backoff, honouring `Retry-After`.
//! * Answers are cached (see [`Cache`](super::Cache)); [`Usage`] counts calls,
//!   retries, re-asks, tokens and cache hits.

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use super::cache::Cache;
use super::endpoint::{Endpoint, ServiceError, Usage};
use super::prompt::{BoundaryKey, JudgePrompt};
use crate::config::{Config, Structured};
pub use crate::model::AnswerProblem;

/// Default seed sent with every judge request.
pub const DEFAULT_SEED: u64 = 42;
/// The sampling temperature of every judge request.
const TEMPERATURE: u8 = 0;
/// Re-asks after an answer that cannot be used.
pub const MAX_REASKS: u32 = 2;
/// The bound of a question that states none ([`Answer::max_tokens`]).
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// The most a question's own bound grows to after a cut-off answer.
pub const MAX_TOKENS_CAP: u32 = 2048;

/// What an answer to a judge's question must be: the asker (a metric, the
/// generator) checks it, and says what an estimate assumes it to be.
pub trait Answer: Sync {
    /// `Ok` when `v` is an answer the asker can use; else the first
    /// problem.
    fn check(&self, v: &Value) -> Result<(), String>;

    /// The answer an estimate's dry judge gives to `prompt` (its tokens
    /// are counted as the judge's output, and the asker reads it, so any
    /// further question it leads to is counted too). Default: `{}`.
    fn assumed(&self, _prompt: &JudgePrompt) -> Value {
        json!({})
    }

    /// The JSON schema of the answers [`check`](Self::check) admits, sent as
    /// the request's structured output. Default: none (a JSON object of any
    /// shape is asked for).
    fn schema(&self) -> Option<Value> {
        None
    }

    /// The `max_tokens` the answer needs, with room to spare (default
    /// [`DEFAULT_MAX_TOKENS`]); `EVAL_JUDGE_MAX_TOKENS` overrides it.
    fn max_tokens(&self) -> Option<u32> {
        None
    }

    // token probabilities for G-Eval's weighted score.
    /// How many most likely alternatives of each answer token to ask for
    /// (OpenAI's `logprobs: true, top_logprobs: n`); `None` (the
    /// default): no token probabilities are asked.
    fn top_logprobs(&self) -> Option<u8> {
        None
    }

    /// The answer kept (returned and cached) for `value`, an answer that
    /// passed [`check`](Self::check), given the whole `reply` it came in
    /// (its `choices[0].logprobs`). Default: `value`.
    fn keep(&self, value: Value, _reply: &Value) -> Value {
        value
    }

    /// Whether `v`, an answer kept by [`keep`](Self::keep) (from the cache,
    /// or another asker's), is one the asker can use. Default:
    /// [`check`](Self::check).
    fn check_kept(&self, v: &Value) -> Result<(), String> {
        self.check(v)
    }
}

/// A check alone (an estimate assumes `{}`).
impl<F: Fn(&Value) -> Result<(), String> + Sync> Answer for F {
    fn check(&self, v: &Value) -> Result<(), String> {
        self(v)
    }
}

/// The structured-output mode a judge uses now: the setting's, or under
/// `auto` the strongest the server has not refused.
#[derive(Debug)]
struct Modes {
    /// The mode requests carry now.
    current: Structured,
    /// Whether the server has answered a request in `current` (under
    /// `auto`, until then a request is tried once before it is retried, so
    /// a refusal of the mode costs one call, not a round of retries).
    confirmed: bool,
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
    dry: Option<Arc<super::DryRun>>,
    /// `EVAL_JUDGE_MAX_TOKENS`.
    max_tokens: Option<u32>,
    /// `EVAL_JUDGE_STRUCTURED`, and what `auto` settled on.
    structured: Structured,
    modes: Arc<Mutex<Modes>>,
    /// The key boundaries are computed with (from the cache directory,
    /// else this process's).
    key: Arc<OnceLock<BoundaryKey>>,
    /// Where the key is kept when answers are not cached (`EVAL_CACHE=off`:
    /// the cache's directory still keeps the key, so prompts stay stable).
    key_store: Option<Cache>,
    /// Questions on one context sent one after the other (see [`super::warm`]).
    warming: Arc<super::warm::Warming>,
    /// Questions in flight, by cache key.
    flights: Arc<super::warm::Flights>,
}

impl Judge {
    /// A judge at `url` (base such as `http://host/v1`, or the full
    /// `.../chat/completions`) using `model`, without a cache (add one with
    /// [`cache`](Self::cache); [`from_config`](Self::from_config) uses the
    /// one the settings name).
    pub fn new(url: &str, model: &str) -> Result<Judge, ServiceError> {
        Ok(Judge::of(
            Endpoint::new("judge", url, "chat/completions")?,
            model.to_string(),
            None,
        ))
    }

    fn of(endpoint: Endpoint, model: String, cache: Option<Cache>) -> Judge {
        Judge {
            endpoint,
            model,
            seed: DEFAULT_SEED,
            cache,
            dry: None,
            max_tokens: None,
            structured: Structured::Auto,
            modes: Arc::new(Mutex::new(Modes {
                current: Structured::JsonSchema,
                confirmed: false,
            })),
            key: Default::default(),
            key_store: None,
            warming: Default::default(),
            flights: Default::default(),
        }
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
        let mut judge = Judge::of(endpoint, model, Cache::from_config(config))
            .max_tokens(config.judge_answers.max_tokens)
            .structured(config.judge_answers.structured);
        judge.key_store = Some(Cache::at(config));
        Ok(judge)
    }

    super::client::endpoint_client!();

    /// Sets (or clears) the cache (and so where the boundary key is kept).
    pub fn cache(mut self, cache: Option<Cache>) -> Self {
        self.cache = cache;
        self.key = Default::default();
        self
    }

    /// Sets `max_tokens` for every request (`EVAL_JUDGE_MAX_TOKENS`);
    /// `None`: each question's own bound.
    pub fn max_tokens(mut self, n: Option<u32>) -> Self {
        self.max_tokens = n;
        self
    }

    /// Sets the structured-output mode (`EVAL_JUDGE_STRUCTURED`).
    pub fn structured(mut self, mode: Structured) -> Self {
        self.structured = mode;
        self.modes = Arc::new(Mutex::new(Modes {
            current: match mode {
                Structured::Auto => Structured::JsonSchema,
                other => other,
            },
            confirmed: false,
        }));
        self
    }

    /// The structured-output mode requests carry now (under `auto`, the
    /// strongest the server has not refused).
    #[doc(hidden)]
    pub fn structured_mode(&self) -> Structured {
        self.lock_modes().current
    }

    /// Whether this judge answers an estimate's dry run (nothing is sent).
    pub(crate) fn is_dry(&self) -> bool {
        self.dry.is_some()
    }

    /// The sampling temperature every request asks for (0).
    #[doc(hidden)]
    pub fn temperature(&self) -> f64 {
        f64::from(TEMPERATURE)
    }

    /// The seed every request sends.
    #[doc(hidden)]
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
    /// that does not parse, and only answers that pass are cached. In an
    /// estimate's dry run the answer is the one `answer` assumes, and
    /// nothing is sent.
    #[doc(hidden)]
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
        let key = Cache::key(&[
            "judge",
            self.endpoint.cache_id(),
            &self.model,
            &json!({"temperature": TEMPERATURE, "seed": self.seed}).to_string(),
            &prompt.cache_text(),
        ]);
        if let Some(value) = self.known(&key, answer) {
            usage.count_cache_hits(1);
            return Ok(value);
        }
        // The same question asked at once (context precision's and
        // recall's) is sent once: the others take its answer.
        let only = loop {
            match self.flights.join(&key).await {
                super::warm::Joined::Lead(lead) => break lead,
                super::warm::Joined::Answer(Some(value)) if answer.check_kept(&value).is_ok() => {
                    usage.count_cache_hits(1);
                    return Ok(value);
                }
                // It failed, or its answer is not one this asker takes.
                super::warm::Joined::Answer(_) => {}
            }
        };
        let rendered = prompt.render_keyed(self.boundary_key())?;
        // Held until this question is answered: others on the same context
        // wait for it, then find it in the provider's prompt cache.
        let _lead = self.warming.enter(rendered.shared_prefix()).await;
        let value = self.converse(prompt, rendered, usage, answer).await?;
        only.answered(&value);
        if let Some(cache) = &self.cache {
            cache.put(&key, &value);
        }
        Ok(value)
    }

    /// Asks until an answer passes `answer`'s check: the question, then at
    /// most [`MAX_REASKS`] times the question with a correction.
    async fn converse(
        &self,
        prompt: &JudgePrompt,
        first: super::Rendered,
        usage: &mut Usage,
        answer: &dyn Answer,
    ) -> Result<Value, ServiceError> {
        let own_bound = answer.max_tokens().unwrap_or(DEFAULT_MAX_TOKENS);
        let mut bound = self.max_tokens.unwrap_or(own_bound);
        let schema = answer.schema();
        let mut rendered = first;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let asked = (schema.as_ref(), answer.top_logprobs());
            let reply = self.send(&rendered, bound, asked, usage).await?;
            let content = reply
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .unwrap_or("");
            let reported = match reply.get("usage").filter(|u| !u.is_null()) {
                Some(u) => crate::model::Reported::of(Some(u)),
                // No usage: counted here, never a silent $0.
                None => crate::agent::unreported_reply(
                    &json!({"model": self.model, "messages": [
                        {"role": "system", "content": rendered.system},
                        {"role": "user", "content": rendered.user},
                    ]}),
                    content,
                ),
            };
            usage.count_reported(&format!("the judge at {}", self.endpoint.shown), reported);
            let finish = reply
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str);
            if finish == Some("length") {
                // Cut off: asked again only with more room, never as it was.
                if self.max_tokens.is_none() && bound < MAX_TOKENS_CAP && attempts <= MAX_REASKS {
                    bound = MAX_TOKENS_CAP;
                    usage.count_reask();
                    continue;
                }
                return Err(ServiceError::CutOff {
                    max_tokens: bound,
                    began: crate::model::one_line(content, 80),
                });
            }
            let judged = message_content(&reply).and_then(|text| {
                let value = parse_json_answer(text)?;
                answer.check(&value).map_err(AnswerProblem::Shape)?;
                Ok(answer.keep(value, &reply))
            });
            match judged {
                Ok(value) => return Ok(value),
                Err(problem) if attempts <= MAX_REASKS => {
                    usage.count_reask();
                    // Our words only, so the boundary stays (and with it
                    // the system message and any shared prefix).
                    let corrected = prompt.clone().with_correction(correction(&problem));
                    rendered = match corrected.mentions(&rendered.boundary) {
                        false => corrected.render_with(&rendered.boundary)?,
                        true => corrected.render_keyed(self.boundary_key())?,
                    };
                }
                Err(problem) => {
                    return Err(ServiceError::UnusableAnswer {
                        attempts,
                        problem: quoting(problem, content).shown(),
                    });
                }
            }
        }
    }

    /// Posts one request in the current structured-output mode (retried
    /// as every call is); under `auto`, a refused mode is replaced by the
    /// next (once, said once) and the request sent again.
    async fn send(
        &self,
        rendered: &super::Rendered,
        max_tokens: u32,
        (schema, top_logprobs): (Option<&Value>, Option<u8>),
        usage: &mut Usage,
    ) -> Result<Value, ServiceError> {
        loop {
            let (mode, confirmed) = {
                let modes = self.lock_modes();
                (modes.current, modes.confirmed)
            };
            let mut body = self.body(rendered, max_tokens, mode, schema);
            if let Some(n) = top_logprobs {
                body["logprobs"] = json!(true);
                body["top_logprobs"] = json!(n);
            }
            let probing =
                self.structured == Structured::Auto && !confirmed && mode.next().is_some();
            // Until the server has answered in a mode, its refusal of the
            // mode is not retried: it costs one call (llama-cpp-python
            // 0.3.36 answers json_schema with a 500).
            let result = if probing {
                self.endpoint
                    .post_unless(&body, usage, &refuses_format)
                    .await
            } else {
                self.endpoint.post(&body, usage).await
            };
            match result {
                Err(ServiceError::Status {
                    status, body: text, ..
                }) if self.structured == Structured::Auto
                    && refuses_format(status, &text)
                    && mode.next().is_some() =>
                {
                    self.fall_back(mode, status, &text);
                }
                Ok(answer) => {
                    let mut modes = self.lock_modes();
                    if modes.current == mode {
                        modes.confirmed = true;
                    }
                    return Ok(answer);
                }
                other => return other,
            }
        }
    }

    /// `refused` was refused: the next mode, unless another question moved
    /// on already; said once.
    fn fall_back(&self, refused: Structured, status: u16, text: &str) {
        let mut modes = self.lock_modes();
        if modes.current != refused {
            return;
        }
        let Some(next) = refused.next() else { return };
        modes.current = next;
        modes.confirmed = false;
        crate::notice::note(&format!(
            "the judge at {} refused response_format {} (HTTP {status}: {}); asking with {} for the rest of the run (set EVAL_JUDGE_STRUCTURED to choose)",
            self.endpoint.shown,
            refused.name(),
            crate::model::one_line(text, 120),
            next.name()
        ));
    }

    /// The answer to the question `key` names, when the cache has one
    /// `answer` accepts.
    fn known(&self, key: &str, answer: &dyn Answer) -> Option<Value> {
        let value = self.cache.as_ref().and_then(|c| c.get(key))?;
        (value.is_object() && answer.check_kept(&value).is_ok()).then_some(value)
    }

    /// The key boundaries are computed with: the cache directory's, else
    /// this process's.
    fn boundary_key(&self) -> &BoundaryKey {
        self.key.get_or_init(|| {
            self.cache
                .as_ref()
                .or(self.key_store.as_ref())
                .and_then(Cache::boundary_key)
                .map_or_else(BoundaryKey::per_process, BoundaryKey::new)
        })
    }

    fn lock_modes(&self) -> std::sync::MutexGuard<'_, Modes> {
        self.modes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One request: the question's two messages, the bound, the sampling
    /// parameters and the structured output of `mode`.
    fn body(
        &self,
        rendered: &super::Rendered,
        max_tokens: u32,
        mode: Structured,
        schema: Option<&Value>,
    ) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": rendered.system},
                {"role": "user", "content": rendered.user},
            ],
            "temperature": TEMPERATURE,
            "seed": self.seed,
            "max_tokens": max_tokens,
        });
        let format = match (mode, schema) {
            (Structured::None, _) => None,
            (Structured::JsonSchema | Structured::Auto, Some(schema)) => Some(json!({
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": true},
            })),
            (Structured::JsonObjectSchema, Some(schema)) => {
                Some(json!({"type": "json_object", "schema": schema}))
            }
            _ => Some(json!({"type": "json_object"})),
        };
        if let Some(format) = format {
            body["response_format"] = format;
        }
        body
    }
}

/// Whether an error status and body say the server does not take the
/// request's `response_format` (llama-cpp-python answers 500 naming it,
/// others 400 or 422).
fn refuses_format(status: u16, body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    matches!(status, 400 | 422 | 500 | 501)
        && ["response_format", "json_schema", "schema"]
            .iter()
            .any(|w| body.contains(w))
}

/// What a re-ask adds to the task: what was wrong, in our words only (the
/// judge's own words never go into the task section).
fn correction(problem: &AnswerProblem) -> &'static str {
    match problem {
        AnswerProblem::Shape(_) => {
            "Your previous answer did not have the keys, types or list lengths asked for. Answer again with only the JSON object asked for."
        }
        _ => {
            "Your previous answer was not one JSON object. Answer again with only the JSON object asked for, nothing else."
        }
    }
}

/// `problem` with the judge's words it was about, on one line.
fn quoting(problem: AnswerProblem, content: &str) -> AnswerProblem {
    if content.trim().is_empty() {
        return problem;
    }
    let words = crate::model::one_line(content, 80);
    match problem {
        AnswerProblem::NotJson(t) => {
            AnswerProblem::NotJson(format!("{t}; the judge wrote \"{words}\""))
        }
        AnswerProblem::Shape(t) => {
            AnswerProblem::Shape(format!("{t}; the judge wrote \"{words}\""))
        }
        other => other,
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
    match crate::config::inner_json(text) {
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
