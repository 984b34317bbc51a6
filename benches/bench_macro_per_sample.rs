//! Benchmark target for the attribute path as the README writes it (run by
//! `examples/bench.rs`): 1,000 samples, one `#[test]` each, each building
//! its own agent from the environment — the pacing learned from one
//! sample's `429` must still hold back the others.

use eval_runtime::prelude::*;

#[eval_dataset("benches/data/bench_1000.jsonl", metrics(contains))]
async fn bench(sample: &Sample) -> eval_runtime::Result<Response> {
    HttpAgent::from_env()?.respond(sample).await
}
