//! [`HttpAgent`]: any agent over HTTP — the transport. What the bodies
//! hold depends on the [`Protocol`]:
//!
//! * **JSON contract** (the default): request `POST <EVAL_AGENT_URL>` with
//!   `{"input": <current user turn>, "messages": [{"role", "content",
//!   "tool_calls"?}, ...], "agent_args": {...}}`, plus `"tools": [...]` when
//!   the sample offers tools and `"stream": true` when streaming is on;
//!   response `{"output": "...", "context": ["...", ...]}` (`context`
//!   optional), or an OpenAI chat-completions body;
//! * **OpenAI chat completions** (`EVAL_AGENT_PROTOCOL=openai`,
//!   [`HttpAgent::protocol`], or a URL ending in `/chat/completions`): see
//!   [`openai`](super::openai) for the request and the answer. Spoken to
//!   OpenAI-compatible servers, Azure OpenAI (`api-key`, `api-version`) or
//!   Anthropic's Messages API (translated): `EVAL_AGENT_PROVIDER`,
//!   [`HttpAgent::provider`], else the URL's host (see [`crate::config::Provider`]).
//!
//! Either may answer with a stream (`Content-Type: text/event-stream`), read
//! as it arrives (see [`stream`](super::stream)); whatever was asked, the
//! answer's content type decides how it is read, so a server that answers a
//! stream request with one JSON body is understood.
//!
//! A multi-turn sample is sent one user turn at a time, each request carrying
//! the conversation so far (earlier user turns, the agent's answers and the
//! tool calls it made), so a stateless agent sees the whole conversation.
//! Both mappings can be replaced with [`HttpAgent::map_request`] and
//! [`HttpAgent::map_response`] (a whole JSON answer only).
//!
//! An agent that speaks neither is mapped without code by settings
//! ([`HttpMapping`], see [`mapped`](super::mapped)): a request template
//! (`{"question": "{input}"}`), method, query and custom headers; paths to
//! the output, context, tool calls and token counts in its answer
//! (`data.answer`, `/data/sources`); a `text/plain` answer that is not JSON
//! is the output as a whole.

mod engine;

use std::sync::Arc;
use std::time::Duration;

use eval_datasets::{AgentSettings, HttpMapping, Protocol, Sample};
use serde_json::{Value, json};

use super::Response;
use super::openai::{self, Sampling};
use super::pace::{Attempt, Pacer};
use super::wire::{AgentReply, AgentRequest, Message};
use crate::config::{Config, DEFAULT_AGENT_MAX_RETRIES, Headers, Secret};
use crate::http::{BoundedBody, Failure, read_body, redact_url, runtime_client};
use crate::model::Usage;
use crate::model::{AgentError, Error, Result, one_line, with_sources};

type RequestMap = dyn Fn(&AgentRequest<'_>) -> Value + Send + Sync;
type ResponseMap = dyn Fn(&Value) -> std::result::Result<AgentReply, Box<dyn std::error::Error + Send + Sync>>
    + Send
    + Sync;

/// Default per-request timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// An agent reached over HTTP. Cheap to clone; all agents share one
/// connection pool per async runtime.
///
/// ```no_run
/// use eval_runtime::prelude::*;
/// use eval_runtime::Protocol;
///
/// // `EVAL_AGENT_URL` (and its protocol, model, key) as the environment says:
/// let from_env = HttpAgent::from_env();
/// // Or in code: an OpenAI-compatible chat endpoint, streamed.
/// let agent = HttpAgent::new("http://127.0.0.1:8000/v1/chat/completions")?
///     .protocol(Protocol::OpenAi)
///     .model("my-agent")
///     .stream(true);
/// # Ok::<(), eval_runtime::Error>(())
/// ```
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
    /// `None`: implied by the URL.
    protocol: Option<Protocol>,
    model: Option<String>,
    stream: bool,
    sampling: Sampling,
    /// How the request is built and the answer read, when not by the
    /// protocol alone (templates, paths, headers).
    http: HttpMapping,
    /// The mapping's custom headers (values are [`Secret`]s), or why they
    /// cannot be sent.
    headers: std::result::Result<Headers, String>,
    /// The agent's own tool definitions, or why they are not valid.
    tools: std::result::Result<Vec<Value>, eval_datasets::tool::ToolError>,
    /// The API an OpenAI-protocol agent speaks (authentication, bodies).
    wire: crate::provider::Wire,
    /// What code (or `evals`' flags) chose with [`protocol`](Self::protocol),
    /// [`model`](Self::model), [`stream`](Self::stream): a plan's settings
    /// give way to these ([`under_plan`](Self::under_plan)).
    chosen: AgentSettings,
}

impl std::fmt::Debug for HttpAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAgent")
            .field("url", &self.shown_url)
            .field("timeout", &self.timeout)
            .field("api_key", &self.api_key)
            .field("protocol", &self.wire_protocol())
            .field("provider", &self.wire.provider)
            .field("model", &self.model)
            .field("stream", &self.stream)
            .field("http", &self.http)
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
        let wire = crate::provider::Wire::new(
            crate::config::Provider::implied_by_url(parsed.as_str()),
            crate::config::Headers::none(),
        );
        let mut agent = HttpAgent {
            wire,
            shown_url: redact_url(&parsed),
            pacer: Pacer::for_origin(
                &parsed.origin().ascii_serialization(),
                DEFAULT_AGENT_MAX_RETRIES,
                true,
            ),
            url: parsed,
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: crate::http::DEFAULT_MAX_RESPONSE_BYTES,
            api_key: None,
            map_request: None,
            map_response: None,
            protocol: None,
            model: None,
            stream: false,
            sampling: Sampling::default(),
            http: HttpMapping::default(),
            headers: Ok(Headers::none()),
            tools: Ok(Vec::new()),
            chosen: AgentSettings::default(),
        };
        agent.locate(crate::config::DEFAULT_AZURE_API_VERSION);
        Ok(agent)
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
        // The configured `api-version` before `new` adds the default one.
        let url = crate::provider::with_api_version(
            url,
            crate::config::Provider::resolve(config.providers.agent, url),
            config.providers.azure_api_version(),
        );
        let mut agent = HttpAgent::new(&url)?;
        agent.timeout = config.agent_timeout;
        agent.max_response_bytes = config.max_response_bytes;
        agent.api_key = config.agent_api_key.clone();
        agent.protocol = config.agent_protocol;
        agent.model = config.agent_model.clone();
        agent.stream = config.agent_stream;
        agent.sampling = config.agent_sampling;
        agent.set_http(config.agent_http.clone());
        if let Some(provider) = config.providers.agent {
            agent = agent.provider(provider);
        }
        agent.pacer = agent
            .pacer
            .with_max_retries(config.agent_max_retries)
            .adaptive(config.agent_adaptive);
        Ok(agent)
    }

    /// Speaks `protocol`: the JSON contract (the default) or OpenAI chat
    /// completions (see [`openai`](super::openai)). Unless chosen here or
    /// by `EVAL_AGENT_PROTOCOL`, a URL whose path ends in
    /// `/chat/completions` means OpenAI.
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = Some(protocol);
        self.chosen.protocol = Some(protocol);
        self
    }

    /// The API an OpenAI-protocol agent speaks (`EVAL_AGENT_PROVIDER`; by
    /// default the URL's host says): OpenAI-compatible, Azure OpenAI or
    /// Anthropic's Messages API, the bodies translated (see the guide's
    /// "Local models and other providers"); either of the latter implies
    /// the OpenAI protocol and completes the URL's path.
    #[doc(hidden)]
    pub fn provider(mut self, provider: crate::config::Provider) -> Self {
        self.wire.provider = provider;
        self.locate(crate::config::DEFAULT_AZURE_API_VERSION);
        self
    }

    fn locate(&mut self, version: &str) {
        if let Some(url) = self.wire.agent_url(&self.url, version) {
            self.shown_url = redact_url(&url);
            self.url = url;
        }
    }

    /// The `model` of OpenAI requests (`EVAL_AGENT_MODEL`): required by the
    /// OpenAI protocol, as OpenAI, vLLM and Ollama require it.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into()).filter(|m| !m.trim().is_empty());
        self.chosen.model = self.model.clone();
        self
    }

    /// Asks for a streamed answer (`EVAL_AGENT_STREAM`): OpenAI's
    /// `stream: true` with `stream_options.include_usage`, or `"stream": true`
    /// in a JSON-contract body. The time to the first token is then recorded.
    pub fn stream(mut self, on: bool) -> Self {
        self.stream = on;
        self.chosen.stream = Some(on);
        self
    }

    /// `temperature` of OpenAI requests (`EVAL_AGENT_TEMPERATURE`).
    pub fn temperature(mut self, t: f64) -> Self {
        self.sampling.temperature = Some(t);
        self
    }

    /// `top_p` of OpenAI requests (`EVAL_AGENT_TOP_P`).
    pub fn top_p(mut self, p: f64) -> Self {
        self.sampling.top_p = Some(p);
        self
    }

    /// `max_tokens` of OpenAI requests (`EVAL_AGENT_MAX_TOKENS`).
    pub fn max_tokens(mut self, n: u64) -> Self {
        self.sampling.max_tokens = Some(n);
        self
    }

    /// `seed` of OpenAI requests (`EVAL_AGENT_SEED`).
    pub fn seed(mut self, seed: i64) -> Self {
        self.sampling.seed = Some(seed);
        self
    }

    /// Tool definitions offered with every sample, after the sample's own
    /// and its dataset's (OpenAI's `{"type": "function", "function": {...}}`,
    /// or just the function object; see [`eval_datasets::tool::definitions`]).
    /// Invalid definitions fail every call, saying why ([`check`](Self::check)
    /// says it first).
    pub fn tools(mut self, definitions: Vec<Value>) -> Self {
        self.tools = eval_datasets::tool::definitions(&Value::Array(definitions));
        self
    }

    /// Applies what `settings` say (a manifest's `spec.evaluation.agent`,
    /// the `evals` command's flags); what they leave out stays as it is.
    #[doc(hidden)]
    pub fn settings(mut self, settings: &AgentSettings) -> Self {
        if let Some(p) = settings.protocol {
            self = self.protocol(p);
        }
        if let Some(m) = &settings.model {
            self = self.model(m.clone());
        }
        if let Some(s) = settings.stream {
            self = self.stream(s);
        }
        if !settings.http.is_empty() {
            let http = settings.http.clone().or(&self.http);
            self.set_http(http);
            self.chosen.http = settings.http.clone().or(&self.chosen.http);
        }
        self
    }

    /// Uses `http` to build requests and read answers; its header values
    /// become [`Secret`]s (masked from now on).
    fn set_http(&mut self, http: HttpMapping) {
        self.headers = Headers::from_pairs(
            http.headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone())),
        )
        .map_err(|e| {
            let setting = http.headers.first().map_or("", |h| h.setting.as_str());
            format!("{setting}: {e}")
        });
        self.http = http;
    }

    /// Whether the settings can make requests: the OpenAI protocol needs a
    /// model, and the agent's tool definitions must be valid.
    pub fn check(&self) -> Result<()> {
        self.check_setup().map_err(|reason| Error::Config {
            what: "agent".into(),
            reason,
        })
    }

    fn check_setup(&self) -> std::result::Result<(), String> {
        if let Err(e) = &self.tools {
            return Err(format!("its tools: {e}"));
        }
        super::mapped::check(&self.http, self.wire_protocol(), self.api_key.is_some())?;
        self.headers.as_ref().map_err(Clone::clone)?;
        if self.stream && self.wire.provider == crate::config::Provider::Anthropic {
            return Err("a streamed Anthropic answer is not read: unset EVAL_AGENT_STREAM (or --stream, HttpAgent::stream) for this agent".into());
        }
        if self.wire_protocol() == Protocol::OpenAi && self.model.is_none() {
            return Err(format!(
                "the OpenAI protocol needs a model{}: set EVAL_AGENT_MODEL (or --model, HttpAgent::model, a manifest's spec.evaluation.agent.model) to the model {} serves",
                if self.protocol.is_none() {
                    " (implied by the URL ending in /chat/completions)"
                } else {
                    ""
                },
                self.shown_url
            ));
        }
        Ok(())
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
    /// allows. Every adaptive agent of the process calling the same origin
    /// (scheme, host, port) shares the limit: clones, and agents built anew
    /// for each sample.
    pub fn adaptive(mut self, on: bool) -> Self {
        self.pacer = self.pacer.adaptive(on);
        self
    }

    /// Replaces the request body mapping.
    pub fn map_request(
        mut self,
        f: impl Fn(&AgentRequest<'_>) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.map_request = Some(Arc::new(f));
        self
    }

    /// Replaces the response body mapping. Its error may be anything that
    /// converts into a boxed error: a `String` or `&str`, a [`ReplyError`](crate::model::ReplyError)
    /// passed on from [`default_reply`](super::default_reply), an error type of your own (its
    /// [`source`](std::error::Error::source) chain is added to the message
    /// where the message does not hold it already). The sample then fails
    /// with [`AgentError::BadResponse`], whose reason is that text, keys
    /// masked.
    pub fn map_response<E>(
        mut self,
        f: impl Fn(&Value) -> std::result::Result<AgentReply, E> + Send + Sync + 'static,
    ) -> Self
    where
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.map_response = Some(Arc::new(move |v: &Value| f(v).map_err(Into::into)));
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
        self.check_setup()
            .map_err(|why| AgentError::Setup(why.into()))?;
        let mut tools = sample.tools.clone();
        if let Ok(own) = &self.tools {
            eval_datasets::tool::add_definitions(&mut tools, own);
        }
        let turns = sample.input.turns();
        let mut messages: Vec<Message> = Vec::with_capacity(turns.len() * 2);
        let mut outputs = Vec::with_capacity(turns.len());
        let mut context = Vec::new();
        let mut response = Response::default();
        for (k, turn) in turns.iter().enumerate() {
            messages.push(Message::user(turn.clone()));
            let request = AgentRequest {
                input: turn,
                messages: &messages,
                agent_args: &sample.agent_args,
                tools: &tools,
            };
            let reply = self.call(&request).await?;
            messages.push(Message::assistant(
                reply.output.clone(),
                reply.tool_calls.clone(),
            ));
            response.usage.add(reply.usage);
            response.ttft = response.ttft.or(reply.ttft);
            response.model = reply.model.or(response.model);
            response.response_id = reply.response_id.or(response.response_id);
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
        // Each request starts a trace of its own in a sample that
        // propagates them (each retry a new span of it).
        let traced = crate::otel::next_request();
        let mut reply = self
            .pacer
            .run(&mut usage, || {
                let traceparent = traced.as_ref().map(crate::otel::Request::attempt);
                self.round_trip(request, traceparent)
            })
            .await?;
        usage.count_reported(
            &format!("the agent at {}", self.shown_url),
            crate::model::Reported::from_usage(&reply.usage),
        );
        reply.usage = usage;
        Ok(reply)
    }

    /// The request body for `request`.
    fn body(&self, request: &AgentRequest<'_>) -> std::result::Result<Value, AgentError> {
        if let Some(f) = &self.map_request {
            return Ok(f(request));
        }
        match self.wire_protocol() {
            Protocol::OpenAi if self.wire.provider == crate::config::Provider::Anthropic => {
                super::anthropic::request_body(
                    request,
                    self.model.as_deref().unwrap_or_default(),
                    &self.sampling,
                )
                .map_err(|why| AgentError::Setup(why.into()))
            }
            Protocol::OpenAi => openai::request_body(
                request,
                self.model.as_deref().unwrap_or_default(),
                &self.sampling,
                self.stream,
            )
            .map_err(|why| AgentError::Setup(why.into())),
            Protocol::Json if self.http.request.is_some() => {
                super::mapped::body(&self.http, request)
                    .unwrap_or(Ok(Value::Null))
                    .map_err(|why| AgentError::Setup(why.into()))
            }
            Protocol::Json => {
                let mut body = json!({
                    "input": request.input,
                    "messages": request.messages,
                    "agent_args": request.agent_args,
                });
                if !request.tools.is_empty() {
                    body["tools"] = Value::Array(request.tools.to_vec());
                }
                if self.stream {
                    body["stream"] = Value::Bool(true);
                }
                Ok(body)
            }
        }
    }

    /// One HTTP round trip.
    async fn round_trip(
        &self,
        request: &AgentRequest<'_>,
        traceparent: Option<String>,
    ) -> Attempt<AgentReply> {
        let body = match self.body(request) {
            Ok(body) => body,
            Err(e) => return Attempt::Failed(e),
        };
        let builder = match self.post(&body, request, traceparent.as_deref()) {
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
        let headers = response.headers().clone();
        let retry_after = crate::http::retry_after_header(&response);
        let refused = |refusal| {
            Attempt::Failed(AgentError::Refused {
                url: self.shown_url.clone(),
                refusal,
            })
        };
        if status.is_success() && super::stream::is_event_stream(&response) {
            let stream = match BoundedBody::new(response, self.max_response_bytes, self.timeout) {
                Ok(stream) => stream,
                Err(refusal) => return refused(refusal),
            };
            let json_events = self.wire_protocol() == Protocol::Json;
            return match super::stream::read(stream, started, json_events, &body).await {
                Ok(reply) => {
                    tracing::debug!(url = %self.shown_url, elapsed = ?started.elapsed(), ttft = ?reply.ttft, "agent streamed its answer");
                    Attempt::Done(reply)
                }
                Err(super::stream::StreamError::Refused(refusal)) => refused(refusal),
                Err(super::stream::StreamError::Bad(reason)) => {
                    Attempt::Failed(AgentError::BadResponse {
                        url: self.shown_url.clone(),
                        reason: crate::secrets::mask(&reason).into_owned(),
                    })
                }
            };
        }
        let bytes = match read_body(response, self.max_response_bytes, self.timeout).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refused(refusal),
        };
        tracing::debug!(url = %self.shown_url, status = status.as_u16(), elapsed = ?started.elapsed(), "agent answered");
        if !status.is_success() {
            let error = AgentError::Status {
                url: self.shown_url.clone(),
                status: status.as_u16(),
                body: self.error_body(status.as_u16(), &bytes),
            };
            // Anthropic's 529: overloaded, as 503.
            let overloaded =
                status.as_u16() == 529 && self.wire.provider == crate::config::Provider::Anthropic;
            return if matches!(status.as_u16(), 429 | 503) || overloaded {
                Attempt::Overloaded { error, retry_after }
            } else {
                Attempt::Failed(error)
            };
        }
        // Bytes that are not UTF-8 are the agent's error, said as such (not
        // "not JSON", and never decoded lossily into an answer).
        if let Err(e) = super::sse::InvalidUtf8::check(&bytes, 0) {
            return Attempt::Failed(AgentError::BadResponse {
                url: self.shown_url.clone(),
                reason: format!("the answer is not text: {e}"),
            });
        }
        let value: Value = match crate::http::reply_json(&bytes, self.max_response_bytes) {
            Ok(value @ (Value::Object(_) | Value::Array(_))) => value,
            // A text answer that is not a JSON document is the output.
            _ if self.map_response.is_none()
                && self.wire_protocol() == Protocol::Json
                && super::mapped::is_plain_text(&headers) =>
            {
                let text = String::from_utf8_lossy(&bytes);
                return match super::mapped::plain_reply(&self.http, &text) {
                    Ok(reply) => Attempt::Done(reply),
                    Err(reason) => Attempt::Failed(AgentError::BadResponse {
                        url: self.shown_url.clone(),
                        reason: crate::secrets::mask(&reason).into_owned(),
                    }),
                };
            }
            Ok(value) => value,
            Err(e @ eval_datasets::json::BoundedJsonError::TooBig { .. }) => {
                return Attempt::Failed(AgentError::BadResponse {
                    url: self.shown_url.clone(),
                    reason: format!(
                        "refused: {e} (EVAL_MAX_RESPONSE_BYTES × {})",
                        crate::http::PARSED_PER_BYTE
                    ),
                });
            }
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
        let reply = match (&self.map_response, self.wire_protocol()) {
            (Some(f), _) => f(&value).map_err(|e| with_sources(&*e)),
            (None, Protocol::OpenAi)
                if self.wire.provider == crate::config::Provider::Anthropic =>
            {
                super::anthropic::parse_reply(&value)
            }
            (None, Protocol::OpenAi) => openai::parse_reply(&value)
                .map(|mut reply| {
                    // An answer without `usage` is counted, as a stream's.
                    if value.get("usage").is_none_or(Value::is_null) {
                        super::estimate_unreported(&mut reply, &body);
                    }
                    reply
                })
                .map_err(|e| e.to_string()),
            (None, Protocol::Json) if self.http.reads_paths() => {
                super::mapped::read(&self.http, &value, super::default_reply)
            }
            (None, Protocol::Json) => {
                super::default_reply(&value).map_err(|e| super::mapped::contract_error(&e, &value))
            }
        };
        match reply {
            Ok(reply) => Attempt::Done(reply),
            Err(reason) => Attempt::Failed(AgentError::BadResponse {
                url: self.shown_url.clone(),
                reason: crate::secrets::mask(&reason).into_owned(),
            }),
        }
    }

    /// The request of `body` to the agent (a POST unless the mapping says
    /// otherwise; a GET without body), with its query, headers, key and the
    /// request's trace.
    fn post(
        &self,
        body: &Value,
        request: &AgentRequest<'_>,
        traceparent: Option<&str>,
    ) -> Result<reqwest::RequestBuilder, AgentError> {
        let client = runtime_client(self.url.as_str())
            .map_err(|e| AgentError::Setup(e.to_string().into()))?;
        let setup = |why: String| AgentError::Setup(why.into());
        let method = super::mapped::method(&self.http);
        let url = super::mapped::url(&self.url, &self.http, request).map_err(setup)?;
        let mut builder = client.request(method.clone(), url).timeout(self.timeout);
        if method != reqwest::Method::GET {
            builder = builder.json(body);
        }
        if self.stream {
            builder = builder.header(
                reqwest::header::ACCEPT,
                "text/event-stream, application/json",
            );
        }
        if let Some(tp) = traceparent {
            builder = builder.header("traceparent", tp);
        }
        if self.api_key.is_some()
            && (!self.url.username().is_empty() || self.url.password().is_some())
        {
            return Err(AgentError::Setup(
                "invalid agent credentials: the agent URL carries a user/password and an API key is set too; use one".into(),
            ));
        }
        let builder = self
            .wire
            .authorize(builder, self.api_key.as_ref())
            .map_err(|why| AgentError::Setup(format!("invalid agent API key: {why}").into()))?;
        let headers = self.headers.as_ref().map_err(|e| setup(e.clone()))?;
        Ok(headers.apply(builder))
    }

    /// An error answer's body (see [`Wire::agent_error`](crate::provider::Wire::agent_error)).
    fn error_body(&self, status: u16, bytes: &[u8]) -> String {
        let openai = self.wire_protocol() == Protocol::OpenAi;
        let model = self.model.as_deref().unwrap_or("");
        let shown = self.shown_body(bytes, 200);
        self.wire.agent_error(openai, status, bytes, model, shown)
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
