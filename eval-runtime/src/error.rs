//! The runtime's errors. Every message is one line (but for lists of
//! problems, one per line) and never contains an API key or URL credentials.

use std::sync::Arc;

/// Errors of setting up and running evaluations.
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
    /// An environment variable has a value that cannot be used.
    #[error(transparent)]
    Env(#[from] crate::config::ConfigError),
    /// A setting (builder argument, flag, URL) is invalid.
    #[error("invalid {what}: {reason}")]
    Config {
        /// What was being configured.
        what: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The agent failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A dataset could not be loaded.
    #[error(transparent)]
    Dataset(#[from] eval_core::DatasetError),
    /// The evaluations could not be planned (datasets, metrics, gates, manifests).
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    /// A results file could not be read, written or merged.
    #[error(transparent)]
    Results(#[from] crate::output::ResultsError),
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

/// Why an agent did not answer a sample.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The agent could not be reached (refused, DNS, reset, TLS…).
    #[error("agent at {url} unreachable: {cause}")]
    Unreachable {
        /// Agent URL (credentials removed).
        url: String,
        /// Innermost causes, joined.
        cause: String,
    },
    /// The agent did not answer in time.
    #[error("agent at {url} did not answer within {secs}s")]
    Timeout {
        /// Agent URL (credentials removed).
        url: String,
        /// The timeout that expired.
        secs: f64,
    },
    /// The agent answered with a non-success HTTP status.
    #[error("agent at {url} answered HTTP {status}: {body}")]
    Status {
        /// Agent URL (credentials removed).
        url: String,
        /// HTTP status code.
        status: u16,
        /// Start of the body, on one line, keys masked.
        body: String,
    },
    /// The agent answered every attempt of a call as overloaded (429, 503):
    /// the retries (`EVAL_AGENT_MAX_RETRIES`) ran out.
    #[error(
        "agent at {url} was still overloaded after {attempts} attempt(s) (HTTP {status}; retries are set by EVAL_AGENT_MAX_RETRIES): {body}"
    )]
    Overloaded {
        /// Agent URL (credentials removed).
        url: String,
        /// The last status (429 or 503).
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// Start of the last body, on one line, keys masked.
        body: String,
    },
    /// The agent's answer was not used: a refused redirect, an answer over
    /// the size limit, a body cut off or still arriving at the timeout.
    #[error("agent at {url}: {refusal}")]
    Refused {
        /// Agent URL (credentials removed).
        url: String,
        /// Why.
        refusal: crate::http::Refusal,
    },
    /// The agent's answer could not be understood.
    #[error("agent at {url} sent an answer that could not be read: {reason}")]
    BadResponse {
        /// Agent URL (credentials removed).
        url: String,
        /// What was wrong with it.
        reason: String,
    },
    /// The agent could not be set up (e.g. `EVAL_AGENT_URL` not set).
    #[error("agent error: {0}")]
    Setup(Arc<str>),
    /// An in-process agent panicked.
    #[error("agent error: the agent panicked: {0}")]
    Panicked(String),
    /// An in-process agent (an eval function) returned an error.
    #[error("agent error: {0}")]
    Failed(String),
    /// The retriever of a retrieval query failed.
    #[error("agent error: {0}")]
    Retriever(#[from] crate::retrieval::RetrieverError),
    /// Replaying from a cassette found no answer, or the cassette could not
    /// be read.
    #[error("agent error: {0}")]
    Cassette(#[from] crate::engine::CassetteError),
}

impl AgentError {
    /// The HTTP calls a failed agent call made, as far as the error tells:
    /// every attempt of an agent that stayed overloaded, one for any other
    /// HTTP failure, none for an in-process agent's (so a sample that
    /// failed still says what it spent, like a judge call that failed).
    pub fn calls_made(&self) -> crate::services::Usage {
        let attempts = match self {
            AgentError::Overloaded { attempts, .. } => *attempts,
            AgentError::Unreachable { .. }
            | AgentError::Timeout { .. }
            | AgentError::Status { .. }
            | AgentError::Refused { .. }
            | AgentError::BadResponse { .. } => 1,
            _ => 0,
        };
        crate::services::Usage {
            calls: attempts,
            retries: attempts.saturating_sub(1),
            ..crate::services::Usage::ZERO
        }
    }

    /// The error an eval function returned: kept as it is when it is one of
    /// ours (an [`HttpAgent`](crate::HttpAgent) failure passed on with `?`),
    /// else its text.
    pub fn from_display<E: std::fmt::Display + 'static>(e: E) -> AgentError {
        let any: &dyn std::any::Any = &e;
        if let Some(a) = any.downcast_ref::<AgentError>() {
            return a.clone();
        }
        if let Some(Error::Agent(a)) = any.downcast_ref::<Error>() {
            return a.clone();
        }
        AgentError::Failed(one_line(&e.to_string(), 500))
    }
}

/// Why a sample could not be scored. A sample with such an error fails
/// (see the README's verdict table).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// The sample lacks a field one of its metrics needs (checked before the agent is called).
    #[error("sample has no `{field}` field{aliases}, which metric `{metric}` needs")]
    MissingField {
        /// The field.
        field: String,
        /// Other names the field goes by, as ` (or ...)`, or empty.
        aliases: &'static str,
        /// The metric.
        metric: String,
    },
    /// A metric of one turn of a conversation needs that turn's expected
    /// answer, which the sample does not hold (checked before the agent is
    /// called).
    #[error(
        "turn {turn} has no expected answer here (a conversation's answers are read per turn when every turn has one, else only the last turn's), which metric `{metric}` needs"
    )]
    MissingTurnExpected {
        /// The turn (1-based).
        turn: usize,
        /// The metric.
        metric: String,
    },
    /// A metric cannot score this sample with this run's judge setup
    /// (checked before the agent is called).
    #[error("{0}")]
    MetricSetup(String),
    /// The agent failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The agent did not finish within the sample timeout.
    #[error("agent error: no answer within {secs}s (sample timeout)")]
    Timeout {
        /// The sample timeout.
        secs: f64,
    },
    /// Scoring did not finish within the sample timeout.
    #[error("scoring (LLM judge / embeddings) took longer than {secs}s (sample timeout)")]
    ScoringTimeout {
        /// The sample timeout.
        secs: f64,
    },
    /// One of several runs of the agent (`repeat`) failed.
    #[error("run {run}/{runs}: {error}")]
    Run {
        /// Which run (1-based).
        run: usize,
        /// Runs asked for.
        runs: usize,
        /// What went wrong in it.
        error: Box<SampleError>,
    },
    /// `repeat` was 0.
    #[error("no agent run to evaluate (repeat is 0)")]
    NoRuns,
    /// Evaluating the sample panicked outside the agent (a metric).
    #[error("evaluation panicked: {0}")]
    Panicked(String),
}

/// Text on one line, cut to `max` characters, keys masked
/// ([`secrets::mask`](crate::secrets::mask)), safe for a terminal: runs of
/// whitespace become one space, and control characters (an agent's ANSI
/// escape sequences, a C1 CSI) are shown escaped (`\u{1b}`), never sent.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let text = crate::secrets::mask(text);
    let mut flat = String::with_capacity(text.len().min(max + 16));
    let mut count = 0usize;
    let mut total = 0usize;
    for word in text.split_whitespace() {
        for c in (!flat.is_empty() || total > 0)
            .then_some(' ')
            .into_iter()
            .chain(word.chars())
        {
            total += 1;
            if count < max {
                count += 1;
                if c.is_control() {
                    flat.extend(c.escape_default());
                } else {
                    flat.push(c);
                }
            }
        }
    }
    if total <= max {
        flat
    } else {
        format!("{flat}… ({} more chars)", total - max)
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn one_line_flattens_cuts_and_escapes_control_characters() {
        assert_eq!(one_line("  a\n\tb  c ", 100), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc… (3 more chars)");
        assert_eq!(
            one_line("red \u{1b}[31mALERT\u{1b}[0m \u{9b}2J\u{7}", 100),
            "red \\u{1b}[31mALERT\\u{1b}[0m \\u{9b}2J\\u{7}"
        );
        assert_eq!(one_line("", 10), "");
    }
}
