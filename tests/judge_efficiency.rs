//! A sample's judge and embedding calls: run at once (those on one
//! context after the first of them, for the prompt cache), counted apart, and
//! each answer asked only for what is read — against the scripted judge
//! (`eval_examples::judge`), a real HTTP server on loopback.

use std::time::Duration;

use eval_examples::demo::{self, DemoConfig};
use eval_examples::judge::{self, JudgeConfig};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::services::{Embedder, Judge};
use eval_runtime::{HttpAgent, Runner, Services};

#[test]
fn a_samples_judge_calls_run_at_once_and_are_counted_apart() {
    let agent = demo::spawn(DemoConfig::default()).unwrap();
    // Slow enough that calls started together overlap at the judge.
    let judge_server = judge::spawn(JudgeConfig {
        latency: Duration::from_millis(300),
        ..JudgeConfig::default()
    })
    .unwrap();
    let base = format!("{}/v1", judge_server.url());
    let services = Services::none()
        .with_judge(Judge::new(&base, "judge").unwrap().cache(None))
        .with_embedder(Embedder::new(&base, "embed").unwrap().cache(None));
    let dir = std::env::temp_dir().join(format!("eval-judge-efficiency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rag.jsonl");
    std::fs::write(
        &path,
        r#"{"input": "What is retrieval-augmented generation?", "expected": "RAG retrieves documents and generates an answer grounded in them."}"#,
    )
    .unwrap();
    let plan = PlanBuilder::new().dataset(
        path.to_str().unwrap(),
        "faithfulness >= 0, answer_relevancy >= 0, context_precision >= 0, context_recall >= 0",
    );
    let runner = Runner::new().services(services);
    let outcome = runner
        .prepare(plan)
        .unwrap()
        .evaluate(&HttpAgent::new(&agent.url()).unwrap(), |_| {})
        .unwrap();
    let record = &outcome.results.samples[0];
    assert_eq!(record.error, None, "{record:?}");
    assert!(
        record.metrics.iter().all(|m| m.score.is_some()),
        "{record:?}"
    );
    let seen = eval_examples::judge::stats(judge_server.addr()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // faithfulness 1 (statements and verdicts in one question),
    // answer_relevancy 1, context_precision and context_recall 1 (one
    // question they share, sent once); answer_relevancy's questions are
    // embedded in one call.
    assert_eq!(seen["chat_calls"], 3);
    assert_eq!(seen["embed_calls"], 1);
    assert_eq!((record.usage.calls, record.embeddings.calls), (3, 1));
    assert_eq!(
        record.usage.cache_hits, 1,
        "the shared question, answered once"
    );
    assert!(record.embeddings.prompt_tokens > 0);
    // The questions that do not quote the retrieved context go at once with
    // the first of those that do; the others on the context wait for its
    // answer, so that the judge's prompt cache serves them the context.
    assert!(
        seen["max_in_flight"].as_u64().unwrap() >= 2,
        "calls in flight at most {}",
        seen["max_in_flight"]
    );
    // The scripted judge caches prefixes as vLLM does: the later question
    // on the context shares the system message and the context blocks.
    assert!(
        record.usage.cached_tokens > 0 && record.usage.cached_tokens < record.usage.prompt_tokens,
        "{:?}",
        record.usage
    );
}
