//! The HTTP plumbing every client shares (agent, judge, embeddings,
//! retriever): one client per async runtime, the redirect policy, the cap on
//! answer bodies, and how a failed exchange is told in one line.
//!
//! **Redirects.** Only a `307`/`308` to the same origin (scheme, host and
//! port) as the request is followed, at most [`MAX_REDIRECTS`] times: those
//! keep the method and the body, and the API key never leaves the origin it
//! was configured for. A `301`/`302`/`303` would turn the `POST` into a `GET`
//! (the answer would come from somewhere else than the request went), and a
//! redirect to another origin could carry the key or the request there; both
//! are refused, and the call fails with [`Refusal::Redirect`] naming both URLs.
//!
//! **Bodies.** An answer is read up to a limit (`EVAL_MAX_RESPONSE_BYTES`,
//! default [`DEFAULT_MAX_RESPONSE_BYTES`]); a longer one, declared or
//! streamed, fails the call with [`Refusal::TooLarge`] without holding more
//! than the limit in memory. A JSON answer is then parsed only when what it
//! would take once parsed is within [`PARSED_PER_BYTE`] times that limit
//! ([`reply_json`]): `[[],[],…]` takes dozens of times its length as values.

use std::time::Duration;

pub(crate) use crate::model::Refusal;
use crate::model::{Error, Result, one_line};

pub(crate) use crate::config::DEFAULT_MAX_RESPONSE_BYTES;

pub(crate) use crate::config::{PARSED_PER_BYTE, reply_json};

/// The most redirects (same origin, `307`/`308`) one call follows.
pub const MAX_REDIRECTS: usize = 5;

/// How one exchange failed before an HTTP status could be used.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No answer in time.
    Timeout,
    /// The server could not be reached (the innermost causes, one line).
    Unreachable(String),
    /// The server answered, but the answer was not used.
    Refused(Refusal),
}

impl Failure {
    /// Classifies an error of `send()`.
    pub(crate) fn of_send(e: &reqwest::Error) -> Failure {
        if let Some(refusal) = find_source::<Refusal>(e) {
            return Failure::Refused(refusal.clone());
        }
        if e.is_timeout() {
            Failure::Timeout
        } else {
            Failure::Unreachable(one_line(&error_chain(e), 300))
        }
    }
}

/// The first source of `e` (itself included) that is a `T`.
fn find_source<'e, T: std::error::Error + 'static>(
    e: &'e (dyn std::error::Error + 'static),
) -> Option<&'e T> {
    let mut current = Some(e);
    while let Some(err) = current {
        if let Some(found) = err.downcast_ref::<T>() {
            return Some(found);
        }
        current = err.source();
    }
    None
}

/// Reads `response`'s body, at most `limit` bytes. `timeout` is only named
/// in the message when it expires (the request carries it).
pub(crate) async fn read_body(
    response: reqwest::Response,
    limit: u64,
    timeout: Duration,
) -> std::result::Result<Vec<u8>, Refusal> {
    let mut body = BoundedBody::new(response, limit, timeout)?;
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(chunk) = body.next().await? {
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// An answer's body read chunk by chunk, at most `limit` bytes in all: what
/// [`read_body`] collects and a streamed (server-sent events) answer is
/// parsed from as it arrives, under one rule for both.
pub(crate) struct BoundedBody {
    response: reqwest::Response,
    limit: u64,
    timeout: Duration,
    received: u64,
}

impl BoundedBody {
    /// The body of `response`; refused at once when it declares more than `limit`.
    pub(crate) fn new(
        response: reqwest::Response,
        limit: u64,
        timeout: Duration,
    ) -> std::result::Result<Self, Refusal> {
        if response.content_length().is_some_and(|len| len > limit) {
            return Err(Refusal::TooLarge { limit });
        }
        Ok(BoundedBody {
            response,
            limit,
            timeout,
            received: 0,
        })
    }

    /// The next chunk; `None` at the end of the body.
    pub(crate) async fn next(&mut self) -> std::result::Result<Option<bytes::Bytes>, Refusal> {
        match self.response.chunk().await {
            Ok(Some(chunk)) => {
                if self.received + chunk.len() as u64 > self.limit {
                    return Err(Refusal::TooLarge { limit: self.limit });
                }
                self.received += chunk.len() as u64;
                Ok(Some(chunk))
            }
            Ok(None) => Ok(None),
            Err(e) if e.is_timeout() => Err(Refusal::BodyTimeout {
                secs: self.timeout.as_secs_f64(),
                received: self.received,
            }),
            Err(e) => Err(Refusal::CutOff {
                received: self.received,
                cause: one_line(&error_chain(&e), 200),
            }),
        }
    }

    /// Bytes received so far.
    pub(crate) fn received(&self) -> u64 {
        self.received
    }
}

/// The HTTP client for calls to `url` from the async runtime the caller
/// runs on (one for `https` URLs, one for plain `http`). A client's pooled connections
/// are driven by the runtime that opened them, so each runtime gets its
/// own client: a connection is never handed to a runtime that does not
/// drive it (which would stall until the timeout). Clients of runtimes that
/// are gone are dropped after a while (their connections already are). A
/// plain-`http` client loads no root certificates: an agent on loopback
/// does not pay for reading the system's certificate store.
pub(crate) fn runtime_client(url: &str) -> Result<reqwest::Client> {
    let secure = url.starts_with("https:");
    type Clients = std::sync::Mutex<Vec<(tokio::runtime::Id, bool, reqwest::Client)>>;
    static CLIENTS: std::sync::OnceLock<Clients> = std::sync::OnceLock::new();
    const KEEP: usize = 64;
    let id = tokio::runtime::Handle::try_current()
        .map_err(|_| Error::Config {
            what: "HTTP client".into(),
            reason: "an HTTP call must be made from within a tokio runtime".into(),
        })?
        .id();
    let clients = CLIENTS.get_or_init(Default::default);
    let mut clients = clients.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, client)) = clients.iter().find(|(i, s, _)| *i == id && *s == secure) {
        return Ok(client.clone());
    }
    let client = build_client(secure)?;
    if clients.len() >= KEEP {
        clients.remove(0);
    }
    clients.push((id, secure, client.clone()));
    Ok(client)
}

fn build_client(secure: bool) -> Result<reqwest::Client> {
    // reqwest is built without a default crypto provider; ring it is.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::custom(redirect_policy));
    if !secure {
        // No `https` URL goes through it (redirects keep the origin).
        builder = builder.tls_certs_only(Vec::new());
    }
    builder.build().map_err(|e| Error::Config {
        what: "HTTP client".into(),
        reason: one_line(&error_chain(&e), 300),
    })
}

/// See the module docs: same origin, `307`/`308`, at most [`MAX_REDIRECTS`].
fn redirect_policy(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let (Some(first), Some(last)) = (attempt.previous().first(), attempt.previous().last()) else {
        return attempt.stop();
    };
    let status = attempt.status().as_u16();
    let why = if !matches!(status, 307 | 308) {
        Some("only 307 and 308 keep the request as it was")
    } else if attempt.url().origin() != first.origin() {
        Some("it leads to another origin, which is never sent the request or its key")
    } else if attempt.previous().len() > MAX_REDIRECTS {
        Some("too many redirects")
    } else {
        None
    };
    match why {
        None => attempt.follow(),
        Some(why) => {
            let refusal = Refusal::Redirect {
                status,
                from: redact_url(last),
                to: redact_url(attempt.url()),
                why,
            };
            attempt.error(refusal)
        }
    }
}

/// `Authorization: Bearer <key>`, or why the key cannot be a header value.
pub(crate) fn bearer(key: &str) -> std::result::Result<reqwest::header::HeaderValue, &'static str> {
    let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {key}"))
        .map_err(|_| "it holds characters not allowed in an HTTP header (a newline?)")?;
    value.set_sensitive(true);
    Ok(value)
}

/// `scheme://host:port/path` without user, password or query string: the
/// one rule for showing a URL ([`crate::config::shown_url`]).
pub(crate) fn redact_url(url: &reqwest::Url) -> String {
    crate::config::shown_url(url.as_str())
}

/// The error and its innermost sources, without repeats or URLs (callers
/// mask secrets, then cut it to one line).
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = current {
        let text = err.to_string();
        let text = match text.find(" for url (") {
            Some(at) => text[..at].to_string(),
            None => text,
        };
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = err.source();
    }
    // The innermost causes say what happened ("tcp connect error: Connection
    // refused"); the outer layers only repeat "error sending request".
    let keep = parts.len().saturating_sub(2);
    parts[keep..].join(": ")
}

/// Most a `Retry-After` may make a call wait.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How long a `Retry-After` header asks to wait (RFC 9110 §10.2.3): delay
/// seconds (a fraction too: `0.25`), or an HTTP date (a date already past
/// means now). At most 60 s.
pub(crate) fn retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Duration::from_secs_f64(secs.min(60.0)),
        Ok(_) => return None,
        Err(_) => {
            let when = httpdate::parse_http_date(value).ok()?;
            when.duration_since(now).unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// Exponential backoff with jitter before attempt `attempt + 1` (`attempt`
/// from 1): the base doubles from 0.25 s up to `max`, and the wait is drawn
/// from [base/2, base] so that clients throttled together do not retry
/// together. The judge and embeddings clients use it up to 8 s, the agent's
/// pacer up to 1 s (see [`agent::pace`](crate::agent)).
pub(crate) fn backoff(attempt: u32, max: Duration) -> Duration {
    let base = Duration::from_millis(250u64 << attempt.saturating_sub(1).min(10)).min(max);
    base.mul_f64(0.5 + 0.5 * unit_random())
}

/// A number in [0, 1) from the operating system's random source (0.5 if
/// it gives none: the backoff is then just not jittered).
fn unit_random() -> f64 {
    let mut bytes = [0u8; 8];
    match getrandom::getrandom(&mut bytes) {
        Ok(()) => (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64,
        Err(_) => 0.5,
    }
}

/// The wait a response's `Retry-After` header asks for, if any.
pub(crate) fn retry_after_header(response: &reqwest::Response) -> Option<Duration> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry_after(v, std::time::SystemTime::now()))
}
