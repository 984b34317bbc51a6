//! Runs the demo RAG agent ([`eval_examples::demo`]) as an HTTP server.
//!
//! ```text
//! cargo run --example demo_agent -- [--addr 127.0.0.1:8080] [--latency-ms N] [--rate-limit R [--no-retry-after]] [--otlp URL]
//! cargo run --example demo_agent -- --judge [--addr 127.0.0.1:8000] [--latency-ms N]
//! ```
//!
//! `--judge` serves the scripted judge and embeddings server
//! ([`eval_examples::judge`]) instead, for `EVAL_JUDGE_URL` / `EVAL_EMBED_URL`
//! (model-based metrics and `evals generate` without a model).
//!
//! Then, for example:
//!
//! ```text
//! curl -s localhost:8080/v1/respond -d '{"input": "What is the capital of France?"}'
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use eval_examples::demo::{
    self, ConfigError, DemoConfig, LATENCY_ENV, RATE_LIMIT_ENV, RETRY_AFTER_ENV, RateLimit,
};
use eval_examples::judge::{self, JudgeConfig};

const DEFAULT_ADDR: &str = "127.0.0.1:8080";

fn usage() -> String {
    format!(
        "\
Serve the demo RAG agent over HTTP.

Usage: demo_agent [--addr HOST:PORT] [--latency-ms N] [--rate-limit R [--no-retry-after]] [--otlp URL]
       demo_agent --judge [--addr HOST:PORT] [--latency-ms N]

Options:
  --addr HOST:PORT   address to listen on (default {DEFAULT_ADDR}; port 0 picks a free one)
  --latency-ms N     wait N milliseconds before each answer (default: ${LATENCY_ENV}, else 0)
  --rate-limit R     answer at most R requests per second (bursts of R/10), 429 above it
                     (default: ${RATE_LIMIT_ENV}, else no limit)
  --no-retry-after   leave the Retry-After header out of 429 answers
                     (default: ${RETRY_AFTER_ENV}, else sent)
  --otlp URL         send the agent's steps (retrieval, tool call, LLM call) as OpenTelemetry
                     spans to this OTLP/HTTP endpoint, under each request's traceparent, e.g.
                     http://127.0.0.1:4318 (where EVAL_OTLP_RECEIVER has a run listen)
  --judge            serve the scripted LLM judge and embeddings server instead
                     (POST /v1/chat/completions, POST /v1/embeddings, GET /stats): point
                     EVAL_JUDGE_URL and EVAL_EMBED_URL at http://HOST:PORT/v1
  -h, --help         print this help

Routes:
  POST /, POST /v1/respond   {{\"input\": \"...\", \"messages\": [...], \"agent_args\": {{...}}}}
                             -> {{\"output\": \"...\", \"context\": [...]}}
  POST /v1/chat/completions  OpenAI chat-completions request -> response (or SSE chunks with
                             \"stream\": true); offered `tools`, it calls `calculator` and `lookup`
  GET  /health               -> ok
  POST /retrieval/delete     {{\"prefix\": \"eval:...\"}} -> {{\"deleted\": n}}
  POST /retrieval/ingest     {{\"documents\": [{{\"sourceId\", \"content\", \"metadata\"}}]}} -> {{\"ingested\": n}}
  POST /retrieval/search     {{\"query\", \"scopePrefix\", \"topK\"}} -> {{\"results\": [{{\"sourceId\", \"score\", \"content\"}}]}}
"
    )
}

#[derive(Debug)]
struct Args {
    addr: SocketAddr,
    latency: Option<Duration>,
    rate_limit: Option<RateLimit>,
    no_retry_after: bool,
    judge: bool,
    otlp: Option<String>,
}

/// `Ok(None)` when help was asked for.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut addr: Option<String> = None;
    let mut latency: Option<String> = None;
    let mut rate: Option<String> = None;
    let mut otlp: Option<String> = None;
    let mut no_retry_after = false;
    let mut judge = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let slot = match flag.as_str() {
            "-h" | "--help" if inline.is_none() => return Ok(None),
            "--no-retry-after" if inline.is_none() => {
                no_retry_after = true;
                continue;
            }
            "--judge" if inline.is_none() => {
                judge = true;
                continue;
            }
            "--addr" => &mut addr,
            "--latency-ms" => &mut latency,
            "--rate-limit" => &mut rate,
            "--otlp" => &mut otlp,
            _ => return Err(format!("unknown argument `{arg}`")),
        };
        let value = match inline {
            Some(v) => v,
            None => args
                .next()
                .ok_or_else(|| format!("`{flag}` needs a value"))?,
        };
        *slot = Some(value);
    }
    let addr_text = addr.as_deref().unwrap_or(DEFAULT_ADDR);
    let addr = addr_text
        .parse::<SocketAddr>()
        .map_err(|_| format!("`--addr` must look like 127.0.0.1:8080, got {addr_text:?}"))?;
    let latency = match latency {
        Some(v) => Some(
            demo::parse_latency_ms("--latency-ms", &v)
                .map_err(|e| e.to_string())?
                .ok_or("`--latency-ms` needs a value")?,
        ),
        None => None,
    };
    let rate_limit = match rate {
        Some(v) => Some(RateLimit::parse("--rate-limit", &v).map_err(|e| e.to_string())?),
        None => None,
    };
    if judge && (rate_limit.is_some() || no_retry_after || otlp.is_some()) {
        return Err("`--judge` takes no `--rate-limit`, `--no-retry-after` or `--otlp`".into());
    }
    if let Some(url) = &otlp
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(format!("`--otlp` must be an http:// URL, got {url:?}"));
    }
    Ok(Some(Args {
        addr,
        latency,
        rate_limit,
        no_retry_after,
        judge,
        otlp,
    }))
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("demo_agent: {message}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    let config = match config(&args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("demo_agent: {e}");
            return ExitCode::from(2);
        }
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("demo_agent: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        if args.judge {
            println!(
                "scripted judge listening on http://{local} (EVAL_JUDGE_URL=http://{local}/v1)"
            );
            let judge = JudgeConfig {
                latency: config.latency,
                ..JudgeConfig::default()
            };
            // issue37:otel-in: bounded as the demo agent is.
            return demo::serve_router(listener, judge::router(judge))
                .await
                .map_err(|e| format!("server error: {e}"));
        }
        println!("demo agent listening on http://{local}");
        if !config.latency.is_zero() {
            println!("latency: {} ms per answer", config.latency.as_millis());
        }
        if let Some(otlp) = &config.otlp {
            println!("spans: sent to {otlp}");
        }
        if let Some(l) = &config.rate_limit {
            println!(
                "rate limit: {} requests/s (bursts of {}), 429 above it {} Retry-After",
                l.per_second,
                l.burst,
                if l.retry_after { "with" } else { "without" }
            );
        }
        demo::serve(listener, config)
            .await
            .map_err(|e| format!("server error: {e}"))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("demo_agent: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The settings: each flag wins over its environment variable; a bad
/// environment value only matters when its flag is absent.
fn config(args: &Args) -> Result<DemoConfig, ConfigError> {
    let latency = match args.latency {
        Some(latency) => latency,
        None => demo::latency_from_env()?,
    };
    let rate_limit = match args.rate_limit {
        Some(limit) => Some(limit),
        None => RateLimit::from_env()?,
    };
    let rate_limit = rate_limit.map(|l| {
        if args.no_retry_after {
            l.retry_after(false)
        } else {
            l
        }
    });
    let config = DemoConfig::default()
        .with_latency(latency)
        .with_rate_limit(rate_limit);
    Ok(match &args.otlp {
        Some(url) => config.with_otlp(url),
        None => config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>, String> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_flags() {
        let a = parse(&[]).unwrap().unwrap();
        assert_eq!(a.addr.to_string(), DEFAULT_ADDR);
        assert_eq!(a.latency, None);
        let a = parse(&["--addr", "127.0.0.1:0", "--latency-ms=25"])
            .unwrap()
            .unwrap();
        assert_eq!(a.addr.port(), 0);
        assert_eq!(a.latency, Some(Duration::from_millis(25)));
        assert_eq!(a.rate_limit, None);
        let a = parse(&["--rate-limit", "100", "--no-retry-after"])
            .unwrap()
            .unwrap();
        assert_eq!(a.rate_limit, Some(RateLimit::new(100.0)));
        let c = config(&a).unwrap();
        assert_eq!(c.rate_limit, Some(RateLimit::new(100.0).retry_after(false)));
        assert!(parse(&["--help"]).unwrap().is_none());
        let a = parse(&["--otlp", "http://127.0.0.1:4318"])
            .unwrap()
            .unwrap();
        assert_eq!(
            config(&a).unwrap().otlp.as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
        assert!(parse(&["--otlp", "127.0.0.1:4318"]).is_err());
        let a = parse(&["--judge", "--latency-ms", "5"]).unwrap().unwrap();
        assert!(a.judge && a.latency == Some(Duration::from_millis(5)));
        for bad in [
            &["--addr"][..],
            &["--addr", "localhost"],
            &["--latency-ms", "soon"],
            &["--latency-ms="],
            &["--rate-limit", "0"],
            &["--no-retry-after=yes"],
            &["--judge", "--rate-limit", "10"],
            &["--judge=yes"],
            &["--port", "1"],
            &["extra"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
