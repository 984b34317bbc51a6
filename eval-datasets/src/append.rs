//! Adding samples to the end of a dataset file (JSONL or CSV) while others
//! may read or write it, as `evals interactive` does: each sample is one
//! whole record written by one `write` under an exclusive lock on the file,
//! after a line the file left unfinished is closed, and taken back if the
//! write fails, so a reader never sees half a sample; the first time an
//! [`Appender`] writes to a file that holds something, it backs the file up
//! first ([`crate::files::backup`]).
//!
//! A CSV file keeps its own header: the sample's fields go into the columns
//! that name them (by [`FIELD_ALIASES`](crate::dataset::FIELD_ALIASES), so a
//! `question,ground_truth` file gets its input and expected answer there); a
//! field the header has no column for is an error rather than lost. A new or
//! empty CSV file gets the header of [`crate::write::to_csv`].

use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sample::Sample;
use crate::write;

/// The file formats samples can be appended to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineFormat {
    /// One JSON object per line (`.jsonl`, `.ndjson`).
    Jsonl,
    /// Comma-separated values with a header (`.csv`).
    Csv,
}

impl LineFormat {
    /// The format `path`'s extension names, if samples can be appended to it.
    pub fn of(path: &Path) -> Option<LineFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "jsonl" | "ndjson" => Some(LineFormat::Jsonl),
            "csv" => Some(LineFormat::Csv),
            _ => None,
        }
    }
}

/// Why a sample could not be appended. The file is as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// The file is not JSONL or CSV.
    #[error(
        "{path}: samples are appended to .jsonl, .ndjson or .csv files (a .json document cannot be appended to line by line)"
    )]
    Format {
        /// The file.
        path: String,
    },
    /// Reading, locking, backing up or writing the file failed.
    #[error("{path}: cannot {doing}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What was being done.
        doing: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// The CSV file's header has no column for a field the sample has.
    #[error(
        "{path}: the header has no column for {}; add the column(s) to the header or append to a .jsonl file",
        .fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    )]
    Columns {
        /// The file.
        path: String,
        /// The fields without a column.
        fields: Vec<String>,
    },
    /// The CSV file's header cannot be read (or the row not written).
    #[error("{path}: cannot read the CSV header: {source}")]
    Header {
        /// The file.
        path: String,
        /// What the CSV reader (or writer) said.
        #[source]
        source: write::CsvError,
    },
    /// The sample would not read back the same from a CSV file.
    #[error("{path}: {what}")]
    Lossy {
        /// The file.
        path: String,
        /// What would be lost.
        what: String,
    },
}

/// Where a sample went.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Appended {
    /// The file line its record starts on (1-based).
    pub line: usize,
    /// The backup made before this write (the first write to a file that
    /// held something), if one was.
    pub backup: Option<PathBuf>,
}

/// Appends samples to one dataset file. See the [module docs](self).
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    format: LineFormat,
    limit: u64,
    backup: Option<PathBuf>,
    backed_up: bool,
}

impl Appender {
    /// An appender to `path` (which need not exist yet): a `.jsonl`,
    /// `.ndjson` or `.csv` file.
    pub fn new(path: impl Into<PathBuf>) -> Result<Appender, AppendError> {
        let path = path.into();
        let format = LineFormat::of(&path).ok_or_else(|| AppendError::Format {
            path: path.display().to_string(),
        })?;
        Ok(Appender {
            path,
            format,
            limit: crate::files::DEFAULT_MAX_DATASET_BYTES,
            backup: None,
            backed_up: false,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its format.
    pub fn format(&self) -> LineFormat {
        self.format
    }

    /// Refuses to append to a file over `limit` bytes (default
    /// [`DEFAULT_MAX_DATASET_BYTES`](crate::files::DEFAULT_MAX_DATASET_BYTES);
    /// `EVAL_MAX_DATASET_BYTES` at run time).
    pub fn max_bytes(mut self, limit: u64) -> Appender {
        self.limit = limit;
        self
    }

    /// The backup this appender made, once it made one.
    pub fn backup(&self) -> Option<&Path> {
        self.backup.as_deref()
    }

    /// Appends `sample` as one record (its canonical fields, as
    /// [`write::record`] gives them). Waits while another process holds the
    /// file's lock.
    pub fn append(&mut self, sample: &Sample) -> Result<Appended, AppendError> {
        let shown = self.path.display().to_string();
        let io = |doing: &'static str| {
            let path = shown.clone();
            move |source| AppendError::Io {
                path,
                doing,
                source,
            }
        };
        let mut file = locked_current(&self.path, || {
            crate::files::open_appending(&self.path, self.limit)
        })
        .map_err(io("lock it"))?;
        // The lock is let go when `file` is closed, on every path out.
        let seen = scan(&mut file).map_err(io("read it"))?;
        // A new CSV file gets its header line first.
        let (record, header) = match self.format {
            LineFormat::Jsonl => {
                let golden = seen.blank || first_is_golden(&mut file).map_err(io("read it"))?;
                (jsonl_line(sample, golden), false)
            }
            LineFormat::Csv => {
                file.seek(SeekFrom::Start(0)).map_err(io("read it"))?;
                csv_record(sample, &file, seen.blank, &shown)?
            }
        };
        let mut backup = None;
        if !self.backed_up && seen.len > 0 {
            let made = crate::files::backup(&self.path).map_err(io("back it up"))?;
            self.backup = Some(made.clone());
            backup = Some(made);
        }
        self.backed_up = true;
        // A last line left unfinished stays its own line.
        let mut bytes = Vec::with_capacity(record.len() + 1);
        let unfinished = seen.last.is_some_and(|b| b != b'\n');
        if unfinished {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(&record);
        let line = seen.lines + 1 + usize::from(unfinished) + usize::from(header);
        if let Err(e) = file.write_all(&bytes).and_then(|()| file.sync_data()) {
            // Whatever part was written is taken back.
            let _ = file.set_len(seen.len);
            return Err(io("write it")(e));
        }
        Ok(Appended { line, backup })
    }
}

/// Takes the lock [`Appender`]s take on the dataset file at `path`, for a
/// rewrite of the whole file (read it, change it, write it atomically over
/// the old one, as `evals lint --fix` does): hold the file returned until
/// the new file is in place. Appenders wait meanwhile, then append to the
/// new file, so no sample appended at the same time is lost or cut.
pub fn lock_for_rewrite(path: &Path) -> std::io::Result<std::fs::File> {
    // A regular file only (a FIFO is never opened: that would wait).
    locked_current(path, || {
        crate::files::open_checked(path, u64::MAX)
            .map(|(file, _)| file)
            .map_err(std::io::Error::from)
    })
}

/// `open()`'s file, locked exclusively, once it is still the file at
/// `path` (one replaced while we waited for its lock is opened again).
fn locked_current(
    path: &Path,
    open: impl Fn() -> std::io::Result<std::fs::File>,
) -> std::io::Result<std::fs::File> {
    /// Files replaced under us before giving up.
    const ATTEMPTS: usize = 1000;
    for _ in 0..ATTEMPTS {
        let file = open()?;
        file.lock()?;
        if is_at(&file, path)? {
            return Ok(file);
        }
    }
    Err(std::io::Error::other(format!(
        "{}: replaced {ATTEMPTS} times while waiting for its lock",
        path.display()
    )))
}

/// Whether the open `file` is still the one `path` names.
fn is_at(file: &std::fs::File, path: &Path) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let (open, named) = (file.metadata()?, std::fs::metadata(path));
        match named {
            Ok(named) => Ok(open.dev() == named.dev() && open.ino() == named.ino()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        Ok(true)
    }
}

/// What a file holds, read through once.
struct Seen {
    /// Its length in bytes.
    len: u64,
    /// Its newlines.
    lines: usize,
    /// Its last byte.
    last: Option<u8>,
    /// Nothing but white space (after a byte-order mark).
    blank: bool,
}

/// Reads `file` from the start in blocks (not into memory at once).
fn scan(file: &mut std::fs::File) -> std::io::Result<Seen> {
    file.seek(SeekFrom::Start(0))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut seen = Seen {
        len: 0,
        lines: 0,
        last: None,
        blank: true,
    };
    loop {
        let block = reader.fill_buf()?;
        if block.is_empty() {
            return Ok(seen);
        }
        let n = block.len();
        let body = if seen.len == 0 {
            block.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(block)
        } else {
            block
        };
        seen.blank = seen.blank && body.iter().all(u8::is_ascii_whitespace);
        seen.lines += block.iter().filter(|b| **b == b'\n').count();
        seen.last = block.last().copied();
        seen.len += n as u64;
        reader.consume(n);
    }
}

/// The sample as one JSONL line (with its newline).
fn jsonl_line(sample: &Sample, golden: bool) -> Vec<u8> {
    let mut record = write::record(sample);
    if golden {
        record = write::golden_record(record);
    }
    let mut line = Value::Object(record).to_string();
    line.push('\n');
    line.into_bytes()
}

/// Whether the file's first record uses seed 002's golden schema (`query`
/// with `ground_truth` or `source_docs`): then appended samples use it too.
fn first_is_golden(file: &mut std::fs::File) -> std::io::Result<bool> {
    /// A first record longer than this is not read whole to find out.
    const MAX_LINE: u64 = 1 << 20;
    file.seek(SeekFrom::Start(0))?;
    let reader = std::io::BufReader::new(Read::take(&*file, MAX_LINE));
    for line in reader.lines() {
        let line = line?;
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() {
            continue;
        }
        return Ok(
            serde_json::from_str::<serde_json::Map<String, Value>>(line).is_ok_and(|o| {
                o.contains_key("query")
                    && (o.contains_key("ground_truth") || o.contains_key("source_docs"))
            }),
        );
    }
    Ok(false)
}

/// The sample as one CSV record under the file's header (the header first
/// when the file holds none: then `true`).
fn csv_record(
    sample: &Sample,
    mut file: &std::fs::File,
    blank: bool,
    path: &str,
) -> Result<(Vec<u8>, bool), AppendError> {
    if let Some(what) = write::csv_losses(std::slice::from_ref(sample)).first() {
        return Err(AppendError::Lossy {
            path: path.to_string(),
            what: what.clone(),
        });
    }
    if blank {
        let text =
            write::to_csv(std::slice::from_ref(sample)).map_err(|source| AppendError::Header {
                path: path.to_string(),
                source,
            })?;
        return Ok((text.into_bytes(), true));
    }
    let header_error = |source: write::CsvError| AppendError::Header {
        path: path.to_string(),
        source,
    };
    let mut bom = [0u8; 3];
    let n = file.read(&mut bom).map_err(|e| header_error(e.into()))?;
    if !(n == 3 && bom == *b"\xEF\xBB\xBF") {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| header_error(e.into()))?;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(std::io::BufReader::new(file));
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| header_error(e.into()))?
        .iter()
        .map(str::to_string)
        .collect();
    let record = write::record(sample);
    // Each field's column: the first whose name is one of its aliases.
    let mut row = vec![String::new(); header.len()];
    let mut missing = Vec::new();
    for (field, value) in &record {
        let column = header
            .iter()
            .position(|c| canonical(c) == Some(field.as_str()));
        match column {
            Some(i) => {
                row[i] = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }
            }
            None => missing.push(field.clone()),
        }
    }
    if !missing.is_empty() {
        return Err(AppendError::Columns {
            path: path.to_string(),
            fields: missing,
        });
    }
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(&row).map_err(|e| header_error(e.into()))?;
    let bytes = w
        .into_inner()
        .map_err(|e| header_error(e.into_error().into()))?;
    Ok((bytes, false))
}

/// The field a column (or key) fills, by [`crate::dataset::FIELD_ALIASES`].
fn canonical(column: &str) -> Option<&'static str> {
    let column = column.trim();
    crate::dataset::FIELD_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(column))
        .map(|(_, field)| *field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dataset;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "eval-datasets-append-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn sample(input: &str, expected: &str) -> Sample {
        Sample::new(input)
            .with_expected(expected)
            .with_tags(["smoke"])
    }

    /// A JSONL file keeps its vocabulary: a golden file (and a new one)
    /// gets `query`/`ground_truth`/`contexts`, a file of canonical records
    /// `input`/`expected`; each reads back as the sample appended.
    #[test]
    fn jsonl_appends_in_the_files_own_vocabulary() {
        let dir = scratch("vocabulary");
        let mut s = sample("What is RAG?", "Retrieval-augmented generation.");
        s.context = vec!["RAG retrieves documents first.".into()];
        let golden = dir.join("golden.jsonl");
        std::fs::write(
            &golden,
            "{\"query\": \"q\", \"ground_truth\": \"a\", \"contexts\": [\"c\"], \"source_docs\": [\"d.md\"]}\n",
        )
        .unwrap();
        let canonical = dir.join("canonical.jsonl");
        std::fs::write(&canonical, "{\"input\": \"q\", \"expected\": \"a\"}\n").unwrap();
        let new = dir.join("new.jsonl");
        for path in [&golden, &canonical, &new] {
            Appender::new(path).unwrap().append(&s).unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            let last: serde_json::Map<String, Value> =
                serde_json::from_str(text.lines().last().unwrap()).unwrap();
            let keys: Vec<&str> = last.keys().map(String::as_str).collect();
            if path == &canonical {
                assert!(
                    keys.contains(&"input") && keys.contains(&"expected"),
                    "{keys:?}"
                );
            } else {
                assert!(
                    keys.contains(&"query")
                        && keys.contains(&"ground_truth")
                        && keys.contains(&"contexts"),
                    "{}: {keys:?}",
                    path.display()
                );
            }
            let d = Dataset::load(path).unwrap();
            let got = d.samples.last().unwrap();
            assert_eq!(got.input.last(), "What is RAG?");
            assert_eq!(
                got.expected.as_ref().unwrap().last(),
                "Retrieval-augmented generation."
            );
        }
    }

    #[test]
    fn jsonl_appends_whole_lines_and_backs_up_once() {
        let dir = scratch("jsonl");
        let path = dir.join("d.jsonl");
        // A last line without its newline stays its own line.
        std::fs::write(&path, r#"{"input": "a", "expected": "b"}"#).unwrap();
        let mut a = Appender::new(&path).unwrap();
        let first = a.append(&sample("What is 2 + 2?", "4")).unwrap();
        assert_eq!(first.line, 2);
        let backup = first.backup.expect("a backup of the file as it was");
        assert_eq!(
            std::fs::read_to_string(&backup).unwrap(),
            r#"{"input": "a", "expected": "b"}"#
        );
        let second = a
            .append(&sample("Tell me, \"quoted\"\nand more", "x"))
            .unwrap();
        assert_eq!((second.line, second.backup), (3, None));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
        assert_eq!(text.lines().count(), 3);
        let d = Dataset::load(&path).unwrap();
        assert_eq!(d.samples.len(), 3);
        assert_eq!(d.samples[1].input.last(), "What is 2 + 2?");
        assert_eq!(d.samples[2].input.last(), "Tell me, \"quoted\"\nand more");
        assert_eq!(d.samples[2].tags, vec!["smoke"]);
        // One backup in all.
        let backups = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".bak")
            })
            .count();
        assert_eq!(backups, 1);
    }

    #[test]
    fn a_new_file_gets_no_backup() {
        let dir = scratch("new");
        for name in ["n.jsonl", "n.csv"] {
            let mut a = Appender::new(dir.join(name)).unwrap();
            let done = a.append(&sample("q", "a")).unwrap();
            assert_eq!(
                (done.line, done.backup),
                (if name.ends_with("csv") { 2 } else { 1 }, None)
            );
            assert_eq!(Dataset::load(dir.join(name)).unwrap().samples.len(), 1);
        }
    }

    #[test]
    fn csv_fills_the_files_own_columns() {
        let dir = scratch("csv");
        let path = dir.join("d.csv");
        std::fs::write(&path, "\u{feff}question,ground_truth,tags\nWhat?,That,\n").unwrap();
        let mut a = Appender::new(&path).unwrap();
        a.append(&sample("Say \"hi\", twice\nplease", "hi, hi"))
            .unwrap();
        let d = Dataset::load(&path).unwrap();
        assert_eq!(d.samples.len(), 2);
        assert_eq!(d.samples[1].input.last(), "Say \"hi\", twice\nplease");
        assert_eq!(d.samples[1].expected_text(), Some("hi, hi"));
        assert_eq!(d.samples[1].tags, vec!["smoke"]);
        // A field without a column is refused, and the file left alone.
        let before = std::fs::read(&path).unwrap();
        let with_context = sample("q", "a").with_context(["chunk"]);
        let e = a.append(&with_context).unwrap_err();
        assert!(e.to_string().contains("no column for `context`"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn other_files_are_refused() {
        let e = Appender::new("d.json").unwrap_err();
        assert!(e.to_string().contains(".jsonl, .ndjson or .csv"), "{e}");
    }

    #[test]
    fn a_rewrite_under_the_lock_loses_no_sample_appended_meanwhile() {
        let dir = scratch("rewrite");
        let path = dir.join("d.jsonl");
        let mut a = Appender::new(&path).unwrap();
        a.append(&sample("first", "x")).unwrap();
        let lock = lock_for_rewrite(&path).unwrap();
        let appending = {
            let path = path.clone();
            std::thread::spawn(move || {
                Appender::new(&path)
                    .unwrap()
                    .append(&sample("during", "x"))
                    .unwrap()
            })
        };
        // The appender waits for the lock, on the file about to be replaced.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let old = std::fs::read_to_string(&path).unwrap();
        assert_eq!(old.lines().count(), 1, "appended under the lock: {old}");
        crate::files::write_atomically(
            &path,
            format!("{old}{{\"input\": \"rewritten\"}}\n").as_bytes(),
        )
        .unwrap();
        drop(lock);
        appending.join().unwrap();
        let d = Dataset::load(&path).unwrap();
        let inputs: Vec<&str> = d.samples.iter().map(|s| s.input.last()).collect();
        assert_eq!(inputs, ["first", "rewritten", "during"]);
    }

    #[test]
    fn writers_in_several_threads_never_interleave() {
        let dir = scratch("threads");
        let path = dir.join("d.jsonl");
        let long = "word ".repeat(20_000);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (path, long) = (path.clone(), long.clone());
                s.spawn(move || {
                    let mut a = Appender::new(&path).unwrap();
                    for i in 0..10 {
                        a.append(&sample(&format!("{t}-{i} {long}"), "x")).unwrap();
                    }
                });
            }
        });
        let d = Dataset::load(&path).unwrap();
        assert_eq!(d.samples.len(), 40);
    }
}
