//! `evals create`, seed 002's steps 3 and 4 for the user's own queries:
//! document-based answers (extracted without a judge, quoted through the
//! judge), LLM-assisted answers (written by the judge, unreviewed without
//! a terminal), the per-pair annotation form on a pseudo-terminal (manual
//! and expert review), step 4's context references, the organisation's
//! metadata, and what strategies 3 and 4 need.
//!
//! The judge is a loopback server speaking OpenAI's chat-completions wire
//! format as OpenAI's API reference documents it (`POST
//! /v1/chat/completions`, `{"model", "messages": [{"role", "content"}]}`
//! in, `{"id", "object": "chat.completion", "created", "model",
//! "choices": [{"index", "message": {"role": "assistant", "content"},
//! "finish_reason": "stop"}], "usage": {"prompt_tokens",
//! "completion_tokens", "total_tokens"}}` out).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::terminal::{PtySession, evals_pty, step};
use common::{code, evals_with, scratch, text};
use serde_json::{Value, json};

const DOCS: &[(&str, &str)] = &[
    (
        "billing/refunds.md",
        "# Refunds\n\nItems can be returned within 30 days of purchase for a full refund. Refunds are paid back to the original payment method within five business days.\n\nClearance items are final sale and cannot be returned.\n",
    ),
    (
        "account/passwords.md",
        "# Passwords\n\nTo reset a forgotten password, open the sign-in page and choose Forgot password. A reset link is sent to the email address on the account and expires after one hour.\n\nPasswords must have at least twelve characters.\n",
    ),
    (
        "account/two-factor.md",
        "Two-factor authentication is enabled from the security settings page. Scan the QR code with an authenticator app and enter the six-digit code to confirm.\n",
    ),
    (
        "files/uploads.md",
        "File uploads are limited to 100MB per file for standard accounts. Enterprise accounts can upload files up to 500MB. Uploads over the limit are refused with an error.\n",
    ),
    (
        "shipping/delivery.md",
        "Standard delivery takes three to five business days. Express delivery arrives the next business day when ordered before noon. Delivery is free for orders over fifty dollars.\n",
    ),
    (
        "billing/invoices.md",
        "Invoices are emailed on the first day of each month. Past invoices can be downloaded as PDF files from the billing page.\n",
    ),
];

/// The user's queries and the document each one's answer is in.
const QUERIES: &[(&str, &str)] = &[
    (
        "How many days do I have to return items for a refund?",
        "billing/refunds.md",
    ),
    (
        "How long until a refund reaches my original payment method?",
        "billing/refunds.md",
    ),
    ("Can clearance items be returned?", "billing/refunds.md"),
    (
        "How do I reset a forgotten password?",
        "account/passwords.md",
    ),
    (
        "When does a password reset link expire?",
        "account/passwords.md",
    ),
    (
        "How many characters must passwords have?",
        "account/passwords.md",
    ),
    (
        "How do I enable two-factor authentication?",
        "account/two-factor.md",
    ),
    (
        "What is the file upload limit for standard accounts?",
        "files/uploads.md",
    ),
    (
        "How long does standard delivery take?",
        "shipping/delivery.md",
    ),
    ("Is delivery free for large orders?", "shipping/delivery.md"),
    ("When are invoices emailed?", "billing/invoices.md"),
];

/// A folder with the corpus and `queries.txt` (the first `n` queries,
/// then `extra`).
fn inputs(name: &str, n: usize, extra: &[&str]) -> PathBuf {
    let dir = scratch(name);
    for (path, body) in DOCS {
        let p = dir.join("corpus").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    let mut qs: Vec<&str> = QUERIES.iter().take(n).map(|(q, _)| *q).collect();
    qs.extend(extra);
    std::fs::write(dir.join("queries.txt"), qs.join("\n") + "\n").unwrap();
    dir
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn flags<'a>(strategy: &'a str, size: &'a str, organisation: &'a str) -> Vec<&'a str> {
    vec![
        "create",
        "--domain",
        "support",
        "--types",
        "factual",
        "--size",
        size,
        "--queries",
        "queries.txt",
        "--corpus",
        "corpus",
        "--strategy",
        strategy,
        "--organisation",
        organisation,
        "--edge-cases",
        "none",
        "--no-upload",
        "--yes",
    ]
}

/// The line after the line opening section `name` of a rendered judge
/// question (`<B name>` ... `</B>`), and the task (`<B task=TASK>`).
fn section(user: &str, name: &str) -> Option<String> {
    let mut lines = user.lines();
    while let Some(l) = lines.next() {
        if l.starts_with('<') && l.ends_with(&format!(" {name}>")) {
            return lines.next().map(str::to_string);
        }
    }
    None
}

fn task(user: &str) -> String {
    user.lines()
        .find_map(|l| l.split_once(" task=").map(|(_, t)| t.trim_end_matches('>')))
        .unwrap_or("")
        .to_string()
}

/// The first sentence of `text` (through its first `. `).
fn first_sentence(text: &str) -> String {
    match text.find(". ") {
        Some(i) => text[..=i].to_string(),
        None => text.to_string(),
    }
}

/// A chat-completions server: `answer/document` is answered with the
/// first sentence of passage 1 as quote and answer, `answer/llm` with
/// "According to SOURCE: SENTENCE". Keeps each request's task and question.
struct JudgeServer {
    url: String,
    seen: Arc<Mutex<Vec<(String, String)>>>,
}

fn judge() -> JudgeServer {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let base = crate::common::loopback::serve(move |r| {
        let user = r.last_user_message();
        let t = task(&user);
        let question = section(&user, "question").unwrap_or_default();
        keep.lock().unwrap().push((t.clone(), question));
        let passage = first_sentence(&section(&user, "passage_1").unwrap_or_default());
        let source = section(&user, "source_1").unwrap_or_default();
        let content = match t.as_str() {
            "answer/document" => json!({"answer": passage, "quote": passage}),
            _ => json!({"answer": format!("According to {source}: {passage}")}),
        };
        crate::common::loopback::Reply::ok(&crate::common::loopback::chat_completion(
            &r.json()["model"],
            &content.to_string(),
        ))
    });
    JudgeServer {
        url: format!("{base}/v1"),
        seen,
    }
}

/// Issue 38: strategy 3 with a corpus left all 11 of the user's queries
/// unanswered (11 × MISSING_GROUND_TRUTH). Without a judge each answer is
/// the best passage sentence, quoted, with its passages and documents.
#[test]
fn document_strategy_answers_the_users_queries_from_the_corpus_without_a_judge() {
    let dir = inputs("create-answers-document", 11, &[]);
    let out = evals_with(&dir, &flags("document", "11", "collections"), &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(!stderr.contains("MISSING_GROUND_TRUTH"), "{stderr}");
    assert!(stderr.contains("11 of 11 answer(s) extracted"), "{stderr}");
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 11);
    for (r, (q, doc)) in rs.iter().zip(QUERIES) {
        assert_eq!(r["query"], *q);
        let truth = r["ground_truth"].as_str().unwrap_or_else(|| panic!("{r}"));
        assert_eq!(r["metadata"]["annotator"], "document", "{r}");
        assert_eq!(r["metadata"]["confidence"], "low", "{r}");
        assert_eq!(r["source_docs"][0], *doc, "{r}");
        let first = r["contexts"][0].as_str().unwrap();
        let flat = first.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(truth),
            "the answer is quoted from its passage: {r}"
        );
        let collection = doc.split('/').next().unwrap();
        assert_eq!(r["metadata"]["collection"], collection, "{r}");
    }
    assert_eq!(
        rs[8]["ground_truth"],
        "Standard delivery takes three to five business days."
    );
    assert_eq!(
        rs[2]["ground_truth"],
        "Clearance items are final sale and cannot be returned."
    );
}

/// Through the judge: the answer rests on a quote of a passage; a query
/// the corpus has nothing on is left unanswered and says so (no
/// annotator, no confidence claimed).
#[test]
fn document_strategy_through_the_judge_quotes_a_passage() {
    let server = judge();
    let dir = inputs(
        "create-answers-document-judge",
        10,
        &["Which zoo keeps the purple giraffes?"],
    );
    let out = evals_with(
        &dir,
        &flags("document", "11", "hierarchical"),
        &[("EVAL_JUDGE_URL", &server.url)],
    );
    let (stdout, stderr) = text(&out);
    // The unanswered query is a validation error left: exit 1, files written.
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(stderr.contains("10 of 11 answer(s)"), "{stderr}");
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 11);
    for (r, (_, doc)) in rs.iter().zip(QUERIES).take(10) {
        assert_eq!(r["metadata"]["annotator"], "document", "{r}");
        assert_eq!(r["metadata"]["confidence"], "medium", "{r}");
        assert!(r["metadata"]["generator_model"].is_string(), "{r}");
        assert_eq!(r["source_docs"][0], *doc, "{r}");
        let truth = r["ground_truth"].as_str().unwrap();
        let first = r["contexts"][0].as_str().unwrap();
        let flat = first.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(truth), "{r}");
        let parent = doc.rsplit_once('/').unwrap().0;
        assert_eq!(r["metadata"]["parent_docs"][0], parent, "{r}");
    }
    let none = &rs[10];
    assert_eq!(none["query"], "Which zoo keeps the purple giraffes?");
    assert!(none["ground_truth"].is_null(), "{none}");
    assert!(none["metadata"]["annotator"].is_null(), "{none}");
    assert!(none["metadata"]["confidence"].is_null(), "{none}");
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 10, "no passage, no question: {seen:?}");
    assert!(seen.iter().all(|(t, _)| t == "answer/document"), "{seen:?}");
    assert_eq!(seen[0].1, QUERIES[0].0);
}

/// LLM-assisted: the judge writes each answer from the passages; without
/// a terminal they are kept unreviewed. An answer of the ground-truth file
/// is a person's (issue 38: it was labelled `llm`), with the file's
/// confidence and difficulty, and the judge is not asked for it.
#[test]
fn llm_strategy_answers_the_users_queries_unreviewed_without_a_terminal() {
    let server = judge();
    let dir = inputs("create-answers-llm", 11, &[]);
    std::fs::write(
        dir.join("truth.jsonl"),
        json!({"query": QUERIES[0].0, "ground_truth": "Thirty days from the day of purchase.",
               "contexts": ["Items can be returned within 30 days of purchase."],
               "source_docs": ["billing/refunds.md"],
               "metadata": {"confidence": "high", "difficulty": "hard"}})
        .to_string()
            + "\n",
    )
    .unwrap();
    let mut args = flags("llm", "11", "single");
    args.extend(["--ground-truth", "truth.jsonl"]);
    let out = evals_with(&dir, &args, &[("EVAL_JUDGE_URL", &server.url)]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 11);
    let file = &rs[0];
    assert_eq!(
        file["ground_truth"],
        "Thirty days from the day of purchase."
    );
    assert_eq!(file["metadata"]["annotator"], "file", "{file}");
    assert_eq!(file["metadata"]["confidence"], "high", "{file}");
    assert_eq!(file["metadata"]["difficulty"], "hard", "{file}");
    assert!(file["metadata"].get("reviewed").is_none(), "{file}");
    for (r, (_, doc)) in rs.iter().zip(QUERIES).skip(1) {
        assert_eq!(r["metadata"]["annotator"], "llm", "{r}");
        assert_eq!(r["metadata"]["reviewed"], false, "{r}");
        assert_eq!(r["source_docs"][0], *doc, "{r}");
        assert!(
            r["ground_truth"]
                .as_str()
                .unwrap()
                .starts_with(&format!("According to {doc}: ")),
            "{r}"
        );
        assert!(!r["contexts"].as_array().unwrap().is_empty(), "{r}");
        assert!(r["metadata"].get("collection").is_none(), "{r}");
    }
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 10, "the file's answer is not asked: {seen:?}");
    assert!(seen.iter().all(|(t, _)| t == "answer/llm"), "{seen:?}");
}

/// LLM-assisted on a terminal: the person validates each answer the judge
/// wrote: `skip` rejects one (left unanswered), a typed answer replaces
/// one (human), Enter accepts the others (reviewed).
#[test]
fn llm_answers_are_reviewed_pair_by_pair_on_a_terminal() {
    let server = judge();
    let dir = inputs("create-answers-llm-review", 10, &[]);
    let mut args = flags("llm", "10", "single");
    args.push("--fix");
    let mut p = pty(&dir, &args, Some(&server.url));
    let answer = "Expected answer [Enter accepts the candidate, `skip` rejects it]: ";
    step(&mut p, "Review each answer the judge wrote", "skip");
    step(
        &mut p,
        answer,
        "Within five business days, to the original payment method.",
    );
    step(&mut p, "Source document(s) [Enter keeps", "");
    step(&mut p, "Relevant context passage(s) [Enter keeps", "");
    step(&mut p, "Confidence level: [high/medium/low]: ", "high");
    step(&mut p, "Difficulty: [easy/medium/hard]: ", "medium");
    for _ in 3..=10 {
        step(&mut p, answer, "");
        step(&mut p, "Source document(s) [Enter keeps", "");
        step(&mut p, "Relevant context passage(s) [Enter keeps", "");
        step(&mut p, "Confidence level: [high/medium/low]: ", "medium");
        step(&mut p, "Difficulty: [easy/medium/hard]: ", "easy");
    }
    p.exp_string("Evaluation Dataset Created")
        .expect("the closing report");
    p.exp_eof().expect("it ends");
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 10);
    assert!(rs[0]["ground_truth"].is_null(), "{}", rs[0]);
    assert!(rs[0]["metadata"]["annotator"].is_null());
    assert_eq!(rs[1]["metadata"]["annotator"], "human", "{}", rs[1]);
    assert_eq!(rs[1]["metadata"]["reviewed"], true);
    assert_eq!(rs[1]["source_docs"][0], "billing/refunds.md");
    for r in &rs[2..] {
        assert_eq!(r["metadata"]["annotator"], "llm", "{r}");
        assert_eq!(r["metadata"]["reviewed"], true, "{r}");
        assert_eq!(r["metadata"]["confidence"], "medium", "{r}");
    }
}

/// Strategies 3 and 4 answer from documents: without --corpus they are
/// refused at the start, a corpus that is not there is CORPUS_NOT_FOUND,
/// and LLM-assisted needs the judge.
#[test]
fn document_and_llm_strategies_need_a_corpus() {
    let dir = inputs("create-answers-refused", 11, &[]);
    for strategy in ["document", "llm"] {
        let args: Vec<&str> = flags(strategy, "11", "single")
            .into_iter()
            .filter(|a| !matches!(*a, "--corpus" | "corpus"))
            .collect();
        let out = evals_with(&dir, &args, &[]);
        assert_eq!(code(&out), 2, "{:?}", text(&out));
        assert!(
            text(&out).1.contains(&format!(
                "--strategy {strategy}: the answers come from your documents: give --corpus DIR"
            )),
            "{:?}",
            text(&out)
        );
    }
    let mut args = flags("document", "11", "single");
    let at = args.iter().position(|a| *a == "corpus").unwrap();
    args[at] = "no-such-corpus";
    let out = evals_with(&dir, &args, &[]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("CORPUS_NOT_FOUND: no-such-corpus"),
        "{:?}",
        text(&out)
    );
    let out = evals_with(&dir, &flags("llm", "11", "single"), &[]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("--strategy llm: the judge writes the answers"),
        "{:?}",
        text(&out)
    );
    let out = evals_with(&dir, &flags("expert", "11", "single"), &[]);
    let mut args = flags("expert", "11", "single");
    args.extend(["--review", "maybe"]);
    let refused = evals_with(&dir, &args, &[]);
    assert_eq!(code(&refused), 2);
    assert!(
        text(&refused)
            .1
            .contains("--review maybe: expected ask or accept"),
        "{:?}",
        text(&refused)
    );
    // Expert review without a judge and a terminal: no candidates, nothing claimed.
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(rs.iter().all(|r| r["ground_truth"].is_null()
        && r["metadata"]["annotator"].is_null()
        && r["metadata"]["confidence"].is_null()));
}

fn pty(dir: &Path, args: &[&str], judge_url: Option<&str>) -> PtySession {
    let env: Vec<(&str, &str)> = judge_url
        .map(|url| ("EVAL_JUDGE_URL", url))
        .into_iter()
        .collect();
    let mut p = evals_pty(dir, args, &env);
    if args.contains(&"--corpus") {
        // Step 2 with a corpus: the generation model and the queries per
        // document, both left at their defaults.
        step(&mut p, "Generation model [", "");
        step(&mut p, "Queries per document [", "");
    }
    p
}

/// Manual annotation on a terminal: the seed's five questions per pair, a
/// wrong confidence asked again, an empty answer skipping the pair, step 4
/// asking the references a pair still lacks.
#[test]
fn manual_annotation_asks_the_seeds_questions_per_pair() {
    let dir = inputs("create-answers-manual", 10, &[]);
    let args: Vec<&str> = flags("manual", "10", "hierarchical")
        .into_iter()
        .filter(|a| !matches!(*a, "--corpus" | "corpus"))
        .chain(["--fix"])
        .collect();
    let mut p = pty(&dir, &args, None);
    // Pair 1: everything, a wrong confidence and difficulty asked again.
    p.exp_string("Query: \"How many days")
        .expect("the first query");
    step(
        &mut p,
        "Expected answer: ",
        "Within 30 days of purchase, for a full refund.",
    );
    step(
        &mut p,
        "Source document(s): ",
        "guides/setup/refunds.md, guides/faq.md",
    );
    step(
        &mut p,
        "Relevant context passage(s): ",
        "Items can be returned within 30 days. | Refunds are paid in five days.",
    );
    step(&mut p, "Confidence level: [high/medium/low]: ", "sure");
    step(&mut p, "answer high, medium, low: ", "high");
    step(&mut p, "Difficulty: [easy/medium/hard]: ", "h");
    // Pair 2: skipped.
    step(&mut p, "Expected answer: ", "");
    // Pair 3: no references now: step 4 asks them.
    step(
        &mut p,
        "Expected answer: ",
        "No: clearance items are final sale.",
    );
    step(&mut p, "Source document(s): ", "");
    step(&mut p, "Relevant context passage(s): ", "");
    step(&mut p, "Confidence level: [high/medium/low]: ", "medium");
    step(&mut p, "Difficulty: [easy/medium/hard]: ", "easy");
    for i in 4..=10 {
        step(
            &mut p,
            "Expected answer: ",
            &format!("Answer number {i}, written by a person who knows."),
        );
        step(&mut p, "Source document(s): ", "docs/a.md");
        step(&mut p, "Relevant context passage(s): ", "A passage.");
        step(&mut p, "Confidence level: [high/medium/low]: ", "l");
        step(&mut p, "Difficulty: [easy/medium/hard]: ", "medium");
    }
    step(
        &mut p,
        "Which document(s) contain the answer: ",
        "docs/clearance.md",
    );
    step(
        &mut p,
        "The exact passage(s) that support the answer: ",
        "Clearance items are final sale.",
    );
    step(
        &mut p,
        "Any related passages (Enter for none): ",
        "Returns need a receipt. | Gift cards are final.",
    );
    p.exp_string("Evaluation Dataset Created")
        .expect("the closing report");
    p.exp_eof().expect("it ends");
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 10);
    let m = &rs[0]["metadata"];
    assert_eq!(m["annotator"], "human", "{}", rs[0]);
    assert_eq!(m["confidence"], "high");
    assert_eq!(m["difficulty"], "hard");
    assert_eq!(
        rs[0]["source_docs"],
        json!(["guides/setup/refunds.md", "guides/faq.md"])
    );
    assert_eq!(
        rs[0]["contexts"],
        json!([
            "Items can be returned within 30 days.",
            "Refunds are paid in five days."
        ])
    );
    assert_eq!(m["parent_docs"], json!(["guides/setup", "guides"]));
    assert!(rs[1]["ground_truth"].is_null(), "{}", rs[1]);
    assert!(rs[1]["metadata"]["annotator"].is_null());
    assert!(rs[1]["metadata"]["confidence"].is_null());
    assert_eq!(rs[2]["source_docs"], json!(["docs/clearance.md"]));
    assert_eq!(
        rs[2]["contexts"],
        json!([
            "Clearance items are final sale.",
            "Returns need a receipt.",
            "Gift cards are final."
        ])
    );
    assert_eq!(rs[2]["metadata"]["difficulty"], "easy");
    for r in &rs[3..] {
        assert_eq!(r["metadata"]["annotator"], "human", "{r}");
        assert_eq!(r["metadata"]["confidence"], "low", "{r}");
    }
}

/// Expert review on a terminal: the judge's candidate for each query is
/// shown; Enter accepts it (reviewed), a typed answer replaces it
/// (human), `skip` rejects it (unanswered).
#[test]
fn expert_review_accepts_edits_and_skips_candidates() {
    let server = judge();
    let dir = inputs("create-answers-expert", 10, &[]);
    let mut args = flags("expert", "10", "single");
    args.push("--fix");
    let mut p = pty(&dir, &args, Some(&server.url));
    // Pair 1: accepted.
    step(
        &mut p,
        "Candidate answer: \"According to billing/refunds.md: ",
        "",
    );
    step(&mut p, "Source document(s) [Enter keeps", "");
    step(&mut p, "Relevant context passage(s) [Enter keeps", "");
    step(&mut p, "Confidence level: [high/medium/low]: ", "high");
    step(&mut p, "Difficulty: [easy/medium/hard]: ", "easy");
    // Pair 2: edited.
    step(
        &mut p,
        "Expected answer [Enter accepts the candidate, `skip` rejects it]: ",
        "Refunds reach the original payment method within five business days.",
    );
    step(
        &mut p,
        "Source document(s) [Enter keeps",
        "billing/refunds.md",
    );
    step(&mut p, "Relevant context passage(s) [Enter keeps", "");
    step(&mut p, "Confidence level: [high/medium/low]: ", "medium");
    step(&mut p, "Difficulty: [easy/medium/hard]: ", "medium");
    // Pair 3: rejected.
    step(
        &mut p,
        "Expected answer [Enter accepts the candidate, `skip` rejects it]: ",
        "skip",
    );
    for _ in 4..=10 {
        step(
            &mut p,
            "Expected answer [Enter accepts the candidate, `skip` rejects it]: ",
            "",
        );
        step(&mut p, "Source document(s) [Enter keeps", "");
        step(&mut p, "Relevant context passage(s) [Enter keeps", "");
        step(&mut p, "Confidence level: [high/medium/low]: ", "medium");
        step(&mut p, "Difficulty: [easy/medium/hard]: ", "hard");
    }
    p.exp_string("Evaluation Dataset Created")
        .expect("the closing report");
    p.exp_eof().expect("it ends");
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 10);
    let m = &rs[0]["metadata"];
    assert_eq!(m["annotator"], "llm", "{}", rs[0]);
    assert_eq!(m["reviewed"], true);
    assert_eq!(m["confidence"], "high");
    assert_eq!(rs[0]["source_docs"][0], "billing/refunds.md");
    assert_eq!(rs[1]["metadata"]["annotator"], "human", "{}", rs[1]);
    assert_eq!(
        rs[1]["ground_truth"],
        "Refunds reach the original payment method within five business days."
    );
    assert_eq!(rs[1]["source_docs"], json!(["billing/refunds.md"]));
    assert!(rs[1]["metadata"].get("generator_model").is_none());
    assert!(rs[2]["ground_truth"].is_null(), "{}", rs[2]);
    assert!(rs[2]["metadata"]["annotator"].is_null());
    assert!(rs[2]["metadata"]["confidence"].is_null());
    for (r, (_, doc)) in rs[3..].iter().zip(&QUERIES[3..]) {
        assert_eq!(r["metadata"]["reviewed"], true, "{r}");
        assert_eq!(r["metadata"]["difficulty"], "hard", "{r}");
        assert_eq!(r["source_docs"][0], *doc, "{r}");
    }
}
