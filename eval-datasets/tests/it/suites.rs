//! letta-evals suites (seed 001) read as manifests of one dataset: a suite
//! maps field by field, and what cannot run here is refused at its line.
//! (Every public example suite's outcome is pinned with the other public
//! fixtures, in `tests/data/public_fixtures.snap`.)

use std::path::PathBuf;

use eval_datasets::Manifest;
use eval_datasets::metric::Op;

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-suite-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

const DATA: &str = r#"{"input": "What is 2+2?", "ground_truth": "4", "tags": ["math"]}
"#;

#[test]
fn a_suite_maps_to_one_dataset_with_its_samples_runs_graders_and_gate() {
    let dir = scratch(
        "maps",
        &[
            ("suites/data/math.jsonl", DATA),
            (
                "suites/rubric.txt",
                "Is {submission} the answer to {input}?",
            ),
            (
                "suites/math.yaml",
                "name: math-check
description: Arithmetic
dataset: data/math.jsonl
max_samples: 10
sample_tags: [math, easy]
num_runs: 3
graders:
  exact:
    kind: tool
    function: exact_match
  quality:
    kind: rubric
    prompt_path: rubric.txt
gate:
  metric_key: exact
  aggregation: accuracy
  op: gte
  value: 0.8
",
            ),
        ],
    );
    let m = Manifest::load(&dir.join("suites/math.yaml"), "suites/math.yaml", &dir).unwrap();
    assert_eq!(m.framework.as_deref(), Some("letta-evals"));
    assert_eq!(m.repeat, eval_datasets::Repeat::Runs(3));
    assert!(!m.ci_gate);
    let d = &m.datasets[0];
    assert_eq!(d.name, "math-check");
    assert_eq!(d.description.as_deref(), Some("Arithmetic"));
    // Relative to the suite, not to the directory it is run from.
    assert_eq!(d.shown, "suites/data/math.jsonl");
    assert_eq!(d.subset.tags, ["math", "easy"]);
    assert_eq!(d.subset.max, Some(10));
    assert!(!d.threshold_gates, "the gate alone decides");
    // letta's exact_match is case-sensitive; the rubric's text is read.
    assert_eq!(d.specs[0].name, "exact");
    assert!(matches!(
        d.specs[0].kind,
        eval_datasets::metric::MetricKind::Text(eval_datasets::metric::TextMetric::ExactMatch {
            case_sensitive: true
        })
    ));
    assert_eq!(d.specs[1].name, "quality");
    assert!(matches!(
        &d.specs[1].kind,
        eval_datasets::metric::MetricKind::Judged(eval_datasets::metric::JudgedMetric::Rubric { text: Some(t), .. }) if t.contains("{submission}")
    ));
    assert_eq!(d.tracked, [dir.join("suites/rubric.txt")]);
    assert_eq!(d.gates.len(), 1);
    let g = &d.gates[0];
    assert_eq!(
        (g.spec.name.as_str(), g.spec.op, g.spec.threshold),
        ("exact", Op::AtLeast, 0.8)
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("`exact` (exact_match), `quality` (rubric)")),
        "{:?}",
        d.notes
    );
}

#[test]
fn what_a_suite_cannot_mean_here_is_refused_at_its_line() {
    let dir = scratch("refused", &[("data.jsonl", DATA)]);
    let problems = |yaml: &str| -> Vec<String> {
        std::fs::write(dir.join("suite.yaml"), yaml).unwrap();
        match Manifest::load(&dir.join("suite.yaml"), "suite.yaml", &dir) {
            Ok(m) => panic!("expected a refusal, got {m:?}"),
            Err(e) => e.problems(),
        }
    };
    let graders = "graders:\n  a:\n    kind: tool\n    function: contains\n  q:\n    kind: rubric\n    prompt: Good?\n";
    let cases = [
        (
            format!(
                "name: s\ndataset: data.jsonl\n{graders}gate:\n  metric_key: a\n  op: gt\n  value: 0.5\n"
            ),
            "suite.yaml:11: field `gate`: `op: gt` is not supported",
        ),
        (
            format!(
                "name: s\ndataset: data.jsonl\n{graders}gate:\n  metric_key: q\n  aggregation: accuracy\n  value: 0.5\n"
            ),
            "suite.yaml:11: field `gate`: `accuracy` of `q` (a graded score, not pass/fail) is not supported",
        ),
        (
            format!("name: s\ndataset: data.jsonl\n{graders}gate:\n  value: 0.5\n"),
            "suite.yaml:11: field `gate`: `gate` needs `metric_key` when the suite has several graders",
        ),
        (
            format!("name: s\ndataset: data.jsonl\nmax_samples: 0\n{graders}"),
            "suite.yaml:3: field `max_samples`: `max_samples: 0`: expected a whole number of samples, 1 or more",
        ),
        (
            "name: s\ndataset: data.jsonl\ngraders:\n  a:\n    kind: tool\n    function: fuzzy\n"
                .to_string(),
            "suite.yaml:5: field `graders`: grader `a`: function `fuzzy` is not a built-in grader",
        ),
        (
            format!("name: s\ndataset: missing.jsonl\n{graders}"),
            "suite.yaml:2: field `dataset`: dataset file `missing.jsonl` does not exist",
        ),
        (
            format!("name: s\ndataset: data.jsonl\nsample_tag: [x]\n{graders}"),
            "suite.yaml:3:1: invalid letta-evals suite: unknown field `sample_tag`, expected one of",
        ),
    ];
    for (yaml, want) in cases {
        let got = problems(&yaml);
        assert!(got[0].starts_with(want), "{yaml}\n{got:?}");
    }
}
