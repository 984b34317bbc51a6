//! Judge efficiency: `cargo run --release --example bench_judge [-- --latency-ms 200 --samples 50]`.
//!
//! Scores RAG samples (questions of the demo agent's corpus, with the
//! expected answers) with the four ragas judge metrics — faithfulness,
//! answer_relevancy, context_precision, context_recall — against the
//! scripted judge ([`eval_examples::judge`]) answering after a fixed delay,
//! the demo agent answering at once, and no judge cache. Prints judge and
//! embedding calls and tokens per sample as the scripted judge counts them
//! (prompt tokens its prompt cache served among them: its rule is vLLM's
//! prefix caching, see `src/judge/cache.rs`); the prompts actually sent,
//! counted in `o200k_base` tokens as OpenAI's cookbook counts a chat, and
//! ragas' prompts for the same samples, rendered from ragas 0.4.3's own
//! prompt texts (`examples/bench_judge_ragas.json`, written by
//! `examples/bench_judge_ragas.py` from the wheel: instruction, output
//! schema, examples, then the sample's input as `PydanticPrompt.to_string`
//! writes it; one request per retrieved chunk for context precision, one
//! for the three relevancy questions (OpenAI's `n`), the statements ours
//! found for faithfulness' second step), counted the same way; both under
//! the same cache rules, requests taken in the order sent: none, OpenAI's
//! (a prefix of 1,024 tokens or more that an earlier request began with, in
//! steps of 128) and vLLM's prefix caching (blocks of 16 tokens); and the
//! mean scores and the wall time.

use std::time::{Duration, Instant};

use eval_examples::demo::{self, CORPUS, DemoConfig};
use eval_examples::judge::{self, JudgeConfig};
use eval_runtime::plan::PlanBuilder;
use eval_runtime::services::{Embedder, Judge};
use eval_runtime::{HttpAgent, Runner, Services};

/// ragas' judge tokens per sample for the same four metrics, measured
/// (issue 24).
const RAGAS_PROMPT: f64 = 7158.0;
const RAGAS_COMPLETION: f64 = 438.0;

/// ragas 0.4.3's prompt texts (see `examples/bench_judge_ragas.py`).
const RAGAS_PROMPTS: &str = include_str!("bench_judge_ragas.json");

/// vLLM's prefix-cache block, in tokens.
const VLLM_BLOCK: usize = 16;

/// A cached token's price as a fraction of an input token's: Anthropic's
/// cache reads and OpenAI's GPT-5 (0.1), GPT-4.1 (0.25), GPT-4o (0.5).
const CACHED_RATES: [f64; 3] = [0.1, 0.25, 0.5];

/// The o200k_base tokens of each recorded request's messages, as OpenAI's
/// cookbook counts a chat: 3 per message, its role, its content, and 3
/// priming the answer.
fn o200k(requests: &[serde_json::Value]) -> Vec<Vec<u32>> {
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base tables");
    requests
        .iter()
        .map(|messages| {
            let mut tokens = Vec::new();
            for m in messages.as_array().into_iter().flatten() {
                tokens.extend([0u32; 3]);
                tokens.extend(bpe.encode_ordinary(m["role"].as_str().unwrap_or("")));
                tokens.extend(bpe.encode_ordinary(m["content"].as_str().unwrap_or("")));
            }
            tokens.extend([0u32; 3]);
            tokens
        })
        .collect()
}

/// Tokens a prefix cache serves, requests taken in the order sent (each
/// answered before the next): the longest prefix shared with an earlier
/// request, counted when it is at least `min` tokens, in steps of `step`
/// (OpenAI: 1,024 and 128; vLLM: any length, in its blocks of 16).
fn prefix_cached(prompts: &[Vec<u32>], min: usize, step: usize) -> usize {
    let mut cached = 0;
    for (i, p) in prompts.iter().enumerate() {
        let shared = prompts[..i]
            .iter()
            .map(|q| p.iter().zip(q).take_while(|(a, b)| a == b).count())
            .max()
            .unwrap_or(0);
        if shared >= min {
            cached += shared / step * step;
        }
    }
    cached
}

/// JSON as pydantic's `model_dump_json(indent=4)` writes it.
fn pydantic_json(value: &serde_json::Value) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    value.serialize(&mut ser).expect("JSON");
    String::from_utf8(out).expect("UTF-8")
}

/// ragas' requests for one sample, each a single user message:
/// faithfulness' two steps, context precision per chunk, context recall,
/// answer relevancy once (its three questions as OpenAI's `n`).
fn ragas_requests(
    prompts: &serde_json::Value,
    (question, answer, reference): (&str, &str, &str),
    contexts: &[String],
    statements: &[String],
) -> Vec<serde_json::Value> {
    use serde_json::json;
    let ask = |name: &str, input: serde_json::Value| {
        let text = format!(
            "{}input: {}\nOutput: ",
            prompts["prompts"][name]["static"]
                .as_str()
                .expect("static part"),
            pydantic_json(&input)
        );
        json!([{"role": "user", "content": text}])
    };
    let joined = contexts.join("\n");
    let mut requests = vec![
        ask(
            "statements",
            json!({"question": question, "answer": answer}),
        ),
        ask("nli", json!({"context": joined, "statements": statements})),
    ];
    for c in contexts {
        requests.push(ask(
            "context_precision",
            json!({"question": question, "context": c, "answer": reference}),
        ));
    }
    requests.push(ask(
        "context_recall",
        json!({"question": question, "context": joined, "answer": reference}),
    ));
    requests.push(ask("answer_relevancy", json!({"response": answer})));
    requests
}

/// A recorded request, read as the scripted judge reads it.
fn read(messages: &serde_json::Value) -> judge::Question {
    judge::Question::read(
        messages[0]["content"].as_str().unwrap_or(""),
        messages[1]["content"].as_str().unwrap_or(""),
    )
}

/// ragas' requests for the samples the judge saw, read back from our
/// recorded questions (faithfulness' gives the question, the answer, the
/// context and the statements; the reference question the reference), and
/// how many samples they are.
fn ragas_model(recorded: &[serde_json::Value]) -> (Vec<serde_json::Value>, usize) {
    let prompts: serde_json::Value = serde_json::from_str(RAGAS_PROMPTS).expect("ragas prompts");
    let (mut requests, mut samples) = (Vec::new(), 0);
    for messages in recorded {
        let q = read(messages);
        if q.task != "faithfulness" {
            continue;
        }
        let Some(reference) = recorded
            .iter()
            .map(read)
            .find(|r| r.task == "context/reference" && r.get("question") == q.get("question"))
        else {
            continue;
        };
        let statements: Vec<String> = judge::answer(
            messages[0]["content"].as_str().unwrap_or(""),
            messages[1]["content"].as_str().unwrap_or(""),
            false,
        )
        .ok()
        .and_then(|a| serde_json::from_value(a["statements"].clone()).ok())
        .unwrap_or_default();
        samples += 1;
        requests.extend(ragas_requests(
            &prompts,
            (
                q.get("question"),
                q.get("answer"),
                reference.get("expected_answer"),
            ),
            &q.numbered("context"),
            &statements,
        ));
    }
    (requests, samples)
}

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
    let (judge_server, recorded) = judge::spawn_recording(JudgeConfig {
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
    let requests = recorded.lock().map(|r| r.clone()).unwrap_or_default();
    let ours = o200k(&requests);
    let (ragas_sent, modelled) = ragas_model(&requests);
    let theirs = o200k(&ragas_sent);
    let modelled = modelled.max(1) as f64;
    let total = |p: &[Vec<u32>]| p.iter().map(Vec::len).sum::<usize>() as f64;
    let (our_prompt, their_prompt) = (total(&ours) / n, total(&theirs) / modelled);
    println!(
        "  o200k_base prompt tokens per sample: ours {our_prompt:.0} ({} requests, the longest {}), ragas 0.4.3 modelled {their_prompt:.0} ({:.1} requests per sample, {modelled} samples; measured in issue 24: {RAGAS_PROMPT:.0})",
        ours.len(),
        ours.iter().map(Vec::len).max().unwrap_or(0),
        theirs.len() as f64 / modelled,
    );
    println!(
        "  no cache: {:.3}× ragas modelled, {:.3}× ragas measured",
        our_prompt / their_prompt,
        our_prompt / RAGAS_PROMPT
    );
    for (rule, min, step) in [
        ("OpenAI's rule (>= 1024 tokens, steps of 128)", 1024, 128),
        ("vLLM's prefix caching (blocks of 16)", 1, VLLM_BLOCK),
    ] {
        let our_cached = prefix_cached(&ours, min, step) as f64 / n;
        let their_cached = prefix_cached(&theirs, min, step) as f64 / modelled;
        let billed = |rate: f64| {
            let us = our_prompt - our_cached + rate * our_cached;
            let them = their_prompt - their_cached + rate * their_cached;
            format!("{:.3}× at {rate}", us / them)
        };
        println!(
            "  {rule}: ours {our_cached:.0} cached, ragas {their_cached:.0} cached per sample; prompt cost ours/ragas, cached tokens at a rate of the input price: {}",
            CACHED_RATES.map(billed).join(", ")
        );
    }
    println!(
        "  completion tokens per sample: ours {completion:.0} (the scripted judge's count), ragas {RAGAS_COMPLETION:.0} (measured)"
    );
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
