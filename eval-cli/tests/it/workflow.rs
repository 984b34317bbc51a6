//! issue39:reports: the guide's GitHub Actions workflow
//! (`docs/src/ci/evals.yml`, included into the CI chapter) is a complete,
//! valid workflow file: read as YAML and checked against SchemaStore's
//! github-workflow.json (the schema editors and `check-jsonschema` use;
//! recorded in `eval-cli/tests/fixtures/`, its source beside it).

use crate::common::repo;

use serde_json::Value;

fn schema() -> jsonschema::Validator {
    let path = repo().join("eval-cli/tests/fixtures/github-workflow.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        schema["$id"], "https://json.schemastore.org/github-workflow.json",
        "the fixture is SchemaStore's workflow schema"
    );
    jsonschema::validator_for(&schema).unwrap()
}

/// What the schema says of `yaml`, one line per error (empty: valid).
fn errors(validator: &jsonschema::Validator, yaml: &str) -> Vec<String> {
    let workflow: Value = serde_saphyr::from_str(yaml).unwrap();
    validator
        .iter_errors(&workflow)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn the_guide_s_workflow_is_a_valid_github_workflow() {
    let validator = schema();
    let path = repo().join("docs/src/ci/evals.yml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    let found = errors(&validator, &yaml);
    assert!(found.is_empty(), "{}: {found:#?}", path.display());
    // Complete: triggers, a job with its steps, and the steps the chapter
    // speaks of (the summary, the annotations, the comparison).
    let workflow: Value = serde_saphyr::from_str(&yaml).unwrap();
    assert!(
        workflow["on"]["pull_request"].is_null() && workflow["on"].get("pull_request").is_some()
    );
    let steps = workflow["jobs"]["evals"]["steps"].as_array().unwrap();
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    for want in ["evals report summary", "evals report diff", "cargo test"] {
        assert!(runs.iter().any(|r| r.contains(want)), "{want} in {runs:#?}");
    }
    // The chapter shows this very file.
    let chapter = std::fs::read_to_string(repo().join("docs/src/ci-summaries.md")).unwrap();
    assert!(
        chapter.contains("{{#include ci/evals.yml}}"),
        "the CI chapter includes it"
    );
}

#[test]
fn the_schema_check_refuses_a_broken_workflow() {
    // The check can fail: a job without `runs-on`, a step key GitHub does
    // not know, and a trigger that is not one.
    let validator = schema();
    let broken = "on:\n  pushh: {}\njobs:\n  evals:\n    steps:\n      - runn: cargo test\n";
    let found = errors(&validator, broken);
    assert!(!found.is_empty(), "a broken workflow passed the schema");
    let fine = "on: push\njobs:\n  evals:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n";
    assert!(
        errors(&validator, fine).is_empty(),
        "{:#?}",
        errors(&validator, fine)
    );
}
