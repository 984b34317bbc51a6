//! `evals stats --write` and `evals guide`: the files committed beside the
//! example datasets are what the commands write today, and rewriting keeps
//! a backup of what differed.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;

/// The example datasets: every file of examples/evals/ but the ones the
/// commands write (and their backups).
fn example_datasets() -> Vec<PathBuf> {
    let dir = repo().join("examples/evals");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            !name.ends_with("-stats.json")
                && !name.ends_with("-annotation-guide.md")
                && !name.ends_with(".bak")
        })
        .collect();
    out.sort();
    out
}

fn beside(dataset: &Path, suffix: &str) -> PathBuf {
    let stem = dataset.file_stem().unwrap().to_string_lossy().into_owned();
    dataset.with_file_name(format!("{stem}-{suffix}"))
}

#[test]
fn the_committed_stats_and_guides_of_the_examples_are_current() {
    let dir = scratch("guide-examples");
    let datasets = example_datasets();
    assert!(datasets.len() >= 6, "{datasets:?}");
    let mut stale = Vec::new();
    for dataset in &datasets {
        let name = dataset.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::copy(dataset, dir.join(&name)).unwrap();
        for args in [&["stats", "--write", &name][..], &["guide", &name][..]] {
            let out = evals(&dir, args);
            assert_eq!(code(&out), 0, "{args:?}: {:?}", text(&out));
        }
        for suffix in ["stats.json", "annotation-guide.md"] {
            let fresh = std::fs::read(beside(&dir.join(&name), suffix)).unwrap();
            let committed = beside(dataset, suffix);
            if std::fs::read(&committed).ok().as_deref() != Some(&fresh[..]) {
                stale.push(format!(
                    "{} (regenerate: cargo run -p eval-cli -- {} examples/evals/{name})",
                    committed.display(),
                    if suffix == "stats.json" {
                        "stats --write"
                    } else {
                        "guide"
                    }
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "missing or out of date:\n{}",
        stale.join("\n")
    );
}

#[test]
fn rewriting_keeps_a_backup_of_what_differed() {
    let dir = scratch("guide-write");
    let line = |i: usize| {
        format!(
            r#"{{"id": "q{i}", "query": "question {i} about refunds", "ground_truth": "Refunds are accepted within thirty days of purchase for unused items.", "contexts": ["Refunds: 30 days."], "source_docs": ["refunds.md"], "metadata": {{"difficulty": "{}"}}}}"#,
            ["easy", "hard"][i % 2]
        )
    };
    let write_lines = |n: usize| {
        let lines: Vec<String> = (0..n).map(line).collect();
        std::fs::write(dir.join("d.jsonl"), lines.join("\n") + "\n").unwrap();
    };
    let backups = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.starts_with("d-stats.json.") && name.ends_with(".bak")
            })
            .count()
    };
    write_lines(10);
    let out = evals(&dir, &["stats", "--write", "d.jsonl"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert_eq!(text(&out).0, "wrote d-stats.json\n");
    let first = std::fs::read_to_string(dir.join("d-stats.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["samples"], 10);
    assert_eq!(v["coverage"]["difficulty"]["easy"], 5);
    assert_eq!(v["quality"]["errors"], 0);

    let out = evals(&dir, &["stats", "--write", "d.jsonl"]);
    assert_eq!(text(&out).0, "d-stats.json is up to date\n");
    assert_eq!(backups(), 0, "the same summary is not backed up");

    write_lines(11);
    let out = evals(&dir, &["stats", "--write", "d.jsonl"]);
    let said = text(&out).0;
    assert!(
        said.starts_with("wrote d-stats.json (the previous one: "),
        "{said}"
    );
    assert_eq!(backups(), 1);
    let backup = said
        .trim_end()
        .rsplit_once(": ")
        .unwrap()
        .1
        .trim_end_matches(')');
    assert_eq!(std::fs::read_to_string(dir.join(backup)).unwrap(), first);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("d-stats.json")).unwrap()).unwrap();
    assert_eq!(v["samples"], 11);

    // The guide: beside the dataset, elsewhere with -o, or printed.
    let out = evals(&dir, &["guide", "d.jsonl"]);
    assert_eq!(text(&out).0, "wrote d-annotation-guide.md\n");
    let out = evals(&dir, &["guide", "d.jsonl", "-o", "guide.md"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let printed = evals(&dir, &["guide", "d.jsonl", "-o", "-"]);
    let guide = std::fs::read_to_string(dir.join("guide.md")).unwrap();
    assert_eq!(text(&printed).0, guide);
    assert_eq!(
        guide,
        std::fs::read_to_string(dir.join("d-annotation-guide.md")).unwrap()
    );
    assert!(guide.contains("| `easy` | 6 | 55% |"), "{guide}");

    // A file that does not load: exit 2, nothing written.
    std::fs::write(dir.join("bad.jsonl"), "{\"input\": \n").unwrap();
    for args in [
        &["stats", "--write", "bad.jsonl"][..],
        &["guide", "bad.jsonl"][..],
    ] {
        let out = evals(&dir, args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(text(&out).1.contains("bad.jsonl:1"), "{:?}", text(&out));
    }
    assert!(!dir.join("bad-stats.json").exists());
    assert!(!dir.join("bad-annotation-guide.md").exists());
}
