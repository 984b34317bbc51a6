//! What a person reads of a run, end to end through the `evals` binary
//! against the demo agent: colour only on a terminal and as `NO_COLOR`,
//! `CLICOLOR` and `CLICOLOR_FORCE` say (never in files); every metric that
//! did not pass says why; gate lines count unscored samples; and what the
//! bundled datasets say of their samples (runevals item names, the Unrag
//! dataset id, retrieved and relevant ids, tags, metadata) reaches the
//! results file.

use crate::common;

use common::*;
use serde_json::Value;

const ESC: char = '\u{1b}';

/// Whether `text` holds an SGR (colour or style) escape, `ESC [ ... m`;
/// other escapes (the progress bar clearing its line) are not colour.
fn painted(text: &str) -> bool {
    text.split(ESC).skip(1).any(|rest| {
        rest.strip_prefix('[').is_some_and(|seq| {
            let end = seq.find(|c: char| !(c.is_ascii_digit() || c == ';'));
            end.is_some_and(|i| seq[i..].starts_with('m'))
        })
    })
}

fn results(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn record<'a>(results: &'a Value, id: &str) -> &'a Value {
    results["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no sample {id} in {results}"))
}

/// Two prompts against the demo agent, one that fails: output to colour.
fn failing_run(dir: &std::path::Path, env: &[(&str, &str)]) -> (String, String) {
    let out = evals_with(
        dir,
        &[
            "evaluate",
            "--prompts",
            "What is the capital of France?",
            "What is 2 + 2?",
            "--expected",
            "Paris",
            "5",
            "--metrics",
            "contains",
            "--gate",
            "contains >= 0.9",
            "--url",
            demo_url(),
            "--output",
            "run.json",
            "--junit",
            "run.xml",
        ],
        env,
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    text(&out)
}

#[test]
fn colour_follows_the_terminal_and_no_color_clicolor_clicolor_force() {
    let dir = scratch("colour");
    let files = |dir: &std::path::Path| {
        for f in ["run.json", "run.xml"] {
            let body = std::fs::read_to_string(dir.join(f)).unwrap();
            assert!(!body.contains(ESC), "{f} is never painted");
        }
    };
    // Not a terminal (a pipe): plain.
    let (plain, _) = failing_run(&dir, &[]);
    assert!(!plain.contains(ESC), "{plain}");
    assert!(
        plain.contains("gate prompts FAILED (inconclusive): mean contains = 0.5000"),
        "{plain}"
    );
    files(&dir);
    // CLICOLOR_FORCE colours even a pipe: verdicts, gate lines, headings.
    let (forced, _) = failing_run(&dir, &[("CLICOLOR_FORCE", "1")]);
    assert!(
        forced.contains(
            "gate prompts \u{1b}[1m\u{1b}[31mFAILED (inconclusive)\u{1b}[0m: mean contains"
        ),
        "{forced:?}"
    );
    assert!(
        forced.contains("\u{1b}[1m\u{1b}[31mFAILED\u{1b}[0m prompts::what_is_2_2"),
        "{forced:?}"
    );
    assert!(
        forced.contains("\u{1b}[1mprompts\u{1b}[0m: 2 samples"),
        "{forced:?}"
    );
    files(&dir);
    // NO_COLOR wins over CLICOLOR_FORCE.
    let (no_color, _) = failing_run(&dir, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!no_color.contains(ESC), "{no_color:?}");
    // --json is data, never painted.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "--prompts",
            "What is 2 + 2?",
            "--expected",
            "5",
            "--metrics",
            "contains",
            "--url",
            demo_url(),
            "--json",
        ],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(!text(&out).0.contains(ESC));
    serde_json::from_str::<Value>(&text(&out).0).expect("plain JSON");
}

/// `evals` in a pseudo-terminal (`script`), with `env` set; what it printed.
fn in_a_terminal(dir: &std::path::Path, env: &[(&str, &str)]) -> Option<String> {
    let script = std::process::Command::new("script")
        .arg("--version")
        .output();
    if script.is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return None;
    }
    let command = format!(
        "'{}' evaluate --prompts 'What is 2 + 2?' --expected 5 --metrics contains --url '{}'",
        env!("CARGO_BIN_EXE_evals"),
        demo_url()
    );
    let log = dir.join("typescript");
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-q", "-e", "-c", &command])
        .arg(&log)
        .current_dir(dir)
        .env("TERM", "xterm-256color")
        .env("EVAL_CACHE", "off")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("EVAL_AGENT_URL")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run script");
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    Some(std::fs::read_to_string(&log).unwrap())
}

#[test]
fn a_terminal_gets_colour_unless_no_color_or_clicolor_0() {
    let dir = scratch("pty");
    let Some(coloured) = in_a_terminal(&dir, &[]) else {
        return;
    };
    assert!(
        coloured.contains("\u{1b}[1m\u{1b}[31mFAILED\u{1b}[0m prompts::what_is_2_2"),
        "{coloured:?}"
    );
    assert!(painted(&coloured));
    for env in [("NO_COLOR", "1"), ("CLICOLOR", "0")] {
        let plain = in_a_terminal(&dir, &[env]).unwrap();
        assert!(plain.contains("FAILED prompts::what_is_2_2"), "{plain:?}");
        assert!(!painted(&plain), "{env:?}: {plain:?}");
    }
}

#[test]
fn a_gate_missed_for_an_unanswered_sample_says_how_many() {
    // The issue's case: contains scores 1, 0, 0 and one sample the agent
    // does not answer (it lacks the expected answer `contains` needs):
    // the mean of the three, 0.3333, meets 0.3, yet the gate is missed.
    let dir = scratch("unscored-gate");
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n\
         {\"input\": \"What is 2 + 2?\", \"expected\": \"5\"}\n\
         {\"input\": \"hello there\"}\n\
         {\"input\": \"Who wrote Hamlet?\", \"expected\": \"Shakespeare\"}\n",
    )
    .unwrap();
    let out = evaluate_demo(
        &dir,
        "qa.jsonl",
        "contains",
        &["--gate", "contains >= 0.3"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "gate qa FAILED: mean(contains) >= 0.3 missed: 1 of 4 samples not scored (counted as not passed); mean of the 3 scored = 0.3333\n"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("missed by"), "{stdout}");
    // Each sample that did not pass: its input, expected and actual answer
    // as the attribute shows them, and why, one line per metric.
    assert!(
        stdout.contains(
            "  ERROR qa::hello_there (qa.jsonl:3)\n    error: sample has no `expected` field"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  FAILED qa::what_is_2_2 (qa.jsonl:2)\n    input:    What is 2 + 2?\n    expected: 5\n    actual:   4\n    contains 0.000 < 1: the expected text is not found in the answer\n"
        ),
        "{stdout}"
    );
}

#[test]
fn bundled_datasets_carry_names_ids_tags_and_metadata_into_results() {
    let dir = scratch("described");
    let repo = repo();

    // A runevals document whose conversation item has a `name` (microsoft's
    // own sample), scored by its own evaluators (judged: the scripted judge)
    // and the `contains` given.
    let runevals = fixtures()
        .join("m365-runevals/microsoft__m365-copilot-eval/ae7844f/samples/multiturn_example.json");
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            runevals.to_str().unwrap(),
            "--metrics",
            "contains",
            "--url",
            demo_url(),
            "--output",
            "runevals.json",
        ],
        &[("EVAL_JUDGE_URL", &judge_url)],
    );
    let (stdout, stderr) = text(&out);
    // Its turn-3 Groundedness has no context from the demo: never scored.
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("`groundedness@turn3` of `multiturn_example` could not be scored"),
        "{stderr}"
    );
    let r = results(&dir.join("runevals.json"));
    let named = record(&r, "1");
    assert_eq!(named["name"], "Travel planning conversation", "{named}");
    assert_eq!(named["input"].as_array().unwrap().len(), 3, "{named}");
    assert!(
        record(&r, "0").get("name").is_none(),
        "an item without a name"
    );
    assert!(
        stdout.contains("\"Travel planning conversation\""),
        "the failure list names it: {stdout}"
    );

    // The Unrag dataset against the demo agent's retriever: its id, and
    // per query the ids retrieved beside the relevant ones. A strict
    // precision fails, and says why.
    let out = evals(
        &dir,
        &[
            "evaluate",
            repo.join("examples/evals/support.json").to_str().unwrap(),
            "--metrics",
            "precision_at_k >= 0.5, recall_at_k",
            "--url",
            &format!("{}/retrieval", demo_url().trim_end_matches('/')),
            "--output",
            "support.json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let r = results(&dir.join("support.json"));
    let samples = r["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 7);
    for s in samples {
        assert_eq!(s["dataset_id"], "support-faq", "{s}");
        assert!(
            s["retrieved_ids"].as_array().is_some_and(|a| !a.is_empty()),
            "{s}"
        );
    }
    let refund = record(&r, "q_return_window");
    assert_eq!(
        refund["relevant_ids"],
        serde_json::json!(["eval:support:doc:refund-policy"])
    );
    assert_eq!(refund["retrieved_ids"][0], "eval:support:doc:refund-policy");
    let precision = &refund["metrics"][0];
    assert_eq!(precision["name"], "precision_at_k");
    let retrieved = refund["retrieved_ids"].as_array().unwrap().len();
    assert_eq!(
        precision["reason"],
        format!(
            "1 of 1 relevant id(s) in the top 3 ({retrieved} retrieved); the first at rank 1 (eval:support:doc:refund-policy)"
        )
    );
    assert!(
        stdout.contains("    precision_at_k 0.333 < 0.5: 1 of 1 relevant id(s) in the top 3"),
        "{stdout}"
    );

    // A JSONL dataset with tags and metadata.
    let out = evals(
        &dir,
        &[
            "evaluate",
            repo.join("examples/evals/rag.jsonl").to_str().unwrap(),
            "--metrics",
            "contains",
            "--url",
            demo_url(),
            "--output",
            "rag.json",
        ],
    );
    assert!(code(&out) <= 1, "{:?}", text(&out));
    let r = results(&dir.join("rag.json"));
    let paris = record(&r, "0");
    assert_eq!(paris["tags"], serde_json::json!(["basics", "geography"]));
    assert_eq!(
        paris["metadata"],
        serde_json::json!({"source": "demo-corpus", "doc_id": "paris"})
    );
    assert_eq!(paris["expected"], "Paris");
    assert!(paris["output"].as_str().is_some_and(|o| !o.is_empty()));
}

/// Seed 003's details in every report: the document's description, each
/// item's notes (beside a failure), and a per-category breakdown (an item's
/// `category` is its tag) — in the terminal summary, the Markdown summary
/// and the HTML report alike.
#[test]
fn description_notes_and_categories_reach_every_report() {
    let dir = scratch("described-categories");
    std::fs::write(
        dir.join("support.json"),
        r#"{
  "schemaVersion": "1.2.0",
  "metadata": {"name": "support", "description": "Support answers for the help centre"},
  "default_evaluators": {"PartialMatch": {"threshold": 0.3}},
  "items": [
    {"prompt": "What is the capital of France?", "expected_response": "Paris is the capital of France.", "category": "geography"},
    {"prompt": "What is the capital of France, again?", "expected_response": "Lyon", "category": "geography",
     "notes": "BUG-456: the agent once answered Lyon"},
    {"prompt": "What is retrieval-augmented generation?", "expected_response": "Retrieval-augmented generation retrieves relevant documents.", "category": "rag"}
  ]
}"#,
    )
    .unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "support.json",
            "--url",
            demo_url(),
            "--output",
            "out.json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("support: 3 samples, 2 passed, 1 failed, 0 errors\n  Support answers for the help centre\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  by tag (category): geography 1/2, rag 1/1 passed\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    notes: BUG-456: the agent once answered Lyon\n"),
        "{stdout}"
    );
    let r = results(&dir.join("out.json"));
    assert_eq!(
        r["datasets"][0]["description"],
        "Support answers for the help centre"
    );
    assert_eq!(
        record(&r, "1")["notes"],
        "BUG-456: the agent once answered Lyon"
    );

    let md = evals(
        &dir,
        &["report", "summary", "out.json", "--format", "markdown"],
    );
    let (md, _) = text(&md);
    assert!(
        md.contains("#### Dataset `support`\n\nSupport answers for the help centre\n"),
        "{md}"
    );
    assert!(
        md.contains("| Tag (category) | Samples | Passed |\n|---|--:|--:|\n| `geography` | 2 | 1 |\n| `rag` | 1 | 1 |\n"),
        "{md}"
    );
    assert!(
        md.contains("  - notes: BUG-456: the agent once answered Lyon\n"),
        "{md}"
    );

    let page = std::fs::read_to_string(dir.join("out.html")).unwrap();
    let data = common::report_data(&page);
    let d = &data["runs"][0]["meta"]["datasets"][0];
    assert_eq!(
        d["summary"]["description"],
        "Support answers for the help centre"
    );
    assert_eq!(
        d["tags"],
        serde_json::json!([
            {"tag": "geography", "samples": 2, "passed": 1},
            {"tag": "rag", "samples": 1, "passed": 1}
        ])
    );
}

/// A dataset whose ids, tags and metadata hold terminal controls (an
/// escape that sets the window title and clears the screen, a BEL, an
/// RLO): `evals stats`, `lint`, `evaluate` and `report summary` show them
/// escaped, never raw.
#[test]
fn what_a_dataset_says_reaches_the_terminal_escaped() {
    let dir = scratch("escaped-dataset");
    let evil = "t\\u001b]0;pwned\\u0007\\u001b[2J\\u202ex";
    std::fs::write(
        dir.join("evil.jsonl"),
        format!(
            "{{\"id\": \"{evil}\", \"input\": \"What is RAG?\", \"expected\": \"RAG\", \"tags\": [\"{evil}\"], \"metadata\": {{\"{evil}\": \"{evil}\"}}}}\n\
             {{\"id\": \"plain\", \"input\": \"What is RAG?\", \"expected\": \"no\", \"tags\": [\"{evil}\"]}}\n"
        ),
    )
    .unwrap();
    let raw = ['\u{1b}', '\u{7}', '\u{202e}'];
    let check = |what: &str, o: &std::process::Output| {
        let (out, err) = text(o);
        for c in raw {
            assert!(
                !out.contains(c) && !err.contains(c),
                "{what}: {c:?} raw in\n{out}\n{err}"
            );
        }
        assert!(
            out.contains("\\u{1b}]0;pwned") || err.contains("\\u{1b}]0;pwned"),
            "{what}: the text is shown, escaped:\n{out}\n{err}"
        );
    };
    let env = [("NO_COLOR", "1")];
    check("stats", &evals_with(&dir, &["stats", "evil.jsonl"], &env));
    check("lint", &evals_with(&dir, &["lint", "evil.jsonl"], &env));
    let run = evaluate_demo(
        &dir,
        "evil.jsonl",
        "contains",
        &["--output", "r.json", "--no-html"],
        &env,
    );
    assert!([0, 1].contains(&code(&run)), "{:?}", text(&run));
    check("evaluate", &run);
    check(
        "report summary",
        &evals_with(&dir, &["report", "summary", "r.json"], &env),
    );
    let _ = std::fs::remove_dir_all(dir);
}
