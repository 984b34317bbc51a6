//! Model-based metrics against a scripted OpenAI-compatible judge and
//! embeddings server on loopback, compared with values computed by hand
//! from ragas' formulas.

use crate::common;

use crate::common::{score, string_similarity};
use common::{Reply, chat};
use eval_runtime::Services;
use eval_runtime::services::Cache;
use eval_runtime::services::Embedder;
use eval_runtime::services::Judge;
use eval_runtime::services::ServiceError;
use eval_runtime::{MetricSpec, Response, Sample};

fn spec(name: &str) -> MetricSpec {
    MetricSpec::new(name, &[], None).unwrap()
}

/// A judge that answers by task, in exactly the shape each asks for
/// (bare flags, "yes"/"no").
fn judge_script(n: usize, body: &serde_json::Value) -> Reply {
    let _ = n;
    let content = match common::task(body).as_str() {
        "faithfulness" => {
            r#"{"statements": ["Paris is in France.", "Paris has 10 million people.", "Paris is a capital."], "verdicts": [1, 0, 1]}"#
        }
        // chunks 1..4: relevant, not, relevant, relevant (as many as sent);
        // the reference's statements 1..4: attributed, attributed, not,
        // attributed.
        "context/reference" => {
            let chunks = common::data_blocks(body)
                .iter()
                .filter(|(n, _)| n.starts_with("context_"))
                .count();
            let useful: Vec<u8> = [1, 0, 1, 1].into_iter().cycle().take(chunks).collect();
            return Reply::json(
                200,
                chat(
                    &serde_json::json!({"useful": useful, "attributed": [1, 1, 0, 1]}).to_string(),
                ),
            );
        }
        "answer_relevancy/questions" => {
            r#"{"questions": ["What is the capital of France?", "Which city is France's capital?", "Where is Paris?"], "noncommittal": 0}"#
        }
        "hallucination/contradictions" => r#"{"verdicts": ["yes", "no", "yes"]}"#,
        "toxicity/opinions" | "bias/opinions" => {
            r#"{"opinions": ["Paris is overrated.", "Tourists are idiots.", "The food is great.", "Locals are rude."]}"#
        }
        "toxicity/verdicts" => r#"{"verdicts": ["no", "yes", "no", "no"]}"#,
        "bias/verdicts" => r#"{"verdicts": ["no", "yes", "no", "yes"]}"#,
        _ => "{}",
    };
    Reply::json(200, chat(content))
}

fn services(judge_url: Option<&str>, embed_url: Option<&str>) -> Services {
    let mut services = Services::none();
    services.judge = match judge_url {
        Some(u) => Ok(Judge::new(u, "judge").unwrap().cache(None)),
        None => Err(ServiceError::NotConfigured {
            what: "LLM judge",
            hint: "test".into(),
        }),
    };
    services.embedder = match embed_url {
        Some(u) => Ok(Embedder::new(u, "embed").unwrap().cache(None)),
        None => Err(ServiceError::NotConfigured {
            what: "embeddings",
            hint: "test".into(),
        }),
    };
    services
}

fn sample() -> Sample {
    let mut s = Sample::new("What is Paris?")
        .with_expected("Paris is the capital of France.")
        .with_context(["Paris is the capital and largest city of France."]);
    s.reference_contexts = vec![
        "Paris is the capital of France".into(),
        "Berlin is in Germany".into(),
    ];
    s
}

#[tokio::test]
async fn faithfulness_is_supported_statements_over_statements() {
    let server = common::serve(|n, _, body| judge_script(n, body)).await;
    let svc = services(Some(&server.url), None);
    let response = Response::new("Paris is in France, has 10 million people and is a capital.");
    let scored = score(&spec("faithfulness"), &sample(), &response, &svc).await;
    // 3 statements, verdicts 1, 0, 1: 2/3.
    assert!((scored.score.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    // One question: the statements and a verdict on each.
    assert_eq!(scored.usage.calls, 1);
    let log = server.requests.lock().unwrap();
    // The context first (the prefix of the sample's questions on it), then
    // the question and the answer, each in its own data block.
    assert_eq!(
        common::data_blocks(&log[0].1),
        [
            (
                "context_1".to_string(),
                "Paris is the capital and largest city of France.".to_string()
            ),
            ("question".to_string(), "What is Paris?".to_string()),
            ("answer".to_string(), response.output.clone()),
        ]
    );
    assert_eq!(common::task(&log[0].1), "faithfulness");
}

#[tokio::test]
async fn faithfulness_uses_the_agents_context_and_says_what_is_missing() {
    let server = common::serve(|n, _, body| judge_script(n, body)).await;
    let svc = services(Some(&server.url), None);
    let response = Response::new("x").with_context(["Retrieved by the agent."]);
    score(&spec("faithfulness"), &sample(), &response, &svc)
        .await
        .score
        .unwrap();
    // The context the agent returned wins over the sample's, when it has one.
    let verdicts = server.requests.lock().unwrap()[0].1.clone();
    assert_eq!(
        common::block(&verdicts, "context_1").as_deref(),
        Some("Retrieved by the agent.")
    );
    assert_eq!(common::block(&verdicts, "context_2"), None);

    let no_context = Sample::new("q").with_expected("a");
    let e = score(
        &spec("faithfulness"),
        &no_context,
        &Response::new("x"),
        &svc,
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs context"), "{e}");
    let e = score(
        &spec("faithfulness"),
        &sample(),
        &Response::new("x"),
        &services(None, None),
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("`faithfulness` needs an LLM judge (set EVAL_JUDGE_URL"),
        "{e}"
    );
}

#[tokio::test]
async fn context_recall_with_a_judge_and_offline() {
    let server = common::serve(|n, _, body| judge_script(n, body)).await;
    let scored = score(
        &spec("context_recall"),
        &sample(),
        &Response::new("x"),
        &services(Some(&server.url), None),
    )
    .await;
    // attributed 1, 1, 0, 1 of 4.
    assert!((scored.score.unwrap() - 0.75).abs() < 1e-9);
    assert_eq!(scored.method, None);

    // Offline (NonLLMContextRecall): each reference context is recalled when its
    // best Levenshtein similarity to a retrieved context is above 0.5.
    let s = sample();
    let retrieved = "Paris is the capital and largest city of France.";
    let sims: Vec<f64> = s
        .reference_contexts
        .iter()
        .map(|r| string_similarity(retrieved, r))
        .collect();
    let expected = sims.iter().filter(|x| **x > 0.5).count() as f64 / 2.0;
    let offline = score(
        &spec("context_recall"),
        &s,
        &Response::new("x"),
        &services(None, None),
    )
    .await;
    assert_eq!(offline.score.unwrap(), expected);
    assert!(offline.method.unwrap().contains("NonLLMContextRecall"));
    assert!(sims[0] > 0.5 && sims[1] <= 0.5, "{sims:?}");

    let mut bare = sample();
    bare.reference_contexts.clear();
    let e = score(
        &spec("context_recall"),
        &bare,
        &Response::new("x"),
        &services(None, None),
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("needs an LLM judge (set EVAL_JUDGE_URL) or, offline, `reference_contexts`"),
        "{e}"
    );
}

#[tokio::test]
async fn answer_similarity_is_the_cosine_of_embeddings_or_levenshtein_offline() {
    let server = common::serve(|_, _, body| {
        let data: Vec<_> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let v = if t.as_str().unwrap().starts_with("Paris is the capital") {
                    [1.0, 1.0]
                } else {
                    [1.0, 0.0]
                };
                serde_json::json!({"index": i, "embedding": v})
            })
            .collect();
        Reply::json(200, serde_json::json!({"data": data}).to_string())
    })
    .await;
    let online = score(
        &spec("answer_similarity"),
        &sample(),
        &Response::new("Paris."),
        &services(None, Some(&server.url)),
    )
    .await;
    // (1,0)·(1,1) / (1·√2)
    assert!((online.score.unwrap() - 1.0 / 2f64.sqrt()).abs() < 1e-9);
    assert_eq!(online.method, None);

    let s = Sample::new("q").with_expected("sitting");
    let offline = score(
        &spec("answer_similarity"),
        &s,
        &Response::new("kitten"),
        &services(None, None),
    )
    .await;
    assert!((offline.score.unwrap() - (1.0 - 3.0 / 7.0)).abs() < 1e-9);
    assert!(
        offline
            .method
            .unwrap()
            .starts_with("offline: ragas NonLLMStringSimilarity")
    );
}

#[tokio::test]
async fn a_judge_that_throttles_twice_still_scores_and_counts_retries() {
    let server = common::serve(|n, _, body| {
        if n <= 2 {
            Reply::With(429, vec!["retry-after: 0".into()], "{}".into())
        } else {
            judge_script(n, body)
        }
    })
    .await;
    let scored = score(
        &spec("context_recall"),
        &sample(),
        &Response::new("x"),
        &services(Some(&server.url), None),
    )
    .await;
    assert!((scored.score.unwrap() - 0.75).abs() < 1e-9);
    assert_eq!((scored.usage.calls, scored.usage.retries), (3, 2));
}

#[tokio::test]
async fn a_judge_that_never_answers_json_fails_that_metric_only() {
    let server = common::serve(|_, _, _| Reply::json(200, chat("I think it is faithful."))).await;
    let svc = services(Some(&server.url), None);
    let s = sample();
    let response = Response::new("Paris is the capital of France.");
    let faith = score(&spec("faithfulness"), &s, &response, &svc).await;
    let e = faith.score.unwrap_err();
    assert!(
        matches!(
            e,
            eval_runtime::MetricError::Service(ServiceError::UnusableAnswer { .. })
        ),
        "a judge failure stays typed: {e:?}"
    );
    let e = e.to_string();
    assert!(
        e.starts_with("the judge's answer could not be used after 3 attempt(s): not valid JSON"),
        "{e}"
    );
    assert_eq!(faith.usage.reasks, 2);
    // In a report, only that metric fails; the sample's other metrics score.
    let report = eval_runtime::evaluate_with(
        "rag::x".into(),
        &s,
        &[spec("contains"), spec("faithfulness")],
        std::time::Duration::from_secs(10),
        async { Ok(response.clone()) },
        &svc,
    )
    .await;
    assert!(report.error.is_none());
    assert_eq!(report.metrics[0].score, Some(1.0));
    assert!(report.metrics[0].passed);
    assert!(!report.metrics[1].passed);
    let text = report.render();
    assert!(
        text.contains("could not be used after 3 attempt(s): not valid JSON"),
        "{text}"
    );
    assert!(
        text.contains("judge: 3 call(s), 0 retr(ies), 2 re-ask(s)"),
        "{text}"
    );
}

#[tokio::test]
async fn a_second_identical_run_makes_no_judge_or_embedding_calls() {
    let judge = common::serve(|n, _, body| judge_script(n, body)).await;
    let embed = common::serve(|_, _, body| {
        let n = body["input"].as_array().unwrap().len();
        let data: Vec<_> = (0..n)
            .map(|i| serde_json::json!({"index": i, "embedding": [1.0, i as f64]}))
            .collect();
        Reply::json(200, serde_json::json!({"data": data}).to_string())
    })
    .await;
    let dir = std::env::temp_dir().join(format!("eval-ragas-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let svc = Services::none()
        .with_judge(
            Judge::new(&judge.url, "j")
                .unwrap()
                .cache(Some(Cache::new(&dir))),
        )
        .with_embedder(
            Embedder::new(&embed.url, "e")
                .unwrap()
                .cache(Some(Cache::new(&dir))),
        );
    let specs = [
        spec("faithfulness"),
        spec("context_recall"),
        spec("answer_similarity"),
    ];
    let response = Response::new("Paris is a capital.");
    let mut first = Vec::new();
    for s in &specs {
        let scored = score(s, &sample(), &response, &svc).await;
        // Judge calls and embedding calls are counted apart.
        let (judge_calls, embed_calls) = match s.name.as_str() {
            "faithfulness" => (1, 0),
            "context_recall" => (1, 0),
            _ => (0, 1),
        };
        assert_eq!(
            (scored.usage.calls, scored.embeddings.calls),
            (judge_calls, embed_calls),
            "{}",
            s.name
        );
        first.push(scored.score.unwrap());
    }
    let calls = (judge.count(), embed.count());
    assert_eq!(calls, (2, 1));
    for (s, before) in specs.iter().zip(&first) {
        let again = score(s, &sample(), &response, &svc).await;
        assert_eq!(again.score.unwrap(), *before);
        assert_eq!(again.usage.calls + again.embeddings.calls, 0);
        assert!(again.usage.cache_hits + again.embeddings.cache_hits > 0);
    }
    assert_eq!(
        (judge.count(), embed.count()),
        calls,
        "no call the second time"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn context_precision_judged_and_offline() {
    let server = common::serve(|n, _, body| judge_script(n, body)).await;
    let response = Response::new("x").with_context([
        "Paris is the capital of France",
        "Bananas are yellow",
        "c",
        "d",
    ]);
    let judged = score(
        &spec("context_precision"),
        &sample(),
        &response,
        &services(Some(&server.url), None),
    )
    .await;
    assert!((judged.score.unwrap() - (1.0 + 2.0 / 3.0 + 3.0 / 4.0) / 3.0).abs() < 1e-9);
    // Offline: chunk 1 matches a reference context (similarity > 0.5), the rest do not.
    let offline = score(
        &spec("context_precision"),
        &sample(),
        &response,
        &services(None, None),
    )
    .await;
    assert_eq!(offline.score.unwrap(), 1.0);
    assert!(
        offline
            .method
            .unwrap()
            .contains("NonLLMContextPrecisionWithReference")
    );
    let swapped =
        Response::new("x").with_context(["Bananas are yellow", "Paris is the capital of France"]);
    let offline = score(
        &spec("context_precision"),
        &sample(),
        &swapped,
        &services(None, None),
    )
    .await;
    assert_eq!(
        offline.score.unwrap(),
        0.5,
        "the relevant chunk ranked second: precision@2 = 1/2"
    );
}

#[tokio::test]
async fn answer_relevancy_is_mean_cosine_and_zero_when_noncommittal() {
    let judge = common::serve(|n, _, body| judge_script(n, body)).await;
    let embed = common::serve(|_, _, body| {
        // input -> (1, 0); generated questions -> (1, 0), (1, 1), (0, 1)
        let data: Vec<_> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let v = match t.as_str().unwrap() {
                    "What is Paris?" | "What is the capital of France?" => [1.0, 0.0],
                    "Which city is France's capital?" => [1.0, 1.0],
                    _ => [0.0, 1.0],
                };
                serde_json::json!({"index": i, "embedding": v})
            })
            .collect();
        Reply::json(200, serde_json::json!({"data": data}).to_string())
    })
    .await;
    let svc = services(Some(&judge.url), Some(&embed.url));
    let scored = score(
        &spec("answer_relevancy"),
        &sample(),
        &Response::new("Paris is the capital."),
        &svc,
    )
    .await;
    // (1 + 1/√2 + 0) / 3
    assert!((scored.score.unwrap() - (1.0 + 1.0 / 2f64.sqrt()) / 3.0).abs() < 1e-9);

    let evasive = common::serve(|_, _, _| {
        Reply::json(
            200,
            chat(r#"{"questions": ["What is Paris?"], "noncommittal": 1}"#),
        )
    })
    .await;
    let scored = score(
        &spec("answer_relevancy"),
        &sample(),
        &Response::new("I don't know."),
        &services(Some(&evasive.url), Some(&embed.url)),
    )
    .await;
    assert_eq!(scored.score.unwrap(), 0.0);
    let e = score(
        &spec("answer_relevancy"),
        &sample(),
        &Response::new("x"),
        &services(Some(&judge.url), None),
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs embeddings (set EVAL_EMBED_URL"), "{e}");
}

#[tokio::test]
async fn deepeval_hallucination_toxicity_and_bias() {
    let server = common::serve(|n, _, body| judge_script(n, body)).await;
    let svc = services(Some(&server.url), None);
    let mut s = sample();
    s.context = vec!["a".into(), "b".into(), "c".into()];
    // verdicts yes, no, yes: 1 contradicted of 3.
    let h = score(&spec("hallucination"), &s, &Response::new("x"), &svc).await;
    assert!((h.score.unwrap() - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(spec("hallucination").op.to_string(), "<=");
    // 4 opinions; toxicity flags 1 -> deepeval 0.25, reported 0.75; bias flags 2 -> 0.5.
    let t = score(&spec("toxicity"), &s, &Response::new("x"), &svc).await;
    assert!((t.score.unwrap() - 0.75).abs() < 1e-9);
    assert_eq!(t.raw, Some(0.25));
    let b = score(&spec("bias"), &s, &Response::new("x"), &svc).await;
    assert!((b.score.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(b.raw, Some(0.5));
    // Without opinions there is nothing toxic: 1.0 (deepeval 0).
    let calm = common::serve(|_, _, _| Reply::json(200, chat(r#"{"opinions": []}"#))).await;
    let t = score(
        &spec("toxicity"),
        &s,
        &Response::new("x"),
        &services(Some(&calm.url), None),
    )
    .await;
    assert_eq!((t.score.unwrap(), t.raw), (1.0, Some(0.0)));
    assert_eq!(calm.count(), 1);
}

#[tokio::test]
async fn rubric_fills_placeholders_and_names_missing_variables() {
    let server =
        common::serve(|_, _, _| Reply::json(200, chat(r#"{"score": 0.8, "rationale": "ok"}"#)))
            .await;
    let svc = services(Some(&server.url), None);
    let rubric = |text: &str| {
        MetricSpec::new(
            "rubric",
            &[(
                "rubric",
                eval_runtime::metric_spec::OptionValue::Str(text.to_string().into()),
            )],
            None,
        )
        .unwrap()
    };
    let mut s = Sample::new("Draw a cat").with_expected("a cat");
    s.rubric_vars
        .insert("reference_ascii".into(), " /\\_/\\ ".into());
    let scored = score(&rubric("Task: {input}\nSubmission: {submission}\nReference: {reference_ascii}\nExpected: {ground_truth}\nLiteral {{braces}} and ```{YOUR ART}```"), &s, &Response::new("=^.^="), &svc).await;
    assert!((scored.score.unwrap() - 0.8).abs() < 1e-9);
    // The rubric is the criteria, in its own block; each placeholder names
    // the block that holds its value, so no sample text is written outside
    // a block.
    let request = server.requests.lock().unwrap()[0].1.clone();
    let blocks = common::data_blocks(&request);
    let pairs: Vec<(&str, &str)> = blocks
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "rubric",
                "Task: the question (data block \"question\")\nSubmission: the submission (data block \"submission\")\nReference: the value of \"reference_ascii\" (data block \"rubric_vars.reference_ascii\")\nExpected: the expected answer (data block \"expected_answer\")\nLiteral {braces} and ```{YOUR ART}```"
            ),
            ("question", "Draw a cat"),
            ("expected_answer", "a cat"),
            ("submission", "=^.^="),
            ("rubric_vars.reference_ascii", " /\\_/\\ "),
        ]
    );
    let (task, instructions) = common::task_section(&request);
    assert!(
        task == "rubric" && instructions.contains("data block \"rubric\""),
        "{task}: {instructions}"
    );
    assert!(!instructions.contains("=^.^=") && !instructions.contains("Draw a cat"));
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("=^.^=") && !system.contains("Draw a cat"));
    let e = score(
        &rubric("Compare with {reference_code} and {style}"),
        &s,
        &Response::new("x"),
        &svc,
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "the rubric uses {reference_code}, {style} with no value: add them to the sample's `rubric_vars`"
    );

    // A sample's own `rubric` wins over the spec's.
    let mut own = s.clone();
    own.extra
        .insert("rubric".into(), "Own rubric for {input}".into());
    score(&rubric("Spec rubric"), &own, &Response::new("x"), &svc)
        .await
        .score
        .unwrap();
    let last = server.requests.lock().unwrap().last().unwrap().1.clone();
    assert_eq!(
        common::block(&last, "rubric").as_deref(),
        Some("Own rubric for the question (data block \"question\")")
    );

    let bad = common::serve(|_, _, _| Reply::json(200, chat(r#"{"score": 7}"#))).await;
    let e = score(
        &rubric("r"),
        &s,
        &Response::new("x"),
        &services(Some(&bad.url), None),
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert!(e.contains("not a number from 0 to 1"), "{e}");
}

#[tokio::test]
async fn runevals_ratings_are_1_to_5_and_normalised() {
    let server =
        common::serve(|_, _, _| Reply::json(200, chat(r#"{"rating": 4, "reason": "good"}"#))).await;
    let svc = services(Some(&server.url), None);
    for name in ["Relevance", "coherence", "Groundedness", "similarity"] {
        let scored = score(&spec(name), &sample(), &Response::new("Paris."), &svc).await;
        assert_eq!(scored.score.unwrap(), 0.75, "{name}: (4 - 1) / 4");
        assert_eq!(scored.raw, Some(4.0));
    }
    let bad = common::serve(|_, _, _| Reply::json(200, chat(r#"{"rating": 4.5}"#))).await;
    let e = score(
        &spec("relevance"),
        &sample(),
        &Response::new("x"),
        &services(Some(&bad.url), None),
    )
    .await
    .score
    .unwrap_err()
    .to_string();
    assert!(e.contains("not an integer from 1 to 5"), "{e}");
    assert_eq!(
        MetricSpec::new("citations", &[], Some((eval_runtime::Op::AtLeast, 3.0)))
            .unwrap()
            .threshold,
        3.0
    );
}

#[tokio::test]
async fn a_misconfigured_judge_is_an_error_not_an_offline_pass() {
    let mut svc = Services::none();
    svc.judge = Err(ServiceError::Config {
        what: "judge URL".into(),
        reason: "relative URL without a base".into(),
    });
    svc.embedder = Err(ServiceError::Config {
        what: "embeddings URL".into(),
        reason: "bad".into(),
    });
    for name in ["context_recall", "context_precision", "answer_similarity"] {
        let e = score(&spec(name), &sample(), &Response::new("x"), &svc)
            .await
            .score
            .unwrap_err()
            .to_string();
        assert!(e.contains("misconfigured"), "{name}: {e}");
    }
}

#[tokio::test]
async fn offline_context_precision_counts_a_similarity_of_exactly_one_half() {
    let mut s = Sample::new("q").with_expected("x");
    s.reference_contexts = vec!["ac".into()];
    // "ab" vs "ac": one substitution in 2 characters = 0.5, relevant (>=).
    let scored = score(
        &spec("context_precision"),
        &s,
        &Response::new("x").with_context(["ab"]),
        &services(None, None),
    )
    .await;
    assert_eq!(scored.score.unwrap(), 1.0);
}

#[tokio::test]
async fn per_turn_expected_answers_are_judged_turn_by_turn() {
    // Offline answer_similarity (Levenshtein) on each turn, then the mean:
    // turn 1 "abc" vs "abc" = 1; turn 2 "xya" vs "xyz" = 1 - 1/3.
    let mut s = Sample::new("unused").with_turns(["first?", "second?"]);
    s.expected = Some(eval_runtime::Expected::PerTurn(vec![
        "abc".into(),
        "xyz".into(),
    ]));
    let report = eval_runtime::evaluate_with(
        "conv::x".into(),
        &s,
        &[MetricSpec::new(
            "answer_similarity",
            &[],
            Some((eval_runtime::Op::AtLeast, 0.5)),
        )
        .unwrap()],
        std::time::Duration::from_secs(10),
        async {
            Ok(Response::new("xya").with_turn_outputs(vec!["abc".to_string(), "xya".to_string()]))
        },
        &services(None, None),
    )
    .await;
    assert!(report.error.is_none(), "{:?}", report.error);
    let score = report.metrics[0].score.unwrap();
    assert!((score - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-9, "{score}");
    assert!(report.metrics[0].method.unwrap().starts_with("offline"));
}

#[tokio::test]
async fn context_metrics_without_what_they_compare_with_fail_before_the_agent_call() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut s = sample();
    s.reference_contexts.clear();
    let run = |s: Sample, svc: Services, metric: &'static str| {
        let calls = calls.clone();
        async move {
            eval_runtime::evaluate_with(
                "rag::x".into(),
                &s,
                &[spec(metric)],
                std::time::Duration::from_secs(10),
                async {
                    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    Ok(Response::new("Paris"))
                },
                &svc,
            )
            .await
        }
    };
    // Offline, context_recall compares with reference_contexts: there are none.
    let report = run(s.clone(), services(None, None), "context_recall").await;
    assert_eq!(
        report.error.as_ref().map(ToString::to_string).as_deref(),
        Some(
            "`context_recall` needs an LLM judge (set EVAL_JUDGE_URL) or, offline, `reference_contexts` in the sample"
        )
    );
    // With a judge, context_precision compares with the expected answer.
    let judge = common::serve(|n, _, body| judge_script(n, body)).await;
    let mut no_expected = sample();
    no_expected.expected = None;
    let report = run(
        no_expected,
        services(Some(&judge.url), None),
        "context_precision",
    )
    .await;
    assert!(
        report
            .error
            .as_ref()
            .map(ToString::to_string)
            .as_deref()
            .unwrap()
            .starts_with("sample has no `expected` field"),
        "{:?}",
        report.error
    );
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the agent was never called"
    );
    assert_eq!(judge.count(), 0);
}

#[tokio::test]
async fn judging_is_bounded_by_the_sample_timeout() {
    let judge = common::serve(|_, _, _| Reply::Hang).await;
    let started = std::time::Instant::now();
    let report = eval_runtime::evaluate_with(
        "rag::x".into(),
        &sample(),
        &[spec("contains"), spec("faithfulness")],
        std::time::Duration::from_millis(300),
        async { Ok(Response::new("Paris is the capital of France.")) },
        &services(Some(&judge.url), None),
    )
    .await;
    assert_eq!(
        report.error.as_ref().map(ToString::to_string).as_deref(),
        Some("scoring (LLM judge / embeddings) took longer than 0.3s (sample timeout)")
    );
    // Not a speed check: only that the 120 s judge timeout did not apply.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[tokio::test]
async fn each_judged_metric_says_why_from_the_answers_it_scored_with() {
    // The reasons come from the judge's answers the score is computed from:
    // no metric makes a call for its reason (the call counts are the
    // metrics' own: two for toxicity's and bias' two steps, one for the
    // others; faithfulness asks its two steps in one question).
    let server = common::serve(|n, _, body| judge_script(n, body)).await;
    let svc = services(Some(&server.url), None);
    let s = sample();
    let answer = Response::new("Paris is in France, has 10 million people and is a capital.")
        .with_context([
            "Paris is the capital of France.",
            "Berlin is in Germany.",
            "France is in Europe.",
            "Paris has museums.",
        ]);
    let mut with_contexts = s.clone();
    with_contexts.context = vec!["a".into(), "b".into(), "c".into()];
    let cases: [(&str, &Sample, u32, &str); 6] = [
        (
            "faithfulness",
            &s,
            1,
            "2 of 3 statements supported by the context; not supported: \"Paris has 10 million people.\"",
        ),
        (
            "context_precision",
            &s,
            1,
            "3 of 4 retrieved chunks useful for the expected answer (ranks #1, #3, #4)",
        ),
        (
            "context_recall",
            &s,
            1,
            "3 of 4 statements of the expected answer attributable to the context (#1, #2, #4)",
        ),
        (
            "hallucination",
            &with_contexts,
            1,
            "1 of 3 contexts contradicted by the answer (#2)",
        ),
        (
            "toxicity",
            &s,
            2,
            "1 of 4 opinions toxic: \"Tourists are idiots.\"",
        ),
        (
            "bias",
            &s,
            2,
            "2 of 4 opinions biased: \"Tourists are idiots.\", \"Locals are rude.\"",
        ),
    ];
    for (metric, sample, calls, reason) in cases {
        let scored = score(&spec(metric), sample, &answer, &svc).await;
        assert!(scored.score.is_ok(), "{metric}: {:?}", scored.score);
        assert_eq!(scored.usage.calls, calls, "{metric}");
        assert_eq!(scored.reason.as_deref(), Some(reason), "{metric}");
    }

    // A grader's reason is the judge's own words, from the one answer.
    let rater = common::serve(|_, _, body| {
        Reply::json(
            200,
            chat(if common::task(body) == "rubric" {
                r#"{"score": 0.25, "rationale": "Names the city but not the country."}"#
            } else {
                r#"{"rating": 2, "reason": "Mostly off topic."}"#
            }),
        )
    })
    .await;
    let svc = services(Some(&rater.url), None);
    let rated = score(&spec("relevance"), &s, &answer, &svc).await;
    assert_eq!((rated.score, rated.raw), (Ok(0.25), Some(2.0)));
    assert_eq!(rated.reason.as_deref(), Some("Mostly off topic."));
    let rubric = MetricSpec::new(
        "rubric",
        &[(
            "rubric",
            eval_runtime::metric_spec::OptionValue::Str("Is it right?".to_string().into()),
        )],
        None,
    )
    .unwrap();
    let graded = score(&rubric, &s, &answer, &svc).await;
    assert_eq!(graded.score, Ok(0.25));
    assert_eq!(
        graded.reason.as_deref(),
        Some("Names the city but not the country.")
    );
    assert_eq!(rater.count(), 2, "one call each, the reason included");

    // Offline variants count too; a metric without a score has no reason.
    let offline = services(None, None);
    let paris_only = Response::new("x").with_context(["Paris is the capital of France."]);
    let recall = score(&spec("context_recall"), &s, &paris_only, &offline).await;
    assert_eq!(
        recall.reason.as_deref(),
        Some("1 of 2 reference contexts found in the retrieved context (#1)")
    );
    let failed = score(&spec("faithfulness"), &s, &answer, &offline).await;
    assert!(failed.score.is_err() && failed.reason.is_none());
}
