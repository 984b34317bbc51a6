//! The one measure of "the same question" that `evals lint` flags
//! (`DUPLICATE_QUERIES`) and `evals generate` drops candidates by:
//!
//! * two inputs are **duplicates** when they are equal after
//!   [`normalise`] (lower case, punctuation dropped, spaces collapsed);
//! * they are **near-duplicates** when both have at least
//!   [`MIN_WORDS`] distinct words and the Jaccard similarity of their word
//!   sets is at least [`NEAR_DUPLICATE`].
//!
//! ```
//! use eval_datasets::similarity::{Query, same_question};
//!
//! let a = Query::new("What does a reranker do with retrieved candidates?");
//! let b = Query::new("what does a reranker do with the retrieved candidates");
//! assert!(same_question(&a, &b).is_some());
//! assert!(same_question(&a, &Query::new("How is chunk overlap chosen?")).is_none());
//! ```

/// Word-set Jaccard similarity at or above which two inputs are near-duplicates.
pub const NEAR_DUPLICATE: f64 = 0.8;
/// Distinct words an input needs before it is compared for near-duplicates
/// (short inputs share most of their words by chance).
pub const MIN_WORDS: usize = 4;

/// Lower case, punctuation dropped, spaces collapsed.
pub fn normalise(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The sorted, deduplicated words of a [`normalise`]d text.
pub fn word_set(normalised: &str) -> Vec<&str> {
    let mut w: Vec<&str> = normalised.split(' ').filter(|w| !w.is_empty()).collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// |A ∩ B| / |A ∪ B| of two sorted, deduplicated word lists.
pub fn jaccard(a: &[&str], b: &[&str]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - both;
    if union == 0 {
        return 1.0;
    }
    both as f64 / union as f64
}

/// An input prepared for comparison: its normalised text and word set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    normalised: String,
}

impl Query {
    /// `text` prepared for comparison.
    pub fn new(text: &str) -> Query {
        Query {
            normalised: normalise(text),
        }
    }

    /// The normalised text.
    pub fn normalised(&self) -> &str {
        &self.normalised
    }

    /// The word set (see [`word_set`]).
    pub fn words(&self) -> Vec<&str> {
        word_set(&self.normalised)
    }
}

/// How `a` and `b` are the same question: `Some(1.0)` for duplicates,
/// `Some(similarity)` for near-duplicates, `None` otherwise. Inputs that are
/// only punctuation are never the same as anything.
pub fn same_question(a: &Query, b: &Query) -> Option<f64> {
    if a.normalised.is_empty() || b.normalised.is_empty() {
        return None;
    }
    if a.normalised == b.normalised {
        return Some(1.0);
    }
    let (x, y) = (a.words(), b.words());
    if x.len() < MIN_WORDS || y.len() < MIN_WORDS {
        return None;
    }
    let sim = jaccard(&x, &y);
    (sim >= NEAR_DUPLICATE).then_some(sim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_and_normalise_match_hand_values() {
        assert_eq!(normalise("  What's   RAG?! "), "what s rag");
        // {a,b,c,d} vs {a,b,c,e}: 3 / 5.
        assert!((jaccard(&["a", "b", "c", "d"], &["a", "b", "c", "e"]) - 0.6).abs() < 1e-12);
        assert!((jaccard(&["a", "b"], &["a", "b"]) - 1.0).abs() < 1e-12);
        assert_eq!(word_set("b a b c"), vec!["a", "b", "c"]);
    }

    #[test]
    fn same_question_follows_the_lint_rule() {
        let q = Query::new;
        assert_eq!(
            same_question(&q("What is RAG?"), &q("what is rag")),
            Some(1.0)
        );
        // 3 words each: too short to be near-duplicates.
        assert_eq!(same_question(&q("what is rag"), &q("what is hnsw")), None);
        // 5 shared of 6: 0.83.
        let sim = same_question(
            &q("how does vector search rank chunks"),
            &q("how does vector search rank"),
        )
        .unwrap();
        assert!((sim - 5.0 / 6.0).abs() < 1e-12);
        // 4 shared of 6: 0.67.
        assert_eq!(
            same_question(
                &q("how does vector search work"),
                &q("how does chunking work now")
            ),
            None
        );
        assert_eq!(same_question(&q("?!"), &q("?!")), None);
    }
}
