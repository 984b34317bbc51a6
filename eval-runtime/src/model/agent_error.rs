//! Why an agent (or what stands in for one: a retriever, a cassette) gave
//! no answer, and why an HTTP answer was refused.

use std::sync::Arc;

use super::shared_error::SharedError;
use super::usage::Usage;

/// Why an agent did not answer a sample.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The agent could not be reached (refused, DNS, reset, TLS…).
    #[error("agent at {url} unreachable: {cause}")]
    Unreachable {
        /// Agent URL (credentials removed).
        url: String,
        /// Innermost causes, joined.
        cause: String,
    },
    /// The agent did not answer in time.
    #[error("agent at {url} did not answer within {secs}s")]
    Timeout {
        /// Agent URL (credentials removed).
        url: String,
        /// The timeout that expired.
        secs: f64,
    },
    /// The agent answered with a non-success HTTP status.
    #[error("agent at {url} answered HTTP {status}: {body}")]
    Status {
        /// Agent URL (credentials removed).
        url: String,
        /// HTTP status code.
        status: u16,
        /// Start of the body, on one line, keys masked.
        body: String,
    },
    /// The agent answered every attempt of a call as overloaded (429, 503):
    /// the retries (`EVAL_AGENT_MAX_RETRIES`) ran out.
    #[error(
        "agent at {url} was still overloaded after {attempts} attempt(s) (HTTP {status}; retries are set by EVAL_AGENT_MAX_RETRIES): {body}"
    )]
    Overloaded {
        /// Agent URL (credentials removed).
        url: String,
        /// The last status (429 or 503).
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// Start of the last body, on one line, keys masked.
        body: String,
    },
    /// The agent's answer was not used: a refused redirect, an answer over
    /// the size limit, a body cut off or still arriving at the timeout.
    #[error("agent at {url}: {refusal}")]
    Refused {
        /// Agent URL (credentials removed).
        url: String,
        /// Why.
        refusal: Refusal,
    },
    /// The agent's answer could not be understood.
    #[error("agent at {url} sent an answer that could not be read: {reason}")]
    BadResponse {
        /// Agent URL (credentials removed).
        url: String,
        /// What was wrong with it.
        reason: String,
    },
    /// The agent could not be set up (e.g. `EVAL_AGENT_URL` not set).
    #[error("agent error: {0}")]
    Setup(Arc<str>),
    /// An in-process agent panicked.
    #[error("agent error: the agent panicked: {0}")]
    Panicked(String),
    /// An in-process agent (an eval function) returned an error.
    #[error("agent error: {0}")]
    Failed(String),
    /// The retriever of a retrieval query failed.
    #[error("agent error: {0}")]
    Retriever(#[from] RetrieverError),
    /// Replaying from a cassette found no answer, or the cassette could not
    /// be read.
    #[error("agent error: {0}")]
    Cassette(#[from] CassetteError),
}

impl AgentError {
    /// The HTTP calls a failed agent call made, as far as the error tells:
    /// every attempt of an agent that stayed overloaded, one for any other
    /// HTTP failure, none for an in-process agent's (so a sample that
    /// failed still says what it spent, like a judge call that failed).
    pub fn calls_made(&self) -> Usage {
        let attempts = match self {
            AgentError::Overloaded { attempts, .. } => *attempts,
            AgentError::Unreachable { .. }
            | AgentError::Timeout { .. }
            | AgentError::Status { .. }
            | AgentError::Refused { .. }
            | AgentError::BadResponse { .. } => 1,
            _ => 0,
        };
        Usage {
            calls: attempts,
            retries: attempts.saturating_sub(1),
            ..Usage::ZERO
        }
    }
}

/// Why an HTTP answer was not used, though the server was reached.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The server redirected somewhere the client does not follow.
    #[error("refused a redirect (HTTP {status}) from {from} to {to}: {why}")]
    Redirect {
        /// The redirect's status.
        status: u16,
        /// The URL that answered with the redirect (credentials removed).
        from: String,
        /// Where it pointed (credentials removed).
        to: String,
        /// Which rule refused it.
        why: &'static str,
    },
    /// The body was longer than the limit.
    #[error("the answer is larger than the limit of {limit} bytes (EVAL_MAX_RESPONSE_BYTES)")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The connection ended before the body was complete.
    #[error("the answer was cut off after {received} bytes: {cause}")]
    CutOff {
        /// Bytes received before it ended.
        received: u64,
        /// The innermost cause.
        cause: String,
    },
    /// The timeout expired while the body was arriving.
    #[error(
        "the answer was still arriving when the {secs}s timeout expired ({received} bytes received)"
    )]
    BodyTimeout {
        /// The timeout.
        secs: f64,
        /// Bytes received before it expired.
        received: u64,
    },
}

impl Refusal {
    /// Whether asking again may succeed (a cut-off or slow body may; a
    /// refused redirect or an oversized answer will not).
    #[cfg(feature = "http")]
    pub(crate) fn is_transient(&self) -> bool {
        matches!(self, Refusal::CutOff { .. } | Refusal::BodyTimeout { .. })
    }
}

/// Why a cassette could not answer or be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The cassette file could not be read, parsed or written.
    #[error("cassette {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What went wrong (line included when it is a bad line).
        reason: String,
        /// The I/O or JSON error, when there is one.
        #[source]
        source: Option<SharedError>,
    },
    /// Replay found no answer for what this sample sends.
    #[error("cassette {path} has no answer for {sample}: {why}")]
    Miss {
        /// The file.
        path: String,
        /// `file id N` (and the run of a repeated sample).
        sample: String,
        /// What changed since the recording, or that it was never recorded.
        why: String,
    },
}

/// Why a retriever call, or a retrieval query, failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RetrieverError {
    /// The retriever could not be reached.
    #[error("retriever at {url} unreachable: {cause}")]
    Unreachable {
        /// Endpoint (credentials removed).
        url: String,
        /// Innermost causes.
        cause: String,
    },
    /// The retriever answered with an error status.
    #[error("retriever at {url} answered HTTP {status}: {body}")]
    Status {
        /// Endpoint (credentials removed).
        url: String,
        /// HTTP status.
        status: u16,
        /// Start of the body, on one line.
        body: String,
    },
    /// The retriever did not answer in time.
    #[error("retriever at {url} did not answer within {secs}s")]
    Timeout {
        /// Endpoint (credentials removed).
        url: String,
        /// The timeout that expired.
        secs: f64,
    },
    /// The retriever's answer was not used (a refused redirect, an answer
    /// over the size limit, a body cut off or too slow).
    #[error("retriever at {url}: {refusal}")]
    Refused {
        /// Endpoint (credentials removed).
        url: String,
        /// Why.
        refusal: Refusal,
    },
    /// The retriever's answer could not be read.
    #[error("retriever at {url} sent an answer that could not be read: {reason}")]
    BadResponse {
        /// Endpoint (credentials removed).
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// `mode: "retrieve+rerank"` with a retriever that has no reranker.
    #[error("this retriever has no reranker (mode \"retrieve+rerank\")")]
    NoReranker,
    /// The sample is not a query of a retrieval dataset.
    #[error("sample `{0}` is not a query of a retrieval dataset (no scopePrefix)")]
    NotAQuery(String),
    /// The scope would be deleted and is not allowed to be.
    #[error(
        "scopePrefix `{0}` {problem}: ingest would delete everything under it, so it is refused; allow it explicitly (allow_custom_prefix) if that is intended",
        problem = eval_datasets::retrieval::scope_problem(.0)
    )]
    UnsafePrefix(String),
    /// Documents given by `loaderRef` that could not be loaded (nothing was deleted).
    #[error("{} document(s) could not be loaded{}: {}", .refs.len(), .no_loader.as_ref().map(|how| format!(" (no loader hook is set: {how})")).unwrap_or_default(), .refs.join("; "))]
    Unresolved {
        /// `file:line: loaderRef ...` per document.
        refs: Vec<String>,
        /// No loader hook was set: how to set one (the library's
        /// `RetrieverAgent::loader`, the command's `--loader-dir`).
        no_loader: Option<String>,
    },
    /// The dataset's ingest was cut off by the first query's sample timeout.
    #[error(
        "the ingest of {0} was cut off by the first query's sample timeout; raise timeout_secs (or EVAL_SAMPLE_TIMEOUT_SECS)"
    )]
    IngestCutOff(String),
    /// The retrieval dataset could not be read or loaded (a
    /// [`DatasetError`](eval_datasets::DatasetError)).
    #[error("{0}")]
    Dataset(#[source] SharedError),
    /// The ingest's directory, lock or marker could not be created or written.
    #[error("cannot {doing}: {source}")]
    Io {
        /// What was being done (`take the ingest lock`, `write <file>`).
        doing: String,
        /// The I/O error.
        #[source]
        source: SharedError,
    },
    /// A retriever of your own failed.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for RetrieverError {
    fn from(message: String) -> Self {
        RetrieverError::Failed(message)
    }
}

impl From<&str> for RetrieverError {
    fn from(message: &str) -> Self {
        RetrieverError::Failed(message.to_string())
    }
}

/// Why an agent's JSON answer could not be read as a reply (by
/// [`default_reply`](crate::default_reply) or the OpenAI protocol's
/// reader). Values quoted in a message are cut to one short line.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The answer is not a JSON object.
    #[error("expected a JSON object with `output`, found {found}")]
    NotObject {
        /// The answer, cut.
        found: String,
    },
    /// `output` is there but not a string.
    #[error("`output` is not a string: {found}")]
    OutputNotString {
        /// The `output` value, cut.
        found: String,
    },
    /// Neither `output` nor OpenAI `choices`.
    #[error("expected `output` (or an OpenAI `choices[0].message.content`), found keys: {}", keys_text(.keys))]
    NoOutput {
        /// The keys the answer has.
        keys: Vec<String>,
    },
    /// A `context` item that is an object without `text` or `content`.
    #[error("a `context` item has no `text` or `content` string")]
    ContextItemNoText,
    /// A `context` item that is neither a string nor an object.
    #[error("a `context` item is {found}")]
    ContextItem {
        /// The item, cut.
        found: String,
    },
    /// A `context` that is not a list (nor a string, nor `null`).
    #[error("`context` should be an array of strings, found {found}")]
    Context {
        /// The value, cut.
        found: String,
    },
    /// A chat-completions answer that is not an object.
    #[error("expected a chat-completions object with `choices`, found {found}")]
    NotChatCompletion {
        /// The answer, cut.
        found: String,
    },
    /// A chat-completions answer holding an `error`.
    #[error("the agent answered an error: {error}")]
    Answered {
        /// The error's message (or the error, as JSON).
        error: String,
    },
    /// No `choices[0]`.
    #[error("expected `choices[0].message`, found keys: {}", keys_text(.keys))]
    NoChoice {
        /// The keys the answer has.
        keys: Vec<String>,
    },
    /// `choices[0]` without a `message` object.
    #[error("`choices[0]` has no `message` object")]
    NoMessage,
    /// A message `content` that is not text (nor parts of text).
    #[error("`choices[0].message.content` is not text: {found}")]
    ContentNotText {
        /// The content, cut.
        found: String,
    },
    /// `tool_calls` that is not an array.
    #[error("`choices[0].message.tool_calls` is not an array: {found}")]
    ToolCallsNotArray {
        /// The value, cut.
        found: String,
    },
    /// A tool call without a function name.
    #[error("`choices[0].message.tool_calls[{index}]` has no `function.name`")]
    ToolCallNoName {
        /// The call (0-based).
        index: usize,
    },
    /// A tool call's `arguments`: JSON, but not an object.
    #[error("tool call `{tool}`: `arguments` should be a JSON object, found {found}")]
    ArgumentsNotObject {
        /// The tool.
        tool: String,
        /// The arguments, cut.
        found: String,
    },
    /// A tool call's `arguments`: a string that is not JSON.
    #[error("tool call `{tool}`: `arguments` is not valid JSON ({source}): {text}")]
    ArgumentsNotJson {
        /// The tool.
        tool: String,
        /// The arguments, cut.
        text: String,
        /// What the parser said.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// A tool call's `arguments`: neither a string nor an object.
    #[error("tool call `{tool}`: `arguments` should be a JSON string or object, found {found}")]
    ArgumentsType {
        /// The tool.
        tool: String,
        /// The arguments, cut.
        found: String,
    },
}

fn keys_text(keys: &[String]) -> String {
    if keys.is_empty() {
        "none".to_string()
    } else {
        keys.join(", ")
    }
}
