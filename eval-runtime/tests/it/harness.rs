//! The run-time harness, driven in-process with in-process agents.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common;

use eval_runtime::Outcome;
use eval_runtime::results::{Results, Verdict};
use eval_runtime::verdict::{Decision, OnInconclusive};
use eval_runtime::{Harness, Response, Sample};
use libtest_mimic::Arguments;

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-harness-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn args(extra: &[&str]) -> Arguments {
    let mut all = vec!["harness", "--test-threads", "2", "-q"];
    all.extend_from_slice(extra);
    common::harness_args(&all)
}

/// 10 samples; the agent gets the three `wrong` ones wrong.
fn ten() -> String {
    (0..10)
        .map(|i| {
            let q = if i % 3 == 1 {
                format!("wrong {i}")
            } else {
                format!("question {i}")
            };
            let tag = if i < 4 {
                r#", "tags": ["advanced"]"#
            } else {
                ""
            };
            format!("{{\"input\": \"{q}\", \"expected\": \"answer {i}\"{tag}}}\n")
        })
        .collect()
}

async fn answer(sample: &Sample) -> Response {
    let expected = sample.expected_text().unwrap_or_default();
    if sample.input.last().starts_with("wrong") {
        Response::new("something else")
    } else {
        Response::new(format!("the {expected}"))
    }
}

fn read(out: &Outcome) -> Results {
    Results::read(out.results_path.as_ref().expect("a results file")).unwrap()
}

fn harness(dir: &PathBuf) -> Harness {
    Harness::new()
        .base_dir(dir)
        .results_file(dir.join("out/results.json"))
}

#[test]
fn results_file_counts_failures_and_is_written_atomically() {
    let dir = scratch("counts", &[("qa.jsonl", &ten())]);
    let out: Outcome = harness(&dir)
        .dataset("qa.jsonl", "contains, partial_match >= 0.5")
        .agent_fn(answer)
        .evaluate(args(&[]));
    assert_eq!(out.code, 101, "a failing sample fails the run like libtest");
    let results = Results::read(out.results_path.as_ref().unwrap()).unwrap();
    assert_eq!(results.datasets, out.datasets);
    assert_eq!(results.samples.len(), 10);
    let d = &results.datasets[0];
    assert_eq!(
        (d.name.as_str(), d.samples, d.passed, d.failed, d.errors),
        ("qa", 10, 7, 3, 0)
    );
    // contains: 7 of 10. partial_match: "the answer N" vs "answer N" is 1.0 (the
    // article is dropped), "something else" vs "answer N" is 0: mean 0.7.
    assert_eq!(d.metrics[0].name, "contains");
    assert_eq!(d.metrics[0].mean, Some(0.7));
    assert_eq!(d.metrics[0].pass_rate, Some(0.7));
    assert_eq!(d.metrics[1].mean, Some(0.7));
    let bad = results.samples.iter().find(|s| s.id == "1").unwrap();
    assert_eq!(bad.test_name, "qa::wrong_1__advanced__");
    assert_eq!(bad.verdict, Verdict::Fail);
    assert_eq!(bad.source, "qa.jsonl:2");
    assert_eq!(bad.output.as_deref(), Some("something else"));
    assert_eq!(bad.metrics[0].score, Some(0.0));
    assert_eq!(out.results_path.unwrap(), dir.join("out/results.json"));
    let tmp: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(tmp.is_empty(), "no temporary file left");
}

#[test]
fn filters_select_what_is_evaluated() {
    let dir = scratch("filters", &[("qa.jsonl", &ten())]);
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .agent_fn(async move |s: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            answer(s).await
        })
        .evaluate(args(&["advanced", "--skip", "wrong"]));
    // Tagged `advanced`: samples 0..4, minus the `wrong` 1: 0, 2, 3.
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(out.code, 0);
    assert_eq!(read(&out).samples.len(), 3);
}

/// `-- __advanced__` selects the tag `advanced` and nothing else; `--
/// advanced` stays libtest's substring filter (issue 38).
#[test]
fn a_tag_between_double_underscores_is_selected_exactly() {
    let lines = [
        r#"{"id": "tagged", "input": "q1", "expected": "a", "tags": ["advanced"]}"#,
        r#"{"id": "nearly", "input": "q2", "expected": "a", "tags": ["advanced-ish"]}"#,
        r#"{"input": "Advanced question", "expected": "a"}"#,
        r#"{"input": "__advanced__ spelled out", "expected": "a", "tags": ["basics"]}"#,
        r#"{"input": "type", "expected": "a", "tags": ["advanced", "slow"]}"#,
    ];
    let dir = scratch("tags", &[("qa.jsonl", &lines.join("\n"))]);
    let run = |filter: &[&str]| {
        let out = harness(&dir)
            .dataset("qa.jsonl", "contains")
            .agent_fn(answer)
            .evaluate(args(filter));
        let mut names: Vec<String> = read(&out)
            .samples
            .into_iter()
            .map(|s| s.test_name)
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        run(&["__advanced__"]),
        ["qa::tagged__advanced__", "qa::type___advanced__slow__"]
    );
    assert_eq!(
        run(&["__advanced__", "--skip", "__slow__"]),
        ["qa::tagged__advanced__"]
    );
    // The substring filter also takes the near tag and the input.
    assert_eq!(run(&["advanced"]).len(), 5);
}

#[test]
fn an_exact_name_that_matches_nothing_is_an_error() {
    let dir = scratch("exact", &[("qa.jsonl", &ten())]);
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .agent_fn(answer)
        .evaluate(args(&["--exact", "qa::question_99"]));
    assert_eq!(out.code, 2);
    assert!(
        out.error
            .unwrap()
            .to_string()
            .contains("no sample is named `qa::question_99`")
    );

    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .agent_fn(answer)
        .evaluate(args(&["--exact", "qa::question_0__advanced__"]));
    assert_eq!(out.code, 0);
    assert_eq!(read(&out).samples.len(), 1);
    // The first (full) load left a name index beside the results, which
    // `--exact` runs use instead of parsing the whole file.
    let indexes = std::fs::read_dir(dir.join("out/index")).unwrap().count();
    assert_eq!(indexes, 1);
}

#[test]
fn gates_on_means_exit_with_1() {
    let dir = scratch("gates", &[("qa.jsonl", &ten())]);
    // Every sample passes on its own; the gate on the mean does not.
    let out = harness(&dir)
        .dataset("qa.jsonl", "partial_match >= 0.5")
        .gate("partial_match >= 0.99")
        .agent_fn(async |s: &Sample| {
            Response::new(format!("{} and more words", s.expected_text().unwrap()))
        })
        .evaluate(args(&[]));
    assert_eq!(out.code, 1);
    let failed = eval_runtime::__cli::results::failed_gates(&out.datasets);
    assert_eq!(failed.len(), 1);
    // [answer, N, and, more, words] vs [answer, N]: P = 2/5, R = 1, F1 = 4/7.
    let gate = failed[0].1;
    assert!((gate.margin.unwrap() - (4.0 / 7.0 - 0.99)).abs() < 1e-12);

    // agentspec's ciGate: thresholds gate the means; samples do not fail alone.
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains >= 0.75")
        .ci_gate(true)
        .agent_fn(answer)
        .evaluate(args(&[]));
    assert_eq!(out.code, 1, "mean contains 0.7 < 0.75");
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains >= 0.6")
        .ci_gate(true)
        .agent_fn(answer)
        .evaluate(args(&[]));
    assert_eq!(
        out.code, 0,
        "mean contains 0.7 >= 0.6, though 3 samples scored 0"
    );
}

#[test]
fn a_panicking_agent_fails_only_its_sample() {
    let dir = scratch("panic", &[("qa.jsonl", &ten())]);
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .agent_fn(async |s: &Sample| {
            if s.input.last() == "question 3" {
                panic!("boom in the agent");
            }
            answer(s).await
        })
        .evaluate(args(&["--skip", "wrong"]));
    let results = read(&out);
    let d = &results.datasets[0];
    assert_eq!((d.passed, d.errors), (6, 1));
    let s = results
        .samples
        .iter()
        .find(|s| s.verdict == Verdict::Error)
        .unwrap();
    assert_eq!(
        s.error.as_deref(),
        Some("agent error: the agent panicked: boom in the agent")
    );
}

#[test]
fn samples_run_concurrently_up_to_the_limit() {
    let lines: String = (0..32)
        .map(|i| format!("{{\"input\": \"q{i}\", \"expected\": \"a\"}}\n"))
        .collect();
    let dir = scratch("concurrency", &[("many.jsonl", &lines)]);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (f, p) = (in_flight.clone(), peak.clone());
    let out = harness(&dir)
        .dataset("many.jsonl", "contains")
        .concurrency(8)
        .agent_fn(async move |_: &Sample| {
            let now = f.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            f.fetch_sub(1, Ordering::SeqCst);
            Response::new("a")
        })
        .evaluate(args(&[]));
    assert_eq!(out.code, 0);
    // With 2 test threads, one sample per thread would peak at 2.
    assert_eq!(
        peak.load(Ordering::SeqCst),
        8,
        "exactly the limit in flight"
    );
}

#[test]
fn bad_setup_is_a_clear_error() {
    let dir = scratch("bad", &[("bad.jsonl", "{\"input\": \"a\"}\n{oops}\n")]);
    let out = harness(&dir)
        .dataset("bad.jsonl", "contains")
        .dataset("missing/*.jsonl", "contains")
        .dataset("bad.jsonl", "contans")
        .agent_fn(answer)
        .evaluate(args(&[]));
    assert_eq!(out.code, 2);
    let err = out.error.unwrap().to_string();
    assert!(
        err.contains("bad.jsonl:2:2: invalid JSON: key must be a string"),
        "{err}"
    );
    assert!(
        err.contains(
            "`missing/*.jsonl`: no such file, and read as a pattern it matches no dataset file"
        ),
        "{err}"
    );
    assert!(err.contains("unknown metric `contans`"), "{err}");
}

#[test]
fn a_stale_index_is_noticed() {
    let dir = scratch(
        "stale",
        &[(
            "qa.jsonl",
            "{\"input\": \"France\", \"expected\": \"Paris\"}\n",
        )],
    );
    let file = dir.join("qa.jsonl");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let run = |extra: &[&str]| {
        harness(&dir)
            .dataset("qa.jsonl", "contains")
            .agent_fn(async |_: &Sample| Response::new("Paris"))
            .evaluate(args(extra))
    };
    assert_eq!(run(&[]).code, 0, "the full run writes the index");
    assert_eq!(run(&["--exact", "qa::france"]).code, 0);
    // Same length, same modification time, other content.
    std::fs::write(&file, "{\"input\": \"Franze\", \"expected\": \"Paris\"}\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let out = run(&["--exact", "qa::france"]);
    assert_eq!(out.code, 2, "the old name is gone");
    assert!(
        out.error
            .unwrap()
            .to_string()
            .contains("no sample is named `qa::france`")
    );
    assert_eq!(run(&["--exact", "qa::franze"]).code, 0);
}

#[test]
fn exact_names_of_other_tests_and_gates_before_datasets() {
    let dir = scratch("other", &[("qa.jsonl", &ten())]);
    // `cargo test -- --exact some_unit_test` reaches every test binary.
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .agent_fn(answer)
        .evaluate(args(&["--exact", "some_unit_test"]));
    assert_eq!(out.code, 0);
    assert!(
        out.results_path.is_none(),
        "nothing ran: no results file written"
    );

    let out = harness(&dir)
        .gate("contains >= 0.5")
        .dataset("qa.jsonl", "contains")
        .agent_fn(answer)
        .evaluate(args(&[]));
    assert_eq!(out.code, 2);
    assert!(
        out.error
            .unwrap()
            .to_string()
            .contains("comes before any dataset")
    );
}

#[test]
fn gates_wait_for_the_whole_dataset_and_count_errors() {
    let dir = scratch("partial", &[("qa.jsonl", &ten())]);
    let gated = || {
        harness(&dir)
            .dataset("qa.jsonl", "contains >= 0.5")
            .gate("contains >= 0.9")
    };
    // Only part of the dataset ran: the gate is not judged, and says so.
    let out = gated().agent_fn(answer).evaluate(args(&["question"]));
    assert_eq!(out.code, 0);
    let gate = out.datasets[0].metrics[0].gate.as_ref().unwrap();
    assert!(!gate.judged && !gate.passed);
    assert_eq!(
        gate.to_string(),
        "gate contains >= 0.9 not judged: 7 of 10 samples ran (gates judge whole datasets only)"
    );
    assert!(out.verdict.missed_gates.is_empty());
    // An agent error fails the gate even when every scored sample is perfect.
    let out = gated()
        .agent_fn(async |s: &Sample| {
            if s.input.last() == "question 0" {
                Err("down".to_string())
            } else {
                Ok(Response::new(s.expected_text().unwrap().to_string()))
            }
        })
        .evaluate(args(&[]));
    assert_eq!(out.code, 101);
    let gate = out.datasets[0].metrics[0].gate.as_ref().unwrap();
    assert!(
        (gate.margin.unwrap() - 0.1).abs() < 1e-12,
        "mean 1.0 over the 9 scored"
    );
    assert!(!gate.passed);
    assert_eq!(
        gate.to_string(),
        "mean(contains) >= 0.9 missed: 1 of 10 samples not scored (counted as not passed); mean of the 9 scored = 1.0000"
    );
}

#[test]
fn harness_concurrency_is_the_cap_across_datasets() {
    let lines: String = (0..12)
        .map(|i| format!("{{\"input\": \"q{i}\", \"expected\": \"a\"}}\n"))
        .collect();
    let dir = scratch(
        "cap",
        &[
            ("a.jsonl", &lines),
            ("b.jsonl", &lines),
            ("c.jsonl", &lines),
        ],
    );
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (f, p) = (in_flight.clone(), peak.clone());
    let out = harness(&dir)
        .dataset("*.jsonl", "contains")
        .concurrency(4)
        .agent_fn(async move |_: &Sample| {
            let now = f.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            f.fetch_sub(1, Ordering::SeqCst);
            Response::new("a")
        })
        .evaluate(args(&[]));
    assert_eq!(out.code, 0);
    assert_eq!(out.datasets.len(), 3);
    assert_eq!(peak.load(Ordering::SeqCst), 4);
}

#[test]
fn repeat_scores_the_mean_and_calls_a_straddling_interval_inconclusive() {
    let dir = scratch(
        "repeat",
        &[("qa.jsonl", "{\"input\": \"q\", \"expected\": \"yes\"}\n")],
    );
    // Right on runs 1 and 3, wrong on run 2: contains = 1, 0, 1.
    let run = |on: Option<OnInconclusive>| {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let mut h = harness(&dir)
            .dataset("qa.jsonl", "contains >= 0.5")
            .repeat(3)
            .agent_fn(async move |_: &Sample| {
                let n = counted.fetch_add(1, Ordering::SeqCst);
                Response::new(if n % 3 == 1 { "no" } else { "yes" })
            });
        if let Some(on) = on {
            h = h.inconclusive(on);
        }
        let out = h.evaluate(args(&[]));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        out
    };
    let out = run(None);
    assert_eq!(
        out.code, 0,
        "the point estimate 2/3 >= 0.5 decides by default"
    );
    let results = read(&out);
    let s = &results.samples[0];
    assert_eq!(s.verdict, Verdict::Inconclusive);
    assert_eq!(s.counted_as, Some(Verdict::Pass));
    let m = &s.metrics[0];
    assert!((m.score.unwrap() - 2.0 / 3.0).abs() < 1e-12);
    let spread = m.spread.unwrap();
    // A pass rate: Clopper–Pearson's interval of 2 of 3 (statsmodels
    // 0.15.0 `proportion_confint(2, 3, method="beta")`).
    assert_eq!(spread.runs, 3);
    assert!((spread.low - 0.094299).abs() < 1e-5, "{spread:?}");
    assert!((spread.high - 0.991596).abs() < 1e-5, "{spread:?}");
    assert!(spread.straddles);
    assert_eq!(spread.decision, Some(Decision::Inconclusive));
    assert_eq!(results.datasets[0].inconclusive, 1);
    // Strict: only a proven pass passes, so the sample's test fails.
    let strict = run(Some(OnInconclusive::Fail));
    assert_eq!(strict.code, 101);
    let results = read(&strict);
    assert_eq!(results.samples[0].counted_as, Some(Verdict::Fail));
    assert_eq!(results.datasets[0].on_inconclusive, OnInconclusive::Fail);
    assert_eq!(run(Some(OnInconclusive::Pass)).code, 0);
}

#[test]
fn a_clustered_gate_knows_its_samples_are_not_independent() {
    // Six samples of two documents: the agent gets every question about
    // document a right and every one about b wrong. Unclustered, mean 0.5
    // over six values is a pass rate, Clopper–Pearson's [0.1181, 0.8819]
    // (statsmodels `proportion_confint(3, 6, method="beta")`): above 0.1.
    // Clustered by document, two clusters whose residuals sum to ±1.5:
    // CR1 SE² = 2/(2 − 1) · (1.5² + 1.5²) / 6² = 0.25, on 1 degree of
    // freedom: 0.5 ± 12.706 · 0.5, cut to [0, 1]: it straddles 0.1.
    let data: String = (0..6)
        .map(|i| {
            let doc = if i < 3 { "a" } else { "b" };
            format!(
                "{{\"id\": \"q{i}\", \"input\": \"{doc}\", \"expected\": \"yes\", \"metadata\": {{\"doc\": \"{doc}\"}}}}\n"
            )
        })
        .collect();
    let dir = scratch("cluster", &[("qa.jsonl", data.as_str())]);
    let run = |clustered: bool| {
        let mut h = harness(&dir)
            .dataset("qa.jsonl", "contains")
            .gate("contains >= 0.1");
        if clustered {
            h = h.cluster_by("doc");
        }
        let out = h
            .agent_fn(async |s: &Sample| {
                Response::new(if s.input.last() == "a" { "yes" } else { "no" })
            })
            .evaluate(args(&[]));
        read(&out).datasets[0].metrics[0].gate.clone().unwrap()
    };
    let plain = run(false);
    assert_eq!(plain.decision, Some(Decision::Pass));
    assert_eq!(
        plain.method,
        Some(eval_runtime::__cli::verdict::Method::ClopperPearson)
    );
    let i = plain.interval.unwrap();
    assert!((i.low - 0.118_117).abs() < 1e-5, "{i:?}");
    let clustered = run(true);
    assert_eq!(clustered.decision, Some(Decision::Inconclusive));
    assert_eq!(
        clustered.method,
        Some(eval_runtime::__cli::verdict::Method::TClustered)
    );
    assert_eq!(
        clustered.interval.map(|i| (i.low, i.high)),
        Some((0.0, 1.0))
    );
    assert!(
        clustered.passed,
        "the point estimate 0.5 meets 0.1 by default"
    );
    let r = Results::read(&dir.join("out/results.json")).unwrap();
    assert_eq!(r.datasets[0].cluster_by.as_deref(), Some("doc"));
    assert_eq!(r.samples[0].cluster.as_deref(), Some("a"));
}

#[test]
fn repeat_auto_adds_runs_only_where_the_verdict_is_in_doubt() {
    // Three samples: one always answered right, one always wrong, one
    // right every other run. partial_match is a score in 0..1 (the betting
    // interval): three runs that agree prove no more than 0.27, so a score
    // that does not vary is decided at the second look (6 runs: 0.51 against
    // 0.5); the alternating one stays in doubt up to the maximum.
    let data = "{\"id\": \"sure\", \"input\": \"a\", \"expected\": \"paris\"}\n{\"id\": \"wrong\", \"input\": \"b\", \"expected\": \"paris\"}\n{\"id\": \"coin\", \"input\": \"c\", \"expected\": \"paris\"}\n";
    let dir = scratch("repeat-auto", &[("qa.jsonl", data)]);
    let calls = Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<
        String,
        usize,
    >::new()));
    let counted = calls.clone();
    let out = harness(&dir)
        .dataset("qa.jsonl", "partial_match >= 0.5")
        .repeat(eval_runtime::Repeat::Auto { max: 10 })
        .agent_fn(async move |s: &Sample| {
            let mut calls = counted.lock().unwrap();
            let n = calls.entry(s.id.clone()).or_default();
            *n += 1;
            Response::new(match s.id.as_str() {
                "sure" => "paris",
                "wrong" => "berlin",
                _ if n.is_multiple_of(2) => "paris",
                _ => "berlin",
            })
        })
        .evaluate(args(&[]));
    let calls = calls.lock().unwrap().clone();
    assert_eq!(calls["sure"], 6, "decided at the second look");
    assert_eq!(calls["wrong"], 6, "decided at the second look");
    assert_eq!(calls["coin"], 10, "in doubt to the maximum: {calls:?}");
    let results = read(&out);
    let by_id = |id: &str| results.samples.iter().find(|s| s.id == id).unwrap();
    assert_eq!(by_id("sure").verdict, Verdict::Pass);
    assert_eq!(by_id("wrong").verdict, Verdict::Fail);
    let coin = by_id("coin");
    assert_eq!(coin.verdict, Verdict::Inconclusive);
    assert_eq!(coin.runs, 10);
    // Looks after 3, 6 and 10 runs, all at 95%: the betting interval
    // holds at every look at once.
    let spread = coin.metrics[0].spread.unwrap();
    assert_eq!(spread.level, 0.95);
    assert_eq!(
        spread.method,
        Some(eval_runtime::__cli::verdict::Method::Betting)
    );
    assert_eq!(out.code, 101, "`wrong` fails");
}

#[test]
fn a_judged_run_records_usage_and_never_writes_the_key() {
    const KEY: &str = "sk-e2e-SUPER-SECRET-42";
    let dataset = "{\"input\": \"What is Paris?\", \"expected\": \"capital\", \"context\": [\"Paris is the capital of France.\"]}\n";
    let dir = scratch("judged", &[("qa.jsonl", dataset)]);
    // A judge that first throttles, then answers; a second judge that
    // rejects the key and echoes it back.
    let good = common::serve_detached(|n, _, body| {
        if n == 1 {
            return common::Reply::With(429, vec!["retry-after: 0".into()], "{}".into());
        }
        common::Reply::json(
            200,
            common::chat(if common::task(body) == "faithfulness" {
                r#"{"statements": ["Paris is the capital of France."], "verdicts": [1]}"#
            } else {
                r#"{"verdicts": [1]}"#
            }),
        )
    });
    let echo = common::serve_detached(|_, head, _| {
        let auth = head
            .lines()
            .find(|l| l.starts_with("authorization"))
            .unwrap_or("")
            .to_string();
        common::Reply::json(401, format!("bad key {auth}"))
    });
    let run = |url: &str| {
        harness(&dir)
            .dataset("qa.jsonl", "contains, faithfulness >= 0.9")
            .judge(
                eval_runtime::services::Judge::new(url, "j")
                    .unwrap()
                    .api_key(Some(KEY.into()))
                    .cache(None),
            )
            .agent_fn(async |_: &Sample| Response::new("Paris is the capital of France."))
            .evaluate(args(&[]))
    };
    let out = run(&good.url);
    assert_eq!(out.code, 0);
    let results = read(&out);
    let sample = &results.samples[0];
    assert_eq!(sample.metrics[1].score, Some(1.0));
    // faithfulness asks one question (statements and verdicts together).
    assert_eq!((sample.usage.calls, sample.usage.retries), (2, 1));

    let out = run(&echo.url);
    assert_eq!(out.code, 101);
    let text = std::fs::read_to_string(out.results_path.as_ref().unwrap()).unwrap();
    assert!(
        text.contains("HTTP 401") && text.contains("<redacted>"),
        "{text}"
    );
    assert!(
        !text.contains("SUPER-SECRET"),
        "the key leaked into the results file"
    );
}

#[test]
fn an_agentspec_manifest_drives_metrics_gates_and_repeat() {
    let manifest = "spec:\n  evaluation:\n    datasets:\n      - name: qa-set\n        path: $file:data/qa.jsonl\n        metrics: [contains, partial_match]\n    thresholds:\n      contains: 0.75\n    ciGate: true\n    repeat: 2\n";
    let dir = scratch("manifest", &[("agent.yaml", manifest)]);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/qa.jsonl"), ten()).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let out = harness(&dir)
        .manifest("agent.yaml")
        .agent_fn(move |s: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            let s = s.clone();
            async move { answer(&s).await }
        })
        .evaluate(args(&[]));
    // ciGate: mean contains 0.7 misses 0.75 -> exit 1, though no sample fails alone.
    assert_eq!(out.code, 1);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        20,
        "repeat: 2 from the manifest"
    );
    let results = read(&out);
    assert_eq!(results.datasets[0].name, "qa_set");
    assert!(results.samples[0].test_name.starts_with("qa_set::"));
    let failed = eval_runtime::__cli::results::failed_gates(&out.datasets);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].0, "qa_set");
    assert!(
        failed[0].1.to_string().contains("mean contains = 0.7000"),
        "{}",
        failed[0].1
    );

    // The builder's repeat wins over the manifest's; one dataset by name.
    calls.store(0, Ordering::SeqCst);
    let counted = calls.clone();
    let out = harness(&dir)
        .manifest_dataset("agent.yaml", "qa-set")
        .repeat(1)
        .agent_fn(move |s: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            let s = s.clone();
            async move { answer(&s).await }
        })
        .evaluate(args(&[]));
    assert_eq!(out.code, 1);
    assert_eq!(calls.load(Ordering::SeqCst), 10);

    let out = harness(&dir)
        .manifest_dataset("agent.yaml", "nope")
        .agent_fn(answer)
        .evaluate(args(&[]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.error.unwrap().to_string(),
        "agent.yaml: no dataset named `nope`; the manifest has: qa-set"
    );
}

#[test]
fn a_manifest_metric_without_its_fields_is_rejected_before_any_agent_call() {
    let manifest = "spec:\n  evaluation:\n    datasets:\n      - name: rag\n        path: qa.jsonl\n        metrics: [faithfulness, context_recall]\n";
    let dir = scratch(
        "manifest-fields",
        &[("agent.yaml", manifest), ("qa.jsonl", &ten())],
    );
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let out = harness(&dir)
        .manifest("agent.yaml")
        .agent_fn(move |s: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            let s = s.clone();
            async move { answer(&s).await }
        })
        .evaluate(args(&[]));
    assert_eq!(out.code, 2);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = out.error.unwrap().to_string();
    assert_eq!(error.lines().count(), 10, "one line per sample: {error}");
    assert!(error.starts_with("qa.jsonl:1: field `context`: dataset `rag` (agent.yaml:4) is scored with `faithfulness`, which needs `context`"), "{error}");
}

#[test]
fn a_rubric_file_is_read_once_when_the_plan_loads() {
    let dataset = "{\"input\": \"Name a colour\", \"expected\": \"blue\"}\n{\"input\": \"Name a fruit\", \"expected\": \"pear\"}\n";
    let dir = scratch(
        "rubric",
        &[
            ("qa.jsonl", dataset),
            (
                "rubric.txt",
                "Score 1 when the answer names a COLOUR-OR-FRUIT.",
            ),
        ],
    );
    let judge = common::serve_detached(|_, _, body| {
        let user = body["messages"][1]["content"].as_str().unwrap_or("");
        assert!(
            user.contains("COLOUR-OR-FRUIT"),
            "the rubric reached the judge: {user}"
        );
        common::Reply::json(200, common::chat(r#"{"score": 1.0, "rationale": "fine"}"#))
    });
    let calls = Arc::new(AtomicUsize::new(0));
    let run = |rubric: &str| {
        let counted = calls.clone();
        let file = dir.join("rubric.txt");
        harness(&dir)
            .dataset(
                "qa.jsonl",
                &format!("rubric(rubric_file = \"{rubric}\") >= 0.5"),
            )
            .judge(
                eval_runtime::services::Judge::new(&judge.url, "j")
                    .unwrap()
                    .cache(None),
            )
            .agent_fn(move |s: &Sample| {
                counted.fetch_add(1, Ordering::SeqCst);
                // Gone once the samples run: it was read when the plan loaded.
                let _ = std::fs::remove_file(&file);
                let answer = s.expected_text().unwrap_or_default().to_string();
                async move { Response::new(answer) }
            })
            .evaluate(args(&[]))
    };
    let out = run("rubric.txt");
    assert_eq!(out.code, 0, "{:?}", out.error);
    assert_eq!(judge.count(), 2, "one judge call per sample");
    // Missing when the plan loads: an error before any agent call, naming the file.
    let out = run("nope.txt");
    assert_eq!(out.code, 2);
    let error = out.error.unwrap().to_string();
    assert!(
        error.contains("rubric_file `nope.txt` of metric `rubric`: cannot read"),
        "{error}"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "no agent call for the bad plan"
    );
}

#[test]
fn the_settings_timeout_applies_unless_the_harness_sets_its_own() {
    let dir = scratch(
        "timeout",
        &[("qa.jsonl", "{\"input\": \"slow\", \"expected\": \"x\"}\n")],
    );
    let config = eval_runtime::Config::from_vars(
        |name| Ok((name == "EVAL_SAMPLE_TIMEOUT_SECS").then(|| "0.2".to_string())),
        &[],
    )
    .unwrap();
    let slow = async |_: &Sample| {
        tokio::time::sleep(Duration::from_millis(800)).await;
        Response::new("x")
    };
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .config(config.clone())
        .agent_fn(slow)
        .evaluate(args(&[]));
    assert_eq!(out.code, 101);
    assert_eq!(
        read(&out).samples[0].error.as_deref(),
        Some("agent error: no answer within 0.2s (sample timeout)")
    );
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .config(config)
        .timeout(Duration::from_secs(5))
        .agent_fn(slow)
        .evaluate(args(&[]));
    assert_eq!(out.code, 0, "the harness's own timeout wins");
}

#[test]
fn under_ci_gate_a_metric_without_a_score_fails_its_sample_and_the_gate() {
    // The second sample's expected answer is not a valid regex: `regex`
    // cannot score it.
    let dataset =
        "{\"input\": \"a\", \"expected\": \"a\"}\n{\"input\": \"b\", \"expected\": \"(\"}\n";
    let dir = scratch("unscored", &[("qa.jsonl", dataset)]);
    let out = harness(&dir)
        .dataset("qa.jsonl", "regex >= 0.5")
        .ci_gate(true)
        .agent_fn(async |s: &Sample| Response::new(s.input.last().to_string()))
        .evaluate(args(&[]));
    assert_eq!(out.code, 101, "the unscored sample fails, ciGate or not");
    let results = read(&out);
    assert_eq!(results.samples[1].verdict, Verdict::Error);
    let gate = out.datasets[0].metrics[0].gate.as_ref().unwrap();
    assert!(gate.judged && !gate.passed, "{gate}");
    assert_eq!(gate.unscored, 1);
}

#[test]
fn a_panic_in_an_agent_call_fails_its_sample_and_the_evaluation_goes_on() {
    struct Explosive;
    impl eval_runtime::Agent for Explosive {
        fn respond<'a>(
            &'a self,
            sample: &'a Sample,
        ) -> eval_runtime::BoxFuture<'a, Result<Response, eval_runtime::AgentError>> {
            // Panics before any future exists.
            assert!(sample.input.last() != "boom", "boom before the future");
            let answer = Response::new(sample.expected_text().unwrap_or_default().to_string());
            Box::pin(async move { Ok(answer) })
        }
    }
    let dataset = "{\"input\": \"a\", \"expected\": \"x\"}\n{\"input\": \"boom\", \"expected\": \"x\"}\n{\"input\": \"c\", \"expected\": \"x\"}\n";
    let dir = scratch("explosive", &[("qa.jsonl", dataset)]);
    let out = harness(&dir)
        .dataset("qa.jsonl", "contains")
        .agent(Explosive)
        .evaluate(args(&[]));
    assert_eq!(out.code, 101);
    let results = read(&out);
    let verdicts: Vec<Verdict> = results.samples.iter().map(|s| s.verdict).collect();
    assert_eq!(results.samples.len(), 3);
    assert_eq!(verdicts.iter().filter(|v| **v == Verdict::Pass).count(), 2);
    let boom = results.samples.iter().find(|s| s.id == "1").unwrap();
    assert!(
        boom.error
            .as_deref()
            .unwrap()
            .contains("the agent panicked: boom before the future"),
        "{boom:?}"
    );
}

#[test]
fn a_run_that_skipped_a_dataset_is_incomplete_and_never_becomes_the_baseline() {
    let dir = scratch(
        "incomplete",
        &[
            ("qa.jsonl", &ten()),
            (
                "one.jsonl",
                "{\"input\": \"solo\", \"expected\": \"solo\"}\n",
            ),
        ],
    );
    let baseline = dir.join("baseline.json");
    let run = |filter: &[&str]| {
        harness(&dir)
            .dataset("qa.jsonl", "contains >= 0.0")
            .dataset("one.jsonl", "contains")
            .baseline(&baseline, 0.0)
            .agent_fn(answer)
            .evaluate(args(filter))
    };
    let out = run(&["one::"]);
    assert_eq!(out.code, 0);
    assert!(!read(&out).complete, "qa did not run");
    assert!(!baseline.exists(), "a partial run is not a baseline");
    let out = run(&[]);
    assert_eq!(out.code, 0);
    assert!(read(&out).complete);
    assert!(baseline.exists(), "the first whole run is");
}

#[test]
fn nextest_processes_leave_gates_to_the_merge_and_own_metrics_never_take_the_index_shortcut() {
    // A runevals document whose items name different evaluators; ciGate
    // makes each evaluator a gate, which only the whole document knows.
    let doc = r#"{"schemaVersion": "1.6.0", "items": [
  {"testId": "alpha", "prompt": "a", "expected_response": "x", "evaluators": {"ExactMatch": {}}},
  {"testId": "beta", "prompt": "b", "expected_response": "x", "evaluators": {"PartialMatch": {}}}
]}"#;
    let dir = scratch(
        "nextest",
        &[
            ("rv.json", doc),
            ("solo.jsonl", "{\"input\": \"s\", \"expected\": \"s\"}\n"),
        ],
    );
    let results = dir.join("results");
    let nextest = |run: &str| {
        let results = results.to_string_lossy().into_owned();
        let run = run.to_string();
        eval_runtime::Config::from_vars(
            move |name| {
                Ok(match name {
                    "NEXTEST" => Some("1".into()),
                    "NEXTEST_RUN_ID" => Some(run.clone()),
                    "EVAL_RESULTS_DIR" => Some(results.clone()),
                    _ => None,
                })
            },
            &[],
        )
        .unwrap()
    };
    let harness = || {
        Harness::new()
            .base_dir(&dir)
            .dataset("rv.json", "")
            .dataset("solo.jsonl", "contains >= 0.0")
            .gate("contains >= 0.9")
            .ci_gate(true)
            .agent_fn(async |s: &Sample| {
                Response::new(if s.input.last() == "s" { "no" } else { "x" })
            })
    };
    // Full load first (writes the index), then one process per test.
    let listed = harness().config(nextest("r1")).evaluate(args(&["--list"]));
    assert_eq!(listed.code, 0);
    for name in ["rv::alpha", "rv::beta", "solo::s"] {
        let out = harness()
            .config(nextest("r1"))
            .evaluate(args(&["--exact", name]));
        assert_eq!(
            out.code, 0,
            "{name}: the sample passes; its gate is the merge's: {:?}",
            out.error
        );
    }
    let parts = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".parts"))
        .map(|e| e.path())
        .expect("a parts directory");
    let merged =
        eval_runtime::__cli::results::merge_dir(&parts).expect("the parts agree on their gates");
    assert!(merged.complete);
    let failed: Vec<String> = merged
        .failed_gates()
        .iter()
        .map(|(d, g)| format!("{d}:{}", g.gate.metric))
        .collect();
    assert_eq!(
        failed,
        ["solo:contains"],
        "the one-sample dataset's gate, judged by the merge"
    );
    let rv = merged.datasets.iter().find(|d| d.name == "rv").unwrap();
    assert_eq!(
        rv.gates.len(),
        2,
        "both evaluators gate the whole document: {:?}",
        rv.gates
    );
}

/// Seed 003's complete schema example (a fixture of the repository): in the
/// "Expense policy flow" turn 1 inherits Relevance and Coherence and turn 2
/// (`replace`) runs only ExactMatch — each on its own turn's answer, named
/// for the turn; ExactMatch passes when the answer contains the expected
/// string, whatever its case.
#[test]
fn a_conversations_evaluators_score_their_own_turn() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/seeds/003-complete-schema-example.json"),
    )
    .unwrap();
    let dir = scratch("per-turn", &[("seed.json", &doc)]);
    let judge = common::serve_detached(|_, _, _| {
        common::Reply::json(200, common::chat(r#"{"rating": 4, "reason": "ok"}"#))
    });
    let run = |second: &'static str| {
        harness(&dir)
            .dataset("seed.json", "")
            .gate("contains@turn2 >= 1.0")
            .judge(
                eval_runtime::services::Judge::new(&judge.url, "j")
                    .unwrap()
                    .cache(None),
            )
            .agent_fn(async move |s: &Sample| {
                if s.input.turns().len() == 2 {
                    Response::new("").with_turn_outputs([
                        "Dinner is over the $200 per-diem meal allowance.",
                        second,
                    ])
                } else {
                    Response::new("Microsoft Graph is a unified API endpoint [1].")
                }
            })
            .evaluate(args(&[]))
    };
    let out = run("For the $50 overage you should REQUEST MANAGER APPROVAL.");
    assert_eq!(out.code, 0, "{:?}", out.error);
    let results = read(&out);
    let metrics = |i: usize| -> Vec<(String, Option<f64>)> {
        results.samples[i]
            .metrics
            .iter()
            .map(|m| (m.name.clone(), m.score))
            .collect()
    };
    let flow = results
        .samples
        .iter()
        .position(|s| s.metrics.iter().any(|m| m.name.contains("@turn")))
        .expect("the conversation");
    assert_eq!(
        metrics(flow),
        [
            ("relevance@turn1".to_string(), Some(0.75)),
            ("coherence@turn1".to_string(), Some(0.75)),
            ("contains@turn2".to_string(), Some(1.0)),
        ]
    );
    assert_eq!(
        metrics(1 - flow),
        [
            ("relevance".to_string(), Some(0.75)),
            ("coherence".to_string(), Some(0.75)),
            ("citations".to_string(), Some(1.0)),
        ]
    );
    // The judge saw turn 1 (its question, its answer), never turn 2.
    let asked: Vec<Vec<(String, String)>> = judge
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| common::data_blocks(body))
        .filter(|blocks| blocks.iter().any(|(_, c)| c.contains("$250")))
        .collect();
    assert_eq!(
        asked.len(),
        2,
        "relevance and coherence of turn 1: {asked:?}"
    );
    for blocks in &asked {
        assert_eq!(
            blocks[..],
            [
                (
                    "question".to_string(),
                    "I spent $250 on dinner. Is that okay?".to_string()
                ),
                (
                    "answer".to_string(),
                    "Dinner is over the $200 per-diem meal allowance.".to_string()
                ),
            ],
            "{blocks:?}"
        );
    }
    let summary: Vec<&str> = results.datasets[0]
        .metrics
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert!(summary.contains(&"contains@turn2"), "{summary:?}");
    // A gate names a turn's metric the same way.
    let gate = results.datasets[0]
        .metrics
        .iter()
        .find_map(|m| m.gate.as_ref())
        .expect("the gate");
    assert_eq!(gate.gate.metric, "contains@turn2");
    assert!(gate.judged && gate.passed);
    // Turn 2 without the expected string fails the conversation on turn 2.
    let out = run("Ask your manager.");
    assert_eq!(out.code, 101);
    let results = read(&out);
    let failed: Vec<&str> = results
        .samples
        .iter()
        .flat_map(|s| s.metrics.iter())
        .filter(|m| !m.passed)
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(failed, ["contains@turn2"]);
}

/// A manifest's `spec.evaluation.agent` reaches an `HttpAgent` given to the
/// harness as it reaches `evals evaluate`'s (one rule,
/// `HttpAgent::under_plan`): what the agent's code chose wins, the manifest
/// fills the rest.
#[test]
fn the_manifests_agent_block_applies_to_an_http_agent_under_what_code_chose() {
    let manifest = "spec:\n  evaluation:\n    datasets:\n      - name: qa\n        path: qa.jsonl\n        metrics: [contains]\n    agent:\n      protocol: openai\n      model: from-manifest\n";
    let dir = scratch(
        "manifest-agent",
        &[
            ("agent.yaml", manifest),
            (
                "qa.jsonl",
                "{\"input\": \"Capital of France?\", \"expected\": \"Paris\"}\n",
            ),
        ],
    );
    let server = common::serve_detached(|_, _, _| common::Reply::json(200, common::chat("Paris")));
    // The URL's path implies the JSON contract: only the manifest says OpenAI.
    let url = format!("{}/agent", server.url);
    let run = |agent: eval_runtime::HttpAgent| {
        let before = server.count();
        let out = harness(&dir)
            .manifest("agent.yaml")
            .agent(agent)
            .evaluate(args(&[]));
        let requests = server.requests.lock().unwrap();
        assert_eq!(requests.len(), before + 1);
        (out.code, requests[before].1.clone())
    };
    let (code, body) = run(eval_runtime::HttpAgent::new(&url).unwrap());
    assert_eq!(code, 0, "{body}");
    assert_eq!(body["model"], "from-manifest", "{body}");
    assert!(
        body["messages"].is_array() && body.get("input").is_none(),
        "{body}"
    );
    // The model chosen in code wins over the manifest's; the protocol still comes from it.
    let (code, body) = run(eval_runtime::HttpAgent::new(&url).unwrap().model("mine"));
    assert_eq!(code, 0, "{body}");
    assert_eq!(body["model"], "mine", "{body}");
    // The protocol chosen in code wins too: a JSON-contract body, no model.
    let (_, body) = run(eval_runtime::HttpAgent::new(&url)
        .unwrap()
        .protocol(eval_runtime::Protocol::Json));
    assert_eq!(body["input"], "Capital of France?", "{body}");
    assert!(body.get("model").is_none(), "{body}");
}

/// A judge on loopback that answers every rubric question after `delay`,
/// counting the calls in flight at once: returns its URL and the peak.
fn slow_judge(delay: Duration) -> (String, Arc<AtomicUsize>) {
    let peak = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let seen = peak.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            let in_flight = Arc::new(AtomicUsize::new(0));
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let (in_flight, peak) = (in_flight.clone(), seen.clone());
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    while common::read_request(&mut stream).await.is_some() {
                        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(delay).await;
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        let body = common::chat(r#"{"score": 1.0, "rationale": "fine"}"#);
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if stream.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    (rx.recv().unwrap(), peak)
}

#[test]
fn the_judge_concurrency_given_in_code_bounds_the_judge_calls_in_flight() {
    let lines: String = (0..12)
        .map(|i| format!("{{\"input\": \"q{i}\", \"expected\": \"a\"}}\n"))
        .collect();
    let dir = scratch("judge-concurrency", &[("qa.jsonl", &lines)]);
    let peak_with = |judge_concurrency: &str| {
        let (url, peak) = slow_judge(Duration::from_millis(150));
        let config = eval_runtime::Config::from_vars(
            |name| {
                Ok(match name {
                    "EVAL_JUDGE_CONCURRENCY" => Some(judge_concurrency.to_string()),
                    "EVAL_JUDGE_URL" => Some(format!("{url}/v1")),
                    "EVAL_JUDGE_MODEL" => Some("j".to_string()),
                    "EVAL_CACHE" => Some("off".to_string()),
                    _ => None,
                })
            },
            &[],
        )
        .unwrap();
        let out = harness(&dir)
            .dataset("qa.jsonl", "rubric(rubric = \"Score 1.\") >= 0.5")
            .config(config)
            .concurrency(12)
            .agent_fn(answer)
            .evaluate(args(&[]));
        assert_eq!(out.code, 0, "{:?}", out.error);
        peak.load(Ordering::SeqCst)
    };
    // Twelve samples in flight, each asking the judge once.
    assert_eq!(peak_with("2"), 2, "the config's bound, not the process's");
    assert!(peak_with("12") > 2, "a wider bound lets more calls through");
}
