//! `--estimate` against the real thing: the estimate of a plan, made
//! without any call, then the run itself against a scripted HTTP agent, a
//! scripted judge and a scripted embeddings server on loopback that report
//! the tokens of what they really received (counted with the models'
//! tokenizers, as OpenAI's servers count them). Calls must be equal;
//! tokens within the tolerances stated below.

use crate::common;

use std::path::PathBuf;

use common::{Reply, serve_detached};
use eval_runtime::__cli::services::{Price, PriceTable, Pricing};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::services::{Embedder, Judge};
use eval_runtime::{Config, HttpAgent, Runner, Services};
use serde_json::{Value, json};

/// Six samples: single prompts with one- and two-sentence answers, one
/// two-turn conversation; contexts of one to three chunks.
const DATASET: &str = r#"{"id": "s1", "input": "What is the capital of France?", "expected": "Paris is the capital of France.", "context": ["Paris is the capital and largest city of France.", "France is in Europe."]}
{"id": "s2", "input": "How tall is the Eiffel Tower?", "expected": "The Eiffel Tower is 330 metres tall. It was the tallest structure in the world until 1930.", "context": ["The Eiffel Tower is 330 metres tall.", "It was completed in 1889.", "It was the tallest man-made structure until 1930."]}
{"id": "s3", "input": "Who wrote Les Misérables?", "expected": "Victor Hugo wrote Les Misérables.", "context": ["Les Misérables is an 1862 novel by Victor Hugo."]}
{"id": "s4", "input": "What river runs through Paris?", "expected": "The Seine runs through Paris.", "context": ["The Seine flows through the centre of Paris.", "The Loire is the longest river in France."]}
{"id": "s5", "input": ["Hi, I plan a trip.", "Which museum holds the Mona Lisa?"], "expected": "The Louvre holds the Mona Lisa.", "context": ["The Mona Lisa is displayed at the Louvre in Paris."]}
{"id": "s6", "input": "What is the currency of France?", "expected": "France uses the euro. It replaced the franc in 2002.", "context": ["The euro replaced the French franc in 2002."]}
"#;

const METRICS: &str = "faithfulness >= 0, answer_relevancy >= 0, context_precision >= 0, context_recall >= 0, hallucination <= 1, toxicity >= 0";

fn o200k(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len() as u64
}

fn cl100k(text: &str) -> u64 {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len() as u64
}

/// OpenAI's cookbook count of a chat request's prompt tokens.
fn chat_tokens(messages: &Value) -> u64 {
    3 + messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| 3 + o200k(m["role"].as_str().unwrap()) + o200k(m["content"].as_str().unwrap()))
        .sum::<u64>()
}

fn split_sentences(text: &str) -> Vec<String> {
    text.split_inclusive(". ")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A judge that answers like a careful model, in exactly the shape each
/// task asks, reading the data blocks of the request.
fn judge_answer(body: &Value) -> String {
    let system = common::task(body);
    let blocks = common::data_blocks(body);
    let block = |name: &str| common::block(body, name).unwrap_or_default();
    let count = |prefix: &str| blocks.iter().filter(|(n, _)| n.starts_with(prefix)).count();
    let v = if system == "faithfulness" {
        let statements = split_sentences(&block("answer"));
        json!({"verdicts": vec![1; statements.len()], "statements": statements})
    } else if system == "context/reference" {
        json!({
            "useful": (0..count("context_")).map(|i| i32::from(i == 0)).collect::<Vec<_>>(),
            "attributed": vec![1; split_sentences(&block("expected_answer")).len()],
        })
    } else if system.contains("answer_relevancy") {
        json!({"questions": ["What does the answer state?", "Which fact is given?", "What is asked about France?"], "noncommittal": 0})
    } else if system.contains("hallucination") {
        json!({"verdicts": vec!["yes"; count("context_")]})
    } else if system.contains("/opinions") {
        json!({"opinions": []})
    } else {
        json!({})
    };
    v.to_string()
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-estimate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rag.jsonl"), DATASET).unwrap();
    dir
}

fn within(estimate: u64, actual: u64, tolerance: f64) -> bool {
    (estimate as f64 - actual as f64).abs() <= tolerance * actual as f64
}

#[test]
fn the_estimate_matches_the_run_calls_exactly_and_tokens_within_tolerance() {
    // The agent: the expected answer of each prompt; s2 answers with one
    // sentence more than expected (the estimate cannot know).
    let expected: Vec<(String, String)> = DATASET
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let input = match &v["input"] {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.last().unwrap().as_str().unwrap().to_string(),
                _ => unreachable!(),
            };
            (input, v["expected"].as_str().unwrap().to_string())
        })
        .collect();
    let agent = serve_detached(move |_, _, body| {
        let input = body["input"].as_str().unwrap_or("");
        let output = match expected.iter().find(|(i, _)| i == input) {
            Some((i, e)) if i.starts_with("How tall") => format!("{e} It is in Paris."),
            Some((_, e)) => e.clone(),
            None => "Hello! Happy to help you plan it.".into(),
        };
        Reply::json(200, json!({"output": output}).to_string())
    });
    let judge = serve_detached(|_, _, body| {
        let messages = &body["messages"];
        let content = judge_answer(body);
        Reply::json(
            200,
            json!({
                "model": "gpt-4o-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": chat_tokens(messages), "completion_tokens": o200k(&content)}
            })
            .to_string(),
        )
    });
    let embed = serve_detached(|_, _, body| {
        let input: Vec<&str> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let data: Vec<Value> = input
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": [1.0, (t.len() % 7) as f64, 0.5]}))
            .collect();
        let tokens: u64 = input.iter().map(|t| cl100k(t)).sum();
        Reply::json(
            200,
            json!({"data": data, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
                .to_string(),
        )
    });

    let dir = scratch();
    let prices = PriceTable::new(
        "test prices",
        [
            ("gpt-4o-mini".to_string(), Price::new(0.15, Some(0.6))),
            ("text-embedding-3-small".to_string(), Price::new(0.02, None)),
            ("free-agent".to_string(), Price::new(0.0, Some(0.0))),
        ],
    );
    let services = Services::none()
        .with_judge(Judge::new(&judge.url, "gpt-4o-mini").unwrap().cache(None))
        .with_embedder(
            Embedder::new(&embed.url, "text-embedding-3-small")
                .unwrap()
                .cache(None),
        )
        .with_pricing(Pricing::new(Some(prices), Some("free-agent".into())));
    let runner = Runner::new().services(services).config(Config::empty());
    let prepared = runner
        .prepare(
            PlanBuilder::new()
                .base_dir(&dir)
                .dataset("rag.jsonl", METRICS),
        )
        .unwrap();
    let estimate = prepared.estimate();
    assert_eq!(
        (agent.count(), judge.count(), embed.count()),
        (0, 0, 0),
        "an estimate makes no call"
    );

    let outcome = prepared
        .evaluate(&HttpAgent::new(&agent.url).unwrap(), |_| {})
        .unwrap();
    assert_eq!(outcome.results.samples.len(), 6);
    assert!(
        outcome.results.samples.iter().all(|s| s.error.is_none()),
        "{:?}",
        outcome
            .results
            .samples
            .iter()
            .map(|s| s.error.clone())
            .collect::<Vec<_>>()
    );

    // Calls: exactly. Agent: one per user turn (5 prompts + a two-turn
    // conversation = 7). Judge per sample: faithfulness 1, answer_relevancy
    // 1, context_precision and context_recall 1 (one question they share),
    // hallucination 1, toxicity 1 (no opinions) = 5, so 30; embeddings:
    // answer_relevancy 1 per sample = 6.
    assert_eq!(estimate.agent.calls, 7);
    assert_eq!(agent.count(), 7);
    assert_eq!(estimate.judge.calls, 30);
    assert_eq!(judge.count(), 30);
    assert_eq!(estimate.embeddings.calls, 6);
    assert_eq!(embed.count(), 6);
    let per_metric: Vec<(String, u64, u64)> = estimate.datasets[0]
        .metrics
        .iter()
        .map(|m| (m.name.clone(), m.judge.calls, m.embeddings.calls))
        .collect();
    assert_eq!(
        per_metric,
        [
            ("faithfulness".to_string(), 6, 0),
            ("answer_relevancy".to_string(), 6, 6),
            // The question they share, charged to the first to ask it.
            ("context_precision".to_string(), 6, 0),
            ("context_recall".to_string(), 0, 0),
            ("hallucination".to_string(), 6, 0),
            ("toxicity".to_string(), 6, 0),
        ]
    );

    // Tokens: what the servers counted of what they really received.
    let judge_log = judge.requests.lock().unwrap().clone();
    let actual_prompt: u64 = judge_log
        .iter()
        .map(|(_, b)| chat_tokens(&b["messages"]))
        .sum();
    let actual_completion: u64 = judge_log.iter().map(|(_, b)| o200k(&judge_answer(b))).sum();
    let embed_log = embed.requests.lock().unwrap().clone();
    let actual_embed: u64 = embed_log
        .iter()
        .flat_map(|(_, b)| b["input"].as_array().unwrap().clone())
        .map(|t| cl100k(t.as_str().unwrap()))
        .sum();
    println!(
        "judge prompt {} vs {actual_prompt}, completion {} vs {actual_completion}; embeddings {} vs {actual_embed}",
        estimate.judge.prompt_tokens,
        estimate.judge.completion_tokens,
        estimate.embeddings.prompt_tokens
    );
    // Judge prompts are built from the sample (input, context, expected)
    // and the answer, which the estimate assumes to be the expected one:
    // within 5%. Completions are the judge's own words: within 30%.
    // Embeddings embed the judge's questions, assumed as long as the input:
    // within 30%.
    assert!(
        within(estimate.judge.prompt_tokens, actual_prompt, 0.05),
        "judge prompt tokens: estimated {}, actual {actual_prompt}",
        estimate.judge.prompt_tokens
    );
    assert!(
        within(estimate.judge.completion_tokens, actual_completion, 0.30),
        "judge completion tokens: estimated {}, actual {actual_completion}",
        estimate.judge.completion_tokens
    );
    assert!(
        within(estimate.embeddings.prompt_tokens, actual_embed, 0.30),
        "embedding tokens: estimated {}, actual {actual_embed}",
        estimate.embeddings.prompt_tokens
    );
    // The results file counts the same judge calls and tokens the servers did.
    let usage = &outcome.results.usage;
    assert_eq!(
        u64::from(usage.judge.calls + usage.embeddings.calls),
        (judge.count() + embed.count()) as u64
    );
    // Cost: the estimate's tokens at the table's prices; the run's within
    // the same tolerances.
    let est = estimate.cost_usd.unwrap();
    let want = (estimate.judge.prompt_tokens as f64 * 0.15
        + estimate.judge.completion_tokens as f64 * 0.6
        + estimate.embeddings.prompt_tokens as f64 * 0.02)
        / 1e6;
    assert!((est - want).abs() < 1e-12, "{est} vs {want}");
    let ran = outcome.results.usage.cost_usd.unwrap();
    println!("cost: estimated ${est:.8}, ran ${ran:.8}");
    assert!(
        (est - ran).abs() <= 0.2 * ran,
        "estimated ${est}, ran ${ran}"
    );
    let text = estimate.render();
    for want in [
        "estimate (no call made): 1 dataset(s), 6 sample(s)",
        "agent       7 call(s)",
        "judge       30 call(s)",
        "embeddings  6 call(s)",
        "tokens of judge (gpt-4o-mini): o200k_base\n",
        "tokens of embeddings (text-embedding-3-small): cl100k_base\n",
        "tokens of agent (free-agent): o200k_base, an approximation",
        "faithfulness 1.00 judge",
        "answer_relevancy 1.00 judge + 1.00 embeddings",
        "cost: ~$",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
