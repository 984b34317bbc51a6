//! Golden-dataset records (seed 002's schema) and the output file they go
//! to: JSONL (one object per line) or CSV (one row per record, lists and
//! objects as JSON text in their cells), read back by the dataset loaders.
//!
//! ```json
//! {"id": "gen-0001", "query": "...", "ground_truth": "...", "contexts": ["..."],
//!  "source_docs": ["rag.md"], "metadata": {"query_type": "factual", "difficulty": "easy", ...}}
//! ```

use std::path::{Path, PathBuf};

use eval_datasets::{Dataset, write};
use serde_json::{Map, Value};

use super::GenerateError;

/// The output's format, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// `.jsonl` / `.ndjson`.
    Jsonl,
    /// `.csv`.
    Csv,
}

impl OutputFormat {
    /// The format `path`'s extension names.
    pub fn of(path: &Path) -> Result<OutputFormat, GenerateError> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "jsonl" | "ndjson" => Ok(OutputFormat::Jsonl),
            "csv" => Ok(OutputFormat::Csv),
            other => Err(GenerateError::OutputFormat {
                path: path.to_path_buf(),
                extension: other.to_string(),
            }),
        }
    }
}

/// One golden record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `id`.
    pub id: String,
    /// `query`.
    pub query: String,
    /// `ground_truth`.
    pub ground_truth: String,
    /// `contexts`: the passages the question was written from.
    pub contexts: Vec<String>,
    /// `source_docs`: the documents of those passages.
    pub source_docs: Vec<String>,
    /// `metadata`.
    pub metadata: Map<String, Value>,
    /// Other fields of a record read back (kept as they were).
    pub other: Map<String, Value>,
}

impl Record {
    /// The record as one JSON object, in the schema's order.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("id".into(), Value::from(self.id.clone()));
        o.insert("query".into(), Value::from(self.query.clone()));
        o.insert(
            "ground_truth".into(),
            Value::from(self.ground_truth.clone()),
        );
        o.insert("contexts".into(), Value::from(self.contexts.clone()));
        o.insert("source_docs".into(), Value::from(self.source_docs.clone()));
        o.insert("metadata".into(), Value::Object(self.metadata.clone()));
        for (k, v) in &self.other {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
        o
    }

    /// A metadata field as text.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    fn from_sample(s: &eval_datasets::Sample) -> Record {
        let mut other = s.extra.clone();
        let source_docs = match other.remove("source_docs") {
            Some(Value::Array(list)) => list
                .into_iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        };
        if !s.tags.is_empty() {
            other.insert("tags".into(), Value::from(s.tags.clone()));
        }
        Record {
            id: s.id.clone(),
            query: s.input.display_text(),
            ground_truth: s.expected_text().unwrap_or_default().to_string(),
            contexts: if s.reference_contexts.is_empty() {
                s.context.clone()
            } else {
                s.reference_contexts.clone()
            },
            source_docs,
            metadata: s.metadata.clone(),
            other,
        }
    }
}

/// The records of an existing output (read with the dataset loaders: a file
/// that does not load is reported with its lines and left alone).
pub(crate) fn read(path: &Path, max_bytes: u64) -> Result<Vec<Record>, GenerateError> {
    let shown = path.display().to_string();
    let data = Dataset::load_limited(path, &shown, max_bytes).map_err(GenerateError::Existing)?;
    Ok(data.samples.iter().map(Record::from_sample).collect())
}

/// The text of `records` in `format`, through the writers `evals convert`
/// uses (one JSONL and one CSV encoding); only the golden field names and
/// the CSV columns (every field any record has, in the schema's order) are
/// decided here.
pub(crate) fn render(records: &[Record], format: OutputFormat) -> Result<String, GenerateError> {
    let objects = records.iter().map(Record::to_json);
    match format {
        OutputFormat::Jsonl => Ok(write::objects_to_jsonl(objects)),
        OutputFormat::Csv => {
            let objects: Vec<Map<String, Value>> = objects.collect();
            let mut columns: Vec<&str> = Vec::new();
            for o in &objects {
                for k in o.keys() {
                    if !columns.contains(&k.as_str()) {
                        columns.push(k);
                    }
                }
            }
            Ok(write::objects_to_csv(&objects, &columns)?)
        }
    }
}

/// Takes the lock of the output `path` (the empty file `.NAME.lock` beside
/// it, left there), waiting while another run holds it: two runs into one
/// output take turns, the second reading what the first wrote, so neither
/// overwrites the other's samples.
pub(crate) fn lock(path: &Path) -> Result<std::fs::File, GenerateError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    let lock_path = dir.unwrap_or(Path::new(".")).join(format!(".{name}.lock"));
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Write { path, source }
    };
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(failed(dir))?;
    }
    eval_datasets::files::lock(&lock_path).map_err(failed(&lock_path))
}

/// Writes `records` to `path` atomically; the first time a file that
/// existed before this run is replaced, it is backed up first (the backup's
/// path is returned then).
pub(crate) fn write(
    path: &Path,
    records: &[Record],
    format: OutputFormat,
    backed_up: &mut bool,
) -> Result<Option<PathBuf>, GenerateError> {
    let text = render(records, format)?;
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Write { path, source }
    };
    let mut backup = None;
    if !*backed_up && path.exists() {
        backup =
            Some(
                eval_datasets::files::backup(path).map_err(|source| GenerateError::Backup {
                    path: path.to_path_buf(),
                    source,
                })?,
            );
    }
    *backed_up = true;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(failed(dir))?;
    }
    eval_datasets::files::write_atomically(path, text.as_bytes()).map_err(failed(path))?;
    Ok(backup)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: usize) -> Record {
        let mut metadata = Map::new();
        metadata.insert("query_type".into(), Value::from("factual"));
        metadata.insert("synthetic".into(), Value::from(true));
        Record {
            id: format!("gen-{i:04}"),
            query: format!("Question number {i}, with \"quotes\", and a comma?"),
            ground_truth: "An answer\nover two lines.".into(),
            contexts: vec!["Passage one.".into(), "Passage, two.".into()],
            source_docs: vec!["a.md".into(), "dir/b.md".into()],
            metadata,
            other: Map::new(),
        }
    }

    #[test]
    fn both_formats_read_back_as_the_same_records() {
        let dir = std::env::temp_dir().join(format!("eval-golden-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let records = vec![record(1), record(2)];
        for name in ["out.jsonl", "out.csv"] {
            let path = dir.join(name);
            let format = OutputFormat::of(&path).unwrap();
            let mut backed_up = false;
            assert_eq!(
                write(&path, &records, format, &mut backed_up).unwrap(),
                None
            );
            assert_eq!(read(&path, 1 << 20).unwrap(), records, "{name}");
            let before = std::fs::read(&path).unwrap();
            // A second run's first write backs the file up.
            let mut again = false;
            let backup = write(&path, &records[..1], format, &mut again)
                .unwrap()
                .unwrap();
            assert_eq!(std::fs::read(&backup).unwrap(), before);
            assert_eq!(read(&path, 1 << 20).unwrap().len(), 1);
        }
        assert!(OutputFormat::of(Path::new("x.json")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
