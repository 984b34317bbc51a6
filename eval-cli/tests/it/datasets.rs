//! The dataset tools of the `evals` binary end to end: `lint` codes with
//! lines, `stats`, lossless `convert` round trips, `upgrade` backups, and
//! other tools' record shapes.

use crate::common;

use common::*;
use eval_datasets::Dataset;

/// A folder is linted file by file (nested folders too); the stats file
/// and annotation guide written beside a dataset are named as skipped, not
/// reported as broken datasets, and a dataset that merely ends in
/// `-stats.json` is still linted.
#[test]
fn lint_of_a_folder_lints_every_dataset_and_names_the_companion_files() {
    let dir = scratch("lint-folder");
    let data = dir.join("evals");
    std::fs::create_dir_all(data.join("nested")).unwrap();
    std::fs::write(
        data.join("a.jsonl"),
        "{\"input\": \"one\", \"expected\": \"x\"}\n",
    )
    .unwrap();
    std::fs::write(data.join("nested/b.csv"), "input,expected\nq,\"\"\n").unwrap();
    std::fs::write(data.join("notes.txt"), "not a dataset").unwrap();
    let out = evals(&dir, &["stats", "evals/a.jsonl", "--write"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let out = evals(&dir, &["guide", "evals/a.jsonl"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(data.join("a-stats.json").is_file() && data.join("a-annotation-guide.md").is_file());
    // A link back up: a loop the walk must end.
    #[cfg(unix)]
    std::os::unix::fs::symlink("..", data.join("nested/up")).unwrap();
    // A real dataset whose name happens to end in -stats.json.
    std::fs::write(data.join("team-stats.json"), "[{\"input\": \"two\"}]").unwrap();

    let out = evals(&dir, &["lint", "evals"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    for file in [
        "evals/a.jsonl:1",
        "evals/nested/b.csv:2",
        "evals/team-stats.json:1",
    ] {
        assert!(
            stdout.contains(&format!("{file}: error["))
                || stdout.contains(&format!("{file}: warning[")),
            "{file} not linted:\n{stdout}"
        );
    }
    assert!(
        !stdout.contains("a-stats.json") && !stdout.contains("notes.txt"),
        "{stdout}"
    );
    // Each dataset linted once, though the loop reaches it again.
    assert_eq!(
        stdout
            .matches("evals/a.jsonl:1: warning[DATASET_TOO_SMALL]")
            .count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("nested/up"), "{stdout}");
    assert!(
        stderr.contains(
            "note: skipped evals/a-stats.json: the statistical summary `evals stats --write` writes"
        ),
        "{stderr}"
    );
    // A glob that also matches the guide.
    let out = evals(
        &dir,
        &[
            "lint",
            "--json",
            "evals/a.jsonl",
            "evals/a-annotation-guide.md",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(
        v["skipped"][0]["file"], "evals/a-annotation-guide.md",
        "{v}"
    );
    assert!(v["warnings"].as_u64().unwrap() > 0, "{v}");
    // Nothing but companion files: nothing was linted, which is an error.
    let out = evals(&dir, &["lint", "evals/a-stats.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("nothing to lint"), "{:?}", text(&out));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = evals(&dir, &["lint", "empty"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("empty: no dataset file"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lint_reports_codes_with_lines_and_exits_1_on_errors() {
    let dir = scratch("lint");
    let long = "a complete answer that is certainly longer than ten words in all";
    let mut lines: Vec<String> = (0..12)
        .map(|i| format!(r#"{{"id": "q{i}", "query": "question number {i} about the corpus", "ground_truth": "{long}", "contexts": ["passage {i}"], "source_docs": ["doc{i}.md"], "metadata": {{"difficulty": "{}"}}}}"#, ["easy", "medium", "hard"][i % 3]))
        .collect();
    std::fs::write(dir.join("clean.jsonl"), lines.join("\n")).unwrap();
    let out = evals(&dir, &["lint", "clean.jsonl"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(
        text(&out).0.ends_with("0 error(s), 0 warning(s)\n"),
        "{:?}",
        text(&out)
    );

    lines[3] = r#"{"id": "q3", "query": "Question number 0 about the corpus!", "ground_truth": "short", "contexts": ["p"], "source_docs": ["d.md"]}"#.into();
    lines[5] = r#"{"id": "q5", "query": "question number five about the whole corpus", "source_docs": []}"#.into();
    std::fs::write(dir.join("dirty.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.join("broken.jsonl"), "{\"query\": \"x\"\n").unwrap();
    std::fs::write(dir.join("empty.jsonl"), "").unwrap();
    let out = evals(
        &dir,
        &["lint", "dirty.jsonl", "broken.jsonl", "empty.jsonl"],
    );
    let (stdout, _) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}");
    for expected in [
        "dirty.jsonl:4: error[DUPLICATE_QUERIES]: same input as line 1",
        "dirty.jsonl:4: warning[SHORT_ANSWER]: sample `q3`: expected answer has 1 word(s) (fewer than 10)",
        "dirty.jsonl:6: error[MISSING_GROUND_TRUTH]: sample `q5` has no expected answer",
        "dirty.jsonl:6: warning[MISSING_CONTEXT]: sample `q5` has no context passages",
        "dirty.jsonl:6: warning[MISSING_SOURCE_DOCS]: sample `q5` has no source_docs",
        "broken.jsonl:1:13: error[FILE_FORMAT_ERROR]: invalid JSON: EOF while parsing an object",
        // An empty file has no line 1, and its path is said once.
        "\nempty.jsonl: error[FILE_FORMAT_ERROR]: dataset has no samples\n",
    ] {
        assert!(
            stdout.contains(expected),
            "missing `{expected}` in:\n{stdout}"
        );
    }
    let out = evals(&dir, &["lint", "--json", "dirty.jsonl"]);
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["errors"], 2);

    // Too small, imbalanced.
    std::fs::write(
        dir.join("small.jsonl"),
        "{\"input\": \"only one question here today\", \"expected\": \"x\"}\n",
    )
    .unwrap();
    let out = evals(&dir, &["lint", "small.jsonl"]);
    assert!(
        text(&out)
            .0
            .contains("small.jsonl:1: warning[DATASET_TOO_SMALL]: 1 samples"),
        "{:?}",
        text(&out)
    );
    let skewed: Vec<String> = (0..10)
        .map(|i| format!(r#"{{"input": "distinct question {i} {i} here", "expected": "{long}", "context": ["c"], "metadata": {{"difficulty": "{}"}}}}"#, if i < 8 { "easy" } else { "hard" }))
        .collect();
    std::fs::write(dir.join("skewed.jsonl"), skewed.join("\n")).unwrap();
    let out = evals(&dir, &["lint", "skewed.jsonl"]);
    assert!(
        text(&out)
            .0
            .contains("warning[IMBALANCED_DISTRIBUTION]: difficulty: `easy` holds 8 of 10 (80%)"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn lint_gives_the_line_and_column_of_the_compile_error() {
    let dir = scratch("lint-column");
    let cases: [(&str, &[u8]); 3] = [
        (
            "trailing.jsonl",
            b"{\"input\": \"a\", \"expected\": \"b\"}\n{\"input\": \"c\",}\n",
        ),
        (
            "doc.json",
            b"[\n  {\"input\": \"a\"},\n  {\"input\": \"b\" \"expected\": 1}\n]\n",
        ),
        ("utf8.jsonl", b"{\"input\": \"a\"}\n{\"input\": \"\xff\"}\n"),
    ];
    for (name, bytes) in cases {
        std::fs::write(dir.join(name), bytes).unwrap();
        // What `#[eval_dataset]` prints for the same file: the problem as
        // eval-datasets gives it, `file:line[:column]: message`.
        let compile_error = match Dataset::load_as(&dir.join(name), name) {
            Err(eval_datasets::DatasetError::Invalid { problems, .. }) => problems[0].to_string(),
            other => panic!("{name}: {other:?}"),
        };
        let (place, message) = compile_error.split_once(": ").unwrap();
        let out = evals(&dir, &["lint", name]);
        let stdout = text(&out).0;
        assert!(
            stdout.contains(&format!("{place}: error[FILE_FORMAT_ERROR]: {message}\n")),
            "lint must say `{compile_error}` at the same place:\n{stdout}"
        );
    }
    // The column is in the JSON findings too.
    let out = evals(&dir, &["lint", "--json", "trailing.jsonl"]);
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["findings"][0]["line"], 2);
    assert_eq!(v["findings"][0]["column"], 15);
}

#[test]
fn stats_counts_and_distributions() {
    let file = fixtures()
        .join("deepeval/confident-ai__deepeval/a2e0d4c/tests/test_confident/goldens.json");
    let out = evals(&repo(), &["stats", "--json", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["samples"], 4);
    assert_eq!(
        v["coverage"]["fields"]["expected"], 3,
        "record 4 has no expected_output"
    );
    assert_eq!(
        v["coverage"]["difficulty"]["easy"].as_u64().unwrap()
            + v["coverage"]["difficulty"]["medium"].as_u64().unwrap(),
        4
    );
}

/// Every field survives JSONL → CSV → runevals JSON → JSONL.
#[test]
fn convert_round_trips_preserve_every_field() {
    let dir = scratch("convert");
    let sources = [
        "letta-evals/letta-ai__letta-evals/a207c56/examples/multiturn-per-turn-grading/dataset.jsonl",
        "letta-evals/letta-ai__letta-evals/a207c56/examples/reward-composition/dataset.csv",
        "deepeval/confident-ai__deepeval/a2e0d4c/tests/test_confident/goldens_multi_turn.json",
        "m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/hr_benefits_leave.json",
        "m365-runevals/microsoft__m365-copilot-eval/ae7844f/schema/v1/examples/valid/scenarios-with-mixed-errors.json",
        "agentspec/agents-oss__agentspec/747919b/examples/gymcoach/eval/workout-qa.jsonl",
        "ragas/explodinggradients__ragas/c036bd8/examples/ragas_examples/ag_ui_agent_evals/test_data/weather_tool_calls.csv",
    ];
    for (n, source) in sources.iter().enumerate() {
        let src = fixtures().join(source);
        let chain = [
            format!("{n}.jsonl"),
            format!("{n}.csv"),
            format!("{n}.json"),
            format!("{n}-back.jsonl"),
        ];
        let mut from = src.to_string_lossy().into_owned();
        for to in &chain {
            let out = evals(&dir, &["convert", &from, to]);
            assert_eq!(code(&out), 0, "{source} -> {to}: {:?}", text(&out));
            from = to.clone();
        }
        let a = Dataset::load(&src).unwrap().samples;
        let b = Dataset::load(dir.join(&chain[3])).unwrap().samples;
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            let strip = |s: &eval_datasets::Sample| {
                let mut s = s.clone();
                s.source = eval_datasets::Sample::new("").source;
                // issue38:runevals: how a runevals file naming no evaluators
                // is scored, not sample data (through JSONL it is lost).
                s.runevals_defaults = false;
                s
            };
            assert_eq!(strip(x), strip(y), "{source}");
        }
    }
    // An existing output is kept unless --force, and then backed up.
    let out = evals(&dir, &["convert", "0.jsonl", "0.csv"]);
    assert_eq!(code(&out), 2);
    let out = evals(&dir, &["convert", "0.jsonl", "0.csv", "--force"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(std::fs::read_dir(&dir).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("0.csv.")
    }));
    // A target that cannot hold a sample: refused, listing what.
    std::fs::write(
        dir.join("odd.jsonl"),
        "{\"input\": \"[\\\"a\\\", \\\"b\\\"]\", \"expected\": \"x\"}\n",
    )
    .unwrap();
    let out = evals(&dir, &["convert", "odd.jsonl", "odd.csv"]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("odd.jsonl:1: the input is text that reads as a JSON list"),
        "{:?}",
        text(&out)
    );
    assert!(!dir.join("odd.csv").exists());
}

#[test]
fn upgrade_writes_a_backup_first() {
    let dir = scratch("upgrade");
    for name in ["example_prompts.json", "example_prompts_alt.json"] {
        let src = fixtures()
            .join("m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples")
            .join(name);
        let original = std::fs::read(&src).unwrap();
        std::fs::write(dir.join(name), &original).unwrap();
        let before = Dataset::load(dir.join(name)).unwrap().samples;
        let out = evals(&dir, &["upgrade", name]);
        assert_eq!(code(&out), 0, "{:?}", text(&out));
        let backup = dir.join(text(&out).0.rsplit("backup: ").next().unwrap().trim());
        assert_eq!(
            std::fs::read(&backup).unwrap(),
            original,
            "the backup holds the original bytes"
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
        assert_eq!(doc["schemaVersion"], "1.6.0");
        let after = Dataset::load(dir.join(name)).unwrap().samples;
        assert_eq!(
            before.iter().map(|s| &s.input).collect::<Vec<_>>(),
            after.iter().map(|s| &s.input).collect::<Vec<_>>()
        );
        assert_eq!(
            before.iter().map(|s| &s.expected).collect::<Vec<_>>(),
            after.iter().map(|s| &s.expected).collect::<Vec<_>>()
        );
        let out = evals(&dir, &["upgrade", name]);
        assert_eq!(code(&out), 2);
        assert!(
            text(&out)
                .1
                .contains("already a versioned runevals document"),
            "{:?}",
            text(&out)
        );
    }
}

#[test]
fn other_tools_shapes_load_as_they_mean() {
    let dir = scratch("shapes");
    // OpenAI evals: content parts; a list `ideal` accepts any of its answers.
    std::fs::write(
        dir.join("oai.jsonl"),
        r#"{"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}], "ideal": ["Lyon", "Paris"]}"#,
    )
    .unwrap();
    let d = Dataset::load(dir.join("oai.jsonl")).unwrap();
    assert_eq!(d.samples[0].input.last(), "What is the capital of France?");
    let out = evals(
        &dir,
        &[
            "evaluate",
            "oai.jsonl",
            "--metrics",
            "contains",
            "--url",
            demo_url(),
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(
        v["samples"][0]["metrics"][0]["score"], 1.0,
        "the demo answers Paris: {v}"
    );
    // promptflow: a question after a chat history is the conversation's last turn.
    std::fs::write(
        dir.join("pf.jsonl"),
        r#"{"question": "And in Python?", "chat_history": [{"inputs": {"question": "How do I open a file?"}, "outputs": {"answer": "fopen"}}], "ground_truth": "open()"}"#,
    )
    .unwrap();
    let d = Dataset::load(dir.join("pf.jsonl")).unwrap();
    assert_eq!(
        d.samples[0].input.turns(),
        ["How do I open a file?", "And in Python?"]
    );
    assert_eq!(d.samples[0].expected_text(), Some("open()"));
    // promptfoo CSV: a plain `__expected` is the expected answer.
    std::fs::write(
        dir.join("pf.csv"),
        "question,__expected\nWhat is 2+2?,4\nIs it JSON?,is-json\n",
    )
    .unwrap();
    let d = Dataset::load(dir.join("pf.csv")).unwrap();
    assert_eq!(d.samples[0].expected_text(), Some("4"));
    assert_eq!(
        d.samples[1].expected_text(),
        None,
        "an assertion is not an answer"
    );
}

/// Seed 003: the CLI upgrades a legacy document (no `schemaVersion`) to the
/// versioned format itself, writing a timestamped backup first; once.
#[test]
fn evaluate_upgrades_a_legacy_runevals_document_once_after_a_backup() {
    let dir = scratch("auto-upgrade");
    let legacy = r#"[{"prompt": "What is the capital of France?", "expected_response": "Paris is the capital of France"}]"#;
    std::fs::write(dir.join("prompts.json"), legacy).unwrap();
    let backups = || -> Vec<String> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("prompts.json.") && n.ends_with(".bak"))
            .collect()
    };
    let out = evals(
        &dir,
        // issue38:runevals: a file naming no evaluators is scored on the
        // judged default dimensions; PartialMatch here, no judge needed.
        &[
            "evaluate",
            "prompts.json",
            "--url",
            demo_url(),
            "--json",
            "--metrics",
            "partial_match",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    let made = backups();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(
        stderr.contains(&format!(
            "note: prompts.json is a legacy runevals document: upgraded to schemaVersion 1.6.0 (1 items); backup: {}",
            made[0]
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(&made[0])).unwrap(),
        legacy,
        "the backup holds the original"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("prompts.json")).unwrap()).unwrap();
    assert_eq!(doc["schemaVersion"], "1.6.0");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["samples"].as_array().unwrap().len(), 1);
    // The next run finds a versioned document: no second upgrade or backup.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "--url",
            demo_url(),
            "--json",
            "--metrics",
            "partial_match",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(!text(&out).1.contains("legacy"), "{:?}", text(&out));
    assert_eq!(backups().len(), 1);
    // Discovered the same way as a named file (`prompts.json` in .).
    std::fs::write(dir.join("prompts.json"), legacy).unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "--url",
            demo_url(),
            "--json",
            "--metrics",
            "partial_match",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(text(&out).1.contains("upgraded to schemaVersion 1.6.0"));
    assert_eq!(backups().len(), 2);
}

/// `Relevanse` is a typo of a built-in evaluator: a lint error with the
/// suggestion, at its line, not a custom evaluator.
#[test]
fn lint_names_a_misspelt_evaluator_with_a_suggestion() {
    let dir = scratch("lint-evaluator");
    std::fs::write(
        dir.join("t.json"),
        "{\"schemaVersion\": \"1.2.0\",\n \"items\": [{\"prompt\": \"p\", \"expected_response\": \"x\",\n   \"evaluators\": {\"Relevanse\": {}}}]}",
    )
    .unwrap();
    let out = evals(&dir, &["lint", "t.json"]);
    assert_eq!(code(&out), 1);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("t.json:3: error[FILE_FORMAT_ERROR]: $.items[0].evaluators.Relevanse: unknown evaluator (did you mean `Relevance`?)"),
        "{stdout}"
    );
}

/// `evals lint --fix`: what is safe to fix is fixed in place — a sample
/// whose input repeats an earlier one exactly is cut out of a JSONL or CSV
/// file, every other byte kept (a multi-line CSV cell too) — after a
/// backup; a `.json` document is left alone and said so; the lint then
/// reports what remains.
#[test]
fn lint_fix_drops_repeated_inputs_after_a_backup() {
    let dir = scratch("lint-fix");
    let jsonl = "{\"input\": \"What is RAG?\", \"expected\": \"retrieval\"}\n{\"input\": \"what is  RAG\", \"expected\": \"dup\"}\n{\"input\": \"Who are you?\", \"expected\": \"an agent\"}\n";
    let csv = "input,expected\n\"What is RAG?\",retrieval\n\"a cell\nover two lines\",x\n\"WHAT IS RAG?\",dup\nlast,y\n";
    std::fs::write(dir.join("d.jsonl"), jsonl).unwrap();
    std::fs::write(dir.join("d.csv"), csv).unwrap();
    let json = r#"[{"prompt": "What is RAG?", "expected_response": "a"}, {"prompt": "what is rag", "expected_response": "b"}]"#;
    std::fs::write(dir.join("d.json"), json).unwrap();

    let out = evals(&dir, &["lint", "--fix", "d.jsonl", "d.csv", "d.json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(
        code(&out),
        1,
        "the .json document's repeat remains:\n{stdout}{stderr}"
    );
    assert!(
        stderr.contains(
            "fixed d.jsonl: dropped 1 sample(s) repeating an earlier input (line(s) 2); backup: "
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("fixed d.csv: dropped 1 sample(s) repeating an earlier input (line(s) 5)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "note: d.json: 1 repeated input(s) not dropped: a .json document is not fixed in place"
        ),
        "{stderr}"
    );
    let repeated: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("same input as line"))
        .collect();
    assert!(
        repeated.len() == 1 && repeated[0].starts_with("d.json:"),
        "only the .json document keeps its repeat: {stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("d.jsonl")).unwrap(),
        "{\"input\": \"What is RAG?\", \"expected\": \"retrieval\"}\n{\"input\": \"Who are you?\", \"expected\": \"an agent\"}\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("d.csv")).unwrap(),
        "input,expected\n\"What is RAG?\",retrieval\n\"a cell\nover two lines\",x\nlast,y\n"
    );
    assert_eq!(std::fs::read_to_string(dir.join("d.json")).unwrap(), json);
    // Each rewritten file's backup holds what it held.
    let backups = common::backups(&dir);
    assert_eq!(backups.len(), 2, "{backups:?}");
    for b in &backups {
        let held = std::fs::read_to_string(b).unwrap();
        assert!(held == jsonl || held == csv, "{}", b.display());
    }
    // Nothing left to fix: nothing written again.
    let out = evals(&dir, &["lint", "--fix", "d.jsonl"]);
    assert!(!text(&out).1.contains("fixed"), "{:?}", text(&out));
    assert_eq!(common::backups(&dir).len(), 2);
}
