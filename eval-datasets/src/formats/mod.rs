//! Dataset formats: how a file's bytes become records, and records samples.
//!
//! Every format is an [`Adapter`], of one of two kinds:
//!
//! * a **syntax** reads a file's bytes into records; the file's extension
//!   picks it ([`Format`]):
//!
//!   | syntax | files | reads |
//!   |---|---|---|
//!   | [`jsonl`] | `.jsonl`, `.ndjson` | one JSON object per line (agentspec, letta-evals, ...) |
//!   | [`csv`] | `.csv` | a header row, then one record per row (letta-evals, ...) |
//!   | [`json`] | `.json` | one document: a document schema's, else an array of sample objects |
//!
//! * a **schema** recognises what another tool writes, by its keys, and
//!   rewrites it into the common field names of [`record`]:
//!
//!   | schema | rewrites | recognised by |
//!   |---|---|---|
//!   | [`unrag`] | a `.json` document into one record per query | `queries` with `version` or `documents` |
//!   | [`runevals`] | a `.json` document into one record per item | `schemaVersion`/`items`, `prompts`, or an array of `{prompt}` |
//!   | [`deepeval`] | a record | `actual_output`, `tools_called`, `retrieval_context`, `expected_outcome`, `scenario`, `additional_metadata`, `custom_column_key_values` |
//!   | [`golden`] | a record (not deepeval's) | `query` with `ground_truth`, or `source_docs` |
//!   | [`promptflow`] | a record | `chat_history`; Azure's `truth` |
//!   | [`openai_evals`] | a record | `input` is a list of chat messages |
//!   | [`ragas`] | a record | `user_input` is a list of ragas messages (`type` human, ai, tool) |
//!   | [`promptfoo`] | a record | columns `__expected…`, `__metadata:…`, or `vars` |
//!
//! The flow, all of it dispatched here:
//!
//! ```text
//! bytes ──syntax──▶ records ─────────────────────────────┐
//!   .json: document ──document schema──▶ records ────────┤
//!                                                        ▼
//!                  record schemas, in order ──▶ record::to_sample ──▶ Sample
//! ```
//!
//! Adapters depend only on this module's contract ([`Adapter`], [`Input`],
//! [`Records`]) and on the leaf modules [`record`], [`text`] and [`tools`]; none calls
//! another adapter.

pub(crate) mod csv;
pub(crate) mod deepeval;
pub(crate) mod golden;
pub(crate) mod json;
pub(crate) mod jsonl;
pub(crate) mod openai_evals;
pub(crate) mod promptflow;
pub(crate) mod promptfoo;
pub(crate) mod ragas;
pub(crate) mod record;
pub mod runevals;
pub(crate) mod text;
pub(crate) mod tools;
pub(crate) mod unrag;

use std::path::Path;

use serde_json::Value;

use crate::error::{DatasetError, MAX_PROBLEMS, Problem};

pub use record::FIELD_ALIASES;
pub(crate) use record::{Record, to_sample};
pub use text::parse_strict;

/// The one interface of every dataset adapter.
///
/// A **syntax** implements [`read`](Adapter::read): bytes in, records out.
/// A **schema** implements [`recognises`](Adapter::recognises) and
/// [`rewrite`](Adapter::rewrite): a document or a record of its tool in,
/// records in the common field names out. The defaults do nothing, so each
/// adapter writes only its own stage. Which adapter runs when is decided in
/// this module ([`Format::syntax`], `DOCUMENT_SCHEMAS`, `RECORD_SCHEMAS`),
/// never by the adapters.
pub(crate) trait Adapter: Sync {
    /// Syntax: reads a file's `bytes` and hands each record to `out` as soon
    /// as it is read, in file order, with every problem found. Schemas read
    /// no bytes (the default).
    fn read(&self, bytes: &[u8], out: &mut Records<'_>) {
        let _ = (bytes, out);
    }

    /// Schema: whether `input` is written in this schema. Syntaxes recognise
    /// nothing (the default): the file's extension picks them.
    fn recognises(&self, input: &Input<'_>) -> bool {
        let _ = input;
        false
    }

    /// Schema: rewrites an `input` it [recognises](Adapter::recognises) into
    /// the common field names: a record in place; a document into its
    /// records, handed to `out` (or into the problems that keep it from
    /// being read).
    fn rewrite(&self, input: Input<'_>, out: &mut Records<'_>) {
        let _ = (input, out);
    }
}

/// What a schema recognises and rewrites.
pub(crate) enum Input<'a> {
    /// A whole `.json` document, before it is read as an array of samples.
    Document(&'a JsonDocument<'a>),
    /// One record, before it becomes a sample.
    Record(&'a mut Record),
}

/// A parsed `.json` document, with its text for line numbers.
pub(crate) struct JsonDocument<'a> {
    /// The text, without its BOM.
    pub text: &'a str,
    /// Bytes of BOM before `text` (record offsets count them).
    pub bom: usize,
    /// The document.
    pub value: Value,
    /// Line numbers of `text`'s offsets.
    pub lines: text::Lines<'a>,
}

/// Where the final records go, with the problem list to add to.
pub(crate) type Sink<'a> = &'a mut dyn FnMut(Record, &mut Vec<Problem>);

/// Where adapters hand what they read: records, and problems.
///
/// Every record handed to [`Records::record`] is rewritten by the record
/// schemas before it reaches the sink.
pub(crate) struct Records<'a> {
    file: &'a str,
    problems: &'a mut Vec<Problem>,
    sink: Sink<'a>,
    /// What the document says it is (runevals' `metadata.description`,
    /// Unrag's `description`), for report headers.
    description: Option<String>,
}

impl<'a> Records<'a> {
    pub(crate) fn new(file: &'a str, problems: &'a mut Vec<Problem>, sink: Sink<'a>) -> Self {
        Records {
            file,
            problems,
            sink,
            description: None,
        }
    }

    /// Records what the document says it is.
    pub(crate) fn describe(&mut self, description: Option<&str>) {
        self.description = description
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string);
    }

    /// The file, as named in messages.
    pub(crate) fn file(&self) -> &'a str {
        self.file
    }

    /// The problems found so far, to add to.
    pub(crate) fn problems(&mut self) -> &mut Vec<Problem> {
        self.problems
    }

    /// Adds one problem.
    pub(crate) fn problem(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// Whether more problems were found than are reported (stop reading).
    pub(crate) fn full(&self) -> bool {
        self.problems.len() > MAX_PROBLEMS
    }

    /// Hands one record on: the record schemas rewrite it (in
    /// `RECORD_SCHEMAS` order), then it goes to the sink.
    pub(crate) fn record(&mut self, mut record: Record) {
        for group in RECORD_SCHEMAS {
            if let Some(schema) = group
                .iter()
                .find(|s| s.recognises(&Input::Record(&mut record)))
            {
                schema.rewrite(Input::Record(&mut record), self);
            }
        }
        (self.sink)(record, self.problems);
    }

    /// Offers a `.json` document to the document schemas: `true` when one
    /// recognised it (and handed its records or problems on).
    pub(crate) fn document(&mut self, doc: &JsonDocument<'_>) -> bool {
        let input = Input::Document(doc);
        match DOCUMENT_SCHEMAS.iter().find(|s| s.recognises(&input)) {
            Some(schema) => {
                schema.rewrite(input, self);
                true
            }
            None => false,
        }
    }
}

/// Schemas of whole `.json` documents, tried in order; the first that
/// recognises a document reads it.
const DOCUMENT_SCHEMAS: &[&dyn Adapter] = &[&unrag::Unrag, &runevals::Runevals];

/// Schemas of records, applied in this order. In each group the first schema
/// that recognises the record rewrites it (a deepeval golden with a `query`
/// is not also a golden-dataset record); Azure's `truth` is renamed last.
const RECORD_SCHEMAS: &[&[&dyn Adapter]] = &[
    &[&deepeval::Deepeval, &golden::Golden],
    &[&promptflow::PromptflowChat],
    &[&openai_evals::OpenAiEvals],
    &[&ragas::RagasMessages],
    &[&promptfoo::Promptfoo],
    &[&promptflow::AzureTruth],
];

/// A dataset file format (a syntax). Chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// One JSON object per line (`.jsonl`, `.ndjson`): agentspec and letta-evals.
    Jsonl,
    /// Header row then one record per sample (`.csv`): letta-evals.
    Csv,
    /// One JSON document (`.json`): a runevals document, or an array of samples.
    Json,
}

impl Format {
    /// The format for a path, from its extension (ASCII case ignored).
    pub fn from_path(path: &str) -> Result<Format, DatasetError> {
        let ext = Path::new(path)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "jsonl" | "ndjson" => Ok(Format::Jsonl),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(DatasetError::UnsupportedFormat {
                path: path.to_string(),
                extension: if ext.is_empty() {
                    "(none)".into()
                } else {
                    format!(".{ext}")
                },
            }),
        }
    }

    /// The syntax adapter that reads this format.
    fn syntax(self) -> &'static dyn Adapter {
        match self {
            Format::Jsonl => &jsonl::Jsonl,
            Format::Csv => &csv::Csv,
            Format::Json => &json::Json,
        }
    }
}

/// Reads every record of `bytes` (the file `file`, in `format`) and hands
/// each, rewritten by the schemas, to `sink`; problems go to `problems`.
/// Reads `bytes` in `format`, handing each record to `sink`; returns what
/// the document says it is (its description), when it says.
pub(crate) fn read(
    format: Format,
    file: &str,
    bytes: &[u8],
    problems: &mut Vec<Problem>,
    sink: Sink<'_>,
) -> Option<String> {
    let mut records = Records::new(file, problems, sink);
    format.syntax().read(bytes, &mut records);
    records.description
}

/// The record starting at byte `offset` (line `line`) of the file at `path`
/// (named `file`), rewritten by the schemas, for an indexed lookup: one
/// record read, however large the file. `Ok(None)` when there is none (its
/// problems pushed), and for JSON documents, which are read whole.
pub(crate) fn record_at(
    format: Format,
    path: &Path,
    file: &str,
    offset: u64,
    line: usize,
    problems: &mut Vec<Problem>,
) -> std::io::Result<Option<Record>> {
    let record = match format {
        Format::Jsonl => match jsonl::record_at(path, file, offset, line)? {
            Ok(record) => record,
            Err(problem) => {
                problems.push(problem);
                None
            }
        },
        Format::Csv => csv::record_at(file, path, offset, line, problems)?,
        Format::Json => None,
    };
    let mut found = None;
    if let Some(record) = record {
        Records::new(file, problems, &mut |r, _| found = Some(r)).record(record);
    }
    Ok(found)
}

/// Whether a CSV header without an input column still yields one through a
/// schema: deepeval conversations (`turns`), promptfoo tests with one
/// template variable.
pub(crate) fn header_gives_input(names: &[&str]) -> bool {
    deepeval::header_gives_input(names) || promptfoo::header_gives_input(names)
}
