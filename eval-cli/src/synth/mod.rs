//! Synthetic test sets: questions, reference answers and their passages,
//! written by the judge model from a document corpus (`evals generate`).
//!
//! From a [`Corpus`] (a folder of `.txt`/`.md` files or an Unrag dataset's
//! documents, cut into chunks) and a [`Judge`], [`generate`] writes a
//! golden dataset (seed 002's schema, JSONL or CSV) of `count` samples:
//!
//! * **query types** ([`QueryType`]), seed 002's: factual, analytical,
//!   procedural, multi-hop across documents, and its edge cases (ambiguous,
//!   temporal, contradictory, unanswerable, out of scope), in the
//!   proportions of a [`Mix`];
//! * **difficulties** ([`Difficulty`]) easy, medium, hard, in their own mix;
//! * each sample carries `ground_truth`, the `contexts` it was written from,
//!   their `source_docs`, and metadata: `query_type`, `difficulty`,
//!   `edge_case`, `domain` (when given), `synthetic: true`,
//!   `generator_model`, `annotator: "llm"` (a person validates it, seed
//!   002's "LLM-assisted"), `confidence: "medium"`, `created_at`;
//! * passages are drawn from a seed: the same corpus, seed and options ask
//!   the same questions;
//! * a candidate that is a duplicate or near-duplicate (the measure `evals
//!   lint` flags, [`eval_datasets::similarity`]) of a sample already made, of
//!   the existing output, or of an `against` dataset is dropped and its slot
//!   drawn again;
//! * the output is rewritten atomically after every batch (a file that
//!   existed is backed up before its first rewrite), so an interrupted run
//!   keeps what it made; an existing output is read and generation goes on
//!   to the target count (**resume**), with the mix counted over the whole;
//! * a batch whose question fails (the judge unreachable or answering
//!   unusably after its retries and re-asks) ends the run with
//!   [`GenerateError::Failed`] (`SYNTHETIC_GENERATION_FAILED`), naming the
//!   cause; the samples made before it, and the others of its batch, are
//!   kept;
//! * tokens are counted ([`Usage`], the judge's own counting, cache hits
//!   included) and priced with the price table (`EVAL_PRICES`).
//!
//! The prompts and the methods they follow (ragas' knowledge-graph test set
//! generation, deepeval's Synthesizer evolutions) are described in the
//! guide's chapter on generating datasets (`docs/src/generate.md`).

mod answers;
mod corpus;
mod golden;
mod mix;
mod prompts;
mod select;

#[cfg(test)]
mod injection;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use eval_datasets::similarity::{Query, same_question};
use serde_json::{Map, Value};

pub use answers::{AnswerMode, Index, answer_blocking};
pub use corpus::{Chunk, Corpus, DEFAULT_CHUNK_WORDS};
pub use golden::{OutputFormat, Record};
pub use mix::{Difficulty, Mix, MixError, QueryType};

use eval_runtime::__cli::services::PriceTable;
use eval_runtime::CostError;
use eval_runtime::services::{Judge, ServiceError, Usage};

/// Default questions asked of the judge at once.
pub const DEFAULT_BATCH: usize = 4;
/// Default seed.
pub const DEFAULT_SEED: u64 = 42;

/// What to generate.
#[derive(Debug, Clone)]
pub struct Options {
    /// Samples the output is to hold in the end (those already in it count).
    pub count: usize,
    /// Query types.
    pub types: Mix<QueryType>,
    /// Difficulties.
    pub difficulty: Mix<Difficulty>,
    /// Seed of the passages drawn and of the order of the slots.
    pub seed: u64,
    /// Questions asked of the judge at once; the output is written after each batch.
    pub batch: usize,
    /// Start over: an existing output is backed up and replaced, not continued.
    pub fresh: bool,
    /// Questions of other datasets that generated ones must not repeat.
    pub against: Vec<String>,
    /// The largest file read (an existing output; `EVAL_MAX_DATASET_BYTES`).
    pub max_file_bytes: u64,
    /// Seed 002's knowledge domain (`technical-docs`), written to each
    /// sample's `metadata.domain`.
    pub domain: Option<String>,
}

impl Options {
    /// `count` samples of the default mixes, seed and batch.
    pub fn new(count: usize) -> Options {
        Options {
            count,
            types: Mix::default(),
            difficulty: Mix::default(),
            seed: DEFAULT_SEED,
            batch: DEFAULT_BATCH,
            fresh: false,
            against: Vec::new(),
            max_file_bytes: eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
            domain: None,
        }
    }
}

/// What a generation run did.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The output file.
    pub path: PathBuf,
    /// Samples the output held before (kept).
    pub existing: usize,
    /// Samples added by this run.
    pub added: usize,
    /// Samples the output holds now.
    pub total: usize,
    /// The target count.
    pub target: usize,
    /// Candidates dropped as duplicates or near-duplicates.
    pub dropped: usize,
    /// Samples per query type in the output.
    pub query_types: BTreeMap<String, usize>,
    /// Samples per difficulty in the output.
    pub difficulties: BTreeMap<String, usize>,
    /// The judge's calls and tokens in this run.
    #[serde(skip)]
    pub usage: Usage,
    /// The generating model.
    pub model: String,
    /// The cost of the tokens at the price table's prices (`None`: no
    /// table), or why it is unknown.
    #[serde(skip)]
    pub cost: Option<Result<f64, CostError>>,
    /// The backup of the output as it was before this run, when it existed.
    pub backup: Option<PathBuf>,
}

impl Outcome {
    /// Whether the output holds the target count.
    pub fn reached(&self) -> bool {
        self.total >= self.target
    }

    /// A few lines for a person: what was written, the mix, tokens and cost.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{}: {} samples ({} new, {} kept), target {}\n",
            self.path.display(),
            self.total,
            self.added,
            self.existing,
            self.target
        );
        let list = |m: &BTreeMap<String, usize>| {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!("  query types:  {}\n", list(&self.query_types)));
        out.push_str(&format!("  difficulty:   {}\n", list(&self.difficulties)));
        out.push_str(&format!("  near-duplicates dropped: {}\n", self.dropped));
        let u = &self.usage;
        out.push_str(&format!(
            "  judge {}: {} calls ({} retries, {} re-asks, {} cached), {} prompt + {} completion tokens\n",
            self.model, u.calls, u.retries, u.reasks, u.cache_hits, u.prompt_tokens, u.completion_tokens
        ));
        match &self.cost {
            None => out.push_str("  cost: not computed (set EVAL_PRICES to a price table)\n"),
            Some(Ok(c)) => out.push_str(&format!("  cost: ${c:.6}\n")),
            Some(Err(why)) => out.push_str(&format!("  cost: unknown ({why})\n")),
        }
        if let Some(b) = &self.backup {
            out.push_str(&format!("  backup: {}\n", b.display()));
        }
        out
    }
}

/// Why a generation run stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The corpus path does not exist (seed 002's `CORPUS_NOT_FOUND`).
    #[error("CORPUS_NOT_FOUND: {path}: {source}")]
    CorpusNotFound {
        /// The path given.
        path: String,
        /// What the file system said.
        source: std::io::Error,
    },
    /// A corpus file cannot be read.
    #[error("{path}: cannot read it: {source}")]
    CorpusRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: eval_datasets::files::ReadError,
    },
    /// A file of a corpus folder leads out of it (a symlink to a file or a
    /// folder elsewhere): refused, so nothing outside the folder is sent to
    /// the judge.
    #[error(
        "{}: refused: it {source}; every file of a corpus folder must be inside it (copy the file in rather than linking to it)",
        .path.display()
    )]
    CorpusOutside {
        /// The entry in the folder (the symlink).
        path: PathBuf,
        /// Where it leads, and the folder.
        source: eval_datasets::files::ContainmentError,
    },
    /// The corpus is larger than the limit for a whole corpus
    /// (`EVAL_MAX_DATASET_BYTES`), found from the files' sizes before any
    /// is read.
    #[error(
        "{corpus}: the corpus is over the limit of {limit} bytes (at least {size} bytes in {files} file(s)); raise EVAL_MAX_DATASET_BYTES or generate from a part of the corpus"
    )]
    CorpusTooLarge {
        /// The corpus, as given.
        corpus: String,
        /// Its bytes counted when the limit was passed (at least).
        size: u64,
        /// The files counted then.
        files: usize,
        /// The limit.
        limit: u64,
    },
    /// An Unrag dataset given as the corpus does not load.
    #[error(transparent)]
    CorpusDataset(eval_datasets::DatasetError),
    /// The corpus path is neither a folder, a text file nor an Unrag dataset.
    #[error(
        "{path}: a corpus is a folder of .txt/.md files, one such file, or an Unrag dataset (.json)"
    )]
    CorpusKind {
        /// The path given.
        path: String,
    },
    /// The corpus holds no text.
    #[error(
        "{corpus}: no text to generate questions from (no .txt or .md file with text, or no document with inline `content`)"
    )]
    CorpusEmpty {
        /// The corpus, as given.
        corpus: String,
    },
    /// A query type needs two documents and the corpus has one.
    #[error(
        "{corpus}: {kind} questions need passages of two documents; the corpus has one (leave them out with --mix or --types)"
    )]
    OneDocument {
        /// The corpus, as given.
        corpus: String,
        /// The query type.
        kind: &'static str,
    },
    /// `--count 0`.
    #[error("the count must be at least 1")]
    ZeroCount,
    /// The output's extension names no format generate writes.
    #[error("{path}: unsupported output format `.{extension}` (expected .jsonl or .csv)")]
    OutputFormat {
        /// The output path.
        path: PathBuf,
        /// Its extension.
        extension: String,
    },
    /// A dataset given with `--against` does not load.
    #[error(transparent)]
    Against(eval_datasets::DatasetError),
    /// The existing output does not load, so it cannot be resumed; it is
    /// left as it was.
    #[error("{0}; it was not changed")]
    Existing(eval_datasets::DatasetError),
    /// The records cannot be rendered as CSV.
    #[error("cannot write CSV: {0}")]
    Csv(#[from] eval_datasets::write::CsvError),
    /// The existing output cannot be backed up (so it is not replaced).
    #[error("cannot back up {path}: {source}")]
    Backup {
        /// The output.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output (or its folder) cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No async runtime could be started.
    #[error("cannot start an async runtime: {0}")]
    Runtime(std::io::Error),
    /// A batch failed: seed 002's `SYNTHETIC_GENERATION_FAILED`. What was
    /// made before it is in the output.
    #[error("SYNTHETIC_GENERATION_FAILED: a {kind} question could not be generated: {cause}; the {kept} samples made so far are kept in {path}", path = .outcome.path.display(), kept = .outcome.total)]
    Failed {
        /// The query type of the question that failed.
        kind: &'static str,
        /// Why (the judge's error).
        cause: ServiceError,
        /// What the run did up to then.
        outcome: Box<Outcome>,
    },
}

/// The questions of the dataset files `paths` (for [`Options::against`]),
/// each read up to `max_bytes`.
pub fn questions_of(paths: &[PathBuf], max_bytes: u64) -> Result<Vec<String>, GenerateError> {
    let mut out = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        let data = eval_datasets::Dataset::load_limited(path, &shown, max_bytes)
            .map_err(GenerateError::Against)?;
        out.extend(data.samples.iter().map(|s| s.input.display_text()));
    }
    Ok(out)
}

/// `created_at`: now, as `YYYY-MM-DDTHH:MM:SSZ`.
fn now_rfc3339() -> String {
    let s = eval_datasets::files::utc_stamp(std::time::SystemTime::now());
    // `YYYYMMDDTHHMMSSZ`
    if s.len() == 16 {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &s[0..4],
            &s[4..6],
            &s[6..8],
            &s[9..11],
            &s[11..13],
            &s[13..15]
        )
    } else {
        s
    }
}

/// One slot being filled: its type, difficulty and passages.
struct Ask<'a> {
    kind: QueryType,
    difficulty: Difficulty,
    passages: Vec<&'a Chunk>,
}

/// Generates into `output` until it holds `options.count` samples (see the
/// [module docs](self)). `prices` prices the judge's tokens; `progress` is
/// told the samples the output holds and the target after each batch.
pub async fn generate(
    corpus: &Corpus,
    output: &Path,
    options: &Options,
    judge: &Judge,
    prices: Option<&PriceTable>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, GenerateError> {
    let format = OutputFormat::of(output)?;
    if options.count == 0 {
        return Err(GenerateError::ZeroCount);
    }
    check_documents(corpus, options)?;
    // Held to the end: runs into one output take turns (see golden::lock).
    let _lock = golden::lock(output)?;
    let mut records = if output.exists() && !options.fresh {
        golden::read(output, options.max_file_bytes)?
    } else {
        Vec::new()
    };
    let existing = records.len();
    let mut outcome = Outcome {
        path: output.to_path_buf(),
        existing,
        added: 0,
        total: existing,
        target: options.count,
        dropped: 0,
        query_types: BTreeMap::new(),
        difficulties: BTreeMap::new(),
        usage: Usage::default(),
        model: judge.model().to_string(),
        cost: None,
        backup: None,
    };
    let mut seen: Vec<Query> = records.iter().map(|r| Query::new(&r.query)).collect();
    seen.extend(options.against.iter().map(|q| Query::new(q)));
    let needed = options.count.saturating_sub(existing);
    let mut queue = slots(&records, options, needed);
    // Resuming draws on from where the run before stopped.
    let mut picker = select::Picker::new(corpus, options.seed.wrapping_add(existing as u64));
    let mut next_id = next_id(&records);
    let created_at = now_rfc3339();
    // A slot dropped as a duplicate is drawn again, within bounds.
    let mut attempts_left = needed * 3 + 10;
    let mut backed_up = false;
    let batch = options.batch.max(1);
    let mut write = |records: &[Record], outcome: &mut Outcome| -> Result<(), GenerateError> {
        if let Some(b) = golden::write(output, records, format, &mut backed_up)? {
            outcome.backup = Some(b);
        }
        Ok(())
    };
    while !queue.is_empty() && attempts_left > 0 {
        let take = batch.min(queue.len()).min(attempts_left);
        attempts_left -= take;
        let mut asks = Vec::with_capacity(take);
        for (kind, difficulty) in queue.drain(..take) {
            let passages = picker.passages(kind)?;
            asks.push(Ask {
                kind,
                difficulty,
                passages,
            });
        }
        let questions = asks.iter().map(|ask| {
            let avoid = avoid_list(&records, &ask.passages);
            let prompt = prompts::prompt(ask.kind, ask.difficulty, &ask.passages, &avoid);
            async move {
                let mut usage = Usage::default();
                let answer = judge
                    .ask_checked(&prompt, &mut usage, &|v: &serde_json::Value| {
                        prompts::parse(v).map(|_| ()).map_err(|e| e.to_string())
                    })
                    .await;
                (answer, usage)
            }
        });
        let answers = futures_util::future::join_all(questions).await;
        let mut failure = None;
        for (ask, (answer, usage)) in asks.into_iter().zip(answers) {
            outcome.usage.add(usage);
            let value = match answer {
                Ok(v) => v,
                Err(cause) => {
                    failure.get_or_insert((ask.kind.name(), cause));
                    continue;
                }
            };
            let Ok((query, ground_truth)) = prompts::parse(&value) else {
                continue; // checked by the judge already
            };
            let candidate = Query::new(&query);
            if seen.iter().any(|q| same_question(q, &candidate).is_some()) {
                outcome.dropped += 1;
                queue.push_back((ask.kind, ask.difficulty));
                continue;
            }
            seen.push(candidate);
            let mut r = record(
                &mut next_id,
                &ask,
                query,
                ground_truth,
                judge.model(),
                &created_at,
                &records,
            );
            if let Some(domain) = &options.domain {
                r.metadata
                    .insert("domain".into(), Value::from(domain.clone()));
            }
            records.push(r);
            outcome.added += 1;
        }
        outcome.total = records.len();
        write(&records, &mut outcome)?;
        progress(outcome.total, outcome.target);
        if let Some((kind, cause)) = failure {
            finish(&mut outcome, &records, prices);
            return Err(GenerateError::Failed {
                kind,
                cause,
                outcome: Box::new(outcome),
            });
        }
    }
    finish(&mut outcome, &records, prices);
    Ok(outcome)
}

/// A type of question over two documents needs a corpus of two or more.
fn check_documents(corpus: &Corpus, options: &Options) -> Result<(), GenerateError> {
    let two_docs = QueryType::ALL
        .into_iter()
        .filter(|t| {
            matches!(
                t,
                QueryType::MultiHop | QueryType::Ambiguous | QueryType::Contradictory
            )
        })
        .find(|t| options.types.weights().iter().any(|(k, _)| k == t));
    let documents: std::collections::BTreeSet<&str> =
        corpus.chunks.iter().map(|c| c.doc.as_str()).collect();
    if let Some(kind) = two_docs
        && documents.len() < 2
    {
        return Err(GenerateError::OneDocument {
            corpus: corpus.source.clone(),
            kind: kind.name(),
        });
    }
    Ok(())
}

/// The (type, difficulty) slots still to fill: `needed` more, spread so
/// that with `records` the output holds the asked shares.
fn slots(
    records: &[Record],
    options: &Options,
    needed: usize,
) -> std::collections::VecDeque<(QueryType, Difficulty)> {
    let count = |key: &str| -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for r in records {
            if let Some(v) = r.meta(key) {
                *m.entry(v.to_string()).or_insert(0) += 1;
            }
        }
        m
    };
    let have_types: BTreeMap<QueryType, usize> = count("query_type")
        .into_iter()
        .filter_map(|(k, n)| QueryType::parse(&k).map(|t| (t, n)))
        .collect();
    let have_difficulty: BTreeMap<Difficulty, usize> = count("difficulty")
        .into_iter()
        .filter_map(|(k, n)| Difficulty::parse(&k).map(|d| (d, n)))
        .collect();
    let types = select::fill(&options.types, options.count, &have_types, needed);
    let difficulties = select::fill(&options.difficulty, options.count, &have_difficulty, needed);
    select::slots(types, difficulties, options.seed).into()
}

/// Fills the outcome's distributions and cost.
fn finish(outcome: &mut Outcome, records: &[Record], prices: Option<&PriceTable>) {
    outcome.total = records.len();
    for r in records {
        if let Some(t) = r.meta("query_type") {
            *outcome.query_types.entry(t.to_string()).or_insert(0) += 1;
        }
        if let Some(d) = r.meta("difficulty") {
            *outcome.difficulties.entry(d.to_string()).or_insert(0) += 1;
        }
    }
    outcome.cost = prices.map(|t| t.cost("judge", Some(&outcome.model), &outcome.usage));
}

/// [`generate`] on a runtime of its own (the calling thread must not be
/// inside one).
pub fn generate_blocking(
    corpus: &Corpus,
    output: &Path,
    options: &Options,
    judge: &Judge,
    prices: Option<&PriceTable>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, GenerateError> {
    let runtime = eval_runtime::__cli::local_runtime().map_err(GenerateError::Runtime)?;
    runtime.block_on(generate(corpus, output, options, judge, prices, progress))
}

/// Questions already made from any of `passages` (the most recent eight),
/// shown to the judge so it writes a different one.
fn avoid_list(records: &[Record], passages: &[&Chunk]) -> Vec<String> {
    let mut out: Vec<String> = records
        .iter()
        .rev()
        .filter(|r| passages.iter().any(|p| r.contexts.contains(&p.text)))
        .take(8)
        .map(|r| r.query.clone())
        .collect();
    out.reverse();
    out
}

/// The first free `gen-NNNN` number.
fn next_id(records: &[Record]) -> usize {
    records
        .iter()
        .filter_map(|r| r.id.strip_prefix("gen-")?.parse::<usize>().ok())
        .max()
        .unwrap_or(0)
        + 1
}

fn record(
    next_id: &mut usize,
    ask: &Ask<'_>,
    query: String,
    ground_truth: String,
    model: &str,
    created_at: &str,
    records: &[Record],
) -> Record {
    let mut id = format!("gen-{:04}", *next_id);
    while records.iter().any(|r| r.id == id) {
        *next_id += 1;
        id = format!("gen-{:04}", *next_id);
    }
    *next_id += 1;
    let mut source_docs: Vec<String> = Vec::new();
    for p in &ask.passages {
        if !source_docs.contains(&p.doc) {
            source_docs.push(p.doc.clone());
        }
    }
    let mut metadata = Map::new();
    metadata.insert("query_type".into(), Value::from(ask.kind.name()));
    metadata.insert("difficulty".into(), Value::from(ask.difficulty.name()));
    metadata.insert(
        "edge_case".into(),
        ask.kind.edge_case().map_or(Value::Null, Value::from),
    );
    metadata.insert("synthetic".into(), Value::Bool(true));
    metadata.insert("generator_model".into(), Value::from(model));
    metadata.insert("annotator".into(), Value::from("llm"));
    // Seed 002's confidence levels: an LLM's answer, not yet reviewed by
    // a person, is medium.
    metadata.insert("confidence".into(), Value::from("medium"));
    metadata.insert("created_at".into(), Value::from(created_at));
    metadata.insert("version".into(), Value::from(1));
    Record {
        id,
        query,
        ground_truth,
        contexts: ask.passages.iter().map(|p| p.text.clone()).collect(),
        source_docs,
        metadata,
        other: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_at_is_rfc3339() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert_eq!((&t[4..5], &t[10..11], &t[19..]), ("-", "T", "Z"));
    }
}
