//! `evals generate` against the scripted OpenAI-compatible judge
//! (`eval_examples::judge`) on the demo agent's corpus: the dataset it
//! writes passes `evals lint`, the same seed asks the same questions, an
//! existing output is continued, a judge that goes down mid-way gives
//! SYNTHETIC_GENERATION_FAILED and keeps what was made, and near-duplicates
//! (of each other and of an `--against` dataset) are dropped.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{code, evals_with, repo, scratch, text};
use eval_datasets::similarity::{Query, same_question};
use eval_examples::demo::{CORPUS, corpus_file};
use eval_examples::judge::{self, JudgeConfig};
use serde_json::Value;

const MODEL: &str = "judge-model-1";

fn judge_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("EVAL_JUDGE_URL", format!("{url}/v1")),
        ("EVAL_JUDGE_MODEL", MODEL.to_string()),
    ]
}

fn generate(
    dir: &Path,
    judge_url: &str,
    args: &[&str],
    extra: &[(&str, &str)],
) -> (i32, String, String) {
    let env = judge_env(judge_url);
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(extra);
    let mut argv = vec!["generate"];
    argv.extend_from_slice(args);
    let out = evals_with(dir, &argv, &all);
    let (stdout, stderr) = text(&out);
    (code(&out), stdout, stderr)
}

fn corpus_dir() -> PathBuf {
    repo().join("examples/corpus")
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn queries(path: &Path) -> Vec<String> {
    records(path)
        .iter()
        .map(|r| r["query"].as_str().unwrap().to_string())
        .collect()
}

fn lint(dir: &Path, file: &str) -> Value {
    let out = evals_with(dir, &["lint", "--json", file], &[]);
    let (stdout, stderr) = text(&out);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"))
}

fn no_two_alike(list: &[String]) {
    for (i, a) in list.iter().enumerate() {
        for b in &list[..i] {
            assert!(
                same_question(&Query::new(a), &Query::new(b)).is_none(),
                "`{a}` repeats `{b}`"
            );
        }
    }
}

#[test]
fn examples_corpus_is_the_demo_agents_corpus() {
    // EVALS_WRITE_CORPUS=1 rewrites examples/corpus from the demo agent.
    if std::env::var_os("EVALS_WRITE_CORPUS").is_some() {
        eval_examples::demo::write_corpus(&corpus_dir()).unwrap();
    }
    let files: BTreeSet<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let want: BTreeSet<String> = CORPUS.iter().map(|d| format!("{}.md", d.id)).collect();
    assert_eq!(files, want);
    for doc in CORPUS {
        let text = std::fs::read_to_string(corpus_dir().join(format!("{}.md", doc.id))).unwrap();
        assert_eq!(text, corpus_file(doc), "{}", doc.id);
    }
}

#[test]
fn a_generated_dataset_has_every_field_and_passes_lint() {
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let dir = scratch("generate-lint");
    let prices = dir.join("prices.json");
    std::fs::write(
        &prices,
        format!(r#"{{"{MODEL}": {{"input": 1.0, "output": 2.0}}}}"#),
    )
    .unwrap();
    let corpus = corpus_dir();
    let (code, stdout, stderr) = generate(
        &dir,
        &server.url(),
        &[
            corpus.to_str().unwrap(),
            "--output",
            "golden.jsonl",
            "--count",
            "15",
            "--domain",
            "technical-docs",
            "--json",
        ],
        &[("EVAL_PRICES", prices.to_str().unwrap())],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["total"], 15);
    assert_eq!(outcome["added"], 15);
    assert_eq!(outcome["model"], MODEL);
    // Tokens counted by the judge client, priced with the table: $1/M in, $2/M out.
    let usage = &outcome["usage"];
    let (p, c) = (
        usage["prompt_tokens"].as_u64().unwrap(),
        usage["completion_tokens"].as_u64().unwrap(),
    );
    assert!(p > 0 && c > 0, "{usage}");
    assert!(usage["calls"].as_u64().unwrap() >= 15);
    let cost = outcome["cost"].as_f64().unwrap();
    eprintln!("15 samples: {usage}, cost {cost}");
    assert!(
        (cost - (p as f64 + 2.0 * c as f64) / 1e6).abs() < 1e-12,
        "{cost}"
    );

    let path = dir.join("golden.jsonl");
    let records = records(&path);
    assert_eq!(records.len(), 15);
    let chunks: BTreeSet<String> = CORPUS
        .iter()
        .map(|d| corpus_file(d).trim().to_string())
        .collect();
    let mut types = BTreeSet::new();
    let mut difficulties = BTreeSet::new();
    for r in &records {
        let m = &r["metadata"];
        assert_eq!(m["synthetic"], true, "{r}");
        assert_eq!(m["generator_model"], MODEL);
        assert_eq!(m["domain"], "technical-docs", "{r}");
        assert_eq!(
            m["confidence"], "medium",
            "an LLM's answer, not reviewed: {r}"
        );
        assert!(
            r["ground_truth"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .count()
                >= 10,
            "{r}"
        );
        let contexts: Vec<&str> = r["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(!contexts.is_empty());
        for c in &contexts {
            assert!(
                chunks.contains(*c),
                "a context is a chunk of the corpus: {c}"
            );
        }
        let docs: Vec<&str> = r["source_docs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        for d in &docs {
            assert!(corpus.join(d).is_file(), "{d}");
        }
        let kind = m["query_type"].as_str().unwrap();
        if matches!(kind, "multi_hop" | "contradictory") {
            assert_eq!(docs.len(), 2, "across two documents: {r}");
        }
        // Seed 002's edge cases, multi-hop among them.
        let edge = matches!(
            kind,
            "multi_hop"
                | "ambiguous"
                | "temporal"
                | "contradictory"
                | "unanswerable"
                | "out_of_scope"
        );
        assert_eq!(m["edge_case"].as_str(), edge.then_some(kind), "{r}");
        types.insert(kind.to_string());
        difficulties.insert(m["difficulty"].as_str().unwrap().to_string());
    }
    // Seed 002's vocabulary: its four query types and every edge case.
    let all = [
        "ambiguous",
        "analytical",
        "contradictory",
        "factual",
        "multi_hop",
        "out_of_scope",
        "procedural",
        "temporal",
        "unanswerable",
    ];
    assert_eq!(types, all.iter().map(|s| s.to_string()).collect());
    assert_eq!(difficulties.len(), 3);
    no_two_alike(&queries(&path));
    let findings = lint(&dir, "golden.jsonl");
    assert_eq!(findings["errors"], 0, "{findings}");
    assert_eq!(findings["warnings"], 0, "{findings}");

    // The same seed asks the same questions; another seed others.
    let (code, _, stderr) = generate(
        &dir,
        &server.url(),
        &[
            corpus.to_str().unwrap(),
            "-o",
            "again.jsonl",
            "--count",
            "15",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(queries(&dir.join("again.jsonl")), queries(&path));
    let (code, _, stderr) = generate(
        &dir,
        &server.url(),
        &[
            corpus.to_str().unwrap(),
            "-o",
            "other.jsonl",
            "--count",
            "15",
            "--seed",
            "9",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_ne!(queries(&dir.join("other.jsonl")), queries(&path));
}

#[test]
fn an_existing_output_is_continued_to_the_count_with_a_backup() {
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let dir = scratch("generate-resume");
    let corpus = corpus_dir();
    let corpus = corpus.to_str().unwrap();
    let (code, _, stderr) = generate(
        &dir,
        &server.url(),
        &[corpus, "-o", "g.jsonl", "--count", "10"],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    let before = std::fs::read_to_string(dir.join("g.jsonl")).unwrap();
    let (code, stdout, stderr) = generate(
        &dir,
        &server.url(),
        &[corpus, "-o", "g.jsonl", "--count", "14"],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("14 samples (4 new, 10 kept)"), "{stdout}");
    let after = records(&dir.join("g.jsonl"));
    assert_eq!(after.len(), 14);
    let kept: Vec<Value> = before
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        &after[..10],
        &kept[..],
        "the samples made before are kept as they were"
    );
    let ids: BTreeSet<&str> = after.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 14, "new ids continue the numbering");
    no_two_alike(&queries(&dir.join("g.jsonl")));
    let backups: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".bak"))
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), before);
    // At the count already: nothing asked, nothing changed.
    let (code, stdout, _) = generate(
        &dir,
        &server.url(),
        &[corpus, "-o", "g.jsonl", "--count", "14"],
        &[],
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("0 calls"), "{stdout}");
    assert_eq!(records(&dir.join("g.jsonl")), after);
    // --fresh starts over, the file as it was backed up first.
    let (code, stdout, stderr) = generate(
        &dir,
        &server.url(),
        &[
            corpus, "-o", "g.jsonl", "--count", "10", "--fresh", "--seed", "3",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("10 samples (10 new, 0 kept)"), "{stdout}");
    assert_eq!(common::backups(&dir).len(), 2);
}

#[test]
fn a_judge_failing_mid_way_is_synthetic_generation_failed_and_keeps_the_samples() {
    // Five answers, then every call gets 500.
    let failing = judge::spawn(JudgeConfig {
        fail_after: Some(5),
        ..JudgeConfig::default()
    })
    .unwrap();
    let dir = scratch("generate-fail");
    let corpus = corpus_dir();
    let corpus = corpus.to_str().unwrap();
    let (code, stdout, stderr) = generate(
        &dir,
        &failing.url(),
        &[
            corpus, "-o", "g.jsonl", "--count", "12", "--batch", "2", "--json",
        ],
        &[],
    );
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("SYNTHETIC_GENERATION_FAILED"), "{stderr}");
    assert!(stderr.contains("HTTP 500"), "the cause is named: {stderr}");
    assert!(stderr.contains("samples made so far are kept"), "{stderr}");
    // The outcome so far is still reported: five answers, each kept or
    // dropped as a near-duplicate; the failing calls were retried.
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    let added = outcome["added"].as_u64().unwrap();
    assert_eq!(added + outcome["dropped"].as_u64().unwrap(), 5, "{outcome}");
    assert!(
        outcome["usage"]["retries"].as_u64().unwrap() >= 4,
        "{outcome}"
    );
    let kept = records(&dir.join("g.jsonl"));
    assert_eq!(kept.len() as u64, added);
    assert!(added >= 3, "{outcome}");
    // A healthy judge finishes the job from there.
    let healthy = judge::spawn(JudgeConfig::default()).unwrap();
    let (code, _, stderr) = generate(
        &dir,
        &healthy.url(),
        &[corpus, "-o", "g.jsonl", "--count", "12"],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    let all = records(&dir.join("g.jsonl"));
    assert_eq!(all.len(), 12);
    assert_eq!(
        &all[..kept.len()],
        &kept[..],
        "the samples made before are kept"
    );
    assert_eq!(lint(&dir, "g.jsonl")["errors"], 0);
}

#[test]
fn near_duplicates_of_each_other_and_of_another_dataset_are_dropped() {
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let dir = scratch("generate-dupes");
    // A corpus where two documents say the same thing.
    let corpus = dir.join("corpus");
    eval_examples::demo::write_corpus(&corpus).unwrap();
    std::fs::copy(corpus.join("rag.md"), corpus.join("rag-copy.md")).unwrap();
    std::fs::copy(corpus.join("chunking.md"), corpus.join("chunking-copy.md")).unwrap();
    let c = corpus.to_str().unwrap();
    let (code, stdout, stderr) = generate(
        &dir,
        &server.url(),
        &[
            c,
            "-o",
            "first.jsonl",
            "--count",
            "24",
            "--types",
            "factual",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert!(outcome["dropped"].as_u64().unwrap() > 0, "{outcome}");
    let first = queries(&dir.join("first.jsonl"));
    assert_eq!(first.len(), 24);
    no_two_alike(&first);
    // Against the first dataset, the same seed's questions are all taken.
    let (code, stdout, stderr) = generate(
        &dir,
        &server.url(),
        &[
            c,
            "-o",
            "second.jsonl",
            "--count",
            "10",
            "--types",
            "factual",
            "--against",
            "first.jsonl",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert!(outcome["dropped"].as_u64().unwrap() >= 10, "{outcome}");
    let second = queries(&dir.join("second.jsonl"));
    assert_eq!(second.len(), 10);
    for q in &second {
        for f in &first {
            assert!(
                same_question(&Query::new(q), &Query::new(f)).is_none(),
                "`{q}` repeats `{f}`"
            );
        }
    }
}

#[test]
fn csv_output_from_an_unrag_corpus_passes_lint() {
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let dir = scratch("generate-csv");
    let unrag = repo().join("examples/evals/support.json");
    let (code, stdout, stderr) = generate(
        &dir,
        &server.url(),
        &[
            unrag.to_str().unwrap(),
            "-o",
            "support.csv",
            "--count",
            "10",
            "--difficulty",
            "easy=1,hard=1",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let data = eval_datasets::Dataset::load(dir.join("support.csv")).unwrap();
    assert_eq!(data.samples.len(), 10);
    for s in &data.samples {
        let docs = s.extra["source_docs"].as_array().unwrap();
        assert!(
            docs.iter()
                .all(|d| d.as_str().unwrap().starts_with("eval:support:doc:")),
            "{docs:?}"
        );
        assert!(matches!(
            s.metadata["difficulty"].as_str(),
            Some("easy" | "hard")
        ));
    }
    let findings = lint(&dir, "support.csv");
    assert_eq!(findings["errors"], 0, "{findings}");
}

#[test]
fn what_cannot_run_says_why() {
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let dir = scratch("generate-errors");
    let (code, _, stderr) = generate(&dir, &server.url(), &["missing-dir", "-o", "g.jsonl"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("CORPUS_NOT_FOUND: missing-dir"), "{stderr}");
    let corpus = corpus_dir();
    let corpus = corpus.to_str().unwrap();
    let (code, _, stderr) = generate(
        &dir,
        &server.url(),
        &[corpus, "-o", "g.jsonl", "--mix", "factual=2,nope=1"],
        &[],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("--mix: unknown value `nope`"), "{stderr}");
    let (code, _, stderr) = generate(&dir, &server.url(), &[corpus, "-o", "g.json"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("expected .jsonl or .csv"), "{stderr}");
    // Said before the corpus is read.
    assert!(!stderr.contains("generating up to"), "{stderr}");
    // One document cannot give multi-hop questions: said before any call.
    std::fs::write(
        dir.join("one.md"),
        "A single document about vector search and chunks.",
    )
    .unwrap();
    let (code, _, stderr) = generate(&dir, &server.url(), &["one.md", "-o", "one.jsonl"], &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("multi_hop questions need passages of two documents"),
        "{stderr}"
    );
    assert!(!dir.join("one.jsonl").exists());
    let (code, _, stderr) = generate(
        &dir,
        &server.url(),
        &[
            "one.md",
            "-o",
            "one.jsonl",
            "--types",
            "factual",
            "--count",
            "10",
        ],
        &[],
    );
    assert!(code <= 1, "{stderr}");
    assert!(!records(&dir.join("one.jsonl")).is_empty());
    // Seed 002's minimum size: fewer than 10 is refused before any call.
    let (code, _, stderr) = generate(
        &dir,
        &server.url(),
        &[corpus, "-o", "few.jsonl", "--count", "5"],
        &[],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("5 is not in 10..=100000"), "{stderr}");
    assert!(!dir.join("few.jsonl").exists());
    // No judge configured.
    let out = evals_with(&dir, &["generate", corpus, "-o", "g.jsonl"], &[]);
    assert_eq!(common::code(&out), 2);
    assert!(text(&out).1.contains("EVAL_JUDGE_URL"), "{}", text(&out).1);
    // An existing output that is not a dataset is left alone.
    std::fs::write(dir.join("bad.jsonl"), "not json\n").unwrap();
    let (code, _, stderr) = generate(&dir, &server.url(), &[corpus, "-o", "bad.jsonl"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("it was not changed"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("bad.jsonl")).unwrap(),
        "not json\n"
    );
    assert!(!dir.join("g.jsonl").exists() && !dir.join("g.json").exists());
}

#[test]
fn concurrent_runs_into_one_output_take_turns_and_lose_nothing() {
    // Each run reads the output, adds what its count still needs and writes
    // it back: without the output's lock, runs started together all read
    // an empty file and the last one to write drops the others' samples.
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let dir = scratch("generate-concurrent");
    let corpus = corpus_dir();
    let runs: Vec<_> = ["10", "12", "14"]
        .into_iter()
        .map(|count| {
            let (dir, corpus, url) = (dir.clone(), corpus.clone(), server.url());
            std::thread::spawn(move || {
                let args = [
                    corpus.to_str().unwrap(),
                    "--output",
                    "golden.jsonl",
                    "--count",
                    count,
                    "--json",
                ];
                generate(&dir, &url, &args, &[])
            })
        })
        .collect();
    let mut added = 0;
    for run in runs {
        let (code, stdout, stderr) = run.join().unwrap();
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let outcome: Value = serde_json::from_str(&stdout).unwrap();
        added += outcome["added"].as_u64().unwrap();
    }
    let written = records(&dir.join("golden.jsonl"));
    assert_eq!(written.len(), 14);
    assert_eq!(added, 14, "every sample a run added is in the file");
    let ids: BTreeSet<String> = written.iter().map(|r| r["id"].to_string()).collect();
    assert_eq!(ids.len(), 14);
}
