//! The judge against servers that behave as real model servers do, each
//! behaviour scripted from the server's source: llama-cpp-python 0.3.36's
//! OpenAI-compatible server (`llama_cpp/server/app.py`, `errors.py`,
//! `llama_chat_format.py`, `llama.py`; `pip download --no-deps
//! llama-cpp-python==0.3.36`):
//!
//! * an answer stopped at `max_tokens` keeps the text generated so far and
//!   `finish_reason: "length"` (`llama.py`, `_create_completion`);
//! * `response_format` is a TypedDict whose `type` is `"text"` or
//!   `"json_object"`, with an optional `"schema"` turned into a grammar
//!   (`llama_types.ChatCompletionRequestResponseFormat`,
//!   `_grammar_for_response_format`); `{"type": "json_schema"}` fails the
//!   request's validation, which its route handler catches and answers
//!   `500` with `{"error": {"message": str(exc), "type":
//!   "internal_server_error", ...}}` (`errors.py`, `RouteErrorHandler`);
//! * a server that ignores `response_format` (and a model that talks
//!   around its JSON).

use crate::common;

use common::{Reply, chat};
use eval_runtime::__cli::services::MAX_TOKENS_CAP;
use eval_runtime::services::{Cache, Judge, JudgePrompt, ServiceError, Structured, Usage};
use serde_json::{Value, json};

/// A llama-cpp-python chat completion: `content`, `finish_reason`.
fn completion(content: &str, finish: &str, completion_tokens: u64) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "smollm2",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "logprobs": null, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": completion_tokens, "total_tokens": 120 + completion_tokens}
    })
    .to_string()
}

/// llama-cpp-python's 500 for a `response_format` of type `json_schema`:
/// the pydantic validation error, as `str(exc)`, in its error body.
const LLAMA_CPP_PYTHON_500: &str = r#"{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}]","type":"internal_server_error","param":null,"code":null}}"#;

fn question() -> JudgePrompt {
    JudgePrompt::new(
        "check",
        1,
        "Say whether the answer is polite: {\"polite\": 0 or 1}.",
    )
    .block("answer", "Thanks for asking!")
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-judge-real-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn bodies(server: &common::Server) -> Vec<Value> {
    server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| b.clone())
        .collect()
}

#[tokio::test]
async fn every_request_is_bounded_and_a_cut_off_answer_is_named_and_never_re_asked_unchanged() {
    // Cut off at whatever max_tokens the request carries.
    let server = common::serve(|_, _, body| {
        let max = body["max_tokens"].as_u64().unwrap_or(0);
        Reply::json(200, completion("{\"polite\": ", "length", max))
    })
    .await;
    let judge = Judge::new(&server.url, "m").unwrap().cache(None);
    let mut usage = Usage::default();
    let err = judge.ask_json(&question(), &mut usage).await.unwrap_err();
    // The question's own bound, then once with room to the cap, then the error.
    let sent = bodies(&server);
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert_eq!(sent[0]["max_tokens"], 1024);
    assert_eq!(sent[1]["max_tokens"], MAX_TOKENS_CAP);
    assert_eq!(
        sent[0]["messages"], sent[1]["messages"],
        "the question as it was"
    );
    assert!(
        matches!(
            err,
            ServiceError::CutOff {
                max_tokens: MAX_TOKENS_CAP,
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(
            "the judge's answer was cut off at 2048 tokens: raise EVAL_JUDGE_MAX_TOKENS"
        ),
        "{text}"
    );
    assert!(text.contains("the answer began: \"{\"polite\":"), "{text}");
    // With the setting, the bound is the setting's and is never raised.
    let fixed = Judge::new(&server.url, "m")
        .unwrap()
        .cache(None)
        .max_tokens(Some(200));
    let err = fixed
        .ask_json(&question(), &mut Usage::default())
        .await
        .unwrap_err();
    let sent = bodies(&server);
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2]["max_tokens"], 200);
    assert!(
        err.to_string().starts_with(
            "the judge's answer was cut off at 200 tokens: raise EVAL_JUDGE_MAX_TOKENS"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_re_ask_is_the_question_with_a_correction_and_does_not_grow() {
    // A server that ignores response_format, with a model that talks.
    let server = common::serve(|_, _, _| {
        Reply::json(
            200,
            completion("Sure! Here it is: {\"polite\": 1}", "stop", 12),
        )
    })
    .await;
    let judge = Judge::new(&server.url, "m").unwrap().cache(None);
    let mut usage = Usage::default();
    let err = judge.ask_json(&question(), &mut usage).await.unwrap_err();
    let sent = bodies(&server);
    assert_eq!(sent.len(), 3);
    assert_eq!(usage.reasks, 2);
    for body in &sent {
        assert_eq!(
            body["messages"].as_array().unwrap().len(),
            2,
            "no transcript"
        );
        assert!(body["max_tokens"].as_u64().is_some());
    }
    let user = |i: usize| sent[i]["messages"][1]["content"].as_str().unwrap().len();
    assert_eq!(
        user(1),
        user(2),
        "the second re-ask is no longer than the first"
    );
    assert!(user(1) > user(0));
    let (_, instructions) = common::task_section(&sent[1]);
    assert!(
        instructions.starts_with("Say whether the answer is polite")
            && instructions.contains("Your previous answer was not one JSON object"),
        "{instructions}"
    );
    assert_eq!(common::data_blocks(&sent[1]), common::data_blocks(&sent[0]));
    assert!(
        !sent[1]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Sure!"),
        "the judge's words are never sent back"
    );
    // What was refused is shown with the judge's words, on one line.
    let text = err.to_string();
    assert!(
        text.contains("not valid JSON") && text.contains("the judge wrote \"Sure! Here it is:"),
        "{text}"
    );
}

#[tokio::test]
async fn auto_falls_back_from_a_refused_json_schema_once_and_remembers() {
    // llama-cpp-python: json_schema answered 500; json_object with a schema taken.
    let server = common::serve(|_, _, body| {
        let format = &body["response_format"];
        match format["type"].as_str() {
            Some("json_schema") => Reply::json(500, LLAMA_CPP_PYTHON_500),
            Some("json_object") if format.get("schema").is_some() => {
                Reply::json(200, completion("{\"polite\": 1}", "stop", 6))
            }
            _ => Reply::json(400, "{\"error\": \"unexpected\"}"),
        }
    })
    .await;
    // A 5xx is retried (4 times by default), but not while a mode is tried
    // for the first time: a refusal of the mode costs one call.
    let judge = Judge::new(&server.url, "m")
        .unwrap()
        .cache(None)
        .max_retries(1);
    assert_eq!(judge.structured_mode(), Structured::JsonSchema);
    let schema_answer = |v: &Value| -> Result<(), String> {
        v["polite"]
            .as_u64()
            .map(|_| ())
            .ok_or_else(|| "no polite".into())
    };
    struct Polite<F>(F);
    impl<F: Fn(&Value) -> Result<(), String> + Sync> eval_runtime::__cli::services::Answer
        for Polite<F>
    {
        fn check(&self, v: &Value) -> Result<(), String> {
            (self.0)(v)
        }
        fn schema(&self) -> Option<Value> {
            Some(
                json!({"type": "object", "properties": {"polite": {"type": "integer", "enum": [0, 1]}}, "required": ["polite"], "additionalProperties": false}),
            )
        }
        fn max_tokens(&self) -> Option<u32> {
            Some(64)
        }
    }
    let answer = Polite(schema_answer);
    for i in 0..3 {
        let prompt = question().block("n", i.to_string());
        let v = judge
            .ask_checked(&prompt, &mut Usage::default(), &answer)
            .await
            .unwrap();
        assert_eq!(v["polite"], 1);
    }
    let sent = bodies(&server);
    let kinds: Vec<&str> = sent
        .iter()
        .map(|b| b["response_format"]["type"].as_str().unwrap_or(""))
        .collect();
    // json_schema refused once (not retried); then json_object + schema
    // for the rest of the run.
    assert_eq!(
        kinds,
        ["json_schema", "json_object", "json_object", "json_object"]
    );
    assert_eq!(sent[0]["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        sent[2]["response_format"]["schema"],
        eval_runtime::__cli::services::Answer::schema(&answer).unwrap()
    );
    assert!(sent.iter().all(|b| b["max_tokens"] == 64));
    assert_eq!(judge.structured_mode(), Structured::JsonObjectSchema);
    // A mode set by hand is never changed: the 500 is the error.
    let fixed = Judge::new(&server.url, "m")
        .unwrap()
        .cache(None)
        .structured(Structured::JsonSchema)
        .max_retries(0);
    let err = fixed
        .ask_checked(&question(), &mut Usage::default(), &answer)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Status { status: 500, .. }),
        "{err}"
    );
    assert_eq!(fixed.structured_mode(), Structured::JsonSchema);
}

#[tokio::test]
async fn with_the_cache_off_two_runs_still_send_byte_identical_prompts() {
    // EVAL_CACHE=off keeps no answers, but the key stays in the cache's
    // directory: a rerun sends the same bytes.
    let server = common::serve(|_, _, _| Reply::json(200, chat(r#"{"polite": 1}"#))).await;
    let dir = temp("key-cache-off");
    let url = server.url.clone();
    let cache_dir = dir.display().to_string();
    let run = || {
        let config = eval_runtime::Config::from_vars(
            |name| {
                Ok(match name {
                    "EVAL_JUDGE_URL" => Some(url.clone()),
                    "EVAL_JUDGE_MODEL" => Some("m".into()),
                    "EVAL_CACHE" => Some("off".into()),
                    "EVAL_CACHE_DIR" => Some(cache_dir.clone()),
                    _ => None,
                })
            },
            &[],
        )
        .unwrap();
        Judge::from_config(&config).unwrap()
    };
    let prompt = question().numbered("context", &["Paris is the capital of France."]);
    for _ in 0..2 {
        run()
            .ask_json(&prompt, &mut Usage::default())
            .await
            .unwrap();
    }
    let sent = bodies(&server);
    assert_eq!(sent.len(), 2, "no answer cached");
    assert_eq!(
        serde_json::to_vec(&sent[0]).unwrap(),
        serde_json::to_vec(&sent[1]).unwrap(),
        "byte for byte"
    );
    assert!(dir.join("judge-boundary.key").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn two_runs_send_byte_identical_prompts() {
    let server = common::serve(|_, _, _| Reply::json(200, chat(r#"{"polite": 1}"#))).await;
    let dir = temp("key");
    let run = |dir: &std::path::Path| {
        Judge::new(&server.url, "m")
            .unwrap()
            .cache(Some(Cache::new(dir)))
    };
    let prompt = question().numbered("context", &["Paris is the capital of France."]);
    run(&dir)
        .ask_json(&prompt, &mut Usage::default())
        .await
        .unwrap();
    // A second run: the answers gone, the key kept.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        }
    }
    let key = dir.join("judge-boundary.key");
    let text = std::fs::read_to_string(&key).unwrap();
    assert_eq!(text.trim().len(), 64, "32 bytes, in hexadecimal");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    run(&dir)
        .ask_json(&prompt, &mut Usage::default())
        .await
        .unwrap();
    // Another machine (another key): another boundary.
    let other = temp("other-key");
    run(&other)
        .ask_json(&prompt, &mut Usage::default())
        .await
        .unwrap();
    let sent = bodies(&server);
    assert_eq!(sent.len(), 3);
    assert_eq!(
        serde_json::to_vec(&sent[0]).unwrap(),
        serde_json::to_vec(&sent[1]).unwrap(),
        "byte for byte"
    );
    assert_ne!(sent[0]["messages"], sent[2]["messages"]);
    assert_eq!(common::data_blocks(&sent[0]), common::data_blocks(&sent[2]));
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(other);
}

#[tokio::test]
async fn the_settings_set_the_bound_and_the_mode() {
    let server = common::serve(|_, _, _| Reply::json(200, chat(r#"{"polite": 1}"#))).await;
    let url = server.url.clone();
    let config = eval_runtime::Config::from_vars(
        |name| {
            Ok(match name {
                "EVAL_JUDGE_URL" => Some(url.clone()),
                "EVAL_JUDGE_MAX_TOKENS" => Some("300".into()),
                "EVAL_JUDGE_STRUCTURED" => Some("none".into()),
                "EVAL_CACHE" => Some("off".into()),
                _ => None,
            })
        },
        &[],
    )
    .unwrap();
    let judge = Judge::from_config(&config).unwrap();
    judge
        .ask_json(&question(), &mut Usage::default())
        .await
        .unwrap();
    let sent = bodies(&server);
    assert_eq!(sent[0]["max_tokens"], 300);
    assert!(sent[0].get("response_format").is_none(), "{}", sent[0]);
    let bad = eval_runtime::Config::from_vars(
        |name| Ok((name == "EVAL_JUDGE_STRUCTURED").then(|| "xml".to_string())),
        &[],
    )
    .unwrap_err();
    assert!(bad.to_string().contains("EVAL_JUDGE_STRUCTURED"), "{bad}");
}

#[tokio::test]
async fn no_judged_metric_sends_a_request_without_max_tokens_or_its_schema() {
    // Any answer: only the requests are looked at.
    let server = common::serve(|_, _, _| Reply::json(200, chat("{}"))).await;
    let services = eval_runtime::Services::none()
        .with_judge(Judge::new(&server.url, "m").unwrap().cache(None))
        .with_embedder(
            eval_runtime::services::Embedder::new(&server.url, "e")
                .unwrap()
                .cache(None),
        );
    let mut sample = eval_runtime::Sample::new("What is the capital of France?")
        .with_expected("Paris is the capital of France.")
        .with_context(["Paris is the capital and largest city of France."]);
    sample.extra.insert("rubric".into(), json!("Names Paris."));
    let response = eval_runtime::Response::new("Paris. I think it is the best city.");
    let metrics = [
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
    ];
    for metric in metrics {
        let spec = eval_runtime::MetricSpec::new(metric, &[], None).unwrap();
        let _ = eval_runtime::score(&spec, &sample, &response, &services).await;
    }
    let sent: Vec<Value> = bodies(&server)
        .into_iter()
        .filter(|b| b.get("messages").is_some())
        .collect();
    // Every metric asked (each re-asked twice after the empty answer).
    assert!(sent.len() >= 3 * metrics.len(), "{}", sent.len());
    for body in &sent {
        let max = body["max_tokens"].as_u64().unwrap_or(0);
        assert!((64..=2048).contains(&max), "{max}: {body}");
        let format = &body["response_format"];
        assert_eq!(format["type"], "json_schema", "{body}");
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert!(!schema["required"].as_array().unwrap().is_empty());
    }
}
