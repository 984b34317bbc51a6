//! letta-evals 0.26 suites, as that release reads them
//! (`tests/fixtures/letta-evals-0.26.0/`, from its PyPI sdist's README; see
//! PROVENANCE.md there): `target` and `reward`, graders keyed by name (two
//! `model_judge` graders, each its own metric), `display_name`,
//! `target.model_handles`; and the older `gate` form, still read with a note.

use std::path::{Path, PathBuf};

use eval_datasets::Manifest;
use eval_datasets::metric::{JudgedMetric, MetricKind, Op, Stat};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn load(rel: &str) -> Manifest {
    let root = root();
    Manifest::load(&root.join(rel), rel, &root).unwrap()
}

fn scratch(name: &str, suite: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-letta026-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("data.jsonl"),
        "{\"input\": \"Draw a cat in ASCII\", \"ground_truth\": \"cat\"}\n",
    )
    .unwrap();
    std::fs::write(dir.join("suite.yaml"), suite).unwrap();
    dir
}

fn problems(name: &str, suite: &str) -> String {
    let dir = scratch(name, suite);
    match Manifest::load(&dir.join("suite.yaml"), "suite.yaml", &dir) {
        Ok(_) => panic!("{name}: the suite was not refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_026_quickstart_suite_is_decided_by_its_reward() {
    let m = load("tests/fixtures/letta-evals-0.26.0/quickstart/suite.yaml");
    // One model handle: one run, named by its model as letta keys results.
    assert_eq!(m.datasets.len(), 1);
    let d = &m.datasets[0];
    assert_eq!(d.name, "my-eval-suite@openai/gpt-4.1-mini");
    assert_eq!(d.model.as_deref(), Some("openai/gpt-4.1-mini"));
    let names: Vec<&str> = d.specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["correctness"], "the grader's key names its metric");
    // The reward's grader gates the mean reward at letta's pass mark.
    assert_eq!(d.gates.len(), 1);
    let g = &d.gates[0];
    assert_eq!(g.stat, Stat::Mean);
    assert_eq!(
        (g.spec.name.as_str(), g.spec.op, g.spec.threshold),
        ("correctness", Op::AtLeast, 1.0)
    );
    assert!(!d.threshold_gates && !m.ci_gate, "the reward alone decides");
    let notes = d.notes.join("\n");
    assert!(
        notes.contains("the reward is grader `correctness`'s score"),
        "{notes}"
    );
    assert!(
        notes.contains(
            "the suite runs once per model, as datasets `my-eval-suite@openai/gpt-4.1-mini`"
        ),
        "{notes}"
    );
    assert!(!notes.contains("no `reward`"), "{notes}");
}

#[test]
fn two_model_judge_graders_are_two_metrics_named_by_their_keys() {
    let m = load("tests/fixtures/letta-evals-0.26.0/two-judges/suite.yaml");
    assert_eq!(m.repeat, eval_datasets::Repeat::Runs(3));
    let d = &m.datasets[0];
    assert_eq!(d.subset.max, Some(20));
    let names: Vec<&str> = d.specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["exact", "quality", "style"]);
    for judge in &d.specs[1..] {
        assert!(
            matches!(&judge.kind, MetricKind::Judged(JudgedMetric::Rubric { text: Some(t), .. }) if t.contains("{submission}")),
            "{judge:?}"
        );
    }
    assert_eq!(d.gates[0].spec.name, "quality");
    assert!(matches!(
        d.gates[0].spec.kind,
        MetricKind::Judged(JudgedMetric::Rubric { .. })
    ));
    let notes = d.notes.join("\n");
    assert!(
        notes.contains("display names: `style`: style score"),
        "{notes}"
    );
    assert!(
        notes.contains("`quality` (rubric), `style` (rubric)"),
        "{notes}"
    );
    assert!(notes.contains("`max_concurrent`"), "{notes}");
}

const GRADER: &str = "graders:\n  answer:\n    kind: tool\n    function: contains\n";

#[test]
fn the_older_gate_form_is_read_with_a_note() {
    let dir = scratch(
        "gate",
        &format!(
            "name: s\ndataset: data.jsonl\n{GRADER}gate:\n  metric_key: answer\n  op: gte\n  value: 0.5\n"
        ),
    );
    let m = Manifest::load(&dir.join("suite.yaml"), "suite.yaml", &dir).unwrap();
    let d = &m.datasets[0];
    assert_eq!(
        (d.gates[0].spec.name.as_str(), d.gates[0].spec.threshold),
        ("answer", 0.5)
    );
    let notes = d.notes.join("\n");
    assert!(
        notes.contains("`gate` is the form before letta-evals 0.26")
            && notes.contains("reward: {kind: metric, metric_key: answer}"),
        "{notes}"
    );
}

#[test]
fn a_reward_this_tool_cannot_compute_is_refused_at_its_line() {
    let head = format!("name: s\ndataset: data.jsonl\n{GRADER}");
    for (name, tail, want) in [
        (
            "kind",
            "reward:\n  kind: weighted\n  metric_key: answer\n",
            "suite.yaml:8: field `reward`: `reward.kind: weighted`: expected `metric`",
        ),
        (
            "unknown",
            "reward:\n  kind: metric\n  metric_key: quality\n",
            "suite.yaml:8: field `reward`: `reward.metric_key: quality` names no grader; the suite has: answer",
        ),
        (
            "both",
            "reward:\n  kind: metric\n  metric_key: answer\ngate:\n  metric_key: answer\n  value: 1\n",
            "suite.yaml:11: field `gate`: give `reward` (letta-evals 0.26) or the older `gate`, not both",
        ),
    ] {
        let e = problems(name, &format!("{head}{tail}"));
        assert!(e.contains(want), "{name}: {e}");
    }
}

#[test]
fn a_custom_reward_is_not_run_and_says_so() {
    let dir = scratch(
        "custom",
        &format!(
            "name: s\ndataset: data.jsonl\n{GRADER}reward:\n  kind: custom\n  function: rewards.py:compose_reward\n"
        ),
    );
    let m = Manifest::load(&dir.join("suite.yaml"), "suite.yaml", &dir).unwrap();
    let d = &m.datasets[0];
    assert!(d.gates.is_empty());
    let notes = d.notes.join("\n");
    assert!(
        notes.contains("`reward.kind: custom` is Python code (`rewards.py:compose_reward`)")
            && notes.contains("none fails the run"),
        "{notes}"
    );
}

#[test]
fn two_model_handles_are_two_datasets_each_with_its_model_and_reward() {
    let m = load("tests/fixtures/letta-evals-0.26.0/two-models/suite.yaml");
    let names: Vec<(&str, Option<&str>)> = m
        .datasets
        .iter()
        .map(|d| (d.name.as_str(), d.model.as_deref()))
        .collect();
    assert_eq!(
        names,
        [
            ("capitals@openai/good-model", Some("openai/good-model")),
            ("capitals@openai/bad-model", Some("openai/bad-model")),
        ]
    );
    for d in &m.datasets {
        assert_eq!(d.gates.len(), 1, "{}: its own reward gate", d.name);
        assert_eq!(d.gates[0].spec.name, "correctness");
        assert_eq!(d.specs.len(), 1);
    }
    // An agent that needs a model to start starts with the first.
    assert_eq!(m.agent.model.as_deref(), Some("openai/good-model"));
    // Named by its model, a run is found by its name.
    assert!(m.dataset("capitals@openai/bad-model").is_ok());
}

#[test]
fn model_handles_that_name_no_run_are_refused_at_the_target() {
    let head = format!("name: s\ndataset: data.jsonl\n{GRADER}");
    for (name, target, want) in [
        (
            "empty",
            "target:\n  kind: letta_code\n  model_handles: []\n",
            "field `target`: `target.model_handles` is empty",
        ),
        (
            "twice",
            "target:\n  kind: letta_code\n  model_handles: [a/m, a/m]\n",
            "`target.model_handles` lists `a/m` twice",
        ),
        (
            "same-slug",
            "target:\n  kind: letta_code\n  model_handles: [a/gpt-4.1, a/gpt_4_1]\n",
            "`a/gpt-4.1` and `a/gpt_4_1` would name the same tests and results (`a_gpt_4_1`)",
        ),
        (
            "not-a-list",
            "target:\n  kind: letta_code\n  model_handles: a/m\n",
            "`target.model_handles`: expected a list of model handles",
        ),
    ] {
        let e = problems(name, &format!("{head}{target}"));
        assert!(e.contains(want), "{name}: {e}");
    }
}
