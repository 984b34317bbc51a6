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
            .field("endpoint", &super::shown_url(&self.endpoint))
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

/// The raw values, read with the other settings.
pub(super) struct TraceVars {
    receiver: Option<String>,
    wait: Option<String>,
    endpoint: Option<String>,
    traces_endpoint: Option<String>,
    protocol: Option<String>,
    /// Which variable gave it.
    protocol_var: &'static str,
    /// Each with the variable that gave it (the signal's own, else the
    /// general one).
    headers: Option<(&'static str, String)>,
    timeout: Option<(&'static str, String)>,
    compression: Option<(&'static str, String)>,
    service_name: Option<String>,
    resource: Option<String>,
    sdk_disabled: Option<String>,
    traces_exporter: Option<String>,
    queue: Option<String>,
}

/// Whether `OTEL_SDK_DISABLED` / `OTEL_TRACES_EXPORTER` turn the export
/// off. The OpenTelemetry spec's values, checked: a typo is said at start
/// (pushed with `push`) rather than read as "export" (or "do not").
fn export_off(
    sdk_disabled: Option<String>,
    traces_exporter: Option<String>,
    push: &mut impl FnMut(&'static str, String, &str),
) -> bool {
    let sdk_disabled = match sdk_disabled {
        Some(v) if v.trim().eq_ignore_ascii_case("true") => true,
        Some(v) if v.trim().is_empty() || v.trim().eq_ignore_ascii_case("false") => false,
        Some(v) => {
            push("OTEL_SDK_DISABLED", v, "true or false");
            false
        }
        None => false,
    };
    let otlp_chosen = match traces_exporter {
        None => true,
        Some(v) => match exporters(&v) {
            Ok(otlp) => otlp,
            Err(()) => {
                push(
                    "OTEL_TRACES_EXPORTER",
                    v,
                    "a comma-separated list of otlp, none, console, zipkin (only otlp exports here)",
                );
                true
            }
        },
    };
    sdk_disabled || !otlp_chosen
}

/// Whether the `OTEL_TRACES_EXPORTER` list `v` chooses OTLP (unset or empty:
/// OTLP, the spec's default; `none`, or only exporters this crate does not
/// have, such as `console`: nothing exported); `Err` on a name the spec does
/// not know.
fn exporters(v: &str) -> Result<bool, ()> {
    let names: Vec<String> = v
        .split(',')
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Ok(true);
    }
    for name in &names {
        if !matches!(
            name.as_str(),
            "otlp" | "none" | "console" | "zipkin" | "jaeger" | "logging"
        ) {
            return Err(());
        }
    }
    Ok(names.iter().any(|n| n == "otlp"))
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
            headers,
            timeout,
            compression,
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
        let disabled = export_off(self.sdk_disabled, self.traces_exporter, &mut push);
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
                    push(var, super::shown_url(&url), &why);
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
            let headers = match &self.headers {
                None => Vec::new(),
                Some((var, text)) => match otlp_headers(text) {
                    Ok(h) => h,
                    Err(why) => {
                        push(var, "<redacted>".into(), &why);
                        Vec::new()
                    }
                },
            };
            let timeout = match &self.timeout {
                None => DEFAULT_EXPORT_TIMEOUT,
                Some((var, v)) => match v.trim().parse::<u64>() {
                    Ok(0) => Duration::from_secs(600),
                    Ok(ms) => Duration::from_millis(ms.min(600_000)),
                    Err(_) => {
                        push(var, v.to_string(), "milliseconds, a whole number");
                        DEFAULT_EXPORT_TIMEOUT
                    }
                },
            };
            let gzip = match &self.compression {
                None => false,
                Some((var, v)) => match v.trim() {
                    "none" => false,
                    "gzip" => true,
                    _ => {
                        push(var, v.to_string(), "gzip or none");
                        false
                    }
                },
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
/// appended to its path (`append`; a query stays a query:
/// `http://c:4318/?k=x` gives `http://c:4318/v1/traces?k=x`), or the
/// signal's own URL as given (an empty path is `/`). A fragment is never
/// sent, so dropped. Basic authentication (`user:password@`) is allowed,
/// never shown.
fn traces_url(url: &str, append: bool) -> Result<String, String> {
    let example = "http://localhost:4318";
    let mut url = super::checks::http_url(url, example, super::checks::Userinfo::Allowed)?;
    url.set_fragment(None);
    if append {
        let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    Ok(url.to_string())
}

/// `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS`: `key=value,...`, both
/// percent-decoded as the exporter specification says (W3C Baggage's
/// format); each name an HTTP token, each value free of CR, LF, NUL and
/// other control characters once decoded (RFC 9110 §5.5), and no header
/// that frames the request (`Content-Length`, `Host`, ...): what the HTTP
/// client would refuse at every send is refused at start. Every value is a
/// [`Secret`]; the error names the header, never its value.
fn otlp_headers(text: &str) -> Result<Vec<(String, Secret)>, String> {
    let expected = "key=value pairs separated by commas (values percent-encoded)";
    let pairs = pairs(text).map_err(|()| expected.to_string())?;
    pairs
        .into_iter()
        .map(|(name, value)| {
            eval_datasets::agent::check_header(&name, &value)
                .map_err(|e| format!("{expected}: {e}"))?;
            Ok((name, Secret::new(value)))
        })
        .collect()
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
            ("OTEL_TRACES_EXPORTER", "console"),
        ] {
            let s = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"), off]).unwrap();
            assert_eq!(s.export, None, "{off:?}");
        }
        for on in [
            ("OTEL_SDK_DISABLED", "false"),
            ("OTEL_SDK_DISABLED", ""),
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_TRACES_EXPORTER", "console, OTLP"),
        ] {
            let s = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"), on]).unwrap();
            assert!(s.export.is_some(), "{on:?}");
        }
        // A typo is said at start, naming the variable.
        for (var, typo) in [
            ("OTEL_SDK_DISABLED", "ture"),
            ("OTEL_TRACES_EXPORTER", "otpl"),
        ] {
            let e = read(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                (var, typo),
            ]);
            let e = format!("{:?}", e.unwrap_err());
            assert!(e.contains(var) && e.contains(typo), "{e}");
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

    /// The reproducer: `x-api-key=a%0D%0Ab` was accepted, and every
    /// batch then failed to build ("builder error"), the run exiting 0.
    #[test]
    fn a_header_the_client_would_refuse_is_refused_at_start_naming_it_not_its_value() {
        for (var, text, header) in [
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-api-key=a%0D%0Ab",
                "x-api-key",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "ok=1,x-tok=SECRET%0A",
                "x-tok",
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-k=SECRET%00", "x-k"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                "x-k=SECRET%1B[2J",
                "x-k",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "bad%20name=SECRET",
                "bad name",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "content-length=5",
                "content-length",
            ),
        ] {
            let bad = read(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                (var, text),
            ])
            .unwrap_err();
            assert_eq!(bad.len(), 1, "{text}");
            assert_eq!(bad[0].var, var, "{text}");
            assert_eq!(bad[0].value, "<redacted>");
            let said = crate::model::ConfigError(bad).to_string();
            assert!(said.contains(header), "{text}: {said}");
            assert!(!said.contains("SECRET"), "{text}: {said}");
        }
        // The signal's own headers win over, and are checked instead of, the general ones.
        let s = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x=a%0Ab"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-Tenant=t%2C1"),
        ])
        .unwrap();
        let e = s.export.unwrap();
        assert_eq!(e.headers.len(), 1);
        assert_eq!(
            (e.headers[0].0.as_str(), e.headers[0].1.expose()),
            ("X-Tenant", "t,1")
        );
        // Timeout and compression errors name the variable that was set.
        let bad = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "soon"),
            ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd"),
        ])
        .unwrap_err();
        let vars: Vec<&str> = bad.iter().map(|b| b.var).collect();
        assert_eq!(
            vars,
            [
                "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"
            ]
        );
    }

    #[test]
    fn v1_traces_goes_on_the_path_and_a_query_stays_a_query() {
        let endpoint = |vars: &[(&str, &str)]| read(vars).unwrap().export.unwrap().endpoint;
        for (base, traces) in [
            ("http://c:4318/?k=x", "http://c:4318/v1/traces?k=x"),
            ("http://c:4318?k=x", "http://c:4318/v1/traces?k=x"),
            (
                "http://c:4318/otlp/?k=x&j=y#frag",
                "http://c:4318/otlp/v1/traces?k=x&j=y",
            ),
            ("http://c:4318/otlp", "http://c:4318/otlp/v1/traces"),
            ("http://u:p@c:4318", "http://u:p@c:4318/v1/traces"),
        ] {
            assert_eq!(
                endpoint(&[("OTEL_EXPORTER_OTLP_ENDPOINT", base)]),
                traces,
                "{base}"
            );
        }
        // The signal's own URL is used as given.
        assert_eq!(
            endpoint(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/x?k=x")]),
            "http://c:4318/x?k=x"
        );
        // A bad one is shown without its credentials.
        for url in [
            "ftp://user:SECRET@c:4318",
            "http://user:SECRET@",
            "user:SECRET@c:4318",
        ] {
            let bad = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", url)]).unwrap_err();
            let said = crate::model::ConfigError(bad).to_string();
            assert!(said.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{said}");
            assert!(!said.contains("SECRET"), "{said}");
        }
    }
}
