//! The attribute with in-process agents (async and sync), no HTTP.

use eval_runtime::prelude::*;

fn answer(question: &str) -> String {
    let q = question.to_lowercase();
    let known = [
        ("france", "Paris is the capital of France."),
        ("japan", "Tokyo."),
        ("italy", "Rome"),
        ("spain", "Madrid"),
        ("name", "Your name is Ada."),
    ];
    known
        .iter()
        .find(|(k, _)| q.contains(k))
        .map_or("I don't know.", |(_, a)| a)
        .to_string()
}

/// An in-process agent: answers every turn of the conversation.
async fn agent(sample: &Sample) -> Response {
    let outputs: Vec<String> = sample.input.turns().iter().map(|t| answer(t)).collect();
    if outputs.len() > 1 {
        Response::default().with_turn_outputs(outputs)
    } else {
        Response::new(outputs.concat())
    }
}

#[eval_dataset("tests/data/capitals.jsonl", metrics(contains >= 1.0, partial_match >= 0.2))]
async fn capitals(sample: &Sample) -> Response {
    agent(sample).await
}

#[eval_dataset("tests/data/capitals.jsonl", metrics(contains(case_sensitive = true)))]
fn capitals_sync(sample: &Sample) -> Result<Response, String> {
    let outputs: Vec<String> = sample.input.turns().iter().map(|t| answer(t)).collect();
    Ok(Response::default().with_turn_outputs(outputs))
}

/// Three runs per sample: each metric is the mean over the runs.
#[eval_dataset("tests/data/capitals.jsonl", metrics(contains), repeat = 3)]
async fn capitals_repeated(sample: &Sample) -> Response {
    agent(sample).await
}

#[test]
fn generated_names_are_the_documented_ones() {
    // Ask this very test binary for its list, as cargo/nextest/IDEs do.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--list", "--format", "terse"])
        .output()
        .unwrap();
    let list = String::from_utf8(out.stdout).unwrap();
    for name in [
        "capitals::what_is_the_capital_of_france__geo__: test",
        "capitals::what_is_the_capital_of_japan__geo__asia__: test",
        "capitals::remember_my_name_is_ada_what_s_my_name: test",
        "capitals::per_turn: test",
        "capitals_sync::per_turn: test",
    ] {
        assert!(list.lines().any(|l| l == name), "{name} not in:\n{list}");
    }
    assert_eq!(
        list.lines().filter(|l| l.starts_with("capitals::")).count(),
        4
    );
}

// an external scorer in the attribute, run in the crate's
// directory; it scores as `contains` does.
#[eval_dataset(
    "tests/data/capitals.jsonl",
    metrics(exec(command = "python3 tests/data/score_contains.py", name = "py_contains") >= 1.0)
)]
async fn capitals_scored_by_python(sample: &Sample) -> Response {
    agent(sample).await
}

// structured output through the attribute; the schema file is
// read relative to the crate (and checked to be JSON at compile time).
#[eval_dataset(
    "tests/data/refunds.jsonl",
    metrics(
        is_json(extract = true),
        json_schema(schema_file = "tests/data/schemas/refund.json", extract = true),
        json_pointer(pointer = "/refund/amount", extract = true)
    )
)]
fn refunds(sample: &Sample) -> Response {
    let (ticket, amount, currency) = if sample.id == "full" {
        ("T-1042", 42, "EUR")
    } else {
        ("T-1044", 15, "USD")
    };
    let json = format!(
        r#"{{"ticket": "{ticket}", "refund": {{"amount": {amount}, "currency": "{currency}"}}}}"#
    );
    Response::new(if sample.id == "full" {
        json
    } else {
        format!("Done. Here is the refund:\n```json\n{json}\n```")
    })
}
