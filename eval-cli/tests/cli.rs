//! The `evals` binary end to end: exit codes, file:line in errors, lint
//! codes, convert round trips, upgrade backups, and `evaluate --json`
//! against the demo agent (a real HTTP server on 127.0.0.1:0).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use eval_core::Dataset;

fn evals(dir: &Path, args: &[&str]) -> Output {
    evals_with(dir, args, &[])
}

fn evals_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("EVAL_EMBED_URL")
        .env_remove("EVAL_CONCURRENCY")
        .env_remove("EVAL_SAMPLE_TIMEOUT_SECS")
        .env("EVAL_CACHE", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run evals")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn demo_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let server =
            eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default()).unwrap();
        let url = server.url();
        std::mem::forget(server);
        url
    })
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("evals-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixtures() -> PathBuf {
    repo().join("tests/fixtures/public")
}

#[test]
fn evaluate_a_manifest_against_the_demo_agent() {
    let manifest = repo().join("examples/agent.yaml");
    let out = evals(
        &repo(),
        &["evaluate", manifest.to_str().unwrap(), "--url", demo_url()],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    // Named like the harness names it (and the attribute's `fn rag_quality`).
    assert!(stdout.contains("rag_quality: 8 samples"), "{stdout}");
    assert!(
        stdout.contains("gate rag_quality passed: mean contains"),
        "{stdout}"
    );
}

#[test]
fn evaluate_json_with_a_failing_gate_exits_1() {
    let dir = scratch("gate");
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::copy(
        repo().join("examples/evals/rag.jsonl"),
        dir.join("evals/rag.jsonl"),
    )
    .unwrap();
    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: $file:evals/rag.jsonl\n        metrics: [contains, partial_match]\n    thresholds:\n      partial_match: 0.99\n    ciGate: true\n",
    )
    .unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "agent.yaml",
            "--url",
            demo_url(),
            "--json",
            "--output",
            "out/results.json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let results: serde_json::Value =
        serde_json::from_str(&stdout).expect("stdout is the results JSON");
    let gate = &results["datasets"][0]["metrics"][1]["gate"];
    assert_eq!(gate["metric"], "partial_match");
    assert_eq!(gate["passed"], false);
    assert_eq!(results["samples"].as_array().unwrap().len(), 8);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    assert_eq!(written["samples"], results["samples"]);

    // The same without ciGate: every sample is held to the threshold, and
    // the failed samples fail the run, as they fail the attribute's tests.
    std::fs::write(
        dir.join("nogate.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: $file:evals/rag.jsonl\n        metrics: [partial_match]\n    thresholds:\n      partial_match: 0.99\n",
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "nogate.yaml", "--url", demo_url()]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).0.contains("8 sample(s) did not pass"),
        "{:?}",
        text(&out)
    );

    // --sample-size with a seed draws the same samples every time; --tag needs all tags.
    let run = |extra: &[&str]| {
        let mut args = vec!["evaluate", "nogate.yaml", "--url", demo_url(), "--json"];
        args.extend_from_slice(extra);
        let out = evals(&dir, &args);
        let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
        v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let a = run(&["--sample-size", "3", "--seed", "5"]);
    assert_eq!(a.len(), 3);
    assert_eq!(a, run(&["--sample-size", "3", "--seed", "5"]));
    let tagged = run(&["--tag", "retrieval", "--tag", "advanced"]);
    let all_rag = std::fs::read_to_string(dir.join("evals/rag.jsonl")).unwrap();
    let expected = all_rag
        .lines()
        .filter(|l| l.contains("\"retrieval\"") && l.contains("\"advanced\""))
        .count();
    assert_eq!(tagged.len(), expected);
    assert_eq!(run(&["--max-samples", "2"]).len(), 2);
}

#[test]
fn usage_and_config_errors_exit_2_with_file_and_line() {
    let dir = scratch("errors");
    let out = evals(&dir, &["evaluate", "nope.yaml", "--url", demo_url()]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("nope.yaml: cannot read manifest"),
        "{:?}",
        text(&out)
    );

    std::fs::write(
        dir.join("bad.jsonl"),
        "{\"input\": \"a\", \"expected\": \"b\"}\n{\"input\": \"c\",}\n",
    )
    .unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "bad.jsonl",
            "--metrics",
            "contains",
            "--url",
            demo_url(),
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("error: bad.jsonl:2:15: invalid JSON: trailing comma"),
        "{:?}",
        text(&out)
    );

    std::fs::write(
        dir.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: x\n        path: $file:../outside.jsonl\n        metrics: [contains]\n",
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "agent.yaml", "--url", demo_url()]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("agent.yaml:5: field `path`: `$file:../outside.jsonl` resolves to"),
        "{:?}",
        text(&out)
    );
    assert!(
        text(&out).1.contains("outside the project root"),
        "{:?}",
        text(&out)
    );

    let out = evals(
        &dir,
        &[
            "evaluate",
            "--prompts",
            "a",
            "b",
            "--expected",
            "x",
            "--url",
            demo_url(),
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("2 --prompts but 1 --expected"),
        "{:?}",
        text(&out)
    );
    let out = evals(&dir, &["evaluate", "--bogus"]);
    assert_eq!(code(&out), 2, "clap's usage errors exit 2");
    std::fs::write(
        dir.join("good.jsonl"),
        "{\"input\": \"a\", \"expected\": \"b\"}\n",
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "good.jsonl", "--metrics", "contains"]);
    assert_eq!(code(&out), 2);
    assert!(text(&out).1.contains("EVAL_AGENT_URL"), "{:?}", text(&out));
}

#[test]
fn inline_prompts_discovery_and_init() {
    let dir = scratch("discover");
    let out = evals(&dir, &["evaluate", "--url", demo_url()]);
    assert_eq!(code(&out), 2);
    assert!(text(&out).1.contains("evals init"), "{:?}", text(&out));

    let out = evals(&dir, &["init"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let starter = dir.join("evals/evals.json");
    assert_eq!(Dataset::load(&starter).unwrap().samples.len(), 3);
    let out = evals(&dir, &["init"]);
    assert_eq!(code(&out), 2, "init never overwrites");

    // Found in ./evals/ without naming it; scored with its own evaluators.
    let out = evals(&dir, &["evaluate", "--url", demo_url(), "--json"]);
    let (stdout, stderr) = text(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["samples"].as_array().unwrap().len(), 3);
    assert_eq!(v["datasets"][0]["metrics"][0]["name"], "partial_match");
    // The exit code is the samples' verdict: 1 when one of them failed.
    let failed = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["verdict"] != "pass");
    assert_eq!(code(&out), i32::from(failed), "{stdout}{stderr}");

    // prompts.json in . comes first.
    std::fs::write(
        dir.join("prompts.json"),
        r#"[{"prompt": "What is the capital of France?", "expected_response": "Paris"}]"#,
    )
    .unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "--url",
            demo_url(),
            "--metrics",
            "contains",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["datasets"][0]["name"], "prompts");
    assert_eq!(v["samples"][0]["verdict"], "pass");

    let out = evals(
        &dir,
        &[
            "evaluate",
            "--prompts",
            "What is the capital of France?",
            "--expected",
            "Paris",
            "--metrics",
            "contains",
            "--url",
            demo_url(),
            "--json",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["samples"][0]["metrics"][0]["score"], 1.0);
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
    let out = evals(&dir, &["lint", "dirty.jsonl", "broken.jsonl"]);
    let (stdout, _) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}");
    for expected in [
        "dirty.jsonl:4: error[DUPLICATE_QUERIES]: same input as line 1",
        "dirty.jsonl:4: warning[SHORT_ANSWER]: sample `q3`: expected answer has 1 word(s) (fewer than 10)",
        "dirty.jsonl:6: error[MISSING_GROUND_TRUTH]: sample `q5` has no expected answer",
        "dirty.jsonl:6: warning[MISSING_CONTEXT]: sample `q5` has no context passages",
        "dirty.jsonl:6: warning[MISSING_SOURCE_DOCS]: sample `q5` has no source_docs",
        "broken.jsonl:1: error[FILE_FORMAT_ERROR]:",
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
            .contains("small.jsonl:1: error[DATASET_TOO_SMALL]: 1 samples"),
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
fn stats_counts_and_distributions() {
    let file = fixtures()
        .join("deepeval/confident-ai__deepeval/a2e0d4c/tests/test_confident/goldens.json");
    let out = evals(&repo(), &["stats", "--json", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["samples"], 4);
    assert_eq!(
        v["missing"]["expected"], 1,
        "record 4 has no expected_output"
    );
    assert_eq!(
        v["distributions"]["difficulty"]["easy"].as_u64().unwrap()
            + v["distributions"]["difficulty"]["medium"].as_u64().unwrap(),
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
            let strip = |s: &eval_core::Sample| {
                let mut s = s.clone();
                s.source = eval_core::Sample::new("").source;
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
fn retrieval_dataset_against_the_demo_retriever_with_guard_and_diff() {
    let dir = scratch("retrieval");
    let dataset = |shipping: &str| {
        format!(
            r#"{{"version": "1", "id": "kb", "defaults": {{"topK": 2, "scopePrefix": "eval:kb:", "thresholds": {{"min": {{"recallAtK": 0.5}}}}}},
  "documents": [
    {{"sourceId": "eval:kb:refunds", "content": "Refunds are accepted within 30 days of purchase."}},
    {{"sourceId": "eval:kb:shipping", "content": "{shipping}"}},
    {{"sourceId": "eval:kb:password", "content": "Reset your password from the account settings page."}}
  ],
  "queries": [
    {{"id": "q_refund", "query": "When are refunds accepted?", "relevant": {{"sourceIds": ["eval:kb:refunds"]}}}},
    {{"id": "q_express", "query": "What does express shipping cost?", "relevant": {{"sourceIds": ["eval:kb:shipping"]}}}},
    {{"id": "q_password", "query": "How do I reset my password?", "relevant": {{"sourceIds": ["eval:kb:password"]}}}}
  ]}}"#
        )
    };
    std::fs::write(
        dir.join("kb.json"),
        dataset("Express shipping costs $9.99; standard shipping is free."),
    )
    .unwrap();
    let url = format!("{}/retrieval", demo_url().trim_end_matches('/'));
    let out = evals(
        &dir,
        &[
            "evaluate",
            "kb.json",
            "--url",
            &url,
            "--json",
            "--output",
            "run1.json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3, "one per query");
    for s in samples {
        let recall = s["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "recall_at_k")
            .unwrap();
        assert_eq!(recall["score"], 1.0, "{s}");
    }

    // The shipping document loses its words: q_express regresses.
    std::fs::write(
        dir.join("kb.json"),
        dataset("Parcels leave the warehouse on weekdays."),
    )
    .unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "kb.json",
            "--url",
            &url,
            "--output",
            "run2.json",
        ],
    );
    assert_eq!(
        code(&out),
        1,
        "q_express now fails (samples are judged singly), though recall's mean 2/3 meets the dataset's 0.5: {:?}",
        text(&out)
    );
    assert!(
        text(&out)
            .0
            .contains("gate kb passed: mean recall_at_k = 0.6667"),
        "{:?}",
        text(&out)
    );
    let out = evals(&dir, &["report", "diff", "run1.json", "run2.json"]);
    let (stdout, _) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}");
    assert!(
        stdout.contains("kb::q_express [kb::q_express] recall_at_k: 1.0000 -> 0.0000 (-1.0000)"),
        "{stdout}"
    );
    assert!(!stdout.contains("q_refund"), "{stdout}");
    let out = evals(&dir, &["report", "diff", "run1.json", "run1.json"]);
    assert_eq!(code(&out), 0);
    let out = evals(&dir, &["report", "accept", "run2.json", "baseline.json"]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(dir.join("baseline.json").exists());

    // The dataset's own threshold is a gate: recall mean 2/3 < 0.9 fails.
    std::fs::write(
        dir.join("kb.json"),
        dataset("Parcels leave the warehouse on weekdays.").replace("0.5", "0.9"),
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "kb.json", "--url", &url]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));

    // A production prefix is refused before anything is deleted.
    std::fs::write(
        dir.join("prod.json"),
        dataset("x").replace("eval:kb:", "prod:kb:"),
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "prod.json", "--url", &url]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("scopePrefix `prod:kb:` does not start with `eval:`"),
        "{:?}",
        text(&out)
    );
    assert!(
        text(&out).1.contains("--allow-custom-prefix"),
        "{:?}",
        text(&out)
    );
    let out = evals(
        &dir,
        &[
            "evaluate",
            "prod.json",
            "--url",
            &url,
            "--allow-custom-prefix",
            "--json",
        ],
    );
    assert!(matches!(code(&out), 0 | 1), "{:?}", text(&out));

    // Broken datasets: unknown version, a document outside the scope.
    std::fs::write(
        dir.join("v2.json"),
        dataset("x").replace("\"version\": \"1\"", "\"version\": \"2\""),
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "v2.json", "--url", &url]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("v2.json:1: field `version`: unsupported version \"2\""),
        "{:?}",
        text(&out)
    );
    std::fs::write(
        dir.join("scope.json"),
        dataset("x").replace(
            "\"eval:kb:password\", \"content\"",
            "\"other:password\", \"content\"",
        ),
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "scope.json", "--url", &url]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("document `other:password` is outside the dataset's scope"),
        "{:?}",
        text(&out)
    );
}

/// What a review found, kept fixed: typos in manifests and runevals files,
/// nothing selected, a judge that is not configured, a dead agent.
#[test]
fn silent_passes_are_errors() {
    let dir = scratch("silent");
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::copy(
        repo().join("examples/evals/rag.jsonl"),
        dir.join("evals/rag.jsonl"),
    )
    .unwrap();
    std::fs::write(
        dir.join("typo.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: evals/rag.jsonl\n        metrics: [partial_match]\n    thresholds:\n      partial_match: 0.9\n    cigate: true\n",
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "typo.yaml", "--url", demo_url()]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("typo.yaml:9:5: invalid manifest: unknown field `cigate`"),
        "{:?}",
        text(&out)
    );

    let out = evals(
        &dir,
        &[
            "evaluate",
            "evals/rag.jsonl",
            "--metrics",
            "contains",
            "--tag",
            "nope",
            "--url",
            demo_url(),
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("no sample selected (tag nope): nothing to evaluate"),
        "{:?}",
        text(&out)
    );

    // A judge metric without a judge: refused before any agent call.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "--prompts",
            "What is RAG?",
            "--url",
            "http://127.0.0.1:9",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("`relevance` needs an LLM judge: set EVAL_JUDGE_URL"),
        "{:?}",
        text(&out)
    );

    // Every sample ended in an agent error: not a pass.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "evals/rag.jsonl",
            "--metrics",
            "contains",
            "--url",
            "http://127.0.0.1:9",
        ],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("no sample could be scored"),
        "{:?}",
        text(&out)
    );

    // runevals: a typo of a root key, a number where a string belongs.
    std::fs::write(
        dir.join("re.json"),
        "{\"schemaVersion\": \"1.0.0\",\n \"defualt_evaluators\": {},\n \"items\": [{\"prompt\": \"a\", \"expected_response\": 42}]}",
    )
    .unwrap();
    let out = evals(&dir, &["lint", "re.json"]);
    assert_eq!(code(&out), 1);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("re.json:2: error[FILE_FORMAT_ERROR]: $.defualt_evaluators: unknown key (did you mean `default_evaluators`?)"), "{stdout}");
    assert!(stdout.contains("re.json:3: error[FILE_FORMAT_ERROR]: $.items[0].expected_response: expected a string, found a number"), "{stdout}");

    // A runevals file naming no evaluators runs with PartialMatch.
    std::fs::write(dir.join("min.json"), r#"{"schemaVersion": "1.0.0", "items": [{"prompt": "What is the capital of France?", "expected_response": "Paris is the capital of France"}]}"#).unwrap();
    let out = evals(
        &dir,
        &["evaluate", "min.json", "--url", demo_url(), "--json"],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["samples"][0]["metrics"][0]["name"], "partial_match");

    // upgrade refuses a document with a repeated key, at its own line.
    std::fs::write(
        dir.join("dup.json"),
        "{\"prompts\": [\"a\"],\n \"prompts\": [\"b\"]}",
    )
    .unwrap();
    let out = evals(&dir, &["upgrade", "dup.json"]);
    assert_eq!(code(&out), 2);
    assert!(text(&out).1.contains("dup.json:2:"), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("duplicate key `prompts`"),
        "{:?}",
        text(&out)
    );
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

#[test]
fn loader_refs_come_from_the_loader_dir() {
    let dir = scratch("loader");
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(
        dir.join("docs/refunds.md"),
        "Refunds are accepted within 30 days of purchase.",
    )
    .unwrap();
    let dataset = |r: &str| {
        format!(
            r#"{{"version": "1", "id": "ld", "defaults": {{"topK": 2, "scopePrefix": "eval:ld:"}},
  "documents": [{{"sourceId": "eval:ld:refunds", "loaderRef": "{r}"}}],
  "queries": [{{"id": "q", "query": "When are refunds accepted?", "relevant": {{"sourceIds": ["eval:ld:refunds"]}}}}]}}"#
        )
    };
    let url = format!("{}/retrieval", demo_url().trim_end_matches('/'));
    std::fs::write(dir.join("ld.json"), dataset("docs/refunds.md")).unwrap();
    let out = evals(
        &dir,
        &[
            "evaluate",
            "ld.json",
            "--url",
            &url,
            "--loader-dir",
            ".",
            "--json",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(v["samples"][0]["verdict"], "pass", "{v}");
    // A ref outside the directory is not read, and is named.
    std::fs::write(dir.join("ld.json"), dataset("../secret.txt")).unwrap();
    let out = evals(
        &dir,
        &["evaluate", "ld.json", "--url", &url, "--loader-dir", "docs"],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .0
            .contains("loaderRef `../secret.txt` (document `eval:ld:refunds`)"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn settings_come_from_the_environment_once_and_bad_values_are_named() {
    let dir = scratch("settings");
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::copy(
        repo().join("examples/evals/rag.jsonl"),
        dir.join("evals/rag.jsonl"),
    )
    .unwrap();
    let args = [
        "evaluate",
        "evals/rag.jsonl",
        "--metrics",
        "contains",
        "--url",
        demo_url(),
    ];
    // Every bad value at once, each with its variable and value; nothing runs.
    let out = evals_with(
        &dir,
        &args,
        &[
            ("EVAL_CONCURRENCY", "lots"),
            ("EVAL_SAMPLE_TIMEOUT_SECS", "-3"),
            ("EVAL_CACHE", "maybe"),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    for want in [
        "error: invalid EVAL_SAMPLE_TIMEOUT_SECS=`-3`: a number of seconds between 0.001 and 10^9",
        "error: invalid EVAL_CONCURRENCY=`lots`: a whole number from 1 to 100000",
        "error: invalid EVAL_CACHE=`maybe`: on or off",
    ] {
        assert!(stderr.contains(want), "{want} not in:\n{stderr}");
    }
    // A near miss is warned about, and the run goes on.
    let out = evals_with(&dir, &args, &[("EVAL_CONCURENCY", "4")]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("warning: EVAL_CONCURENCY is not a setting of this tool (did you mean `EVAL_CONCURRENCY`?)"),
        "{:?}",
        text(&out)
    );
    // EVAL_SAMPLE_TIMEOUT_SECS bounds every sample of the CLI too; --timeout-secs wins over it.
    let slow = eval_examples::demo::spawn(eval_examples::demo::DemoConfig {
        latency: std::time::Duration::from_millis(1500),
    })
    .unwrap();
    let url = slow.url();
    let slow_args = [
        "evaluate",
        "evals/rag.jsonl",
        "--metrics",
        "contains",
        "--url",
        url.as_str(),
        "--max-samples",
        "2",
    ];
    let out = evals_with(&dir, &slow_args, &[("EVAL_SAMPLE_TIMEOUT_SECS", "0.2")]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "no sample could be scored: {stdout}{stderr}");
    assert!(
        stdout.contains("agent error: no answer within 0.2s (sample timeout)"),
        "{stdout}"
    );
    let mut with_flag = slow_args.to_vec();
    with_flag.extend(["--timeout-secs", "30"]);
    let out = evals_with(&dir, &with_flag, &[("EVAL_SAMPLE_TIMEOUT_SECS", "0.2")]);
    assert_eq!(code(&out), 0, "the flag wins: {:?}", text(&out));
}
