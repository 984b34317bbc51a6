//! Strict reading of the judge's replies, through the metrics: an extra
//! key, a wrong type, a flag or rating out of range, a verdict too few or a
//! key given twice is an unusable answer, re-asked twice, then the metric
//! fails alone. (Looser shapes the metrics once took, objects with a
//! `verdict` field, booleans, "Yes", are refused on purpose.)

use crate::common;

use crate::common::score;
use common::{Reply, chat};
use eval_runtime::Services;
use eval_runtime::services::{Embedder, Judge, ServiceError};
use eval_runtime::{MetricSpec, Response, Sample};

fn spec(name: &str) -> MetricSpec {
    MetricSpec::new(name, &[], None).unwrap()
}

fn services(url: &str) -> Services {
    Services::none()
        .with_judge(Judge::new(url, "judge").unwrap().cache(None))
        .with_embedder(Embedder::new(url, "embed").unwrap().cache(None))
}

fn sample() -> Sample {
    Sample::new("What is Paris?")
        .with_expected("Paris is the capital of France.")
        .with_context(["Paris is the capital and largest city of France."])
}

/// Good answers, in exactly the shape each task asks for.
fn judge_script(body: &serde_json::Value) -> Reply {
    let content = match common::task(body).as_str() {
        "faithfulness" => {
            r#"{"statements": ["Paris is in France.", "Paris has 10 million people.", "Paris is a capital."], "verdicts": [1, 1, 1]}"#
        }
        "toxicity/opinions" => r#"{"opinions": ["a", "b", "c", "d"]}"#,
        _ => "{}",
    };
    Reply::json(200, chat(content))
}

#[tokio::test]
async fn a_reply_with_an_extra_key_a_wrong_type_or_a_value_out_of_range_is_re_asked_then_fails() {
    // (metric, task answered badly, bad reply, problem named). The other
    // steps are answered well; strict reading refuses what looser reading
    // took (objects with a `verdict`, booleans, "Yes").
    let mut hallucinating = sample();
    hallucinating.context = vec!["a".into(), "b".into(), "c".into()];
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "faithfulness",
            "faithfulness",
            r#"{"statements": ["a", "b", "c"], "verdicts": [1, 0, 1], "score": 1}"#,
            "unexpected key `score`: the answer holds exactly `statements`, `verdicts`",
        ),
        (
            "faithfulness",
            "faithfulness",
            r#"{"statements": ["a", "b", "c"], "verdicts": [true, false, true]}"#,
            "`verdicts` holds true, not 1 or 0",
        ),
        (
            "faithfulness",
            "faithfulness",
            r#"{"statements": ["a", "b", "c"], "verdicts": [1, 2, 1]}"#,
            "`verdicts` holds 2, not 1 or 0",
        ),
        (
            "faithfulness",
            "faithfulness",
            r#"{"statements": ["a", "b", "c"], "verdicts": [{"verdict": 1}, 0, 1]}"#,
            "not 1 or 0",
        ),
        (
            "faithfulness",
            "faithfulness",
            r#"{"statements": ["a", "b", "c"], "verdicts": [1, 0]}"#,
            "the judge gave 2 verdicts for 3 statements",
        ),
        (
            "faithfulness",
            "faithfulness",
            r#"{"statements": ["a", "b", "c"], "verdicts": [0, 0, 0], "verdicts": [1, 1, 1]}"#,
            "the key `verdicts` is given twice",
        ),
        (
            "context_recall",
            "context/reference",
            r#"{"useful": [1], "attributed": ["yes", "no"]}"#,
            "not 1 or 0",
        ),
        (
            "hallucination",
            "hallucination/contradictions",
            r#"{"verdicts": ["Yes", "no", "yes"]}"#,
            "not \"yes\" or \"no\"",
        ),
        (
            "toxicity",
            "toxicity/verdicts",
            r#"{"verdicts": [0, 1, 0, 0]}"#,
            "not \"yes\" or \"no\"",
        ),
        (
            "relevance",
            "rating/relevance",
            r#"{"rating": 6, "reason": "r"}"#,
            "`rating` is 6, not an integer from 1 to 5",
        ),
        (
            "relevance",
            "rating/relevance",
            r#"{"rating": 5}"#,
            "no `reason`",
        ),
        (
            "coherence",
            "rating/coherence",
            r#"{"rating": 5, "reason": "r", "score": 1}"#,
            "unexpected key `score`",
        ),
        (
            "answer_relevancy",
            "answer_relevancy/questions",
            r#"{"questions": ["q"], "noncommittal": false}"#,
            "`noncommittal` is false, not 1 or 0",
        ),
    ];
    for (metric, bad_task, bad, problem) in cases {
        let (bad_task, bad) = (bad_task.to_string(), bad.to_string());
        let server = common::serve(move |_, _, body| {
            if common::task(body) == bad_task {
                Reply::json(200, chat(&bad))
            } else {
                judge_script(body)
            }
        })
        .await;
        let svc = services(&server.url);
        let s = if *metric == "hallucination" {
            &hallucinating
        } else {
            &sample()
        };
        let response = Response::new("Paris is in France, has 10 million people and is a capital.");
        let scored = score(&spec(metric), s, &response, &svc).await;
        let e = scored.score.unwrap_err();
        assert!(
            matches!(
                &e,
                eval_runtime::MetricError::Service(ServiceError::UnusableAnswer {
                    attempts: 3,
                    ..
                })
            ),
            "{metric}: {e:?}"
        );
        assert!(e.to_string().contains(problem), "{metric}: {e}");
        assert_eq!(scored.usage.reasks, 2, "{metric}");
    }
    // The rubric's score, out of range or with a key more.
    for bad in [
        r#"{"score": 1.5, "rationale": "r"}"#,
        r#"{"score": 1, "rationale": "r", "verdicts": [1]}"#,
        r#"{"score": "1", "rationale": "r"}"#,
    ] {
        let server = common::serve(move |_, _, _| Reply::json(200, chat(bad))).await;
        let rubric = MetricSpec::new(
            "rubric",
            &[(
                "rubric",
                eval_runtime::metric_spec::OptionValue::Str("Is it right?".to_string().into()),
            )],
            None,
        )
        .unwrap();
        let scored = score(
            &rubric,
            &sample(),
            &Response::new("x"),
            &services(&server.url),
        )
        .await;
        assert!(scored.score.is_err(), "{bad}");
        assert_eq!((scored.usage.calls, scored.usage.reasks), (3, 2), "{bad}");
    }
}
