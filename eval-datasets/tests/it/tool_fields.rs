//! Tool calls in datasets: deepeval `expected_tools` / `tools_called`, ragas
//! `reference_tool_calls` and message lists, letta-evals' tool name as
//! `ground_truth`, our own `expected_tools`; malformed values as errors
//! naming file, line and field; writers that keep them.

use eval_datasets::{Dataset, Expected, Input, Sample, ToolCall, write};
use serde_json::json;

fn ok(path: &str, data: &str) -> Dataset {
    Dataset::from_bytes(path, data.as_bytes()).unwrap_or_else(|e| panic!("should load:\n{e}"))
}

fn err(path: &str, data: &str) -> String {
    match Dataset::from_bytes(path, data.as_bytes()) {
        Ok(ds) => panic!("should fail, loaded {} samples", ds.samples.len()),
        Err(e) => e.to_string(),
    }
}

fn tools(s: &Sample) -> &[ToolCall] {
    s.expected_tools.as_deref().expect("expected tools")
}

#[test]
fn our_jsonl_takes_names_or_calls() {
    let ds = ok(
        "tools.jsonl",
        concat!(
            r#"{"input": "a", "expected_tools": ["calculator", "lookup"]}"#,
            "\n",
            r#"{"input": "b", "expected_tools": [{"name": "calculator", "arguments": {"expression": "15 * 23"}}]}"#,
            "\n",
            r#"{"input": "c", "expected_tools": [{"type": "function", "id": "c1", "function": {"name": "lookup", "arguments": "{\"query\": \"refunds\"}"}}]}"#,
            "\n",
            r#"{"input": "d", "expected_tools": []}"#,
            "\n",
            r#"{"input": "e", "expected_tools": null}"#,
            "\n",
            r#"{"input": "f"}"#,
            "\n",
        ),
    );
    let s = &ds.samples;
    assert_eq!(
        tools(&s[0]),
        [ToolCall::new("calculator"), ToolCall::new("lookup")]
    );
    assert_eq!(
        tools(&s[1]),
        [ToolCall::new("calculator").with_arguments(json!({"expression": "15 * 23"}))]
    );
    assert_eq!(
        tools(&s[2]),
        [ToolCall::new("lookup")
            .with_arguments(json!({"query": "refunds"}))
            .with_id("c1")]
    );
    assert_eq!(s[3].expected_tools, Some(vec![]), "no call expected");
    assert_eq!(s[4].expected_tools, None, "null: not said");
    assert_eq!(s[5].expected_tools, None);
    assert!(s.iter().all(|s| s.extra.is_empty()), "nothing left over");
}

#[test]
fn deepeval_goldens_expected_tools_and_tools_called() {
    // A deepeval golden (JSON): `expected_tools` of deepeval ToolCalls; its
    // `description` has no place in a tool call, so the value as written is
    // kept in extra too; `tools_called` and `actual_output` (what was called
    // and answered when the golden was recorded) stay in extra unchanged.
    let text = r#"[
  {
    "input": "What if these shoes don't fit?",
    "actual_output": "We offer a 30-day full refund.",
    "expected_output": "A 30-day refund.",
    "context": ["Refunds within 30 days."],
    "tools_called": [{"name": "WebSearch", "input_parameters": {"q": "refund"}}],
    "expected_tools": [
      {"name": "WebSearch", "input_parameters": {"q": "refund policy"}, "description": "searches the web"},
      {"name": "ToolQuery", "inputParameters": null}
    ]
  }
]"#;
    let ds = ok("goldens.json", text);
    let s = &ds.samples[0];
    assert_eq!(
        tools(s),
        [
            ToolCall::new("WebSearch").with_arguments(json!({"q": "refund policy"})),
            ToolCall::new("ToolQuery")
        ]
    );
    assert_eq!(
        s.reference_contexts,
        ["Refunds within 30 days."],
        "deepeval's context"
    );
    let raw: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(s.extra["expected_tools"], raw[0]["expected_tools"]);
    assert_eq!(s.extra["tools_called"], raw[0]["tools_called"]);
    assert_eq!(s.extra["actual_output"], raw[0]["actual_output"]);
    assert_eq!(s.extra.len(), 3);
    // Old deepeval: plain names; camelCase as deepeval serialises it.
    let ds = ok(
        "g.json",
        r#"[{"input": "q", "actual_output": "x", "expectedTools": ["WebSearch"]}]"#,
    );
    assert_eq!(tools(&ds.samples[0]), [ToolCall::new("WebSearch")]);
    assert!(
        !ds.samples[0].extra.contains_key("expectedTools"),
        "lossless"
    );
}

#[test]
fn deepeval_own_goldens_fixture() {
    // deepeval's own test goldens write a call's arguments under `input`.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../tests/fixtures/public/deepeval/confident-ai__deepeval/a2e0d4c/tests/test_confident/goldens.json",
    );
    let ds = Dataset::load(&path).unwrap();
    assert_eq!(ds.samples.len(), 4);
    let s = &ds.samples[0];
    assert_eq!(
        tools(s),
        [ToolCall::new("search_population_data")
            .with_arguments(json!({"query": "Paris France population statistics"}))]
    );
    assert_eq!(
        s.extra["tools_called"][0]["input"]["query"],
        json!("Paris France population 2024"),
        "the recorded call stays in extra"
    );
    assert!(!s.extra.contains_key("expected_tools"), "nothing lost");
}

#[test]
fn deepeval_csv_cells_are_json_or_names() {
    let text = concat!(
        "input,actual_output,expected_tools,tools_called\n",
        "q1,a1,WebSearch;ToolQuery,WebSearch\n",
        "q2,a2,\"[{\"\"name\"\": \"\"WebSearch\"\", \"\"input_parameters\"\": {\"\"q\"\": \"\"x\"\"}}]\",\n",
        "q3,a3,,\n",
    );
    let ds = ok("cases.csv", text);
    assert_eq!(
        tools(&ds.samples[0]),
        [ToolCall::new("WebSearch"), ToolCall::new("ToolQuery")]
    );
    assert_eq!(ds.samples[0].extra["tools_called"], json!("WebSearch"));
    assert_eq!(
        tools(&ds.samples[1]),
        [ToolCall::new("WebSearch").with_arguments(json!({"q": "x"}))]
    );
    assert_eq!(
        ds.samples[2].expected_tools, None,
        "an empty cell says nothing"
    );
}

#[test]
fn ragas_reference_tool_calls_csv_fixture() {
    // ragas' own example dataset: `reference_tool_calls` cells of JSON.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../tests/fixtures/public/ragas/explodinggradients__ragas/c036bd8/examples/ragas_examples/ag_ui_agent_evals/test_data/weather_tool_calls.csv",
    );
    let ds = Dataset::load(&path).unwrap();
    assert_eq!(ds.samples.len(), 5);
    assert_eq!(
        ds.samples[1].input,
        Input::Text("Can you check the weather in Tokyo?".into())
    );
    assert_eq!(
        tools(&ds.samples[1]),
        [ToolCall::new("get_weather").with_arguments(json!({"location": "Tokyo"}))]
    );
    assert!(ds.samples.iter().all(|s| s.extra.is_empty()));
}

#[test]
fn ragas_message_lists_ask_the_human_turns() {
    // A MultiTurnSample as ragas serialises it: the human turns are asked;
    // the AI messages' tool_calls (the recorded run's) stay with the
    // messages, kept whole in extra; reference_tool_calls are expected.
    let messages = json!([
        {"content": "What's the weather like in New York right now?", "type": "human"},
        {"content": "It is 75°F.", "type": "ai", "tool_calls": [{"name": "weather_check", "args": {"location": "New York"}}]},
        {"content": "75°F, partly cloudy", "type": "tool"},
        {"content": "Can you translate that to Celsius?", "type": "human"},
        {"content": "About 23.9°C.", "type": "ai", "tool_calls": [{"name": "temperature_conversion", "args": {"temperature_fahrenheit": 75}}]}
    ]);
    let line = json!({
        "user_input": messages,
        "reference_tool_calls": [
            {"name": "weather_check", "args": {"location": "New York"}},
            {"name": "temperature_conversion", "args": {"temperature_fahrenheit": 75}}
        ]
    });
    let ds = ok("ragas.jsonl", &format!("{line}\n"));
    let s = &ds.samples[0];
    assert_eq!(
        s.input,
        Input::Turns(vec![
            "What's the weather like in New York right now?".into(),
            "Can you translate that to Celsius?".into()
        ])
    );
    assert_eq!(s.extra["messages"], messages);
    assert_eq!(s.extra.len(), 1);
    assert_eq!(
        tools(s),
        [
            ToolCall::new("weather_check").with_arguments(json!({"location": "New York"})),
            ToolCall::new("temperature_conversion")
                .with_arguments(json!({"temperature_fahrenheit": 75}))
        ]
    );
    // One human message: a single prompt.
    let one = json!({"user_input": [{"content": "Hi", "type": "human"}], "reference": "Hello"});
    let ds = ok("one.jsonl", &format!("{one}\n"));
    assert_eq!(ds.samples[0].input, Input::Text("Hi".into()));
    assert_eq!(ds.samples[0].expected_text(), Some("Hello"));
    // No human message to ask: an error on `user_input`, not a silent skip.
    let none = json!({"user_input": [{"content": "x", "type": "ai"}]});
    let e = err("none.jsonl", &format!("{none}\n"));
    assert!(
        e.starts_with(
            "none.jsonl:1: field `user_input`: turn 0: expected a string, found an object"
        ),
        "{e}"
    );
}

#[test]
fn letta_tool_usage_ground_truth_is_the_tool_name() {
    // Seed 001's "Tool Usage Testing" example, JSONL and CSV.
    let jsonl = concat!(
        r#"{"input": "Search for information about pandas", "ground_truth": "search"}"#,
        "\n",
        r#"{"input": "Calculate 15 * 23", "ground_truth": "calculator"}"#,
        "\n"
    );
    let csv = "input,ground_truth\n\"Search for information about pandas\",\"search\"\n\"Calculate 15 * 23\",\"calculator\"\n";
    for ds in [ok("t.jsonl", jsonl), ok("t.csv", csv)] {
        assert_eq!(
            ds.samples[1].expected,
            Some(Expected::Text("calculator".into()))
        );
        assert_eq!(ds.samples[1].expected_tools, None);
    }
}

#[test]
fn malformed_tool_calls_name_file_line_and_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "t.jsonl",
            "{\"input\": \"a\"}\n{\"input\": \"b\", \"expected_tools\": \"search\"}\n",
            "t.jsonl:2: field `expected_tools`: expected an array of tool calls (names, or objects with `name` and `arguments`), found a string",
        ),
        (
            "t.jsonl",
            "{\"input\": \"b\", \"expected_tools\": [\"ok\", {\"args\": {}}]}\n",
            "t.jsonl:1: field `expected_tools`: tool call 1: missing `name` (a tool call is a tool name, or an object with `name` and its arguments)",
        ),
        (
            "t.jsonl",
            "{\"input\": \"b\", \"reference_tool_calls\": [{\"name\": \"w\", \"agrs\": {}}]}\n",
            "t.jsonl:1: field `reference_tool_calls`: tool call 0: unknown key `agrs` (expected name, arguments (or args, input_parameters, input), id, turn, function, type, description, reasoning, output)",
        ),
        (
            "t.jsonl",
            "{\"input\": \"b\", \"expected_tools\": [{\"name\": \"w\", \"args\": [1]}]}\n",
            "t.jsonl:1: field `expected_tools`: tool call 0: `args` must be an object of arguments, found an array",
        ),
        (
            "t.jsonl",
            "{\"input\": \"b\", \"expected_tools\": [], \"reference_tool_calls\": []}\n",
            "t.jsonl:1: field `reference_tool_calls`: `expected_tools` and `reference_tool_calls` both give the sample's expected_tools; keep one",
        ),
        (
            "t.csv",
            "input,reference_tool_calls\nq,\"[{\"\"name\"\": \"\"w\"\"\"\n",
            "t.csv:2: field `reference_tool_calls`: expected a JSON array of tool calls in this cell: EOF while parsing an object at line 1 column 13",
        ),
        (
            "g.json",
            "[{\"input\": \"q\", \"actual_output\": \"x\",\n  \"expected_tools\": [{\"name\": 5}]}]",
            "g.json:1: field `expected_tools`: tool call 0: `name` must be a string, found a number",
        ),
    ];
    for (path, data, expected) in cases {
        let e = err(path, data);
        assert_eq!(e, *expected, "{data}");
    }
}

#[test]
fn writers_keep_expected_tools() {
    let text = concat!(
        r#"{"input": "a", "expected_tools": [{"name": "calculator", "arguments": {"expression": "2 + 2"}}, "lookup"]}"#,
        "\n",
        r#"{"input": "b", "expected_tools": []}"#,
        "\n",
        r#"{"input": "c", "expected_tools": [{"name": "w", "input_parameters": {"q": 1}, "output": "sunny"}]}"#,
        "\n",
        r#"{"input": "d"}"#,
        "\n",
    );
    let original = ok("a.jsonl", text).samples;
    let strip = |samples: Vec<Sample>| -> Vec<Sample> {
        samples
            .into_iter()
            .map(|mut s| {
                s.source = Sample::new("").source;
                // issue38:runevals: how a runevals file without evaluators
                // is scored (its default dimensions), not the sample's data.
                s.runevals_defaults = false;
                s
            })
            .collect()
    };
    let jsonl = write::to_jsonl(&original);
    let csv = write::to_csv(&original).unwrap();
    let runevals = write::to_runevals(&original).to_string();
    for (path, text) in [("b.jsonl", jsonl), ("b.csv", csv), ("b.json", runevals)] {
        let back = ok(path, &text).samples;
        assert_eq!(strip(back), strip(original.clone()), "{path}:\n{text}");
    }
    assert!(
        original[2].extra.contains_key("expected_tools"),
        "deepeval's output kept"
    );
}
