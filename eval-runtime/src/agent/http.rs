//! [`HttpAgent`]: any agent over HTTP.
//!
//! * request: `POST <EVAL_AGENT_URL>` with JSON
//!   `{"input": <current user turn>, "messages": [{"role", "content"}, ...], "agent_args": {...}}`;
//! * response: `{"output": "...", "context": ["...", ...]}` (`context` optional),
//!   or an OpenAI chat-completions body (`choices[0].message.content`).
//!
//! A multi-turn sample is sent one user turn at a time, each request carrying
//! the conversation so far (earlier user turns and the agent's answers), so a
//! stateless agent sees the whole conversation. Both mappings can be replaced
//! with [`HttpAgent::map_request`] and [`HttpAgent::map_response`].

use std::sync::Arc;
use std::time::Duration;

use eval_core::{Sample, ToolCall};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Response;
use super::pace::{Attempt, Pacer};
use crate::config::{Config, Secret};
use crate::error::{AgentError, Error, Result, one_line};
use crate::http::{Failure, bearer, read_body, redact_url, runtime_client};
use crate::services::Usage;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The text.
    pub content: String,
}

/// One request to the agent, before it is turned into JSON.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct AgentRequest<'a> {
    /// The current user turn.
    pub input: &'a str,
    /// The conversation so far, ending with the current user turn.
    pub messages: &'a [Message],
    /// The sample's `agent_args`.
    pub agent_args: &'a Map<String, Value>,
}

/// What one agent call returned.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AgentReply {
    /// The answer text.
    pub output: String,
    /// Retrieved context, if any.
    pub context: Vec<String>,
    /// The tool calls the agent made.
    pub tool_calls: Vec<ToolCall>,
    /// Calls made (retries included) and the tokens the agent reported.
    pub usage: Usage,
    /// Time to the first token, when the answer was streamed.
    pub ttft: Option<Duration>,
    /// The model that answered, when the agent said.
    pub model: Option<String>,
}

impl AgentReply {
    /// A reply with output and context.
    pub fn new(output: impl Into<String>, context: Vec<String>) -> Self {
        AgentReply {
            output: output.into(),
            context,
            ..AgentReply::default()
        }
    }
}

type RequestMap = dyn Fn(&AgentRequest<'_>) -> Value + Send + Sync;
type ResponseMap = dyn Fn(&Value) -> std::result::Result<AgentReply, String> + Send + Sync;

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// An agent reached over HTTP. Cheap to clone; all agents share one
/// connection pool per async runtime.
#[derive(Clone)]
pub struct HttpAgent {
    url: reqwest::Url,
    shown_url: String,
    timeout: Duration,
    max_response_bytes: u64,
    api_key: Option<Secret>,
    map_request: Option<Arc<RequestMap>>,
    map_response: Option<Arc<ResponseMap>>,
    pacer: Pacer,
}

impl std::fmt::Debug for HttpAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAgent")
            .field("url", &self.shown_url)
            .field("timeout", &self.timeout)
            .field("api_key", &self.api_key)
            .finish_non_exhaustive()
    }
}

impl HttpAgent {
    /// An agent at `url` (e.g. `http://127.0.0.1:8080/`).
    pub fn new(url: &str) -> Result<Self> {
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| Error::Config {
            what: "agent URL".into(),
            reason: format!("{e} (expected e.g. http://127.0.0.1:8080)"),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::Config {
                what: "agent URL".into(),
                reason: format!("scheme `{}` is not http or https", parsed.scheme()),
            });
        }
        Ok(HttpAgent {
            shown_url: redact_url(&parsed),
            url: parsed,
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: crate::http::DEFAULT_MAX_RESPONSE_BYTES,
            api_key: None,
            map_request: None,
            map_response: None,
            pacer: Pacer::default(),
        })
    }

    /// The agent the environment names (read once, see [`Config`]):
    ///
    /// * `EVAL_AGENT_URL` (required): where to `POST`;
    /// * `EVAL_AGENT_TIMEOUT_SECS` (default 60): per-request timeout;
    /// * `EVAL_AGENT_API_KEY` (optional): sent as `Authorization: Bearer …`,
    ///   never printed;
    /// * `EVAL_AGENT_MAX_RETRIES` (default 20), `EVAL_AGENT_ADAPTIVE` (default
    ///   on): how overloaded answers are retried and calls paced (see
    ///   [`max_retries`](Self::max_retries), [`adaptive`](Self::adaptive)).
    pub fn from_env() -> Result<Self> {
        Self::from_config(Config::global().map_err(|e| Error::Env(e.clone()))?, None)
    }

    /// The agent `config` names, with `url` (e.g. a command-line `--url`) in
    /// place of `EVAL_AGENT_URL` when given.
    pub fn from_config(config: &Config, url: Option<&str>) -> Result<Self> {
        let url = match url.or(config.agent_url.as_deref()) {
            Some(u) => u,
            None => {
                return Err(Error::MissingEnv {
                    var: "EVAL_AGENT_URL",
                    hint: "set it to your agent's URL, e.g. EVAL_AGENT_URL=http://127.0.0.1:8080",
                });
            }
        };
        let mut agent = HttpAgent::new(url)?;
        agent.timeout = config.agent_timeout;
        agent.max_response_bytes = config.max_response_bytes;
        agent.api_key = config.agent_api_key.clone();
        agent.pacer = Pacer::new(config.agent_max_retries, config.agent_adaptive);
        Ok(agent)
    }

    /// Sets the per-request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the most bytes one answer may hold (default 16 MiB); a longer
    /// answer fails the sample without being held in memory.
    pub fn max_response_bytes(mut self, limit: u64) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// Sends `Authorization: Bearer <key>` (never printed).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// Retries an answer saying the agent is overloaded (`429`, `503`) up to
    /// `n` times (default 20), after its `Retry-After` and at least a
    /// backoff with jitter; other failures are never retried (the agent may
    /// have acted on the request).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.pacer = self.pacer.with_max_retries(n);
        self
    }

    /// `true` (default): the calls in flight to this agent go down when it
    /// answers `429`/`503` and back up as it answers (AIMD), within the
    /// engine's concurrency; `false`: as many as the engine's concurrency
    /// allows. Clones of this agent share the limit.
    pub fn adaptive(mut self, on: bool) -> Self {
        let retries = self.pacer.max_retries();
        self.pacer = super::pace::Pacer::new(retries, on);
        self
    }

    /// The current limit on calls in flight to this agent (`None` when not
    /// [`adaptive`](Self::adaptive): the engine's concurrency alone).
    pub fn concurrency_limit(&self) -> Option<f64> {
        self.pacer.limit()
    }

    /// Replaces the request body mapping.
    pub fn map_request(
        mut self,
        f: impl Fn(&AgentRequest<'_>) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.map_request = Some(Arc::new(f));
        self
    }

    /// Replaces the response body mapping.
    pub fn map_response(
        mut self,
        f: impl Fn(&Value) -> std::result::Result<AgentReply, String> + Send + Sync + 'static,
    ) -> Self {
        self.map_response = Some(Arc::new(f));
        self
    }

    /// The URL, with any credentials removed.
    pub fn url(&self) -> &str {
        &self.shown_url
    }

    /// Sends the sample (every user turn, in order) and collects the answers.
    pub async fn respond(&self, sample: &Sample) -> Result<Response> {
        Ok(self.respond_to(sample).await?)
    }

    /// [`respond`](Self::respond), with the agent's own error type.
    pub async fn respond_to(&self, sample: &Sample) -> Result<Response, AgentError> {
        let turns = sample.input.turns();
        let mut messages: Vec<Message> = Vec::with_capacity(turns.len() * 2);
        let mut outputs = Vec::with_capacity(turns.len());
        let mut context = Vec::new();
        let mut response = Response::default();
        for (k, turn) in turns.iter().enumerate() {
            messages.push(Message {
                role: "user",
                content: turn.clone(),
            });
            let request = AgentRequest {
                input: turn,
                messages: &messages,
                agent_args: &sample.agent_args,
            };
            let reply = self.call(&request).await?;
            messages.push(Message {
                role: "assistant",
                content: reply.output.clone(),
            });
            response.usage.add(reply.usage);
            response.ttft = response.ttft.or(reply.ttft);
            response.model = reply.model.or(response.model);
            response
                .tool_calls
                .extend(reply.tool_calls.into_iter().map(|call| call.in_turn(k)));
            outputs.push(reply.output);
            context = reply.context;
        }
        response.output = outputs.last().cloned().unwrap_or_default();
        response.context = context;
        if turns.len() > 1 {
            response.turn_outputs = outputs;
        }
        Ok(response)
    }

    /// One call: HTTP round trips until answered (an overloaded agent's
    /// answer is retried, see [`max_retries`](Self::max_retries) and
    /// [`adaptive`](Self::adaptive)); the reply counts them.
    pub async fn call(&self, request: &AgentRequest<'_>) -> Result<AgentReply, AgentError> {
        let mut usage = Usage::default();
        let mut reply = self
            .pacer
            .run(&mut usage, || self.round_trip(request))
            .await?;
        usage.prompt_tokens += reply.usage.prompt_tokens;
        usage.completion_tokens += reply.usage.completion_tokens;
        reply.usage = usage;
        Ok(reply)
    }

    /// One HTTP round trip.
    async fn round_trip(&self, request: &AgentRequest<'_>) -> Attempt<AgentReply> {
        let body = match &self.map_request {
            Some(f) => f(request),
            None => json!({
                "input": request.input,
                "messages": request.messages,
                "agent_args": request.agent_args,
            }),
        };
        let builder = match self.post(&body) {
            Ok(builder) => builder,
            Err(e) => return Attempt::Failed(e),
        };
        tracing::debug!(url = %self.shown_url, "calling agent");
        let started = std::time::Instant::now();
        let response = match builder.send().await {
            Ok(response) => response,
            Err(e) => return Attempt::Failed(self.send_error(&e)),
        };
        let status = response.status();
        let retry_after = crate::http::retry_after_header(&response);
        let bytes = match read_body(response, self.max_response_bytes, self.timeout).await {
            Ok(bytes) => bytes,
            Err(refusal) => {
                return Attempt::Failed(AgentError::Refused {
                    url: self.shown_url.clone(),
                    refusal,
                });
            }
        };
        tracing::debug!(url = %self.shown_url, status = status.as_u16(), elapsed = ?started.elapsed(), "agent answered");
        if !status.is_success() {
            let error = AgentError::Status {
                url: self.shown_url.clone(),
                status: status.as_u16(),
                body: self.shown_body(&bytes, 200),
            };
            return if matches!(status.as_u16(), 429 | 503) {
                Attempt::Overloaded { error, retry_after }
            } else {
                Attempt::Failed(error)
            };
        }
        let value: Value = match serde_json::from_slice(&bytes) {
            Ok(value) => value,
            Err(e) => {
                return Attempt::Failed(AgentError::BadResponse {
                    url: self.shown_url.clone(),
                    reason: format!(
                        "not JSON ({e}); body starts: {}",
                        self.shown_body(&bytes, 120)
                    ),
                });
            }
        };
        let reply = match &self.map_response {
            Some(f) => f(&value),
            None => default_reply(&value),
        };
        match reply {
            Ok(reply) => Attempt::Done(reply),
            Err(reason) => Attempt::Failed(AgentError::BadResponse {
                url: self.shown_url.clone(),
                reason: crate::secrets::mask(&reason).into_owned(),
            }),
        }
    }

    /// A POST of `body` to the agent, with its key.
    fn post(&self, body: &Value) -> Result<reqwest::RequestBuilder, AgentError> {
        let client = runtime_client().map_err(|e| AgentError::Setup(e.to_string().into()))?;
        let mut builder = client
            .post(self.url.clone())
            .timeout(self.timeout)
            .json(body);
        if let Some(key) = &self.api_key {
            if !self.url.username().is_empty() || self.url.password().is_some() {
                return Err(AgentError::Setup(
                    "invalid agent credentials: the agent URL carries a user/password and an API key is set too; use one".into(),
                ));
            }
            let header = bearer(key.expose())
                .map_err(|why| AgentError::Setup(format!("invalid agent API key: {why}").into()))?;
            builder = builder.header(reqwest::header::AUTHORIZATION, header);
        }
        Ok(builder)
    }

    /// A body for an error message: one line, cut, the API key masked.
    fn shown_body(&self, bytes: &[u8], max: usize) -> String {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return "(empty body)".into();
        }
        one_line(&String::from_utf8_lossy(bytes), max)
    }

    fn send_error(&self, e: &reqwest::Error) -> AgentError {
        let url = self.shown_url.clone();
        match Failure::of_send(e) {
            Failure::Timeout => AgentError::Timeout {
                url,
                secs: self.timeout.as_secs_f64(),
            },
            Failure::Unreachable(cause) => AgentError::Unreachable { url, cause },
            Failure::Refused(refusal) => AgentError::Refused { url, refusal },
        }
    }
}

/// Reads `{"output", "context"}` or an OpenAI chat-completions body.
pub fn default_reply(value: &Value) -> std::result::Result<AgentReply, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "expected a JSON object with `output`, found {}",
            one_line(&value.to_string(), 80)
        ));
    };
    let output = if let Some(out) = map.get("output") {
        match out {
            Value::String(s) => s.clone(),
            other => {
                return Err(format!(
                    "`output` is not a string: {}",
                    one_line(&other.to_string(), 80)
                ));
            }
        }
    } else if let Some(content) = map
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .and_then(|m| m.get("content"))
    {
        match content {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => {
                return Err(format!(
                    "`choices[0].message.content` is not a string: {}",
                    one_line(&other.to_string(), 80)
                ));
            }
        }
    } else {
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        return Err(format!(
            "expected `output` (or an OpenAI `choices[0].message.content`), found keys: {}",
            if keys.is_empty() {
                "none".to_string()
            } else {
                keys.join(", ")
            }
        ));
    };
    let context = match map.get("context") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                Value::Object(o) => o
                    .get("text")
                    .or_else(|| o.get("content"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        "a `context` item has no `text` or `content` string".to_string()
                    }),
                other => Err(format!(
                    "a `context` item is {}",
                    one_line(&other.to_string(), 60)
                )),
            })
            .collect::<std::result::Result<_, _>>()?,
        Some(Value::String(s)) => vec![s.clone()],
        Some(other) => {
            return Err(format!(
                "`context` should be an array of strings, found {}",
                one_line(&other.to_string(), 60)
            ));
        }
    };
    Ok(AgentReply::new(output, context))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_default_and_openai_bodies() {
        let r = default_reply(&json!({"output": "hi", "context": ["a", {"text": "b"}]})).unwrap();
        assert_eq!(r.output, "hi");
        assert_eq!(r.context, vec!["a", "b"]);
        let r = default_reply(
            &json!({"choices": [{"message": {"role": "assistant", "content": "yo"}}]}),
        )
        .unwrap();
        assert_eq!(r.output, "yo");
        let e = default_reply(&json!({"answer": "x"})).unwrap_err();
        assert!(e.contains("found keys: answer"), "{e}");
        let e = default_reply(&json!({"output": 3})).unwrap_err();
        assert!(e.contains("not a string"), "{e}");
    }

    #[test]
    fn urls_lose_credentials() {
        let agent = HttpAgent::new("http://user:s3cret@127.0.0.1:9/x?key=s3cret").unwrap();
        assert_eq!(agent.url(), "http://127.0.0.1:9/x");
        let agent = agent.api_key("sk-very-secret");
        assert!(!format!("{agent:?}").contains("secret"));
        assert!(HttpAgent::new("ftp://x").is_err());
        assert!(HttpAgent::new("not a url").is_err());
    }
}
