//! A custom header's checks, one rule for every place headers are set
//! (a manifest's `agent.headers`, `--agent-header`, `EVAL_*_HEADERS`).

/// Headers refused: they frame the request, the HTTP client sets them.
const FRAMING: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "te",
    "upgrade",
    "keep-alive",
];

/// What is wrong with a header setting. Names the header (or the entry's
/// position), never the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// An entry without `=`.
    #[error("entry {position} has no `=` (expected name=value,name2=value2)")]
    NoEquals {
        /// 1-based.
        position: usize,
    },
    /// A name that is not an HTTP token.
    #[error("`{name}` is not a header name (letters, digits and !#$%&'*+-.^_`|~ only, not empty)")]
    BadName {
        /// The name as given (escaped).
        name: String,
    },
    /// A value with CR, LF, NUL or another control character, or not UTF-8
    /// once percent-decoded.
    #[error("the value of `{name}` {reason}")]
    BadValue {
        /// The header.
        name: String,
        /// Why (never the value).
        reason: &'static str,
    },
    /// A header the HTTP client sets itself.
    #[error("`{name}` frames the request and is set by the HTTP client: remove it")]
    Framing {
        /// The header.
        name: String,
    },
}

/// Whether `name: value` may be sent as a custom header: a name is an HTTP token (RFC 9110 §5.6.2); a value holds no control
/// character but tab (field-value, §5.5: CR, LF and NUL are never allowed).
pub fn check_header(name: &str, value: &str) -> Result<(), HeaderError> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(tchar) {
        return Err(HeaderError::BadName {
            name: name.escape_debug().to_string(),
        });
    }
    if FRAMING.iter().any(|f| name.eq_ignore_ascii_case(f)) {
        return Err(HeaderError::Framing {
            name: name.to_string(),
        });
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(HeaderError::BadValue {
            name: name.to_string(),
            reason: "holds a line break or NUL (CR, LF: header injection)",
        });
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(HeaderError::BadValue {
            name: name.to_string(),
            reason: "holds a control character",
        });
    }
    Ok(())
}
