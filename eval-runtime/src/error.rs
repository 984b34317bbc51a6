//! The runtime's error type.

/// Errors from agents, configuration and datasets. Every message is one line
/// and never contains an API key or URL credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A required environment variable is not set.
    #[error("{var} is not set: {hint}")]
    MissingEnv {
        /// The variable.
        var: &'static str,
        /// What to set it to.
        hint: &'static str,
    },
    /// A configuration value (environment variable or builder argument) is invalid.
    #[error("invalid {what}: {reason}")]
    Config {
        /// What was being configured.
        what: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The agent could not be reached (refused, DNS, reset, TLS…).
    #[error("agent at {url} unreachable: {cause}")]
    AgentUnreachable {
        /// Agent URL (credentials removed).
        url: String,
        /// Innermost causes, joined.
        cause: String,
    },
    /// The agent did not answer in time.
    #[error("agent at {url} did not answer within {secs}s")]
    AgentTimeout {
        /// Agent URL (credentials removed).
        url: String,
        /// The timeout that expired.
        secs: f64,
    },
    /// The agent answered with a non-success HTTP status.
    #[error("agent at {url} answered HTTP {status}: {body}")]
    AgentStatus {
        /// Agent URL (credentials removed).
        url: String,
        /// HTTP status code.
        status: u16,
        /// Start of the body, on one line.
        body: String,
    },
    /// The agent's answer could not be understood.
    #[error("agent at {url} sent an answer that could not be read: {reason}")]
    AgentResponse {
        /// Agent URL (credentials removed).
        url: String,
        /// What was wrong with it.
        reason: String,
    },
    /// A dataset could not be loaded.
    #[error(transparent)]
    Dataset(#[from] eval_core::DatasetError),
    /// An error raised by user code (an in-process agent).
    #[error("{0}")]
    Message(String),
}

impl Error {
    /// An error with a message of your own, for in-process agents.
    pub fn msg(message: impl std::fmt::Display) -> Self {
        Error::Message(message.to_string())
    }
}

/// `Result` with the runtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Text on one line, cut to `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = flat.chars().count();
    if count <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}… ({} more chars)", count - max)
    }
}
