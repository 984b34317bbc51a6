//! letta-evals' `target.model_handles` (one run per model) through the
//! attribute and the harness, against the agent of `crate::suite_models`
//! (the JSON contract: the model arrives as `agent_args.model`; right as
//! `openai/good-model`, wrong as any other). The attribute tests one
//! model's dataset per function (`dataset = "capitals@openai/good-model"`);
//! the harness runs both. Each model's reward gate is judged on its own:
//! the good model's passes, the bad model's fails the run.

use super::{build, command, scratch, text};

const ATTR: &str = r#"
use eval_runtime::prelude::*;

#[eval_dataset(manifest = "suite.yaml", dataset = "capitals@openai/good-model")]
async fn good(sample: &Sample) -> eval_runtime::Result<Response> {
    HttpAgent::from_env()?.respond(sample).await
}

#[eval_dataset(manifest = "suite.yaml", dataset = "capitals@openai/bad-model")]
async fn bad(sample: &Sample) -> eval_runtime::Result<Response> {
    HttpAgent::from_env()?.respond(sample).await
}
"#;

const HARNESS: &str = r#"
fn main() -> std::process::ExitCode {
    eval_runtime::Harness::new()
        .manifest("suite.yaml")
        .agent(eval_runtime::HttpAgent::from_env())
        .run()
}
"#;

#[test]
fn a_suite_with_two_model_handles_runs_per_model_in_the_attribute_and_the_harness() {
    let fixture = super::repo().join("tests/fixtures/letta-evals-0.26.0/two-models");
    let read = |f: &str| std::fs::read_to_string(fixture.join(f)).unwrap();
    let (suite, data) = (read("suite.yaml"), read("dataset.jsonl"));
    let dir = scratch(
        "front-ends-suite-models",
        &[
            ("suite.yaml", &suite),
            ("dataset.jsonl", &data),
            ("tests/attr.rs", ATTR),
            ("tests/harness.rs", HARNESS),
        ],
    );
    let (attr_exe, harness_exe) = build(&dir);
    let (url, _) = crate::suite_models::agent();
    let endpoint = format!("{url}/agent");
    let out = dir.join("out");

    let attr = command(&attr_exe, &dir, &endpoint, &out.join("attr"))
        .output()
        .unwrap();
    let attr_text = text(&attr);
    assert_eq!(attr.status.code(), Some(101), "{attr_text}");
    assert!(attr_text.contains("test good::gates ... ok"), "{attr_text}");
    assert!(
        attr_text.contains("test bad::gates ... FAILED"),
        "{attr_text}"
    );

    let harness = command(&harness_exe, &dir, &endpoint, &out.join("harness"))
        .output()
        .unwrap();
    let harness_text = text(&harness);
    // Only a gate fails (samples are judged by the reward): exit 1.
    assert_eq!(harness.status.code(), Some(1), "{harness_text}");
    assert!(
        harness_text.contains("gate capitals_openai_bad_model FAILED"),
        "{harness_text}"
    );
    assert!(
        !harness_text.contains("gate capitals_openai_good_model FAILED"),
        "{harness_text}"
    );
    assert!(
        harness_text.contains("test capitals_openai_good_model::"),
        "{harness_text}"
    );
}
