//! A scripted HTTP/1.1 server on loopback for tests: every request is logged
//! and answered by a closure (status, extra headers, body), or never answered.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one request.
pub enum Reply {
    /// Status, extra header lines (`"retry-after: 1"`), body.
    With(u16, Vec<String>, String),
    /// Read the request, never answer.
    Hang,
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Reply {
        Reply::With(status, Vec::new(), body.into())
    }
}

/// A logged request: head (request line and headers) and JSON body.
pub type Logged = (String, Value);

pub struct Server {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Logged>>>,
}

impl Server {
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

pub async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let len = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Some((head, buf[end + 4..end + 4 + len].to_vec()));
        }
    }
}

/// Starts a server on 127.0.0.1:0 in the current runtime. `respond` gets the
/// 1-based request number, the head and the JSON body.
pub async fn serve<F>(respond: F) -> Server
where
    F: Fn(usize, &str, &Value) -> Reply + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests: Arc<Mutex<Vec<Logged>>> = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    let respond = Arc::new(respond);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            let respond = respond.clone();
            tokio::spawn(async move {
                while let Some((head, body)) = read_request(&mut stream).await {
                    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let n = {
                        let mut log = log.lock().unwrap();
                        log.push((head.clone(), json.clone()));
                        log.len()
                    };
                    let (status, headers, body) = match respond(n, &head, &json) {
                        Reply::With(s, h, b) => (s, h, b),
                        Reply::Hang => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            return;
                        }
                    };
                    let mut reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                        body.len()
                    );
                    for h in headers {
                        reply.push_str(&h);
                        reply.push_str("\r\n");
                    }
                    reply.push_str("\r\n");
                    reply.push_str(&body);
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Server { url, requests }
}

/// A server on its own thread and runtime, driven for the rest of the process.
pub fn serve_detached<F>(respond: F) -> Server
where
    F: Fn(usize, &str, &Value) -> Reply + Send + Sync + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let server = serve(respond).await;
            tx.send((server.url.clone(), server.requests.clone()))
                .unwrap();
            std::future::pending::<()>().await;
        });
    });
    let (url, requests) = rx.recv().unwrap();
    Server { url, requests }
}

/// An OpenAI chat-completions body whose message content is `content`.
pub fn chat(content: &str) -> String {
    serde_json::json!({
        "id": "x",
        "object": "chat.completion",
        "model": "judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
    .to_string()
}

/// The boundary a logged judge request's system message announces (the
/// digits after its first `<`), and its user message.
fn boundary_and_user(body: &Value) -> (&str, &str) {
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    let user = body["messages"][1]["content"].as_str().unwrap_or("");
    let boundary = system
        .split_once('<')
        .and_then(|(_, rest)| rest.split_once(' '))
        .map(|(b, _)| b)
        .unwrap_or("");
    (boundary, user)
}

/// The sections of a logged judge request, `(opening, content)` in order:
/// `<B NAME>` (a data block) or `<B task=TASK>` to `</B>`. A test's own
/// reading of the format.
fn sections(body: &Value) -> Vec<(String, String)> {
    let (boundary, user) = boundary_and_user(body);
    let open = format!("<{boundary} ");
    let close = format!("\n</{boundary}>\n");
    let mut sections = Vec::new();
    let mut rest = user;
    while let Some(at) = rest.find(&open) {
        let after = &rest[at + open.len()..];
        let Some((name, body)) = after.split_once(">\n") else {
            break;
        };
        let Some(end) = body.find(&close) else {
            break;
        };
        sections.push((name.to_string(), body[..end].to_string()));
        rest = &body[end + close.len()..];
    }
    sections
}

/// The data blocks of a logged judge request, `(name, content)` in order.
pub fn data_blocks(body: &Value) -> Vec<(String, String)> {
    sections(body)
        .into_iter()
        .filter(|(name, _)| !name.starts_with("task="))
        .collect()
}

/// The content of the data block `name` of a logged judge request.
pub fn block(body: &Value, name: &str) -> Option<String> {
    data_blocks(body)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, c)| c)
}

/// The task a judge request names: its user message's task section,
/// `<B task=TASK>`.
pub fn task(body: &serde_json::Value) -> String {
    task_section(body).0
}

/// The task section of a judge request: its name (the task) and text
/// (the instructions).
pub fn task_section(body: &serde_json::Value) -> (String, String) {
    sections(body)
        .into_iter()
        .find_map(|(name, text)| name.strip_prefix("task=").map(|t| (t.to_string(), text)))
        .unwrap_or_default()
}

/// Arguments for a harness run inside this test process, with everything
/// libtest-mimic prints sent to a log file of its own: the samples these
/// tests fail on purpose would otherwise print `FAILED` lines (libtest-mimic
/// writes to the real stdout, which `cargo test` does not capture) into a
/// green run.
pub fn harness_args(args: &[&str]) -> libtest_mimic::Arguments {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("eval-harness-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(format!("{n}.log")).display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--logfile", &log]);
    libtest_mimic::Arguments::from_iter(all)
}

/// One metric scored through the public [`eval_runtime::score`], read back
/// as a score or the error it failed with (what the metric tests compare).
pub struct Judged {
    pub score: Result<f64, eval_runtime::MetricError>,
    pub method: Option<&'static str>,
    pub raw: Option<f64>,
    pub reason: Option<String>,
    pub usage: eval_runtime::Usage,
    pub embeddings: eval_runtime::Usage,
}

pub async fn score(
    spec: &eval_runtime::MetricSpec,
    sample: &eval_runtime::Sample,
    response: &eval_runtime::Response,
    services: &eval_runtime::Services,
) -> Judged {
    let scored = eval_runtime::score(spec, sample, response, services).await;
    let result = scored.result;
    Judged {
        score: match (result.score, result.error) {
            (Some(s), _) => Ok(s),
            (None, Some(e)) => Err(e),
            (None, None) => panic!("`{}` has neither a score nor an error", spec.name),
        },
        method: result.method,
        raw: result.raw,
        reason: result.reason,
        usage: scored.judge,
        embeddings: scored.embeddings,
    }
}

/// ragas' non-LLM string similarity: 1 - Levenshtein distance / the longer
/// length (in characters).
pub fn string_similarity(a: &str, b: &str) -> f64 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    1.0 - eval_datasets::suggest::edit_distance(a, b) as f64 / longest as f64
}
