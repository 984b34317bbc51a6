//! The documents questions are generated from, cut into chunks, and how
//! chunks relate to each other.
//!
//! A corpus is a folder of `.txt` / `.md` files (read recursively, in path
//! order, hidden entries skipped), one such file, or an Unrag retrieval
//! dataset (`.json`) whose documents have inline `content`. Each document is
//! cut at blank lines into paragraphs, and consecutive paragraphs are joined
//! into chunks of at most [`DEFAULT_CHUNK_WORDS`] words (a longer paragraph
//! is cut between sentences).
//!
//! Relations between chunks stand in for the edges of ragas' knowledge
//! graph (its test set generation links nodes that share entities and
//! keyphrases): two chunks are related by the content words they share.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use eval_datasets::files::ContainmentError;

use super::GenerateError;
use eval_runtime::__cli::sentences;

/// Words per chunk, at most (a single longer sentence is kept whole).
pub const DEFAULT_CHUNK_WORDS: usize = 200;

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The document it comes from (its path under the corpus folder, with
    /// `/`, or its Unrag `sourceId`).
    pub doc: String,
    /// The text, whitespace as in the document.
    pub text: String,
    /// Its content words (lower case, 4+ letters, common words left out),
    /// each as a 64-bit hash, sorted and once: 8 bytes a word, whatever
    /// its length, so a large corpus's chunks stay about the size of its text.
    words: Box<[u64]>,
}

impl Chunk {
    fn new(doc: &str, mut text: String) -> Chunk {
        text.shrink_to_fit();
        Chunk {
            doc: doc.to_string(),
            words: content_words(&text),
            text,
        }
    }

    /// Content words shared with `other`.
    pub fn shared(&self, other: &Chunk) -> usize {
        let (mut a, mut b) = (self.words.iter().peekable(), other.words.iter().peekable());
        let mut n = 0;
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            match x.cmp(y) {
                std::cmp::Ordering::Less => {
                    a.next();
                }
                std::cmp::Ordering::Greater => {
                    b.next();
                }
                std::cmp::Ordering::Equal => {
                    n += 1;
                    a.next();
                    b.next();
                }
            }
        }
        n
    }
}

/// The chunks of a corpus, in document order.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Where it was read from, for messages.
    pub source: String,
    /// Documents read.
    pub documents: usize,
    /// The chunks.
    pub chunks: Vec<Chunk>,
}

impl Corpus {
    /// Reads the corpus at `path` (a folder, a `.txt`/`.md` file, or an
    /// Unrag `.json` dataset), chunks of at most `chunk_words` words.
    ///
    /// `max_bytes` bounds the corpus as a whole: the files of a folder
    /// together (their sizes summed from metadata, so a corpus over it is
    /// refused before any file is read), or the one file. Every file of a
    /// folder must be inside it ([`eval_datasets::files::contained`]): a
    /// symlink to a file or a folder elsewhere is refused, one within the
    /// folder followed (each file read once, a link looping back skipped).
    /// Each document is cut into chunks as it is read, so only one
    /// document's text is held at a time.
    pub fn load(path: &Path, chunk_words: usize, max_bytes: u64) -> Result<Corpus, GenerateError> {
        let shown = path.display().to_string();
        let not_found = |source: std::io::Error| GenerateError::CorpusNotFound {
            path: shown.clone(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(not_found)?;
        let mut built = Built::new(chunk_words);
        if meta.is_dir() {
            let mut walk = Walk::new(path, &shown, max_bytes).map_err(not_found)?;
            walk.dir(path)?;
            // A file grown since it was counted still stays within the limit.
            let mut left = max_bytes;
            for (n, (id, file, entry)) in walk.files.into_iter().enumerate() {
                let text = read_document(&file, &entry, left, || GenerateError::CorpusTooLarge {
                    corpus: shown.clone(),
                    size: max_bytes.saturating_add(1),
                    files: n + 1,
                    limit: max_bytes,
                })?;
                left = left.saturating_sub(text.len() as u64);
                built.add(&id, &text);
            }
        } else if is_text(path) {
            let id = path
                .file_name()
                .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
            let text = read_document(path, path, max_bytes, || GenerateError::CorpusTooLarge {
                corpus: shown.clone(),
                size: max_bytes.saturating_add(1),
                files: 1,
                limit: max_bytes,
            })?;
            built.add(&id, &text);
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            let data =
                eval_datasets::retrieval::RetrievalDataset::load_limited(path, &shown, max_bytes)
                    .map_err(GenerateError::CorpusDataset)?;
            for d in &data.documents {
                if let Some(text) = &d.content {
                    built.add(&d.source_id, text);
                }
            }
        } else {
            return Err(GenerateError::CorpusKind { path: shown });
        }
        built.finish(&shown)
    }

    /// A corpus of `(id, text)` documents.
    #[cfg(test)]
    pub fn from_documents(
        source: &str,
        documents: &[(String, String)],
        chunk_words: usize,
    ) -> Result<Corpus, GenerateError> {
        let mut built = Built::new(chunk_words);
        for (id, text) in documents {
            built.add(id, text);
        }
        built.finish(source)
    }
}

/// Chunks gathered document by document.
struct Built {
    chunk_words: usize,
    chunks: Vec<Chunk>,
    documents: usize,
}

impl Built {
    fn new(chunk_words: usize) -> Built {
        Built {
            chunk_words: chunk_words.max(1),
            chunks: Vec::new(),
            documents: 0,
        }
    }

    fn add(&mut self, id: &str, text: &str) {
        let before = self.chunks.len();
        for piece in chunk_text(text, self.chunk_words) {
            self.chunks.push(Chunk::new(id, piece));
        }
        self.documents += usize::from(self.chunks.len() > before);
    }

    fn finish(mut self, source: &str) -> Result<Corpus, GenerateError> {
        if self.chunks.is_empty() {
            return Err(GenerateError::CorpusEmpty {
                corpus: source.to_string(),
            });
        }
        self.chunks.shrink_to_fit();
        Ok(Corpus {
            source: source.to_string(),
            documents: self.documents,
            chunks: self.chunks,
        })
    }
}

/// The text of `file` ([`eval_datasets::files::read_text`]: a regular
/// file, UTF-8, a byte order mark dropped), at most `limit` bytes
/// (`too_large` when longer); `shown` is its path in messages.
fn read_document(
    file: &Path,
    shown: &Path,
    limit: u64,
    too_large: impl FnOnce() -> GenerateError,
) -> Result<String, GenerateError> {
    eval_datasets::files::read_text(file, limit).map_err(|source| match source {
        eval_datasets::files::ReadError::TooLarge { .. } => too_large(),
        source => GenerateError::CorpusRead {
            path: shown.to_path_buf(),
            source,
        },
    })
}

fn is_text(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "txt" | "md" | "markdown"))
}

/// The `.txt`/`.md` files of a corpus folder, found from metadata only:
/// hidden entries skipped, symlinks followed only within the folder, each
/// file and folder once, their sizes summed against the corpus limit.
struct Walk<'a> {
    /// The folder, as given.
    root: &'a Path,
    /// The folder, as given for messages.
    shown: &'a str,
    limit: u64,
    /// Bytes of the files found so far.
    total: u64,
    /// Each file's id (its path under the folder, with `/`), real path,
    /// and path in the folder (for messages).
    files: Vec<(String, PathBuf, PathBuf)>,
    /// Real paths of the files and folders found, so each is taken once.
    seen: HashSet<PathBuf>,
}

impl<'a> Walk<'a> {
    fn new(root: &'a Path, shown: &'a str, limit: u64) -> std::io::Result<Walk<'a>> {
        let mut seen = HashSet::new();
        seen.insert(root.canonicalize()?);
        Ok(Walk {
            root,
            shown,
            limit,
            total: 0,
            files: Vec::new(),
            seen,
        })
    }

    /// The entries of `dir` (a folder under the root, reached by `dir`), in
    /// name order.
    fn dir(&mut self, dir: &Path) -> Result<(), GenerateError> {
        let listing = |source: std::io::Error| GenerateError::CorpusRead {
            path: dir.to_path_buf(),
            source: source.into(),
        };
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(listing)? {
            let entry = entry.map_err(listing)?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry.file_type().map_err(listing)?;
            entries.push((entry.file_name(), kind));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in entries {
            let path = dir.join(&name);
            let unreadable = |source: std::io::Error| GenerateError::CorpusRead {
                path: path.clone(),
                source: source.into(),
            };
            // A symlink must lead inside the folder; other entries are
            // inside by construction. A link out is refused when it would
            // be read (a text file's name, or a folder); others are skipped
            // as any file that is not text is.
            let real = if kind.is_symlink() {
                match eval_datasets::files::contained(self.root, &path) {
                    Ok(real) => real,
                    Err(ContainmentError::Missing { source, .. }) if is_text(&path) => {
                        return Err(unreadable(source));
                    }
                    Err(e @ ContainmentError::Outside { .. })
                        if is_text(&path) || std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) =>
                    {
                        return Err(GenerateError::CorpusOutside {
                            path: path.clone(),
                            source: e,
                        });
                    }
                    Err(_) => continue,
                }
            } else if kind.is_dir() || is_text(&path) {
                path.canonicalize().map_err(unreadable)?
            } else {
                continue;
            };
            let meta = std::fs::metadata(&real).map_err(unreadable)?;
            if meta.is_dir() {
                if self.seen.insert(real) {
                    self.dir(&path)?;
                }
                continue;
            }
            if !is_text(&path) || !self.seen.insert(real.clone()) {
                continue;
            }
            // Sizes add up before anything is read: a corpus over the limit
            // is refused from its metadata.
            self.total = self.total.saturating_add(meta.len());
            if self.total > self.limit {
                return Err(GenerateError::CorpusTooLarge {
                    corpus: self.shown.to_string(),
                    size: self.total,
                    files: self.files.len() + 1,
                    limit: self.limit,
                });
            }
            let id = path
                .strip_prefix(self.root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            self.files.push((id, real, path));
        }
        Ok(())
    }
}

/// `text` cut into chunks of at most `max` words: paragraphs (split at
/// blank lines) joined while they fit, a longer paragraph cut between
/// sentences.
pub fn chunk_text(text: &str, max: usize) -> Vec<String> {
    let text: std::borrow::Cow<'_, str> = if text.contains('\r') {
        text.replace("\r\n", "\n").into()
    } else {
        text.into()
    };
    let mut pieces: Vec<String> = Vec::new();
    for paragraph in text.split("\n\n") {
        let paragraph = paragraph.trim();
        if paragraph.is_empty() {
            continue;
        }
        if words(paragraph) <= max {
            pieces.push(paragraph.to_string());
            continue;
        }
        let mut current = String::new();
        for sentence in sentences(paragraph) {
            if !current.is_empty() && words(&current) + words(&sentence) > max {
                pieces.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&sentence);
        }
        if !current.is_empty() {
            pieces.push(current);
        }
    }
    let mut chunks: Vec<String> = Vec::new();
    for piece in pieces {
        match chunks.last_mut() {
            Some(last) if words(last) + words(&piece) <= max => {
                last.push_str("\n\n");
                last.push_str(&piece);
            }
            _ => chunks.push(piece),
        }
    }
    // A chunk of nothing but a heading or a few words says nothing to ask about.
    chunks.retain(|c| words(c) >= 5);
    chunks
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

const COMMON: &[&str] = &[
    "about", "after", "also", "because", "been", "before", "being", "between", "both", "does",
    "each", "from", "have", "into", "more", "most", "only", "other", "over", "same", "some",
    "such", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "under", "very", "what", "when", "where", "which", "while", "will", "with",
    "without", "would", "your",
];

/// Lower-case words of 4+ letters, common words left out: their hashes,
/// sorted, each once.
fn content_words(text: &str) -> Box<[u64]> {
    let mut out: Vec<u64> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().nth(3).is_some())
        .filter_map(|w| {
            let w = w.to_lowercase();
            (!COMMON.contains(&w.as_str())).then(|| word_hash(&w))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out.into_boxed_slice()
}

/// A fixed 64-bit hash of a word (FNV-1a): the same on every run and
/// platform, so the passages drawn from a seed are too.
fn word_hash(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_join_while_they_fit_and_long_ones_split_at_sentences() {
        let text = "# Title here\n\nOne two three four five.\n\nSix seven eight nine ten.";
        assert_eq!(
            chunk_text(text, 100),
            vec!["# Title here\n\nOne two three four five.\n\nSix seven eight nine ten."]
        );
        assert_eq!(
            chunk_text(text, 8),
            vec![
                "# Title here\n\nOne two three four five.",
                "Six seven eight nine ten."
            ]
        );
        let long =
            "Alpha beta gamma delta epsilon. Zeta eta theta iota kappa. Lambda mu nu xi omicron.";
        assert_eq!(
            chunk_text(long, 10),
            vec![
                "Alpha beta gamma delta epsilon. Zeta eta theta iota kappa.",
                "Lambda mu nu xi omicron."
            ]
        );
        // A lone heading is no chunk.
        assert!(chunk_text("# Heading", 10).is_empty());
    }

    #[test]
    fn chunks_relate_by_shared_content_words() {
        let a = Chunk::new(
            "a.md",
            "Vector search finds nearest chunks by cosine similarity.".into(),
        );
        let b = Chunk::new("b.md", "Chunks are embedded before vector search.".into());
        let c = Chunk::new("c.md", "Paris is the capital of France.".into());
        assert_eq!(a.shared(&b), 3, "vector, search, chunks");
        assert_eq!(a.shared(&c), 0);
        let corpus = Corpus::from_documents("x", &[("a".into(), "  ".into())], 10);
        assert!(matches!(corpus, Err(GenerateError::CorpusEmpty { .. })));
    }
}
