//! `g_eval` criteria metrics through `Runner`, against the scripted judge
//! (`eval_examples::judge`, a real HTTP server on loopback): the steps
//! question asked once for the run, one score question per sample, the
//! score weighted by the token probabilities the judge returns (OpenAI's
//! documented `logprobs` shape), two criteria metrics side by side under
//! their names, and the criteria's and steps' hashes in the provenance.

use eval_examples::judge::{self, JudgeConfig};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::services::Judge;
use eval_runtime::{Config, FnAgent, Response, Runner, Sample, Services};

async fn echo_expected(sample: &Sample) -> Response {
    // Answers with the expected answer: every content word found.
    Response::new(sample.expected_text().unwrap_or("").to_string())
}

#[test]
fn criteria_metrics_score_by_steps_written_once_weighted_by_token_probabilities() {
    let server = judge::spawn(JudgeConfig::default()).unwrap();
    let base = format!("{}/v1", server.url());
    let services = Services::none().with_judge(Judge::new(&base, "judge").unwrap().cache(None));
    let samples: Vec<Sample> = [
        ("Capital of France?", "Paris is the capital of France."),
        ("Capital of Japan?", "Tokyo is the capital of Japan."),
        ("Capital of Italy?", "Rome is the capital of Italy."),
    ]
    .into_iter()
    .map(|(q, a)| Sample::new(q).with_expected(a))
    .collect();
    let plan = PlanBuilder::new().samples(
        "capitals",
        samples,
        r#"g_eval(name = "correct", criteria = "The answer names the right city. It is one sentence.", scale = 10, params = "input,output,expected") >= 0.5, g_eval(name = "plain", steps = "Compare with the expected answer", params = "output,expected", logprobs = false) >= 0.5"#,
    );
    let runner = Runner::new().config(Config::empty()).services(services);
    let outcome = runner
        .prepare(plan)
        .unwrap()
        .evaluate(&FnAgent(echo_expected), |_| {})
        .unwrap();
    let seen = eval_examples::judge::stats(server.url().trim_start_matches("http://")).unwrap();
    // 1 steps question (for `correct`; `plain` has its steps), then one
    // score question per sample and metric.
    assert_eq!(seen["chat_calls"], 1 + 3 * 2, "{seen}");
    assert_eq!(seen["obeyed"], 0);
    for record in &outcome.results.samples {
        let m = |name: &str| record.metrics.iter().find(|m| m.name == name).unwrap();
        let correct = m("g_eval:correct");
        // The judge scores 10 of 10, with 60 % on "10" and 20 % on "9":
        // weighted (10·.6 + 9·.2) / .8 = 9.75, normalised (9.75 − 1) / 9.
        assert_eq!(correct.raw, Some(9.75), "{correct:?}");
        assert!((correct.score.unwrap() - 8.75 / 9.0).abs() < 1e-12);
        assert_eq!(
            correct.method.as_deref(),
            Some("g_eval: probability-weighted score (token logprobs)")
        );
        let reason = correct.reason.as_deref().unwrap();
        assert!(
            reason.contains("Evaluation steps (written by the judge): 1. Check that the Actual Output meets this: The answer names the right city. 2. Check that the Actual Output meets this: It is one sentence."),
            "{reason}"
        );
        let plain = m("g_eval:plain");
        assert_eq!((plain.score, plain.raw), (Some(1.0), Some(5.0)));
        assert_eq!(
            plain.method.as_deref(),
            Some("g_eval: the judge's integer score (no token logprobs)")
        );
        assert!(correct.passed && plain.passed);
    }
    let provenance = outcome.results.provenance.as_ref().unwrap();
    let judged = &provenance.judge.as_ref().unwrap().metrics;
    let (correct, plain) = (&judged["g_eval:correct"], &judged["g_eval:plain"]);
    assert!(correct.steps_sha256.is_some() && plain.steps_sha256.is_some());
    assert_ne!(correct.criteria_sha256, plain.criteria_sha256);
    assert_ne!(correct.steps_sha256, plain.steps_sha256);
}
