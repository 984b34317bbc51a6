//! Why a sample, or one of its metrics, could not be scored — and why the
//! judge or the embeddings server failed.

use super::agent_error::{AgentError, Refusal};

/// Why a sample could not be scored. A sample with such an error fails
/// (see the verdict table in the guide's "Verdicts" chapter, docs/src/verdicts.md).
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
        "turn {turn} has no expected answer (`expected_response`), which metric `{metric}` needs"
    )]
    MissingTurnExpected {
        /// The turn (1-based).
        turn: usize,
        /// The metric.
        metric: String,
    },
    /// The sample could not be read from its dataset file (it changed
    /// during the run).
    #[error("dataset: {0}")]
    Dataset(String),
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
    /// The agent's spans cannot be collected in this run (checked before
    /// the agent is called).
    #[error(transparent)]
    Traces(#[from] TraceError),
}

/// Why a run cannot collect the agent's spans.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The receiver could not listen where `EVAL_OTLP_RECEIVER` says.
    #[error("cannot listen for the agent's spans on {addr} (EVAL_OTLP_RECEIVER): {reason}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// What the system said (and what to do).
        reason: String,
    },
    /// `EVAL_OTLP_RECEIVER` is set in a build without the receiver.
    #[error(
        "EVAL_OTLP_RECEIVER is set, but eval-runtime was built without its `otel` feature (the OTLP receiver): enable it in Cargo.toml, `eval-runtime = {{ version = \"0.1\", features = [\"otel\"] }}`, or unset EVAL_OTLP_RECEIVER"
    )]
    NotBuilt,
}

/// Why a metric could not score a sample (the sample then fails).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MetricError {
    /// A metric of the user's panicked, failed, or scored NaN or outside
    /// its range: that metric fails on that sample.
    #[error("metric `{metric}` {problem}")]
    User {
        /// The metric.
        metric: String,
        /// What happened (`panicked: ...`, `failed: ...`, `scored NaN`).
        problem: String,
    },
    /// The LLM judge or the embeddings server failed (after its retries).
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// The sample or the answer lacks what the metric needs, an option is
    /// unusable (an invalid regex), or the judge's answer could not be used.
    #[error("{0}")]
    Unscorable(String),
    /// An external scorer gave no score (see [`ScorerError`](super::ScorerError)).
    #[error(transparent)]
    Scorer(#[from] super::ScorerError),
    /// A regex (the expected answer, or the `pattern` option) longer than
    /// [`MAX_REGEX_BYTES`](eval_datasets::metric::MAX_REGEX_BYTES): refused
    /// before it is parsed.
    #[error(
        "{what} is {len} bytes long, over the {limit}-byte limit of a regex; use a shorter pattern (or `contains` for a literal answer)"
    )]
    RegexTooLong {
        /// `the expected answer` or `the `pattern` option`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A metric of one turn, and no answer to that turn from the agent.
    #[error(
        "`{metric}` scores turn {turn} but the agent returned {answers} per-turn answer(s) (an in-process agent sets them with Response::with_turn_outputs)"
    )]
    NoTurnAnswer {
        /// The metric.
        metric: String,
        /// The turn (1-based).
        turn: usize,
        /// Per-turn answers returned.
        answers: usize,
    },
    /// One of several runs of the agent (`repeat`) could not be scored.
    #[error("run {run}/{runs}: {error}")]
    Run {
        /// Which run (1-based).
        run: usize,
        /// Runs asked for.
        runs: usize,
        /// Why.
        error: Box<MetricError>,
    },
}

impl From<String> for MetricError {
    fn from(reason: String) -> Self {
        MetricError::Unscorable(reason)
    }
}

impl From<&str> for MetricError {
    fn from(reason: &str) -> Self {
        MetricError::Unscorable(reason.to_string())
    }
}

/// Why a judge or embeddings call failed. Messages are one line and never
/// contain the API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// Nothing is configured for this service.
    #[error("{what} is not configured: {hint}")]
    NotConfigured {
        /// "LLM judge" or "embeddings".
        what: &'static str,
        /// What to set.
        hint: String,
    },
    /// A configuration value is wrong.
    #[error("invalid {what}: {reason}")]
    Config {
        /// What was being configured.
        what: String,
        /// Why.
        reason: String,
    },
    /// The server answered with an error status, after all retries.
    #[error("{url} answered HTTP {status} after {attempts} attempt(s): {body}")]
    Status {
        /// Endpoint (credentials removed).
        url: String,
        /// Last status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// Start of the last body, key masked.
        body: String,
    },
    /// The server could not be reached or did not answer in time, after all retries.
    #[error("{url} unreachable after {attempts} attempt(s): {cause}")]
    Unreachable {
        /// Endpoint (credentials removed).
        url: String,
        /// Attempts made.
        attempts: u32,
        /// Innermost causes.
        cause: String,
    },
    /// The answer was not used (a refused redirect, an answer over the size
    /// limit, a body cut off or too slow), after all retries that could help.
    #[error("{url}: {refusal}")]
    Refused {
        /// Endpoint (credentials removed).
        url: String,
        /// Why.
        refusal: Refusal,
    },
    /// The answer had an unexpected shape.
    #[error("{url} sent an answer that could not be read: {reason}")]
    BadResponse {
        /// Endpoint (credentials removed).
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// A judge prompt that cannot be sent (a bad data block name, no
    /// random boundary).
    #[error("the judge prompt cannot be sent: {0}")]
    Prompt(#[from] PromptError),
    /// The judge's answer could not be used (no message, not JSON, not the
    /// shape asked for), even after re-asking.
    #[error("the judge's answer could not be used after {attempts} attempt(s): {problem}")]
    UnusableAnswer {
        /// Attempts made (first ask plus re-asks).
        attempts: u32,
        /// What was wrong with the last answer.
        problem: AnswerProblem,
    },
    /// The judge's answer was cut off at its `max_tokens`
    /// (`finish_reason: length`): never re-asked with the same bound.
    #[error(
        "the judge's answer was cut off at {max_tokens} tokens: raise EVAL_JUDGE_MAX_TOKENS (the answer began: \"{began}\")"
    )]
    CutOff {
        /// The bound the request carried.
        max_tokens: u32,
        /// The start of the answer, on one line.
        began: String,
    },
}

/// Why a judge's answer could not be used (re-asked, then the metric's error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerProblem {
    /// The answer holds no message text.
    #[error("no message text in the answer ({0})")]
    NoMessage(String),
    /// The text is not JSON.
    #[error("not valid JSON ({0})")]
    NotJson(String),
    /// The text is JSON, but not an object.
    #[error("expected a JSON object, found {0}")]
    NotObject(String),
    /// The object is not what the metric asked for (a missing key, a rating
    /// out of range, a wrong number of verdicts).
    #[error("not the answer asked for: {0}")]
    Shape(String),
}

impl AnswerProblem {
    /// On one line, cut, keys masked.
    pub(crate) fn shown(self) -> AnswerProblem {
        let clean = |t: &str| super::text::one_line(t, 200);
        match self {
            AnswerProblem::NoMessage(t) => AnswerProblem::NoMessage(clean(&t)),
            AnswerProblem::NotJson(t) => AnswerProblem::NotJson(clean(&t)),
            AnswerProblem::NotObject(t) => AnswerProblem::NotObject(clean(&t)),
            AnswerProblem::Shape(t) => AnswerProblem::Shape(clean(&t)),
        }
    }
}

/// Why a prompt cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// A block name that is empty, too long or has a character other than
    /// a letter, a digit, `_`, `-` or `.`.
    #[error("data block name `{0}` is not 1 to {MAX_NAME_CHARS} letters, digits, `_`, `-` or `.`")]
    BadBlockName(String),
    /// Two blocks of one prompt with one name.
    #[error("two data blocks are named `{0}`")]
    DuplicateBlock(String),
    /// A task name that is empty, too long or has a character other than
    /// a letter, a digit, `_`, `-`, `.` or `/`.
    #[error("task name `{0}` is not 1 to {MAX_NAME_CHARS} letters, digits, `_`, `-`, `.` or `/`")]
    BadTaskName(String),
    /// The operating system gave no random bytes for the boundary.
    #[error("no random boundary for the data blocks: {0}")]
    NoRandomness(String),
}

/// Longest block name.
pub(crate) const MAX_NAME_CHARS: usize = 64;
