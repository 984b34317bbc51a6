//! An optional rate limit on the demo agent's answer routes (`POST /`,
//! `/v1/respond`, `/v1/chat/completions`), to try a client against an agent
//! that answers `429 Too Many Requests` as real ones do.
//!
//! A token bucket: it holds up to [`RateLimit::burst`] tokens (default a
//! tenth of a second's worth, at least 1), refilled at
//! [`RateLimit::per_second`]; a request that finds a token takes it and is
//! answered, one that finds none gets `429` with `{"error": ...}` at once (no
//! latency), and, unless turned off, a `Retry-After` header giving the
//! seconds until the next token, with a fraction (`Retry-After: 0.007`).
//! Only accepted requests take tokens, so a client that keeps asking does not
//! lock itself out: over any span of `t` seconds at most
//! `burst + per_second · t` requests are answered.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Json, Response};
use serde_json::json;

use super::ConfigError;

/// Environment variable read by [`DemoConfig::from_env`](super::DemoConfig::from_env):
/// answer at most this many requests per second (a number > 0, e.g. `100`
/// or `2.5`); unset: no limit.
pub const RATE_LIMIT_ENV: &str = "DEMO_AGENT_RATE_LIMIT";

/// Environment variable: `off` (or `0`, `false`, `no`) leaves the
/// `Retry-After` header out of the `429` answers; default on.
pub const RETRY_AFTER_ENV: &str = "DEMO_AGENT_RETRY_AFTER";

/// A rate limit on the answer routes: a token bucket of [`burst`](Self::burst)
/// tokens refilled at [`per_second`](Self::per_second); a request finding no
/// token is answered `429` at once (with `Retry-After`: the seconds to the
/// next token, with a fraction). Only answered requests take tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Requests answered per second, on average.
    pub per_second: f64,
    /// Requests that may be answered at once after a quiet spell (the
    /// bucket's size, ≥ 1).
    pub burst: f64,
    /// Whether a `429` says when to come back (`Retry-After`).
    pub retry_after: bool,
}

impl RateLimit {
    /// At most `per_second` requests per second, bursts of a tenth of a
    /// second's worth (at least 1), with `Retry-After`.
    pub fn new(per_second: f64) -> RateLimit {
        RateLimit {
            per_second,
            burst: (per_second / 10.0).max(1.0),
            retry_after: true,
        }
    }

    /// Whether a `429` carries `Retry-After`.
    pub fn retry_after(mut self, on: bool) -> RateLimit {
        self.retry_after = on;
        self
    }

    /// Parses a rate given by `source_name` (an environment variable or a
    /// flag, named in the error): a number of requests per second > 0.
    pub fn parse(source_name: &str, value: &str) -> Result<RateLimit, ConfigError> {
        match value.trim().parse::<f64>() {
            Ok(r) if r.is_finite() && r > 0.0 && r <= 1e9 => Ok(RateLimit::new(r)),
            _ => Err(ConfigError {
                source_name: source_name.to_string(),
                value: value.to_string(),
                expected: "a number of requests per second above 0 (like 100)",
            }),
        }
    }

    /// The limit [`RATE_LIMIT_ENV`] and [`RETRY_AFTER_ENV`] describe, if any.
    pub fn from_env() -> Result<Option<RateLimit>, ConfigError> {
        let Some(rate) = super::env_var(RATE_LIMIT_ENV)? else {
            return Ok(None);
        };
        let limit = RateLimit::parse(RATE_LIMIT_ENV, &rate)?;
        let retry_after = match super::env_var(RETRY_AFTER_ENV)? {
            None => true,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(ConfigError {
                        source_name: RETRY_AFTER_ENV.to_string(),
                        value: v,
                        expected: "on or off",
                    });
                }
            },
        };
        Ok(Some(limit.retry_after(retry_after)))
    }
}

/// Requests the limit answered and refused so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitCounts {
    /// Requests let through to the agent.
    pub accepted: u64,
    /// Requests answered `429`.
    pub refused: u64,
}

/// The token bucket of one server.
#[derive(Debug)]
pub(crate) struct Bucket {
    limit: RateLimit,
    /// Tokens, and when they were counted.
    tokens: Mutex<(f64, Instant)>,
    accepted: AtomicU64,
    refused: AtomicU64,
}

impl Bucket {
    /// A full bucket.
    pub(crate) fn new(limit: RateLimit) -> Bucket {
        Bucket {
            limit,
            tokens: Mutex::new((limit.burst.max(1.0), Instant::now())),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// Takes a token at `now`, or says how long until there is one.
    pub(crate) fn take(&self, now: Instant) -> Result<(), Duration> {
        let mut guard = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        let (tokens, since) = &mut *guard;
        let elapsed = now.saturating_duration_since(*since).as_secs_f64();
        *tokens = (*tokens + elapsed * self.limit.per_second).min(self.limit.burst.max(1.0));
        *since = now.max(*since);
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            self.accepted.fetch_add(1, Ordering::Relaxed);
            Ok(())
        } else {
            self.refused.fetch_add(1, Ordering::Relaxed);
            Err(Duration::from_secs_f64(
                (1.0 - *tokens) / self.limit.per_second,
            ))
        }
    }

    pub(crate) fn counts(&self) -> LimitCounts {
        LimitCounts {
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }
}

/// `Retry-After` for `wait`: seconds with three decimals, rounded up to the
/// millisecond (at least `0.001`).
pub(crate) fn retry_after_value(wait: Duration) -> String {
    let ms = wait.as_nanos().div_ceil(1_000_000).max(1);
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The middleware on the answer routes: a token, or `429`.
pub(crate) async fn check(
    State(bucket): State<Arc<Bucket>>,
    request: Request,
    next: Next,
) -> Response {
    match bucket.take(Instant::now()) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            let message = format!(
                "rate limit: at most {} requests per second",
                bucket.limit.per_second
            );
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                Json(json!({ "error": message })),
            )
                .into_response();
            if bucket.limit.retry_after
                && let Ok(value) = HeaderValue::from_str(&retry_after_value(wait))
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_answers_its_rate_and_says_when_to_come_back() {
        // 10/s, bursts of 2 (set by hand: the default would be 1).
        let limit = RateLimit {
            burst: 2.0,
            ..RateLimit::new(10.0)
        };
        let bucket = Bucket::new(limit);
        let t0 = Instant::now();
        assert_eq!(bucket.take(t0), Ok(()));
        assert_eq!(bucket.take(t0), Ok(()), "a burst of 2");
        // Empty: the next token in 1/10 s.
        let wait = bucket.take(t0).unwrap_err();
        assert_eq!(wait, Duration::from_millis(100));
        // 40 ms later 0.4 of a token: 60 ms to wait; refused requests take nothing.
        let wait = bucket.take(t0 + Duration::from_millis(40)).unwrap_err();
        assert!((wait.as_secs_f64() - 0.06).abs() < 1e-9, "{wait:?}");
        assert_eq!(bucket.take(t0 + Duration::from_millis(100)), Ok(()));
        // A long pause refills only up to the burst.
        let later = t0 + Duration::from_secs(10);
        assert_eq!(bucket.take(later), Ok(()));
        assert_eq!(bucket.take(later), Ok(()));
        assert!(bucket.take(later).is_err());
        assert_eq!(
            bucket.counts(),
            LimitCounts {
                accepted: 5,
                refused: 3
            }
        );
    }

    /// One POST over a raw socket: the response's head and body.
    fn post(addr: std::net::SocketAddr, path: &str) -> (String, String) {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let body = r#"{"input": "What is 2 + 2?"}"#;
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        (head.to_ascii_lowercase(), body.to_string())
    }

    #[test]
    fn the_answer_routes_answer_429_above_the_rate() {
        // One request per 1000 s: the first is answered, the next refused.
        for retry_after in [true, false] {
            let limit = RateLimit::new(0.001).retry_after(retry_after);
            let server = super::super::spawn(
                super::super::DemoConfig::default().with_rate_limit(Some(limit)),
            )
            .unwrap();
            let (head, body) = post(server.addr(), "/v1/respond");
            assert!(head.starts_with("http/1.1 200"), "{head}");
            assert!(body.contains("\"output\":\"4\""), "{body}");
            for path in ["/", "/v1/respond", "/v1/chat/completions"] {
                let (head, body) = post(server.addr(), path);
                assert!(head.starts_with("http/1.1 429"), "{path}: {head}");
                assert_eq!(
                    body,
                    r#"{"error":"rate limit: at most 0.001 requests per second"}"#
                );
                // About 1000 s until the next token.
                let wait = head
                    .lines()
                    .find_map(|l| l.strip_prefix("retry-after: "))
                    .map(|v| v.parse::<f64>().unwrap());
                match wait {
                    Some(w) => assert!(retry_after && (999.0..=1000.0).contains(&w), "{w}"),
                    None => assert!(!retry_after, "{head}"),
                }
            }
            // Other routes are not limited.
            let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
            use std::io::{Read, Write};
            write!(
                stream,
                "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut raw = String::new();
            stream.read_to_string(&mut raw).unwrap();
            assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
            assert_eq!(
                server.limit_counts(),
                Some(LimitCounts {
                    accepted: 1,
                    refused: 3
                })
            );
            server.shutdown().unwrap();
        }
    }

    #[test]
    fn settings_and_header_values() {
        let l = RateLimit::new(100.0);
        assert_eq!((l.per_second, l.burst, l.retry_after), (100.0, 10.0, true));
        assert_eq!(RateLimit::new(2.0).burst, 1.0, "at least one request");
        assert_eq!(
            RateLimit::parse("--rate-limit", " 2.5 ")
                .unwrap()
                .per_second,
            2.5
        );
        for bad in ["0", "-3", "fast", "NaN", "inf", ""] {
            let e = RateLimit::parse("DEMO_AGENT_RATE_LIMIT", bad).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("DEMO_AGENT_RATE_LIMIT must be a number of requests per second"),
                "{e}"
            );
        }
        assert_eq!(retry_after_value(Duration::from_micros(6_200)), "0.007");
        assert_eq!(retry_after_value(Duration::from_millis(1_250)), "1.250");
        assert_eq!(retry_after_value(Duration::ZERO), "0.001");
    }
}
