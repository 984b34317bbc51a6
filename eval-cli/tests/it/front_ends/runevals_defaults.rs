//! issue38:runevals — seed 003's starter (a 1.0.0 file that names no
//! evaluators) scored on runevals' default dimensions through every front
//! end: the attribute without `metrics(...)`, the harness with `""`, and
//! `evals evaluate`; the same metrics, verdicts and scores, and the same
//! note, everywhere (against the demo agent and the scripted judge).

use std::collections::BTreeMap;

use eval_runtime::results::Results;

use super::{Servers, build, command, read, scratch, text, verdicts};

/// Seed 003's starter shape: 1.0.0, no evaluators; one item with context.
const STARTER: &str = r#"{
  "schemaVersion": "1.0.0",
  "items": [
    { "prompt": "What is the capital of France?", "expected_response": "Paris" },
    { "prompt": "What is retrieval-augmented generation?", "expected_response": "grounded in real sources", "context": "RAG grounds answers in retrieved sources." }
  ]
}
"#;

const ATTR: &str = r#"
use eval_runtime::prelude::*;

#[eval_dataset("data/starter.json")]
async fn starter(sample: &Sample) -> eval_runtime::Result<Response> {
    HttpAgent::from_env()?.respond(sample).await
}
"#;

const HARNESS: &str = r#"
fn main() -> std::process::ExitCode {
    eval_runtime::Harness::new()
        .dataset("data/starter.json", "")
        .agent(eval_runtime::HttpAgent::from_env())
        .run()
}
"#;

/// What every front end says.
const NOTE: &str = "data/starter.json: names no evaluators, so its 2 item(s) are scored on runevals' default dimensions: relevance, coherence, similarity, groundedness";

fn names(r: &Results) -> BTreeMap<String, Vec<String>> {
    r.samples
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                s.metrics.iter().map(|m| m.name.clone()).collect(),
            )
        })
        .collect()
}

fn scores(r: &Results) -> Vec<(String, String, Option<String>, bool)> {
    r.samples
        .iter()
        .flat_map(|s| {
            s.metrics.iter().map(|m| {
                (
                    s.id.clone(),
                    m.name.clone(),
                    m.score.map(|x| format!("{x:.3}")),
                    m.passed,
                )
            })
        })
        .collect()
}

#[test]
fn a_starter_is_scored_on_the_seeds_dimensions_everywhere() {
    let dir = scratch(
        "front-ends-runevals-defaults",
        &[
            ("data/starter.json", STARTER),
            ("tests/attr.rs", ATTR),
            ("tests/harness.rs", HARNESS),
        ],
    );
    let (attr_exe, harness_exe) = build(&dir);
    let servers = Servers::start();
    let (url, judge) = (servers.agent.url(), servers.judge_url());
    let out = dir.join("out");
    let run = |cmd: &mut std::process::Command| cmd.env("EVAL_JUDGE_URL", &judge).output().unwrap();

    let attr = run(&mut command(&attr_exe, &dir, &url, &out.join("attr")));
    let attr_text = text(&attr);
    assert!(attr_text.contains(NOTE), "{attr_text}");
    let harness = run(&mut command(&harness_exe, &dir, &url, &out.join("harness")));
    let harness_text = text(&harness);
    assert!(harness_text.contains(NOTE), "{harness_text}");
    let cli = run(
        command(env!("CARGO_BIN_EXE_evals"), &dir, &url, &out.join("cli")).args([
            "evaluate",
            "data/starter.json",
            "--output",
            "out/cli.json",
        ]),
    );
    let cli_text = text(&cli);
    assert!(cli_text.contains(NOTE), "{cli_text}");

    let reference = read(&out.join("attr/front-ends-runevals-defaults/attr.json"));
    assert_eq!(
        names(&reference),
        BTreeMap::from([
            (
                "0".to_string(),
                vec![
                    "relevance".to_string(),
                    "coherence".into(),
                    "similarity".into()
                ]
            ),
            (
                "1".to_string(),
                vec![
                    "relevance".to_string(),
                    "coherence".into(),
                    "similarity".into(),
                    "groundedness".into()
                ]
            ),
        ])
    );
    // The judge really scored them (no silent PartialMatch).
    assert!(
        scores(&reference)
            .iter()
            .all(|(_, _, score, _)| score.is_some()),
        "{:?}",
        scores(&reference)
    );
    for file in [
        out.join("harness/front-ends-runevals-defaults/harness.json"),
        dir.join("out/cli.json"),
    ] {
        let r = read(&file);
        assert_eq!(verdicts(&r), verdicts(&reference), "{}", file.display());
        assert_eq!(scores(&r), scores(&reference), "{}", file.display());
    }
    drop(servers);
}
