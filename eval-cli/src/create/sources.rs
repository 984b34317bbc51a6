//! Step 2 and 3 of `evals create`: where the queries and their ground
//! truth come from — typed, a `.txt`/`.jsonl`/`.csv` file, production
//! traces, a ground-truth file merged by id or query, generation from a
//! corpus with the judge model.

use std::path::{Path, PathBuf};

use crate::synth::{Corpus, Mix, Options, QueryType, generate_blocking};
use eval_datasets::{Dataset, Sample};
use eval_runtime::Config;
use eval_runtime::services::Judge;
use serde_json::{Map, Value};

use super::{Args, Ask, Pair};
use crate::Failure;

/// Where the queries come from (step 2).
pub(super) struct Sources {
    pub queries: Option<PathBuf>,
    pub traces: Option<PathBuf>,
    pub corpus: Option<PathBuf>,
    pub typed: Vec<String>,
}

impl Sources {
    pub(super) fn is_empty(&self) -> bool {
        self.queries.is_none()
            && self.traces.is_none()
            && self.corpus.is_none()
            && self.typed.is_empty()
    }

    /// Step 2's menu, on a terminal.
    pub(super) fn ask(&mut self, ask: &Ask) -> Result<(), Failure> {
        if !ask.terminal {
            return Err(Failure::config(
                "sample queries are needed: give --queries, --traces or --corpus (no terminal to ask)",
            ));
        }
        let choice = ask.choose("ELICIT: Query Collection\n\nHow would you like to provide sample queries?\n\n[1] Manual entry - Type queries one by one\n[2] File import  - Import from JSONL/CSV/TXT file\n[3] Production traces - Extract from exported traces (JSONL/CSV)\n[4] Synthetic generation - Generate queries from your document corpus\n[5] Hybrid - Combine multiple sources\n\nYour choice? [1/2/3/4/5]: ", |a| match a {
            "1" | "2" | "3" | "4" | "5" => Ok(a.to_string()),
            _ => Err(format!("`{}`: expected 1, 2, 3, 4 or 5", eval_datasets::terminal::escaped(a))),
        })?;
        let path = |prompt: &str| {
            ask.line(prompt)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
        };
        let hybrid = choice == "5";
        if choice == "1" || hybrid {
            errln!("Enter queries (one per line, empty line to finish):");
            let mut n = 1;
            while let Some(q) = ask
                .line(&format!("  Query {n}: "))
                .filter(|q| !q.is_empty())
            {
                self.typed.push(q);
                n += 1;
            }
        }
        if choice == "2" || hybrid {
            self.queries = path("  File path (.jsonl, .csv, .txt one query per line): ");
        }
        if choice == "3" || hybrid {
            self.traces = path("  Traces file (.jsonl, .csv): ");
        }
        if choice == "4" || hybrid {
            self.corpus = path("  Document corpus path: ");
        }
        if self.is_empty() {
            return Err(Failure::config("no sample queries were given"));
        }
        Ok(())
    }

    /// The pairs of the files, traces and typed queries, merged with the
    /// ground-truth file.
    pub(super) fn read(&self, args: &Args) -> Result<Vec<Pair>, Failure> {
        let mut pairs = Vec::new();
        if let Some(file) = &self.queries {
            pairs.extend(queries_file(file)?);
        }
        for q in &self.typed {
            pairs.push(pair(q.clone(), None));
        }
        if let Some(truth) = &args.ground_truth {
            merge_truth(&mut pairs, truth)?;
        }
        if let Some(traces) = &self.traces {
            pairs.extend(traces_file(traces)?);
        }
        Ok(pairs)
    }
}

pub(super) fn pair(query: String, ground_truth: Option<String>) -> Pair {
    Pair {
        query,
        ground_truth,
        contexts: Vec::new(),
        source_docs: Vec::new(),
        metadata: Map::new(),
    }
}

/// `FILE_FORMAT_ERROR` of seed 002, naming the file.
pub(super) fn format_error(file: &Path, why: impl std::fmt::Display) -> Failure {
    Failure::config(format!("FILE_FORMAT_ERROR: {}: {why}", file.display()))
}

/// The text of an input file, read as every input file is.
fn read_text(file: &Path) -> Result<String, eval_datasets::files::ReadError> {
    eval_datasets::files::read_text(file, eval_runtime::Config::max_dataset_bytes())
}

/// A queries file: `.txt` one query per line (blank lines and `#` comments
/// skipped), else a dataset this crate reads.
pub(super) fn queries_file(file: &Path) -> Result<Vec<Pair>, Failure> {
    if file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("txt"))
    {
        let text = read_text(file).map_err(|e| format_error(file, e))?;
        return Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| pair(l.to_string(), None))
            .collect());
    }
    let d = Dataset::load(file).map_err(|e| format_error(file, e))?;
    Ok(d.samples.iter().map(from_sample).collect())
}

pub(super) fn from_sample(s: &Sample) -> Pair {
    let mut p = pair(
        s.input.last().to_string(),
        s.expected.as_ref().map(|e| e.last().to_string()),
    );
    p.contexts = if s.reference_contexts.is_empty() {
        s.context.clone()
    } else {
        s.reference_contexts.clone()
    };
    if let Some(Value::Array(docs)) = s.extra.get("source_docs") {
        p.source_docs = docs
            .iter()
            .filter_map(|d| d.as_str().map(str::to_string))
            .collect();
    }
    for key in [
        "query_type",
        "difficulty",
        "edge_case",
        "confidence",
        "annotator",
        "synthetic",
        "generator_model",
    ] {
        if let Some(v) = s.metadata.get(key) {
            p.metadata.insert(key.into(), v.clone());
        }
    }
    if s.explicit_id {
        p.metadata
            .insert("source_id".into(), Value::from(s.id.clone()));
    }
    p
}

/// Merges a ground-truth file into `pairs`: by id (a query file's id), else
/// by the query's text (normalised); a pair not in `pairs` is added. Its
/// answers are labelled by their source (`annotator: "file"`: who wrote
/// them is not known) unless its own `metadata.annotator` says who; its `metadata.confidence`,
/// `difficulty`, `query_type` and `edge_case` are kept.
pub(super) fn merge_truth(pairs: &mut Vec<Pair>, file: &Path) -> Result<(), Failure> {
    let d = Dataset::load(file).map_err(|e| format_error(file, e))?;
    for s in &d.samples {
        let t = from_sample(s);
        let key = eval_datasets::similarity::normalise(&t.query);
        let found = pairs.iter_mut().find(|p| {
            (s.explicit_id
                && p.metadata.get("source_id").and_then(Value::as_str) == Some(s.id.as_str()))
                || eval_datasets::similarity::normalise(&p.query) == key
        });
        match found {
            Some(p) => {
                let answered = t.ground_truth.is_some();
                p.ground_truth = t.ground_truth.or(p.ground_truth.take());
                if !t.contexts.is_empty() {
                    p.contexts = t.contexts;
                }
                if !t.source_docs.is_empty() {
                    p.source_docs = t.source_docs;
                }
                for (k, v) in &t.metadata {
                    if k != "source_id" {
                        p.metadata.insert(k.clone(), v.clone());
                    }
                }
                if answered && !t.metadata.contains_key("annotator") {
                    p.metadata.insert("annotator".into(), Value::from("file"));
                }
            }
            None => {
                let mut t = t;
                if t.ground_truth.is_some() {
                    t.metadata.entry("annotator").or_insert(Value::from("file"));
                }
                pairs.push(t)
            }
        }
    }
    Ok(())
}

/// Production traces: JSONL objects or CSV rows; the query from `inputs`
/// (`question`, `query`, `input`, `prompt`) or the same top-level names,
/// the candidate answer from `outputs` (`answer`, `output`, `result`) or
/// top-level `output`/`answer`. An unreviewed production answer has low
/// confidence.
pub(super) fn traces_file(file: &Path) -> Result<Vec<Pair>, Failure> {
    let text = read_text(file).map_err(|e| format_error(file, e))?;
    let is_csv = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut rows: Vec<(usize, Map<String, Value>)> = Vec::new();
    if is_csv {
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let headers = r.headers().map_err(|e| format_error(file, e))?.clone();
        for (i, row) in r.records().enumerate() {
            let row = row.map_err(|e| format_error(file, e))?;
            let o: Map<String, Value> = headers
                .iter()
                .zip(row.iter())
                .map(|(h, v)| {
                    (
                        h.to_string(),
                        serde_json::from_str(v).unwrap_or(Value::from(v)),
                    )
                })
                .collect();
            rows.push((i + 2, o));
        }
    } else {
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => rows.push((i + 1, o)),
                _ => {
                    return Err(format_error(
                        file,
                        format!("line {}: not a JSON object", i + 1),
                    ));
                }
            }
        }
    }
    let text_of = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Object(o) => [
                "question", "query", "input", "prompt", "answer", "output", "result", "content",
            ]
            .iter()
            .find_map(|k| {
                o.get(*k)
                    .and_then(Value::as_str)
                    .map(|s| s.trim().to_string())
            }),
            _ => None,
        }
    };
    let mut pairs = Vec::new();
    for (line, o) in rows {
        let query = ["inputs", "question", "query", "input", "prompt"]
            .iter()
            .find_map(|k| text_of(o.get(*k)))
            .ok_or_else(|| {
                format_error(
                    file,
                    format!("line {line}: no query (inputs.question, query, input or prompt)"),
                )
            })?;
        let answer = ["outputs", "answer", "output", "result"]
            .iter()
            .find_map(|k| text_of(o.get(*k)));
        let mut p = pair(query, answer);
        p.metadata.insert("annotator".into(), Value::from("trace"));
        p.metadata.insert("confidence".into(), Value::from("low"));
        pairs.push(p);
    }
    Ok(pairs)
}

/// Pairs generated from `corpus` by the judge model (as `evals generate`).
#[allow(clippy::too_many_arguments)]
pub(super) fn generated(
    corpus: &Path,
    count: usize,
    types: &[&str],
    edge_cases: &[&str],
    domain: &str,
    config: &Config,
    out_dir: &Path,
    per_document: Option<usize>,
) -> Result<Vec<Pair>, Failure> {
    if !corpus.exists() {
        return Err(Failure::config(format!(
            "CORPUS_NOT_FOUND: {}",
            corpus.display()
        )));
    }
    let judge = Judge::from_config(config).map_err(|e| Failure::config(e.to_string()))?;
    let c = Corpus::load(
        corpus,
        crate::synth::DEFAULT_CHUNK_WORDS,
        config.max_dataset_bytes,
    )
    .map_err(|e| Failure::config(e.to_string()))?;
    // `--per-document N`: at most N questions a document.
    let count = per_document.map_or(count, |n| count.min(n.saturating_mul(c.documents.max(1))));
    let mut weights: Vec<(QueryType, f64)> = types
        .iter()
        .filter_map(|t| QueryType::parse(t))
        .map(|t| (t, 2.0))
        .collect();
    for e in edge_cases {
        if let Some(t) = QueryType::parse(e)
            && !weights.iter().any(|(k, _)| *k == t)
        {
            weights.push((t, 1.0));
        }
    }
    let mut options = Options::new(count);
    options.types = Mix::new(weights);
    options.domain = Some(domain.to_string());
    options.fresh = true;
    std::fs::create_dir_all(out_dir)
        .map_err(|e| Failure::config(format!("cannot create {}: {e}", out_dir.display())))?;
    // Its own name per process and call: runs into one folder at once
    // never share it; those of killed runs are swept.
    sweep_scratch(out_dir, domain);
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // A folder, so what generate keeps beside its output (its lock) goes too.
    let scratch_dir = out_dir.join(format!(".{domain}-generated.{}.{n}", std::process::id()));
    std::fs::create_dir_all(&scratch_dir)
        .map_err(|e| Failure::config(format!("cannot create {}: {e}", scratch_dir.display())))?;
    let scratch = scratch_dir.join("generated.jsonl");
    let outcome = generate_blocking(
        &c,
        &scratch,
        &options,
        &judge,
        config.prices.as_ref(),
        &mut |_, _| {},
    );
    let read = Dataset::load(&scratch);
    let _ = std::fs::remove_dir_all(&scratch_dir);
    outcome.map_err(|e| Failure::config(e.to_string()))?;
    let d = read.map_err(|e| Failure::config(e.to_string()))?;
    Ok(d.samples.iter().map(from_sample).collect())
}

/// Removes the scratch folders `.{domain}-generated.<pid>.<n>` that
/// runs killed before they finished left in `out_dir` (where `/proc` tells
/// whether their process is gone).
fn sweep_scratch(out_dir: &Path, domain: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(out_dir) else {
        return;
    };
    let prefix = format!(".{domain}-generated.");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('.') else {
            continue;
        };
        let gone = pid.parse::<u32>().is_ok_and(|pid| {
            pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists()
        });
        if gone && n.parse::<u64>().is_ok() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
