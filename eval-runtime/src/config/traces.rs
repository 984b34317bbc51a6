//! The trace settings: where the run listens for the agent's spans
//! (`EVAL_OTLP_RECEIVER`, `EVAL_TRACE_WAIT_MS`), and where it exports its
//! evaluation results (the OpenTelemetry exporter's standard
//! `OTEL_EXPORTER_OTLP_*` variables, as the OTLP exporter specification
//! defines them).

use std::net::SocketAddr;
use std::time::Duration;

use super::{BadVar, Secret};

/// How long a sample waits, after the agent answered, for the agent's spans.
pub(crate) const DEFAULT_TRACE_WAIT: Duration = Duration::from_secs(2);
/// The OTLP exporter's default per-request timeout.
const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// Evaluation spans a run holds for export, at most.
pub(crate) const DEFAULT_EXPORT_QUEUE: usize = 4096;

/// What a run does with traces (see the guide's "Traces" chapter).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TraceSettings {
    /// `EVAL_OTLP_RECEIVER`: the loopback address where the run listens for
    /// the agent's spans (OTLP over HTTP, `POST /v1/traces`); `None`: it does
    /// not, and trajectories come from the answers' tool calls.
    pub receiver: Option<SocketAddr>,
    /// `EVAL_TRACE_WAIT_MS`: how long a sample waits, once answered, for
    /// its trace to be complete (default 2000 ms).
    pub wait: Duration,
    /// Where evaluation results are exported; `None` without
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`).
    pub export: Option<ExportSettings>,
}

impl Default for TraceSettings {
    fn default() -> Self {
        TraceSettings {
            receiver: None,
            wait: DEFAULT_TRACE_WAIT,
            export: None,
        }
    }
}

impl TraceSettings {
    /// Whether requests to the agent carry a `traceparent`: when its spans
    /// are collected or results are exported (to link to its traces).
    pub fn propagate(&self) -> bool {
        self.receiver.is_some() || self.export.is_some()
    }
}

/// The body an OTLP/HTTP exporter sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// `http/protobuf` (the default).
    Protobuf,
    /// `http/json`.
    Json,
}

/// Where and how evaluation results are exported (OTLP over HTTP). Its
/// `Debug` shows the endpoint without credentials, and no header value.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ExportSettings {
    /// The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` with `v1/traces` appended.
    pub endpoint: String,
    /// `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`: `http/protobuf` or `http/json`.
    pub protocol: OtlpProtocol,
    /// `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS` (`key=value,...`,
    /// percent-decoded): sent to that endpoint only; never printed.
    pub headers: Vec<(String, Secret)>,
    /// `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT`, milliseconds (default 10000).
    pub timeout: Duration,
    /// `OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION=gzip`.
    pub gzip: bool,
    /// `OTEL_SERVICE_NAME`, else `service.name` of
    /// `OTEL_RESOURCE_ATTRIBUTES`, else `evals`.
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`), but `service.name`.
    pub resource: Vec<(String, String)>,
    /// `EVAL_OTLP_QUEUE`: evaluation spans held for export at most; beyond
    /// it they are dropped and counted (default 4096).
    pub queue: usize,
}

impl std::fmt::Debug for ExportSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ExportSettings")
            .field("endpoint", &without_credentials(&self.endpoint))
            .field("protocol", &self.protocol)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .field("gzip", &self.gzip)
            .field("service_name", &self.service_name)
            .field("resource", &self.resource)
            .field("queue", &self.queue)
            .finish()
    }
}

/// `url` without a `user:password@` part.
fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

/// The raw values, read with the other settings.
pub(super) struct TraceVars {
    receiver: Option<String>,
    wait: Option<String>,
    endpoint: Option<String>,
    traces_endpoint: Option<String>,
    protocol: Option<String>,
    /// Which variable gave it.
    protocol_var: &'static str,
    headers: Option<String>,
    timeout: Option<String>,
    compression: Option<String>,
    service_name: Option<String>,
    resource: Option<String>,
    sdk_disabled: Option<String>,
    traces_exporter: Option<String>,
    queue: Option<String>,
}

impl TraceVars {
    pub(super) fn get(get: &mut impl FnMut(&'static str, bool) -> Option<String>) -> Self {
        // The signal's own variable wins over the general one.
        let mut either = |traces: &'static str, general: &'static str, secret: bool| {
            get(traces, secret)
                .map(|v| (traces, v))
                .or_else(|| get(general, secret).map(|v| (general, v)))
        };
        let protocol = either(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            false,
        );
        let protocol_var = protocol
            .as_ref()
            .map_or("OTEL_EXPORTER_OTLP_PROTOCOL", |(v, _)| *v);
        let headers = either(
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
            true,
        );
        let timeout = either(
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
            false,
        );
        let compression = either(
            "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
            "OTEL_EXPORTER_OTLP_COMPRESSION",
            false,
        );
        TraceVars {
            receiver: get("EVAL_OTLP_RECEIVER", false),
            wait: get("EVAL_TRACE_WAIT_MS", false),
            endpoint: get("OTEL_EXPORTER_OTLP_ENDPOINT", false),
            traces_endpoint: get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", false),
            protocol: protocol.map(|(_, v)| v),
            protocol_var,
            headers: headers.map(|(_, v)| v),
            timeout: timeout.map(|(_, v)| v),
            compression: compression.map(|(_, v)| v),
            service_name: get("OTEL_SERVICE_NAME", false),
            resource: get("OTEL_RESOURCE_ATTRIBUTES", false),
            sdk_disabled: get("OTEL_SDK_DISABLED", false),
            traces_exporter: get("OTEL_TRACES_EXPORTER", false),
            queue: get("EVAL_OTLP_QUEUE", false),
        }
    }

    /// The checked settings; each bad value is pushed onto `bad`.
    pub(super) fn parse(self, bad: &mut Vec<BadVar>) -> TraceSettings {
        let mut push = |var: &'static str, value: String, expected: &str| {
            bad.push(BadVar {
                var,
                value,
                expected: expected.into(),
            })
        };
        let receiver = self.receiver.and_then(|v| match receiver_addr(&v) {
            Ok(addr) => addr,
            Err(expected) => {
                push("EVAL_OTLP_RECEIVER", v, expected);
                None
            }
        });
        let wait = match self.wait {
            None => DEFAULT_TRACE_WAIT,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(ms) if ms <= 600_000 => Duration::from_millis(ms),
                _ => {
                    push(
                        "EVAL_TRACE_WAIT_MS",
                        v,
                        "a whole number of milliseconds from 0 to 600000",
                    );
                    DEFAULT_TRACE_WAIT
                }
            },
        };
        let disabled = self
            .sdk_disabled
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || self
                .traces_exporter
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
        let endpoint = match (self.traces_endpoint, self.endpoint) {
            _ if disabled => None,
            (Some(url), _) => Some(("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url, false)),
            (None, Some(url)) => Some(("OTEL_EXPORTER_OTLP_ENDPOINT", url, true)),
            (None, None) => None,
        };
        let export = endpoint.and_then(|(var, url, append)| {
            let endpoint = match traces_url(&url, append) {
                Ok(u) => u,
                Err(why) => {
                    push(var, without_credentials(&url), &why);
                    return None;
                }
            };
            let protocol = match self.protocol.as_deref().map(str::trim) {
                None | Some("http/protobuf") => OtlpProtocol::Protobuf,
                Some("http/json") => OtlpProtocol::Json,
                Some(_) => {
                    push(
                        self.protocol_var,
                        self.protocol.clone().unwrap_or_default(),
                        "http/protobuf or http/json (gRPC is not supported: point the endpoint at the collector's OTLP/HTTP port, 4318)",
                    );
                    OtlpProtocol::Protobuf
                }
            };
            let headers = match self.headers.as_deref().map(pairs) {
                None => Vec::new(),
                Some(Ok(h)) => h.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(),
                Some(Err(())) => {
                    push(
                        "OTEL_EXPORTER_OTLP_HEADERS",
                        "<redacted>".into(),
                        "key=value pairs separated by commas (values percent-encoded)",
                    );
                    Vec::new()
                }
            };
            let timeout = match self.timeout.as_deref().map(str::trim) {
                None => DEFAULT_EXPORT_TIMEOUT,
                Some(v) => match v.parse::<u64>() {
                    Ok(0) => Duration::from_secs(600),
                    Ok(ms) => Duration::from_millis(ms.min(600_000)),
                    Err(_) => {
                        push(
                            "OTEL_EXPORTER_OTLP_TIMEOUT",
                            v.to_string(),
                            "milliseconds, a whole number",
                        );
                        DEFAULT_EXPORT_TIMEOUT
                    }
                },
            };
            let gzip = match self.compression.as_deref().map(str::trim) {
                None | Some("none") => false,
                Some("gzip") => true,
                Some(other) => {
                    push(
                        "OTEL_EXPORTER_OTLP_COMPRESSION",
                        other.to_string(),
                        "gzip or none",
                    );
                    false
                }
            };
            let mut resource = match self.resource.as_deref().map(pairs) {
                None => Vec::new(),
                Some(Ok(r)) => r,
                Some(Err(())) => {
                    push(
                        "OTEL_RESOURCE_ATTRIBUTES",
                        self.resource.clone().unwrap_or_default(),
                        "key=value pairs separated by commas (values percent-encoded)",
                    );
                    Vec::new()
                }
            };
            let named = resource
                .iter()
                .position(|(k, _)| k == "service.name")
                .map(|i| resource.remove(i).1);
            let service_name = self
                .service_name
                .clone()
                .or(named)
                .unwrap_or_else(|| "evals".into());
            let queue = match self.queue.as_deref().map(str::trim) {
                None => DEFAULT_EXPORT_QUEUE,
                Some(v) => match v.parse::<usize>() {
                    Ok(n) if (1..=1_000_000).contains(&n) => n,
                    _ => {
                        push(
                            "EVAL_OTLP_QUEUE",
                            v.to_string(),
                            "a whole number of spans from 1 to 1000000",
                        );
                        DEFAULT_EXPORT_QUEUE
                    }
                },
            };
            Some(ExportSettings {
                endpoint,
                protocol,
                headers,
                timeout,
                gzip,
                service_name,
                resource,
                queue,
            })
        });
        TraceSettings {
            receiver,
            wait,
            export,
        }
    }
}

/// `EVAL_OTLP_RECEIVER`: `off`, or a loopback `host:port` (`localhost`
/// means 127.0.0.1; port 0 picks a free one).
fn receiver_addr(value: &str) -> Result<Option<SocketAddr>, &'static str> {
    const EXPECTED: &str = "off, or a loopback address to listen on, e.g. 127.0.0.1:4318 (spans are received on loopback only)";
    let v = value.trim();
    if v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let v = v.strip_prefix("http://").unwrap_or(v).trim_end_matches('/');
    let v = match v.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => v.to_string(),
    };
    match v.parse::<SocketAddr>() {
        Ok(addr) if addr.ip().is_loopback() => Ok(Some(addr)),
        _ => Err(EXPECTED),
    }
}

/// The traces URL of an OTLP/HTTP endpoint: the base URL with `v1/traces`
/// appended (`append`), or the signal's own URL as given.
fn traces_url(url: &str, append: bool) -> Result<String, String> {
    let url = url.trim();
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || url.len() < "http://x".len() {
        return Err("an http:// or https:// URL, e.g. http://localhost:4318".into());
    }
    if !append {
        // An empty path is `/`.
        let after = &url[url.find("://").map_or(0, |i| i + 3)..];
        return Ok(if after.contains('/') {
            url.to_string()
        } else {
            format!("{url}/")
        });
    }
    let base = url.trim_end_matches('/');
    Ok(format!("{base}/v1/traces"))
}

/// `key=value,key=value` with percent-encoded values (W3C Baggage, as the
/// exporter specification writes headers and resource attributes); empty
/// entries are skipped.
fn pairs(value: &str) -> Result<Vec<(String, String)>, ()> {
    let mut out = Vec::new();
    for entry in value.split(',') {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let (k, v) = entry.split_once('=').ok_or(())?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s.trim())
                .decode_utf8()
                .map(|c| c.into_owned())
                .map_err(|_| ())
        };
        let key = decode(k)?;
        if key.is_empty() {
            return Err(());
        }
        out.push((key, decode(v)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<TraceSettings, Vec<BadVar>> {
        let mut get = |name: &'static str, _secret: bool| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let raw = TraceVars::get(&mut get);
        let mut bad = Vec::new();
        let settings = raw.parse(&mut bad);
        if bad.is_empty() {
            Ok(settings)
        } else {
            Err(bad)
        }
    }

    #[test]
    fn nothing_set_is_no_receiver_and_no_export() {
        let s = read(&[]).unwrap();
        assert_eq!(s, TraceSettings::default());
        assert!(!s.propagate());
    }

    #[test]
    fn the_receiver_listens_on_loopback_only() {
        let s = read(&[("EVAL_OTLP_RECEIVER", "127.0.0.1:4318")]).unwrap();
        assert_eq!(s.receiver, Some("127.0.0.1:4318".parse().unwrap()));
        assert!(s.propagate());
        let s = read(&[("EVAL_OTLP_RECEIVER", "localhost:0")]).unwrap();
        assert_eq!(s.receiver, Some("127.0.0.1:0".parse().unwrap()));
        let s = read(&[("EVAL_OTLP_RECEIVER", "[::1]:4318")]).unwrap();
        assert!(s.receiver.unwrap().ip().is_loopback());
        assert_eq!(
            read(&[("EVAL_OTLP_RECEIVER", "off")]).unwrap().receiver,
            None
        );
        let bad = read(&[("EVAL_OTLP_RECEIVER", "0.0.0.0:4318")]).unwrap_err();
        assert_eq!(bad[0].var, "EVAL_OTLP_RECEIVER");
        assert!(bad[0].expected.contains("loopback"), "{}", bad[0].expected);
        let bad = read(&[("EVAL_TRACE_WAIT_MS", "soon")]).unwrap_err();
        assert_eq!(bad[0].var, "EVAL_TRACE_WAIT_MS");
    }

    #[test]
    fn export_follows_the_exporter_specification() {
        let s = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")]).unwrap();
        let e = s.export.unwrap();
        assert_eq!(e.endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(e.protocol, OtlpProtocol::Protobuf);
        assert_eq!(e.timeout, Duration::from_secs(10));
        assert_eq!(e.service_name, "evals");
        // The signal's own endpoint is used as given; its protocol,
        // headers and timeout win over the general ones.
        let s = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9999/custom"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-key=a%20b, other = c"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-resource,team=evals",
            ),
        ])
        .unwrap();
        let e = s.export.unwrap();
        assert_eq!(e.endpoint, "http://b:9999/custom");
        assert_eq!(e.protocol, OtlpProtocol::Json);
        let headers: Vec<(&str, &str)> = e
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.expose()))
            .collect();
        assert_eq!(headers, [("x-key", "a b"), ("other", "c")]);
        assert_eq!(e.timeout, Duration::from_millis(2500));
        assert!(e.gzip);
        assert_eq!(e.service_name, "from-resource");
        assert_eq!(e.resource, [("team".to_string(), "evals".to_string())]);
        let s = read(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9999"),
            ("OTEL_SERVICE_NAME", "mine"),
        ])
        .unwrap();
        let e = s.export.unwrap();
        assert_eq!(
            (e.endpoint.as_str(), e.service_name.as_str()),
            ("http://b:9999/", "mine")
        );
        // Off switches.
        for off in [
            ("OTEL_SDK_DISABLED", "TRUE"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ] {
            let s = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"), off]).unwrap();
            assert_eq!(s.export, None, "{off:?}");
        }
        let bad = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .unwrap_err();
        assert!(bad[0].expected.contains("gRPC is not supported"));
        let s = read(&[
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "https://user:pw@collector.example:4318",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=hidden"),
        ])
        .unwrap();
        let shown = format!("{:?}", s.export.unwrap());
        assert!(
            !shown.contains("pw@") && !shown.contains("hidden"),
            "{shown}"
        );
        assert!(
            shown.contains("https://collector.example:4318/v1/traces"),
            "{shown}"
        );
        let bad = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
        ])
        .unwrap_err();
        assert_eq!(bad[0].var, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
        let bad = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "a:4318")]).unwrap_err();
        assert_eq!(bad[0].var, "OTEL_EXPORTER_OTLP_ENDPOINT");
        let bad = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "token-without-value"),
        ])
        .unwrap_err();
        assert_eq!(bad[0].value, "<redacted>", "a header is never shown");
    }
}
