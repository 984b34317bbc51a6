//! The one sample model every dataset format is loaded into.

use serde::Serialize;
use serde_json::{Map, Value};

/// What the agent is asked: one prompt, or a conversation of user turns sent in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Input {
    /// A single prompt.
    Text(String),
    /// User turns of one conversation, in order (at least one).
    Turns(Vec<String>),
}

impl Input {
    /// The user turns, in order (one for [`Input::Text`]).
    pub fn turns(&self) -> &[String] {
        match self {
            Input::Text(t) => std::slice::from_ref(t),
            Input::Turns(ts) => ts,
        }
    }

    /// The last user turn: what single-turn metrics compare against.
    pub fn last(&self) -> &str {
        self.turns().last().map(String::as_str).unwrap_or("")
    }

    /// All turns joined by newlines, for display.
    pub fn display_text(&self) -> String {
        self.turns().join("\n")
    }
}

/// The expected answer: one for the whole sample, or one per user turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Expected {
    /// Expected final answer.
    Text(String),
    /// Expected answer after each user turn (same length as [`Input::turns`]).
    PerTurn(Vec<String>),
}

impl Expected {
    /// The expected answer to the last turn.
    pub fn last(&self) -> &str {
        match self {
            Expected::Text(t) => t,
            Expected::PerTurn(ts) => ts.last().map(String::as_str).unwrap_or(""),
        }
    }

    /// All expected answers joined by newlines, for display.
    pub fn display_text(&self) -> String {
        match self {
            Expected::Text(t) => t.clone(),
            Expected::PerTurn(ts) => ts.join("\n"),
        }
    }
}

/// Where a sample came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Source {
    /// Dataset path as the user wrote it (shared by all samples of a file).
    pub file: std::sync::Arc<str>,
    /// 1-based line the sample starts on (0: not from a file).
    pub line: usize,
    /// Byte offset in the file where the sample's record starts.
    pub offset: u64,
}

/// `file:line`; just `file` for a sample with no line (line 0: given
/// inline, e.g. `--prompts[1]`).
impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            return f.write_str(&self.file);
        }
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One evaluation sample, whatever file format it came from.
///
/// Fields a format has no place for are empty. Fields of the file that have no
/// place here are kept, unchanged, in [`Sample::extra`]: nothing is dropped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Sample {
    /// The sample's id: the file's `id`/`sample_id` when given, else its 0-based
    /// position in the file (letta-evals' rule).
    pub id: String,
    /// Whether [`Sample::id`] was written in the file.
    pub explicit_id: bool,
    /// 0-based position among the file's samples.
    pub index: usize,
    /// What the agent is asked.
    pub input: Input,
    /// The expected answer, if the dataset gives one.
    pub expected: Option<Expected>,
    /// Retrieved chunks given with the sample (agentspec `context`).
    pub context: Vec<String>,
    /// Ground-truth relevant chunks (agentspec `reference_contexts`).
    pub reference_contexts: Vec<String>,
    /// Labels; they are part of the generated test names.
    pub tags: Vec<String>,
    /// Free key/values reported with results.
    pub metadata: Map<String, Value>,
    /// Per-sample agent arguments, sent to the agent (letta-evals `agent_args`).
    pub agent_args: Map<String, Value>,
    /// Per-sample rubric template variables (letta-evals `rubric_vars`).
    pub rubric_vars: Map<String, Value>,
    /// Evaluators the sample names itself (runevals `evaluators`, after
    /// `default_evaluators` and `evaluators_mode`): name → options.
    pub evaluators: Map<String, Value>,
    /// Evaluators of each turn of a conversation (a runevals item's `turns`,
    /// each after `default_evaluators` and its own `evaluators_mode`): one
    /// map per user turn, each scoring that turn's answer; empty when no
    /// turn names any.
    pub turn_evaluators: Vec<Map<String, Value>>,
    /// A runevals item of a file that names no evaluators (no
    /// `default_evaluators`, no item's or turn's `evaluators`): scored on
    /// runevals' default dimensions unless metrics are given
    /// ([`runevals::default_evaluators`](crate::runevals::default_evaluators)). // issue38:runevals
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub runevals_defaults: bool,
    /// The expected answer of each turn of a conversation where only some
    /// turns have one (a runevals item whose turns give `expected_response`
    /// for some turns only): one entry per user turn, `None` for a turn
    /// without one. Empty otherwise (every turn's answer is then
    /// [`Expected::PerTurn`]). Read through [`Sample::expected_for_turn`].
    pub turn_expected: Vec<Option<String>>,
    /// Every answer that counts as right (OpenAI evals' `ideal` list; the first
    /// is also [`Sample::expected`]): answer metrics take the best of them.
    pub accepted_answers: Vec<String>,
    /// For a query of a retrieval dataset (Unrag): where to search and what
    /// should be found.
    pub retrieval: Option<Box<RetrievalQuery>>,
    /// The tool calls the agent is expected to make, in order (deepeval
    /// `expected_tools`, ragas `reference_tool_calls`, a list of names or
    /// calls in our JSONL): what the tool metrics compare the agent's calls
    /// with. `None` when the sample says nothing; `Some` of an empty list
    /// when it expects no call at all.
    pub expected_tools: Option<Vec<crate::ToolCall>>,
    /// Tool definitions offered to the agent (OpenAI `tools`: each
    /// `{"type": "function", "function": {...}}`), given by the sample; a
    /// dataset's own are added by the run.
    pub tools: Vec<Value>,
    /// Every other field of the record, unchanged.
    pub extra: Map<String, Value>,
    /// File and line.
    pub source: Source,
}

/// Prefix a retrieval scope must start with unless custom prefixes are allowed
/// (seed 004: ingest deletes everything under the scope).
pub const SAFE_PREFIX: &str = "eval:";

/// Whether ingest may delete everything under `scope_prefix` without being
/// told it may: it starts with `eval:` and names something after it (a bare
/// `eval:` would be every evaluation scope of the index).
pub fn scope_is_safe(scope_prefix: &str) -> bool {
    scope_prefix
        .strip_prefix(SAFE_PREFIX)
        .is_some_and(|name| name.chars().any(char::is_alphanumeric))
}

/// How a retrieval dataset searches (`defaults.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Mode {
    /// Retrieval alone.
    #[serde(rename = "retrieve")]
    Retrieve,
    /// Retrieval of `rerankTopK` candidates, then reranking.
    #[serde(rename = "retrieve+rerank")]
    RetrieveRerank,
}

impl Mode {
    /// The name datasets use: `retrieve` or `retrieve+rerank`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Retrieve => "retrieve",
            Mode::RetrieveRerank => "retrieve+rerank",
        }
    }
}

/// One query of a retrieval dataset, as a sample carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RetrievalQuery {
    /// The dataset's `id`.
    pub dataset_id: String,
    /// The query's `scopePrefix`, else the dataset's: ingest deletes, and search
    /// looks, only under it.
    pub scope_prefix: String,
    /// k: the query's `topK`, else the dataset's.
    pub top_k: usize,
    /// `relevant.sourceIds`: the ids that should be found (empty: nothing should).
    pub relevant_ids: Vec<String>,
    /// `defaults.mode`.
    pub mode: Mode,
    /// Candidates fetched before reranking (`defaults.rerankTopK`).
    pub rerank_top_k: usize,
    /// Set by the run, not the dataset: a scope not starting with `eval:` may
    /// be deleted (the attribute's `allow_custom_prefix = true`,
    /// `Harness::allow_custom_prefix`, `--allow-custom-prefix`).
    pub allow_custom_prefix: bool,
}

impl RetrievalQuery {
    /// Whether ingest may delete this query's scope: it starts with `eval:`,
    /// or custom prefixes were allowed.
    pub fn scope_is_allowed(&self) -> bool {
        scope_is_safe(&self.scope_prefix)
            || (self.allow_custom_prefix && !self.scope_prefix.trim().is_empty())
    }
}

impl Sample {
    /// A sample with just an input, for in-process use and tests.
    pub fn new(input: impl Into<String>) -> Self {
        Sample {
            id: "0".into(),
            explicit_id: false,
            index: 0,
            input: Input::Text(input.into()),
            expected: None,
            context: Vec::new(),
            reference_contexts: Vec::new(),
            tags: Vec::new(),
            metadata: Map::new(),
            agent_args: Map::new(),
            rubric_vars: Map::new(),
            evaluators: Map::new(),
            turn_evaluators: Vec::new(),
            runevals_defaults: false, // issue38:runevals
            turn_expected: Vec::new(),
            accepted_answers: Vec::new(),
            retrieval: None,
            expected_tools: None,
            tools: Vec::new(),
            extra: Map::new(),
            source: Source {
                file: "<inline>".into(),
                line: 0,
                offset: 0,
            },
        }
    }

    /// Sets the expected answer.
    pub fn with_expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(Expected::Text(expected.into()));
        self
    }

    /// Replaces the input with a conversation of user turns.
    pub fn with_turns<I, S>(mut self, turns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.input = Input::Turns(turns.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the tags.
    pub fn with_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the tool calls the agent is expected to make.
    pub fn with_expected_tools<I>(mut self, calls: I) -> Self
    where
        I: IntoIterator<Item = crate::ToolCall>,
    {
        self.expected_tools = Some(calls.into_iter().collect());
        self
    }

    /// Sets the context chunks.
    pub fn with_context<I, S>(mut self, context: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.context = context.into_iter().map(Into::into).collect();
        self
    }

    /// The expected answer to the last turn, if any.
    pub fn expected_text(&self) -> Option<&str> {
        self.expected.as_ref().map(Expected::last)
    }

    /// The expected answer to user turn `turn` (0-based), if known: its own
    /// when the sample has one per turn, the sample's for its last turn.
    pub fn expected_for_turn(&self, turn: usize) -> Option<&str> {
        match &self.expected {
            Some(Expected::PerTurn(list)) => list.get(turn).map(String::as_str),
            // Some turns have an answer, others not: each turn keeps its own.
            _ if !self.turn_expected.is_empty() => {
                self.turn_expected.get(turn).and_then(Option::as_deref)
            }
            Some(Expected::Text(t)) if turn + 1 == self.input.turns().len() => Some(t),
            _ => None,
        }
    }

    /// For a query of a retrieval dataset: the relevant document ids
    /// (possibly empty).
    pub fn relevant_ids(&self) -> Option<&[String]> {
        self.retrieval.as_ref().map(|q| q.relevant_ids.as_slice())
    }
}
