//! Errors raised while loading a dataset.

use std::fmt;

/// One thing wrong with one place in a dataset file.
///
/// Displayed as `file:line[:column]: [field `f`: ]message`, the shape compilers
/// and editors understand.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// The dataset path as the user wrote it.
    pub file: String,
    /// 1-based line (for CSV: the line the record starts on).
    pub line: usize,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// The field (JSON key or CSV column) concerned, when there is one.
    pub field: Option<String>,
    /// What was wrong and what was expected.
    pub message: String,
}

impl Problem {
    pub(crate) fn new(file: &str, line: usize, message: impl Into<String>) -> Self {
        Problem {
            file: file.to_string(),
            line,
            column: None,
            field: None,
            message: message.into(),
        }
    }

    pub(crate) fn column(mut self, column: usize) -> Self {
        self.column = Some(column);
        self
    }

    pub(crate) fn field(mut self, field: &str) -> Self {
        self.field = Some(field.to_string());
        self
    }
}

impl Problem {
    /// What is wrong, without the place: `field `f`: message` (one line).
    pub fn detail(&self) -> String {
        let message = one_line(&self.message, usize::MAX);
        match &self.field {
            Some(field) => format!("field `{}`: {message}", one_line(field, usize::MAX)),
            None => message,
        }
    }
}

/// Displayed on one line whatever the file holds: control characters (line
/// breaks included) are escaped.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", one_line(&self.file, usize::MAX), self.line)?;
        if let Some(col) = self.column {
            write!(f, ":{col}")?;
        }
        write!(f, ": {}", self.detail())
    }
}

/// `text` on one line, escaped for a terminal ([`crate::terminal`]: `\n`, `\u{1b}`), cut
/// after `max` characters (marked `…`).
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        crate::terminal::push_escaped(&mut out, c);
    }
    out
}

/// Most problems reported for one file (loading stops after one more).
pub const MAX_PROBLEMS: usize = 50;

/// Why a dataset could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file could not be read.
    #[error("{path}: cannot read dataset: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file (a FIFO, a device, a directory...): refused
    /// without being opened.
    #[error("{path}: cannot read dataset: not a regular file ({kind})")]
    NotAFile {
        /// The file.
        path: String,
        /// What it is instead (a directory, a FIFO, a device).
        kind: &'static str,
    },
    /// Longer than the size limit (`EVAL_MAX_DATASET_BYTES`).
    #[error(
        "{path}: dataset is too large: {size} bytes, over the limit of {limit} bytes (EVAL_MAX_DATASET_BYTES)"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// Its size in bytes.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The extension names no format this crate reads.
    #[error(
        "{path}: unsupported dataset format `{extension}` (expected .jsonl, .ndjson, .csv or .json)"
    )]
    UnsupportedFormat {
        /// The file.
        path: String,
        /// Its extension.
        extension: String,
    },
    /// The file holds no sample at all.
    #[error("{path}: dataset has no samples")]
    Empty {
        /// The file.
        path: String,
    },
    /// One or more lines or records are malformed; every problem found is listed.
    #[error("{}", render_problems(.problems))]
    Invalid {
        /// The file.
        path: String,
        /// Every problem found, each with its line.
        problems: Vec<Problem>,
    },
}

impl DatasetError {
    /// The individual problems (one for I/O, format and empty errors).
    pub fn problems(&self) -> Vec<String> {
        match self {
            DatasetError::Invalid { problems, .. } => {
                let mut all: Vec<String> = problems
                    .iter()
                    .take(MAX_PROBLEMS)
                    .map(ToString::to_string)
                    .collect();
                if problems.len() > MAX_PROBLEMS {
                    all.push("(further problems not reported)".into());
                }
                all
            }
            other => vec![other.to_string()],
        }
    }
}

fn render_problems(problems: &[Problem]) -> String {
    let mut out = String::new();
    for (i, p) in problems.iter().take(MAX_PROBLEMS).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&p.to_string());
    }
    if problems.len() > MAX_PROBLEMS {
        out.push_str("\n(further problems not reported)");
    }
    out
}
