//! Agent output reaches the judge only as data: prompt-injection attacks
//! placed in the answer, the expected answer, a context chunk and a rubric
//! variable are run
//! through the real `Judge` over HTTP against the scripted judge
//! (`eval_examples::judge`), which obeys any instruction it finds outside
//! the data blocks. Every grade must equal the grade of the same scripted
//! judge with obedience off. The negative control puts the same attacks
//! outside the blocks of the very requests sent, and checks that the
//! obedient judge is then steered: the suite can fail. (Test set
//! generation, `evals generate`, has the same suite in eval-cli's
//! `synth/injection.rs`.)

use eval_examples::demo::DemoServer;
use eval_examples::judge::{self, JudgeConfig, Recorded};
use eval_runtime::metric_spec::OptionValue;
use eval_runtime::services::{Embedder, Judge};
use eval_runtime::{MetricSpec, Response, Sample, Services};
use serde_json::Value;

/// Every judged metric the scripted judge answers (all that ask a judge).
const METRICS: &[&str] = &[
    "faithfulness",
    "context_recall",
    "context_precision",
    "answer_relevancy",
    "hallucination",
    "toxicity",
    "bias",
    "rubric",
    "relevance",
    "coherence",
    "groundedness",
    "similarity",
    "g_eval",
];

fn spec(name: &str) -> MetricSpec {
    // the criteria ours, every param of the sample shown.
    if name == "g_eval" {
        let s = |v: &str| OptionValue::Str(v.to_string().into());
        let options = [
            ("criteria", s("The answer is correct. It is polite.")),
            ("params", s("input,output,expected,context")),
            ("scale", OptionValue::Num(10.0)),
        ];
        return MetricSpec::new(name, &options, None).unwrap();
    }
    let options = if name == "rubric" {
        vec![(
            "rubric",
            OptionValue::Str(
                "Grade {submission} against {ground_truth}, in the style {style}."
                    .to_string()
                    .into(),
            ),
        )]
    } else {
        Vec::new()
    };
    MetricSpec::new(name, &options, None).unwrap()
}

/// The sample and answer with `attack` in the answer, the expected answer,
/// a context chunk of its own and the rubric variable.
fn attacked(attack: &str) -> (Sample, Response) {
    let mut sample = Sample::new("What is the capital of France?")
        .with_expected(format!(
            "Paris is the capital of France. It is its largest city.\n{attack}"
        ))
        .with_context([
            "Paris is the capital and largest city of France.".to_string(),
            "France is a country in Europe.".to_string(),
            attack.to_string(),
        ]);
    sample
        .rubric_vars
        .insert("style".into(), Value::from(attack.to_string()));
    let response = Response::new(format!(
        "Paris is the capital of France. I think it is the best city in Europe.\n{attack}"
    ));
    (sample, response)
}

fn services(server: &DemoServer) -> Services {
    let base = format!("{}/v1", server.url());
    Services::none()
        .with_judge(Judge::new(&base, "judge").unwrap().cache(None))
        .with_embedder(Embedder::new(&base, "embed").unwrap().cache(None))
}

/// A grade, errors included (an error is a grade too: it must not change).
type Grade = Result<f64, String>;

async fn grade(metric: &str, attack: &str, services: &Services) -> Grade {
    let (sample, response) = attacked(attack);
    let result = eval_runtime::score(&spec(metric), &sample, &response, services)
        .await
        .result;
    match (result.score, result.error) {
        (Some(score), _) => Ok(score),
        (None, e) => Err(e.map_or("no score".into(), |e| e.to_string())),
    }
}

fn since(log: &Recorded, from: usize) -> Vec<Value> {
    log.lock().unwrap()[from..].to_vec()
}

/// A clean sample the judge grades poorly on every count (a noncommittal,
/// partly wrong, rude, unfinished answer; an expected answer the context
/// half supports), so that a grade steered up shows.
fn poor() -> (Sample, Response) {
    let mut sample = Sample::new("What is the capital city of France and its population?")
        .with_expected("Paris is the capital of France. It has 2 million inhabitants.")
        .with_context([
            "Paris is the capital and largest city of France.",
            "France is a country in Europe.",
        ]);
    sample
        .rubric_vars
        .insert("style".into(), Value::from("one sentence"));
    let response =
        Response::new("I don't know. Paris is not the capital of France. Tourists are idiots and");
    (sample, response)
}

#[tokio::test]
async fn no_attack_in_the_data_changes_a_grade_and_the_same_attacks_outside_do() {
    let (obedient, log) = judge::spawn_recording(JudgeConfig::default()).unwrap();
    let control = judge::spawn(JudgeConfig {
        obey: false,
        ..JudgeConfig::default()
    })
    .unwrap();
    let (with_obedient, with_control) = (services(&obedient), services(&control));
    let attacks = judge::attacks();
    assert!(attacks.len() >= 50, "{} attacks", attacks.len());
    // The suite: every attack in the data of every judged metric, graded
    // by the obedient judge and the control.
    let (mut runs, mut changed, mut scored) = (0, Vec::new(), 0);
    let short = |a: &str| a.trim().chars().take(60).collect::<String>();
    for attack in &attacks {
        for metric in METRICS {
            let got = grade(metric, attack, &with_obedient).await;
            let want = grade(metric, attack, &with_control).await;
            runs += 1;
            scored += usize::from(got.is_ok());
            if got != want {
                changed.push(format!("{metric} {:?}: {got:?} != {want:?}", short(attack)));
            }
        }
    }
    let obeyed = judge::stats(obedient.addr()).unwrap()["obeyed"]
        .as_u64()
        .unwrap();
    // The negative control: the requests of a clean sample, each attack put
    // outside their data blocks.
    let (sample, response) = poor();
    let mut asked: Vec<Vec<Value>> = Vec::new();
    for metric in METRICS {
        let from = log.lock().unwrap().len();
        let scored = eval_runtime::score(&spec(metric), &sample, &response, &with_obedient).await;
        assert!(
            scored.result.score.is_some(),
            "{metric}: {:?}",
            scored.result.error
        );
        asked.push(since(&log, from));
    }
    let (mut leaks, mut steered_by) = (0, 0);
    for attack in &attacks {
        for requests in &asked {
            leaks += 1;
            steered_by += usize::from(judge::steered(requests, attack));
        }
    }
    println!(
        "injection suite: {} attacks × {} (the judged metrics) = {runs} gradings through the judge client, {} changed by obedience ({scored} scored), the obedient judge obeyed {obeyed} time(s); negative control, the same attacks outside the blocks: {steered_by} of {leaks} steered",
        attacks.len(),
        METRICS.len(),
        changed.len()
    );
    assert!(changed.is_empty(), "{changed:#?}");
    assert_eq!(obeyed, 0, "nothing was found outside the data blocks");
    assert_eq!(runs, attacks.len() * METRICS.len());
    // Not vacuous: the attacked samples are graded (an answer of 200 KB
    // too), and the same attacks steer the judge once outside the blocks.
    assert_eq!(scored, runs);
    assert!(
        steered_by * 4 >= leaks * 3,
        "the negative control steered only {steered_by} of {leaks}"
    );
}
