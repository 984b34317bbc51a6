//! Latency, time to first token and cost as metrics and gates, through the
//! harness with in-process agents: an agent that sleeps, one that reports
//! tokens and its model, a price table.

use std::path::PathBuf;
use std::time::Duration;

use eval_runtime::results::{Results, Verdict};
use eval_runtime::{Config, Harness, Outcome, Response, Sample};
use libtest_mimic::Arguments;

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-latcost-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn args() -> Arguments {
    crate::common::harness_args(&["harness", "--test-threads", "2", "-q"])
}

fn read(out: &Outcome) -> Results {
    Results::read(out.results_path.as_ref().expect("a results file")).unwrap()
}

fn config(vars: &'static [(&'static str, String)]) -> Config {
    Config::from_vars(
        |n| Ok(vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())),
        &[],
    )
    .unwrap()
}

const FOUR: &str = r#"{"id": "fast1", "input": "fast 1", "expected": "ok"}
{"id": "fast2", "input": "fast 2", "expected": "ok"}
{"id": "slow1", "input": "slow 1", "expected": "ok"}
{"id": "slow2", "input": "slow 2", "expected": "ok"}
"#;

/// Answers `ok` after 150 ms for `slow` inputs, at once otherwise; reports
/// a time to first token of 5 ms for `fast 1` only.
async fn sleepy(sample: &Sample) -> Response {
    if sample.input.last().starts_with("slow") {
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let mut r = Response::new("ok");
    if sample.input.last() == "fast 1" {
        r.ttft = Some(Duration::from_millis(5));
    }
    r
}

#[test]
fn samples_over_their_latency_budget_fail_and_gates_take_percentiles() {
    let dir = scratch("latency", &[("four.jsonl", FOUR)]);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .dataset("four.jsonl", "contains, latency_ms <= 100")
        // The median of 2 fast and 2 slow samples lies between them
        // (definition 7: h = 3·0.5 = 1.5, halfway from the fast to the slow
        // one): above 50 ms, so `p50 <= 50` is missed; p95 is at most the
        // slowest sample, far below 5 s.
        .gate("p95(latency_ms) <= 5000, p50(latency_ms) <= 50")
        .agent_fn(sleepy)
        .evaluate(args());
    assert_eq!(out.code, 101, "the slow samples fail their test");
    let results = read(&out);
    let by_id = |id: &str| results.samples.iter().find(|s| s.id == id).unwrap();
    for id in ["fast1", "fast2"] {
        let s = by_id(id);
        assert_eq!(s.verdict, Verdict::Pass, "{id}");
        let m = s.metrics.iter().find(|m| m.name == "latency_ms").unwrap();
        assert!(m.score.unwrap() < 100.0 && m.passed, "{m:?}");
        assert!((m.score.unwrap() - s.latency_ms).abs() < 1e-6);
    }
    for id in ["slow1", "slow2"] {
        let s = by_id(id);
        assert_eq!(s.verdict, Verdict::Fail, "{id}");
        let m = s.metrics.iter().find(|m| m.name == "latency_ms").unwrap();
        assert!(m.score.unwrap() >= 150.0 && !m.passed, "{m:?}");
        assert_eq!((m.op.as_str(), m.threshold), ("<=", 100.0));
    }
    let d = &results.datasets[0];
    let latency = d.metrics.iter().find(|m| m.name == "latency_ms").unwrap();
    let gates: Vec<_> = latency.gates().collect();
    assert_eq!(gates.len(), 2, "{latency:?}");
    let p95 = gates
        .iter()
        .find(|g| g.gate.to_string() == "p95(latency_ms) <= 5000")
        .unwrap();
    assert!(p95.judged && p95.passed, "{p95:?}");
    let p50 = gates
        .iter()
        .find(|g| g.gate.to_string() == "p50(latency_ms) <= 50")
        .unwrap();
    assert!(p50.judged && !p50.passed, "{p50:?}");
    // The p50 is halfway between the slower fast sample and the faster slow one.
    let mut ms: Vec<f64> = results.samples.iter().map(|s| s.latency_ms).collect();
    ms.sort_by(f64::total_cmp);
    let want = ms[1] + 0.5 * (ms[2] - ms[1]);
    assert!(
        (p50.margin.unwrap() + 50.0 - want).abs() < 1e-6,
        "{p50:?} {ms:?}"
    );
    // Four values cannot bound their median at 95% (order statistics: the
    // chance all four lie on one side is 2/16 > 5%): the verdict is
    // inconclusive, and the point estimate decides.
    assert_eq!(
        p50.to_string(),
        format!(
            "p50 latency_ms = {want:.4} (95% interval unbounded..unbounded), gate <= 50 (missed by {:.4}; inconclusive: its interval straddles the threshold)",
            want - 50.0
        )
    );
    assert_eq!(
        p50.decision,
        Some(eval_runtime::verdict::Decision::Inconclusive)
    );
    assert!(!d.gates_passed);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_gate_on_latency_needs_no_latency_metric_and_ttft_needs_a_stream() {
    let dir = scratch("ttft", &[("four.jsonl", FOUR)]);
    // No `latency_ms` metric: the gate takes what was measured.
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .dataset("four.jsonl", "contains")
        .gate("p95(latency_ms) <= 10000")
        .agent_fn(sleepy)
        .evaluate(args());
    assert_eq!(out.code, 0, "{:?}", out.verdict);
    let d = &read(&out).datasets[0];
    let latency = d.metrics.iter().find(|m| m.name == "latency_ms").unwrap();
    assert_eq!((latency.scored, latency.pass_rate), (4, None));
    assert!(latency.gate.as_ref().unwrap().passed);

    // ttft: only `fast 1` streamed; the others get an error, not 0.
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out2.json"))
        .dataset("four.jsonl", "ttft_ms <= 50")
        .agent_fn(sleepy)
        .evaluate(args());
    assert_eq!(out.code, 101);
    let results = read(&out);
    let fast1 = results.samples.iter().find(|s| s.id == "fast1").unwrap();
    assert_eq!(fast1.verdict, Verdict::Pass);
    assert_eq!(fast1.metrics[0].score, Some(5.0));
    let fast2 = results.samples.iter().find(|s| s.id == "fast2").unwrap();
    assert_eq!(fast2.verdict, Verdict::Error);
    assert_eq!(fast2.metrics[0].score, None);
    assert!(
        fast2.metrics[0]
            .error
            .as_deref()
            .unwrap()
            .starts_with("no time to first token: the agent's answer was not streamed"),
        "{:?}",
        fast2.metrics[0]
    );
    let _ = std::fs::remove_dir_all(dir);
}

const PRICED: &str = r#"{"id": "small", "input": "small", "expected": "ok"}
{"id": "large", "input": "large", "expected": "ok"}
{"id": "unpriced", "input": "unpriced", "expected": "ok"}
"#;

/// Reports tokens and its model: 1,000 + 200 tokens for `small`, 2,000 +
/// 400 for `large` (a dated gpt-4o-mini), and a model with no price.
async fn metered(sample: &Sample) -> Response {
    match sample.input.last() {
        "small" => Response::new("ok")
            .with_tokens(1000, 200)
            .with_model("gpt-4o-mini"),
        "large" => Response::new("ok")
            .with_tokens(2000, 400)
            .with_model("gpt-4o-mini-2024-07-18"),
        _ => Response::new("ok")
            .with_tokens(10, 10)
            .with_model("mystery-model"),
    }
}

#[test]
fn cost_comes_from_the_price_table_and_is_unknown_without_a_price() {
    let dir = scratch("cost", &[("priced.jsonl", PRICED)]);
    let prices = dir.join("prices.json");
    std::fs::write(
        &prices,
        r#"{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}"#,
    )
    .unwrap();
    let vars: &'static [(&'static str, String)] = Box::leak(Box::new([(
        "EVAL_PRICES",
        prices.to_string_lossy().into_owned(),
    )]));
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .config(config(vars))
        .dataset("priced.jsonl", "contains, cost_usd <= 0.0003")
        .gate("mean(cost_usd) <= 0.001")
        .agent_fn(metered)
        .evaluate(args());
    assert_eq!(out.code, 101);
    let results = read(&out);
    let by_id = |id: &str| results.samples.iter().find(|s| s.id == id).unwrap();
    // small: 1000 · 0.15 / 1e6 + 200 · 0.60 / 1e6 = 0.00015 + 0.00012 = 0.00027.
    let small = by_id("small");
    assert!(
        (small.cost_usd.unwrap() - 0.000_27).abs() < 1e-12,
        "{small:?}"
    );
    assert_eq!(small.verdict, Verdict::Pass);
    // large: twice that, 0.00054 > 0.0003: fails its budget.
    let large = by_id("large");
    assert!((large.cost_usd.unwrap() - 0.000_54).abs() < 1e-12);
    assert_eq!(large.verdict, Verdict::Fail);
    // unpriced: unknown, not 0; the metric says why and the sample errs.
    let unpriced = by_id("unpriced");
    assert_eq!(unpriced.cost_usd, None);
    assert_eq!(
        unpriced.cost_unknown.as_deref(),
        Some(
            format!(
                "agent model `mystery-model` has no price in {}",
                prices.display()
            )
            .as_str()
        )
    );
    assert_eq!(unpriced.verdict, Verdict::Error);
    let m = unpriced
        .metrics
        .iter()
        .find(|m| m.name == "cost_usd")
        .unwrap();
    assert!(
        m.error
            .as_deref()
            .unwrap()
            .starts_with("cost unknown: agent model `mystery-model`")
    );
    // Totals: the known costs, and how many are unknown; agent tokens of all three.
    let d = &results.datasets[0];
    assert!(
        (d.usage.cost_usd.unwrap() - 0.000_81).abs() < 1e-12,
        "{:?}",
        d.usage
    );
    assert_eq!(d.usage.cost_unknown, 1);
    assert_eq!(
        (d.usage.agent.prompt_tokens, d.usage.agent.completion_tokens),
        (3010, 610)
    );
    assert_eq!(
        results.usage, d.usage,
        "one dataset: the run's totals are its"
    );
    assert_eq!(
        d.usage.line(),
        "agent 0 call(s), 3010 + 610 tokens; cost $0.0008 + unknown for 1 sample(s) (a model without a price, or no usage reported)"
    );
    // The mean-cost gate is missed: a sample's cost is unknown.
    let gate = d
        .metrics
        .iter()
        .find(|m| m.name == "cost_usd")
        .unwrap()
        .gate
        .as_ref()
        .unwrap();
    assert!(
        gate.judged && !gate.passed && gate.unscored >= 1,
        "{gate:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_latency_metric_needs_a_threshold() {
    let dir = scratch("required", &[("four.jsonl", FOUR)]);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("out.json"))
        .dataset("four.jsonl", "contains, latency_ms")
        .agent_fn(sleepy)
        .evaluate(args());
    assert_eq!(out.code, 2);
    let e = out.error.unwrap().to_string();
    assert!(
        e.contains("`latency_ms` has no default threshold: give one, e.g. `latency_ms <= 2000`"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
