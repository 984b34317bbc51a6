//! The near-duplicate measure (`eval_datasets::similarity::same_question`,
//! `evals lint`'s `DUPLICATE_QUERIES` warning and `evals generate`'s drop)
//! against a labelled list: one-word paraphrases of support and RAG
//! questions are caught, distinct questions that share most words are not,
//! and the duplicates and word-overlap near-duplicates of before still are.

use eval_datasets::similarity::{
    MIN_WORDS, Match, NEAR_DUPLICATE, Query, jaccard, normalise, same_question, word_set,
};

/// Pairs that ask the same question, one word apart.
const PARAPHRASES: &[(&str, &str)] = &[
    (
        "How do I reset my password quickly?",
        "How can I reset my password quickly?",
    ),
    (
        "Where are the API logs stored?",
        "Where is the API logs stored?",
    ),
    (
        "What is the refund window for a subscription?",
        "What is the refund window for the subscription?",
    ),
    (
        "How can I change my billing address?",
        "How could I change my billing address?",
    ),
    (
        "Where do I find the API key?",
        "Where do I find my API key?",
    ),
    (
        "How do I rotate my API keys?",
        "How do I rotate my API key?",
    ),
    (
        "Can I export my chat history?",
        "Could I export my chat history?",
    ),
    (
        "What's the maximum upload size?",
        "What is the maximum upload size?",
    ),
    (
        "How do we invite new teammates?",
        "How can we invite new teammates?",
    ),
    (
        "Can you explain the pricing tiers?",
        "Could you explain the pricing tiers?",
    ),
    (
        "How do I enable two-factor authentication?",
        "How do I enable two-factor authentication, please?",
    ),
    (
        "Where can I download my invoices?",
        "Where can I download my invoice?",
    ),
    (
        "How do I connect a Slack workspace?",
        "How do I connect the Slack workspace?",
    ),
    (
        "What file types does the importer accept?",
        "What file types can the importer accept?",
    ),
    (
        "How should I structure my documents for retrieval?",
        "How do I structure my documents for retrieval?",
    ),
    ("Can I just cancel my plan?", "Can I simply cancel my plan?"),
    (
        "What are your support hours?",
        "What are our support hours?",
    ),
    (
        "Does the chatbot remember previous conversations?",
        "Will the chatbot remember previous conversations?",
    ),
    ("How do I rename a project?", "How do I rename my project?"),
    (
        "How long does a refund take?",
        "How long does a refund take exactly?",
    ),
];

/// Pairs that share most words but ask different questions.
const DISTINCT: &[(&str, &str)] = &[
    ("How do I reset my password?", "How do I reset my username?"),
    (
        "What is the capital of France?",
        "What is the capital of Spain?",
    ),
    (
        "How long does shipping take to Canada?",
        "How long does shipping take to Mexico?",
    ),
    (
        "How do I cancel my subscription?",
        "How do I upgrade my subscription?",
    ),
    (
        "When did the billing cycle start?",
        "When will the billing cycle start?",
    ),
    (
        "Can I export my data as CSV?",
        "Can I export my data as PDF?",
    ),
    (
        "What is the refund policy for annual plans?",
        "What is the refund policy for monthly plans?",
    ),
    (
        "Which embedding model does the retriever use?",
        "Which embedding model does the reranker use?",
    ),
    (
        "What is the maximum file upload size?",
        "What is the minimum file upload size?",
    ),
    (
        "Where do I find my invoices?",
        "Where do I find my receipts?",
    ),
    ("Why is my order delayed?", "Why is my order cancelled?"),
    (
        "Does the free plan include SSO?",
        "Does the enterprise plan include SSO?",
    ),
    (
        "How do I delete my account?",
        "How do I delete my workspace?",
    ),
    (
        "What is the chunk size for indexing?",
        "What is the chunk overlap for indexing?",
    ),
    (
        "How do I add a team member?",
        "How do I remove a team member?",
    ),
    ("Who was the account owner?", "Who is the account owner?"),
    (
        "How do I connect Slack to my workspace?",
        "How do I connect Teams to my workspace?",
    ),
    (
        "Is my data encrypted at rest?",
        "Is my data encrypted in transit?",
    ),
    (
        "What is the rate limit for the search API?",
        "What is the rate limit for the upload API?",
    ),
    ("Why was my refund denied?", "Why will my refund be denied?"),
];

fn same(a: &str, b: &str) -> Option<Match> {
    same_question(&Query::new(a), &Query::new(b))
}

/// The rule before one-word paraphrases: word-set Jaccard ≥ 0.8 for inputs
/// of 4+ distinct words.
fn old_rule(a: &str, b: &str) -> bool {
    let (a, b) = (normalise(a), normalise(b));
    let (a, b) = (word_set(&a), word_set(&b));
    a.len() >= MIN_WORDS && b.len() >= MIN_WORDS && jaccard(&a, &b) >= NEAR_DUPLICATE
}

#[test]
fn one_word_paraphrases_are_caught_and_distinct_questions_are_not() {
    let caught: Vec<_> = PARAPHRASES
        .iter()
        .filter(|(a, b)| same(a, b).is_some() && same(b, a).is_some())
        .collect();
    let missed: Vec<_> = PARAPHRASES
        .iter()
        .filter(|(a, b)| same(a, b).is_none() || same(b, a).is_none())
        .collect();
    let flagged: Vec<_> = DISTINCT
        .iter()
        .filter(|(a, b)| same(a, b).is_some() || same(b, a).is_some())
        .map(|(a, b)| (a, b, same(a, b)))
        .collect();
    let old_caught = PARAPHRASES.iter().filter(|(a, b)| old_rule(a, b)).count();
    let old_flagged = DISTINCT.iter().filter(|(a, b)| old_rule(a, b)).count();
    eprintln!(
        "paraphrases caught {}/{}, distinct flagged {}/{} (word overlap alone: caught {old_caught}/{}, flagged {old_flagged}/{})",
        caught.len(),
        PARAPHRASES.len(),
        flagged.len(),
        DISTINCT.len(),
        PARAPHRASES.len(),
        DISTINCT.len(),
    );
    for (a, b) in PARAPHRASES {
        eprintln!("  same:     {a} | {b} -> {}", same(a, b).unwrap());
    }
    assert!(PARAPHRASES.len() >= 15 && DISTINCT.len() >= 15);
    assert!(missed.is_empty(), "paraphrases missed: {missed:?}");
    assert!(
        flagged.is_empty(),
        "distinct questions flagged: {flagged:?}"
    );
    // The new rule is what catches most of them.
    assert!(old_caught < PARAPHRASES.len() / 2, "{old_caught}");
}

#[test]
fn duplicates_and_word_overlap_near_duplicates_are_still_caught() {
    // Equal after normalising case, spaces and punctuation, at any length.
    for (a, b) in [
        ("What is RAG?", "what is rag"),
        (
            "How  do I reset my password?!",
            "how do i reset my password",
        ),
        ("Reset password", "reset, password."),
    ] {
        assert_eq!(same(a, b), Some(Match::Duplicate), "{a} | {b}");
    }
    // Word overlap of 0.8 or more, whatever the words.
    for (a, b, sim) in [
        // The same words in another order: 1.0.
        (
            "How do I quickly reset my password?",
            "How do I reset my password quickly?",
            1.0,
        ),
        // A content word added: 5 shared of 6.
        (
            "how does vector search rank chunks",
            "how does vector search rank",
            5.0 / 6.0,
        ),
        // One content word swapped in a long question: 8 shared of 10.
        (
            "How long does shipping take to Canada from Germany?",
            "How long does shipping take to Mexico from Germany?",
            0.8,
        ),
    ] {
        match same(a, b) {
            Some(Match::Overlap(s)) => assert!((s - sim).abs() < 1e-12, "{a} | {b}: {s}"),
            other => panic!("{a} | {b}: {other:?}"),
        }
        assert!(old_rule(a, b));
    }
    // Under 4 distinct words, only exact duplicates count, by either rule.
    assert_eq!(same("What is RAG?", "What's RAG?"), None);
    assert_eq!(same("Reset my password", "Reset your password"), None);
    // Inputs of only punctuation are never the same as anything.
    assert_eq!(same("?!", "..."), None);
}

#[test]
fn the_reason_names_the_word() {
    let why = |a: &str, b: &str| same(a, b).unwrap().to_string();
    assert_eq!(
        why(
            "How do I reset my password quickly?",
            "How can I reset my password quickly?"
        ),
        "differs only in `do`/`can`"
    );
    assert_eq!(
        why(
            "Where can I download my invoices?",
            "Where can I download my invoice?"
        ),
        "differs only in `invoices`/`invoice`"
    );
    assert_eq!(
        why(
            "How do I reset my password?",
            "How do I reset my password please?"
        ),
        "word overlap 0.86"
    );
}

#[test]
fn lint_warns_of_a_one_word_paraphrase_with_the_word() {
    let inputs = [
        "How do I reset my password quickly?",
        "How do I reset my username?",
        "How can I reset my password quickly?",
        "What is the capital of France?",
        "What is the capital of Spain?",
        "How do I rotate my API keys?",
        "How do I rotate my API key?",
        "How do I reset my password quickly please?",
    ];
    let data: String = inputs
        .iter()
        .map(|q| {
            format!(
                "{}\n",
                serde_json::json!({"input": q, "expected": "An answer of ten words or more, long enough for the rule."})
            )
        })
        .collect();
    let ds = eval_datasets::Dataset::from_bytes("evals/p.jsonl", data.as_bytes()).unwrap();
    let found: Vec<(usize, String)> =
        eval_datasets::lint::lint_samples("evals/p.jsonl", &ds.samples)
            .into_iter()
            .filter(|f| f.code == "DUPLICATE_QUERIES")
            .map(|f| (f.line, f.message))
            .collect();
    assert_eq!(
        found,
        vec![
            (
                3,
                "near-duplicate of line 1 (differs only in `do`/`can`)".to_string()
            ),
            (
                7,
                "near-duplicate of line 6 (differs only in `keys`/`key`)".to_string()
            ),
            (
                8,
                "near-duplicate of line 1 (word overlap 0.88)".to_string()
            ),
        ]
    );
}
