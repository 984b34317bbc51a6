//! A letta-evals suite (seed 001) through every front end: its dataset
//! relative to the suite, `sample_tags` and `max_samples` choosing the
//! samples, its graders as metrics named by their keys (two `model_judge`
//! graders, two metrics) and its `reward` (letta-evals 0.26) deciding the
//! run; and the
//! same choice of samples written on the attribute (`max_samples = 2,
//! sample_tags = ["geo"]`) and the harness (`.max_samples(2)
//! .sample_tags(["geo"])`). Against the demo agent and the scripted judge.
//!
//! `capitals.jsonl` holds four samples, three tagged `geo`; the first two
//! of those are run: the demo agent answers the first (Paris) and not the
//! second (Lyon), so `answer` (a `contains` grader, the suite's reward)
//! averages 0.5, below letta's pass mark of 1.0: the run fails. The older
//! form of the same suite (a `gate`, `accuracy >= 0.75` of `answer`) is
//! still read, with a note, and missed too.

use std::collections::BTreeMap;

use super::{Servers, build, command, gates, read, scratch, text, verdicts};

const DATA: &str = r#"{"input": "What is the capital of France?", "ground_truth": "Paris", "tags": ["geo"]}
{"input": "What is retrieval-augmented generation?", "ground_truth": "grounded", "tags": ["rag"]}
{"input": "What is the capital of France, again?", "ground_truth": "Lyon", "tags": ["geo"]}
{"input": "How does vector search find relevant chunks?", "ground_truth": "cosine", "tags": ["geo"]}
"#;

const RUBRIC: &str = "Score 1 when the answer to {input} names {ground_truth}, else 0.\n";

/// A suite as letta-evals 0.26 reads it (`letta_evals/models/specs.py`:
/// a `target` this tool does not use, `model_judge` graders reading their
/// prompt from a file, one with a `display_name`, a `reward`).
const SUITE: &str = "name: capitals
description: Capital cities, asked plainly
dataset: data/capitals.jsonl
max_samples: 2
sample_tags: [geo]
target:
  kind: letta_code
  base_url: https://api.letta.com/
graders:
  answer:
    kind: tool
    function: contains
    extractor: last_assistant
  quality:
    kind: model_judge
    prompt_path: rubric.txt
    model: gpt-5-mini
  style:
    kind: model_judge
    display_name: style score
    prompt_path: rubric.txt
    model: gpt-5-mini
reward:
  kind: metric
  metric_key: answer
";

/// The same suite before letta-evals 0.26: a top-level `gate`.
const OLD_SUITE: &str = "name: capitals
dataset: data/capitals.jsonl
max_samples: 2
sample_tags: [geo]
graders:
  answer:
    kind: tool
    function: contains
gate:
  metric_key: answer
  aggregation: accuracy
  op: gte
  value: 0.75
";

const ATTR: &str = r#"
use eval_runtime::prelude::*;

#[eval_dataset(manifest = "suite.yaml")]
async fn capitals(sample: &Sample) -> eval_runtime::Result<Response> {
    HttpAgent::from_env()?.respond(sample).await
}

#[eval_dataset("data/geo.jsonl", metrics(contains), max_samples = 2, sample_tags = ["geo"])]
async fn geo(sample: &Sample) -> eval_runtime::Result<Response> {
    HttpAgent::from_env()?.respond(sample).await
}
"#;

const HARNESS: &str = r#"
fn main() -> std::process::ExitCode {
    eval_runtime::Harness::new()
        .manifest("suite.yaml")
        .dataset("data/geo.jsonl", "contains")
        .max_samples(2)
        .sample_tags(["geo"])
        .agent(eval_runtime::HttpAgent::from_env())
        .run()
}
"#;

#[test]
fn a_letta_suite_runs_alike_through_every_front_end() {
    let dir = scratch(
        "front-ends-suites",
        &[
            ("data/capitals.jsonl", DATA),
            ("data/geo.jsonl", DATA),
            ("rubric.txt", RUBRIC),
            ("suite.yaml", SUITE),
            ("old-suite.yaml", OLD_SUITE),
            ("tests/attr.rs", ATTR),
            ("tests/harness.rs", HARNESS),
        ],
    );
    let (attr_exe, harness_exe) = build(&dir);
    let servers = Servers::start();
    let (url, judge) = (servers.agent.url(), servers.judge_url());
    let out = dir.join("out");
    let run = |exe: &std::path::Path, results: &str, args: &[&str]| {
        command(exe, &dir, &url, &out.join(results))
            .env("EVAL_JUDGE_URL", &judge)
            .args(args)
            .output()
            .unwrap()
    };
    const MAPPED: &str = "results name each grader by its key: `answer` (contains), `quality` (rubric), `style` (rubric)";
    const UNUSED: &str = "not used here: `target`";

    // The attribute: one test per chosen sample, and the gate's test fails.
    let attr = run(&attr_exe, "attr", &[]);
    let attr_text = text(&attr);
    assert_eq!(attr.status.code(), Some(101), "{attr_text}");
    let mut tests: Vec<&str> = attr_text
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
        .map(|(name, _)| name)
        .collect();
    tests.sort();
    assert_eq!(
        tests,
        [
            "capitals::gates",
            "capitals::what_is_the_capital_of_france__geo__",
            "capitals::what_is_the_capital_of_france_again__geo__",
            "geo::what_is_the_capital_of_france__geo__",
            "geo::what_is_the_capital_of_france_again__geo__",
        ],
        "two samples of each, and the suite's gate:\n{attr_text}"
    );
    assert!(
        attr_text.contains("test capitals::gates ... FAILED"),
        "{attr_text}"
    );
    // Under the suite, samples are judged by its gate, not one by one.
    assert!(
        attr_text.contains("test capitals::what_is_the_capital_of_france_again__geo__ ... ok"),
        "{attr_text}"
    );
    assert!(
        attr_text.contains("test geo::what_is_the_capital_of_france_again__geo__ ... FAILED"),
        "{attr_text}"
    );
    assert!(
        attr_text.contains(MAPPED) && attr_text.contains(UNUSED),
        "{attr_text}"
    );

    // The harness: the same samples and gate.
    let harness = run(&harness_exe, "harness", &[]);
    let harness_text = text(&harness);
    assert_eq!(harness.status.code(), Some(101), "{harness_text}");
    assert!(
        harness_text.contains("gate capitals FAILED: mean answer = 0.5000"),
        "{harness_text}"
    );
    assert!(harness_text.contains(MAPPED), "{harness_text}");

    // The command: the suite alone, then the dataset with the same choice.
    let evals = env!("CARGO_BIN_EXE_evals");
    let cli = run(
        evals.as_ref(),
        "cli",
        &["evaluate", "suite.yaml", "--output", "out/cli-suite.json"],
    );
    let cli_text = text(&cli);
    assert_eq!(
        cli.status.code(),
        Some(1),
        "the reward is missed:\n{cli_text}"
    );
    assert!(
        cli_text.contains("the reward is grader `answer`'s score")
            && cli_text.contains("display names: `style`: style score"),
        "{cli_text}"
    );
    assert!(
        cli_text.contains(MAPPED) && cli_text.contains(UNUSED),
        "{cli_text}"
    );
    // Only the gate is a gate: the other grader is scored, not gated.
    assert!(!cli_text.contains("mean quality"), "{cli_text}");
    // The older form: read, with a note, its gate missed.
    let old = run(
        evals.as_ref(),
        "cli",
        &["evaluate", "old-suite.yaml", "--output", "out/cli-old.json"],
    );
    let old_text = text(&old);
    assert_eq!(old.status.code(), Some(1), "{old_text}");
    assert!(
        old_text.contains("`gate` is the form before letta-evals 0.26"),
        "{old_text}"
    );
    let cli_geo = run(
        evals.as_ref(),
        "cli",
        &[
            "evaluate",
            "data/geo.jsonl",
            "--metrics",
            "contains",
            "--tag",
            "geo",
            "--max-samples",
            "2",
            "--output",
            "out/cli-geo.json",
        ],
    );
    assert_eq!(cli_geo.status.code(), Some(1), "{}", text(&cli_geo));

    // The same verdicts everywhere.
    let attr_file = read(&out.join("attr/front-ends-suites/attr.json"));
    let harness_file = read(&out.join("harness/front-ends-suites/harness.json"));
    let (suite, geo) = (
        read(&dir.join("out/cli-suite.json")),
        read(&dir.join("out/cli-geo.json")),
    );
    let mut cli_verdicts = verdicts(&suite);
    cli_verdicts.extend(verdicts(&geo));
    let mut cli_gates = gates(&suite);
    cli_gates.extend(gates(&geo));
    assert_eq!(verdicts(&attr_file), cli_verdicts);
    assert_eq!(verdicts(&harness_file), cli_verdicts);
    assert_eq!(gates(&attr_file), cli_gates);
    assert_eq!(gates(&harness_file), cli_gates);
    let key = |d: &str, id: &str| (d.to_string(), id.to_string());
    let ids: BTreeMap<_, _> = cli_verdicts.iter().map(|(k, v)| (k.clone(), v.0)).collect();
    use eval_runtime::results::Verdict;
    assert_eq!(
        ids,
        BTreeMap::from([
            (key("capitals", "0"), Verdict::Pass),
            // Recorded as failing its metric; its test passed (the gate judges).
            (key("capitals", "2"), Verdict::Fail),
            (key("geo", "0"), Verdict::Pass),
            (key("geo", "2"), Verdict::Fail),
        ])
    );
    // The suite's one gate, missed and enforced; the graders' scores kept.
    let (judged, passed, _, enforced) = cli_gates[&key("capitals", "answer")];
    assert!(judged && !passed && enforced);
    assert_eq!(cli_gates.len(), 1, "{cli_gates:?}");
    let metrics: Vec<&str> = suite.samples[0]
        .metrics
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(metrics, ["answer", "quality", "style"]);
    drop(servers);
}
