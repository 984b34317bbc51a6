//! The same two datasets (and a manifest's) run
//! through the attribute, the harness, the `evals` command, and both test
//! binaries under nextest's protocol (one process per test, two shards)
//! joined by `evals report merge`, against the demo agent on loopback.
//! Every way in must give the same per-sample verdicts, the same dataset
//! names, the same gate verdicts, and results files that `evals report diff`
//! matches sample for sample; `--exact` never judges a gate.
//!
//! The datasets, each sample answered 3 times (`repeat = 3`): `qa`
//! (samples judged singly: one fails in every run, the others pass in every
//! run, which 3 runs cannot prove for `contains >= 1`: inconclusive,
//! counted as passed by the point estimate; gate `contains >= 0.5` met by
//! 3/4, inconclusive) and the manifest's `qa-gated` (`ciGate`: samples
//! pass, the mean 2/3 misses `contains: 0.9`, inconclusive). A third, the
//! same file under a manifest without `ciGate` (`qa-reported`), is judged
//! by its mean the same way and reported, not enforced: its miss fails no
//! test and no run (seed 000). Every front end must give the same
//! three-valued verdicts.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

use eval_runtime::results::{Results, Verdict};
use eval_runtime::verdict::Decision;

use super::{build, cargo, command, evals, files, gates, nextest_protocol, read, text, verdicts};

const QA: &str = r#"{"id": "paris", "input": "What is the capital of France?", "expected": "Paris"}
{"id": "rag", "input": "What is retrieval-augmented generation?", "expected": "grounded in real sources"}
{"id": "vectors", "input": "How does vector search find relevant chunks?", "expected": "nearest neighbors by cosine similarity"}
{"id": "wrong-city", "input": "What is the capital of France?", "expected": "Lyon"}
"#;

const GATED: &str = r#"{"id": "chunks", "input": "Why do we split documents into chunks before embedding them?", "expected": "smaller overlapping passages"}
{"id": "fruit", "input": "What does a reranker do?", "expected": "banana"}
{"id": "faithful", "input": "What is the faithfulness metric?", "expected": "supported by the retrieved context"}
"#;

const MANIFEST: &str = "apiVersion: agentspec.io/v1
kind: AgentSpec
metadata:
  name: front-ends
spec:
  evaluation:
    datasets:
      - name: qa-gated
        path: $file:data/gated.jsonl
        metrics: [contains]
    thresholds:
      contains: 0.9
    ciGate: true
    repeat: 3
";

/// The gated dataset again, under a manifest that does not say `ciGate`.
const REPORTED: &str = "apiVersion: agentspec.io/v1
kind: AgentSpec
metadata:
  name: front-ends-reported
spec:
  evaluation:
    datasets:
      - name: qa-reported
        path: $file:data/gated.jsonl
        metrics: [contains]
    thresholds:
      contains: 0.9
    repeat: 3
";

const ATTR: &str = r#"
use eval_runtime::prelude::*;

fn agent() -> eval_runtime::Result<HttpAgent> {
    HttpAgent::from_env()
}

#[eval_dataset("data/qa.jsonl", metrics(contains), gate(contains >= 0.5), repeat = 3)]
async fn qa(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

#[eval_dataset(manifest = "agent.yaml", dataset = "qa-gated")]
async fn qa_gated(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

#[eval_dataset(manifest = "reported.yaml", dataset = "qa-reported")]
async fn qa_reported(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}
"#;

const HARNESS: &str = r#"
fn main() -> std::process::ExitCode {
    eval_runtime::Harness::new()
        .dataset("data/qa.jsonl", "contains")
        .gate("contains >= 0.5")
        .manifest_dataset("agent.yaml", "qa-gated")
        .manifest_dataset("reported.yaml", "qa-reported")
        .repeat(3)
        .agent(eval_runtime::HttpAgent::from_env())
        .run()
}
"#;

/// The scratch crate: both datasets, the manifests, the two test binaries.
fn scratch() -> PathBuf {
    super::scratch(
        "front-ends",
        &[
            ("data/qa.jsonl", QA),
            ("data/gated.jsonl", GATED),
            ("agent.yaml", MANIFEST),
            ("reported.yaml", REPORTED),
            ("tests/attr.rs", ATTR),
            ("tests/harness.rs", HARNESS),
        ],
    )
}

#[test]
fn every_front_end_gives_the_same_verdict() {
    let dir = scratch();
    let (attr_exe, harness_exe) = build(&dir);
    let server = eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default())
        .expect("start the demo agent");
    let url = server.url();
    let out_dir = dir.join("out");

    // 1. The attribute, as `cargo test` runs it.
    let attr_results = out_dir.join("attr");
    let attr = command(&attr_exe, &dir, &url, &attr_results)
        .env("EVAL_JUNIT", out_dir.join("attr.junit.xml"))
        .output()
        .unwrap();
    let attr_text = text(&attr);
    assert_eq!(attr.status.code(), Some(101), "{attr_text}");
    let mut attr_failed: Vec<&str> = attr_text
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .collect();
    attr_failed.sort();
    assert_eq!(
        attr_failed,
        ["qa::wrong_city", "qa_gated::gates"],
        "one sample fails singly; under ciGate the samples pass and the gate fails:\n{attr_text}"
    );
    assert!(attr_text.contains("test qa::gates ... ok"), "{attr_text}");
    // Without ciGate the manifest's threshold is judged and reported only
    // (a passing test's output is libtest's to show: the results say it).
    assert!(
        attr_text.contains("test qa_reported::gates ... ok"),
        "{attr_text}"
    );
    const REPORTED_LINE: &str = "gate qa_reported missed (inconclusive): mean contains = 0.6667 (95% interval 0.0943..0.9916), gate >= 0.9 (missed by 0.2333; inconclusive: its interval straddles the threshold), not enforced (ciGate is false)";
    assert!(
        attr_text.contains(
            "gate qa_gated FAILED (inconclusive): mean contains = 0.6667 (95% interval 0.0943..0.9916), gate >= 0.9 (missed by 0.2333; inconclusive: its interval straddles the threshold)"
        ),
        "{attr_text}"
    );
    let attr_file = attr_results.join("front-ends/attr.json");

    // 2. The harness.
    let harness_results = out_dir.join("harness");
    let harness = command(&harness_exe, &dir, &url, &harness_results)
        .env("EVAL_JUNIT", out_dir.join("harness.junit.xml"))
        .output()
        .unwrap();
    let harness_text = text(&harness);
    assert_eq!(harness.status.code(), Some(101), "{harness_text}");
    assert!(
        harness_text.contains("gate qa passed (inconclusive): mean contains = 0.7500"),
        "{harness_text}"
    );
    assert!(
        harness_text.contains("gate qa_gated FAILED (inconclusive): mean contains = 0.6667"),
        "{harness_text}"
    );
    assert!(harness_text.contains(REPORTED_LINE), "{harness_text}");
    let harness_file = harness_results.join("front-ends/harness.json");
    // The harness and the attribute keep their own files side by side.
    assert!(attr_file.is_file() && harness_file.is_file());
    // EVAL_JUNIT gives both the same JUnit: one testcase per sample, the
    // sample that failed singly a <failure>.
    for name in ["attr", "harness"] {
        let xml = std::fs::read_to_string(out_dir.join(format!("{name}.junit.xml")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let cases = xml.matches("<testcase ").count();
        assert_eq!(
            cases,
            read(&out_dir.join(name).join(format!("front-ends/{name}.json")))
                .samples
                .len(),
            "{name}: {xml}"
        );
        assert!(
            xml.contains("<testcase name=\"qa::wrong_city\" classname=\"qa\""),
            "{name}: {xml}"
        );
        assert!(
            xml.contains("<failure message=\"contains 0.000 &lt; 1"),
            "{name}: {xml}"
        );
        common::check_junit_schema(&out_dir.join(format!("{name}.junit.xml")));
    }

    // The HTML report beside each results file holds every sample; the
    // harness says where it is. EVAL_HTML=off writes none.
    for file in [&attr_file, &harness_file] {
        assert_eq!(
            common::report_samples(&file.with_extension("html")),
            verdicts(&read(file)).into_keys().collect(),
            "{}",
            file.display()
        );
    }
    assert!(
        harness_text.contains(&format!(
            "html: {}",
            harness_file.with_extension("html").display()
        )),
        "{harness_text}"
    );
    for exe in [&attr_exe, &harness_exe] {
        let off = out_dir.join("html-off");
        let out = command(exe, &dir, &url, &off)
            .env("EVAL_HTML", "off")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(101), "{}", text(&out));
        let written: Vec<_> = fs::read_dir(off.join("front-ends"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(written.iter().any(|f| f.ends_with(".json")), "{written:?}");
        assert!(!written.iter().any(|f| f.ends_with(".html")), "{written:?}");
        assert!(!text(&out).contains("html: "), "{}", text(&out));
    }

    // 3. The `evals` command, one dataset at a time.
    let cli_results = out_dir.join("cli");
    let cli_qa = evals(
        &dir,
        &url,
        &cli_results,
        &[
            "evaluate",
            "data/qa.jsonl",
            "--metrics",
            "contains",
            "--gate",
            "contains >= 0.5",
            "--repeat",
            "3",
            "--output",
            "out/cli-qa.json",
        ],
    );
    assert_eq!(
        cli_qa.status.code(),
        Some(1),
        "a failed sample fails the run:\n{}",
        text(&cli_qa)
    );
    let cli_gated = evals(
        &dir,
        &url,
        &cli_results,
        &[
            "evaluate",
            "agent.yaml",
            "--dataset",
            "qa-gated",
            "--output",
            "out/cli-gated.json",
        ],
    );
    assert_eq!(
        cli_gated.status.code(),
        Some(1),
        "a missed gate fails the run:\n{}",
        text(&cli_gated)
    );
    let cli_reported = evals(
        &dir,
        &url,
        &cli_results,
        &[
            "evaluate",
            "reported.yaml",
            "--output",
            "out/cli-reported.json",
        ],
    );
    assert_eq!(
        cli_reported.status.code(),
        Some(0),
        "a threshold without ciGate is reported, not enforced:\n{}",
        text(&cli_reported)
    );
    assert!(
        text(&cli_reported).contains(REPORTED_LINE),
        "{}",
        text(&cli_reported)
    );
    let cli_parts = [
        dir.join("out/cli-qa.json"),
        dir.join("out/cli-gated.json"),
        dir.join("out/cli-reported.json"),
    ];
    let cli_file = out_dir.join("cli.json");
    let joined = evals(
        &dir,
        &url,
        &cli_results,
        &[
            "report",
            "merge",
            cli_file.to_str().unwrap(),
            cli_parts[0].to_str().unwrap(),
            cli_parts[1].to_str().unwrap(),
            cli_parts[2].to_str().unwrap(),
        ],
    );
    assert_eq!(joined.status.code(), Some(1), "{}", text(&joined));
    assert!(text(&joined).contains(REPORTED_LINE), "{}", text(&joined));
    // `--output` and `report merge` leave the report beside their results.
    for file in [&cli_parts[0], &cli_parts[1], &cli_parts[2], &cli_file] {
        assert_eq!(
            common::report_samples(&file.with_extension("html")),
            verdicts(&read(file)).into_keys().collect(),
            "{}",
            file.display()
        );
    }
    assert!(
        text(&joined).contains(&format!(
            "html: {}",
            cli_file.with_extension("html").display()
        )),
        "{}",
        text(&joined)
    );

    // 4. Both binaries under nextest's protocol, in two shards, merged.
    let mut merged_files = Vec::new();
    for (exe, name) in [(&attr_exe, "attr"), (&harness_exe, "harness")] {
        let shards = [
            out_dir.join(format!("{name}-shard-1")),
            out_dir.join(format!("{name}-shard-2")),
        ];
        let failed = nextest_protocol(&dir, exe, &url, [&shards[0], &shards[1]]);
        // A process's part gets no report: the merged whole does.
        for shard in &shards {
            let (json, html) = (files(shard, "json"), files(shard, "html"));
            assert!(!json.is_empty(), "{name}: no part in {}", shard.display());
            assert!(html.is_empty(), "{name}: a report beside a part: {html:?}");
        }
        // Each process ran one sample: only a failing sample fails, no gate is judged.
        let want: &[&str] = &["qa::wrong_city"];
        assert_eq!(failed, want, "{name}");
        let merged = out_dir.join(format!("{name}-merged.json"));
        let parts: Vec<PathBuf> = shards
            .iter()
            .map(|s| s.join(format!("front-ends/{name}.parts")))
            .collect();
        let out = evals(
            &dir,
            &url,
            &cli_results,
            &[
                "report",
                "merge",
                merged.to_str().unwrap(),
                parts[0].to_str().unwrap(),
                parts[1].to_str().unwrap(),
            ],
        );
        let shown = text(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "the merged run misses a gate:\n{shown}"
        );
        assert!(
            shown.contains("gate qa_gated FAILED (inconclusive): mean contains = 0.6667"),
            "{shown}"
        );
        assert!(shown.contains("gate qa passed"), "{shown}");
        assert!(shown.contains(REPORTED_LINE), "{shown}");
        assert_eq!(
            common::report_samples(&merged.with_extension("html")),
            verdicts(&read(&merged)).into_keys().collect(),
            "{name}"
        );
        // One shard alone is not the dataset: its gates are not judged.
        let half = evals(
            &dir,
            &url,
            &cli_results,
            &[
                "report",
                "merge",
                out_dir.join(format!("{name}-half.json")).to_str().unwrap(),
                parts[0].to_str().unwrap(),
            ],
        );
        assert!(text(&half).contains("not judged"), "{}", text(&half));
        assert_eq!(half.status.code(), Some(1), "a missing shard is not a pass");
        assert!(
            text(&half).contains("a shard or part is missing (--partial accepts that)"),
            "{}",
            text(&half)
        );
        merged_files.push(merged);
    }

    // Real nextest, when it is installed (CI has it): the same merged verdict.
    if Command::new(cargo())
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let mut dirs = Vec::new();
        for k in 1..=2 {
            let results = out_dir.join(format!("nextest-{k}"));
            let out = command(cargo(), &dir, &url, &results)
                .args([
                    "nextest",
                    "run",
                    "--no-fail-fast",
                    "--partition",
                    &format!("hash:{k}/2"),
                ])
                .output()
                .unwrap();
            assert!(
                !text(&out).contains("error: no such command"),
                "{}",
                text(&out)
            );
            dirs.push(results);
        }
        for name in ["attr", "harness"] {
            let merged = out_dir.join(format!("nextest-{name}.json"));
            let mut args = vec![
                "report".to_string(),
                "merge".into(),
                merged.to_string_lossy().into_owned(),
            ];
            for d in &dirs {
                let parts = d.join(format!("front-ends/{name}.parts"));
                if parts.exists() {
                    args.push(parts.to_string_lossy().into_owned());
                }
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = evals(&dir, &url, &cli_results, &args);
            assert_eq!(out.status.code(), Some(1), "{}", text(&out));
            merged_files.push(merged);
        }
    } else {
        eprintln!("note: cargo-nextest is not installed; its protocol was exercised by hand above");
    }

    // The same verdicts, names and gates everywhere.
    let reference = read(&attr_file);
    assert!(reference.complete);
    let names: Vec<&str> = reference.datasets.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["qa", "qa_gated", "qa_reported"]);
    // Every gate straddles its threshold: met and missed by the point
    // estimate, inconclusive; the one without ciGate is not enforced.
    let want_gates = BTreeMap::from([
        (
            ("qa".to_string(), "contains".to_string()),
            (true, true, Some(Decision::Inconclusive), true),
        ),
        (
            ("qa_gated".to_string(), "contains".to_string()),
            (true, false, Some(Decision::Inconclusive), true),
        ),
        (
            ("qa_reported".to_string(), "contains".to_string()),
            (true, false, Some(Decision::Inconclusive), false),
        ),
    ]);
    assert_eq!(gates(&reference), want_gates);
    let expected = verdicts(&reference);
    let key = |d: &str, id: &str| (d.to_string(), id.to_string());
    let want_samples = BTreeMap::from([
        (
            key("qa", "paris"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (
            key("qa", "rag"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (
            key("qa", "vectors"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (key("qa", "wrong-city"), (Verdict::Fail, None, 3)),
        (
            key("qa_gated", "chunks"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (
            key("qa_gated", "faithful"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (key("qa_gated", "fruit"), (Verdict::Fail, None, 3)),
        (
            key("qa_reported", "chunks"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (
            key("qa_reported", "faithful"),
            (Verdict::Inconclusive, Some(Verdict::Pass), 3),
        ),
        (key("qa_reported", "fruit"), (Verdict::Fail, None, 3)),
    ]);
    assert_eq!(expected, want_samples);
    for file in [&harness_file, &cli_file].into_iter().chain(&merged_files) {
        let r = read(file);
        assert_eq!(verdicts(&r), expected, "{}", file.display());
        assert_eq!(gates(&r), want_gates, "{}", file.display());
        assert!(r.complete, "{}", file.display());
        // `report diff` matches every sample, and nothing moved.
        let out = evals(
            &dir,
            &url,
            &cli_results,
            &[
                "report",
                "diff",
                attr_file.to_str().unwrap(),
                file.to_str().unwrap(),
                "--json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(d["compared"], 10, "{}: {d}", file.display());
        assert_eq!(d["added"].as_array().map(Vec::len), Some(0));
        assert_eq!(d["removed"].as_array().map(Vec::len), Some(0));
        assert_eq!(d["changes"].as_array().map(Vec::len), Some(0));
        // Paired, every dataset's metric is the same: no change.
        let outcomes: Vec<&str> = d["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["outcome"].as_str().unwrap())
            .collect();
        assert_eq!(outcomes, ["no-change", "no-change", "no-change"], "{d}");
    }

    // Strict CI, one setting for every front end: `--inconclusive fail` for
    // the command, and for `report merge` of the attribute's nextest parts,
    // counts every inconclusive sample and gate as failed, alike.
    let strict_cli = dir.join("out/cli-qa-strict.json");
    let out = evals(
        &dir,
        &url,
        &cli_results,
        &[
            "evaluate",
            "data/qa.jsonl",
            "--metrics",
            "contains",
            "--gate",
            "contains >= 0.5",
            "--repeat",
            "3",
            "--inconclusive",
            "fail",
            "--output",
            strict_cli.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let strict_merged = out_dir.join("attr-merged-strict.json");
    let out = evals(
        &dir,
        &url,
        &cli_results,
        &[
            "report",
            "merge",
            strict_merged.to_str().unwrap(),
            merged_files[0].to_str().unwrap(),
            "--inconclusive",
            "fail",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let (cli, merged) = (read(&strict_cli), read(&strict_merged));
    let qa_only = |r: &Results| {
        verdicts(r)
            .into_iter()
            .filter(|((d, _), _)| d == "qa")
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(qa_only(&cli), qa_only(&merged));
    assert_eq!(
        qa_only(&cli)[&key("qa", "paris")],
        (Verdict::Inconclusive, Some(Verdict::Fail), 3)
    );
    for r in [&cli, &merged] {
        let g = gates(r)[&key("qa", "contains")];
        assert_eq!(
            g,
            (true, false, Some(Decision::Inconclusive), true),
            "strict: missed"
        );
    }

    // `--exact` runs one sample and never judges a gate, pass or fail.
    for (sample, code) in [("qa::paris", 0), ("qa::wrong_city", 101)] {
        let out = command(&harness_exe, &dir, &url, &out_dir.join("exact"))
            .args(["--exact", sample])
            .output()
            .unwrap();
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(code), "{shown}");
        assert!(
            shown.contains("gate qa: gate contains >= 0.5 not judged: 1 of 4 samples ran"),
            "{shown}"
        );
        assert!(
            !shown.contains("gate qa passed") && !shown.contains("gate qa FAILED"),
            "{shown}"
        );
    }
    // A process that did not run every dataset of the previous run (stopped
    // half-way, or filtered) leaves a file that says so; accept and diff
    // refuse it unless told.
    let before = read(&attr_file);
    assert!(before.complete && before.missing_datasets.is_empty());
    let out = command(&attr_exe, &dir, &url, &attr_results)
        .arg("qa::")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let partial = read(&attr_file);
    assert!(!partial.complete, "only `qa` ran");
    assert_eq!(partial.missing_datasets, ["qa_gated", "qa_reported"]);
    let baseline = out_dir.join("baseline.json");
    let report = |args: &[&str]| evals(&dir, &url, &cli_results, args);
    let attr_path = attr_file.to_str().unwrap();
    let out = report(&["report", "accept", attr_path, baseline.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out)
            .contains("holds an incomplete run (dataset(s) `qa_gated`, `qa_reported` did not run)"),
        "{}",
        text(&out)
    );
    assert!(!baseline.exists(), "nothing was accepted");
    let out = report(&["report", "diff", harness_file.to_str().unwrap(), attr_path]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = report(&[
        "report",
        "diff",
        harness_file.to_str().unwrap(),
        attr_path,
        "--partial",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = report(&[
        "report",
        "accept",
        attr_path,
        baseline.to_str().unwrap(),
        "--partial",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The next whole run is complete again.
    let out = command(&attr_exe, &dir, &url, &attr_results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    assert!(read(&attr_file).complete);
    drop(server);
}
