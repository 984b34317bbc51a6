//! `evals evaluate` and `evals report` end to end: exit codes, file:line in
//! errors, settings, retrieval datasets, `--json` results, against the demo
//! agent (a real HTTP server on 127.0.0.1:0).

use crate::common;

use common::*;
use eval_datasets::Dataset;

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
    // 8 of 8 contain the answer: Clopper–Pearson's interval [0.025^(1/8),
    // 1] = [0.6306, 1] lies above 0.3 but not above 0.75, so the 0.75 gate
    // is met by its point estimate only, and says so. Eight partial_match
    // scores averaging 0.418 cannot prove a mean above 0.3 whatever their
    // distribution (their betting interval holds 0.22).
    assert!(
        stdout.contains("gate rag_quality passed (inconclusive): mean contains = 1.0000 (95% interval 0.6306..1.0000)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("gate rag_quality passed (inconclusive): mean partial_match"),
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

    // The same without ciGate (seed 000: exit 1 only when `ciGate: true`):
    // the threshold gates the mean and is reported, not enforced.
    std::fs::write(
        dir.join("nogate.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: $file:evals/rag.jsonl\n        metrics: [partial_match]\n    thresholds:\n      partial_match: 0.99\n",
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "nogate.yaml", "--url", demo_url()]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let shown = text(&out).0;
    assert!(
        shown.contains("gate rag missed: mean partial_match")
            && shown.contains("gate >= 0.99 (missed by")
            && shown.contains(", not enforced (ciGate is false)"),
        "{shown}"
    );
    // --ci-gate enforces it.
    let out = evals(
        &dir,
        &["evaluate", "nogate.yaml", "--url", demo_url(), "--ci-gate"],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(text(&out).0.contains("gate rag FAILED"), "{:?}", text(&out));

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
    // The conversation's default PartialMatch scores each of its turns.
    let mut names: Vec<&str> = v["datasets"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "partial_match",
            "partial_match@turn1",
            "partial_match@turn2"
        ]
    );
    // A newcomer's first run against the demo agent passes.
    let verdicts: Vec<&str> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["pass", "pass", "pass"], "{stdout}{stderr}");
    assert_eq!(code(&out), 0, "{stdout}{stderr}");

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
fn retrieval_dataset_against_the_demo_retriever_with_guard_and_diff() {
    let dir = scratch("retrieval");
    let dataset =
        |shipping: &str| knowledge_base(shipping, r#", "thresholds": {"min": {"recallAtK": 0.5}}"#);
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
            .contains("gate kb passed (inconclusive): mean recall_at_k = 0.6667"),
        "{:?}",
        text(&out)
    );
    // The document changed: the file's content differs, so the runs are
    // compared only when told, and the comparison says so.
    let out = evals(&dir, &["report", "diff", "run1.json", "run2.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("dataset `kb`: content "),
        "{:?}",
        text(&out)
    );
    let out = evals(
        &dir,
        &[
            "report",
            "diff",
            "run1.json",
            "run2.json",
            "--allow-dataset-change",
        ],
    );
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("note: compared across a dataset change: dataset `kb`"),
        "{stdout}"
    );
    // One query of three got worse and the gate still holds: three pairs
    // cannot tell, so the diff says inconclusive (exit 0), what would
    // decide it, and lists the query as evidence.
    assert_eq!(code(&out), 0, "{stdout}");
    assert!(
        stdout.contains("recall_at_k: 1.0000 → 0.6667, Δ -0.3333 (95% -1.0000..+1.0000; exact McNemar: 1 pass→fail, 0 fail→pass; p 1.0000): inconclusive"),
        "{stdout}"
    );
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
    // Allowed, it still needs a confirmation: no terminal here, so --yes.
    let allowed = |extra: &[&str]| {
        let mut args = vec![
            "evaluate",
            "prod.json",
            "--url",
            &url,
            "--allow-custom-prefix",
            "--json",
        ];
        args.extend_from_slice(extra);
        evals(&dir, &args)
    };
    let out = allowed(&[]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "ingest would delete every document under `prod:kb:`; there is no terminal to ask for confirmation, so pass --yes"
        ),
        "{:?}",
        text(&out)
    );
    let out = allowed(&["--yes"]);
    assert!(matches!(code(&out), 0 | 1), "{:?}", text(&out));
    // On a terminal it asks (a pseudo-terminal through `script`, where there is one).
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok()
    {
        for (answer, want) in [("n", 2), ("y", 0)] {
            let cmd = format!(
                "{} evaluate prod.json --url {url} --allow-custom-prefix --metrics recall_at_k",
                env!("CARGO_BIN_EXE_evals")
            );
            let mut child = std::process::Command::new("script")
                .args(["-qec", &cmd, "/dev/null"])
                .current_dir(&dir)
                .env("EVAL_CACHE", "off")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            {
                use std::io::Write as _;
                let mut stdin = child.stdin.take().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(300));
                let _ = writeln!(stdin, "{answer}");
            }
            let out = child.wait_with_output().unwrap();
            let shown = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                shown.contains("Ingest deletes every document under `prod:kb:` before indexing the dataset. Continue? [y/N]"),
                "{answer}: {shown}"
            );
            if want == 2 {
                assert_eq!(code(&out), 2, "{shown}");
                assert!(
                    shown.contains("not confirmed: nothing under `prod:kb:` was deleted"),
                    "{shown}"
                );
            } else {
                assert!(matches!(code(&out), 0 | 1), "{shown}");
            }
        }
    }

    // A bare `eval:` would delete every evaluation scope.
    std::fs::write(
        dir.join("bare.json"),
        dataset("x").replace("eval:kb:", "eval:"),
    )
    .unwrap();
    let out = evals(&dir, &["evaluate", "bare.json", "--url", &url]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("scopePrefix `eval:` names nothing after `eval:`"),
        "{:?}",
        text(&out)
    );

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

    // issue38:runevals: a runevals file naming no evaluators is scored on
    // runevals' judged default dimensions: without a judge, refused at start
    // (saying so); with metrics given, those replace them.
    std::fs::write(dir.join("min.json"), r#"{"schemaVersion": "1.0.0", "items": [{"prompt": "What is the capital of France?", "expected_response": "Paris is the capital of France"}]}"#).unwrap();
    let out = evals(
        &dir,
        &["evaluate", "min.json", "--url", demo_url(), "--json"],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("runevals' default dimensions"),
        "{:?}",
        text(&out)
    );
    let out = evals(
        &dir,
        &[
            "evaluate",
            "min.json",
            "--url",
            demo_url(),
            "--json",
            "--metrics",
            "partial_match",
        ],
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
        ..Default::default()
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

#[test]
fn a_gate_on_a_metric_the_dataset_is_not_scored_with_is_refused() {
    let dir = scratch("gate-metric");
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::copy(
        repo().join("examples/evals/rag.jsonl"),
        dir.join("evals/rag.jsonl"),
    )
    .unwrap();
    // Scored with its own metrics (PartialMatch: it has expected answers).
    let out = evals(
        &dir,
        &[
            "evaluate",
            "evals/rag.jsonl",
            "--gate",
            "contains >= 0.5",
            "--url",
            demo_url(),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "gate `contains` for evals/rag.jsonl: the dataset is not scored with `contains`"
        ),
        "{stderr}"
    );
    // An alias gates its metric.
    let out = evals(
        &dir,
        &[
            "evaluate",
            "evals/rag.jsonl",
            "--metrics",
            "string_match >= 0.0",
            "--gate",
            "exact_match >= 0.0",
            "--url",
            demo_url(),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("gate rag passed: mean string_match"),
        "{stdout}"
    );
}

#[test]
fn inline_prompts_are_named_by_their_flag_and_position() {
    let dir = scratch("inline-names");
    let out = evals(
        &dir,
        &[
            "evaluate",
            "--prompts",
            "What is the capital of France?",
            "What is the capital of Spain?",
            "--expected",
            "Paris",
            "Lisbon",
            "--metrics",
            "contains",
            "--url",
            demo_url(),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("FAILED prompts::what_is_the_capital_of_spain (--prompts[2])"),
        "the failing prompt is named by its flag and 1-based position:\n{stdout}"
    );
    assert!(!stdout.contains("<inline>"), "{stdout}");
}

#[test]
fn estimate_prints_calls_tokens_and_cost_without_calling_anything() {
    let dir = scratch("estimate");
    std::fs::write(
        dir.join("rag.jsonl"),
        "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval augmented generation.\", \"context\": [\"RAG retrieves documents.\"]}\n\
         {\"input\": [\"Hi\", \"And then?\"], \"expected\": \"Then it generates.\", \"context\": [\"It generates.\"]}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("prices.json"),
        r#"{"gpt-4o-mini": {"input": 0.15, "output": 0.6}, "my-agent": {"input": 1, "output": 2}}"#,
    )
    .unwrap();
    // Every server named here is unreachable: an estimate must not call.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "rag.jsonl",
            "--metrics",
            "faithfulness >= 0.5, contains, latency_ms <= 2000",
            "--gate",
            "p95(latency_ms) <= 3000",
            "--repeat",
            "2",
            "--estimate",
        ],
        &[
            ("EVAL_JUDGE_URL", "http://127.0.0.1:9/v1"),
            ("EVAL_JUDGE_MODEL", "gpt-4o-mini"),
            ("EVAL_PRICES", "prices.json"),
            ("EVAL_AGENT_MODEL", "my-agent"),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    // 3 user turns × 2 runs = 6 agent calls; faithfulness: 1 judge call per
    // sample run (statements and verdicts in one question) × 2 samples × 2
    // runs = 4.
    for want in [
        "estimate (no call made): 1 dataset(s), 2 sample(s)",
        "agent       6 call(s)",
        "judge       4 call(s)",
        "embeddings  0 call(s)",
        "rag: 2 sample(s) × 2 run(s): agent 6 call(s), judge 4, embeddings 0 (calls per sample run: faithfulness 1.00 judge)",
        "tokens of judge (gpt-4o-mini): o200k_base\n",
        "tokens of agent (my-agent): o200k_base, an approximation",
        "cost: ~$",
    ] {
        assert!(stdout.contains(want), "{want:?} not in:\n{stdout}");
    }
    assert!(!stderr.contains("unreachable"), "{stderr}");
    // `--model` is the agent's model, as in the real run: its tokenizer
    // and its price, over EVAL_AGENT_MODEL.
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "rag.jsonl",
            "--metrics",
            "contains",
            "--model",
            "gpt-4o-mini",
            "--estimate",
        ],
        &[
            ("EVAL_PRICES", "prices.json"),
            ("EVAL_AGENT_MODEL", "my-agent"),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("tokens of agent (gpt-4o-mini): o200k_base\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("my-agent"), "{stdout}");
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "rag.jsonl",
            "--metrics",
            "contains",
            "--estimate",
            "--json",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["agent"]["calls"], 3);
    assert_eq!(v["judge"]["calls"], 0);
    assert!(v["cost_usd"].is_null());
}

#[test]
fn samples_the_agent_did_not_answer_are_never_left_out_of_the_summary() {
    // An agent that answers one request and refuses every other (429, a
    // rate of one request per 1000 s), no retries, one call at a time: the
    // first sample is answered and passes, the other three are not.
    let limited = eval_examples::demo::spawn(eval_examples::demo::DemoConfig {
        rate_limit: Some(eval_examples::demo::RateLimit::new(0.001)),
        ..Default::default()
    })
    .unwrap();
    let dir = scratch("unanswered");
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "--prompts",
            "What is 2 + 2?",
            "What is 3 + 3?",
            "What is 4 + 4?",
            "What is 5 + 5?",
            "--expected",
            "4",
            "6",
            "8",
            "10",
            "--metrics",
            "contains",
            "--concurrency",
            "1",
            "--url",
            &limited.url(),
        ],
        &[("EVAL_AGENT_MAX_RETRIES", "0")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("prompts: 4 samples, 1 passed, 0 failed, 3 errors"),
        "{stdout}"
    );
    // Not "pass rate 100%" over the one answered sample: 1 of 4.
    assert!(
        stdout.contains(
            "mean  1.0000  pass rate  25%  (3 of 4 samples not scored: left out of the mean, counted as not passed)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("was still overloaded after 1 attempt(s) (HTTP 429; retries are set by EVAL_AGENT_MAX_RETRIES)"),
        "{stdout}"
    );
    let _ = limited.shutdown();
}

/// `--cassette` records the agent's answers, and a second run replays them
/// with the agent gone, to the same verdicts; a sample the cassette has no
/// answer for fails naming why. `--cassette-mode` alone is refused.
#[test]
fn a_cassette_given_by_flag_records_then_replays_without_the_agent() {
    let dir = scratch("cassette-flag");
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"id\": \"rag\", \"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n\
         {\"id\": \"sum\", \"input\": \"What is 2 + 2?\", \"expected\": \"five\"}\n",
    )
    .unwrap();
    let record = [
        "--cassette",
        "answers.jsonl",
        "--cassette-mode",
        "record",
        "--json",
    ];
    let out = evaluate_demo(&dir, "qa.jsonl", "contains", &record, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let recorded: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let lines = std::fs::read_to_string(dir.join("answers.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");

    // The agent is gone: a port nothing listens on (its protocol is the same).
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", gone.local_addr().unwrap());
    drop(gone);
    let replay = |dataset: &str| {
        evals(
            &dir,
            &[
                "evaluate",
                dataset,
                "--url",
                &url,
                "--metrics",
                "contains",
                "--cassette",
                "answers.jsonl",
                "--json",
            ],
        )
    };
    let out = replay("qa.jsonl");
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let replayed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let verdicts = |v: &serde_json::Value| -> Vec<(String, String, String)> {
        v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap_or_default().to_string(),
                    s["verdict"].to_string(),
                    s["output"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(&replayed), verdicts(&recorded));
    assert_eq!(verdicts(&replayed).len(), 2);

    // A sample whose question changed has no recorded answer; the other still replays.
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"id\": \"rag\", \"input\": \"What is RAG, again?\", \"expected\": \"Retrieval\"}\n\
         {\"id\": \"sum\", \"input\": \"What is 2 + 2?\", \"expected\": \"five\"}\n",
    )
    .unwrap();
    let out = replay("qa.jsonl");
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("has no answer for qa.jsonl id rag: the user turns changed"),
        "{stdout}"
    );

    let out = evals(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            &url,
            "--cassette-mode",
            "record",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("--cassette-mode needs a cassette"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}
