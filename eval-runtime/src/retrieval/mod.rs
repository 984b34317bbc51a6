//! Retrieval evaluation (Unrag datasets, seed 004): a [`Retriever`] to
//! ingest into and search, and [`RetrieverAgent`], which makes each query of
//! a retrieval dataset a sample like any other — one test per query in the
//! attribute and the harness, scored with the rank metrics (`recall_at_k`,
//! `precision_at_k`, `mrr_at_k`, `hit_at_k`, `ndcg_at_k`; see
//! [`eval_datasets::retrieval`]).
//!
//! ```ignore
//! // tests/evals.rs (the dataset file must exist: the attribute reads it at compile time)
//! use eval_runtime::prelude::*;
//! use eval_runtime::retrieval::{HttpRetriever, RetrieverAgent};
//!
//! fn agent() -> &'static RetrieverAgent {
//!     static AGENT: std::sync::OnceLock<RetrieverAgent> = std::sync::OnceLock::new();
//!     AGENT.get_or_init(|| RetrieverAgent::new(HttpRetriever::from_env().unwrap()))
//! }
//!
//! #[eval_dataset("evals/support.json", metrics(recall_at_k >= 0.75, mrr_at_k >= 0.5))]
//! async fn support(sample: &Sample) -> eval_runtime::Result<Response> {
//!     agent().search(sample).await
//! }
//! # fn main() {}
//! ```
//!
//! Ingest follows seed 004: before the first query of a dataset is searched,
//! everything under its `scopePrefix` is deleted and the dataset's documents
//! are ingested (once per dataset and process). A prefix that does not start
//! with `eval:` is refused unless allowed ([`RetrieverAgent::allow_custom_prefix`],
//! the attribute's `allow_custom_prefix = true`, the harness's
//! `.allow_custom_prefix(true)`, the CLI's `--allow-custom-prefix`);
//! [`RetrieverAgent::no_ingest`] searches what is already indexed. Documents
//! given by `loaderRef` are loaded through a hook: files under a directory
//! ([`RetrieverAgent::loader_dir`], the CLI's `--loader-dir`), or one of
//! your own ([`RetrieverAgent::loader`], [`RetrieverAgent::try_loader`]); a
//! ref it cannot resolve is an error naming it and saying why
//! ([`LoadError`]: outside the directory after resolving `..`, an absolute
//! path elsewhere, a symlink leading out, missing, not a regular file, too
//! large, not UTF-8).
//!
//! # The HTTP contract ([`HttpRetriever`], `EVAL_RETRIEVER_URL`)
//!
//! All `POST` with JSON bodies, relative to the base URL:
//!
//! | path | body | answer |
//! |---|---|---|
//! | `delete` | `{"prefix": "eval:support:"}` | `{"deleted": 3}` |
//! | `ingest` | `{"documents": [{"sourceId", "content", "metadata"}]}` | `{"ingested": 3}` |
//! | `search` | `{"query", "scopePrefix", "topK"}` | `{"results": [{"sourceId", "score", "content"}]}`, best first |
//! | `rerank` (optional) | `{"query", "topK", "candidates": [{"sourceId", "content"}]}` | `{"results": [...]}` |
//!
//! The demo agent serves this contract under `/retrieval/`. The `rerank`
//! step may instead go to a rerank service speaking Cohere's Rerank API, as
//! Unrag's reranker battery does ([`HttpRetriever::cohere_rerank`],
//! `EVAL_RERANK_URL`): `{"model", "query", "documents", "top_n"}` answered
//! `{"results": [{"index", "relevance_score"}]}`.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use eval_datasets::Sample;
use eval_datasets::retrieval::{Mode, RetrievalDataset};
use serde_json::Value;

use crate::agent::{Agent, Response};
use crate::config::Config;
#[cfg(feature = "http")]
mod cohere;
#[cfg(feature = "http")]
mod http;

pub use crate::model::RetrieverError;
use crate::model::{AgentError, Error, Result, SharedError};
#[cfg(feature = "http")]
pub use http::HttpRetriever;

/// A boxed future of a retriever call.
pub type RetrieverFuture<'a, T> =
    Pin<Box<dyn Future<Output = std::result::Result<T, RetrieverError>> + Send + 'a>>;

/// A document to ingest.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestDocument {
    /// `sourceId`.
    pub source_id: String,
    /// The text.
    pub content: String,
    /// Free metadata.
    pub metadata: serde_json::Map<String, Value>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document it came from.
    pub source_id: String,
    /// The chunk's text, when the retriever returns it (for reranking).
    pub content: Option<String>,
    /// The retriever's score.
    pub score: Option<f64>,
}

/// A search index the evaluation ingests into and queries.
pub trait Retriever: Send + Sync + 'static {
    /// Deletes every document whose `sourceId` starts with `prefix`.
    fn delete_prefix<'a>(&'a self, prefix: &'a str) -> RetrieverFuture<'a, u64>;
    /// Ingests documents.
    fn ingest<'a>(&'a self, documents: &'a [IngestDocument]) -> RetrieverFuture<'a, ()>;
    /// The best `k` chunks for `query` among documents under `prefix`, best first.
    fn search<'a>(
        &'a self,
        query: &'a str,
        prefix: &'a str,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>>;
    /// For an index other processes share (a server): its identity, so that
    /// under nextest one process ingests for the whole run. `None` (the
    /// default) for an index of this process alone.
    fn shared_id(&self) -> Option<String> {
        None
    }
    /// Reorders `candidates` for `query`, best first, keeping `k`. The default
    /// has no reranker and says so.
    fn rerank<'a>(
        &'a self,
        query: &'a str,
        candidates: Vec<Hit>,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        let _ = (query, candidates, k);
        Box::pin(async { Err(RetrieverError::NoReranker) })
    }
}

/// An in-process [`Retriever`]: documents in memory, ranked by how many of
/// the query's words they contain (ties by `sourceId`). For tests and demos.
#[derive(Debug, Default)]
pub struct MemoryRetriever {
    docs: Mutex<std::collections::BTreeMap<String, String>>,
}

impl MemoryRetriever {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of documents indexed.
    pub fn len(&self) -> usize {
        self.docs.lock().map(|d| d.len()).unwrap_or(0)
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Lower-case words of at least 3 letters.
fn words(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

impl Retriever for MemoryRetriever {
    fn delete_prefix<'a>(&'a self, prefix: &'a str) -> RetrieverFuture<'a, u64> {
        Box::pin(async move {
            let mut docs = self
                .docs
                .lock()
                .map_err(|_| RetrieverError::Failed("index lock poisoned".into()))?;
            let before = docs.len();
            docs.retain(|id, _| !id.starts_with(prefix));
            Ok((before - docs.len()) as u64)
        })
    }

    fn ingest<'a>(&'a self, documents: &'a [IngestDocument]) -> RetrieverFuture<'a, ()> {
        Box::pin(async move {
            let mut docs = self
                .docs
                .lock()
                .map_err(|_| RetrieverError::Failed("index lock poisoned".into()))?;
            for d in documents {
                docs.insert(d.source_id.clone(), d.content.clone());
            }
            Ok(())
        })
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        prefix: &'a str,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        Box::pin(async move {
            let docs = self
                .docs
                .lock()
                .map_err(|_| RetrieverError::Failed("index lock poisoned".into()))?;
            let q = words(query);
            let mut scored: Vec<(usize, &String, &String)> = docs
                .iter()
                .filter(|(id, _)| id.starts_with(prefix))
                .map(|(id, text)| (words(text).intersection(&q).count(), id, text))
                .filter(|(n, ..)| *n > 0)
                .collect();
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
            Ok(scored
                .into_iter()
                .take(k)
                .map(|(n, id, text)| Hit {
                    source_id: id.clone(),
                    content: Some(text.clone()),
                    score: Some(n as f64),
                })
                .collect())
        })
    }
}

/// Loads a document's text from its `loaderRef`; `None` when it cannot.
#[doc(hidden)]
pub type Loader = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Loads a document's text from its `loaderRef`, or says why it cannot.
type Resolve = Arc<dyn Fn(&str) -> std::result::Result<String, LoadError> + Send + Sync>;

/// Why a `loaderRef` was not loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[doc(hidden)]
pub enum LoadError {
    /// An absolute path outside the loader directory.
    #[error("{} is an absolute path outside the loader directory {}", .path.display(), .dir.display())]
    Absolute {
        /// The path.
        path: PathBuf,
        /// The loader directory.
        dir: PathBuf,
    },
    /// A relative path that climbs out of the loader directory by `..`.
    #[error("{} resolves (after `..`) to {}, outside the loader directory {}", .path.display(), .resolved.display(), .dir.display())]
    DotDot {
        /// The path as written, joined to the directory.
        path: PathBuf,
        /// Where it leads once `.` and `..` are resolved.
        resolved: PathBuf,
        /// The loader directory.
        dir: PathBuf,
    },
    /// The path stays inside as written, but a symlink on it (the file, or
    /// a directory on the way) leads out.
    #[error("{} leads through a symlink to {}, outside the loader directory {}", .path.display(), .resolved.display(), .dir.display())]
    Symlink {
        /// The path.
        path: PathBuf,
        /// The real path it leads to.
        resolved: PathBuf,
        /// The loader directory.
        dir: PathBuf,
    },
    /// Nothing is there (or a symlink leads nowhere).
    #[error("{} does not exist ({source})", .path.display())]
    Missing {
        /// The path.
        path: PathBuf,
        /// Why it could not be resolved.
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file (a directory, a FIFO, a device...).
    #[error("{} is not a regular file ({kind})", .path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        kind: String,
    },
    /// Larger than `EVAL_MAX_DATASET_BYTES`.
    #[error("{} is too large: {size} bytes, over the limit of {limit} bytes (EVAL_MAX_DATASET_BYTES)", .path.display())]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size (at least).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// It could not be read.
    #[error("{} cannot be read: {source}", .path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Its bytes are not UTF-8 text.
    #[error("{} is not UTF-8 text (invalid byte at offset {offset})", .path.display())]
    NotText {
        /// The path.
        path: PathBuf,
        /// Where the first byte that is not UTF-8 is.
        offset: usize,
    },
    /// Another reason: your own hook's ([`RetrieverAgent::loader`] found
    /// nothing, [`RetrieverAgent::try_loader`] failed), or a refusal of a
    /// kind this version does not name.
    #[error("{0}")]
    Other(String),
}

/// The text of the file `reference` names under `dir`: inside it (after
/// `..` and every symlink are resolved) unless `anywhere`, a regular file
/// of at most `limit` bytes, UTF-8. Each refusal says why, with the path.
#[doc(hidden)]
pub fn load_from_dir(
    dir: &Path,
    reference: &str,
    anywhere: bool,
    limit: u64,
) -> std::result::Result<String, LoadError> {
    use eval_datasets::files::{ContainmentError, ReadError};
    let written = Path::new(reference);
    let path = dir.join(written);
    let path = if anywhere {
        path
    } else {
        match eval_datasets::files::contained(dir, &path) {
            Ok(real) => real,
            Err(ContainmentError::Outside {
                resolved,
                root,
                symlink: true,
            }) => {
                return Err(LoadError::Symlink {
                    path,
                    resolved,
                    dir: root,
                });
            }
            Err(ContainmentError::Outside { root, .. }) if written.is_absolute() => {
                return Err(LoadError::Absolute { path, dir: root });
            }
            Err(ContainmentError::Outside { resolved, root, .. }) => {
                return Err(LoadError::DotDot {
                    path,
                    resolved,
                    dir: root,
                });
            }
            Err(ContainmentError::Missing { resolved, source }) => {
                return Err(LoadError::Missing {
                    path: resolved,
                    source,
                });
            }
            Err(other) => return Err(LoadError::Other(other.to_string())),
        }
    };
    eval_datasets::files::read_text(&path, limit).map_err(|e| match e {
        ReadError::NotAFile { kind } => LoadError::NotAFile {
            path: path.clone(),
            kind: kind.to_string(),
        },
        ReadError::TooLarge { size, limit } => LoadError::TooLarge {
            path: path.clone(),
            size,
            limit,
        },
        ReadError::Io(source) if source.kind() == std::io::ErrorKind::NotFound => {
            LoadError::Missing {
                path: path.clone(),
                source,
            }
        }
        ReadError::Io(source) => LoadError::Read {
            path: path.clone(),
            source,
        },
        ReadError::NotUtf8 { offset } => LoadError::NotText {
            offset,
            path: path.clone(),
        },
        other => LoadError::Other(format!("{}: {other}", path.display())),
    })
}

/// The most bytes an ingest marker (a run's id) is read from.
const MARKER_MAX_BYTES: u64 = 4096;

/// The outcome of one dataset's ingest, computed once.
type IngestOnce = Arc<tokio::sync::OnceCell<std::result::Result<(), RetrieverError>>>;

/// Makes a [`Retriever`] the agent of a retrieval dataset's queries. See the
/// [module docs](self).
pub struct RetrieverAgent {
    retriever: Arc<dyn Retriever>,
    allow_custom_prefix: bool,
    no_ingest: bool,
    loader: Option<Resolve>,
    /// What an unresolved `loaderRef` says when no loader is set.
    no_loader_says: Option<String>,
    base_dir: PathBuf,
    /// The largest dataset file read (`EVAL_MAX_DATASET_BYTES`).
    max_file_bytes: u64,
    /// Under nextest: the run's id and where its processes agree on who
    /// ingests (see [`ingest_file`](Self::ingest_file)).
    nextest_ingest: Option<(String, PathBuf)>,
    /// Per dataset file: the outcome of its ingest (run once).
    ingested: Mutex<HashMap<String, IngestOnce>>,
    /// Dataset files whose ingest was started.
    started: Mutex<std::collections::HashSet<String>>,
}

impl RetrieverAgent {
    /// An agent searching `retriever`, reading dataset files as `config`
    /// says (relative to its base directory, at most
    /// `EVAL_MAX_DATASET_BYTES`). `RetrieverAgent::new` takes the process's
    /// settings.
    pub fn with_config(retriever: impl Retriever, config: &Config) -> Self {
        RetrieverAgent {
            retriever: Arc::new(retriever),
            allow_custom_prefix: false,
            no_ingest: false,
            loader: None,
            no_loader_says: None,
            base_dir: config.base_dir(),
            max_file_bytes: config.max_dataset_bytes,
            nextest_ingest: config
                .nextest_run_id
                .clone()
                .map(|run| (run, crate::config::results_dir(config).join("ingest"))),
            ingested: Mutex::new(HashMap::new()),
            started: Mutex::new(std::collections::HashSet::new()),
        }
    }

    /// Allows a scope prefix that does not start with `eval:`.
    pub fn allow_custom_prefix(mut self, on: bool) -> Self {
        self.allow_custom_prefix = on;
        self
    }

    /// Searches what is already indexed: no delete, no ingest.
    pub fn no_ingest(mut self, on: bool) -> Self {
        self.no_ingest = on;
        self
    }

    /// Loads documents given by `loaderRef` with `f` (`None`: it cannot;
    /// [`try_loader`](Self::try_loader) can say why).
    pub fn loader(mut self, f: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.loader = Some(Arc::new(move |r: &str| {
            f(r).ok_or_else(|| LoadError::Other("the loader hook found nothing for it".into()))
        }));
        self
    }

    /// Loads documents given by `loaderRef` with `f`, whose error says why
    /// a ref cannot be loaded (it is named in the ingest's error).
    pub fn try_loader<E: std::fmt::Display>(
        mut self,
        f: impl Fn(&str) -> std::result::Result<String, E> + Send + Sync + 'static,
    ) -> Self {
        self.loader = Some(Arc::new(move |r: &str| {
            f(r).map_err(|e| LoadError::Other(e.to_string()))
        }));
        self
    }

    /// Loads each `loaderRef` as a file relative to `dir` (the CLI's
    /// `--loader-dir`) with [`load_from_dir`]: it must stay inside `dir`
    /// (no `..`, absolute path or symlink leading out) unless `anywhere`
    /// (`--allow-outside`), be a regular file within the dataset size limit
    /// (`EVAL_MAX_DATASET_BYTES`), and be UTF-8. A refusal says which.
    pub fn loader_dir(mut self, dir: impl Into<PathBuf>, anywhere: bool) -> Self {
        let (dir, limit) = (dir.into(), self.max_file_bytes);
        self.loader = Some(Arc::new(move |r: &str| {
            load_from_dir(&dir, r, anywhere, limit)
        }));
        self
    }

    /// What the error of a `loaderRef` that cannot be loaded says to do
    /// when no loader is set (the `evals` command: its `--loader-dir`);
    /// by default, the Rust API that sets one.
    pub fn no_loader_says(mut self, how: impl Into<String>) -> Self {
        self.no_loader_says = Some(how.into());
        self
    }

    /// `e`, saying how to set a loader as [`no_loader_says`](Self::no_loader_says) chose.
    fn loader_hint(&self, e: RetrieverError) -> RetrieverError {
        match (e, &self.no_loader_says) {
            (
                RetrieverError::Unresolved {
                    refs,
                    no_loader: Some(_),
                },
                Some(how),
            ) => RetrieverError::Unresolved {
                refs,
                no_loader: Some(how.clone()),
            },
            (e, _) => e,
        }
    }

    /// Where dataset paths are relative to (default `CARGO_MANIFEST_DIR`, else the working directory).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = dir.into();
        self
    }

    /// Searches for one query (ingesting its dataset first, once).
    pub async fn search(&self, sample: &Sample) -> Result<Response> {
        self.respond_to(sample)
            .await
            .map_err(|e| Error::Agent(AgentError::Retriever(e)))
    }

    async fn respond_to(&self, sample: &Sample) -> std::result::Result<Response, RetrieverError> {
        let Some(q) = &sample.retrieval else {
            return Err(RetrieverError::NotAQuery(sample.id.clone()));
        };
        let prefix = q.scope_prefix.as_str();
        let allowed = self.allow_custom_prefix || q.scope_is_allowed();
        if !allowed {
            return Err(RetrieverError::UnsafePrefix(prefix.to_string()));
        }
        if !self.no_ingest {
            self.ingest_once(&sample.source.file, allowed).await?;
        }
        let k = q.top_k;
        let query = sample.input.last();
        let hits = if q.mode == Mode::RetrieveRerank {
            let n = q.rerank_top_k.max(k);
            let candidates = self.retriever.search(query, prefix, n).await?;
            self.retriever.rerank(query, candidates, k).await?
        } else {
            self.retriever.search(query, prefix, k).await?
        };
        let ids: Vec<String> = hits.iter().map(|h| h.source_id.clone()).collect();
        let text: Vec<String> = hits.iter().filter_map(|h| h.content.clone()).collect();
        let mut response = Response::new(ids.join("\n"))
            .with_retrieved(ids)
            .with_context(text);
        // The scores, when every hit has one (the order is what is ranked).
        response.retrieved_scores = hits.iter().filter_map(|h| h.score).collect();
        if response.retrieved_scores.len() != hits.len() {
            response.retrieved_scores.clear();
        }
        Ok(response)
    }

    /// Deletes the dataset's scope and ingests its documents, once per file.
    async fn ingest_once(
        &self,
        file: &str,
        allowed: bool,
    ) -> std::result::Result<(), RetrieverError> {
        let cell = {
            let mut map = self.ingested.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(file.to_string()).or_default().clone()
        };
        cell.get_or_init(|| async move {
            // The first ingest is cut off when its query's sample timeout
            // runs out; starting again would delete the scope once per query.
            let first = self
                .started
                .lock()
                .map(|mut s| s.insert(file.to_string()))
                .unwrap_or(true);
            if !first {
                return Err(RetrieverError::IngestCutOff(file.to_string()));
            }
            self.ingest_file(file, allowed).await
        })
        .await
        .clone()
    }

    async fn ingest_file(
        &self,
        file: &str,
        allowed: bool,
    ) -> std::result::Result<(), RetrieverError> {
        let base = &self.base_dir;
        let path = if std::path::Path::new(file).is_absolute() {
            PathBuf::from(file)
        } else {
            base.join(file)
        };
        let dataset_error =
            |e: eval_datasets::DatasetError| RetrieverError::Dataset(SharedError::new(e));
        let io = |doing: String| {
            move |e: std::io::Error| RetrieverError::Io {
                doing,
                source: SharedError::new(e),
            }
        };
        let bytes = eval_datasets::files::read_checked(&path, self.max_file_bytes)
            .map_err(|e| dataset_error(eval_datasets::DatasetError::read(file, e)))?;
        let dataset = RetrievalDataset::from_bytes(file, &bytes).map_err(dataset_error)?;
        // Under nextest every test is its own process: the first to get here
        // ingests for the whole run, the others wait for it and skip it.
        let (Some((run, dir)), Some(index)) = (&self.nextest_ingest, self.retriever.shared_id())
        else {
            return ingest_with(&*self.retriever, &dataset, allowed, self.loader.as_ref())
                .await
                .map_err(|e| self.loader_hint(e));
        };
        std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
        let key = format!(
            "{:016x}",
            eval_datasets::hash::fnv1a64(&[
                index.as_bytes(),
                b"\0",
                file.as_bytes(),
                b"\0",
                &bytes
            ])
        );
        let _lock = eval_datasets::files::lock(&dir.join(format!("{key}.lock")))
            .map_err(io(format!("take the ingest lock in {}", dir.display())))?;
        let marker = dir.join(format!("{key}.done"));
        if eval_datasets::files::read_text(&marker, MARKER_MAX_BYTES).is_ok_and(|done| done == *run)
        {
            return Ok(());
        }
        ingest_with(&*self.retriever, &dataset, allowed, self.loader.as_ref())
            .await
            .map_err(|e| self.loader_hint(e))?;
        eval_datasets::files::write_atomically(&marker, run.as_bytes())
            .map_err(io(format!("write {}", marker.display())))
    }
}

/// How a loader is set, as an unresolved `loaderRef`'s error says it in
/// the library ([`RetrieverAgent::no_loader_says`] changes it).
const NO_LOADER: &str = "set one with RetrieverAgent::loader, try_loader or loader_dir";

/// Seed 004's ingest: refuse a prefix other than `eval:<name>` unless
/// allowed (an empty one always), resolve
/// every `loaderRef` (all unresolved refs are named), delete everything under
/// the prefix, ingest the documents.
#[doc(hidden)]
pub async fn ingest(
    retriever: &dyn Retriever,
    dataset: &RetrievalDataset,
    allow_custom_prefix: bool,
    loader: Option<&Loader>,
) -> std::result::Result<(), RetrieverError> {
    let resolve: Option<Resolve> = loader.map(|l| {
        let l = l.clone();
        Arc::new(move |r: &str| {
            l(r).ok_or_else(|| LoadError::Other("the loader hook found nothing for it".into()))
        }) as Resolve
    });
    ingest_with(retriever, dataset, allow_custom_prefix, resolve.as_ref()).await
}

/// [`ingest`] with a loader that says why a ref cannot be loaded.
async fn ingest_with(
    retriever: &dyn Retriever,
    dataset: &RetrievalDataset,
    allow_custom_prefix: bool,
    loader: Option<&Resolve>,
) -> std::result::Result<(), RetrieverError> {
    if dataset.check_scope(allow_custom_prefix).is_err() {
        return Err(RetrieverError::UnsafePrefix(dataset.scope_prefix.clone()));
    }
    if dataset.documents.is_empty() {
        return Ok(());
    }
    let mut docs = Vec::with_capacity(dataset.documents.len());
    let mut unresolved = Vec::new();
    for d in &dataset.documents {
        let content = match (&d.content, &d.loader_ref) {
            (Some(c), _) => Some(c.clone()),
            (None, Some(r)) => match loader.map(|l| l(r)) {
                Some(Ok(text)) => Some(text),
                Some(Err(why)) => {
                    unresolved.push(format!(
                        "{}:{}: loaderRef `{r}` (document `{}`): {why}",
                        dataset.path, d.line, d.source_id
                    ));
                    None
                }
                None => {
                    unresolved.push(format!(
                        "{}:{}: loaderRef `{r}` (document `{}`)",
                        dataset.path, d.line, d.source_id
                    ));
                    None
                }
            },
            (None, None) => None,
        };
        if let Some(content) = content {
            docs.push(IngestDocument {
                source_id: d.source_id.clone(),
                content,
                metadata: d.metadata.clone(),
            });
        }
    }
    if !unresolved.is_empty() {
        return Err(RetrieverError::Unresolved {
            refs: unresolved,
            no_loader: loader.is_none().then(|| NO_LOADER.to_string()),
        });
    }
    retriever.delete_prefix(&dataset.scope_prefix).await?;
    retriever.ingest(&docs).await
}

impl Agent for RetrieverAgent {
    fn respond<'a>(
        &'a self,
        sample: &'a Sample,
    ) -> crate::agent::BoxFuture<'a, std::result::Result<Response, AgentError>> {
        Box::pin(async move { self.respond_to(sample).await.map_err(AgentError::Retriever) })
    }
}
