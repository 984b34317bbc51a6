//! A small HTTP/1.1 server on 127.0.0.1:0 for the services the tests stand
//! in for (agents, judges, LangSmith, rerankers): each connection on its
//! own thread, requests read one after another (keep-alive) by their
//! `content-length`, each answered by the handler.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use serde_json::Value;

/// One request: method, path, headers (names as sent), body.
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The request line, as `POST /v1/chat/completions HTTP/1.1`.
    pub fn line(&self) -> String {
        format!("{} {} HTTP/1.1", self.method, self.path)
    }

    /// A header's value (names compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The text of the last `user` message of a chat-completions request.
    pub fn last_user_message(&self) -> String {
        self.json()["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    }
}

/// A reply: status and JSON body.
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    pub fn json(status: u16, body: &Value) -> Reply {
        Reply {
            status,
            body: body.to_string(),
        }
    }

    pub fn ok(body: &Value) -> Reply {
        Reply::json(200, body)
    }
}

/// An OpenAI chat-completions answer (the documented response shape) whose
/// message is `content`.
pub fn chat_completion(model: &Value, content: &str) -> Value {
    serde_json::json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}

/// Serves `handler` on 127.0.0.1:0; returns `http://127.0.0.1:PORT`.
pub fn serve(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = handler.clone();
            std::thread::spawn(move || connection(stream, &*handler));
        }
    });
    url
}

fn connection(stream: TcpStream, handler: &dyn Fn(&Request) -> Reply) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    while let Some(request) = read_request(&mut reader) {
        let reply = handler(&request);
        let response = format!(
            "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
            reply.status,
            reply.body.len(),
            reply.body
        );
        if out.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}
