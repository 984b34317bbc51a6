//! Every agentspec and letta-evals dataset among the public fixtures
//! (`tests/fixtures/public`, real files written by others, copied from the
//! project's shared fixtures with their PROVENANCE.md) loads, with a
//! pinned sample count, and the quirks PROVENANCE.md lists come out right.

use std::path::{Path, PathBuf};

use eval_datasets::{Dataset, Expected, Input};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/public")
}

fn load(rel: &str) -> Dataset {
    let path = fixtures().join(rel);
    Dataset::load_as(&path, rel).unwrap_or_else(|e| panic!("{rel} should load:\n{e}"))
}

/// (path under fixtures/public, samples). Every file is expected to load.
const PINNED: &[(&str, usize)] = &[
    (
        "agentspec/agents-oss__agentspec/747919b/examples/gymcoach/eval/exercise-advice.jsonl",
        3,
    ),
    (
        "agentspec/agents-oss__agentspec/747919b/examples/gymcoach/eval/workout-qa.jsonl",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/23da318/examples/fetch-webpage-agent-tool-grader/datasets/fetch-webpage.jsonl",
        50,
    ),
    (
        "letta-evals/letta-ai__letta-evals/28bf491/examples/simple-tool-grader/dataset.csv",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/386ebb6/docs/examples/modal-sandbox/samples.jsonl",
        1,
    ),
    (
        "letta-evals/letta-ai__letta-evals/475d1dd/letta-leaderboard/sidecar-envs/user-memory-update/data/dataset_memory.jsonl",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/5502439/examples/letta-code-compaction/dataset.jsonl",
        1,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a013b56/examples/aggregation-grader/dataset.csv",
        3,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/custom-tool-grader-and-extractor/dataset.jsonl",
        3,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/letta-code-simple-edit/dataset.jsonl",
        3,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/multi-model-simple-rubric-grader/dataset.jsonl",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/multiturn-per-turn-grading/dataset.jsonl",
        3,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/per-sample-rubric/dataset.jsonl",
        3,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/programmatic-agent-creation/dataset.jsonl",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/examples/reward-composition/dataset.csv",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/letta-leaderboard/filesystem-agent/datasets/filesystem_cloud.jsonl",
        100,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a207c56/letta-leaderboard/skills-suite/data/dataset_select_use.csv",
        100,
    ),
    (
        "letta-evals/letta-ai__letta-evals/a683727/examples/multiturn-memory-block-extractor/dataset.jsonl",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/ae4878e/examples/letta-agent-rubric-grader/dataset.csv",
        5,
    ),
    (
        "letta-evals/letta-ai__letta-evals/b847734/examples/simple-tool-grader/tool_output_dataset.csv",
        3,
    ),
    (
        "letta-evals/letta-ai__letta-evals/b9f7c7c/letta-leaderboard/sidecar-envs/compression/data/dataset_all.jsonl",
        6,
    ),
    (
        "letta-evals/letta-ai__letta-evals/e63f47c/letta-leaderboard/memory-defrag-suite/data/dataset_defrag.csv",
        1,
    ),
    (
        "letta-evals/letta-ai__letta-evals/e63f47c/letta-leaderboard/memory-defrag-suite/data/dataset_defrag.jsonl",
        1,
    ),
];

fn dataset_files(dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {} (tests/fixtures/public): {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            dataset_files(&path, out);
        } else if eval_datasets::Format::from_path(&path.to_string_lossy()).is_ok() {
            let rel = path.strip_prefix(fixtures()).unwrap();
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn every_agentspec_and_letta_dataset_is_pinned_and_loads() {
    let mut found = Vec::new();
    for dir in ["agentspec", "letta-evals"] {
        dataset_files(&fixtures().join(dir), &mut found);
    }
    found.sort();
    let mut pinned: Vec<String> = PINNED.iter().map(|(p, _)| p.to_string()).collect();
    pinned.sort();
    assert_eq!(
        found, pinned,
        "dataset files on disk and pinned list differ"
    );

    for (rel, count) in PINNED {
        let ds = load(rel);
        assert_eq!(ds.samples.len(), *count, "{rel}");
        let names = ds.test_names();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{rel}: names must be unique");
        for s in &ds.samples {
            assert!(s.source.line >= 1, "{rel}");
        }
    }
}

#[test]
fn agentspec_expected_output_is_the_expected_answer() {
    let ds = load(PINNED[1].0);
    let first = &ds.samples[0];
    assert_eq!(
        first.input.last(),
        "How many sets should I do for hypertrophy?"
    );
    assert!(
        first
            .expected_text()
            .unwrap()
            .starts_with("3–5 sets per exercise")
    );
}

#[test]
fn letta_quirks() {
    // Per-turn ground truth parallel to the turns.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/a207c56/examples/multiturn-per-turn-grading/dataset.jsonl",
    );
    assert!(matches!(&ds.samples[0].input, Input::Turns(t) if t.len() == 3));
    assert_eq!(
        ds.samples[0].expected,
        Some(Expected::PerTurn(vec![
            "Paris".into(),
            "Berlin".into(),
            "Rome".into()
        ]))
    );

    // Legacy `ideal`, no final newline.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/23da318/examples/fetch-webpage-agent-tool-grader/datasets/fetch-webpage.jsonl",
    );
    assert_eq!(ds.samples[0].expected_text(), Some("lamb's tongue"));
    assert_eq!(ds.samples[49].source.line, 50);

    // `sample_id` instead of `id`; unknown fields kept.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/475d1dd/letta-leaderboard/sidecar-envs/user-memory-update/data/dataset_memory.jsonl",
    );
    assert_eq!(ds.samples[0].id, "umu-001");
    assert!(ds.samples[0].explicit_id);
    assert!(ds.samples[0].extra.contains_key("extra_vars"));

    // No id: 0-based index.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/a207c56/examples/programmatic-agent-creation/dataset.jsonl",
    );
    assert_eq!(ds.samples[4].id, "4");
    assert!(!ds.samples[4].explicit_id);
    assert!(ds.samples[0].agent_args["item"]["price"].is_f64());

    // CSV: JSON object cell with quote doubling and escapes.
    let ds =
        load("letta-evals/letta-ai__letta-evals/a207c56/examples/reward-composition/dataset.csv");
    let art = ds.samples[0].rubric_vars["reference_ascii"]
        .as_str()
        .unwrap();
    assert!(art.contains("( o.o )"), "{art}");

    // CSV: `{4}` is text, not JSON.
    let ds =
        load("letta-evals/letta-ai__letta-evals/28bf491/examples/simple-tool-grader/dataset.csv");
    assert_eq!(ds.samples[0].expected_text(), Some("{4}"));

    // CSV: CRLF records with LF inside quoted multi-line cells; lines counted.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/a207c56/letta-leaderboard/skills-suite/data/dataset_select_use.csv",
    );
    assert_eq!(ds.samples[0].id, "sample-0");
    assert!(ds.samples[0].input.last().contains('\n'));
    assert!(ds.samples[1].source.line > ds.samples[0].source.line + 1);
    assert!(ds.samples[0].extra.contains_key("skill"));

    // CSV: a cell spanning many lines, including blank ones.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/e63f47c/letta-leaderboard/memory-defrag-suite/data/dataset_defrag.csv",
    );
    assert!(ds.samples[0].input.last().contains("\n\n"));
    assert_eq!(ds.samples[0].source.line, 2);

    // One-turn array input, 23 bytes, no newline.
    let ds = load(
        "letta-evals/letta-ai__letta-evals/5502439/examples/letta-code-compaction/dataset.jsonl",
    );
    assert_eq!(ds.samples[0].input, Input::Turns(vec!["/compact".into()]));
    assert_eq!(ds.test_names(), vec!["compact"]);
}

/// Every file under the public fixtures (all 124, datasets and manifests and
/// everything beside them), with what loading it gives: the number of
/// samples (or datasets, for a manifest), or the exact rejection. The table
/// is `tests/data/public_fixtures.snap`; `EVAL_BLESS=1` rewrites it.
#[test]
fn every_public_fixture_loads_or_is_rejected_with_its_reason() {
    let root = fixtures();
    let mut files = Vec::new();
    all_files(&root, &root, &mut files);
    files.sort();
    assert_eq!(files.len(), 124, "PROVENANCE.md lists 124 files");
    let mut table = String::new();
    for rel in &files {
        let path = root.join(rel);
        let outcome = if rel.ends_with(".yaml") || rel.ends_with(".yml") {
            // A manifest's datasets stay inside its repository snapshot.
            let repo = root.join(rel.split('/').take(3).collect::<Vec<_>>().join("/"));
            match eval_datasets::Manifest::load(&path, rel, &repo) {
                Ok(m) => {
                    let parts: Vec<String> = m
                        .datasets
                        .iter()
                        .map(|d| match d.load() {
                            Ok(data) => format!("{} ({} samples)", d.name, data.samples.len()),
                            Err(e) => {
                                format!("{} rejected: {}", d.name, first_line(&e.to_string()))
                            }
                        })
                        .collect();
                    format!(
                        "manifest, {} dataset(s): {}",
                        m.datasets.len(),
                        parts.join("; ")
                    )
                }
                Err(e) => format!("rejected: {}", first_line(&e.to_string())),
            }
        } else {
            match Dataset::load_as(&path, rel) {
                Ok(d) => format!("{} samples", d.samples.len()),
                Err(e) => format!("rejected: {}", first_line(&e.to_string())),
            }
        };
        table.push_str(&format!("{rel}\n    {outcome}\n"));
    }
    let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/public_fixtures.snap");
    if std::env::var_os("EVAL_BLESS").is_some() {
        std::fs::write(&snap, &table).unwrap();
    }
    let pinned = std::fs::read_to_string(&snap).expect("the snapshot (EVAL_BLESS=1 writes it)");
    if pinned != table {
        let diff: Vec<String> = pinned
            .lines()
            .zip(table.lines())
            .filter(|(a, b)| a != b)
            .take(10)
            .map(|(a, b)| format!("- {a}\n+ {b}"))
            .collect();
        panic!(
            "outcomes changed (EVAL_BLESS=1 to accept):\n{}",
            diff.join("\n")
        );
    }
}

fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().to_string();
    match lines.count() {
        0 => first,
        n => format!("{first} (+{n} more)"),
    }
}

fn all_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_files(root, &path, out);
        } else if path.file_name().is_some_and(|n| n != "PROVENANCE.md") {
            out.push(
                path.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}
