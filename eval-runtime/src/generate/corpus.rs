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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::GenerateError;
use crate::model::sentences;

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
    /// Its content words (lower case, 4+ letters, common words left out).
    words: BTreeSet<String>,
}

impl Chunk {
    fn new(doc: &str, text: String) -> Chunk {
        Chunk {
            doc: doc.to_string(),
            words: content_words(&text),
            text,
        }
    }

    /// Content words shared with `other`.
    pub fn shared(&self, other: &Chunk) -> usize {
        self.words.intersection(&other.words).count()
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
    /// Unrag `.json` dataset), chunks of at most `chunk_words` words; no
    /// file of it larger than `max_bytes` is read.
    pub fn load(path: &Path, chunk_words: usize, max_bytes: u64) -> Result<Corpus, GenerateError> {
        let shown = path.display().to_string();
        let not_found = |source: std::io::Error| GenerateError::CorpusNotFound {
            path: shown.clone(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(not_found)?;
        let max = max_bytes;
        let read = |file: &Path| -> Result<String, GenerateError> {
            let bytes = eval_datasets::files::read_checked(file, max).map_err(|source| {
                GenerateError::CorpusRead {
                    path: file.to_path_buf(),
                    source,
                }
            })?;
            String::from_utf8(bytes).map_err(|e| GenerateError::CorpusNotText {
                path: file.to_path_buf(),
                source: e.utf8_error(),
            })
        };
        let documents: Vec<(String, String)> = if meta.is_dir() {
            let mut files = Vec::new();
            walk(path, &mut files).map_err(not_found)?;
            files.sort();
            let mut docs = Vec::new();
            for file in files {
                let id = file
                    .strip_prefix(path)
                    .unwrap_or(&file)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                docs.push((id, read(&file)?));
            }
            docs
        } else if is_text(path) {
            let id = path
                .file_name()
                .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
            vec![(id, read(path)?)]
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            let data = eval_datasets::retrieval::RetrievalDataset::load_limited(path, &shown, max)
                .map_err(GenerateError::CorpusDataset)?;
            data.documents
                .iter()
                .filter_map(|d| d.content.clone().map(|c| (d.source_id.clone(), c)))
                .collect()
        } else {
            return Err(GenerateError::CorpusKind { path: shown });
        };
        Corpus::from_documents(&shown, &documents, chunk_words)
    }

    /// A corpus of `(id, text)` documents.
    pub fn from_documents(
        source: &str,
        documents: &[(String, String)],
        chunk_words: usize,
    ) -> Result<Corpus, GenerateError> {
        let mut chunks = Vec::new();
        let mut read = 0;
        for (id, text) in documents {
            let before = chunks.len();
            for piece in chunk_text(text, chunk_words.max(1)) {
                chunks.push(Chunk::new(id, piece));
            }
            read += usize::from(chunks.len() > before);
        }
        if chunks.is_empty() {
            return Err(GenerateError::CorpusEmpty {
                corpus: source.to_string(),
            });
        }
        Ok(Corpus {
            source: source.to_string(),
            documents: read,
            chunks,
        })
    }
}

fn is_text(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "txt" | "md" | "markdown"))
}

/// The `.txt`/`.md` files under `dir`, hidden entries skipped.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if is_text(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// `text` cut into chunks of at most `max` words: paragraphs (split at
/// blank lines) joined while they fit, a longer paragraph cut between
/// sentences.
pub fn chunk_text(text: &str, max: usize) -> Vec<String> {
    let text = text.replace("\r\n", "\n");
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

/// Lower-case words of 4+ letters, common words left out.
fn content_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !COMMON.contains(&w.as_str()))
        .collect()
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
