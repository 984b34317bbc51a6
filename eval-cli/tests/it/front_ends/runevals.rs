//! A runevals file's own evaluators, one rule on every front end: with no
//! metrics given they score the file (defaults, `extend`/`replace`, per
//! turn); metrics given are added to them, and where the file already sets
//! a metric of that name its setting is kept. Every front end says so.
//!
//! The datasets, against the demo agent and the scripted judge:
//! * `m365`: seed 003's complete example, as written in the seed (Relevance
//!   and Coherence by default, Citations extended, a second turn whose
//!   ExactMatch replaces the defaults);
//! * `own`: PartialMatch 0.3 by default; `strict` raises its own to 0.99 (and
//!   fails); a conversation whose first turn is checked by ExactMatch and
//!   whose second turn, with no expected answer, by Citations alone;
//! * `own_plus`: the same file with `partial_match >= 0.1` given: the items
//!   keep their own PartialMatch (so `strict` still fails), and the
//!   conversation, whose last turn has no expected answer, cannot be scored
//!   by the metric added to it (an error that says so).

use std::collections::BTreeMap;
use std::process::Output;

use eval_runtime::results::{Results, Verdict};

use super::{Servers, build, command, read, scratch, text, verdicts};

const M365: &str =
    include_str!("../../../../tests/fixtures/seeds/003-complete-schema-example.json");

const OWN: &str = r#"{
  "schemaVersion": "1.2.0",
  "default_evaluators": { "PartialMatch": { "threshold": 0.3 } },
  "items": [
    { "name": "capital", "prompt": "What is the capital of France?", "expected_response": "Paris" },
    {
      "name": "strict",
      "prompt": "What is retrieval-augmented generation?",
      "expected_response": "grounded in real sources and cited",
      "evaluators": { "PartialMatch": { "threshold": 0.99 } }
    },
    {
      "name": "follow-up",
      "turns": [
        {
          "prompt": "What is the capital of France?",
          "expected_response": "Paris",
          "evaluators": { "ExactMatch": {} },
          "evaluators_mode": "replace"
        },
        {
          "prompt": "What does a reranker do?",
          "evaluators": { "Citations": { "threshold": 0 } },
          "evaluators_mode": "replace"
        }
      ]
    }
  ]
}
"#;

const ATTR: &str = r#"
use eval_runtime::prelude::*;

fn agent() -> eval_runtime::Result<HttpAgent> {
    HttpAgent::from_env()
}

#[eval_dataset("data/m365.json")]
async fn m365(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

#[eval_dataset("data/own.json")]
async fn own(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

#[eval_dataset("data/own_plus.json", metrics(partial_match >= 0.1))]
async fn own_plus(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}
"#;

const HARNESS: &str = r#"
fn main() -> std::process::ExitCode {
    eval_runtime::Harness::new()
        .dataset("data/m365.json", "")
        .dataset("data/own.json", "")
        .dataset("data/own_plus.json", "partial_match >= 0.1")
        .agent(eval_runtime::HttpAgent::from_env())
        .run()
}
"#;

/// What every front end prints for `own_plus`.
const ADDED: &str = "data/own_plus.json: its items' own evaluators are scored, and the metrics given (partial_match) are added to them; where the file already sets a metric of the same name (2 item(s)), its own setting is kept";

/// (dataset, id) → each metric's (name, score to 3 decimals, passed).
type Scores = BTreeMap<(String, String), Vec<(String, Option<String>, bool)>>;

fn scores(r: &Results) -> Scores {
    r.samples
        .iter()
        .map(|s| {
            let metrics = s
                .metrics
                .iter()
                .map(|m| (m.name.clone(), m.score.map(|x| format!("{x:.3}")), m.passed))
                .collect();
            ((s.dataset.clone(), s.id.clone()), metrics)
        })
        .collect()
}

fn run(cmd: &mut std::process::Command, judge: &str) -> Output {
    cmd.env("EVAL_JUDGE_URL", judge).output().unwrap()
}

#[test]
fn a_runevals_files_own_evaluators_give_the_same_verdicts_everywhere() {
    let dir = scratch(
        "front-ends-runevals",
        &[
            ("data/m365.json", M365),
            ("data/own.json", OWN),
            ("data/own_plus.json", OWN),
            ("tests/attr.rs", ATTR),
            ("tests/harness.rs", HARNESS),
        ],
    );
    let (attr_exe, harness_exe) = build(&dir);
    let servers = Servers::start();
    let (url, judge) = (servers.agent.url(), servers.judge_url());
    let out = dir.join("out");

    // 1. The attribute: no `metrics(...)` needed for a file with its own.
    let attr = run(
        &mut command(&attr_exe, &dir, &url, &out.join("attr")),
        &judge,
    );
    let attr_text = text(&attr);
    assert_eq!(attr.status.code(), Some(101), "{attr_text}");
    let mut failed: Vec<&str> = attr_text
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .collect();
    failed.sort();
    assert_eq!(
        failed,
        [
            // issue38:runevals: a conversation is named by its `name`.
            "m365::expense_policy_flow",
            "m365::what_is_microsoft_graph",
            "own::what_is_retrieval_augmented_generation",
            "own_plus::follow_up",
            "own_plus::what_is_retrieval_augmented_generation",
        ],
        "{attr_text}"
    );
    assert!(attr_text.contains(ADDED), "{attr_text}");
    let attr_file = out.join("attr/front-ends-runevals/attr.json");
    // Once per run, the attribute says where its results and report are.
    let said = format!(
        "note: eval results: {}, html: {}",
        attr_file.display(),
        attr_file.with_extension("html").display()
    );
    assert_eq!(
        attr_text.matches("note: eval results: ").count(),
        1,
        "{attr_text}"
    );
    assert!(attr_text.contains(&said), "{attr_text}");

    // 2. The harness: `""` is the dataset's own.
    let harness = run(
        &mut command(&harness_exe, &dir, &url, &out.join("harness")),
        &judge,
    );
    let harness_text = text(&harness);
    assert_eq!(harness.status.code(), Some(101), "{harness_text}");
    assert!(harness_text.contains(ADDED), "{harness_text}");
    let harness_file = out.join("harness/front-ends-runevals/harness.json");

    // 3. The command, one file at a time, joined by `report merge`.
    let evals = |args: &[&str]| {
        run(
            command(env!("CARGO_BIN_EXE_evals"), &dir, &url, &out.join("cli")).args(args),
            &judge,
        )
    };
    let mut parts = Vec::new();
    for (file, metrics) in [
        ("m365", None),
        ("own", None),
        ("own_plus", Some("partial_match >= 0.1")),
    ] {
        let part = format!("out/cli-{file}.json");
        let mut args = vec!["evaluate".to_string(), format!("data/{file}.json")];
        if let Some(m) = metrics {
            args.extend(["--metrics".to_string(), m.to_string()]);
        }
        args.extend(["--output".to_string(), part.clone()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = evals(&args);
        assert_eq!(o.status.code(), Some(1), "{file}: {}", text(&o));
        assert_eq!(text(&o).contains(ADDED), metrics.is_some(), "{}", text(&o));
        parts.push(dir.join(part));
    }
    let cli_file = out.join("cli.json");
    let mut merge = vec!["report", "merge", cli_file.to_str().unwrap()];
    merge.extend(parts.iter().map(|p| p.to_str().unwrap()));
    let merged = evals(&merge);
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged));

    // The same verdicts and the same scores everywhere.
    let reference = read(&attr_file);
    let key = |d: &str, id: &str| (d.to_string(), id.to_string());
    let fail = (Verdict::Fail, None, 1);
    let pass = (Verdict::Pass, None, 1);
    assert_eq!(
        verdicts(&reference),
        BTreeMap::from([
            (key("m365", "0"), fail),
            (key("m365", "1"), fail),
            (key("own", "0"), pass),
            (key("own", "1"), fail),
            (key("own", "2"), pass),
            (key("own_plus", "0"), pass),
            (key("own_plus", "1"), fail),
            (key("own_plus", "2"), (Verdict::Error, None, 1)),
        ])
    );
    let want = scores(&reference);
    let names = |d: &str, id: &str| -> Vec<&str> {
        want[&key(d, id)].iter().map(|m| m.0.as_str()).collect()
    };
    // Seed 003's example: defaults extended by Citations; per turn, the
    // defaults on turn 1 and ExactMatch (`contains`) alone on turn 2.
    assert_eq!(names("m365", "0"), ["relevance", "coherence", "citations"]);
    assert_eq!(
        names("m365", "1"),
        ["relevance@turn1", "coherence@turn1", "contains@turn2"]
    );
    // A turn without an expected answer keeps its Citations; the others theirs.
    assert_eq!(names("own", "2"), ["contains@turn1", "citations@turn2"]);
    // Given metrics add to the file's; the file's own PartialMatch is kept.
    assert_eq!(names("own_plus", "1"), ["partial_match"]);
    assert_eq!(want[&key("own_plus", "1")], want[&key("own", "1")]);
    for file in [&harness_file, &cli_file] {
        let r = read(file);
        assert_eq!(verdicts(&r), verdicts(&reference), "{}", file.display());
        assert_eq!(scores(&r), want, "{}", file.display());
    }
    assert_sample_error(&read(&cli_file));
    drop(servers);
}

/// The conversation of `own_plus`: the metric added to it needs the last
/// turn's expected answer, and the error says so.
fn assert_sample_error(r: &Results) {
    let s = r
        .samples
        .iter()
        .find(|s| s.dataset == "own_plus" && s.id == "2")
        .expect("own_plus's conversation");
    let error = s.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("which metric `partial_match` needs"),
        "{error}"
    );
}
