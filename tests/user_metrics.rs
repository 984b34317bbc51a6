//! Metrics of the user's in the attribute (issue 36, part 2): by their path,
//! as a function, a unit struct and a static implementing `Metric`, each
//! written with `contains`'s definition (eval-runtime `metrics::text`: the
//! output, lower-cased, contains the expected answer, lower-cased). They
//! give the built-in's scores and verdicts, and their gate is judged.

use eval_runtime::prelude::*;
use eval_runtime::{BoxFuture, Metric, MetricContext, MetricFailure, Score};

/// `contains`, as a function (pass/fail: it returns `bool`).
pub fn contains_too(sample: &Sample, response: &Response) -> bool {
    let expected = sample.expected_text().unwrap_or_default().trim();
    response
        .output
        .to_lowercase()
        .contains(&expected.to_lowercase())
}

/// `contains`, as a unit struct implementing `Metric`.
pub struct ContainsStruct;

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
        Box::pin(async move { Ok(contains_too(cx.sample, cx.response).into()) })
    }
}

/// `contains`, as a static of a type implementing `Metric` (its name set at run time).
pub struct Named(&'static str);

impl Metric for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn pass_fail(&self) -> bool {
        true
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        Box::pin(async move { Ok(contains_too(cx.sample, cx.response).into()) })
    }
}

pub static CONTAINS_STATIC: Named = Named("contains_static");

/// Set in the child process that checks failing verdicts: the agent then
/// gets the refund question wrong.
const WRONG: &str = "USER_METRICS_WRONG_ON_PURPOSE";

async fn agent(sample: &Sample) -> Response {
    let q = sample.input.last();
    if std::env::var_os(WRONG).is_some() && q.contains("refund") {
        return Response::new("No ticket tracks that.");
    }
    let expected = sample.expected_text().unwrap_or_default();
    Response::new(format!("It is ticket {expected}."))
}

#[eval_dataset(
    "tests/data/tickets.jsonl",
    metrics(
        contains >= 1.0,
        crate::contains_too >= 1.0,
        crate::ContainsStruct,
        self::CONTAINS_STATIC
    ),
    gate(crate::contains_too >= 0.9, p50(crate::ContainsStruct) >= 0.5),
    repeat = 2
)]
async fn user_tickets(sample: &Sample) -> Response {
    agent(sample).await
}

/// Every record of `metric` in the results under `dir`: (test name, score, passed).
fn records(dir: &std::path::Path, metric: &str) -> Vec<(String, Option<f64>, bool)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for f in files {
        let Ok(r) = eval_runtime::results::Results::read(&f) else {
            continue;
        };
        for s in &r.samples {
            if let Some(m) = s.metrics.iter().find(|m| m.name == metric) {
                out.push((s.test_name.clone(), m.score, m.passed));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn the_attributes_user_metrics_fail_the_samples_contains_fails() {
    if std::env::var_os(WRONG).is_some() {
        return; // the child itself
    }
    let dir = std::env::temp_dir().join(format!("eval-user-metric-attr-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["user_tickets::", "--test-threads", "1"])
        .env(WRONG, "1")
        .env("EVAL_RESULTS_DIR", &dir)
        .env_remove("NEXTEST")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "the refund sample fails:\n{stdout}");
    assert!(
        stdout.contains("user_tickets::which_ticket_tracks_the_refund_bug ... FAILED"),
        "{stdout}"
    );
    for ok in ["login", "export", "search"] {
        assert!(
            stdout.contains(&format!(
                "user_tickets::which_ticket_tracks_the_{ok}_bug ... ok"
            )),
            "{stdout}"
        );
    }
    // Same scores and verdicts as `contains`, sample by sample.
    let built_in = records(&dir, "contains");
    assert_eq!(built_in.len(), 4, "{built_in:?}");
    assert_eq!(built_in.iter().filter(|r| !r.2).count(), 1);
    for name in ["contains_too", "contains_struct", "contains_static"] {
        assert_eq!(records(&dir, name), built_in, "{name}");
    }
    // The gate on the mean of `contains_too` (0.75 < 0.9) is missed.
    assert!(
        stdout.contains("user_tickets::gates ... FAILED"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
