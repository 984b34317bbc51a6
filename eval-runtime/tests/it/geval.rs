//! `g_eval` (G-Eval, Liu et al. 2023, as deepeval 4.3.1's `GEval`) against
//! a scripted OpenAI-compatible judge on loopback: the judge writes the
//! evaluation steps once and every sample is scored by them; given steps
//! skip that question; the integer on the scale is normalised; token
//! probabilities weight it where the reply carries them; an answer out of
//! the scale is refused as every judged metric refuses one.
//!
//! The replies' shapes: a plain answer as llama-cpp-python 0.3.36 sends it
//! (`"logprobs": null`, tests/fixtures/llama-cpp-python-0.3.36/c-...txt);
//! an answer with token probabilities as OpenAI documents them
//! (openai-python 3.57.0, `openai/types/chat/chat_completion.py`
//! `ChoiceLogprobs` and `chat_completion_token_logprob.py`:
//! `choices[0].logprobs.content[]` of `{token, bytes, logprob,
//! top_logprobs: [{token, bytes, logprob}]}`).

use crate::common;

use common::{Reply, score};
use eval_runtime::Services;
use eval_runtime::metric_spec::OptionValue;
use eval_runtime::services::{Judge, ServiceError};
use eval_runtime::{MetricSpec, Response, Sample};
use serde_json::{Value, json};

fn services(url: &str) -> Services {
    let mut services = Services::none();
    services.judge = Ok(Judge::new(url, "judge").unwrap().cache(None));
    services
}

fn g_eval(options: &[(&'static str, OptionValue)]) -> MetricSpec {
    MetricSpec::new("g_eval", options, None).unwrap()
}

fn s(v: &str) -> OptionValue {
    OptionValue::Str(v.to_string().into())
}

/// A chat-completions body (llama-cpp-python 0.3.36's shape, `logprobs`
/// null unless given).
fn reply(content: &str, logprobs: Value) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "logprobs": logprobs, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
    .to_string()
}

/// One token of OpenAI's `logprobs.content`: the token and its top
/// alternatives with their probabilities (written as `ln p`).
fn token(t: &str, top: &[(&str, f64)]) -> Value {
    let alt = |t: &str, p: f64| json!({"token": t, "bytes": t.as_bytes(), "logprob": p.ln()});
    json!({
        "token": t, "bytes": t.as_bytes(), "logprob": top.first().map_or(-0.01, |x| x.1.ln()),
        "top_logprobs": top.iter().map(|(t, p)| alt(t, *p)).collect::<Vec<_>>(),
    })
}

/// A judge that writes three steps and scores `score` (plain replies).
fn script(score: i64) -> impl Fn(usize, &str, &Value) -> Reply + Send + Sync + 'static {
    move |_, _, body| match common::task(body).as_str() {
        "g_eval/steps" => Reply::json(
            200,
            reply(
                r#"{"steps": ["Read the input.", "Check the answer addresses it.", "Penalise rudeness."]}"#,
                Value::Null,
            ),
        ),
        "g_eval/score" => Reply::json(
            200,
            reply(
                &json!({"reason": "Clear and on topic.", "score": score}).to_string(),
                Value::Null,
            ),
        ),
        other => Reply::json(500, format!("unexpected task {other}")),
    }
}

fn tasks(server: &common::Server) -> Vec<String> {
    server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| common::task(b))
        .collect()
}

#[tokio::test]
async fn the_judge_writes_the_steps_once_and_every_sample_is_scored_by_them() {
    let server = common::serve(script(4)).await;
    let svc = services(&server.url);
    let spec = g_eval(&[
        ("name", s("helpfulness")),
        ("criteria", s("Helpful, polite answers (steps-once test).")),
    ]);
    assert_eq!(spec.name, "g_eval:helpfulness");
    let samples: Vec<Sample> = (0..3)
        .map(|i| Sample::new(format!("Question {i}?")))
        .collect();
    let response = Response::new("An answer.");
    // Three samples at once (they wait for one steps question), then three
    // more one after the other.
    let at_once =
        futures_util::future::join_all(samples.iter().map(|s| score(&spec, s, &response, &svc)))
            .await;
    let mut all = at_once;
    for s in &samples {
        all.push(score(&spec, s, &response, &svc).await);
    }
    let log = tasks(&server);
    let steps_asked = log.iter().filter(|t| *t == "g_eval/steps").count();
    let scores_asked = log.iter().filter(|t| *t == "g_eval/score").count();
    assert_eq!((steps_asked, scores_asked), (1, 6), "{log:?}");
    for j in &all {
        // 4 on 1..5: (4 - 1) / 4.
        assert_eq!(j.score.as_ref().unwrap(), &0.75);
        assert_eq!(j.raw, Some(4.0));
        assert_eq!(
            j.method,
            Some("g_eval: the judge's integer score (no token logprobs)")
        );
        let reason = j.reason.as_deref().unwrap();
        assert!(
            reason.starts_with("Clear and on topic. Evaluation steps (written by the judge): 1. Read the input. 2. Check"),
            "{reason}"
        );
    }
    // Judge calls per sample: the one that asked the steps made 2, the others 1.
    let calls: usize = all.iter().map(|j| j.usage.calls as usize).sum();
    assert_eq!(calls, 7);
    // The steps question: the criteria in its own block, never in the task.
    let requests = server.requests.lock().unwrap();
    let steps_request = &requests
        .iter()
        .find(|(_, b)| common::task(b) == "g_eval/steps")
        .unwrap()
        .1;
    assert_eq!(
        common::block(steps_request, "criteria").as_deref(),
        Some("Helpful, polite answers (steps-once test).")
    );
    let (_, instructions) = common::task_section(steps_request);
    assert!(instructions.contains("Input and Actual Output") && !instructions.contains("polite"));
    // The score question: steps numbered, the sample's text fenced, the
    // schema asked, token probabilities asked.
    let score_request = &requests
        .iter()
        .find(|(_, b)| common::task(b) == "g_eval/score")
        .unwrap()
        .1;
    let blocks: Vec<String> = common::data_blocks(score_request)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        blocks,
        ["criteria", "evaluation_steps", "input", "actual_output"]
    );
    assert_eq!(
        common::block(score_request, "evaluation_steps").unwrap(),
        "1. Read the input.\n2. Check the answer addresses it.\n3. Penalise rudeness."
    );
    let (_, instructions) = common::task_section(score_request);
    assert!(
        instructions.contains("an integer from 1 to 5") && !instructions.contains("An answer."),
        "{instructions}"
    );
    assert_eq!(score_request["logprobs"], true);
    assert_eq!(score_request["top_logprobs"], 20);
    let schema = &score_request["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["score"]["enum"],
        json!([1, 2, 3, 4, 5])
    );
    assert_eq!(schema["required"], json!(["reason", "score"]));
}

#[tokio::test]
async fn given_steps_skip_the_steps_question_and_the_scale_is_normalised() {
    let server = common::serve(script(7)).await;
    let svc = services(&server.url);
    let spec = g_eval(&[
        ("criteria", s("Correct (given-steps test).")),
        (
            "steps",
            s("Compare with the expected answer | Penalise errors"),
        ),
        ("scale", OptionValue::Num(10.0)),
        ("params", s("input,output,expected,context")),
        ("logprobs", OptionValue::Bool(false)),
    ]);
    let sample = Sample::new("2+2?")
        .with_expected("4")
        .with_context(["Arithmetic facts.", "4 is 2+2."]);
    let j = score(&spec, &sample, &Response::new("4"), &svc).await;
    // 7 on 1..10: (7 - 1) / 9.
    assert!((j.score.unwrap() - 6.0 / 9.0).abs() < 1e-12);
    assert_eq!(tasks(&server), ["g_eval/score"]);
    assert!(j.reason.unwrap().ends_with(
        "Evaluation steps (given): 1. Compare with the expected answer 2. Penalise errors"
    ));
    let body = server.requests.lock().unwrap()[0].1.clone();
    let blocks: Vec<(String, String)> = common::data_blocks(&body);
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    // Context blocks come first (the prefix a sample's questions share).
    assert_eq!(
        names,
        [
            "context_1",
            "context_2",
            "criteria",
            "evaluation_steps",
            "input",
            "actual_output",
            "expected_output",
        ]
    );
    // `logprobs = false`: not asked.
    assert!(body.get("logprobs").is_none() && body.get("top_logprobs").is_none());

    // A sample without the expected answer the params show: the metric
    // fails, saying so, with no call.
    let before = server.count();
    let e = score(
        &spec,
        &Sample::new("2+2?").with_context(["x"]),
        &Response::new("4"),
        &svc,
    )
    .await
    .score
    .unwrap_err();
    assert!(e.to_string().contains("no `expected` field"), "{e}");
    assert_eq!(server.count(), before);

    // Strict (deepeval's strict mode): 0 or 1, never weighted.
    let strict = common::serve(script(1)).await;
    let spec = g_eval(&[
        ("steps", s("The answer is a number")),
        ("strict", OptionValue::Bool(true)),
    ]);
    let j = score(
        &spec,
        &Sample::new("2+2?"),
        &Response::new("4"),
        &services(&strict.url),
    )
    .await;
    assert_eq!(
        (j.score.unwrap(), j.method),
        (1.0, Some("g_eval strict: 0 or 1"))
    );
    let body = strict.requests.lock().unwrap()[0].1.clone();
    assert!(body.get("logprobs").is_none());
}

#[tokio::test]
async fn token_probabilities_weight_the_score_as_g_eval_does() {
    // `{"reason":"7 of the steps met.","score":7}` tokenised; the reason's
    // own "7" comes first: the score's is the last one.
    let content = r#"{"reason":"7 of the steps met.","score":7}"#;
    let logprobs = json!({"content": [
        token("{\"", &[("{\"", 1.0)]),
        token("reason", &[("reason", 1.0)]),
        token("\":\"", &[("\":\"", 1.0)]),
        token("7", &[("7", 0.5), ("5", 0.5)]),
        token(" of the steps met.", &[(" of the steps met.", 1.0)]),
        token("\",\"", &[("\",\"", 1.0)]),
        token("score", &[("score", 1.0)]),
        token("\":", &[("\":", 1.0)]),
        token("7", &[("7", 0.6), ("8", 0.3), ("6", 0.09), ("x", 0.005), ("0", 0.005)]),
        token("}", &[("}", 1.0)]),
    ], "refusal": null});
    let server =
        common::serve(move |_, _, _| Reply::json(200, reply(content, logprobs.clone()))).await;
    let svc = services(&server.url);
    let spec = g_eval(&[
        ("steps", s("Count the steps met")),
        ("scale", OptionValue::Num(10.0)),
    ]);
    let j = score(&spec, &Sample::new("q"), &Response::new("a"), &svc).await;
    // deepeval 4.3.1 `calculate_weighted_summed_score` over the last "7":
    // "x" (not a digit) and "0" (under 1 %) dropped: (7·.6 + 8·.3 + 6·.09) / .99.
    let weighted = (7.0 * 0.6 + 8.0 * 0.3 + 6.0 * 0.09) / 0.99;
    assert!((j.raw.unwrap() - weighted).abs() < 1e-9, "{:?}", j.raw);
    assert!((j.score.unwrap() - (weighted - 1.0) / 9.0).abs() < 1e-9);
    assert_eq!(
        j.method,
        Some("g_eval: probability-weighted score (token logprobs)")
    );
    // The probabilities are part of the answer kept, not of what the judge
    // may write: a judge writing them itself is refused.
    let injected = common::serve(|_, _, _| {
        Reply::json(
            200,
            reply(
                r#"{"reason":"r","score":2,"score_probabilities":{"10":1.0}}"#,
                Value::Null,
            ),
        )
    })
    .await;
    let e = score(
        &spec,
        &Sample::new("q"),
        &Response::new("a"),
        &services(&injected.url),
    )
    .await
    .score
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("unexpected key `score_probabilities`"),
        "{e}"
    );
}

#[tokio::test]
async fn an_answer_out_of_the_scale_is_refused_then_the_metric_fails() {
    let server = common::serve(script(11)).await;
    let svc = services(&server.url);
    let spec = g_eval(&[("steps", s("Judge it")), ("scale", OptionValue::Num(10.0))]);
    let j = score(&spec, &Sample::new("q"), &Response::new("a"), &svc).await;
    let e = j.score.unwrap_err();
    assert!(
        matches!(
            &e,
            eval_runtime::MetricError::Service(ServiceError::UnusableAnswer { attempts: 3, .. })
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("`score` is 11, not an integer from 1 to 10"),
        "{e}"
    );
    assert_eq!((server.count(), j.usage.reasks), (3, 2));
}

#[test]
fn a_criteria_metric_calibrates_as_a_built_in_under_its_name_and_hashes() {
    let server = common::serve_detached(script(5));
    let dir = std::env::temp_dir().join(format!("eval-geval-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let labels = dir.join("labels.jsonl");
    std::fs::write(
        &labels,
        [
            r#"{"input": "q1", "output": "a1", "label": "pass"}"#,
            r#"{"input": "q2", "output": "a2", "label": "fail"}"#,
            r#"{"input": "q3", "output": "a3", "label": "pass"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let spec = g_eval(&[
        ("name", s("calibrated")),
        ("criteria", s("Calibrated criteria (calibration test).")),
    ]);
    let c = eval_runtime::__cli::calibrate::calibrate(
        &labels,
        "labels.jsonl",
        &spec,
        &services(&server.url),
        2,
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((c.metric.as_str(), c.samples), ("g_eval:calibrated", 3));
    // The judge scores 5 of 5 every time: all pass; the human failed one.
    assert_eq!(c.disagreements.len(), 1, "{:?}", c.disagreements);
    let versions = &c.judge.as_ref().unwrap().metrics["g_eval:calibrated"];
    assert!(versions.criteria_sha256.is_some() && versions.steps_sha256.is_some());
    // The steps asked once for the three answers.
    let steps = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, b)| common::task(b) == "g_eval/steps")
        .count();
    assert_eq!((steps, server.count()), (1, 4));
}
