//! issue38:convert — `evals convert` round trips A → B → A for every pair
//! of the formats it writes (JSONL, CSV, runevals JSON) over the repository's
//! fixtures, keeping each format's own field names and value types.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// A letta-evals JSONL as letta-evals 0.26.0 reads it
/// (`letta_evals/datasets/loader.py`: `id` or `sample_id`, an int or a
/// string; `input`; `ground_truth`; `agent_args`; `rubric_vars`;
/// `extra_vars`).
const LETTA_INT_IDS: &str = concat!(
    "{\"id\":1,\"input\":\"What is 2+2?\",\"ground_truth\":\"4\",\"agent_args\":{\"tier\":1},\"extra_vars\":{\"k\":\"v\"}}\n",
    "{\"id\":2,\"input\":[\"Hi, I'm Ana.\",\"What is my name?\"],\"ground_truth\":[\"Hi Ana\",\"Ana\"],\"rubric_vars\":{\"name\":\"Ana\"}}\n",
    "{\"id\":\"c-3\",\"input\":\"Capital of France?\",\"ground_truth\":\"Paris\"}\n",
);

const SOURCES: &[&str] = &[
    "letta-evals/letta-ai__letta-evals/a207c56/examples/multiturn-per-turn-grading/dataset.jsonl",
    "letta-evals/letta-ai__letta-evals/a207c56/examples/letta-code-simple-edit/dataset.jsonl",
    "agentspec/agents-oss__agentspec/747919b/examples/gymcoach/eval/workout-qa.jsonl",
    "letta-evals/letta-ai__letta-evals/ae4878e/examples/letta-agent-rubric-grader/dataset.csv",
    "letta-evals/letta-ai__letta-evals/a207c56/examples/reward-composition/dataset.csv",
    "ragas/explodinggradients__ragas/c036bd8/examples/ragas_examples/ag_ui_agent_evals/test_data/weather_tool_calls.csv",
    "m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/hr_benefits_leave.json",
    "m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/starter.json",
    "m365-runevals/microsoft__m365-copilot-eval/ae7844f/schema/v1/examples/valid/multi-turn-simple.json",
    "m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/multiturn_example.json",
];

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .trim_start_matches('\u{feff}')
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Rows as column → cell; a cell holding JSON text compared as JSON (its
/// spacing is not the data).
fn csv_rows(path: &Path) -> Vec<BTreeMap<String, Value>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut r = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|row| {
            let row = row.unwrap();
            headers
                .iter()
                .zip(row.iter())
                .map(|(h, c)| {
                    let v = match serde_json::from_str::<Value>(c) {
                        Ok(v @ (Value::Object(_) | Value::Array(_))) => v,
                        _ => Value::from(c),
                    };
                    (h.to_string(), v)
                })
                .collect()
        })
        .collect()
}

/// A runevals document's version, default evaluators and items, whole
/// (its other top-level keys, `metadata`, have no place in JSONL or CSV).
fn runevals_own(path: &Path) -> (Value, Value, Value) {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (
        doc["schemaVersion"].clone(),
        doc["default_evaluators"].clone(),
        doc["items"].clone(),
    )
}

fn ext(p: &str) -> &str {
    p.rsplit('.').next().unwrap()
}

/// Every source through every other format and back: JSONL lines equal as
/// JSON (names, values, integer ids), CSV columns and cells equal, a
/// runevals document's version, default evaluators and items equal (every
/// key of every item and turn, `evaluators_mode` included).
#[test]
fn convert_round_trips_every_format_pair_keeping_field_names() {
    let dir = scratch("convert-pairs");
    std::fs::write(dir.join("letta-int-ids.jsonl"), LETTA_INT_IDS).unwrap();
    let mut sources: Vec<std::path::PathBuf> = SOURCES.iter().map(|s| fixtures().join(s)).collect();
    sources.push(dir.join("letta-int-ids.jsonl"));
    let mut trips = 0;
    for (n, src) in sources.iter().enumerate() {
        let shown = src.to_string_lossy().into_owned();
        let a = ext(&shown).to_string();
        for b in ["jsonl", "csv", "json"].into_iter().filter(|b| *b != a) {
            let mid = format!("{n}.{b}");
            let back = format!("{n}.{b}.back.{a}");
            let out = evals(&dir, &["convert", &shown, &mid]);
            assert_eq!(code(&out), 0, "{shown} -> {b}: {:?}", text(&out));
            let mut args = vec!["convert", &mid, &back];
            let version;
            if a == "json" {
                version = runevals_own(src).0.as_str().unwrap().to_string();
                args.extend(["--schema-version", &version]);
            }
            let out = evals(&dir, &args);
            assert_eq!(code(&out), 0, "{shown} -> {b} -> {a}: {:?}", text(&out));
            let back = dir.join(&back);
            match a.as_str() {
                "jsonl" => assert_eq!(jsonl(src), jsonl(&back), "{shown} via {b}"),
                "csv" => assert_eq!(csv_rows(src), csv_rows(&back), "{shown} via {b}"),
                _ => assert_eq!(runevals_own(src), runevals_own(&back), "{shown} via {b}"),
            }
            trips += 1;
        }
    }
    assert_eq!(trips, sources.len() * 2);
}

/// letta-evals reads `ground_truth`, never `expected`: a letta JSONL
/// converted to CSV or runevals and back is the same lines, integer ids
/// integers (was `"expected"` and `"id":"1"`).
#[test]
fn convert_keeps_letta_ground_truth_and_integer_ids() {
    let dir = scratch("convert-letta");
    std::fs::write(dir.join("letta.jsonl"), LETTA_INT_IDS).unwrap();
    for mid in ["m.csv", "m.json"] {
        let out = evals(&dir, &["convert", "letta.jsonl", mid]);
        assert_eq!(code(&out), 0, "{:?}", text(&out));
        let back = format!("{mid}.jsonl");
        let out = evals(&dir, &["convert", mid, &back]);
        assert_eq!(code(&out), 0, "{:?}", text(&out));
        let got = std::fs::read_to_string(dir.join(&back)).unwrap();
        assert_eq!(got, LETTA_INT_IDS, "via {mid}");
    }
    // The CSV's header is letta-evals' own.
    let csv = std::fs::read_to_string(dir.join("m.csv")).unwrap();
    assert!(
        csv.starts_with("id,input,ground_truth,"),
        "{}",
        csv.lines().next().unwrap_or_default()
    );
}

/// A runevals 1.2.0 document stays 1.2.0 with its items' `name` at their
/// level (was: 1.6.0, `name` under `extensions`); a version JSONL cannot
/// carry is given back with `--schema-version`, a malformed one refused.
#[test]
fn convert_keeps_runevals_name_and_schema_version() {
    let dir = scratch("convert-runevals");
    let src = fixtures()
        .join("m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/hr_benefits_leave.json");
    let src = src.to_string_lossy().into_owned();
    let out = evals(&dir, &["convert", &src, "same.json"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("same.json")).unwrap()).unwrap();
    assert_eq!(doc["schemaVersion"], "1.2.0");
    let names: Vec<&str> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert!(names.contains(&"FMLA eligibility flow"), "{names:?}");
    assert!(
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["extensions"]["evals"]["extra"].get("name").is_none()),
        "{doc}"
    );
    // The document's own top-level keys stay (starter: metadata, defaults).
    let starter =
        fixtures().join("m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/starter.json");
    let out = evals(
        &dir,
        &["convert", &starter.to_string_lossy(), "starter.json"],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    assert_eq!(read(&starter), read(&dir.join("starter.json")));
    // JSONL: `name` at the top of its line.
    let out = evals(&dir, &["convert", &src, "x.jsonl"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(
        jsonl(&dir.join("x.jsonl"))
            .iter()
            .any(|l| l["name"] == "FMLA eligibility flow")
    );
    let out = evals(
        &dir,
        &["convert", "x.jsonl", "y.json", "--schema-version", "2.0"],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("1.x.y"), "{:?}", text(&out));
    assert!(!dir.join("y.json").exists());
}
