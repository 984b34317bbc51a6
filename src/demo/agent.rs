//! The demo agent's "brain": a built-in corpus, word-overlap retrieval,
//! conversation memory and a little arithmetic. Pure functions, no I/O; the
//! HTTP layer lives in [`super`].

/// One document of the built-in corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Document {
    /// Stable identifier (`kebab-case`).
    pub id: &'static str,
    /// Short human-readable title.
    pub title: &'static str,
    /// Words that identify the topic; a question word matching one of them
    /// scores 2 instead of 1.
    pub keywords: &'static [&'static str],
    /// The passage returned as retrieval context (1–3 sentences).
    pub text: &'static str,
    /// The canonical short answer given when this document ranks first.
    pub answer: &'static str,
}

/// The built-in corpus, in tie-breaking order (earlier wins a tie).
pub static CORPUS: &[Document] = &[
    Document {
        id: "rag",
        title: "Retrieval-augmented generation",
        keywords: &["rag", "retrieval", "augmented", "generation", "grounding"],
        text: "Retrieval-augmented generation (RAG) first retrieves documents relevant to a \
               question and then gives them to a language model as context. Grounding the \
               answer in retrieved sources makes it more accurate and lets it cite them.",
        answer: "Retrieval-augmented generation (RAG) retrieves relevant documents and gives \
                 them to a language model as context, so answers are grounded in real sources.",
    },
    Document {
        id: "embeddings",
        title: "Embeddings",
        keywords: &["embedding", "embed", "dense"],
        text: "An embedding model maps a piece of text to a dense vector of numbers. Texts with \
               similar meaning get vectors that are close together.",
        answer: "Embeddings are dense vectors that represent the meaning of text; similar texts \
                 get nearby vectors.",
    },
    Document {
        id: "vector-search",
        title: "Vector search",
        keywords: &[
            "vector",
            "search",
            "similarity",
            "nearest",
            "neighbor",
            "semantic",
        ],
        text: "Vector search embeds the query and finds the stored chunks whose embeddings are \
               nearest to it, usually by cosine similarity. Approximate nearest-neighbor \
               indexes such as HNSW keep it fast at scale.",
        answer: "Vector search embeds the query and returns the nearest neighbors by cosine \
                 similarity.",
    },
    Document {
        id: "chunking",
        title: "Chunking",
        keywords: &[
            "chunk",
            "chunking",
            "split",
            "splitting",
            "passage",
            "overlap",
        ],
        text: "Chunking splits long documents into smaller passages, often a few hundred tokens \
               each with some overlap, before they are embedded and indexed.",
        answer: "Chunking splits long documents into smaller overlapping passages so each one \
                 can be embedded and retrieved precisely.",
    },
    Document {
        id: "reranking",
        title: "Reranking",
        keywords: &["rerank", "reranker", "reranking", "cross", "encoder"],
        text: "A reranker rescores the candidates returned by a first-stage retriever, usually \
               with a cross-encoder that reads the query and each passage together.",
        answer: "A reranker, usually a cross-encoder, rescores the retrieved candidates so the \
                 most relevant passages come first.",
    },
    Document {
        id: "hallucination",
        title: "Hallucination",
        keywords: &[
            "hallucination",
            "hallucinate",
            "invent",
            "fabricate",
            "confabulation",
        ],
        text: "A hallucination is fluent, confident output that is not supported by the sources \
               or by facts. Retrieval and faithfulness checks help detect and reduce \
               hallucinations.",
        answer: "A hallucination is a fluent answer that is not supported by the sources or the \
                 facts.",
    },
    Document {
        id: "faithfulness",
        title: "Faithfulness",
        keywords: &["faithfulness", "faithful", "groundedness"],
        text: "Faithfulness is an evaluation metric that checks whether every claim in an answer \
               is supported by the retrieved context. A faithful answer adds nothing the \
               context does not say.",
        answer: "Faithfulness measures whether every claim in the answer is supported by the \
                 retrieved context.",
    },
    Document {
        id: "context-recall",
        title: "Context recall",
        keywords: &["recall", "context"],
        text: "Context recall is an evaluation metric for retrieval: the share of the reference \
               answer's claims that can be found in the retrieved context.",
        answer: "Context recall measures how much of the reference answer is covered by the \
                 retrieved context.",
    },
    Document {
        id: "llm-judge",
        title: "LLM-as-a-judge",
        keywords: &["judge", "grader", "grading", "rubric"],
        text: "LLM-as-a-judge uses a language model to grade an answer against a rubric or a \
               reference answer. It scales better than human review but should be checked \
               against human labels.",
        answer: "LLM-as-a-judge uses a language model to grade answers against a rubric or a \
                 reference answer.",
    },
    Document {
        id: "cargo-test",
        title: "cargo test",
        keywords: &["cargo", "test", "testing", "rust", "crate"],
        text: "In Rust, cargo test builds the crate in test mode and runs every #[test] \
               function, doc test and integration test. A filter, as in cargo test NAME, runs \
               only the tests whose names contain NAME.",
        answer: "cargo test builds the crate in test mode and runs every #[test]; cargo test \
                 NAME runs only the tests whose names contain NAME.",
    },
    Document {
        id: "paris",
        title: "Capital of France",
        keywords: &["france", "capital", "paris", "french"],
        text: "Paris is the capital and largest city of France, on the river Seine.",
        answer: "Paris is the capital of France.",
    },
];

/// Answer when nothing matches.
pub const DONT_KNOW: &str = "I don't know.";

/// Number of context passages returned when the caller does not choose.
pub const DEFAULT_TOP_K: usize = 2;

/// What the agent says for one turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    /// The answer text.
    pub output: String,
    /// Retrieved passages the answer is based on (best first); empty when
    /// the answer did not come from the corpus.
    pub context: Vec<String>,
}

impl Reply {
    fn text(output: impl Into<String>) -> Self {
        Reply {
            output: output.into(),
            context: Vec::new(),
        }
    }
}

/// Answers `input`, the current user turn, given the earlier user turns of
/// the conversation (`history`, oldest first; assistant and system turns are
/// not part of it). At most `top_k` passages are returned as context.
///
/// In order of precedence:
/// 1. questions about remembered facts ("what's my name?", "what do I
///    like?", "where do I live?") are answered from the facts stated in the
///    user turns so far ("my name is X", "I like X", "I live in X"; the
///    latest statement wins);
/// 2. a statement of such facts is acknowledged ("Nice to meet you, X.");
/// 3. simple arithmetic ("What is 2 + 2?") is computed;
/// 4. otherwise the corpus is searched and the best document's answer is
///    returned with the top passages as context, or [`DONT_KNOW`].
pub fn respond<S: AsRef<str>>(history: &[S], input: &str, top_k: usize) -> Reply {
    answer(history, input, top_k).0
}

/// How an answer was found: what the tools of the chat route stand in for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// From the conversation, a greeting, or nothing.
    Other,
    /// Computed: the expression, as `2 + 3`.
    Arithmetic(String),
    /// From the corpus: the best document.
    Corpus(&'static Document),
}

/// [`respond`], and how the answer was found.
pub(crate) fn answer<S: AsRef<str>>(history: &[S], input: &str, top_k: usize) -> (Reply, Found) {
    let mut facts = Facts::default();
    for turn in history {
        facts.learn(turn.as_ref());
    }
    let mut stated = Facts::default();
    stated.learn(input);
    facts.merge(&stated);

    let normalized = normalize(input);
    let question = is_question(input, &normalized);

    if let Some(reply) = memory_answer(&facts, &normalized, question) {
        return (Reply::text(reply), Found::Other);
    }
    if !question && !stated.is_empty() {
        return (Reply::text(stated.acknowledge()), Found::Other);
    }
    if let Some((a, op, b)) = parse_arithmetic(input) {
        let expression = format!("{} {op} {}", format_number(a), format_number(b));
        return (
            Reply::text(compute(a, op, b)),
            Found::Arithmetic(expression),
        );
    }
    let ranked = retrieve(input);
    match ranked.first() {
        Some(best) => (
            Reply {
                output: best.answer.to_string(),
                context: ranked
                    .iter()
                    .take(top_k)
                    .map(|d| d.text.to_string())
                    .collect(),
            },
            Found::Corpus(best),
        ),
        None if is_greeting(&normalized) => (
            Reply::text("Hello! Ask me about RAG, LLM evaluation or testing Rust code."),
            Found::Other,
        ),
        None => (Reply::text(DONT_KNOW), Found::Other),
    }
}

// ---------------------------------------------------------------------------
// Retrieval

const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "describe", "did", "do", "does", "doing", "each",
    "explain", "for", "from", "get", "give", "had", "has", "have", "here", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "know", "like", "me", "mean", "meant", "means", "my", "no",
    "not", "of", "on", "only", "or", "our", "please", "should", "so", "some", "tell", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too",
    "us", "very", "was", "we", "were", "what", "whats", "when", "where", "which", "who", "whom",
    "whose", "why", "will", "with", "would", "you", "your",
];

/// Lower-cased word tokens without stop words, crudely singularised
/// (`embeddings` → `embedding`). Apostrophes are dropped (`what's` →
/// `whats`), every other non-alphanumeric character separates words.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut flush = |word: &mut String| {
        if !word.is_empty() && !STOP_WORDS.contains(&word.as_str()) {
            out.push(singular(word));
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if c != '\'' && c != '\u{2019}' {
            flush(&mut word);
        }
    }
    flush(&mut word);
    out
}

fn singular(word: &str) -> String {
    match word.strip_suffix('s') {
        Some(stem) if word.chars().count() > 3 && !stem.ends_with('s') => stem.to_string(),
        _ => word.to_string(),
    }
}

/// The best document for `query`, if any matches (the `lookup` tool).
pub(crate) fn retrieve_best(query: &str) -> Option<&'static Document> {
    retrieve(query).first().copied()
}

/// Documents with a non-zero score for `question`, best first (ties keep
/// corpus order). Each distinct question word scores 2 when it is one of the
/// document's keywords, else 1 when it occurs in its title, text or answer.
fn retrieve(question: &str) -> Vec<&'static Document> {
    let mut words = tokens(question);
    words.sort();
    words.dedup();
    if words.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, usize, &'static Document)> = CORPUS
        .iter()
        .enumerate()
        .filter_map(|(i, doc)| {
            let keywords: Vec<String> = doc.keywords.iter().flat_map(|k| tokens(k)).collect();
            let body = tokens(&format!("{} {} {}", doc.title, doc.text, doc.answer));
            let score: usize = words
                .iter()
                .map(|w| {
                    if keywords.contains(w) {
                        2
                    } else if body.contains(w) {
                        1
                    } else {
                        0
                    }
                })
                .sum();
            (score > 0).then_some((score, i, doc))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, doc)| doc).collect()
}

// ---------------------------------------------------------------------------
// Conversation memory

/// Facts the user stated about themselves.
#[derive(Debug, Default, Clone)]
struct Facts {
    name: Option<String>,
    likes: Option<String>,
    home: Option<String>,
}

impl Facts {
    fn is_empty(&self) -> bool {
        self.name.is_none() && self.likes.is_none() && self.home.is_none()
    }

    fn merge(&mut self, newer: &Facts) {
        if newer.name.is_some() {
            self.name.clone_from(&newer.name);
        }
        if newer.likes.is_some() {
            self.likes.clone_from(&newer.likes);
        }
        if newer.home.is_some() {
            self.home.clone_from(&newer.home);
        }
    }

    /// Records the facts stated in `turn`; later statements win. Questions
    /// ("do I like tea?") state nothing.
    fn learn(&mut self, turn: &str) {
        for sentence in turn.split_inclusive(['.', '!', '?', ';', '\n']) {
            if sentence.ends_with('?') {
                continue;
            }
            if let Some(v) = value_after(sentence, &["my name is", "call me"]) {
                self.name = Some(v);
            }
            if let Some(v) = value_after(
                sentence,
                &[
                    "i like",
                    "i love",
                    "my favorite fruit is",
                    "my favourite fruit is",
                    "my favorite food is",
                    "my favourite food is",
                ],
            ) {
                self.likes = Some(v);
            }
            if let Some(v) = value_after(sentence, &["i live in"]) {
                self.home = Some(v);
            }
        }
    }

    fn acknowledge(&self) -> String {
        let mut parts = Vec::new();
        if let Some(name) = &self.name {
            parts.push(format!("Nice to meet you, {name}."));
        }
        if let Some(likes) = &self.likes {
            parts.push(format!("Got it, you like {likes}."));
        }
        if let Some(home) = &self.home {
            parts.push(format!("Noted, you live in {home}."));
        }
        parts.join(" ")
    }
}

/// The text after the last occurrence of one of `triggers` (whole words,
/// ASCII case-insensitive) in `sentence`, up to the end of its clause.
fn value_after(sentence: &str, triggers: &[&str]) -> Option<String> {
    // ASCII lower-casing keeps byte offsets, so positions found in `lower`
    // are valid in `sentence`.
    let lower = sentence.to_ascii_lowercase();
    let mut best: Option<usize> = None;
    for trigger in triggers {
        for (at, _) in lower.match_indices(trigger) {
            let before_ok = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let end = at + trigger.len();
            let after_ok = lower[end..].starts_with(char::is_whitespace);
            if before_ok && after_ok && best.is_none_or(|b| end > b) {
                best = Some(end);
            }
        }
    }
    let rest = &sentence[best?..];
    let lower_rest = &lower[best?..];
    let mut cut = rest.len();
    for stop in [",", " and ", " but ", " so ", " because ", " though ", "\""] {
        if let Some(at) = lower_rest.find(stop) {
            cut = cut.min(at);
        }
    }
    let value = rest[..cut]
        .trim()
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// Lower-cased words separated by single spaces, apostrophes dropped.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if c != '\'' && c != '\u{2019}' && !out.is_empty() && !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.trim_end().to_string()
}

fn is_question(raw: &str, normalized: &str) -> bool {
    const OPENERS: &[&str] = &[
        "what", "whats", "who", "where", "when", "why", "how", "which", "do", "does", "did", "is",
        "are", "can", "could", "tell", "explain", "remind",
    ];
    raw.contains('?')
        || normalized
            .split(' ')
            .next()
            .is_some_and(|w| OPENERS.contains(&w))
}

fn memory_answer(facts: &Facts, q: &str, question: bool) -> Option<String> {
    let padded = format!(" {q} ");
    let has = |patterns: &[&str]| patterns.iter().any(|p| padded.contains(&format!(" {p} ")));

    if has(&[
        "whats my name",
        "what is my name",
        "what my name is",
        "who am i",
        "know my name",
        "remember my name",
        "tell me my name",
    ]) {
        return Some(match &facts.name {
            Some(name) => format!("Your name is {name}."),
            None => "I don't know your name yet.".to_string(),
        });
    }
    if has(&[
        "what do i like",
        "what do i love",
        "what i like",
        "what i love",
    ]) || (question && has(&["my favorite", "my favourite"]))
    {
        return Some(match &facts.likes {
            Some(likes) => format!("You like {likes}."),
            None => "I don't know what you like yet.".to_string(),
        });
    }
    if has(&[
        "where do i live",
        "where i live",
        "where am i from",
        "where is my home",
    ]) {
        return Some(match &facts.home {
            Some(home) => format!("You live in {home}."),
            None => "I don't know where you live yet.".to_string(),
        });
    }
    None
}

fn is_greeting(q: &str) -> bool {
    const GREETINGS: &[&str] = &["hi", "hello", "hey", "good morning", "good evening"];
    GREETINGS.contains(&q)
}

// ---------------------------------------------------------------------------
// Arithmetic

/// `"What is 2 + 2?"` → `"4"`. Only a whole message of the form
/// `[what is|calculate|…] <number> <op> <number> [?|=|.]` counts.
pub(crate) fn arithmetic(input: &str) -> Option<String> {
    parse_arithmetic(input).map(|(a, op, b)| compute(a, op, b))
}

/// The numbers and operator (`+ - * /`) of a message [`arithmetic`] accepts.
fn parse_arithmetic(input: &str) -> Option<(f64, char, f64)> {
    const PREFIXES: &[&str] = &[
        "what is",
        "what's",
        "whats",
        "how much is",
        "calculate",
        "compute",
        "evaluate",
        "solve",
    ];
    let lower = input.trim().to_lowercase();
    let mut rest = lower.as_str();
    for p in PREFIXES {
        if let Some(r) = rest.strip_prefix(p) {
            rest = r;
            break;
        }
    }
    let rest = rest.trim_end_matches(|c: char| c.is_whitespace() || "?.!=".contains(c));
    let mut s = rest.trim_start();

    let a = number(&mut s)?;
    s = s.trim_start();
    const OPS: &[(&str, char)] = &[
        ("+", '+'),
        ("plus", '+'),
        ("-", '-'),
        ("\u{2212}", '-'),
        ("minus", '-'),
        ("*", '*'),
        ("x", '*'),
        ("\u{d7}", '*'),
        ("times", '*'),
        ("multiplied by", '*'),
        ("/", '/'),
        ("\u{f7}", '/'),
        ("divided by", '/'),
    ];
    let (text, op) = OPS.iter().find(|(text, _)| s.starts_with(text))?;
    s = s[text.len()..].trim_start();
    let b = number(&mut s)?;
    if !s.trim().is_empty() {
        return None;
    }
    Some((a, *op, b))
}

/// `a op b`, as the answer says it.
fn compute(a: f64, op: char, b: f64) -> String {
    let value = match op {
        '+' => a + b,
        '-' => a - b,
        '*' => a * b,
        _ if b == 0.0 => return "I can't divide by zero.".to_string(),
        _ => a / b,
    };
    if !value.is_finite() {
        return "That number is too large for me.".to_string();
    }
    format_number(value)
}

/// Parses `-?digits(.digits)?` at the start of `s` and advances past it.
fn number(s: &mut &str) -> Option<f64> {
    let bytes = s.as_bytes();
    let mut end = usize::from(bytes.first() == Some(&b'-'));
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    if end == digits_start {
        return None;
    }
    if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    let value = s[..end].parse::<f64>().ok()?;
    *s = &s[end..];
    Some(value)
}

fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{}", value as i64);
    }
    let s = format!("{value:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: &[&str] = &[];

    #[test]
    fn retrieval_picks_the_topic() {
        let cases = [
            ("What is the capital of France?", "paris"),
            ("What is retrieval-augmented generation?", "rag"),
            ("What is RAG?", "rag"),
            ("What are embeddings?", "embeddings"),
            (
                "How does vector search find relevant chunks?",
                "vector-search",
            ),
            (
                "Why do we split documents into chunks before embedding them?",
                "chunking",
            ),
            ("What does a reranker do?", "reranking"),
            ("What is a hallucination in an LLM answer?", "hallucination"),
            ("What is the faithfulness metric?", "faithfulness"),
            ("What does context recall measure?", "context-recall"),
            (
                "How do I run only some tests with cargo test?",
                "cargo-test",
            ),
            ("How do I run the tests of a Rust crate?", "cargo-test"),
            ("Can an LLM judge grade answers?", "llm-judge"),
        ];
        for (q, id) in cases {
            let ranked = retrieve(q);
            assert_eq!(ranked.first().map(|d| d.id), Some(id), "{q}");
        }
        assert!(retrieve("What's the weather like today?").is_empty());
    }

    #[test]
    fn answers_with_context() {
        let r = respond(NONE, "What is the capital of France?", 2);
        assert_eq!(r.output, "Paris is the capital of France.");
        assert!(!r.context.is_empty() && r.context.len() <= 2);
        assert!(r.context[0].contains("Paris"));
        assert_eq!(respond(NONE, "What is RAG?", 1).context.len(), 1);
        assert_eq!(respond(NONE, "What is RAG?", 0).context.len(), 0);
        let r = respond(NONE, "Who won the 1954 World Cup?", 2);
        assert_eq!(r, Reply::text(DONT_KNOW));
    }

    #[test]
    fn remembers_facts() {
        let h = ["Hi! My name is Ada.", "I like apples."];
        assert_eq!(
            respond(&h, "What's my name?", 2).output,
            "Your name is Ada."
        );
        let h = ["I like apples.", "Sorry, I meant I like mangoes."];
        assert_eq!(
            respond(&h, "What is my favorite fruit?", 2).output,
            "You like mangoes."
        );
        assert_eq!(respond(&h, "what do I like", 2).output, "You like mangoes.");
        let h = ["Hello, I'm Sam and I live in Oslo."];
        assert_eq!(
            respond(&h, "Where do I live?", 2).output,
            "You live in Oslo."
        );
        assert_eq!(
            respond(NONE, "Where do I live?", 2).output,
            "I don't know where you live yet."
        );
        // A question does not state a fact.
        let h = ["Do I like tea?"];
        assert_eq!(
            respond(&h, "What do I like?", 2).output,
            "I don't know what you like yet."
        );
    }

    #[test]
    fn acknowledges_statements() {
        assert_eq!(
            respond(NONE, "My name is Ada Lovelace, hello!", 2).output,
            "Nice to meet you, Ada Lovelace."
        );
        // Not answered from the corpus even though "Paris" matches a document.
        assert_eq!(
            respond(NONE, "I live in Paris.", 2),
            Reply::text("Noted, you live in Paris.")
        );
    }

    #[test]
    fn computes() {
        for (q, a) in [
            ("What is 2 + 2?", "4"),
            ("what's 12*7", "84"),
            ("Calculate 10 / 4.", "2.5"),
            ("What is 3 minus 5?", "-2"),
            ("1/0", "I can't divide by zero."),
        ] {
            assert_eq!(respond(NONE, q, 2).output, a, "{q}");
        }
        // Numbers inside other text are not arithmetic.
        assert_ne!(respond(NONE, "Chunks of 200-300 tokens?", 2).output, "-100");
    }

    #[test]
    fn never_panics_on_odd_input() {
        let long = "9".repeat(400);
        let odd = [
            "",
            "?",
            "é?ß…",
            "my name is",
            "I like",
            "I live in ,",
            "i like \u{1f600}",
            "MY NAME IS İSTANBUL",
            "İ like İ",
            "-",
            "2 +",
            long.as_str(),
        ];
        for q in odd {
            let _ = respond(&odd, q, 5);
        }
        assert_eq!(
            respond(NONE, &format!("{long} * {long}"), 2).output,
            "That number is too large for me."
        );
    }
}
