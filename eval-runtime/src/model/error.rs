//! The runtime's errors. Every message is one line (but for lists of
//! problems, one per line) and never contains an API key or URL credentials.

use std::path::PathBuf;

use super::agent_error::AgentError;
use super::text::one_line;

/// Errors of setting up and running evaluations.
///
/// # Messages and sources
///
/// One rule for every error of this crate and of `eval-datasets`: an error
/// that wraps another (an I/O error, a JSON parser's error, a dataset
/// error) keeps it as its [`source`](std::error::Error::source) *and*
/// says its text in its own message (`cannot read results file r.json:
/// No such file or directory`). The CLI, the reports and the results file
/// show an error's `Display` only, and that alone is the whole story;
/// `source()` is there for code that wants the inner error as a value
/// (its kind, its line). A printer that walks the chain itself (anyhow's
/// `{:#}`) shows the inner text twice. Errors that must stay `Clone`
/// hold their source in an `Arc`; errors written to the results file
/// keep their text fields as they were, so the file does not change.
/// Errors of user code with a chain of their own (an
/// [`HttpAgent::map_response`](crate::HttpAgent::map_response) closure's)
/// are shown with the messages of their sources added where the message
/// does not hold them yet.
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
    Env(#[from] ConfigError),
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
    Dataset(#[from] eval_datasets::DatasetError),
    /// The evaluations could not be planned (datasets, metrics, gates, manifests).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A results file could not be read, written or merged.
    #[error(transparent)]
    Results(#[from] ResultsError),
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

/// `e`'s message followed by those of its [`source`](std::error::Error::source)
/// chain that it does not hold already (see [`Error`]'s rule on messages),
/// joined with `: `.
#[cfg(feature = "http")]
pub(crate) fn with_sources(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(inner) = next {
        let said = inner.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        next = inner.source();
    }
    text
}

/// `Result` with the runtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl AgentError {
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

/// Why the cost of some tokens is unknown though a price table is set (the
/// cost is then unknown, never 0).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CostError {
    /// The tokens' model is not known (an agent that does not name it, and
    /// no `EVAL_AGENT_MODEL`).
    #[error("the {what}'s model is not known (set EVAL_AGENT_MODEL, or have the agent name it)")]
    UnknownModel {
        /// Whose tokens: `agent`, `judge` or `embeddings`.
        what: String,
    },
    /// The model has no price in the table.
    #[error("{what} model `{model}` has no price in {table}")]
    NoPrice {
        /// Whose tokens: `agent`, `judge` or `embeddings`.
        what: String,
        /// The model.
        model: String,
        /// The price table (where it was read from).
        table: String,
    },
    /// The model has completion tokens and no `output` price.
    #[error("{what} model `{model}` has no `output` price in {table}")]
    NoOutputPrice {
        /// Whose tokens: `agent`, `judge` or `embeddings`.
        what: String,
        /// The model.
        model: String,
        /// The price table (where it was read from).
        table: String,
    },
    /// Replies reported no usage and their tokens could not be counted
    /// (answers without `usage`, streamed or whole, built without the `tokenizer`
    /// feature): their cost is unknown, not $0.
    #[error(
        "the {what} reported no usage for {replies} repl(ies) (answers without `usage`) and this build cannot count their tokens (enable eval-runtime's `tokenizer` feature in Cargo.toml, `eval-runtime = {{ version = \"0.1\", features = [\"tokenizer\"] }}`, or have the server report usage)"
    )]
    NoUsage {
        /// Whose tokens: `agent`, `judge` or `embeddings`.
        what: String,
        /// Replies without usage.
        replies: u32,
    },
}

/// Why the environment's settings cannot be used: every bad variable, with its value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", render(.0))]
pub struct ConfigError(pub Vec<BadVar>);

/// One variable whose value cannot be used.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BadVar {
    /// The variable.
    pub var: &'static str,
    /// Its value as set (an API key's value is never kept).
    pub value: String,
    /// What was expected.
    pub expected: String,
}

/// Each value escaped (a settings file is text from outside: issue 37).
fn render(bad: &[BadVar]) -> String {
    bad.iter()
        .map(|b| {
            let value = eval_datasets::terminal::escaped(&b.value);
            format!("invalid {}=`{value}`: {}", b.var, b.expected)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why a plan could not be built or loaded: every problem, each on its own
/// line with the file and line it concerns.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", .problems.join("\n"))]
#[non_exhaustive]
pub struct PlanError {
    /// The problems, one line each.
    pub problems: Vec<String>,
}

impl PlanError {
    /// An error with these problems.
    pub fn new(problems: Vec<String>) -> Self {
        PlanError { problems }
    }
}

/// Why a results file could not be read, written or merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResultsError {
    /// Reading failed.
    #[error("cannot read results file {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a results file.
    #[error("{} is not a results file: {source}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// The file has another layout version.
    #[error("results file {}: layout version {found} (this version reads {})", .path.display(), super::FORMAT_VERSION)]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Writing a file failed (a results file, the HTML report beside it,
    /// JUnit XML, a step summary): the error names that file.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The results of a run that did not evaluate all it planned, where a
    /// whole run is needed (a baseline, a comparison).
    #[error("{} holds an incomplete run ({why}): as a baseline or in a comparison its missing samples would read as removed; --partial uses it anyway", .path.display())]
    Incomplete {
        /// The file.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// A results file that contradicts itself: the records it holds do not
    /// give the totals it states (samples, passed, failed, errors, a
    /// metric's scored or unscored samples), or it says complete (or a
    /// gate judged) over fewer samples than planned. Edited by hand or
    /// damaged: what it claims cannot be trusted.
    #[error(
        "{} does not add up: {}: the file was edited or damaged, so what it claims cannot be trusted; rerun the evaluation to write it anew",
        .path.display(),
        .problems.join("; ")
    )]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// What does not add up, one entry each.
        problems: Vec<String>,
    },
    /// Two inputs of a merge hold the same sample.
    #[error(
        "sample {test_name} of dataset {dataset} is in results {first} and {second}: the shards overlap"
    )]
    Overlap {
        /// The sample's test name.
        test_name: String,
        /// Its dataset.
        dataset: String,
        /// The first input holding it (its file, else `input N`).
        first: String,
        /// The second.
        second: String,
    },
    /// A merge of different test binaries' results.
    #[error(
        "results of different test binaries ({first} and {second}): merge each binary's results on its own"
    )]
    Binaries {
        /// One binary.
        first: String,
        /// Another.
        second: String,
    },
    /// A merge of results with different plans for one dataset.
    #[error("dataset {dataset} has different {what} in different results files")]
    Plans {
        /// The dataset.
        dataset: String,
        /// `gates`, `sample counts` or `ci_gate settings`.
        what: &'static str,
    },
    /// A merge of parts that asked different questions of one dataset
    /// (another threshold, gate, metric option or metric set).
    #[error(
        "dataset {dataset} was asked different questions in different results files ({}): parts of one run ask the same",
        .differences.join("; ")
    )]
    Questions {
        /// The dataset.
        dataset: String,
        /// What differs, one entry each (see [`QuestionChange`](super::QuestionChange)).
        differences: Vec<String>,
    },
    /// A run's finished records could not be read back (from the
    /// temporary files they were spilled to).
    #[error("cannot read back the run's records: {0}")]
    Records(#[source] std::io::Error),
    /// Nothing to merge.
    #[error("no results file under {}", .0.display())]
    Empty(PathBuf),
    /// Two runs whose scores cannot be compared (or joined): a metric both
    /// scored was judged differently, or a dataset both hold has other
    /// content.
    #[error(
        "the runs cannot be compared: {}; --allow-judge-change / --allow-dataset-change compare them anyway, and say so",
        .differences.join("; ")
    )]
    Incomparable {
        /// What differs, one entry each.
        differences: Vec<String>,
    },
    /// A run that cannot be compared with its baseline.
    #[error(
        "baseline {} cannot be compared with this run: {}; accept the run as the new baseline (EVAL_ACCEPT_BASELINE=1, `evals report accept`), or allow the change (--allow-judge-change, --allow-dataset-change)",
        .path.display(),
        .differences.join("; ")
    )]
    BaselineIncomparable {
        /// The baseline.
        path: PathBuf,
        /// What differs, one entry each.
        differences: Vec<String>,
    },
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn a_chain_is_said_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        #[derive(Debug, thiserror::Error)]
        #[error("outer: {0}")]
        struct Saying(#[source] std::io::Error);
        let inner = || std::io::Error::other("inner");
        assert_eq!(with_sources(&Outer(inner())), "outer: inner");
        assert_eq!(with_sources(&Saying(inner())), "outer: inner");
    }
}
