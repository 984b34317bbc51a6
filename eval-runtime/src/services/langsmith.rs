//! LangSmith's dataset API, for seed 002's last step: a golden dataset
//! uploaded as a LangSmith dataset of key-value examples.
//!
//! Two calls to the configured endpoint (`LANGSMITH_ENDPOINT`, default
//! `https://api.smith.langchain.com`), the key (`LANGSMITH_API_KEY`) in its
//! `x-api-key` header and nowhere else: `POST /api/v1/datasets` `{name,
//! description, data_type: "kv"}` (with tags, `extra: {metadata: {tags}}`)
//! gives the dataset's `id` (and `tenant_id`, for its web URL); `POST
//! /api/v1/examples/bulk` with one `{dataset_id, inputs, outputs, metadata}`
//! per sample adds the examples. Redirects and answer sizes follow the
//! crate's HTTP rules (same origin only, bounded bodies). Any failure is
//! [`UploadError`], whose text starts `LANGSMITH_UPLOAD_FAILED` (seed 002's
//! code); the caller's local files are not touched.

use std::time::Duration;

use serde_json::{Value, json};

use crate::http::{read_body, runtime_client};
use crate::model::one_line;
use crate::secrets::Secret;

/// LangSmith's API, unless `LANGSMITH_ENDPOINT` says otherwise.
pub const DEFAULT_ENDPOINT: &str = "https://api.smith.langchain.com";

/// LangSmith's web app, for the API at [`DEFAULT_ENDPOINT`].
const WEB: &str = "https://smith.langchain.com";

/// An id as LangSmith gives them (a UUID): letters, digits, `-`, `_`.
fn is_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The longest one upload call may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Largest answer read from LangSmith.
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// Examples sent per bulk call.
const BATCH: usize = 500;

/// A LangSmith endpoint and the key for it. `Debug` shows the endpoint
/// as every message does (no credentials, query or fragment).
#[derive(Clone)]
pub struct LangSmith {
    endpoint: reqwest::Url,
    key: Secret,
}

impl std::fmt::Debug for LangSmith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LangSmith")
            .field(
                "endpoint",
                &crate::config::shown_url(self.endpoint.as_str()),
            )
            .field("key", &self.key)
            .finish()
    }
}

/// What an upload made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Uploaded {
    /// The dataset's id, as LangSmith gave it (an id: letters, digits,
    /// `-`, `_`), any configured key in it masked.
    pub dataset_id: String,
    /// Examples added.
    pub examples: usize,
    /// The workspace (tenant) the dataset belongs to, when LangSmith's
    /// answer names it (`tenant_id` of the dataset object).
    pub tenant_id: Option<String>,
    /// Where to see the dataset: with LangSmith's own API, its web page
    /// (`https://smith.langchain.com/o/{tenant_id}/datasets/{id}`, the form
    /// the SDK's `Dataset.url` gives; without a tenant `…/datasets/{id}`);
    /// with another endpoint (a self-hosted one, a proxy), the dataset's
    /// API URL (`{endpoint}/api/v1/datasets/{id}`, shown without query).
    pub url: String,
}

/// Why an upload failed (seed 002's `LANGSMITH_UPLOAD_FAILED`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UploadError {
    /// The endpoint is not an http(s) URL with a host and without
    /// `user:password@` (shown without credentials, query or fragment).
    #[error(
        "LANGSMITH_UPLOAD_FAILED: the endpoint `{0}` is not an http(s) URL without `user:password@`"
    )]
    Endpoint(String),
    /// A call could not be made or was refused.
    #[error("LANGSMITH_UPLOAD_FAILED: {step}: {why}")]
    Call {
        /// Which call (`create the dataset`, `add examples 1-500`).
        step: String,
        /// What went wrong: the status and LangSmith's message, or the
        /// transport's error (never the key).
        why: String,
    },
}

impl LangSmith {
    /// The API at `endpoint` (its origin and path prefix), with `key`:
    /// `endpoint` must be an http(s) URL with a host and without
    /// `user:password@` (the key is `key`, sent as `x-api-key`; credentials
    /// in the URL would go as basic authentication beside it), as
    /// [`Config`](crate::Config) checks `LANGSMITH_ENDPOINT` when it is read.
    pub fn new(endpoint: &str, key: Secret) -> Result<LangSmith, UploadError> {
        let endpoint = endpoint.trim();
        match reqwest::Url::parse(endpoint) {
            Ok(mut u)
                if matches!(u.scheme(), "http" | "https")
                    && u.host().is_some()
                    && u.username().is_empty()
                    && u.password().is_none() =>
            {
                u.set_fragment(None);
                Ok(LangSmith { endpoint: u, key })
            }
            _ => Err(UploadError::Endpoint(crate::config::shown_url(endpoint))),
        }
    }

    /// The endpoint with `path` (`/api/v1/datasets`) appended to its path;
    /// its query, if any, kept (`https://h/x?org=1` gives
    /// `https://h/x/api/v1/datasets?org=1`).
    fn url(&self, path: &str) -> reqwest::Url {
        let mut url = self.endpoint.clone();
        let joined = format!("{}{path}", url.path().trim_end_matches('/'));
        url.set_path(&joined);
        url
    }

    /// Creates dataset `name` and adds `examples` (each `{inputs, outputs,
    /// metadata}`), blocking the calling thread.
    pub fn upload_blocking(
        &self,
        name: &str,
        description: &str,
        examples: &[Value],
    ) -> Result<Uploaded, UploadError> {
        self.upload_tagged_blocking(name, description, &[], examples)
    }

    /// As [`upload_blocking`](Self::upload_blocking), with `tags` kept in the
    /// dataset's metadata: LangSmith's create-dataset body has no tags
    /// field; it takes metadata as `extra.metadata` (langsmith 0.1.147,
    /// `Client.create_dataset`), so the tags go as `extra.metadata.tags`.
    pub fn upload_tagged_blocking(
        &self,
        name: &str,
        description: &str,
        tags: &[String],
        examples: &[Value],
    ) -> Result<Uploaded, UploadError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| UploadError::Call {
                step: "start".into(),
                why: e.to_string(),
            })?;
        rt.block_on(self.upload(name, description, tags, examples))
    }

    async fn upload(
        &self,
        name: &str,
        description: &str,
        tags: &[String],
        examples: &[Value],
    ) -> Result<Uploaded, UploadError> {
        let mut body = json!({"name": name, "description": description, "data_type": "kv"});
        if !tags.is_empty() {
            body["extra"] = json!({"metadata": {"tags": tags}});
        }
        let created = self
            .post("create the dataset", "/api/v1/datasets", &body)
            .await?;
        let dataset_id = created
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| UploadError::Call {
                step: "create the dataset".into(),
                why: format!(
                    "the answer has no dataset `id`: {}",
                    one_line(&created.to_string(), 200)
                ),
            })?
            .to_string();
        // issue37:escape: LangSmith's ids are UUIDs (langsmith 0.1.147
        // `schemas.Dataset.id: UUID`); anything else is not printed as one.
        if !is_id(&dataset_id) {
            return Err(UploadError::Call {
                step: "create the dataset".into(),
                why: format!(
                    "the answer's dataset `id` is not an id: {}",
                    one_line(&dataset_id, 80)
                ),
            });
        }
        for (i, batch) in examples.chunks(BATCH).enumerate() {
            let body: Vec<Value> = batch
                .iter()
                .map(|e| {
                    let mut e = e.clone();
                    if let Some(o) = e.as_object_mut() {
                        o.insert("dataset_id".into(), Value::from(dataset_id.clone()));
                    }
                    e
                })
                .collect();
            let step = format!("add examples {}-{}", i * BATCH + 1, i * BATCH + batch.len());
            self.post(&step, "/api/v1/examples/bulk", &Value::from(body))
                .await?;
        }
        // LangSmith's dataset object names its workspace as `tenant_id` (a
        // UUID); anything else is left out.
        let tenant_id = created
            .get("tenant_id")
            .and_then(Value::as_str)
            .filter(|t| is_id(t))
            .map(str::to_string);
        let url = self.dataset_url(&dataset_id, tenant_id.as_deref());
        Ok(Uploaded {
            // issue37:escape: an id that echoes a configured key is not shown.
            dataset_id: crate::secrets::mask(&dataset_id).into_owned(),
            examples: examples.len(),
            tenant_id,
            url: crate::secrets::mask(&url).into_owned(),
        })
    }

    /// Where dataset `id` is seen (see [`Uploaded::url`]).
    fn dataset_url(&self, id: &str, tenant_id: Option<&str>) -> String {
        let default = reqwest::Url::parse(DEFAULT_ENDPOINT).ok();
        let is_default = default.is_some_and(|d| {
            d.host_str() == self.endpoint.host_str()
                && d.scheme() == self.endpoint.scheme()
                && self.endpoint.path().trim_matches('/').is_empty()
        });
        match (is_default, tenant_id) {
            (true, Some(t)) => format!("{WEB}/o/{t}/datasets/{id}"),
            (true, None) => format!("{WEB}/datasets/{id}"),
            (false, _) => {
                crate::config::shown_url(self.url(&format!("/api/v1/datasets/{id}")).as_str())
            }
        }
    }

    /// One JSON `POST`; its JSON answer.
    async fn post(&self, step: &str, path: &str, body: &Value) -> Result<Value, UploadError> {
        let fail = |why: String| UploadError::Call {
            step: step.to_string(),
            why,
        };
        let client = runtime_client(self.endpoint.as_str()).map_err(|e| fail(e.to_string()))?;
        let mut key = reqwest::header::HeaderValue::from_str(self.key.expose())
            .map_err(|_| fail("the key holds characters not allowed in an HTTP header".into()))?;
        key.set_sensitive(true);
        let response = client
            .post(self.url(path))
            .header("x-api-key", key)
            .timeout(TIMEOUT)
            .json(body)
            .send()
            .await
            .map_err(|e| {
                fail(match crate::http::Failure::of_send(&e) {
                    crate::http::Failure::Timeout => {
                        format!("no answer in {} s", TIMEOUT.as_secs())
                    }
                    crate::http::Failure::Unreachable(why) => format!("unreachable: {why}"),
                    crate::http::Failure::Refused(r) => r.to_string(),
                })
            })?;
        let status = response.status();
        let bytes = read_body(response, MAX_ANSWER_BYTES, TIMEOUT)
            .await
            .map_err(|r| fail(r.to_string()))?;
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            return Err(fail(format!(
                "HTTP {}: {}",
                status.as_u16(),
                crate::secrets::mask(&one_line(&text, 300))
            )));
        }
        crate::http::reply_json(&bytes, MAX_ANSWER_BYTES).map_err(|e| match e {
            eval_datasets::json::BoundedJsonError::TooBig { .. } => fail(format!("refused: {e}")),
            e => fail(format!("the answer is not JSON: {e}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_with_credentials_is_refused_without_showing_them() {
        for endpoint in [
            "ftp://user:SECRET@smith.example/",
            "https://user:SECRET@smith.example/",
            "https://SECRET@smith.example/",
            "user:SECRET@smith.example",
            "http://smith.example:99999/?key=SECRET",
        ] {
            let e = LangSmith::new(endpoint, Secret::new("ls-key-0123456789")).unwrap_err();
            let said = e.to_string();
            assert!(said.starts_with("LANGSMITH_UPLOAD_FAILED"), "{said}");
            assert!(!said.contains("SECRET"), "{endpoint}: {said}");
        }
        assert!(LangSmith::new("https://smith.example/api/", Secret::new("k")).is_ok());
    }

    /// A LangSmith stand-in on loopback (the answers' shape: LangSmith's
    /// `POST /api/v1/datasets` returns the dataset, whose `id` the SDK's
    /// `Client.create_dataset` reads); records each request line.
    fn langsmith(lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> std::net::SocketAddr {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let mut reader = BufReader::new(stream);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let mut length = 0usize;
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        if h.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    lines.lock().unwrap().push(line.trim_end().to_string());
                    let answer = r#"{"id": "d-1"}"#;
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                        answer.len()
                    );
                    reader.get_mut().write_all(reply.as_bytes()).unwrap();
                }
            }
        });
        addr
    }

    #[test]
    fn the_api_paths_go_on_the_endpoints_path_and_its_query_stays() {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let addr = langsmith(lines.clone());
        let ls =
            LangSmith::new(&format!("http://{addr}/prefix/?org=x#f"), Secret::new("k")).unwrap();
        let up = ls
            .upload_blocking("n", "d", &[json!({"inputs": {}, "outputs": {}})])
            .unwrap();
        assert_eq!(up.dataset_id, "d-1");
        // Another endpoint than LangSmith's: the dataset's API URL.
        assert_eq!(up.url, format!("http://{addr}/prefix/api/v1/datasets/d-1"));
        let default = LangSmith::new(DEFAULT_ENDPOINT, Secret::new("k")).unwrap();
        assert_eq!(
            default.dataset_url("d-1", Some("t-9")),
            "https://smith.langchain.com/o/t-9/datasets/d-1"
        );
        assert_eq!(
            default.dataset_url("d-1", None),
            "https://smith.langchain.com/datasets/d-1"
        );
        assert_eq!(
            *lines.lock().unwrap(),
            [
                "POST /prefix/api/v1/datasets?org=x HTTP/1.1",
                "POST /prefix/api/v1/examples/bulk?org=x HTTP/1.1"
            ]
        );
        assert!(!format!("{ls:?}").contains("org=x"), "{ls:?}");
    }
}
