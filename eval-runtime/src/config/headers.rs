//! Custom HTTP headers for one service (`EVAL_AGENT_HEADERS`,
//! `EVAL_JUDGE_HEADERS`, `EVAL_EMBED_HEADERS`, `EVAL_RETRIEVER_HEADERS`):
//! a tenant id, a cookie, a gateway's own key.
//!
//! One syntax, the one `OTEL_EXPORTER_OTLP_HEADERS` already uses (W3C
//! Baggage, as the OpenTelemetry exporter specification writes headers):
//! `name=value,name2=value2`, values percent-decoded (write a comma in a
//! value as `%2C`, a `%` as `%25`), blanks around entries ignored.
//!
//! Checked when the settings are read, so a bad one stops the run before
//! any request: a name must be an HTTP token (RFC 9110 §5.6.2), a value
//! must not hold CR, LF or NUL (after decoding: no header injection), and
//! the headers that frame the request (`Host`, `Content-Length`,
//! `Transfer-Encoding`, `Connection`) are not ours to set. Every value is
//! a [`Secret`]: never shown by `Debug`, masked like a key in every text
//! this crate writes; errors name the header, never its value.

use super::Secret;

pub use eval_datasets::agent::HeaderError;
use eval_datasets::agent::check_header as check;

/// What a header setting's error says it expects.
pub(crate) const EXPECTED: &str = "name=value pairs separated by commas, values percent-encoded (`%2C` for a comma), e.g. X-Tenant=acme,Cookie=session%3Dabc";

/// Custom headers sent to one service's origin. Values are [`Secret`]s:
/// `Debug` shows the names only.
///
/// ```
/// use eval_runtime::Headers;
///
/// let h = Headers::parse("X-Tenant=acme, Cookie=session%3Dabc%2C1").unwrap();
/// assert_eq!(h.names().collect::<Vec<_>>(), ["X-Tenant", "Cookie"]);
/// assert_eq!(h.get("cookie"), Some("session=abc,1"));
/// assert!(!format!("{h:?}").contains("acme"));
/// assert!(Headers::parse("X-Bad=a%0D%0AHost: evil").is_err(), "no CR/LF");
/// assert!(Headers::parse("Bad Name=1").is_err());
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(String, Secret)>);

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(k, _)| format!("{k}: <redacted>")))
            .finish()
    }
}

impl Headers {
    /// No header.
    pub fn none() -> Headers {
        Headers(Vec::new())
    }

    /// Reads `name=value,name2=value2` (values percent-decoded); empty text
    /// is no header. See the module's rules.
    pub fn parse(text: &str) -> Result<Headers, HeaderError> {
        let mut pairs = Vec::new();
        for (i, entry) in text.split(',').enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let (name, value) = entry
                .split_once('=')
                .ok_or(HeaderError::NoEquals { position: i + 1 })?;
            let name = name.trim();
            let value = percent_encoding::percent_decode_str(value.trim())
                .decode_utf8()
                .map_err(|_| HeaderError::BadValue {
                    name: name.escape_debug().to_string(),
                    reason: "is not UTF-8 once percent-decoded",
                })?;
            pairs.push((name.to_string(), value.into_owned()));
        }
        Headers::from_pairs(pairs)
    }

    /// Headers from `(name, value)` pairs (a manifest's map, say), with the
    /// same checks as [`parse`](Self::parse). A name given twice is sent twice.
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Headers, HeaderError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut out = Vec::new();
        for (name, value) in pairs {
            let (name, value) = (name.into(), value.into());
            check(&name, &value)?;
            let value = if credential_like(&name) {
                Secret::new(value)
            } else {
                Secret::unlisted(value)
            };
            out.push((name, value));
        }
        Ok(Headers(out))
    }

    /// Reads the setting `var` (`None`: not set) into `bad` when it is
    /// wrong; its value is never kept in the error.
    pub(crate) fn read(
        var: &'static str,
        value: Option<String>,
        bad: &mut Vec<super::BadVar>,
    ) -> Headers {
        match value.as_deref().map(Headers::parse) {
            None => Headers::none(),
            Some(Ok(h)) => h,
            Some(Err(e)) => {
                bad.push(super::BadVar {
                    var,
                    value: "<redacted>".into(),
                    expected: format!("{EXPECTED}: {e}"),
                });
                Headers::none()
            }
        }
    }

    /// No header.
    #[doc(hidden)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The names, in order.
    #[doc(hidden)]
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// Whether `name` (any case) is set.
    #[doc(hidden)]
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
    }

    /// The first value of `name` (any case), for the one place that sends it.
    #[doc(hidden)]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.expose())
    }

    /// `(name, value)` pairs, for the one place that sends them.
    #[doc(hidden)]
    pub fn expose(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.expose()))
    }

    /// These headers on `request`, after the client's own: a custom header
    /// replaces one of the same name (`Content-Type`, a provider's key
    /// header), never sent beside it; a name given twice here is sent twice.
    /// Values are marked sensitive (kept out of the HTTP client's logs).
    #[cfg(feature = "http")]
    pub(crate) fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
        let mut map = HeaderMap::new();
        for (name, value) in self.expose() {
            // Checked when read (a token name, no control characters), so
            // neither conversion fails; one that did would be left out
            // rather than sent malformed.
            let (Ok(name), Ok(mut value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) else {
                continue;
            };
            value.set_sensitive(true);
            map.append(name, value);
        }
        // `headers` replaces the request's entries of each name it holds.
        request.headers(map)
    }
}

/// Whether a header's value is a credential, by its name: masked in every
/// text this crate writes, as keys are (`Authorization`, `Cookie`,
/// `X-API-Key`, `X-Auth-Token`, a session or signature header). Other
/// values are never shown either (`Debug` and errors name the header
/// only), but are not cut out of answers and records.
fn credential_like(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["authorization", "cookie"].contains(&name.as_str())
        || [
            "key",
            "token",
            "secret",
            "auth",
            "session",
            "password",
            "passwd",
            "signature",
            "credential",
            "jwt",
            "sid",
        ]
        .iter()
        .any(|w| name.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_refuses_what_could_inject() {
        let h =
            Headers::parse(" X-Tenant = acme ,, Authorization=Bearer%20tok-123456789 ").unwrap();
        assert_eq!(
            h.expose().collect::<Vec<_>>(),
            [
                ("X-Tenant", "acme"),
                ("Authorization", "Bearer tok-123456789")
            ]
        );
        assert!(h.contains("authorization") && !h.contains("cookie"));
        let shown = format!("{h:?}");
        assert!(
            shown.contains("X-Tenant: <redacted>")
                && !shown.contains("acme")
                && !shown.contains("tok-"),
            "{shown}"
        );
        assert!(
            crate::model::one_line("sent Bearer tok-123456789", 100).contains("<redacted>"),
            "a value is masked like a key in text"
        );
        assert_eq!(Headers::parse("").unwrap(), Headers::none());
        assert_eq!(
            Headers::parse("a=1,b"),
            Err(HeaderError::NoEquals { position: 2 })
        );
        for bad in ["X=a%0Db", "X=a%0Ab", "X=a%00", "X=a%07"] {
            let e = Headers::parse(bad).unwrap_err();
            assert!(matches!(e, HeaderError::BadValue { .. }), "{bad}: {e}");
            assert!(!e.to_string().contains("a%"), "{e}");
        }
        assert!(matches!(
            Headers::parse("X=%FF"),
            Err(HeaderError::BadValue { .. })
        ));
        for bad in ["Bad Name=1", "=1", "X:Y=1", "Ünï=1"] {
            assert!(
                matches!(Headers::parse(bad), Err(HeaderError::BadName { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            Headers::parse("Content-Length=5"),
            Err(HeaderError::Framing { .. })
        ));
        assert!(matches!(
            Headers::from_pairs([("X", "a\r\nHost: evil")]),
            Err(HeaderError::BadValue { .. })
        ));
        assert_eq!(Headers::parse("X=a\tb").unwrap().get("x"), Some("a\tb"));
    }

    #[test]
    fn a_bad_setting_is_reported_without_its_value() {
        let mut bad = Vec::new();
        let h = Headers::read(
            "EVAL_JUDGE_HEADERS",
            Some("X-Key=secret-value%0A".into()),
            &mut bad,
        );
        assert!(h.is_empty());
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].var, "EVAL_JUDGE_HEADERS");
        assert_eq!(bad[0].value, "<redacted>");
        assert!(
            !bad[0].expected.contains("secret-value"),
            "{}",
            bad[0].expected
        );
        assert!(bad[0].expected.contains("X-Key"), "{}", bad[0].expected);
    }

    #[test]
    fn only_credential_values_are_cut_out_of_what_is_written() {
        let h = Headers::parse("Accept=application/json,X-Api-Key=k3y-0123456789abcdef").unwrap();
        let text = "answer: application/json and k3y-0123456789abcdef";
        let masked = crate::secrets::mask(text);
        assert!(masked.contains("application/json"), "{masked}");
        assert!(!masked.contains("k3y-0123456789abcdef"), "{masked}");
        assert!(!format!("{h:?}").contains("application/json"));
        for name in [
            "Authorization",
            "Cookie",
            "X-Auth-Token",
            "api-key",
            "X-Session",
        ] {
            assert!(credential_like(name), "{name}");
        }
        for name in ["Accept", "Content-Type", "X-Tenant"] {
            assert!(!credential_like(name), "{name}");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_custom_header_replaces_the_clients_own() {
        let h = Headers::parse("Content-Type=text/plain,api-key=custom-0123456789").unwrap();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let request = reqwest::Client::builder()
            .build()
            .unwrap()
            .post("http://127.0.0.1:9/")
            .json(&serde_json::json!({}))
            .header("api-key", "provider-0123456789");
        let request = h.apply(request).build().unwrap();
        let values = |name: &str| -> Vec<String> {
            request
                .headers()
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(values("content-type"), ["text/plain"]);
        assert_eq!(values("api-key"), ["custom-0123456789"]);
    }
}
