//! Metrics of the user's (issue 36, part 2) through the harness and the
//! runner: written with `contains`'s definition (eval-runtime
//! `metrics::text`: the output, lower-cased, contains the expected answer,
//! lower-cased), as a function and as a `Metric` implementation, they give
//! the built-in's scores, verdicts, gates, intervals and comparisons.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common;

use eval_runtime::diff::{Allow, compare};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::results::{Results, Verdict};
use eval_runtime::{
    BoxFuture, Config, FnAgent, Harness, Metric, MetricContext, MetricFailure, Op, Outcome,
    Response, Runner, Sample, Score, metric_fn,
};

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-user-metric-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn args() -> libtest_mimic::Arguments {
    common::harness_args(&["harness", "--test-threads", "2", "-q"])
}

/// `contains`, as a function: pass/fail, because it returns `bool`.
fn contains_too(sample: &Sample, response: &Response) -> bool {
    let expected = sample.expected_text().unwrap_or_default().trim();
    response
        .output
        .to_lowercase()
        .contains(&expected.to_lowercase())
}

/// `contains`, as a `Metric` implementation.
struct ContainsStruct;

impl Metric for ContainsStruct {
    fn name(&self) -> &str {
        "contains_struct"
    }
    fn pass_fail(&self) -> bool {
        true
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        Box::pin(async move {
            let passed = contains_too(cx.sample, cx.response);
            Ok(Score::from(passed).with_reason(if passed { "found" } else { "not found" }))
        })
    }
}

/// `contains`, as an `async fn` returning a number (not pass/fail: its
/// threshold is written).
async fn contains_async(sample: &Sample, response: &Response) -> f64 {
    if contains_too(sample, response) {
        1.0
    } else {
        0.0
    }
}

/// 10 samples; the agent gets the three `wrong` ones wrong.
fn ten() -> String {
    (0..10)
        .map(|i| {
            let q = if i % 3 == 1 { "wrong" } else { "question" };
            format!("{{\"input\": \"{q} {i}\", \"expected\": \"Answer {i}\"}}\n")
        })
        .collect()
}

async fn answer(sample: &Sample) -> Response {
    let expected = sample.expected_text().unwrap_or_default();
    if sample.input.last().starts_with("wrong") {
        Response::new("something else")
    } else {
        Response::new(format!("the {}", expected.to_uppercase()))
    }
}

fn read(out: &Outcome) -> Results {
    Results::read(out.results_path.as_ref().expect("a results file")).unwrap()
}

/// Every sample's score and verdict of `metric`, by id.
fn scores(results: &Results, metric: &str) -> Vec<(String, Option<f64>, bool)> {
    let mut all: Vec<_> = results
        .samples
        .iter()
        .map(|s| {
            let m = s.metrics.iter().find(|m| m.name == metric).unwrap();
            (s.id.clone(), m.score, m.passed)
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

#[test]
fn through_the_harness_a_user_metric_scores_and_gates_as_contains_does() {
    let dir = scratch("harness", &[("qa.jsonl", &ten())]);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out/results.json"))
        .metric(contains_too)
        .metric(ContainsStruct)
        .metric(contains_async)
        .dataset(
            "qa.jsonl",
            "contains, contains_too, contains_struct, contains_async >= 1",
        )
        .gate("mean(contains) >= 0.9, mean(contains_too) >= 0.9, contains_struct >= 0.5")
        .agent_fn(answer)
        .evaluate(args());
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.code, 101, "three samples fail");
    let results = read(&out);
    let built_in = scores(&results, "contains");
    assert_eq!(built_in.iter().filter(|s| !s.2).count(), 3);
    for name in ["contains_too", "contains_struct", "contains_async"] {
        assert_eq!(scores(&results, name), built_in, "{name}");
    }
    // The reason a metric gives is kept with its score.
    let wrong = results.samples.iter().find(|s| s.id == "1").unwrap();
    assert_eq!(wrong.verdict, Verdict::Fail);
    let m = wrong
        .metrics
        .iter()
        .find(|m| m.name == "contains_struct")
        .unwrap();
    assert_eq!(m.reason.as_deref(), Some("not found"));
    // Means, pass rates and the gates alike: a pass/fail user metric's mean is a pass rate.
    let d = &out.datasets[0];
    let summary = |n: &str| d.metrics.iter().find(|m| m.name == n).unwrap();
    let (c, u) = (summary("contains"), summary("contains_too"));
    assert_eq!((u.mean, u.pass_rate), (c.mean, c.pass_rate));
    assert_eq!(c.mean, Some(0.7));
    let (cg, ug) = (c.gate.as_ref().unwrap(), u.gate.as_ref().unwrap());
    assert!(!cg.passed && !ug.passed, "0.7 < 0.9");
    assert_eq!(
        (ug.interval, ug.method, ug.margin),
        (cg.interval, cg.method, cg.margin)
    );
    let sg = summary("contains_struct").gate.as_ref().unwrap();
    assert!(sg.passed, "0.7 >= 0.5");
    // The run's provenance names each user metric and its version.
    let p = results.provenance.as_ref().unwrap();
    assert_eq!(p.user_metrics["contains_too"].version, "1");
    assert!(p.user_metrics["contains_struct"].pass_fail);
    assert!(!p.user_metrics["contains_async"].pass_fail);
}

/// The runner's outcome of `agent` on `ten()` with a user metric `metric`
/// beside `contains` (repeated `repeat` times).
fn run_with<M>(
    metric: impl eval_runtime::IntoMetric<M>,
    name: &str,
    agent: impl AsyncFn(&Sample) -> Response + Send + Sync + 'static,
    repeat: u32,
) -> Results {
    let samples: Vec<Sample> = (0..10)
        .map(|i| {
            let q = if i % 3 == 1 { "wrong" } else { "question" };
            Sample::new(format!("{q} {i}")).with_expected(format!("Answer {i}"))
        })
        .collect();
    let plan = PlanBuilder::new()
        .samples("qa", samples, &format!("contains, {name}"))
        .repeat(repeat);
    let runner = Runner::new().config(Config::empty()).metric(metric);
    runner
        .prepare(plan)
        .unwrap()
        .evaluate(&FnAgent(agent), |_| {})
        .unwrap()
        .results
}

#[test]
fn through_the_runner_repeats_intervals_and_diffs_are_the_built_ins() {
    // Runs alternate right and wrong on the `question` samples: a pass
    // rate of 2/3 over three runs, with Clopper–Pearson's interval.
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let flaky = async move |s: &Sample| {
        let n = counted.fetch_add(1, Ordering::SeqCst);
        if n % 3 == 1 {
            Response::new("no")
        } else {
            answer(s).await
        }
    };
    let old = run_with(contains_too, "contains_too", answer, 1);
    let new = run_with(contains_too, "contains_too", flaky, 3);
    for s in &new.samples {
        let spread = |n: &str| s.metrics.iter().find(|m| m.name == n).unwrap().spread;
        let (c, u) = (spread("contains").unwrap(), spread("contains_too").unwrap());
        assert_eq!(c, u, "{}", s.id);
        assert_eq!(c.runs, 3);
    }
    assert_eq!(scores(&new, "contains_too"), scores(&new, "contains"));
    // `report diff`: the same paired comparison for both.
    let d = compare(&old, &new, 0.0, Allow::default()).unwrap();
    let cmp = |n: &str| {
        d.comparisons
            .iter()
            .find(|c| c.metric == n)
            .unwrap()
            .clone()
    };
    let (c, u) = (cmp("contains"), cmp("contains_too"));
    assert_eq!(
        (u.difference, u.interval, u.p_value, u.test, u.outcome),
        (c.difference, c.interval, c.p_value, c.test, c.outcome)
    );
    assert!(c.difference.is_some());
}

#[test]
fn a_new_version_of_a_user_metric_changes_the_provenance_and_refuses_the_comparison() {
    let v1 = run_with(metric_fn("cites", contains_too), "cites", answer, 1);
    let v2 = run_with(
        metric_fn("cites", contains_too).version("2"),
        "cites",
        answer,
        1,
    );
    let (p1, p2) = (
        v1.provenance.clone().unwrap(),
        v2.provenance.clone().unwrap(),
    );
    assert_eq!(p1.user_metrics["cites"].version, "1");
    assert_eq!(p2.user_metrics["cites"].version, "2");
    assert_ne!(p1, p2);
    let e = compare(&v1, &v2, 0.0, Allow::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("`cites`: your metric's definition, version 1 → 2"),
        "{e}"
    );
    // The same version compares.
    let again = run_with(metric_fn("cites", contains_too), "cites", answer, 1);
    assert!(compare(&v1, &again, 0.0, Allow::default()).is_ok());
    assert!(compare(&v1, &v2, 0.0, Allow::new(true, false)).is_ok());
}

#[test]
fn a_panicking_or_failing_user_metric_fails_only_that_metric_on_that_sample() {
    let boom = metric_fn("boom", |s: &Sample, _: &Response| -> bool {
        if s.input.last().ends_with(" 3") {
            panic!("kaboom on sample 3");
        }
        true
    });
    let results = run_with(boom, "boom", answer, 1);
    assert_eq!(results.samples.len(), 10, "the run went on");
    let three = results
        .samples
        .iter()
        .find(|s| s.test_name.ends_with("question_3"))
        .unwrap();
    let m = three.metrics.iter().find(|m| m.name == "boom").unwrap();
    assert_eq!(m.score, None);
    assert_eq!(
        m.error.as_deref(),
        Some("metric `boom` panicked: kaboom on sample 3")
    );
    let c = three.metrics.iter().find(|m| m.name == "contains").unwrap();
    assert_eq!(c.score, Some(1.0), "the other metrics are scored");
    let zero = results
        .samples
        .iter()
        .find(|s| s.test_name.ends_with("question_0"))
        .unwrap();
    assert_eq!(zero.metrics[1].score, Some(1.0));

    let failing = metric_fn("failing", |_: &Sample, _: &Response| {
        Err::<f64, _>(std::io::Error::other("the schema file is missing"))
    });
    let r = run_with(failing, "failing >= 0.5", answer, 1);
    let e = r.samples[0].metrics[1].error.clone();
    assert_eq!(
        e.as_deref(),
        Some("metric `failing` failed: the schema file is missing")
    );
    let nan = metric_fn("nan", |_: &Sample, _: &Response| f64::NAN);
    let r = run_with(nan, "nan >= 0.5", answer, 1);
    assert_eq!(
        r.samples[0].metrics[1].error.as_deref(),
        Some("metric `nan` scored NaN")
    );
    let big = metric_fn("big", |_: &Sample, _: &Response| 3.0);
    let r = run_with(big, "big >= 0.5", answer, 1);
    assert_eq!(
        r.samples[0].metrics[1].error.as_deref(),
        Some("metric `big` scored 3, outside its range 0..=1")
    );
    // Better when lower, on its own range.
    let tokens = metric_fn("words", |_: &Sample, r: &Response| {
        r.output.split_whitespace().count() as f64
    })
    .direction(Op::AtMost)
    .range(0.0, f64::INFINITY);
    let r = run_with(tokens, "words <= 1", answer, 1);
    let wrong = r
        .samples
        .iter()
        .find(|s| s.test_name.ends_with("wrong_1"))
        .unwrap();
    assert_eq!(
        (wrong.metrics[1].score, wrong.metrics[1].passed),
        (Some(2.0), false)
    );
}

#[test]
fn text_specs_name_only_registered_metrics_and_never_a_built_ins_name() {
    let samples = vec![Sample::new("q").with_expected("a")];
    let runner = Runner::new().config(Config::empty());
    let e = runner
        .prepare(PlanBuilder::new().samples("qa", samples.clone(), "contains_too"))
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("unknown metric `contains_too`"),
        "{e}"
    );
    let e = Runner::new()
        .config(Config::empty())
        .metric(metric_fn("contains", contains_too))
        .prepare(PlanBuilder::new().samples("qa", samples.clone(), "contains"))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("your metric `contains` has the name of a built-in metric"),
        "{e}"
    );
    // Its direction and range are checked as a built-in's are.
    let e = Runner::new()
        .config(Config::empty())
        .metric(contains_too)
        .prepare(PlanBuilder::new().samples("qa", samples, "contains_too <= 0.5"))
        .err()
        .unwrap();
    assert!(e.to_string().contains("write `contains_too >= 0.5`"), "{e}");
}

#[test]
fn a_user_metric_asks_the_runs_judge_and_its_calls_are_counted() {
    // The judge: an OpenAI chat-completions reply (the shape `common::chat`
    // writes for every judge test) holding the metric's JSON.
    let judge = common::serve_detached(|_, _, body| {
        let answer = common::block(body, "answer").unwrap_or_default();
        let score = if answer.contains('#') { 1.0 } else { 0.0 };
        common::Reply::json(200, common::chat(&format!(r#"{{"score": {score}}}"#)))
    });
    let policy = eval_runtime::async_metric_fn(
        "policy",
        async |cx: &MetricContext<'_>| -> Result<f64, MetricFailure> {
            let prompt = eval_runtime::services::JudgePrompt::new(
                "policy",
                1,
                "Score 1 when the answer cites a ticket, else 0, as {\"score\": x}.",
            )
            .block("answer", cx.response.output.clone());
            let reply = cx.ask_judge(&prompt).await?;
            reply["score"].as_f64().ok_or_else(|| "no score".into())
        },
    );
    let services = eval_runtime::Services::none().with_judge(
        eval_runtime::services::Judge::new(&judge.url, "j")
            .unwrap()
            .cache(None),
    );
    let samples = vec![
        Sample::new("Which ticket?").with_expected("#42"),
        Sample::new("Which other ticket?").with_expected("#43"),
    ];
    let plan = PlanBuilder::new().samples("qa", samples, "policy >= 1");
    let runner = Runner::new()
        .config(Config::empty())
        .services(services)
        .metric(policy);
    let agent = FnAgent(async |s: &Sample| {
        if s.input.last().contains("other") {
            Response::new("No idea.")
        } else {
            Response::new("It is #42.")
        }
    });
    let results = runner
        .prepare(plan)
        .unwrap()
        .evaluate(&agent, |_| {})
        .unwrap()
        .results;
    let mut got: Vec<(Option<f64>, bool)> = results
        .samples
        .iter()
        .map(|s| (s.metrics[0].score, s.metrics[0].passed))
        .collect();
    got.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    assert_eq!(got, [(Some(0.0), false), (Some(1.0), true)]);
    assert_eq!(judge.count(), 2, "one question per sample");
    assert_eq!(results.usage.judge.calls, 2, "counted as the judge's calls");
    // Without a judge, the metric fails on each sample with the reason.
    let r = Runner::new()
        .config(Config::empty())
        .services(eval_runtime::Services::none())
        .metric(eval_runtime::async_metric_fn(
            "policy",
            async |cx: &MetricContext<'_>| -> Result<f64, MetricFailure> {
                let prompt = eval_runtime::services::JudgePrompt::new("policy", 1, "x")
                    .block("answer", cx.response.output.clone());
                Ok(cx.ask_judge(&prompt).await?["score"]
                    .as_f64()
                    .unwrap_or(0.0))
            },
        ))
        .prepare(PlanBuilder::new().samples(
            "qa",
            vec![Sample::new("q").with_expected("a")],
            "policy >= 1",
        ))
        .unwrap()
        .evaluate(&agent, |_| {})
        .unwrap()
        .results;
    let e = r.samples[0].metrics[0].error.clone().unwrap_or_default();
    assert!(e.starts_with("metric `policy` failed: "), "{e}");
}
