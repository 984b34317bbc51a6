//! The one measure of "the same question" that `evals lint` flags
//! (`DUPLICATE_QUERIES`) and `evals generate` drops candidates by:
//!
//! * two inputs are **duplicates** when they are equal after
//!   [`normalise`] (lower case, punctuation dropped, spaces collapsed);
//! * they are **near-duplicates** when both have at least [`MIN_WORDS`]
//!   distinct words and either
//!   * the Jaccard similarity of their word sets is at least
//!     [`NEAR_DUPLICATE`] ([`Match::Overlap`]), or
//!   * their word sequences are one [`WordEdit`] apart (one word
//!     substituted, inserted or deleted) and that edit is a paraphrase
//!     ([`WordEdit::is_paraphrase`], [`Match::OneWord`]): the word inserted
//!     or deleted is one of the [`FUNCTION_WORDS`], or the two words
//!     substituted are both function words (`do`/`can`, `a`/`the`,
//!     `my`/`your`) without a past-tense auxiliary ([`PAST_AUXILIARIES`])
//!     swapped for a present or future one, or they are one word and its
//!     plural ([`same_word`]: `password`/`passwords`).
//!
//! A content word substituted (`password`/`username`, `France`/`Spain`) is
//! not a paraphrase: those questions share most words but ask something
//! else. (The word-overlap rule still flags inputs of 9+ words that differ
//! in one word of any kind: 8 shared of 10 is 0.8.)
//!
//! ```
//! use eval_datasets::similarity::{Match, Query, WordEdit, same_question};
//!
//! let a = Query::new("What does a reranker do with retrieved candidates?");
//! let b = Query::new("what does a reranker do with the retrieved candidates");
//! assert!(same_question(&a, &b).is_some());
//! assert!(same_question(&a, &Query::new("How is chunk overlap chosen?")).is_none());
//!
//! let how = Query::new("How do I reset my password quickly?");
//! assert_eq!(
//!     same_question(&how, &Query::new("How can I reset my password quickly?")),
//!     Some(Match::OneWord(WordEdit::Substituted {
//!         from: "do".into(),
//!         to: "can".into()
//!     }))
//! );
//! let reset = Query::new("How do I reset my password?");
//! assert!(same_question(&reset, &Query::new("How do I reset my username?")).is_none());
//! ```

use std::fmt;

/// Word-set Jaccard similarity at or above which two inputs are near-duplicates.
pub const NEAR_DUPLICATE: f64 = 0.8;
/// Distinct words an input needs before it is compared for near-duplicates
/// (short inputs share most of their words by chance), by either rule.
pub const MIN_WORDS: usize = 4;

/// The function words (as [`normalise`] writes them: lower case) whose
/// insertion, deletion or swap for another leaves a question the same
/// question: auxiliaries, articles, the first and second person pronouns,
/// and fillers. `s` is what [`normalise`] leaves of `'s` (`what's` is
/// `what s`). Question words, negations, prepositions, conjunctions and
/// quantifiers are not here: `what`/`why`, `not`, `to`/`from`, `and`/`or`,
/// `all`/`some` change what is asked.
pub const FUNCTION_WORDS: &[&str] = &[
    // Auxiliaries.
    "am",
    "are",
    "be",
    "can",
    "could",
    "did",
    "do",
    "does",
    "is",
    "may",
    "might",
    "s",
    "should",
    "was",
    "were",
    "will",
    "would",
    // Articles.
    "a",
    "an",
    "the",
    // Pronouns.
    "i",
    "me",
    "my",
    "our",
    "us",
    "we",
    "you",
    "your",
    // Fillers.
    "actually",
    "also",
    "basically",
    "exactly",
    "just",
    "kindly",
    "please",
    "quickly",
    "really",
    "simply",
];

/// The past-tense auxiliaries among the [`FUNCTION_WORDS`]: one swapped for
/// an auxiliary that is not past tense (`did`/`will`, `was`/`is`) asks
/// about another time, so it is not a paraphrase.
pub const PAST_AUXILIARIES: &[&str] = &["did", "was", "were"];

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
    overlap(a, b)
}

/// [`jaccard`] of any sorted, deduplicated word lists.
fn overlap<S: AsRef<str>>(a: &[S], b: &[S]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].as_ref().cmp(b[j].as_ref()) {
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

/// Whether `word` (lower case) is one of the [`FUNCTION_WORDS`].
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Whether `a` and `b` (lower case) are one word: equal, or one is the
/// other with a plural suffix (`s`, `es`, or `y` made `ies`) on a stem of
/// at least 3 letters (`password`/`passwords`, `box`/`boxes`,
/// `policy`/`policies`; not `us`/`u`).
pub fn same_word(a: &str, b: &str) -> bool {
    fn plural_of(plural: &str, word: &str) -> bool {
        if word.chars().count() < 3 {
            return false;
        }
        let Some(suffix) = plural.strip_prefix(word) else {
            return word
                .strip_suffix('y')
                .and_then(|stem| plural.strip_prefix(stem))
                == Some("ies");
        };
        suffix == "s" || suffix == "es"
    }
    a == b || plural_of(a, b) || plural_of(b, a)
}

/// One word changed between two word sequences (see [`one_word_edit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordEdit {
    /// The first sequence's word `from` is the second's `to`.
    Substituted {
        /// The word in the first sequence.
        from: String,
        /// The word in its place in the second.
        to: String,
    },
    /// A word only the second sequence has.
    Inserted(String),
    /// A word only the first sequence has.
    Deleted(String),
}

impl WordEdit {
    /// Whether the edit leaves a question the same question: a
    /// [`FUNCTION_WORDS`] word inserted or deleted; or two function words
    /// swapped, unless exactly one of them is one of the
    /// [`PAST_AUXILIARIES`]; or a word swapped for itself or its plural
    /// ([`same_word`]). Any other substitution changes a content word.
    pub fn is_paraphrase(&self) -> bool {
        match self {
            WordEdit::Inserted(word) | WordEdit::Deleted(word) => is_function_word(word),
            WordEdit::Substituted { from, to } => {
                let past = |w: &str| PAST_AUXILIARIES.contains(&w);
                same_word(from, to)
                    || (is_function_word(from) && is_function_word(to) && past(from) == past(to))
            }
        }
    }
}

impl fmt::Display for WordEdit {
    /// "differs only in \`do\`/\`can\`" for a substitution, "differs only in
    /// \`quickly\`" for an insertion or deletion.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WordEdit::Substituted { from, to } => write!(f, "differs only in `{from}`/`{to}`"),
            WordEdit::Inserted(word) | WordEdit::Deleted(word) => {
                write!(f, "differs only in `{word}`")
            }
        }
    }
}

/// The one edit that turns word sequence `a` into `b` (one word
/// substituted, inserted or deleted), or `None` when they are equal or more
/// than one edit apart. Words are compared as they are (give it the words
/// of [`normalise`]d texts, in order); whether the edit is a paraphrase is
/// [`WordEdit::is_paraphrase`].
pub fn one_word_edit(a: &[&str], b: &[&str]) -> Option<WordEdit> {
    edit_of(a, b)
}

/// [`one_word_edit`] of any word sequences.
fn edit_of<S: AsRef<str>>(a: &[S], b: &[S]) -> Option<WordEdit> {
    let eq = |x: &S, y: &S| x.as_ref() == y.as_ref();
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return None;
    }
    // The first difference; the rest must match after it.
    let at = long
        .iter()
        .zip(short)
        .position(|(x, y)| !eq(x, y))
        .unwrap_or(short.len());
    if long.len() == short.len() {
        if at == long.len()
            || !long[at + 1..]
                .iter()
                .zip(&short[at + 1..])
                .all(|(x, y)| eq(x, y))
        {
            return None;
        }
        return Some(WordEdit::Substituted {
            from: a[at].as_ref().to_string(),
            to: b[at].as_ref().to_string(),
        });
    }
    if !long[at + 1..]
        .iter()
        .zip(&short[at..])
        .all(|(x, y)| eq(x, y))
    {
        return None;
    }
    let word = long[at].as_ref().to_string();
    Some(if a.len() > b.len() {
        WordEdit::Deleted(word)
    } else {
        WordEdit::Inserted(word)
    })
}

/// An input prepared for comparison: its normalised text, its words in
/// order and its word set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    normalised: String,
    /// The words of `normalised`, in order.
    sequence: Vec<String>,
    /// The words of `normalised`, sorted and deduplicated.
    set: Vec<String>,
}

impl Query {
    /// `text` prepared for comparison.
    pub fn new(text: &str) -> Query {
        let normalised = normalise(text);
        let sequence: Vec<String> = normalised.split_whitespace().map(str::to_string).collect();
        let set = word_set(&normalised)
            .into_iter()
            .map(str::to_string)
            .collect();
        Query {
            normalised,
            sequence,
            set,
        }
    }

    /// The normalised text.
    pub fn normalised(&self) -> &str {
        &self.normalised
    }

    /// The word set (see [`word_set`]).
    pub fn words(&self) -> Vec<&str> {
        self.set.iter().map(String::as_str).collect()
    }

    /// The words in order.
    pub fn sequence(&self) -> Vec<&str> {
        self.sequence.iter().map(String::as_str).collect()
    }
}

/// Why two inputs are the same question (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub enum Match {
    /// Equal after [`normalise`].
    Duplicate,
    /// Near-duplicates by word overlap: the Jaccard similarity of the word
    /// sets, [`NEAR_DUPLICATE`] or more.
    Overlap(f64),
    /// Near-duplicates by one word: the word sequences are this edit apart
    /// (from the first input to the second), and it is a paraphrase
    /// ([`WordEdit::is_paraphrase`]).
    OneWord(WordEdit),
}

impl Match {
    /// Whether this is a near-duplicate rather than a duplicate.
    pub fn is_near(&self) -> bool {
        !matches!(self, Match::Duplicate)
    }
}

impl fmt::Display for Match {
    /// "same input", "word overlap 0.83", or the [`WordEdit`]'s "differs
    /// only in ...".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Match::Duplicate => write!(f, "same input"),
            Match::Overlap(sim) => write!(f, "word overlap {sim:.2}"),
            Match::OneWord(edit) => edit.fmt(f),
        }
    }
}

/// How `a` and `b` are the same question, or `None` when they are not:
/// [`Match::Duplicate`] when equal after [`normalise`]; else, when both
/// have at least [`MIN_WORDS`] distinct words, [`Match::Overlap`] when
/// their word sets' Jaccard similarity is [`NEAR_DUPLICATE`] or more, then
/// [`Match::OneWord`] when their word sequences are one paraphrase edit
/// apart. Inputs that are only punctuation are never the same as anything.
pub fn same_question(a: &Query, b: &Query) -> Option<Match> {
    if a.normalised.is_empty() || b.normalised.is_empty() {
        return None;
    }
    if a.normalised == b.normalised {
        return Some(Match::Duplicate);
    }
    if a.set.len() < MIN_WORDS || b.set.len() < MIN_WORDS {
        return None;
    }
    let sim = overlap(&a.set, &b.set);
    if sim >= NEAR_DUPLICATE {
        return Some(Match::Overlap(sim));
    }
    edit_of(&a.sequence, &b.sequence)
        .filter(WordEdit::is_paraphrase)
        .map(Match::OneWord)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    fn edit(a: &str, b: &str) -> Option<WordEdit> {
        one_word_edit(&words(a), &words(b))
    }

    fn sub(from: &str, to: &str) -> Option<WordEdit> {
        Some(WordEdit::Substituted {
            from: from.into(),
            to: to.into(),
        })
    }

    #[test]
    fn jaccard_and_normalise_match_hand_values() {
        assert_eq!(normalise("  What's   RAG?! "), "what s rag");
        // {a,b,c,d} vs {a,b,c,e}: 3 / 5.
        assert!((jaccard(&["a", "b", "c", "d"], &["a", "b", "c", "e"]) - 0.6).abs() < 1e-12);
        assert!((jaccard(&["a", "b"], &["a", "b"]) - 1.0).abs() < 1e-12);
        assert_eq!(word_set("b a b c"), vec!["a", "b", "c"]);
    }

    #[test]
    fn one_word_edit_finds_the_single_substitution_insertion_or_deletion() {
        assert_eq!(edit("how do i reset", "how can i reset"), sub("do", "can"));
        // At either end.
        assert_eq!(edit("do i reset it", "can i reset it"), sub("do", "can"));
        assert_eq!(
            edit("how do i reset", "how do i renew"),
            sub("reset", "renew")
        );
        assert_eq!(
            edit("how do i reset", "how do i reset quickly"),
            Some(WordEdit::Inserted("quickly".into()))
        );
        assert_eq!(
            edit("please how do i reset", "how do i reset"),
            Some(WordEdit::Deleted("please".into()))
        );
        assert_eq!(
            edit("how do i reset", "how do the i reset"),
            Some(WordEdit::Inserted("the".into()))
        );
        // A repeated word: the first copy is the one reported (the same word).
        assert_eq!(
            edit("a b b c", "a b c"),
            Some(WordEdit::Deleted("b".into()))
        );
        assert_eq!(
            edit("", "please"),
            Some(WordEdit::Inserted("please".into()))
        );
        // Equal, two edits, a swap of two words, two words apart in length.
        assert_eq!(edit("how do i reset", "how do i reset"), None);
        assert_eq!(edit("how do i reset", "how can we reset"), None);
        assert_eq!(edit("how do i reset", "how i do reset"), None);
        assert_eq!(edit("how do i reset", "how can i reset it"), None);
        assert_eq!(edit("how do i reset", "how do i reset it now"), None);
        assert_eq!(edit("how do i reset", "how do reset it"), None);
        assert_eq!(edit("", ""), None);
    }

    #[test]
    fn paraphrase_edits_are_function_words_or_plurals() {
        let ins = |w: &str| WordEdit::Inserted(w.into()).is_paraphrase();
        let del = |w: &str| WordEdit::Deleted(w.into()).is_paraphrase();
        let swap = |a: &str, b: &str| {
            WordEdit::Substituted {
                from: a.into(),
                to: b.into(),
            }
            .is_paraphrase()
        };
        for (a, b) in [
            ("do", "can"),
            ("is", "does"),
            ("a", "the"),
            ("my", "your"),
            ("s", "is"),
            ("just", "simply"),
            ("did", "was"),
            ("password", "passwords"),
            ("boxes", "box"),
            ("policy", "policies"),
        ] {
            assert!(swap(a, b), "{a}/{b}");
            assert!(swap(b, a), "{b}/{a}");
        }
        for (a, b) in [
            ("password", "username"),
            ("france", "spain"),
            ("what", "why"),
            ("to", "from"),
            ("the", "france"),
            ("did", "will"),
            ("was", "is"),
            ("u", "us"),
            ("class", "cla"),
        ] {
            assert!(!swap(a, b), "{a}/{b}");
            assert!(!swap(b, a), "{b}/{a}");
        }
        assert!(ins("quickly") && del("please") && ins("the") && del("my"));
        assert!(!ins("not") && !del("canada") && !ins("all") && !ins("t"));
        assert_eq!(
            WordEdit::Substituted {
                from: "do".into(),
                to: "can".into()
            }
            .to_string(),
            "differs only in `do`/`can`"
        );
        assert_eq!(
            WordEdit::Inserted("quickly".into()).to_string(),
            "differs only in `quickly`"
        );
    }

    #[test]
    fn same_word_is_a_word_and_its_plural() {
        assert!(same_word("key", "key"));
        assert!(same_word("keys", "key") && same_word("key", "keys"));
        assert!(same_word("addresses", "address"));
        assert!(same_word("categories", "category"));
        assert!(!same_word("key", "keyss"));
        // A stem of 3 letters is enough: the price of a simple rule.
        assert!(same_word("news", "new"));
        assert!(!same_word("is", "i") && !same_word("as", "a"));
        assert!(!same_word("meaning", "mean") && !same_word("used", "use"));
    }

    #[test]
    fn same_question_follows_the_lint_rule() {
        let q = Query::new;
        assert_eq!(
            same_question(&q("What is RAG?"), &q("what is rag")),
            Some(Match::Duplicate)
        );
        // 3 words each: too short to be near-duplicates, by either rule.
        assert_eq!(same_question(&q("what is rag"), &q("what is hnsw")), None);
        assert_eq!(same_question(&q("what is rag"), &q("what s rag")), None);
        // 5 shared of 6: 0.83.
        let m = same_question(
            &q("how does vector search rank chunks"),
            &q("how does vector search rank"),
        )
        .unwrap();
        let Match::Overlap(sim) = m else {
            panic!("{m:?}")
        };
        assert!((sim - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!(m.to_string(), "word overlap 0.83");
        // 4 shared of 6: 0.67.
        assert_eq!(
            same_question(
                &q("how does vector search work"),
                &q("how does chunking work now")
            ),
            None
        );
        assert_eq!(same_question(&q("?!"), &q("?!")), None);
        // One function word swapped: 5 shared of 7 (0.71), yet the same question.
        let m = same_question(
            &q("How do I reset my password quickly?"),
            &q("How can I reset my password quickly?"),
        );
        assert_eq!(m, sub("do", "can").map(Match::OneWord));
        assert!(m.as_ref().is_some_and(Match::is_near));
        // One content word swapped: another question.
        assert_eq!(
            same_question(
                &q("How do I reset my password?"),
                &q("How do I reset my username?")
            ),
            None
        );
        // Both rules: word overlap is reported.
        assert!(matches!(
            same_question(
                &q("how do i reset my password"),
                &q("how do i reset my password please")
            ),
            Some(Match::Overlap(_))
        ));
        assert!(!Match::Duplicate.is_near());
    }

    #[test]
    fn query_keeps_its_words_in_order_and_as_a_set() {
        let q = Query::new("The key, the KEY: rotate it!");
        assert_eq!(q.normalised(), "the key the key rotate it");
        assert_eq!(
            q.sequence(),
            vec!["the", "key", "the", "key", "rotate", "it"]
        );
        assert_eq!(q.words(), vec!["it", "key", "rotate", "the"]);
    }
}
