//! `evals create`, seed 002's flow: by flags (queries from a `.txt` file
//! merged with a ground-truth file, production traces, generation from a
//! corpus with the scripted judge), walked through a pseudo-terminal, the
//! bundle it writes, and the LangSmith upload against a local mock (its
//! failure is `LANGSMITH_UPLOAD_FAILED` and keeps the files).

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::terminal::{answer_pair, evals_pty, first_steps, step};
use common::{code, evals_with, repo, scratch, text};
use eval_datasets::Dataset;
use serde_json::Value;

const QUERIES: &str = "# sample queries, one per line
What is retrieval-augmented generation?
How do I reset my password quickly?
How can I reset my password quickly?
What is the capital of France?
";

const TRUTH: &str = r#"{"query": "What is retrieval-augmented generation?", "ground_truth": "Retrieval-augmented generation retrieves relevant documents and gives them to a language model as context.", "contexts": ["RAG first retrieves documents relevant to a question."], "source_docs": ["rag.md"]}
{"query": "How do I reset my password quickly?", "ground_truth": "Open the account settings, choose reset password and follow the link sent by email.", "contexts": ["Passwords are reset from the account settings page."], "source_docs": ["account.md"]}
{"query": "What is the capital of France?", "ground_truth": "Paris is the capital and the largest city of France, on the Seine.", "contexts": ["Paris is the capital and largest city of France."], "source_docs": ["paris.md"]}
"#;

const TRACES: &str = r#"{"inputs": {"question": "How does vector search find relevant chunks?"}, "outputs": {"answer": "It embeds the query and returns the nearest neighbours by cosine similarity."}}
"#;

/// A directory with the inputs and the demo corpus.
pub(crate) fn inputs(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("queries.txt"), QUERIES).unwrap();
    std::fs::write(dir.join("truth.jsonl"), TRUTH).unwrap();
    std::fs::write(dir.join("traces.jsonl"), TRACES).unwrap();
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for e in std::fs::read_dir(repo().join("examples/corpus")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, corpus.join(p.file_name().unwrap())).unwrap();
    }
    dir
}

const FLAGS: &[&str] = &[
    "create",
    "--domain",
    "Technical Docs",
    "--types",
    "mixed",
    "--size",
    "12",
    "--queries",
    "queries.txt",
    "--ground-truth",
    "truth.jsonl",
    "--traces",
    "traces.jsonl",
    "--corpus",
    "corpus",
    "--strategy",
    "llm",
    "--organisation",
    "single",
    "--edge-cases",
    "unanswerable,temporal",
    "--yes",
];

/// A LangSmith stand-in on loopback: answers `status` to every request and
/// keeps each request's line, `x-api-key` and JSON body.
pub(crate) struct Mock {
    pub(crate) url: String,
    pub(crate) seen: Arc<Mutex<Vec<Seen>>>,
}

/// One request the mock received: its request line, `x-api-key`, JSON body.
pub(crate) type Seen = (String, Option<String>, Value);

pub(crate) fn mock(status: u16) -> Mock {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let url = crate::common::loopback::serve(move |r| {
        let body = r.json();
        let line = r.line();
        keep.lock().unwrap().push((
            line.clone(),
            r.header("x-api-key").map(str::to_string),
            body.clone(),
        ));
        let answer = if status != 200 {
            r#"{"detail": "the service is down"}"#.to_string()
        } else if line.contains("/api/v1/datasets") {
            dataset_answer(&body)
        } else {
            examples_answer(&body)
        };
        crate::common::loopback::Reply {
            status,
            body: answer,
        }
    });
    Mock { url, seen }
}

/// The dataset id and workspace (tenant) id the mock gives.
pub(crate) const DATASET_ID: &str = "9a3c1f0e-7b2d-4e5f-8a6b-1c2d3e4f5a6b";
const TENANT_ID: &str = "0f1e2d3c-4b5a-4697-8877-665544332211";

/// LangSmith's answer to `POST /api/v1/datasets`: the dataset object (its
/// fields as langsmith 0.1.147's `schemas.Dataset` reads them — `id`,
/// `name`, `description`, `data_type`, `created_at`, `modified_at`,
/// `example_count`, `session_count`, `last_session_start_time`,
/// `inputs_schema_definition`, `outputs_schema_definition` — and the API's
/// `tenant_id`, the workspace the SDK's `Dataset.url` puts in the web URL).
fn dataset_answer(body: &Value) -> String {
    serde_json::json!({
        "id": DATASET_ID,
        "tenant_id": TENANT_ID,
        "name": body["name"],
        "description": body["description"],
        "data_type": body["data_type"],
        "created_at": "2026-02-09T00:00:00.000000+00:00",
        "modified_at": "2026-02-09T00:00:00.000000+00:00",
        "example_count": 0,
        "session_count": 0,
        "last_session_start_time": null,
        "inputs_schema_definition": null,
        "outputs_schema_definition": null,
        "externally_managed": false,
        "transformations": null
    })
    .to_string()
}

/// LangSmith's answer to `POST /api/v1/examples/bulk`: the examples made
/// (langsmith 0.1.147 `schemas.Example`: `id`, `dataset_id`, `inputs`,
/// `outputs`, `metadata`, `created_at`, `modified_at`).
fn examples_answer(body: &Value) -> String {
    let made: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, e)| {
            serde_json::json!({
                "id": format!("00000000-0000-4000-8000-{i:012}"),
                "dataset_id": e["dataset_id"],
                "inputs": e["inputs"],
                "outputs": e["outputs"],
                "metadata": e["metadata"],
                "created_at": "2026-02-09T00:00:00.000000+00:00",
                "modified_at": "2026-02-09T00:00:00.000000+00:00"
            })
        })
        .collect();
    Value::from(made).to_string()
}

pub(crate) fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn by_flags_it_writes_the_bundle_and_uploads_it() {
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let langsmith = mock(200);
    let dir = inputs("create-flags");
    let mut flags = FLAGS.to_vec();
    flags.extend([
        "--tags",
        "rag, docs,rag",
        "--description",
        "Docs golden set",
    ]);
    let out = evals_with(
        &dir,
        &flags,
        &[
            ("EVAL_JUDGE_URL", &judge_url),
            ("LANGSMITH_API_KEY", "ls-test-key-123"),
            ("LANGSMITH_ENDPOINT", &langsmith.url),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("Dataset:     technical-docs-eval-dataset-v1"),
        "{stdout}"
    );
    assert!(stdout.contains("Total Pairs: 12"), "{stdout}");
    // The dataset's URL: another endpoint than LangSmith's, its API URL.
    let url = format!("{}/api/v1/datasets/{DATASET_ID}", langsmith.url);
    assert!(
        stdout.contains(&format!("LangSmith:   {url} (12 examples)")),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("Dataset URL: {url}")), "{stdout}");
    // Percentages rounded half up, from the counts shown.
    let mut shares = 0;
    for line in stdout.lines() {
        if let Some((count, pct)) = line
            .split_once(": ")
            .and_then(|(_, v)| v.trim().strip_suffix("%)"))
            .and_then(|v| v.split_once(" ("))
        {
            let (k, p): (usize, usize) = (count.parse().unwrap(), pct.parse().unwrap());
            assert_eq!(p, (k * 200 + 12) / 24, "{line}");
            shares += 1;
        }
    }
    assert_eq!(shares, 7, "{stdout}");
    assert!(stderr.contains("ELICIT: Quality Validation"), "{stderr}");

    // The bundle, seed 002's names.
    let eval = dir.join("data/eval");
    let jsonl = eval.join("technical-docs-eval-dataset-v1.jsonl");
    let rs = records(&jsonl);
    assert_eq!(rs.len(), 12);
    let created_at = rs[0]["metadata"]["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        created_at.len() == 20 && created_at.ends_with('Z') && &created_at[10..11] == "T",
        "{created_at}"
    );
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r["id"], format!("eval-{:03}", i + 1));
        assert_eq!(r["metadata"]["version"], 1, "{r}");
        assert_eq!(r["metadata"]["created_at"], created_at.as_str(), "{r}");
        assert_eq!(r["metadata"]["domain"], "technical-docs", "{r}");
        assert!(r["metadata"]["confidence"].is_string(), "{r}");
        assert!(
            r["query"].is_string() && r["ground_truth"].is_string(),
            "{r}"
        );
    }
    let queries: Vec<&str> = rs.iter().map(|r| r["query"].as_str().unwrap()).collect();
    // A one-word paraphrase is the same question: one is kept.
    assert!(queries.contains(&"How do I reset my password quickly?"));
    assert!(!queries.contains(&"How can I reset my password quickly?"));
    // Merged by query: the ground-truth file's answer, contexts and sources.
    let rag = &rs[0];
    assert_eq!(rag["source_docs"], serde_json::json!(["rag.md"]));
    assert_eq!(rag["metadata"]["query_type"], "factual");
    // A production trace: its answer, low confidence.
    let trace = rs
        .iter()
        .find(|r| r["query"] == "How does vector search find relevant chunks?")
        .unwrap();
    assert_eq!(trace["metadata"]["annotator"], "trace");
    assert_eq!(trace["metadata"]["confidence"], "low");
    // Generated from the corpus: the edge cases asked for among them.
    let edge: Vec<&str> = rs
        .iter()
        .filter_map(|r| r["metadata"]["edge_case"].as_str())
        .collect();
    assert!(
        edge.contains(&"unanswerable") || edge.contains(&"temporal"),
        "{edge:?}"
    );
    // The CSV export reads back to the same pairs.
    let csv = Dataset::load(eval.join("technical-docs-eval-dataset-v1.csv")).unwrap();
    assert_eq!(csv.samples.len(), 12);
    assert_eq!(csv.samples[0].input.last(), queries[0]);
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(eval.join("technical-docs-dataset-stats.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stats["samples"], 12);
    assert_eq!(stats["creation"]["domain"], "technical-docs");
    assert_eq!(stats["creation"]["context_organisation"], "single");
    // The duplicates: the summary's numbers are the stats file's.
    let shown = |label: &str| -> u64 {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|v| v.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        shown("Dropped:"),
        stats["creation"]["near_duplicates_dropped"]
            .as_u64()
            .unwrap(),
        "{stdout}"
    );
    assert!(
        shown("Dropped:") >= 1,
        "the paraphrase was dropped: {stdout}"
    );
    assert_eq!(
        shown("Left:"),
        stats["quality"]["findings"]["DUPLICATE_QUERIES"]
            .as_u64()
            .unwrap_or(0),
        "{stdout}"
    );
    let guide = std::fs::read_to_string(eval.join("technical-docs-annotation-guide.md")).unwrap();
    assert!(
        guide.contains("technical-docs-eval-dataset-v1.jsonl"),
        "{guide}"
    );

    // LangSmith: the dataset, then its examples, the key in x-api-key only.
    let seen = langsmith.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].0, "POST /api/v1/datasets HTTP/1.1");
    assert_eq!(seen[0].1.as_deref(), Some("ls-test-key-123"));
    assert_eq!(seen[0].2["name"], "technical-docs-eval-dataset-v1");
    assert_eq!(seen[0].2["description"], "Docs golden set");
    assert_eq!(seen[0].2["data_type"], "kv");
    assert_eq!(
        seen[0].2["extra"]["metadata"]["tags"],
        serde_json::json!(["rag", "docs"])
    );
    assert_eq!(seen[1].0, "POST /api/v1/examples/bulk HTTP/1.1");
    let examples = seen[1].2.as_array().unwrap();
    assert_eq!(examples.len(), 12);
    assert_eq!(examples[0]["dataset_id"], DATASET_ID);
    assert_eq!(examples[0]["inputs"]["query"], queries[0]);
    assert!(!format!("{stdout}{stderr}").contains("ls-test-key-123"));

    // A second run never overwrites: version 2.
    let out = evals_with(&dir, FLAGS, &[("EVAL_JUDGE_URL", &judge_url)]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v2 = records(&eval.join("technical-docs-eval-dataset-v2.jsonl"));
    assert!(v2.iter().all(|r| r["metadata"]["version"] == 2), "{v2:?}");
    assert!(
        text(&out)
            .0
            .contains("LangSmith:   not uploaded (LANGSMITH_API_KEY is not set)")
    );
}

#[test]
fn a_failed_upload_is_langsmith_upload_failed_and_keeps_the_files() {
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let langsmith = mock(503);
    let dir = inputs("create-upload-fails");
    let out = evals_with(
        &dir,
        FLAGS,
        &[
            ("EVAL_JUDGE_URL", &judge_url),
            ("LANGSMITH_API_KEY", "ls-test-key-456"),
            ("LANGSMITH_ENDPOINT", &langsmith.url),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("error: LANGSMITH_UPLOAD_FAILED: create the dataset: HTTP 503"),
        "{stderr}"
    );
    assert!(
        stdout.contains("LangSmith:   upload failed (LANGSMITH_UPLOAD_FAILED)"),
        "{stdout}"
    );
    assert!(
        dir.join("data/eval/technical-docs-eval-dataset-v1.jsonl")
            .is_file()
    );
    assert!(!format!("{stdout}{stderr}").contains("ls-test-key-456"));
}

#[test]
fn what_cannot_be_asked_must_be_given_and_the_minimum_holds() {
    let dir = inputs("create-refusals");
    // No terminal, no approval: nothing is written.
    let no_yes: Vec<&str> = FLAGS
        .iter()
        .copied()
        .filter(|a| {
            !matches!(
                *a,
                "--yes" | "--corpus" | "corpus" | "--edge-cases" | "unanswerable,temporal"
            )
        })
        // issue38:answers: `llm` without a corpus is refused at the start.
        .map(|a| if a == "llm" { "manual" } else { a })
        .collect();
    let out = evals_with(&dir, &no_yes, &[]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("approve the dataset with --yes"),
        "{stderr}"
    );
    assert!(
        !dir.join("data/eval")
            .join("technical-docs-eval-dataset-v1.jsonl")
            .exists()
    );
    // A question without a flag and no terminal: named.
    let out = evals_with(&dir, &["create", "--types", "factual"], &[]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("domain is needed: give --domain"),
        "{:?}",
        text(&out)
    );
    // Seed 002's minimum size.
    let out = evals_with(&dir, &["create", "--domain", "x", "--size", "5"], &[]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("5 is not in 10..=100000"),
        "{:?}",
        text(&out)
    );
    // Without a judge, no generation; queries alone with no answers fail
    // validation after approval (the files say what is missing).
    let out = evals_with(
        &dir,
        &[
            "create",
            "--domain",
            "support",
            "--types",
            "mixed",
            "--size",
            "10",
            "--queries",
            "queries.txt",
            "--edge-cases",
            "none",
            "--strategy",
            "manual",
            "--organisation",
            "single",
            "--yes",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("validation error(s) remain (DATASET_TOO_SMALL, MISSING_GROUND_TRUTH)"),
        "{stderr}"
    );
    assert!(
        dir.join("data/eval/support-eval-dataset-v1.jsonl")
            .is_file()
    );
}

#[test]
fn on_a_terminal_it_walks_the_seven_steps() {
    let dir = scratch("create-terminal");
    let mut p = evals_pty(&dir, &["create"], &[]);
    first_steps(&mut p, "2", "customer-support");
    step(&mut p, "(comma-separated, empty for none): ", "2");
    // Step 5: the examples of the category chosen, asked.
    p.exp_string("Category: Ambiguous").expect("the category");
    step(&mut p, "Query 1: ", "What does the pro option include?");
    step(&mut p, "Expected behavior [", "");
    step(&mut p, "Query 2: ", "Can it be moved?");
    step(
        &mut p,
        "Expected behavior [",
        "Ask which item the user means.",
    );
    step(&mut p, "Query 3: ", "");
    for i in 1..=10 {
        answer_pair(
            &mut p,
            &format!(
                "Open the admin page, choose feature {i}, add the member and save the change."
            ),
        );
    }
    step(
        &mut p,
        "Fix issues automatically where possible? (yes/no): ",
        "yes",
    );
    step(
        &mut p,
        "Review and approve final dataset? (yes/no): ",
        "yes",
    );
    p.exp_string("Evaluation Dataset Created")
        .expect("the closing report");
    let rest = p.exp_eof().expect("it ends");
    assert!(rest.contains("Total Pairs: 12"), "{rest}");
    let rs = records(&dir.join("data/eval/customer-support-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 12);
    for r in &rs {
        assert_eq!(r["metadata"]["annotator"], "human", "{r}");
        assert_eq!(r["metadata"]["confidence"], "high", "{r}");
        if r["metadata"]["edge_case"].is_null() {
            assert_eq!(r["metadata"]["query_type"], "procedural", "{r}");
        }
    }
    let edge: Vec<&Value> = rs
        .iter()
        .filter(|r| r["metadata"]["edge_case"] == "ambiguous")
        .collect();
    assert_eq!(edge.len(), 2, "{rs:?}");
    assert_eq!(edge[0]["query"], "What does the pro option include?");
    assert_eq!(
        edge[0]["ground_truth"],
        "The system should ask for clarification or answer each valid interpretation"
    );
    assert_eq!(edge[1]["ground_truth"], "Ask which item the user means.");
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("data/eval/customer-support-dataset-stats.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(stats["creation"]["context_organisation"], "collections");
    assert_eq!(
        stats["creation"]["edge_cases"],
        serde_json::json!(["ambiguous"])
    );
    assert_eq!(stats["creation"]["ground_truth_strategy"], "manual");
}

/// Six runs into one folder at once (issue 37: two exited 2 on a shared
/// scratch file): every run succeeds with a version of its own, each file
/// whole, no scratch or temporary file left.
#[test]
fn concurrent_runs_into_one_folder_each_write_their_own_version() {
    const RUNS: usize = 6;
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let dir = inputs("create-concurrent");
    let mut flags = FLAGS.to_vec();
    flags.push("--no-upload");
    let outputs: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..RUNS)
            .map(|_| s.spawn(|| evals_with(&dir, &flags, &[("EVAL_JUDGE_URL", &judge_url)])))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut names = Vec::new();
    for out in &outputs {
        let (stdout, stderr) = text(out);
        assert_eq!(code(out), 0, "{stdout}{stderr}");
        let name = stdout
            .lines()
            .find_map(|l| l.strip_prefix("Dataset:     "))
            .unwrap()
            .to_string();
        names.push(name);
    }
    names.sort();
    let want: Vec<String> = (1..=RUNS)
        .map(|v| format!("technical-docs-eval-dataset-v{v}"))
        .collect();
    assert_eq!(names, want, "each run its own version");
    let eval = dir.join("data/eval");
    for name in &want {
        assert_eq!(
            records(&eval.join(format!("{name}.jsonl"))).len(),
            12,
            "{name}"
        );
        let csv = std::fs::read_to_string(eval.join(format!("{name}.csv"))).unwrap();
        assert!(csv.starts_with("id,query,"), "{name}: {csv}");
    }
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(eval.join("technical-docs-dataset-stats.json")).unwrap(),
    )
    .unwrap();
    assert!(stats["creation"].is_object(), "{stats}");
    let left: Vec<String> = std::fs::read_dir(&eval)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("generated") || n.contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
