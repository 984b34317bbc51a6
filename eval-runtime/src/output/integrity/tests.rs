use std::collections::BTreeMap;

use super::*;
use crate::model::{DatasetProvenance, Provenance};
use crate::output::merge::{merge, merge_paths};
use crate::output::results::{DatasetTerms, Gate, Verdict};
use crate::output::test_record as record;

/// `n` samples of `dataset` planned `planned`, a gate on `contains`: the
/// first failed, the second could not be scored, the rest passed.
fn run(dataset: &str, n: usize, planned: usize) -> Results {
    let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.5);
    let terms = BTreeMap::from([(
        dataset.to_string(),
        DatasetTerms::new(Some(planned), vec![gate], false),
    )]);
    let samples = (0..n)
        .map(|i| {
            let verdict = match i {
                0 => Verdict::Fail,
                1 => Verdict::Error,
                _ => Verdict::Pass,
            };
            record(dataset, &format!("{dataset}::s{i:02}"), verdict)
        })
        .collect();
    Results::new("evals", samples, &terms)
}

/// `results` with a provenance naming `datasets` (name, file).
fn read_from(mut results: Results, datasets: &[(&str, &str)]) -> Results {
    results.provenance = Some(Provenance {
        datasets: datasets
            .iter()
            .map(|(name, file)| DatasetProvenance {
                name: (*name).into(),
                file: (*file).into(),
                sha256: None,
                agent: None,
            })
            .collect(),
        ..Provenance::default()
    });
    results
}

fn problems(r: &Results) -> String {
    r.inconsistencies().join("\n")
}

#[test]
fn a_file_as_written_adds_up_and_so_does_a_killed_one() {
    let whole = run("rag", 30, 30);
    assert!(whole.complete);
    assert_eq!(whole.inconsistencies(), Vec::<String>::new());
    // A part of a run (10 of 30) says it is incomplete: consistent.
    let part = run("rag", 10, 30);
    assert!(!part.complete);
    assert_eq!(part.inconsistencies(), Vec::<String>::new());
    // The file of a killed run: what finished, and what did not run.
    let mut killed = run("a", 3, 3);
    killed.complete = false;
    killed.missing_datasets = vec!["b (data/b.jsonl)".into()];
    assert_eq!(killed.inconsistencies(), Vec::<String>::new());
    assert!(killed.check_consistency(Path::new("k.json")).is_ok());
    // Written and read back.
    let dir = std::env::temp_dir().join(format!("eval-integrity-{}", std::process::id()));
    let path = dir.join("whole.json");
    whole.write(&path).unwrap();
    assert_eq!(Results::read_consistent(&path).unwrap(), whole);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn complete_with_10_of_30_records_does_not_add_up() {
    let mut edited = run("rag", 30, 30);
    edited.samples.truncate(10);
    let said = problems(&edited);
    for want in [
        "dataset `rag` says 30 samples, its records give 10",
        "dataset `rag` says 28 passed, its records give 8",
        "dataset `rag` says it is complete, and holds 10 of 30 planned samples",
        "metric `contains` of `rag` says 29 scored, its records give 9",
        "gate contains >= 0.5 of `rag` is judged over 10 of 30 planned samples",
        "it says complete, but `rag` holds 10 of 30 planned samples",
    ] {
        assert!(said.contains(want), "{want}\n---\n{said}");
    }
    let err = edited
        .check_consistency(Path::new("edited.json"))
        .unwrap_err();
    assert!(matches!(err, ResultsError::Inconsistent { .. }));
    let err = err.to_string();
    assert!(
        err.starts_with(
            "edited.json does not add up: dataset `rag` says 30 samples, its records give 10;"
        ),
        "{err}"
    );
    assert!(
        err.ends_with("rerun the evaluation to write it anew"),
        "{err}"
    );
}

#[test]
fn each_total_is_checked_against_the_records() {
    let base = run("rag", 4, 4);
    let edit = |f: &dyn Fn(&mut Results)| {
        let mut r = base.clone();
        f(&mut r);
        problems(&r)
    };
    let said = edit(&|r| r.datasets[0].passed += 1);
    assert_eq!(said, "dataset `rag` says 3 passed, its records give 2");
    let said = edit(&|r| r.datasets[0].errors = 0);
    assert_eq!(said, "dataset `rag` says 0 errors, its records give 1");
    let said = edit(&|r| r.datasets[0].metrics[0].unscored = 0);
    assert_eq!(
        said,
        "metric `contains` of `rag` says 0 unscored, its records give 1"
    );
    // Planned raised by hand: a complete dataset that is not.
    let said = edit(&|r| r.datasets[0].planned = Some(5));
    assert!(
        said.contains("dataset `rag` says it is complete, and holds 4 of 5 planned samples"),
        "{said}"
    );
    // Complete, and listing a dataset that did not run.
    let said = edit(&|r| r.missing_datasets = vec!["other".into()]);
    assert_eq!(
        said,
        "it says complete, but lists dataset(s) that did not run: other"
    );
    let said = edit(&|r| {
        let twice = r.samples[2].clone();
        r.samples.push(twice);
    });
    assert!(
        said.starts_with("sample rag::s02 of `rag` is recorded twice"),
        "{said}"
    );
    let said = edit(&|r| r.samples[3].dataset = "other".into());
    assert!(
        said.contains("1 record(s) of dataset `other`, which the file does not summarise"),
        "{said}"
    );
    // Saying less than it holds contradicts it too.
    let said = edit(&|r| r.datasets[0].complete = false);
    assert!(
        said.contains("dataset `rag` says it is not complete, and holds 4 of 4 planned samples"),
        "{said}"
    );
    // The run marked incomplete with everything there: saying less, allowed.
    assert_eq!(edit(&|r| r.complete = false), "");
}

#[test]
fn files_of_earlier_versions_without_plans_read_as_complete() {
    // No `planned`, no `complete`, no `unscored`, no gate `judged`: defaults.
    let mut old: serde_json::Value = serde_json::to_value(run("rag", 3, 3)).unwrap();
    let d = &mut old["datasets"][0];
    let d = d.as_object_mut().unwrap();
    d.remove("planned");
    d.remove("complete");
    let m = d["metrics"][0].as_object_mut().unwrap();
    m.remove("unscored");
    m["gate"].as_object_mut().unwrap().remove("judged");
    let old: Results = serde_json::from_value(old).unwrap();
    assert_eq!(old.datasets[0].planned, None);
    // `unscored` absent reads 0, while a sample could not be scored: that
    // much an earlier file cannot be trusted with.
    assert_eq!(
        problems(&old),
        "metric `contains` of `rag` says 0 unscored, its records give 1"
    );
    let terms = BTreeMap::from([(
        "rag".to_string(),
        DatasetTerms::new(Some(2), Vec::new(), false),
    )]);
    let clean = vec![
        record("rag", "x", Verdict::Pass),
        record("rag", "y", Verdict::Fail),
    ];
    let r = Results::new("evals", clean, &terms);
    let mut old = serde_json::to_value(&r).unwrap();
    let d = old["datasets"][0].as_object_mut().unwrap();
    d.remove("planned");
    d.remove("complete");
    let old: Results = serde_json::from_value(old).unwrap();
    assert_eq!(old.inconsistencies(), Vec::<String>::new());
}

#[test]
fn a_join_of_a_killed_part_stays_incomplete() {
    // What a killed first run of the attribute writes: `a` finished, `b`
    // and `nested::c` named as the macro lists them.
    let mut killed = read_from(run("a", 3, 3), &[("a", "data/a.jsonl")]);
    killed.complete = false;
    killed.missing_datasets = vec!["b (data/b.jsonl)".into(), "c (data/c.jsonl)".into()];
    let merged = merge(std::slice::from_ref(&killed)).unwrap();
    assert!(!merged.complete, "the join of a killed run is complete");
    assert_eq!(merged.missing_datasets, killed.missing_datasets);
    assert_eq!(
        merged.incompleteness().unwrap(),
        "dataset(s) `b (data/b.jsonl)`, `c (data/c.jsonl)` did not run"
    );
    // Another part holding `b` whole: only `c` is missing.
    let b = read_from(run("b", 3, 3), &[("b", "data/b.jsonl")]);
    let merged = merge(&[killed.clone(), b.clone()]).unwrap();
    assert_eq!(merged.missing_datasets, ["c (data/c.jsonl)"]);
    assert!(!merged.complete);
    // `c` from another file is not `c`.
    let elsewhere = read_from(run("nested::c", 3, 3), &[("nested::c", "other/c.jsonl")]);
    let merged = merge(&[killed.clone(), b.clone(), elsewhere]).unwrap();
    assert_eq!(merged.missing_datasets, ["c (data/c.jsonl)"]);
    // Half of `c` is not `c` either.
    let half = read_from(run("nested::c", 2, 3), &[("nested::c", "data/c.jsonl")]);
    let merged = merge(&[killed.clone(), b.clone(), half]).unwrap();
    assert_eq!(merged.missing_datasets, ["c (data/c.jsonl)"]);
    assert!(
        merged
            .incompleteness()
            .unwrap()
            .starts_with("2 of 3 samples of `nested::c`"),
        "{:?}",
        merged.incompleteness()
    );
    // The whole of `c`: the join is the whole run.
    let c = read_from(run("nested::c", 3, 3), &[("nested::c", "data/c.jsonl")]);
    let merged = merge(&[killed, b, c]).unwrap();
    assert!(merged.complete, "{:?}", merged.incompleteness());
    assert!(merged.missing_datasets.is_empty());
    // The merged file adds up, and a join of it keeps its verdict.
    assert_eq!(merged.inconsistencies(), Vec::<String>::new());
}

#[test]
fn a_dataset_a_part_planned_and_no_part_holds_is_missing() {
    // A harness's part: the plan's datasets in its provenance, one sample.
    let part = |name: &str| {
        let mut r = run("qa", 1, 2);
        r.samples[0].test_name = name.into();
        read_from(r, &[("qa", "qa.jsonl"), ("other", "other.jsonl")])
    };
    let merged = merge(&[part("qa::s00"), part("qa::s01")]).unwrap();
    assert!(!merged.complete);
    assert_eq!(merged.missing_datasets, ["other"]);
    // A part that says it is incomplete and not why (edited, or of an
    // earlier version without provenance) keeps the join incomplete.
    let mut unsaid = run("qa", 2, 2);
    unsaid.complete = false;
    let merged = merge(&[unsaid]).unwrap();
    assert_eq!(
        merged.missing_datasets,
        ["(unknown: input 1 says it is incomplete and not what it lacks)"]
    );
    assert!(!merged.complete);
}

#[test]
fn a_part_that_does_not_add_up_is_not_joined() {
    let dir = std::env::temp_dir().join(format!("eval-integrity-join-{}", std::process::id()));
    let mut edited = run("rag", 30, 30);
    edited.samples.truncate(10);
    let path = dir.join("edited.json");
    edited.write(&path).unwrap();
    let err = merge_paths(std::slice::from_ref(&path)).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        matches!(&err, ResultsError::Inconsistent { path: p, .. } if *p == path),
        "{err}"
    );
}
