//! The scripted judge's reading of text: content words, sentences, and
//! whether a statement is supported by a source (most of its content words
//! occur in it).

use std::collections::HashSet;

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "are", "was", "were", "with", "that", "this", "from", "its", "has",
    "have", "what", "which", "how", "why", "who", "does", "can", "you", "your", "into", "than",
    "then", "they", "them", "their", "there", "been", "being", "also", "not", "but", "all", "any",
];

/// Lower-case words of three or more letters or digits, stop words left out.
pub fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Whether most of `statement`'s content words occur in `source`.
pub fn supported(statement: &str, source: &str) -> bool {
    let known: HashSet<String> = content_words(source).into_iter().collect();
    let words = content_words(statement);
    if words.is_empty() {
        return true;
    }
    let found = words.iter().filter(|w| known.contains(*w)).count();
    found * 2 >= words.len()
}

/// The sentences of `text` (split after `.`, `!`, `?`), trimmed, non-empty.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '.' | '!' | '?') {
            let s = current.trim();
            if s.chars().any(char::is_alphanumeric) {
                out.push(s.to_string());
            }
            current.clear();
        }
    }
    let s = current.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s.to_string());
    }
    out
}
