//! Loader behaviour on odd but valid input, and the errors for bad input.

use eval_datasets::{Dataset, DatasetError, Expected, Input};

fn ok(path: &str, data: &[u8]) -> Dataset {
    Dataset::from_bytes(path, data).unwrap_or_else(|e| panic!("should load:\n{e}"))
}

fn err(path: &str, data: &[u8]) -> String {
    match Dataset::from_bytes(path, data) {
        Ok(ds) => panic!("should fail, loaded {} samples", ds.samples.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn jsonl_bom_crlf_mixed_endings_blank_lines_no_final_newline() {
    let data = b"\xEF\xBB\xBF{\"input\": \"a\", \"expected\": \"1\"}\r\n\r\n  \n{\"input\": \"b\"}\r{\"input\": \"c\", \"tags\": [\"x\"]}";
    let ds = ok("d.jsonl", data);
    let lines: Vec<usize> = ds.samples.iter().map(|s| s.source.line).collect();
    assert_eq!(lines, vec![1, 4, 5]);
    assert_eq!(ds.samples[0].expected_text(), Some("1"));
    assert_eq!(ds.samples[2].tags, vec!["x"]);
    assert_eq!(ds.samples[2].id, "2");
}

#[test]
fn jsonl_every_bad_line_is_reported_with_line_and_column() {
    let data = b"{\"input\": \"ok\"}\n{\"input\": \"broken\"\n[1, 2]\n{\"question\": 5}\n{\"expected\": \"x\"}\n";
    let msg = err("evals/rag.jsonl", data);
    assert!(
        msg.contains("evals/rag.jsonl:2:18: invalid JSON: EOF while parsing an object"),
        "{msg}"
    );
    assert!(
        msg.contains(
            "evals/rag.jsonl:3:1: expected a JSON object (one sample per line), found an array"
        ),
        "{msg}"
    );
    assert!(msg.contains("evals/rag.jsonl:4: field `question`: expected a string or an array of strings (one per turn), found a number"), "{msg}");
    assert!(
        msg.contains("evals/rag.jsonl:5: missing field `input`"),
        "{msg}"
    );
    assert_eq!(msg.lines().count(), 4, "{msg}");
}

#[test]
fn jsonl_field_errors() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"input": ["a", "b"], "ground_truth": ["x"]}"#,
            "has 1 per-turn answers but `input` has 2 turns",
        ),
        (
            r#"{"input": "a", "ground_truth": ["x", "y"]}"#,
            "is an array (one answer per turn) but `input` is a single prompt",
        ),
        (
            r#"{"input": "a", "expected": "x", "ground_truth": "y"}"#,
            "`expected` and `ground_truth` both give the sample's expected",
        ),
        (
            r#"{"input": "a", "tags": "x", "metadata": [1]}"#,
            "field `metadata`: expected an object, found an array",
        ),
        (
            r#"{"input": "a", "tags": ["ok", 3]}"#,
            "field `tags`: item 1: expected a string, found a number",
        ),
        (
            r#"{"input": "a", "tags": ["ok", " "]}"#,
            "field `tags`: tag 1 is empty",
        ),
        (r#"{"input": []}"#, "a conversation needs at least one turn"),
        (r#"{"input": "   "}"#, "field `input`: is empty"),
        (
            r#"{"input": "a", "id": 1.5}"#,
            "field `id`: expected a string or an integer, found a number",
        ),
        (
            r#"{"input": "a", "agent_args": "x"}"#,
            "field `agent_args`: expected an object, found a string",
        ),
    ];
    for (line, expected) in cases {
        let msg = err("t.jsonl", line.as_bytes());
        assert!(msg.contains(expected), "{line}\n=> {msg}");
        assert!(msg.starts_with("t.jsonl:1:"), "{msg}");
    }
}

#[test]
fn duplicate_ids_and_invalid_utf8() {
    let msg = err(
        "t.jsonl",
        b"{\"id\": 1, \"input\": \"a\"}\n{\"id\": \"1\", \"input\": \"b\"}\n",
    );
    assert!(
        msg.contains("t.jsonl:2: field `id`: duplicate id `1` (first used on line 1)"),
        "{msg}"
    );
    let msg = err("t.jsonl", b"{\"input\": \"a\xff\"}\n");
    assert!(msg.contains("t.jsonl:1:13: invalid UTF-8"), "{msg}");
}

#[test]
fn empty_and_unsupported() {
    assert!(matches!(
        Dataset::from_bytes("t.jsonl", b"\n\n  \n"),
        Err(DatasetError::Empty { .. })
    ));
    assert!(matches!(
        Dataset::from_bytes("t.csv", b"input\n"),
        Err(DatasetError::Empty { .. })
    ));
    let msg = err("t.yaml", b"input: x");
    assert!(msg.contains("unsupported dataset format `.yaml`"), "{msg}");
}

#[test]
fn csv_json_cells_multiline_cells_bom_crlf() {
    let data = "\u{feff}id,input,ground_truth,tags,agent_args,rubric_vars,notes\r\n\
        q1,\"[\"\"Hi\"\", \"\"What's my name?\"\"]\",Alice,\"[\"\"memory\"\", \"\"advanced\"\"]\",\"{\"\"user\"\": \"\"a\"\"}\",,kept\r\n\
        q2,\"line one\nline two\",\"{4}\",\"math; easy\",,\"{\"\"x\"\": 1}\",\r\n\
        q3,[INST] not json,\"[\"\"a\"\"]\",,,,\n";
    let ds = ok("d.csv", data.as_bytes());
    assert_eq!(ds.samples.len(), 3);
    let s = &ds.samples[0];
    assert_eq!(
        s.input,
        Input::Turns(vec!["Hi".into(), "What's my name?".into()])
    );
    assert_eq!(s.tags, vec!["memory", "advanced"]);
    assert_eq!(s.agent_args["user"], "a");
    assert_eq!(s.extra["notes"], "kept");
    assert_eq!(s.source.line, 2);
    let s = &ds.samples[1];
    assert_eq!(s.input.last(), "line one\nline two");
    assert_eq!(s.expected, Some(Expected::Text("{4}".into())));
    assert_eq!(s.tags, vec!["math", "easy"]);
    assert_eq!(s.rubric_vars["x"], 1);
    assert_eq!(ds.samples[2].source.line, 5);
    assert_eq!(ds.samples[2].input.last(), "[INST] not json");
    // Next to a single prompt, an answer cell holding a JSON list is text.
    assert_eq!(
        ds.samples[2].expected,
        Some(Expected::Text("[\"a\"]".into()))
    );
}

#[test]
fn csv_errors() {
    let msg = err("d.csv", b"input,expected\n\"a\",b,c\nok,x\n");
    assert!(
        msg.contains("d.csv:2: record has 3 fields but the header row has 2"),
        "{msg}"
    );
    let msg = err("d.csv", b"input,rubric_vars\na,\"{not json}\"\n");
    assert!(
        msg.contains("d.csv:2: field `rubric_vars`: expected a JSON object in this cell"),
        "{msg}"
    );
    let msg = err("d.csv", b"question_text,answer\na,b\n");
    assert!(
        msg.contains("d.csv:1: no `input` column in the header row (found: question_text, answer)"),
        "{msg}"
    );
    let msg = err("d.csv", b"input,,x\na,b,c\n");
    assert!(
        msg.contains(
            "d.csv:2: column 2 has no name in the header row, but this row has a value in it"
        ),
        "{msg}"
    );
    let msg = err("d.csv", b"input,Input\na,b\n");
    assert!(
        msg.contains("d.csv:1: field `Input`: column `Input` appears twice in the header row"),
        "{msg}"
    );
    // A quote left open would swallow every later row.
    let msg = err("d.csv", b"input,expected\na,\"b\nc,d\ne,f\n");
    assert!(
        msg.contains("d.csv:2: a quoted cell opened in this record is never closed"),
        "{msg}"
    );
    let msg = err("d.csv", b"input,expected\nx,y\na,\"b\n");
    assert!(msg.contains("d.csv:3: a quoted cell opened"), "{msg}");
    let msg = err("d.csv", b"input,expected,ground_truth\na,b,c\n");
    assert!(
        msg.contains("columns `expected` and `ground_truth` both fill the same sample field"),
        "{msg}"
    );
    let msg = err("d.csv", b"input,expected\n,b\n");
    assert!(msg.contains("d.csv:2: missing field `input`"), "{msg}");
    let msg = err("d.csv", b"input,expected\n\"open quote,b\n");
    assert!(msg.starts_with("d.csv:"), "{msg}");
}

#[test]
fn csv_blank_rows_trailing_comma_and_text_tags() {
    let ds = ok(
        "d.csv",
        b"input,expected,tags,\na,b,[urgent] billing,\n   \n\t\nc,\"d \"\"quoted\"\"\",,\n",
    );
    assert_eq!(ds.samples.len(), 2);
    assert_eq!(ds.samples[0].tags, vec!["[urgent] billing"]);
    assert_eq!(ds.samples[1].source.line, 5);
    assert_eq!(ds.samples[1].expected_text(), Some("d \"quoted\""));
}

#[test]
fn empty_expected_is_an_error_not_a_free_pass() {
    let msg = err("t.jsonl", br#"{"input": "a", "expected": "  "}"#);
    assert!(
        msg.contains("t.jsonl:1: field `expected`: is empty; leave the field out"),
        "{msg}"
    );
    let msg = err(
        "t.jsonl",
        br#"{"input": ["a", "b"], "ground_truth": ["x", ""]}"#,
    );
    assert!(
        msg.contains("field `ground_truth`: turn 1 is empty"),
        "{msg}"
    );
    // In CSV an empty cell is an absent field.
    let ds = ok("d.csv", b"input,expected\na,\n");
    assert_eq!(ds.samples[0].expected, None);
}

#[test]
fn columns_count_characters_and_problem_lists_are_capped() {
    let msg = err("t.jsonl", "{\"input\":\"日本語日本語\", x}".as_bytes());
    assert!(
        msg.starts_with("t.jsonl:1:20: invalid JSON: key must be a string"),
        "{msg}"
    );
    let fifty = "x\n".repeat(50);
    let msg = err("t.jsonl", fifty.as_bytes());
    assert_eq!(msg.lines().count(), 50, "{msg}");
    assert!(!msg.contains("further problems"));
    let more = "x\n".repeat(80);
    let msg = err("t.jsonl", more.as_bytes());
    assert_eq!(msg.lines().count(), 51, "{msg}");
    assert!(msg.ends_with("(further problems not reported)"), "{msg}");
}

#[test]
fn garbage_never_panics() {
    // A deterministic xorshift stream of mostly-JSON-ish bytes.
    let alphabet = b"{}[]\",:\\ \n\r\tabcinputexpected0123456789\xff\xc3\xa9";
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..2000 {
        let len = (round % 97) + 1;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect();
        for path in ["g.jsonl", "g.csv"] {
            if let Ok(ds) = Dataset::from_bytes(path, &bytes) {
                assert!(!ds.samples.is_empty());
                let _ = ds.test_names();
            }
        }
    }
}

#[test]
fn a_samples_tools_are_read_as_openai_definitions() {
    let data = br#"{"input": "What is 2 + 3?", "tools": [{"name": "calculator", "parameters": {"type": "object"}}]}
{"input": "no tools"}
"#;
    let ds = ok("t.jsonl", data);
    assert_eq!(
        ds.samples[0].tools,
        [
            serde_json::json!({"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}})
        ]
    );
    assert!(ds.samples[1].tools.is_empty());
    assert!(!ds.samples[0].extra.contains_key("tools"));
    // Written back (`evals convert`) and read again, the definitions stay.
    let again = ok(
        "again.jsonl",
        eval_datasets::write::to_jsonl(&ds.samples).as_bytes(),
    );
    assert_eq!(again.samples[0].tools, ds.samples[0].tools);
    let again = ok(
        "again.csv",
        eval_datasets::write::to_csv(&ds.samples)
            .unwrap()
            .as_bytes(),
    );
    assert_eq!(again.samples[0].tools, ds.samples[0].tools);
    let csv = "input,tools\n\"What is 2 + 3?\",\"[{\"\"type\"\": \"\"function\"\", \"\"function\"\": {\"\"name\"\": \"\"calculator\"\"}}]\"\n";
    let ds = ok("t.csv", csv.as_bytes());
    assert_eq!(ds.samples[0].tools[0]["function"]["name"], "calculator");
    let msg = err("t.jsonl", br#"{"input": "x", "tools": ["calculator"]}"#);
    assert!(
        msg.contains("t.jsonl:1: field `tools`: tool 0: expected an object, found a string"),
        "{msg}"
    );
    let msg = err("t.csv", b"input,tools\nx,calculator\n");
    assert!(msg.contains("field `tools`"), "{msg}");
}
