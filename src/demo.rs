//! A deterministic demo RAG agent served over HTTP.
//!
//! The agent answers from a small built-in [`CORPUS`] of documents about
//! retrieval-augmented generation, LLM evaluation and Rust testing:
//! questions are matched to documents by word overlap (stop words ignored),
//! the best document's canonical answer is returned with the top passages as
//! `context`. It also remembers facts the user stated earlier in the
//! conversation ("my name is X", "I like X", "I live in X") and does simple
//! arithmetic ("What is 2 + 2?" → `4`). See [`respond`] for the rules.
//!
//! # HTTP API
//!
//! | route | request | response |
//! |---|---|---|
//! | `POST /`, `POST /v1/respond` | `{"input": "...", "messages": [{"role", "content"}], "agent_args": {...}}` | `{"output": "...", "context": ["...", ...]}` |
//! | `POST /v1/chat/completions` | OpenAI chat-completions request (`model`, `messages`, `tools`, `stream`) | OpenAI chat-completions response (`content`, `tool_calls`, `usage`), or its chunks as server-sent events; see [`chat`] |
//! | `GET /health` | — | `ok` |
//!
//! For `/` and `/v1/respond`, `messages` and `agent_args` are optional.
//! `input` is the current user turn; when it is absent the last `user`
//! message is. The other `user` messages are the conversation history
//! (`assistant` and `system` messages are ignored); a last `user` message
//! equal to `input` is not counted twice. `input` may also be an array of
//! user turns (the last one is answered). `agent_args.top_k` (0–10, default
//! 2) sets how many passages `context` holds at most.
//!
//! A malformed request gets `400` with `{"error": "..."}`; unknown routes get
//! `404` with the same shape. The agent routes wait [`DemoConfig::latency`]
//! before answering (an async sleep, so concurrent requests overlap);
//! `/health` answers at once. With [`DemoConfig::rate_limit`] they answer
//! `429` above a rate (see [`RateLimit`]).

mod agent;
mod bounded;
pub mod chat;
mod limit;
pub mod spans;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

pub use agent::{CORPUS, DEFAULT_TOP_K, DONT_KNOW, Document, Reply, respond};
pub use chat::{CALCULATOR, LOOKUP, tool_definitions};
pub use limit::{LimitCounts, RATE_LIMIT_ENV, RETRY_AFTER_ENV, RateLimit};

/// Environment variable read by [`DemoConfig::from_env`]: artificial latency
/// in whole milliseconds.
pub const LATENCY_ENV: &str = "DEMO_AGENT_LATENCY_MS";

/// Largest `agent_args.top_k` accepted.
pub const MAX_TOP_K: usize = 10;

/// Model name reported by `/v1/chat/completions` when the request names none.
pub const MODEL_NAME: &str = "demo-agent";

/// How the demo agent behaves.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DemoConfig {
    /// Artificial delay before each agent answer (default: none).
    pub latency: Duration,
    /// Answer `429` above this rate (default: no limit).
    pub rate_limit: Option<RateLimit>,
    /// Where to send the agent's own steps as OpenTelemetry spans (an
    /// OTLP/HTTP endpoint, e.g. `http://127.0.0.1:4318`; see [`spans`]).
    /// Default: none sent.
    pub otlp: Option<String>,
}

impl DemoConfig {
    /// With [`latency`](Self::latency) set.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// With [`otlp`](Self::otlp) set: the agent sends its steps as spans
    /// to `endpoint` (`/v1/traces` appended unless there).
    pub fn with_otlp(mut self, endpoint: impl Into<String>) -> Self {
        self.otlp = Some(spans::traces_url(&endpoint.into()));
        self
    }

    /// With [`rate_limit`](Self::rate_limit) set.
    pub fn with_rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }

    /// Configuration from the environment: [`LATENCY_ENV`]
    /// (`DEMO_AGENT_LATENCY_MS`) sets [`latency`](Self::latency) in whole
    /// milliseconds; [`RATE_LIMIT_ENV`] (`DEMO_AGENT_RATE_LIMIT`, requests per
    /// second) and [`RETRY_AFTER_ENV`] (`DEMO_AGENT_RETRY_AFTER`, `on`/`off`)
    /// set [`rate_limit`](Self::rate_limit). Unset or blank means the
    /// default; any other value that cannot be used is an error.
    pub fn from_env() -> Result<DemoConfig, ConfigError> {
        Ok(DemoConfig {
            latency: latency_from_env()?,
            rate_limit: RateLimit::from_env()?,
            otlp: None,
        })
    }
}

/// The latency [`LATENCY_ENV`] sets (zero when unset or blank).
pub fn latency_from_env() -> Result<Duration, ConfigError> {
    Ok(match env_var(LATENCY_ENV)? {
        Some(value) => parse_latency_ms(LATENCY_ENV, &value)?.unwrap_or_default(),
        None => Duration::ZERO,
    })
}

/// An environment variable's value; `None` when unset or blank.
fn env_var(name: &str) -> Result<Option<String>, ConfigError> {
    match std::env::var(name) {
        Ok(value) if value.trim().is_empty() => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(value)) => Err(ConfigError {
            source_name: name.to_string(),
            value: value.to_string_lossy().into_owned(),
            expected: "valid UTF-8",
        }),
    }
}

/// Parses a latency in whole milliseconds given by `source_name` (an
/// environment variable or a command-line flag, used in the error). `None`
/// for a blank value.
pub fn parse_latency_ms(source_name: &str, value: &str) -> Result<Option<Duration>, ConfigError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    trimmed
        .parse::<u64>()
        .map(|ms| Some(Duration::from_millis(ms)))
        .map_err(|_| ConfigError {
            source_name: source_name.to_string(),
            value: value.to_string(),
            expected: "a whole number of milliseconds (like 250)",
        })
}

/// An invalid setting of the demo agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Where the value came from (`DEMO_AGENT_LATENCY_MS`, `--latency-ms`).
    pub source_name: String,
    /// The rejected value.
    pub value: String,
    /// What was expected.
    pub expected: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} must be {}, got {:?}",
            self.source_name, self.expected, self.value
        )
    }
}

impl std::error::Error for ConfigError {}

/// The demo agent's routes as an [`axum::Router`] (see the
/// [module docs](self) for the API).
pub fn router(config: DemoConfig) -> Router {
    build(config).0
}

/// The router, and the rate limit's bucket when there is one.
fn build(config: DemoConfig) -> (Router, Option<Arc<limit::Bucket>>) {
    let bucket = config.rate_limit.map(|l| Arc::new(limit::Bucket::new(l)));
    let state = Arc::new(AppState {
        config,
        completions: AtomicU64::new(0),
        index: eval_runtime::retrieval::MemoryRetriever::new(),
    });
    let answers = Router::new()
        .route("/", post(respond_route))
        .route("/v1/respond", post(respond_route))
        .route("/v1/chat/completions", post(chat::route));
    let answers = match &bucket {
        Some(b) => answers.route_layer(axum::middleware::from_fn_with_state(
            b.clone(),
            limit::check,
        )),
        None => answers,
    };
    let router = answers
        .route("/health", get(health_route))
        .route("/retrieval/delete", post(retrieval_delete_route))
        .route("/retrieval/ingest", post(retrieval_ingest_route))
        .route("/retrieval/search", post(retrieval_search_route))
        .fallback(not_found)
        .with_state(state);
    (router, bucket)
}

pub use bounded::{BODY_TIMEOUT, HEADER_TIMEOUT, MAX_CONNECTIONS};

/// Serves the demo agent on `listener` until an I/O error ends it (in
/// practice forever: failed connections are dropped and serving goes on).
pub async fn serve(listener: tokio::net::TcpListener, config: DemoConfig) -> std::io::Result<()> {
    serve_router(listener, router(config)).await
}

/// Serves `app` on `listener` as the demo servers do: headers within
/// [`HEADER_TIMEOUT`], a body within [`BODY_TIMEOUT`] of its headers, at
/// most [`MAX_CONNECTIONS`] connections (beyond, `503`).
pub async fn serve_router(listener: tokio::net::TcpListener, app: Router) -> std::io::Result<()> {
    bounded::serve(listener, app, bounded::BOUNDS, std::future::pending()).await
}

/// A demo agent running on a background thread; see [`spawn`].
///
/// Dropping a `DemoServer` does **not** stop the server: its thread is
/// detached and keeps serving until the process exits (so
/// `spawn(cfg)?.url()` is fine, and tests can keep one server in a static
/// for the whole run). Call [`shutdown`](Self::shutdown) to stop it.
#[derive(Debug)]
pub struct DemoServer {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<std::io::Result<()>>,
    bucket: Option<Arc<limit::Bucket>>,
}

impl DemoServer {
    /// Base URL, like `http://127.0.0.1:41234` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// With a [`rate_limit`](DemoConfig::rate_limit): the requests it
    /// answered and refused so far.
    pub fn limit_counts(&self) -> Option<LimitCounts> {
        self.bucket.as_ref().map(|b| b.counts())
    }

    /// Stops accepting connections, lets in-flight requests finish, and
    /// waits for the server thread to end.
    pub fn shutdown(self) -> std::io::Result<()> {
        let _ = self.stop.send(());
        match self.thread.join() {
            Ok(result) => result,
            Err(_) => Err(std::io::Error::other("demo agent thread panicked")),
        }
    }
}

/// Starts the demo agent on `127.0.0.1` with an OS-assigned port, on a
/// dedicated thread (`demo-agent`) running its own two-worker tokio runtime.
///
/// Returns once the server is listening and its runtime is up, so requests
/// can be sent right away. Usable from synchronous code and from inside
/// another tokio runtime alike (it blocks the calling thread only for that
/// start-up).
pub fn spawn(config: DemoConfig) -> std::io::Result<DemoServer> {
    let (app, bucket) = build(config);
    let mut server = spawn_router(app, "demo-agent")?;
    server.bucket = bucket;
    Ok(server)
}

/// The demo agent's corpus as files: `<id>.md` in `dir`, each `# title`, a
/// blank line and the passage (what `evals generate` reads; the copy in
/// `examples/corpus/` is this, checked by a test). Returns the files written.
pub fn write_corpus(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for doc in CORPUS {
        let path = dir.join(format!("{}.md", doc.id));
        std::fs::write(&path, corpus_file(doc))?;
        written.push(path);
    }
    Ok(written)
}

/// The text of one corpus document's file.
pub fn corpus_file(doc: &Document) -> String {
    let text = doc.text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("# {}\n\n{text}\n", doc.title)
}

/// Serves `app` like [`spawn`] does, on a thread named `name`: the demo
/// agent, or another local service of this crate (e.g.
/// [`judge::spawn`](crate::judge::spawn)).
pub fn spawn_router(app: Router, name: &str) -> std::io::Result<DemoServer> {
    let std_listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
    let (stop, stopped) = oneshot::channel::<()>();
    // The runtime is built, used and dropped on the server thread only, so
    // `spawn` also works when called from inside another runtime.
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("demo-agent-worker")
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(std::io::Error::new(e.kind(), e.to_string())));
                    return Err(e);
                }
            };
            let result = runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(std_listener) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = ready_tx.send(Err(std::io::Error::new(e.kind(), e.to_string())));
                        return Err(e);
                    }
                };
                let _ = ready_tx.send(Ok(()));
                // issue37:otel-in: bounded (headers, bodies, connections).
                bounded::serve(listener, app, bounded::BOUNDS, async move {
                    // A dropped `DemoServer` closes the channel without a
                    // message: keep serving.
                    if stopped.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                })
                .await
            });
            // Do not wait for lingering keep-alive connections.
            runtime.shutdown_background();
            result
        })?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(DemoServer {
            addr,
            stop,
            thread,
            bucket: None,
        }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(std::io::Error::other(
            "demo agent thread ended before it started serving",
        )),
    }
}

// ---------------------------------------------------------------------------
// Handlers

struct AppState {
    config: DemoConfig,
    completions: AtomicU64,
    /// The retrieval contract's index (`/retrieval/*`).
    index: eval_runtime::retrieval::MemoryRetriever,
}

/// A failed request: status and message, sent as `{"error": message}`.
struct ApiError(StatusCode, String);

impl ApiError {
    fn bad_request(message: impl Into<String>) -> Self {
        ApiError(StatusCode::BAD_REQUEST, message.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

// The retrieval contract of `eval_runtime::retrieval` (delete, ingest, search),
// over an in-memory index ranked by shared words.

fn json_body(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("body is not JSON: {e}")))
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, ApiError> {
    v.get(key)
        .ok_or_else(|| ApiError::bad_request(format!("missing `{key}`")))
}

async fn retrieval_delete_route(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    use eval_runtime::retrieval::Retriever;
    let run = async {
        let v = json_body(&body)?;
        let prefix = field(&v, "prefix")?
            .as_str()
            .ok_or_else(|| ApiError::bad_request("`prefix` must be a string"))?;
        let deleted = state
            .index
            .delete_prefix(prefix)
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        Ok::<_, ApiError>(json!({ "deleted": deleted }))
    };
    match run.await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn retrieval_ingest_route(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    use eval_runtime::retrieval::{IngestDocument, Retriever};
    let run = async {
        let v = json_body(&body)?;
        let docs = field(&v, "documents")?
            .as_array()
            .ok_or_else(|| ApiError::bad_request("`documents` must be an array"))?;
        let mut list = Vec::with_capacity(docs.len());
        for (i, d) in docs.iter().enumerate() {
            let text = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
            let (Some(source_id), Some(content)) = (text("sourceId"), text("content")) else {
                return Err(ApiError::bad_request(format!(
                    "documents[{i}] needs `sourceId` and `content` strings"
                )));
            };
            list.push(IngestDocument {
                source_id,
                content,
                metadata: d
                    .get("metadata")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            });
        }
        state
            .index
            .ingest(&list)
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        Ok::<_, ApiError>(json!({ "ingested": list.len() }))
    };
    match run.await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn retrieval_search_route(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    use eval_runtime::retrieval::Retriever;
    delay(&state.config).await;
    let run = async {
        let v = json_body(&body)?;
        let query = field(&v, "query")?
            .as_str()
            .ok_or_else(|| ApiError::bad_request("`query` must be a string"))?;
        let prefix = v.get("scopePrefix").and_then(Value::as_str).unwrap_or("");
        let k = v
            .get("topK")
            .and_then(Value::as_u64)
            .unwrap_or(10)
            .clamp(1, 1000) as usize;
        let hits = state
            .index
            .search(query, prefix, k)
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        let results: Vec<Value> = hits
            .iter()
            .map(|h| json!({"sourceId": h.source_id, "score": h.score, "content": h.content}))
            .collect();
        Ok::<_, ApiError>(json!({ "results": results }))
    };
    match run.await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn health_route() -> &'static str {
    "ok"
}

async fn not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, "no such route".to_string())
}

async fn respond_route(
    State(state): State<Arc<AppState>>,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let Some(endpoint) = &state.config.otlp else {
        delay(&state.config).await;
        return match agent_request(&body) {
            Ok(request) => {
                let reply = respond(&request.history, &request.input, request.top_k);
                Json(json!({ "output": reply.output, "context": reply.context })).into_response()
            }
            Err(e) => e.into_response(),
        };
    };
    // The same answer, its steps recorded as spans (see `spans`): the
    // latency is the final LLM step's.
    let traceparent = headers.get("traceparent").and_then(|v| v.to_str().ok());
    let mut recorder = spans::Recorder::new(traceparent);
    let request = match agent_request(&body) {
        Ok(request) => request,
        Err(e) => return e.into_response(),
    };
    let (reply, found) = agent::answer(&request.history, &request.input, request.top_k);
    recorder.tools(&found, &request.input);
    let llm_started = std::time::SystemTime::now();
    delay(&state.config).await;
    recorder.chat(llm_started, &request.input, &reply);
    recorder.send(uri.path(), endpoint);
    Json(json!({ "output": reply.output, "context": reply.context })).into_response()
}

async fn delay(config: &DemoConfig) {
    if !config.latency.is_zero() {
        tokio::time::sleep(config.latency).await;
    }
}

// ---------------------------------------------------------------------------
// Request parsing

/// A parsed agent request.
#[derive(Debug, PartialEq)]
struct AgentRequest {
    history: Vec<String>,
    input: String,
    top_k: usize,
}

fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request(
            "the request body must be a JSON object",
        )),
        Err(e) => Err(ApiError::bad_request(format!(
            "the request body is not valid JSON: {e}"
        ))),
    }
}

fn agent_request(body: &[u8]) -> Result<AgentRequest, ApiError> {
    let request = json_object(body)?;
    let mut history = match request.get("messages") {
        None | Some(Value::Null) => Vec::new(),
        Some(messages) => user_turns(messages)?,
    };
    let input = match request.get("input") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(turns)) => {
            // A conversation given as its user turns.
            let mut given = Vec::with_capacity(turns.len());
            for (i, turn) in turns.iter().enumerate() {
                match turn {
                    Value::String(s) => given.push(s.clone()),
                    _ => {
                        return Err(ApiError::bad_request(format!(
                            "`input[{i}]` must be a string"
                        )));
                    }
                }
            }
            let last = given.pop();
            history.append(&mut given);
            last
        }
        Some(_) => {
            return Err(ApiError::bad_request(
                "`input` must be a string (or an array of user turns)",
            ));
        }
    };
    let input = match input.filter(|s| !s.trim().is_empty()) {
        Some(input) => {
            if history.last().is_some_and(|h| h.trim() == input.trim()) {
                history.pop();
            }
            input
        }
        None => history.pop().ok_or_else(|| {
            ApiError::bad_request(
                "missing `input` (a non-empty string), and `messages` has no user message to use instead",
            )
        })?,
    };
    let top_k = match request.get("agent_args") {
        None | Some(Value::Null) => DEFAULT_TOP_K,
        Some(Value::Object(args)) => match args.get("top_k") {
            None | Some(Value::Null) => DEFAULT_TOP_K,
            Some(v) => match v.as_u64() {
                Some(k) if k <= MAX_TOP_K as u64 => k as usize,
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "`agent_args.top_k` must be an integer from 0 to {MAX_TOP_K}"
                    )));
                }
            },
        },
        Some(_) => return Err(ApiError::bad_request("`agent_args` must be a JSON object")),
    };
    Ok(AgentRequest {
        history,
        input,
        top_k,
    })
}

/// The text of the `user` messages in an OpenAI-style `messages` array.
fn user_turns(messages: &Value) -> Result<Vec<String>, ApiError> {
    let Value::Array(items) = messages else {
        return Err(ApiError::bad_request(
            "`messages` must be an array of {\"role\", \"content\"} objects",
        ));
    };
    let mut turns = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(message) = item else {
            return Err(ApiError::bad_request(format!(
                "`messages[{i}]` must be an object with `role` and `content`"
            )));
        };
        let Some(Value::String(role)) = message.get("role") else {
            return Err(ApiError::bad_request(format!(
                "`messages[{i}].role` must be a string"
            )));
        };
        let content = message.get("content").unwrap_or(&Value::Null);
        let text = message_text(content).map_err(|()| {
            ApiError::bad_request(format!(
                "`messages[{i}].content` must be a string, null, or an array of text parts"
            ))
        })?;
        if role == "user"
            && let Some(text) = text
        {
            turns.push(text);
        }
    }
    Ok(turns)
}

/// A message's `content`: a string, `null`, or an array of content parts
/// (`{"type": "text", "text": "..."}`; other part types are skipped).
fn message_text(content: &Value) -> Result<Option<String>, ()> {
    match content {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Array(parts) => {
            let mut texts = Vec::new();
            for part in parts {
                match part {
                    Value::String(s) => texts.push(s.as_str()),
                    Value::Object(p) => {
                        if let Some(Value::String(t)) = p.get("text") {
                            texts.push(t.as_str());
                        }
                    }
                    _ => return Err(()),
                }
            }
            Ok((!texts.is_empty()).then(|| texts.join("\n")))
        }
        _ => Err(()),
    }
}

fn count_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

#[cfg(test)]
mod tests;
