//! The judge and embeddings clients against a scripted OpenAI-compatible
//! server on loopback.

use crate::common;

use common::{Reply, chat};
use eval_runtime::services::Cache;
use eval_runtime::services::{Embedder, cosine};
use eval_runtime::services::{Judge, JudgePrompt};
use eval_runtime::services::{ServiceError, Usage};

/// One question; the answer and what it cost.
async fn ask(
    judge: &Judge,
    metric: &str,
    version: u32,
    user: &str,
) -> (Result<serde_json::Value, ServiceError>, Usage) {
    let mut usage = Usage::default();
    let prompt = JudgePrompt::new(metric, version, "Judge it.").block("text", user);
    let answer = judge.ask_json(&prompt, &mut usage).await;
    (answer, usage)
}

/// A judge with no cache: a test's answers never come from an earlier run
/// (whose server may have had the same port).
fn fresh_judge(url: &str, model: &str) -> Result<Judge, ServiceError> {
    Judge::new(url, model).map(|j| j.cache(None))
}

const KEY: &str = "sk-test-VERY-SECRET-1234";

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-judge-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn asks_for_json_deterministically_and_counts_usage() {
    let server = common::serve(|_, _, _| Reply::json(200, chat(r#"{"verdict": 1}"#))).await;
    let judge = fresh_judge(&format!("{}/v1", server.url), "judge-model")
        .unwrap()
        .api_key(Some(KEY.into()));
    let (value, usage) = ask(&judge, "faithfulness", 1, "user").await;
    assert_eq!(value.unwrap()["verdict"], 1);
    assert_eq!(
        (usage.calls, usage.prompt_tokens, usage.completion_tokens),
        (1, 10, 5)
    );
    let log = server.requests.lock().unwrap();
    let (head, body) = &log[0];
    assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
    assert!(
        head.contains(&format!("authorization: Bearer {KEY}")),
        "{head}"
    );
    assert_eq!(body["model"], "judge-model");
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["seed"], 42);
    assert_eq!(
        body["response_format"]["type"], "json_object",
        "no schema, any object"
    );
    assert_eq!(
        body["max_tokens"],
        eval_runtime::__cli::services::DEFAULT_MAX_TOKENS
    );
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(common::block(body, "text").as_deref(), Some("user"));
    assert!(!format!("{judge:?}").contains("SECRET"));
    // What a fingerprint of the judge needs.
    let port = server.url.rsplit(':').next().unwrap();
    assert_eq!(judge.host(), format!("127.0.0.1:{port}"));
    assert_eq!(
        (judge.model(), judge.temperature(), judge.seed()),
        ("judge-model", 0.0, 42)
    );
}

#[tokio::test]
async fn retries_429_honouring_retry_after_and_counts_them() {
    let server = common::serve(|n, _, _| {
        if n <= 2 {
            Reply::With(
                429,
                vec!["retry-after: 0".into()],
                r#"{"error": "slow down"}"#.into(),
            )
        } else {
            Reply::json(200, chat(r#"{"ok": true}"#))
        }
    })
    .await;
    let judge = fresh_judge(&server.url, "m").unwrap();
    let (value, usage) = ask(&judge, "m", 1, "u").await;
    assert_eq!(value.unwrap()["ok"], true);
    assert_eq!((usage.calls, usage.retries), (3, 2));
    assert_eq!(server.count(), 3);
}

#[tokio::test]
async fn gives_up_after_the_retries_with_a_clear_error() {
    let server = common::serve(|_, _, _| Reply::json(503, "overloaded")).await;
    let judge = fresh_judge(&server.url, "m")
        .unwrap()
        .cache(None)
        .max_retries(2);
    let (err, usage) = ask(&judge, "m", 1, "u").await;
    let err = err.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Status {
                status: 503,
                attempts: 3,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(server.count(), 3);
    assert_eq!(
        (usage.calls, usage.retries),
        (3, 2),
        "counted even though it failed"
    );
    let server = common::serve(|_, _, _| Reply::json(400, "bad request")).await;
    let judge = fresh_judge(&server.url, "m").unwrap();
    let err = ask(&judge, "m", 1, "u").await.0.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Status {
                status: 400,
                attempts: 1,
                ..
            }
        ),
        "no retry on 400: {err}"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_json_is_re_asked_then_fails() {
    let server = common::serve(|_, _, _| Reply::json(200, chat("Sure! The verdict is yes."))).await;
    let judge = fresh_judge(&server.url, "m").unwrap();
    let err = ask(&judge, "m", 1, "u").await.0.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::UnusableAnswer {
                attempts: 3,
                problem: eval_runtime::services::AnswerProblem::NotJson(_)
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("the judge's answer could not be used after 3 attempt(s): not valid JSON")
    );
    let log = server.requests.lock().unwrap();
    assert_eq!(log.len(), 3);
    let last = log[2].1["messages"].as_array().unwrap();
    assert_eq!(
        last.len(),
        2,
        "the question again, never the answers before"
    );
    // The question (and its boundary) as first asked, with a correction.
    assert_eq!(last[0], log[0].1["messages"][0]);
    assert!(
        common::task_section(&log[2].1)
            .1
            .contains("Your previous answer was not one JSON object")
    );
}

#[tokio::test]
async fn a_re_ask_can_succeed() {
    let server = common::serve(|n, _, _| {
        Reply::json(
            200,
            chat(if n == 1 {
                "```json\n{oops}\n```"
            } else {
                r#"```json
{"a": 1}
```"#
            }),
        )
    })
    .await;
    let (value, usage) = ask(&fresh_judge(&server.url, "m").unwrap(), "m", 1, "u").await;
    assert_eq!(value.unwrap()["a"], 1);
    assert_eq!((usage.calls, usage.reasks), (2, 1));
}

#[tokio::test]
async fn the_cache_answers_the_second_identical_question() {
    let server = common::serve(|_, _, _| Reply::json(200, chat(r#"{"v": 0.5}"#))).await;
    let dir = temp("cache");
    let judge = fresh_judge(&server.url, "m")
        .unwrap()
        .cache(Some(Cache::new(&dir)));
    let (first, _) = ask(&judge, "faithfulness", 1, "u").await;
    let (second, usage) = ask(&judge, "faithfulness", 1, "u").await;
    assert_eq!(first.unwrap(), second.unwrap());
    assert_eq!((usage.calls, usage.cache_hits), (0, 1));
    assert_eq!(server.count(), 1);
    // The key is the logical prompt, not its random boundary: a judge
    // without a cache sends the same question with another boundary.
    let uncached = fresh_judge(&server.url, "m").unwrap();
    ask(&uncached, "faithfulness", 1, "u").await.0.unwrap();
    {
        let log = server.requests.lock().unwrap();
        let text = |i: usize| {
            log[i].1["messages"][1]["content"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_ne!(text(0), text(1));
        assert_eq!(
            common::data_blocks(&log[0].1),
            common::data_blocks(&log[1].1)
        );
    }
    // Another instruction or block name is another question.
    let mut usage = Usage::default();
    let renamed = JudgePrompt::new("faithfulness", 1, "Judge it.").block("other", "u");
    judge.ask_json(&renamed, &mut usage).await.unwrap();
    assert_eq!((usage.calls, usage.cache_hits), (1, 0));
    assert_eq!(server.count(), 3);
    // Another prompt version, model or question is another entry.
    ask(&judge, "faithfulness", 2, "u").await.0.unwrap();
    ask(&judge, "faithfulness", 1, "other").await.0.unwrap();
    // The same host with another query string (e.g. Azure's api-version) too.
    let other_query = fresh_judge(
        &format!("{}/chat/completions?api-version=2", server.url),
        "m",
    )
    .unwrap()
    .cache(Some(Cache::new(&dir)));
    ask(&other_query, "faithfulness", 1, "u").await.0.unwrap();
    let head = server.requests.lock().unwrap().last().unwrap().0.clone();
    assert!(
        head.starts_with("POST /chat/completions?api-version=2 "),
        "{head}"
    );
    let other_model = fresh_judge(&server.url, "m2")
        .unwrap()
        .cache(Some(Cache::new(&dir)));
    ask(&other_model, "faithfulness", 1, "u").await.0.unwrap();
    assert_eq!(server.count(), 7);
    // An entry that does not parse is ignored, not fatal.
    // The shards of answers (the boundary key beside them stays).
    for shard in std::fs::read_dir(&dir).unwrap() {
        let shard = shard.unwrap().path();
        if !shard.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(shard).unwrap() {
            std::fs::write(entry.unwrap().path(), b"{not json").unwrap();
        }
    }
    let (again, usage) = ask(&judge, "faithfulness", 1, "u").await;
    again.unwrap();
    assert_eq!(usage.calls, 1);
    assert_eq!(server.count(), 8);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn keys_never_appear_in_errors() {
    // A server that echoes the authorization header back, in a 401 and in a bad answer.
    let server = common::serve(|n, head, _| {
        let auth = head
            .lines()
            .find(|l| l.starts_with("authorization"))
            .unwrap_or("")
            .to_string();
        if n == 1 {
            Reply::json(401, format!("invalid key: {auth}"))
        } else {
            Reply::json(200, chat(&format!("not json, {auth}")))
        }
    })
    .await;
    let judge = fresh_judge(&server.url, "m")
        .unwrap()
        .api_key(Some(KEY.into()))
        .max_retries(0);
    let err = ask(&judge, "m", 1, "u").await.0.unwrap_err().to_string();
    assert!(
        err.contains("HTTP 401") && err.contains("<redacted>") && !err.contains("SECRET"),
        "{err}"
    );
    let err = ask(&judge, "m", 1, "u").await.0.unwrap_err().to_string();
    assert!(!err.contains("SECRET"), "{err}");
    let unreachable = fresh_judge("http://user:pw@127.0.0.1:9/v1?key=SECRET", "m")
        .unwrap()
        .max_retries(0);
    let err = ask(&unreachable, "m", 1, "u")
        .await
        .0
        .unwrap_err()
        .to_string();
    assert!(!err.contains("SECRET") && !err.contains("pw"), "{err}");
}

#[tokio::test]
async fn embeddings_in_order_and_cached() {
    let server = common::serve(|_, _, body| {
        // Answer in reverse order, with indexes, as servers may.
        let inputs = body["input"].as_array().unwrap().clone();
        let data: Vec<_> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| {
                let len = t.as_str().unwrap().len() as f64;
                serde_json::json!({"index": i, "embedding": [len, 1.0]})
            })
            .collect();
        Reply::json(
            200,
            serde_json::json!({"data": data, "usage": {"prompt_tokens": 3}}).to_string(),
        )
    })
    .await;
    let dir = temp("embed");
    let embedder = Embedder::new(&format!("{}/v1", server.url), "e")
        .unwrap()
        .cache(Some(Cache::new(&dir)));
    let mut usage = Usage::default();
    let v = embedder.embed(&["a", "abc"], &mut usage).await.unwrap();
    assert_eq!(v, vec![vec![1.0, 1.0], vec![3.0, 1.0]]);
    assert_eq!(usage.calls, 1);
    let mut usage = Usage::default();
    let v2 = embedder.embed(&["abc", "ab"], &mut usage).await.unwrap();
    assert_eq!(v2, vec![vec![3.0, 1.0], vec![2.0, 1.0]]);
    assert_eq!((usage.calls, usage.cache_hits), (1, 1));
    let log = server.requests.lock().unwrap();
    assert!(log[0].0.starts_with("POST /v1/embeddings "));
    assert_eq!(
        log[1].1["input"],
        serde_json::json!(["ab"]),
        "only the uncached text is sent"
    );
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cosine_matches_hand_values() {
    // (1,0)·(1,1) / (1 · √2) = 1/√2
    assert!((cosine(&[1.0, 0.0], &[1.0, 1.0]) - 1.0 / 2f64.sqrt()).abs() < 1e-12);
    assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-12);
    assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
    assert_eq!(cosine(&[1.0], &[1.0, 1.0]), 0.0);
}

#[tokio::test]
async fn answers_of_the_wrong_shape_are_re_asked_and_never_cached() {
    let server = common::serve(|n, _, _| {
        Reply::json(
            200,
            chat(if n == 1 {
                r#"{"statements": "one"}"#
            } else {
                r#"{"statements": ["one"]}"#
            }),
        )
    })
    .await;
    let dir = temp("shape");
    let judge = fresh_judge(&server.url, "m")
        .unwrap()
        .cache(Some(Cache::new(&dir)));
    let check = |v: &serde_json::Value| -> Result<(), String> {
        v["statements"]
            .as_array()
            .map(|_| ())
            .ok_or_else(|| "`statements` is not an array".into())
    };
    let prompt = JudgePrompt::new("m", 1, "s").block("u", "u");
    let mut usage = Usage::default();
    let v = judge
        .ask_checked(&prompt, &mut usage, &check)
        .await
        .unwrap();
    assert_eq!(v["statements"][0], "one");
    assert_eq!((usage.calls, usage.reasks), (2, 1));
    let re_ask = common::task_section(&server.requests.lock().unwrap()[1].1).1;
    assert!(
        re_ask.contains("did not have the keys, types or list lengths"),
        "{re_ask}"
    );
    // Only the valid answer was cached; a cached value of the wrong shape is ignored.
    let mut usage = Usage::default();
    judge
        .ask_checked(&prompt, &mut usage, &check)
        .await
        .unwrap();
    assert_eq!((usage.calls, usage.cache_hits), (0, 1));
    // The shards of answers (the boundary key beside them stays).
    for shard in std::fs::read_dir(&dir).unwrap() {
        let shard = shard.unwrap().path();
        if !shard.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(shard).unwrap() {
            std::fs::write(entry.unwrap().path(), b"null").unwrap();
        }
    }
    let mut usage = Usage::default();
    judge
        .ask_checked(&prompt, &mut usage, &check)
        .await
        .unwrap();
    assert_eq!(usage.cache_hits, 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_prompt_with_a_bad_block_name_is_never_sent() {
    let server = common::serve(|_, _, _| Reply::json(200, chat("{}"))).await;
    let judge = fresh_judge(&server.url, "m").unwrap();
    let mut usage = Usage::default();
    let bad = JudgePrompt::new("m", 1, "s").block("an \"answer\"", "x");
    let err = judge.ask_json(&bad, &mut usage).await.unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Prompt(eval_runtime::services::PromptError::BadBlockName(_))
        ),
        "{err:?}"
    );
    assert_eq!((server.count(), usage.calls), (0, 0));
}
