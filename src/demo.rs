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
//! | `POST /v1/chat/completions` | OpenAI chat-completions request (`model`, `messages`) | OpenAI chat-completions response |
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
//! `/health` answers at once.

mod agent;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

pub use agent::{CORPUS, DEFAULT_TOP_K, DONT_KNOW, Document, Reply, respond};

/// Environment variable read by [`DemoConfig::from_env`]: artificial latency
/// in whole milliseconds.
pub const LATENCY_ENV: &str = "DEMO_AGENT_LATENCY_MS";

/// Largest `agent_args.top_k` accepted.
pub const MAX_TOP_K: usize = 10;

/// Model name reported by `/v1/chat/completions` when the request names none.
pub const MODEL_NAME: &str = "demo-agent";

/// How the demo agent behaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoConfig {
    /// Artificial delay before each agent answer (default: none).
    pub latency: Duration,
}

impl DemoConfig {
    /// Configuration from the environment: [`LATENCY_ENV`]
    /// (`DEMO_AGENT_LATENCY_MS`) sets [`latency`](Self::latency) in whole
    /// milliseconds. Unset or blank means the default; any other value that
    /// is not a non-negative integer is an error.
    pub fn from_env() -> Result<DemoConfig, ConfigError> {
        match std::env::var(LATENCY_ENV) {
            Ok(value) => Ok(DemoConfig {
                latency: parse_latency_ms(LATENCY_ENV, &value)?.unwrap_or_default(),
            }),
            Err(std::env::VarError::NotPresent) => Ok(DemoConfig::default()),
            Err(std::env::VarError::NotUnicode(value)) => Err(ConfigError {
                source_name: LATENCY_ENV.to_string(),
                value: value.to_string_lossy().into_owned(),
            }),
        }
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
        })
}

/// An invalid latency setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Where the value came from (`DEMO_AGENT_LATENCY_MS`, `--latency-ms`).
    pub source_name: String,
    /// The rejected value.
    pub value: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} must be a whole number of milliseconds (like 250), got {:?}",
            self.source_name, self.value
        )
    }
}

impl std::error::Error for ConfigError {}

/// The demo agent's routes as an [`axum::Router`] (see the
/// [module docs](self) for the API).
pub fn router(config: DemoConfig) -> Router {
    let state = Arc::new(AppState {
        config,
        completions: AtomicU64::new(0),
        index: eval_runtime::retrieval::MemoryRetriever::new(),
    });
    Router::new()
        .route("/", post(respond_route))
        .route("/v1/respond", post(respond_route))
        .route("/v1/chat/completions", post(chat_completions_route))
        .route("/health", get(health_route))
        .route("/retrieval/delete", post(retrieval_delete_route))
        .route("/retrieval/ingest", post(retrieval_ingest_route))
        .route("/retrieval/search", post(retrieval_search_route))
        .fallback(not_found)
        .with_state(state)
}

/// Serves the demo agent on `listener` until an I/O error ends it (in
/// practice forever: failed connections are dropped and serving goes on).
pub async fn serve(listener: tokio::net::TcpListener, config: DemoConfig) -> std::io::Result<()> {
    axum::serve(listener, router(config)).await
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
    let std_listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
    let (stop, stopped) = oneshot::channel::<()>();
    // The runtime is built, used and dropped on the server thread only, so
    // `spawn` also works when called from inside another runtime.
    let thread = std::thread::Builder::new()
        .name("demo-agent".to_string())
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
                axum::serve(listener, router(config))
                    .with_graceful_shutdown(async move {
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
        Ok(Ok(())) => Ok(DemoServer { addr, stop, thread }),
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

async fn respond_route(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    delay(&state.config).await;
    match agent_request(&body) {
        Ok(request) => {
            let reply = respond(&request.history, &request.input, request.top_k);
            Json(json!({ "output": reply.output, "context": reply.context })).into_response()
        }
        Err(e) => e.into_response(),
    }
}

async fn chat_completions_route(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    delay(&state.config).await;
    let request = match chat_request(&body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let reply = respond(&request.history, &request.input, DEFAULT_TOP_K);
    let n = state.completions.fetch_add(1, Ordering::Relaxed) + 1;
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let completion_tokens = count_tokens(&reply.output);
    Json(json!({
        "id": format!("chatcmpl-demo-{n}"),
        "object": "chat.completion",
        "created": created,
        "model": request.model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": reply.output },
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": request.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": request.prompt_tokens + completion_tokens,
        },
    }))
    .into_response()
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

/// A parsed chat-completions request.
#[derive(Debug, PartialEq)]
struct ChatRequest {
    model: String,
    history: Vec<String>,
    input: String,
    prompt_tokens: u64,
}

fn chat_request(body: &[u8]) -> Result<ChatRequest, ApiError> {
    let request = json_object(body)?;
    let model = match request.get("model") {
        None | Some(Value::Null) => MODEL_NAME.to_string(),
        Some(Value::String(m)) => m.clone(),
        Some(_) => return Err(ApiError::bad_request("`model` must be a string")),
    };
    if request.get("stream").and_then(Value::as_bool) == Some(true) {
        return Err(ApiError::bad_request(
            "streaming is not supported; send `\"stream\": false` or leave it out",
        ));
    }
    let messages = match request.get("messages") {
        Some(m @ Value::Array(items)) if !items.is_empty() => m,
        _ => {
            return Err(ApiError::bad_request(
                "`messages` must be a non-empty array of {\"role\", \"content\"} objects",
            ));
        }
    };
    let prompt_tokens = messages
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| message_text(m.get("content")?).ok().flatten())
        .map(|t| count_tokens(&t))
        .sum();
    let mut history = user_turns(messages)?;
    let input = history
        .pop()
        .ok_or_else(|| ApiError::bad_request("`messages` has no user message"))?;
    Ok(ChatRequest {
        model,
        history,
        input,
        prompt_tokens,
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
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::OnceLock;
    use std::time::Instant;

    use super::*;

    /// One server shared by the tests (kept for the process lifetime).
    fn server() -> &'static DemoServer {
        static SERVER: OnceLock<DemoServer> = OnceLock::new();
        SERVER.get_or_init(|| spawn(DemoConfig::default()).expect("start demo agent"))
    }

    /// Sends one HTTP/1.1 request over a raw socket; returns status and body.
    fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read response");
        let raw = String::from_utf8(raw).expect("UTF-8 response");
        let (head, body) = raw.split_once("\r\n\r\n").expect("header end");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let chunked = head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked");
        let body = if chunked {
            dechunk(body)
        } else {
            body.to_string()
        };
        (status, body)
    }

    fn dechunk(mut body: &str) -> String {
        let mut out = String::new();
        while let Some((size, rest)) = body.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            if size == 0 {
                break;
            }
            out.push_str(&rest[..size]);
            body = &rest[size + 2..];
        }
        out
    }

    fn post_json(addr: SocketAddr, path: &str, body: Value) -> (u16, Value) {
        let (status, text) = http(addr, "POST", path, &body.to_string());
        let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, value)
    }

    #[test]
    fn answers_a_question_with_context() {
        let s = server();
        assert!(s.url().starts_with("http://127.0.0.1:") && !s.url().ends_with('/'));
        for path in ["/", "/v1/respond"] {
            let (status, body) = post_json(
                s.addr(),
                path,
                json!({ "input": "What is the capital of France?" }),
            );
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["output"], "Paris is the capital of France.");
            let context = body["context"].as_array().unwrap();
            assert!((1..=2).contains(&context.len()), "{body}");
            assert!(context[0].as_str().unwrap().contains("capital"), "{body}");
        }
        let (status, body) = post_json(
            s.addr(),
            "/",
            json!({ "input": "What is RAG?", "agent_args": { "top_k": 1 } }),
        );
        assert_eq!(status, 200);
        assert_eq!(body["context"].as_array().unwrap().len(), 1);
        let (_, body) = post_json(s.addr(), "/", json!({ "input": "Who painted it?" }));
        assert_eq!(body, json!({ "output": "I don't know.", "context": [] }));
    }

    #[test]
    fn remembers_earlier_turns() {
        let s = server();
        let (status, body) = post_json(
            s.addr(),
            "/v1/respond",
            json!({
                "input": "What's my name?",
                "messages": [
                    { "role": "system", "content": "You are helpful. My name is System." },
                    { "role": "user", "content": "Hi! My name is Ada." },
                    { "role": "assistant", "content": "Nice to meet you, Bob." },
                    { "role": "user", "content": "What's my name?" },
                ],
            }),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["output"], "Your name is Ada.");
        assert_eq!(body["context"], json!([]));

        // Without `input`, the last user message is the question.
        let (_, body) = post_json(
            s.addr(),
            "/",
            json!({ "messages": [
                { "role": "user", "content": "I like apples." },
                { "role": "user", "content": "Sorry, I meant I like mangoes." },
                { "role": "user", "content": [{ "type": "text", "text": "What is my favorite fruit?" }] },
            ] }),
        );
        assert_eq!(body["output"], "You like mangoes.");

        // `input` as an array of turns.
        let (_, body) = post_json(
            s.addr(),
            "/",
            json!({ "input": ["I live in Lyon.", "Where do I live?"] }),
        );
        assert_eq!(body["output"], "You live in Lyon.");
    }

    #[test]
    fn speaks_openai_chat_completions() {
        let s = server();
        let (status, body) = post_json(
            s.addr(),
            "/v1/chat/completions",
            json!({
                "model": "gpt-test",
                "messages": [
                    { "role": "system", "content": "Be brief." },
                    { "role": "user", "content": "What is 2 + 2?" },
                ],
            }),
        );
        assert_eq!(status, 200, "{body}");
        assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert_eq!(body["object"], "chat.completion");
        assert!(body["created"].as_u64().unwrap() > 1_600_000_000);
        assert_eq!(body["model"], "gpt-test");
        let choices = body["choices"].as_array().unwrap();
        assert_eq!(choices.len(), 1);
        assert_eq!(choices[0]["index"], 0);
        assert_eq!(choices[0]["finish_reason"], "stop");
        assert_eq!(
            choices[0]["message"],
            json!({ "role": "assistant", "content": "4" })
        );
        let usage = &body["usage"];
        assert_eq!(usage["prompt_tokens"], 7); // whitespace-separated words
        assert_eq!(usage["completion_tokens"], 1);
        assert_eq!(usage["total_tokens"], 8);

        let (status, body) = post_json(
            s.addr(),
            "/v1/chat/completions",
            json!({ "messages": [{ "role": "system", "content": "hi" }] }),
        );
        assert_eq!(status, 400);
        assert!(body["error"].is_string());
    }

    #[test]
    fn rejects_bad_requests_with_400() {
        let s = server();
        let bad = [
            ("/", "{not json"),
            ("/", ""),
            ("/", "[1, 2]"),
            ("/", "{}"),
            ("/", r#"{"input": "   "}"#),
            ("/", r#"{"input": 42}"#),
            (
                "/v1/respond",
                r#"{"messages": [{"role": "assistant", "content": "hi"}]}"#,
            ),
            ("/v1/respond", r#"{"messages": "hello"}"#),
            (
                "/v1/respond",
                r#"{"messages": [{"role": "user", "content": 3}]}"#,
            ),
            (
                "/v1/respond",
                r#"{"input": "hi", "agent_args": {"top_k": -1}}"#,
            ),
            ("/v1/respond", r#"{"input": "hi", "agent_args": [1]}"#),
            ("/v1/chat/completions", "{\"messages\": ["),
            ("/v1/chat/completions", r#"{"messages": []}"#),
            (
                "/v1/chat/completions",
                r#"{"model": 1, "messages": [{"role": "user", "content": "hi"}]}"#,
            ),
            (
                "/v1/chat/completions",
                r#"{"stream": true, "messages": [{"role": "user", "content": "hi"}]}"#,
            ),
        ];
        for (path, body) in bad {
            let (status, text) = http(s.addr(), "POST", path, body);
            assert_eq!(status, 400, "{path} {body}: {text}");
            let error: Value = serde_json::from_str(&text).unwrap();
            assert!(
                error["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{text}"
            );
        }
        let (status, text) = http(s.addr(), "GET", "/nope", "");
        assert_eq!(status, 404);
        assert!(text.contains("error"));
        // Still alive after all that.
        assert_eq!(
            http(s.addr(), "GET", "/health", ""),
            (200, "ok".to_string())
        );
    }

    #[test]
    fn applies_the_configured_latency() {
        let latency = Duration::from_millis(50);
        let slow = spawn(DemoConfig { latency }).expect("start demo agent");
        for path in ["/", "/v1/chat/completions"] {
            let started = Instant::now();
            let (status, _) = post_json(
                slow.addr(),
                path,
                json!({ "messages": [{ "role": "user", "content": "What is RAG?" }] }),
            );
            assert_eq!(status, 200);
            assert!(
                started.elapsed() >= latency,
                "{path}: {:?}",
                started.elapsed()
            );
        }
        slow.shutdown().expect("clean shutdown");
    }

    #[tokio::test]
    async fn spawns_inside_a_runtime_and_outlives_its_handle() {
        let s = spawn(DemoConfig::default()).expect("start demo agent");
        let addr = s.addr();
        drop(s); // detaches: the server keeps running
        let (status, body) = tokio::task::spawn_blocking(move || http(addr, "GET", "/health", ""))
            .await
            .unwrap();
        assert_eq!((status, body.as_str()), (200, "ok"));
    }

    #[test]
    fn parses_latency_settings() {
        let ms = |v| parse_latency_ms(LATENCY_ENV, v);
        assert_eq!(ms("250"), Ok(Some(Duration::from_millis(250))));
        assert_eq!(ms(" 0 "), Ok(Some(Duration::ZERO)));
        assert_eq!(ms(""), Ok(None));
        for bad in ["-5", "1.5", "fast", "10ms"] {
            let e = ms(bad).unwrap_err();
            assert!(e.to_string().contains(LATENCY_ENV), "{e}");
        }
    }

    // -----------------------------------------------------------------------
    // The example datasets (examples/evals/) pass against this agent.

    fn dataset(name: &str) -> String {
        let path = format!("{}/examples/evals/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// SQuAD answer normalisation: lower-case, no punctuation, no articles.
    fn squad_tokens(text: &str) -> Vec<String> {
        let lower: String = text
            .to_lowercase()
            .chars()
            .filter(|c| !c.is_ascii_punctuation())
            .collect();
        lower
            .split_whitespace()
            .filter(|w| !["a", "an", "the"].contains(w))
            .map(str::to_string)
            .collect()
    }

    fn f1(output: &str, expected: &str) -> f64 {
        let out = squad_tokens(output);
        let mut exp = squad_tokens(expected);
        let mut common = 0usize;
        for w in &out {
            if let Some(i) = exp.iter().position(|e| e == w) {
                exp.swap_remove(i);
                common += 1;
            }
        }
        if common == 0 {
            return 0.0;
        }
        let precision = common as f64 / out.len() as f64;
        let recall = common as f64 / squad_tokens(expected).len() as f64;
        2.0 * precision * recall / (precision + recall)
    }

    fn contains(output: &str, expected: &str) -> bool {
        output
            .to_lowercase()
            .contains(&expected.trim().to_lowercase())
    }

    /// Text only ever appearing in `tags`, since test names include inputs
    /// and ids.
    fn assert_only_in_tags(line: &str, sample: &Map<String, Value>) {
        for (key, value) in sample {
            if key != "tags" {
                assert!(
                    !value.to_string().to_lowercase().contains("advanced"),
                    "`advanced` outside tags: {line}"
                );
            }
        }
    }

    fn strings(v: &Value) -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().unwrap().to_string())
                .collect(),
            other => panic!("not a string or list: {other}"),
        }
    }

    #[test]
    fn rag_dataset_passes() {
        let text = dataset("rag.jsonl");
        let mut advanced = 0;
        let mut n = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let sample: Map<String, Value> = serde_json::from_str(line).unwrap();
            assert_only_in_tags(line, &sample);
            advanced += usize::from(strings(&sample["tags"]).contains(&"advanced".to_string()));
            n += 1;
            let input = sample["input"].as_str().unwrap();
            let expected = sample["expected"].as_str().unwrap();
            let reply = respond::<&str>(&[], input, DEFAULT_TOP_K);
            assert!(contains(&reply.output, expected), "{input} → {reply:?}");
            let score = f1(&reply.output, expected);
            assert!(score >= 0.2, "{input} → {reply:?}: F1 {score}");
        }
        assert!((6..=8).contains(&n), "{n} samples");
        assert!((2..=3).contains(&advanced), "{advanced} advanced");
    }

    #[test]
    fn conversations_dataset_passes() {
        let text = dataset("conversations.jsonl");
        let mut per_turn = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let sample: Map<String, Value> = serde_json::from_str(line).unwrap();
            assert_only_in_tags(line, &sample);
            let turns = strings(&sample["input"]);
            let truth = &sample["ground_truth"];
            if truth.is_array() {
                per_turn += 1;
                let truths = strings(truth);
                assert_eq!(truths.len(), turns.len());
                for (i, expected) in truths.iter().enumerate() {
                    let reply = respond(&turns[..i], &turns[i], DEFAULT_TOP_K);
                    assert!(
                        contains(&reply.output, expected),
                        "{turns:?}[{i}] → {reply:?}"
                    );
                }
            } else {
                let (last, history) = turns.split_last().unwrap();
                let reply = respond(history, last, DEFAULT_TOP_K);
                let expected = truth.as_str().unwrap();
                assert!(contains(&reply.output, expected), "{turns:?} → {reply:?}");
            }
        }
        assert_eq!(per_turn, 1);
    }

    /// Minimal RFC 4180 reader: quoted cells may hold commas, doubled quotes
    /// and line breaks.
    fn csv_rows(text: &str) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        let mut row = Vec::new();
        let mut cell = String::new();
        let mut quoted = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => cell.push(c),
                (false, '"') => quoted = true,
                (false, ',') => row.push(std::mem::take(&mut cell)),
                (false, '\r') => {}
                (false, '\n') => {
                    row.push(std::mem::take(&mut cell));
                    rows.push(std::mem::take(&mut row));
                }
                (false, c) => cell.push(c),
            }
        }
        if !cell.is_empty() || !row.is_empty() {
            row.push(cell);
            rows.push(row);
        }
        rows
    }

    #[test]
    fn faq_dataset_passes() {
        let text = dataset("faq.csv");
        let rows = csv_rows(&text);
        assert_eq!(
            rows[0],
            ["id", "input", "ground_truth", "tags", "agent_args"]
        );
        assert!((3..=5).contains(&(rows.len() - 1)));
        assert!(rows[1..].iter().any(|r| r[1].contains('\n')));
        for row in &rows[1..] {
            assert_eq!(row.len(), 5, "{row:?}");
            let tags: Vec<String> = serde_json::from_str(&row[3]).unwrap();
            let args: Map<String, Value> = serde_json::from_str(&row[4]).unwrap();
            for cell in [&row[0], &row[1], &row[2], &row[4]] {
                assert!(!cell.to_lowercase().contains("advanced"), "{row:?}");
            }
            let _ = tags;
            let top_k = args
                .get("top_k")
                .map_or(DEFAULT_TOP_K, |k| k.as_u64().unwrap() as usize);
            let (input, expected) = (&row[1], &row[2]);
            let reply = respond::<&str>(&[], input, top_k);
            assert!(contains(&reply.output, expected), "{input} → {reply:?}");
            // The ground truth doubles as a regex: keep it literal.
            assert!(
                !expected.contains(|c| "\\^$.|?*+()[]{}".contains(c)),
                "{expected}"
            );
        }
    }
}
