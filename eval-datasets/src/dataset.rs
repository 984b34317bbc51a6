//! Loading dataset files into [`Sample`]s: the public entry. How each format
//! is read is the business of the dataset adapters (`formats/`).

use std::collections::HashMap;
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use crate::error::{DatasetError, MAX_PROBLEMS, Problem};
use crate::formats;
use crate::index_entry::Entry;
use crate::naming;
use crate::sample::Sample;

pub use crate::formats::{FIELD_ALIASES, Format};

/// Parses JSON text like `serde_json::from_str`, but rejects an object that
/// repeats a key (whose first value would otherwise be lost silently).
pub fn parse_json_strict(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    formats::parse_strict(text)
}

/// A loaded dataset: every sample of one file, in file order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Dataset {
    /// The path as the user wrote it (used in messages and reports).
    pub path: String,
    /// The file's format.
    pub format: Format,
    /// The samples, in file order.
    pub samples: Vec<Sample>,
    /// What the file says it is: a runevals document's
    /// `metadata.description`, an Unrag dataset's `description`.
    pub description: Option<String>,
}

impl Dataset {
    /// Reads and parses the file at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Dataset, DatasetError> {
        let path = path.as_ref();
        let shown = path.to_string_lossy();
        Self::load_as(path, &shown)
    }

    /// Reads the file at `path` but names it `shown` in samples and messages
    /// (e.g. the path relative to the crate, as written in the attribute).
    /// The file must be a regular file of at most
    /// [`DEFAULT_MAX_DATASET_BYTES`](crate::files::DEFAULT_MAX_DATASET_BYTES).
    pub fn load_as(path: &Path, shown: &str) -> Result<Dataset, DatasetError> {
        Self::load_limited(path, shown, crate::files::DEFAULT_MAX_DATASET_BYTES)
    }

    /// [`load_as`](Self::load_as) with a size limit of `max_bytes`.
    pub fn load_limited(path: &Path, shown: &str, max_bytes: u64) -> Result<Dataset, DatasetError> {
        Format::from_path(shown)?;
        let bytes = crate::files::read_checked(path, max_bytes)
            .map_err(|e| DatasetError::read(shown, e))?;
        Self::from_bytes(shown, &bytes)
    }

    /// Parses `bytes` as the dataset named `path` (whose extension picks the format).
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<Dataset, DatasetError> {
        let format = Format::from_path(path)?;
        let mut problems = Vec::new();
        let mut samples = Vec::new();
        let shared_path: Arc<str> = path.into();
        // Each record becomes a sample as soon as it is read: the file's
        // records are never all held at once.
        let mut sink = |record, problems: &mut Vec<Problem>| {
            if problems.len() <= MAX_PROBLEMS
                && let Some(sample) =
                    formats::to_sample(&shared_path, samples.len(), record, problems)
            {
                samples.push(sample);
            }
        };
        let description = formats::read(format, path, bytes, &mut problems, &mut sink);
        check_unique_ids(path, &samples, &mut problems);
        refusal(path, problems, samples.len())?;
        Ok(Dataset {
            path: path.to_string(),
            format,
            samples,
            description,
        })
    }

    /// Reads the `.jsonl` file at `path` (named `shown`, at most `max_bytes`)
    /// one sample at a time, handing each to `each` in file order, and checks
    /// it as [`load_limited`](Self::load_limited) does (every problem,
    /// duplicate ids, an empty file) without holding the file or its
    /// samples: memory is one sample, and 16 bytes for each sample with an
    /// explicit id. On an error, what `each` was given is to be dropped.
    /// `Ok(None)`: the file is not `.jsonl` (read it whole instead).
    pub fn scan_limited(
        path: &Path,
        shown: &str,
        max_bytes: u64,
        each: &mut dyn FnMut(Sample),
    ) -> Result<Option<usize>, DatasetError> {
        if Format::from_path(shown)? != Format::Jsonl {
            return Ok(None);
        }
        let mut ids: Vec<(u64, u32)> = Vec::new();
        let mut count = 0usize;
        let problems = scan_jsonl(path, shown, max_bytes, &mut |sample| {
            if sample.explicit_id {
                let line = u32::try_from(sample.source.line).unwrap_or(u32::MAX);
                ids.push((crate::hash::fnv1a64(&[sample.id.as_bytes()]), line));
            }
            count += 1;
            each(sample);
        })?;
        let mut problems = problems;
        // Ids whose hashes meet are read again and compared as a full load
        // compares them (the same messages).
        ids.sort_unstable();
        let mut lines: Vec<u32> = ids
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|run| run.len() > 1)
            .flatten()
            .map(|(_, line)| *line)
            .collect();
        drop(ids);
        if !lines.is_empty() && problems.is_empty() {
            lines.sort_unstable();
            let mut same = Vec::new();
            let mut again = |sample: Sample| {
                let line = u32::try_from(sample.source.line).unwrap_or(u32::MAX);
                if lines.binary_search(&line).is_ok() {
                    same.push(sample);
                }
            };
            problems = scan_jsonl(path, shown, max_bytes, &mut again)?;
            check_unique_ids(shown, &same, &mut problems);
        }
        refusal(shown, problems, count)?;
        Ok(Some(count))
    }

    /// The sample on one line of a `.jsonl` file (`raw`, without its line
    /// end) as a full load of the file `shown` gives it: the line starts at
    /// byte `offset`, is line `line`, and holds sample `index`. For a caller
    /// that keeps where each sample of a [`scan_limited`](Self::scan_limited)
    /// is and reads it again when it needs it.
    pub fn jsonl_sample(
        shown: &Arc<str>,
        raw: &[u8],
        (offset, line, index): (u64, usize, usize),
    ) -> Result<Sample, DatasetError> {
        let mut problems = Vec::new();
        let mut found = None;
        match formats::jsonl::line_record(shown, line, offset, raw) {
            Ok(Some(record)) => {
                let mut sink = |r, problems: &mut Vec<Problem>| {
                    found = formats::to_sample(shown, index, r, problems);
                };
                formats::Records::new(shown, &mut problems, &mut sink).record(record);
            }
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
        match found {
            Some(sample) if problems.is_empty() => Ok(sample),
            _ => {
                if problems.is_empty() {
                    problems.push(Problem::new(shown, line, "no sample on this line"));
                }
                Err(DatasetError::Invalid {
                    path: shown.to_string(),
                    problems,
                })
            }
        }
    }

    /// Loads just the sample an index entry ([`crate::index`]) points at:
    /// one record read, however large the file. The sample is as a full load
    /// would give it (same line, index, id).
    pub fn load_record(path: &Path, shown: &str, entry: &Entry) -> Result<Dataset, DatasetError> {
        Self::load_record_limited(path, shown, entry, crate::files::DEFAULT_MAX_DATASET_BYTES)
    }

    /// [`load_record`](Self::load_record) of a file of at most `max_bytes`
    /// (a regular file, checked as a full load checks it).
    pub fn load_record_limited(
        path: &Path,
        shown: &str,
        entry: &Entry,
        max_bytes: u64,
    ) -> Result<Dataset, DatasetError> {
        let format = Format::from_path(shown)?;
        crate::files::open_checked(path, max_bytes).map_err(|e| DatasetError::read(shown, e))?;
        let io = |source| DatasetError::Io {
            path: shown.to_string(),
            source,
        };
        let mut problems = Vec::new();
        let record = if format == Format::Json {
            // One document: read it whole and keep the indexed sample.
            let mut all = Dataset::load_limited(path, shown, max_bytes)?;
            if entry.index < all.samples.len() {
                let sample = all.samples.swap_remove(entry.index);
                all.samples = vec![sample];
                return Ok(all);
            }
            None
        } else {
            formats::record_at(format, path, shown, entry.offset, entry.line, &mut problems)
                .map_err(io)?
        };
        let shared_path: Arc<str> = shown.into();
        let sample =
            record.and_then(|r| formats::to_sample(&shared_path, entry.index, r, &mut problems));
        match sample {
            Some(sample) if problems.is_empty() => Ok(Dataset {
                path: shown.to_string(),
                format,
                samples: vec![sample],
                description: None,
            }),
            _ => {
                if problems.is_empty() {
                    problems.push(Problem::new(
                        shown,
                        entry.line,
                        "no record here (the index is stale)",
                    ));
                }
                Err(DatasetError::Invalid {
                    path: shown.to_string(),
                    problems,
                })
            }
        }
    }

    /// The test name of each sample, in order (see [`crate::naming`]).
    pub fn test_names(&self) -> Vec<String> {
        naming::test_names(&self.samples)
    }
}

impl DatasetError {
    /// The error for a dataset file `path` that could not be read.
    pub fn read(path: &str, e: crate::files::ReadError) -> Self {
        use crate::files::ReadError;
        let path = path.to_string();
        match e {
            ReadError::Io(source) => DatasetError::Io { path, source },
            ReadError::NotAFile { kind } => DatasetError::NotAFile { path, kind },
            ReadError::TooLarge { size, limit } => DatasetError::TooLarge { path, size, limit },
            e @ ReadError::NotUtf8 { .. } => DatasetError::Io {
                path,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            },
        }
    }
}

fn check_unique_ids(file: &str, samples: &[Sample], problems: &mut Vec<Problem>) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for s in samples.iter().filter(|s| s.explicit_id) {
        if let Some(line) = first.get(s.id.as_str()) {
            problems.push(
                Problem::new(
                    file,
                    s.source.line,
                    format!("duplicate id `{}` (first used on line {line})", s.id),
                )
                .field("id"),
            );
        } else {
            first.insert(&s.id, s.source.line);
        }
    }
}

/// Reads the `.jsonl` file at `path` one line at a time, handing each
/// sample to `each`; returns the problems found.
fn scan_jsonl(
    path: &Path,
    shown: &str,
    max_bytes: u64,
    each: &mut dyn FnMut(Sample),
) -> Result<Vec<Problem>, DatasetError> {
    let (file, _) =
        crate::files::open_checked(path, max_bytes).map_err(|e| DatasetError::read(shown, e))?;
    let shared_path: Arc<str> = shown.into();
    let mut problems = Vec::new();
    let mut index = 0usize;
    let mut sink = |record, problems: &mut Vec<Problem>| {
        if problems.len() <= MAX_PROBLEMS
            && let Some(sample) = formats::to_sample(&shared_path, index, record, problems)
        {
            index += 1;
            each(sample);
        }
    };
    let mut records = formats::Records::new(shown, &mut problems, &mut sink);
    let reader = std::io::BufReader::with_capacity(1 << 16, file.take(max_bytes));
    formats::jsonl::read_lines(reader, &mut records).map_err(|source| DatasetError::Io {
        path: shown.to_string(),
        source,
    })?;
    Ok(problems)
}

/// The error of a dataset `path` read with `problems` into `count`
/// samples: its problems by line (the first [`MAX_PROBLEMS`] and one), or
/// that it holds none.
fn refusal(path: &str, mut problems: Vec<Problem>, count: usize) -> Result<(), DatasetError> {
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        problems.truncate(MAX_PROBLEMS + 1);
        return Err(DatasetError::Invalid {
            path: path.to_string(),
            problems,
        });
    }
    if count == 0 {
        return Err(DatasetError::Empty {
            path: path.to_string(),
        });
    }
    Ok(())
}
