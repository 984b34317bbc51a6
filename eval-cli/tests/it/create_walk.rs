//! `evals create` walked as issue 38 asks: a wrong answer asked again,
//! the end of input and a declined approval keeping a draft that
//! `--resume` finishes, step 2's generation settings, step 5's examples,
//! step 7 asked (name, description, tags, the dataset URL) and refused
//! while validation errors remain, the defaults without a terminal.

use crate::common;

use std::path::Path;

use common::terminal::{PtySession, TEN_QUESTIONS, answer_pair, evals_pty, first_steps, step};
use common::{code, evals_with, repo, scratch, text};
use serde_json::Value;

use crate::create::{DATASET_ID, inputs, mock, records};

/// `evals create ARGS` on a pseudo-terminal in `dir`, with `env`.
fn create_pty(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> PtySession {
    evals_pty(dir, &[&["create"], args].concat(), env)
}

/// Issue 38: a typo at a menu or a yes/no question took a default or
/// "no" (at approval: "not approved: nothing was written"); each is asked
/// again with what is expected, and the bundle is written.
#[test]
fn on_a_terminal_a_wrong_answer_is_asked_again() {
    let dir = scratch("create-typos");
    let mut p = create_pty(&dir, &[], &[]);
    step(&mut p, "Domain: ", "support desk");
    step(&mut p, "Select types (comma-separated): ", "9");
    step(&mut p, "expected factual, analytical", "1,3");
    step(&mut p, "Your choice? [1/2/3/4]: ", "medium");
    step(&mut p, "expected 1, 2, 3 or 4", "4");
    step(&mut p, "Number of pairs (10 or more): ", "5");
    step(&mut p, "expected a number of 10 or more", "10");
    step(&mut p, "Your choice? [1/2/3/4/5]: ", "6");
    step(&mut p, "expected 1, 2, 3, 4 or 5", "1");
    for (i, q) in TEN_QUESTIONS.iter().enumerate() {
        step(&mut p, &format!("Query {}: ", i + 1), q);
    }
    step(&mut p, "Query 11: ", "");
    step(&mut p, "Your choice? [1/2/3/4]: ", "1");
    step(&mut p, "Your choice? [1/2/3]: ", "1");
    step(&mut p, "(comma-separated, empty for none): ", "7");
    step(&mut p, "expected unanswerable, ambiguous", "1");
    p.exp_string("Category: Unanswerable")
        .expect("the category");
    step(&mut p, "Query 1: ", "What is the CEO's shoe size?");
    step(&mut p, "Expected behavior [", "");
    step(&mut p, "Query 2: ", "");
    step(
        &mut p,
        "at least 2 examples per category",
        "Who won the chess cup of 1850?",
    );
    step(
        &mut p,
        "Expected behavior [",
        "Say the archive holds no such result.",
    );
    step(&mut p, "Query 3: ", "");
    for i in 1..=10 {
        answer_pair(
            &mut p,
            &format!("Open the admin page, choose feature {i}, make the change and save it."),
        );
    }
    step(
        &mut p,
        "Fix issues automatically where possible? (yes/no): ",
        "yse",
    );
    step(&mut p, "expected yes or no", "yes");
    step(
        &mut p,
        "Review and approve final dataset? (yes/no): ",
        "yess",
    );
    step(&mut p, "expected yes or no", "yes");
    p.exp_string("Evaluation Dataset Created")
        .expect("the closing report");
    let rest = p.exp_eof().expect("it ends");
    assert!(rest.contains("Total Pairs: 12"), "{rest}");
    let eval = dir.join("data/eval");
    let rs = records(&eval.join("support-desk-eval-dataset-v1.jsonl"));
    let edge: Vec<&Value> = rs
        .iter()
        .filter(|r| r["metadata"]["edge_case"] == "unanswerable")
        .collect();
    assert_eq!(edge.len(), 2, "{rs:?}");
    assert_eq!(
        edge[0]["ground_truth"],
        "The system should indicate it cannot find a relevant answer"
    );
    assert_eq!(edge[1]["query"], "Who won the chess cup of 1850?");
    assert_eq!(
        edge[1]["ground_truth"],
        "Say the archive holds no such result."
    );
    assert!(
        !eval.join(".support-desk-eval-dataset.draft.jsonl").exists(),
        "the draft goes once the bundle is written"
    );
}

/// Issue 38: the end of input mid-walk lost what was typed; it is an error
/// naming the question, the answers so far are in a draft it names, and
/// `--resume` goes on from there to the bundle.
#[test]
fn the_end_of_input_keeps_a_draft_and_resume_finishes_it() {
    let dir = scratch("create-resume");
    let mut p = create_pty(&dir, &[], &[]);
    first_steps(&mut p, "1", "billing");
    step(&mut p, "(comma-separated, empty for none): ", "");
    for i in 1..=4 {
        answer_pair(
            &mut p,
            &format!("Open the billing page, choose option {i}, confirm and save the change."),
        );
    }
    p.exp_string("Expected answer: ")
        .expect("the fifth question");
    p.send_control('d').expect("end of input");
    p.exp_string("the input ended at \"Expected answer:\"")
        .expect("the question named");
    let rest = p.exp_eof().expect("it ends");
    let draft = dir.join("data/eval/.billing-eval-dataset.draft.jsonl");
    assert!(
        rest.contains("the answers so far are kept in data/eval/.billing-eval-dataset.draft.jsonl"),
        "{rest}"
    );
    let kept = std::fs::read_to_string(&draft).unwrap();
    assert!(kept.contains("choose option 4"), "{kept}");
    assert!(!dir.join("data/eval/billing-eval-dataset-v1.jsonl").exists());

    let mut p = create_pty(&dir, &["--resume", "--fix"], &[]);
    p.exp_string("resuming from").expect("the draft taken");
    for i in 5..=10 {
        answer_pair(
            &mut p,
            &format!("Open the billing page, choose option {i}, confirm and save the change."),
        );
    }
    step(&mut p, "Review and approve final dataset? (yes/no): ", "no");
    // Not approved: nothing written, and the draft (all ten answers) said.
    p.exp_string("not approved: nothing was written")
        .expect("not approved");
    let rest = p.exp_eof().expect("it ends");
    assert!(
        rest.contains("kept in data/eval/.billing-eval-dataset.draft.jsonl"),
        "{rest}"
    );
    assert!(!dir.join("data/eval/billing-eval-dataset-v1.jsonl").exists());
    // A script finishes it: the draft's answers stand for the flags.
    let out = evals_with(&dir, &["create", "--resume", "--fix", "--yes"], &[]);
    assert!(
        text(&out).0.contains("Evaluation Dataset Created"),
        "{:?}",
        text(&out)
    );
    let rs = records(&dir.join("data/eval/billing-eval-dataset-v1.jsonl"));
    assert_eq!(rs.len(), 10);
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r["query"], TEN_QUESTIONS[i]);
        assert!(
            r["ground_truth"]
                .as_str()
                .unwrap()
                .contains(&format!("option {}", i + 1)),
            "{r}"
        );
    }
    assert!(!draft.exists(), "the draft goes once the bundle is written");
}

/// Ten pairs with nothing for validation to call an error.
fn golden_file(dir: &Path) {
    let lines: Vec<String> = TEN_QUESTIONS
        .iter()
        .enumerate()
        .map(|(i, q)| {
            serde_json::json!({"query": q,
                "ground_truth": format!("Open the settings page, pick entry {i} and confirm the change with the save button."),
                "contexts": [format!("Settings entry {i} is changed from the settings page.")],
                "source_docs": [format!("settings-{i}.md")]})
            .to_string()
        })
        .collect();
    std::fs::write(dir.join("golden.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// Issue 38: step 7 uploaded without asking; it asks, then the name
/// (default `{domain}-eval-dataset-v{n}`), description and tags, sends
/// them, and prints the dataset's URL.
#[test]
fn on_a_terminal_step_7_is_asked_and_prints_the_dataset_url() {
    let dir = scratch("create-upload-asked");
    golden_file(&dir);
    let langsmith = mock(200);
    let mut p = create_pty(
        &dir,
        &[
            "--domain",
            "support",
            "--types",
            "mixed",
            "--size",
            "10",
            "--queries",
            "golden.jsonl",
            "--strategy",
            "manual",
            "--organisation",
            "single",
            "--edge-cases",
            "none",
            "--fix",
            "--yes",
        ],
        &[
            ("LANGSMITH_API_KEY", "ls-test-key-789"),
            ("LANGSMITH_ENDPOINT", &langsmith.url),
        ],
    );
    step(&mut p, "Upload dataset to LangSmith? (yes/no): ", "maybe");
    step(&mut p, "expected yes or no", "yes");
    step(&mut p, "Name [support-eval-dataset-v1]: ", "");
    step(&mut p, "Description: ", "Support golden set");
    step(&mut p, "Tags (comma-separated): ", "rag, support");
    let url = format!("{}/api/v1/datasets/{DATASET_ID}", langsmith.url);
    p.exp_string(&format!("Dataset URL: {url}"))
        .expect("the URL");
    p.exp_eof().expect("it ends");
    let seen = langsmith.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].2["name"], "support-eval-dataset-v1");
    assert_eq!(seen[0].2["description"], "Support golden set");
    assert_eq!(
        seen[0].2["extra"]["metadata"]["tags"],
        serde_json::json!(["rag", "support"])
    );
    assert_eq!(seen[1].2.as_array().unwrap().len(), 10);
}

/// Issue 38: a dataset with validation errors was uploaded; it is not,
/// unless `--force-upload` (the files are written either way).
#[test]
fn validation_errors_block_the_upload_unless_forced() {
    let dir = inputs("create-upload-blocked");
    let args = [
        "create",
        "--domain",
        "support",
        "--queries",
        "queries.txt",
        "--strategy",
        "manual",
        "--organisation",
        "single",
        "--edge-cases",
        "none",
        "--yes",
    ];
    let langsmith = mock(200);
    let env = [
        ("LANGSMITH_API_KEY", "ls-test-key-321"),
        ("LANGSMITH_ENDPOINT", langsmith.url.as_str()),
    ];
    let out = evals_with(&dir, &args, &env);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "not uploaded: validation errors remain (DATASET_TOO_SMALL, MISSING_GROUND_TRUTH)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--force-upload"), "{stderr}");
    assert!(langsmith.seen.lock().unwrap().is_empty());
    assert!(
        dir.join("data/eval/support-eval-dataset-v1.jsonl")
            .is_file()
    );

    let mut forced = args.to_vec();
    forced.push("--force-upload");
    let out = evals_with(&dir, &forced, &env);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(text(&out).0.contains("Dataset URL: "), "{:?}", text(&out));
    assert_eq!(langsmith.seen.lock().unwrap().len(), 2);
}

/// Issue 38: without a terminal `--types` and `--size` were required;
/// only the domain is (types: mixed, size: 50, each said in a note).
#[test]
fn without_a_terminal_only_the_domain_is_needed() {
    let dir = inputs("create-defaults");
    let out = evals_with(
        &dir,
        &[
            "create",
            "--domain",
            "support",
            "--queries",
            "queries.txt",
            "--yes",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("Evaluation Dataset Created"),
        "{stdout}{stderr}"
    );
    assert!(stderr.contains("note: no --types: mixed"), "{stderr}");
    assert!(stderr.contains("note: no --size: 50 pairs"), "{stderr}");
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("data/eval/support-dataset-stats.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stats["creation"]["target_size"], 50);
    assert_eq!(
        stats["creation"]["query_types"],
        serde_json::json!(["factual", "analytical", "procedural", "multi_hop"])
    );
    // Unanswered pairs claim no annotator or confidence.
    let rs = records(&dir.join("data/eval/support-eval-dataset-v1.jsonl"));
    for r in &rs {
        assert!(r["ground_truth"].is_null(), "{r}");
        assert!(r["metadata"]["annotator"].is_null(), "{r}");
        assert!(r["metadata"]["confidence"].is_null(), "{r}");
        assert_eq!(r["metadata"]["version"], 1, "{r}");
    }
}

/// Issue 38: edge cases chosen with no corpus and no examples gave none,
/// silently; it is an error before anything is made, and
/// `--edge-examples` gives them (expected behaviour as the ground truth).
#[test]
fn edge_cases_need_examples_or_a_corpus() {
    let dir = inputs("create-edge-examples");
    let base = [
        "create",
        "--domain",
        "legal",
        "--queries",
        "queries.txt",
        "--ground-truth",
        "truth.jsonl",
        "--edge-cases",
        "unanswerable",
        "--yes",
    ];
    let out = evals_with(&dir, &base, &[]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("edge cases unanswerable: at least 2 examples each are needed"),
        "{:?}",
        text(&out)
    );
    assert!(!dir.join("data/eval/legal-eval-dataset-v1.jsonl").exists());

    std::fs::write(
        dir.join("edge.csv"),
        "category,query,expected\nunanswerable,What will the court rule in 2090?,\nunanswerable,Which judge wrote the sealed 1790 opinion?,\nout-of-scope,What is a good pasta recipe?,Decline: cooking is outside the legal domain.\nout_of_scope,Which football team will win the league?,\n",
    )
    .unwrap();
    let mut with = base.to_vec();
    with.extend(["--edge-examples", "edge.csv"]);
    let out = evals_with(&dir, &with, &[]);
    assert!(
        text(&out).0.contains("Evaluation Dataset Created"),
        "{:?}",
        text(&out)
    );
    let rs = records(&dir.join("data/eval/legal-eval-dataset-v1.jsonl"));
    let un = rs
        .iter()
        .find(|r| r["query"] == "What will the court rule in 2090?")
        .unwrap();
    assert_eq!(un["metadata"]["edge_case"], "unanswerable");
    assert_eq!(
        un["ground_truth"],
        "The system should indicate it cannot find a relevant answer"
    );
    assert_eq!(un["metadata"]["annotator"], "file");
    let out_of_scope = rs
        .iter()
        .find(|r| r["metadata"]["edge_case"] == "out_of_scope")
        .unwrap();
    assert_eq!(
        out_of_scope["ground_truth"],
        "Decline: cooking is outside the legal domain."
    );
    // Merged from the ground-truth file: annotated by the file.
    let rag = rs
        .iter()
        .find(|r| r["query"] == "What is retrieval-augmented generation?")
        .unwrap();
    assert_eq!(rag["metadata"]["annotator"], "file");
}

/// Issue 38: synthetic generation asked neither the model nor queries per
/// document; `--generation-model` and `--per-document` (asked on a
/// terminal) reach the generator, and what it made is marked.
#[test]
fn step_2_generation_takes_the_model_and_queries_per_document() {
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let dir = inputs("create-generation");
    let two = dir.join("two-docs");
    std::fs::create_dir_all(&two).unwrap();
    for name in ["rag.md", "paris.md"] {
        std::fs::copy(repo().join("examples/corpus").join(name), two.join(name)).unwrap();
    }
    let out = evals_with(
        &dir,
        &[
            "create",
            "--domain",
            "docs",
            "--types",
            "factual",
            "--size",
            "20",
            "--queries",
            "queries.txt",
            "--ground-truth",
            "truth.jsonl",
            "--corpus",
            "two-docs",
            "--generation-model",
            "gen-model-x",
            "--per-document",
            "1",
            "--strategy",
            "llm",
            "--organisation",
            "single",
            "--edge-cases",
            "none",
            "--yes",
        ],
        &[("EVAL_JUDGE_URL", &judge_url)],
    );
    assert!(
        text(&out).0.contains("Evaluation Dataset Created"),
        "{:?}",
        text(&out)
    );
    let rs = records(&dir.join("data/eval/docs-eval-dataset-v1.jsonl"));
    let made: Vec<&Value> = rs
        .iter()
        .filter(|r| r["metadata"]["generated"] == true)
        .collect();
    assert!(
        (1..=2).contains(&made.len()),
        "one a document, two documents: {rs:?}"
    );
    for r in &made {
        assert_eq!(r["metadata"]["generator_model"], "gen-model-x", "{r}");
        assert_eq!(r["metadata"]["annotator"], "llm", "{r}");
    }
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("data/eval/docs-dataset-stats.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stats["creation"]["generation_model"], "gen-model-x");
    assert_eq!(stats["creation"]["per_document"], 1);
}

/// Step 2 on a terminal with a corpus: the generation model and the
/// queries per document are asked (a wrong number asked again).
#[test]
fn on_a_terminal_step_2_asks_the_generation_model_and_queries_per_document() {
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let dir = inputs("create-generation-asked");
    let mut p = create_pty(
        &dir,
        &[
            "--domain",
            "docs",
            "--types",
            "factual",
            "--size",
            "12",
            "--queries",
            "queries.txt",
            "--ground-truth",
            "truth.jsonl",
            "--corpus",
            "corpus",
            "--strategy",
            "llm",
            "--review",
            "accept",
            "--organisation",
            "single",
            "--edge-cases",
            "none",
            "--fix",
            "--yes",
        ],
        &[("EVAL_JUDGE_URL", &judge_url)],
    );
    step(&mut p, "Generation model [", "gen-model-y");
    step(&mut p, "Queries per document [", "zero");
    step(&mut p, "expected a number of 1 or more", "1");
    p.exp_string("Evaluation Dataset Created")
        .expect("the report");
    p.exp_eof().expect("it ends");
    let rs = records(&dir.join("data/eval/docs-eval-dataset-v1.jsonl"));
    let made: Vec<&Value> = rs
        .iter()
        .filter(|r| r["metadata"]["generated"] == true)
        .collect();
    assert!(!made.is_empty(), "{rs:?}");
    assert!(
        made.iter()
            .all(|r| r["metadata"]["generator_model"] == "gen-model-y"),
        "{made:?}"
    );
}

/// `--upload` without a key, `--resume` without a draft: refused before
/// anything is asked or made, saying what to change.
#[test]
fn upload_without_a_key_and_resume_without_a_draft_are_refused() {
    let dir = inputs("create-refused-flags");
    let out = evals_with(&dir, &["create", "--domain", "x", "--upload"], &[]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("--upload: LANGSMITH_API_KEY is not set"),
        "{:?}",
        text(&out)
    );
    let out = evals_with(&dir, &["create", "--resume"], &[]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--resume: no draft"),
        "{:?}",
        text(&out)
    );
    assert!(!dir.join("data/eval").exists());
}

/// Nothing typed is lost even when the process is killed mid step 3: the
/// draft holds every pair answered so far, not only the steps finished.
#[test]
fn a_kill_mid_annotation_keeps_the_pairs_answered_so_far() {
    let dir = scratch("create-killed");
    let mut p = create_pty(&dir, &[], &[]);
    first_steps(&mut p, "1", "killed");
    step(&mut p, "(comma-separated, empty for none): ", "");
    for i in 1..=3 {
        answer_pair(
            &mut p,
            &format!("Open the billing page, choose option {i}, confirm and save the change."),
        );
    }
    p.exp_string("Expected answer: ")
        .expect("the fourth question");
    p.process_mut()
        .signal(rexpect::process::Signal::SIGKILL)
        .expect("killed");
    let _ = p.exp_eof();
    let draft = dir.join("data/eval/.killed-eval-dataset.draft.jsonl");
    let kept = std::fs::read_to_string(&draft).expect("the draft");
    for i in 1..=3 {
        assert!(kept.contains(&format!("choose option {i}")), "{kept}");
    }
    assert!(kept.contains("help/admin.md"), "the sources typed: {kept}");
}
