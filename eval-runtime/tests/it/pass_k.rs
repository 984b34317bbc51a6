//! `pass@k` and `pass^k` gates through the harness, with repeated runs:
//! each sample's runs counted against the metric's per-sample threshold,
//! the unbiased estimators averaged over the samples, an interval and a
//! verdict, the statistic named in the results file, the summary and
//! `report diff`; a plan that cannot give k runs refused; an errored run
//! never a pass.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::common;

use eval_runtime::__cli::results::GateResult;
use eval_runtime::__cli::verdict::Method;
use eval_runtime::Outcome;
use eval_runtime::metric_spec::Stat;
use eval_runtime::results::Results;
use eval_runtime::verdict::Decision;
use eval_runtime::{Harness, Response, Sample};
use libtest_mimic::Arguments;

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-passk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn args() -> Arguments {
    common::harness_args(&["harness", "--test-threads", "2", "-q"])
}

/// Four samples; over 4 runs `always` is right every time, `never` never,
/// `coin` on runs 2 and 4, `once` on run 1 only.
const DATA: &str = "{\"id\": \"always\", \"input\": \"a\", \"expected\": \"yes\"}\n{\"id\": \"never\", \"input\": \"b\", \"expected\": \"yes\"}\n{\"id\": \"coin\", \"input\": \"c\", \"expected\": \"yes\"}\n{\"id\": \"once\", \"input\": \"d\", \"expected\": \"yes\"}\n";

/// The agent above; `fail` names a sample whose second run errors.
fn run(dir: &PathBuf, repeat: u32, gates: &str, fail: Option<&'static str>) -> Outcome {
    let calls = Arc::new(Mutex::new(BTreeMap::<String, u32>::new()));
    Harness::new()
        .base_dir(dir)
        .results_file(dir.join("out/results.json"))
        .dataset("qa.jsonl", "contains")
        .gate(gates)
        .repeat(repeat)
        .agent_fn(async move |s: &Sample| {
            let run = {
                let mut calls = calls.lock().unwrap();
                let n = calls.entry(s.id.clone()).or_default();
                *n += 1;
                *n
            };
            if fail == Some(s.id.as_str()) && run == 2 {
                return Err("down".to_string());
            }
            let right = match s.id.as_str() {
                "always" => true,
                "never" => false,
                "coin" => run % 2 == 0,
                _ => run == 1,
            };
            Ok(Response::new(if right { "yes" } else { "no" }))
        })
        .evaluate(args())
}

fn gates(out: &Outcome) -> Vec<&GateResult> {
    out.datasets[0].metrics[0].gates().collect()
}

#[test]
fn pass_at_k_and_pass_hat_k_gate_repeated_runs() {
    let dir = scratch("gates", &[("qa.jsonl", DATA)]);
    let out = run(
        &dir,
        4,
        "pass@2(contains) >= 0.5, pass^2(contains) >= 0.5, pass_at_1(contains) >= 0.25",
        None,
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    let g = gates(&out);
    assert_eq!(g.len(), 3);
    // n = 4 runs each; c = 4, 0, 2, 1.
    // pass@2: 1, 0, 1 − C(2,2)/C(4,2) = 5/6, 1 − C(3,2)/C(4,2) = 1/2.
    let at2 = 0.25 * (1.0 + 0.0 + 5.0 / 6.0 + 0.5);
    // pass^2: 1, 0, C(2,2)/C(4,2) = 1/6, 0.
    let hat2 = 0.25 * (1.0 + 1.0 / 6.0);
    // pass@1: the pass rate of every run, 7/16.
    let at1 = 7.0 / 16.0;
    for (gate, stat, value) in [
        (g[0], Stat::PassAt(2), at2),
        (g[1], Stat::PassHat(2), hat2),
        (g[2], Stat::PassAt(1), at1),
    ] {
        assert_eq!(gate.gate.stat, stat);
        assert!(gate.judged, "{gate}");
        let got = gate.gate.threshold + gate.margin.unwrap();
        assert!((got - value).abs() < 1e-12, "{stat}: {got} vs {value}");
        assert_eq!(gate.scored, 4);
        assert_eq!(gate.method, Some(Method::Betting));
        let i = gate.interval.unwrap();
        assert!(i.low <= value && value <= i.high, "{i:?}");
        // Four samples decide nothing: every interval straddles.
        assert_eq!(gate.decision, Some(Decision::Inconclusive), "{gate}");
        assert_eq!(gate.error, None);
    }
    // The point estimate decides an inconclusive gate by default.
    assert!(g[0].passed && !g[1].passed && g[2].passed);
    assert!(
        g[1].to_string()
            .starts_with("pass^2 contains = 0.2917 (95% interval "),
        "{}",
        g[1]
    );
    // The results file says each run's passes, and names the statistics.
    let path = out.results_path.clone().unwrap();
    let results = Results::read(&path).unwrap();
    let coin = results.samples.iter().find(|s| s.id == "coin").unwrap();
    let spread = coin.metrics[0].spread.unwrap();
    assert_eq!((spread.runs, spread.passes), (4, Some(2)));
    let json = std::fs::read_to_string(&path).unwrap();
    assert!(
        json.contains("\"stat\":\"pass^2\""),
        "the statistic by name"
    );
    assert!(json.contains("\"stat\":\"pass@2\""));
    assert_eq!(
        results.datasets, out.datasets,
        "recomputed from the records alike"
    );
    let text =
        eval_runtime::__cli::results::summary_text(&results, eval_runtime::__cli::Paint::plain());
    assert!(text.contains("pass^2 contains = 0.2917"), "{text}");
    // `report diff` of the run against itself names the gates too.
    let diff = eval_runtime::diff::diff(&results, &results, 0.0);
    let names: Vec<&str> = diff.gates.iter().map(|c| c.gate.as_str()).collect();
    assert!(names.contains(&"pass@2(contains) >= 0.5"), "{names:?}");
    assert!(names.contains(&"pass^2(contains) >= 0.5"), "{names:?}");
}

#[test]
fn a_plan_without_k_runs_is_refused_and_an_errored_run_is_no_pass() {
    let dir = scratch("refused", &[("qa.jsonl", DATA)]);
    let out = run(&dir, 2, "pass@3(contains) >= 0.5", None);
    assert_eq!(out.code, 2);
    let e = out.error.unwrap().to_string();
    assert!(
        e.contains("gate `pass@3(contains) >= 0.5` for qa.jsonl needs 3 runs of each sample, but repeat is 2: set `repeat = N` with N ≥ 3"),
        "{e}"
    );
    // `once` fails on its second run: its runs stop, it is not scored, and
    // the gate is missed whatever the others say.
    let out = run(&dir, 4, "pass@1(contains) >= 0.1", Some("once"));
    let g = gates(&out)[0];
    assert!(g.judged && !g.passed, "{g}");
    assert_eq!((g.unscored, g.scored), (1, 3));
    assert!(
        g.to_string()
            .starts_with("pass@1(contains) >= 0.1 missed: 1 of 4 samples not scored"),
        "{g}"
    );
}
