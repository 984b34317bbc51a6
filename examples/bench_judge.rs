//! Judge efficiency: `cargo run --release --example bench_judge [-- --latency-ms 200 --samples 50]`.
//!
//! Scores RAG samples (questions of the demo agent's corpus, with the
//! expected answers) with the four ragas judge metrics — faithfulness,
//! answer_relevancy, context_precision, context_recall — against the
//! scripted judge ([`eval_examples::judge`]) answering after a fixed delay,
//! the demo agent answering at once, and no judge cache. Prints judge and
//! embedding calls and tokens per sample (prompt tokens the scripted
//! judge's prompt cache served among them: its rule is vLLM's prefix
//! caching, see `src/judge/cache.rs`), billed-equivalent tokens at three
//! providers' cached rates against ragas' figure, the mean scores, and the
//! wall time.

use std::time::{Duration, Instant};

use eval_examples::demo::{self, CORPUS, DemoConfig};
use eval_examples::judge::{self, JudgeConfig};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::services::{Embedder, Judge};
use eval_runtime::{HttpAgent, Runner, Services};

/// ragas' judge tokens per sample for the same four metrics (issue 24).
const RAGAS_PROMPT: f64 = 7158.0;
const RAGAS_COMPLETION: f64 = 438.0;

/// Cached prompt tokens' price as a fraction of the input price:
/// Anthropic's cache reads and OpenAI's GPT-5 and GPT-4.1 family (0.1,
/// 0.25), OpenAI's GPT-4o family (0.5).
const CACHED_RATES: [(&str, f64); 3] = [
    ("Anthropic / GPT-5", 0.1),
    ("GPT-4.1", 0.25),
    ("GPT-4o", 0.5),
];

fn main() {
    let mut latency_ms = 200u64;
    let mut samples = 50usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().and_then(|v| v.parse().ok());
        match a.as_str() {
            "--latency-ms" => latency_ms = value().unwrap_or(latency_ms as usize) as u64,
            "--samples" => samples = value().unwrap_or(samples),
            other => {
                eprintln!(
                    "unknown argument {other}; see the doc comment of examples/bench_judge.rs"
                );
                std::process::exit(2);
            }
        }
    }
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).expect("create target/bench");
    let path = dir.join("judge_rag.jsonl");
    let lines: String = (0..samples)
        .map(|i| {
            let doc = &CORPUS[i % CORPUS.len()];
            let question = format!("Tell me about {} ({})", doc.title, i);
            serde_json::json!({"input": question, "expected": doc.answer}).to_string() + "\n"
        })
        .collect();
    std::fs::write(&path, lines).expect("write the dataset");

    let agent_server = demo::spawn(DemoConfig::default()).expect("start the demo agent");
    let judge_server = judge::spawn(JudgeConfig {
        latency: Duration::from_millis(latency_ms),
        ..JudgeConfig::default()
    })
    .expect("start the scripted judge");
    let base = format!("{}/v1", judge_server.url());
    let services = Services::none()
        .with_judge(Judge::new(&base, "judge").expect("judge").cache(None))
        .with_embedder(Embedder::new(&base, "embed").expect("embedder").cache(None));
    let agent = HttpAgent::new(&agent_server.url()).expect("agent");
    let plan = PlanBuilder::new().dataset(
        path.to_str().expect("utf-8 path"),
        "faithfulness >= 0, answer_relevancy >= 0, context_precision >= 0, context_recall >= 0",
    );
    let runner = Runner::new().services(services);
    let prepared = runner.prepare(plan).expect("plan");
    let started = Instant::now();
    let outcome = prepared.evaluate(&agent, |_| {}).expect("run");
    let wall = started.elapsed();

    let records = &outcome.results.samples;
    let n = records.len().max(1) as f64;
    let errors = records.iter().filter(|r| r.error.is_some()).count();
    let sum = |f: &dyn Fn(&eval_runtime::results::SampleRecord) -> u64| -> f64 {
        records.iter().map(f).sum::<u64>() as f64 / n
    };
    println!(
        "judge efficiency: {} samples, 4 ragas metrics, judge at {latency_ms} ms per call, no cache",
        records.len()
    );
    let (prompt, cached, completion) = (
        sum(&|r| r.usage.prompt_tokens),
        sum(&|r| r.usage.cached_tokens),
        sum(&|r| r.usage.completion_tokens),
    );
    println!(
        "  judge:      {:.2} calls, {prompt:.0} prompt ({cached:.0} of them cached) + {completion:.0} completion tokens per sample",
        sum(&|r| u64::from(r.usage.calls)),
    );
    // Billed-equivalent tokens: uncached prompt tokens, cached ones at a
    // provider's cached rate (a fraction of the input price), completion
    // tokens as one each; against ragas' 7,158 + 438 per sample for the same
    // four metrics without caching (issue 24's measurement).
    let ragas = RAGAS_PROMPT + RAGAS_COMPLETION;
    for (provider, rate) in CACHED_RATES {
        let billed = (prompt - cached) + cached * rate + completion;
        println!(
            "  billed-equivalent at {provider}'s cached rate ({rate}× input): {billed:.0} tokens per sample = {:.3}× ragas' {ragas:.0}",
            billed / ragas
        );
    }
    println!(
        "  embeddings: {:.2} calls, {:.0} tokens per sample",
        sum(&|r| u64::from(r.embeddings.calls)),
        sum(&|r| r.embeddings.prompt_tokens)
    );
    let mut means = Vec::new();
    for (m, metric) in records[0].metrics.iter().enumerate() {
        let scores: Vec<f64> = records.iter().filter_map(|r| r.metrics[m].score).collect();
        let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        means.push(format!("{} {mean:.3}", metric.name));
    }
    println!("  mean scores: {}", means.join(", "));
    println!(
        "  wall {:.2} s ({:.0} ms per sample), {errors} sample(s) not scored",
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1000.0 / n
    );
}
