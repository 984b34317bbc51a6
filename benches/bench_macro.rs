//! Benchmark target for the attribute path (run by `examples/bench.rs`):
//! 1,000 samples, one `#[test]` each, against `EVAL_AGENT_URL`.

use std::sync::OnceLock;

use eval_runtime::prelude::*;

fn agent() -> eval_runtime::Result<&'static HttpAgent> {
    static AGENT: OnceLock<Result<HttpAgent, String>> = OnceLock::new();
    AGENT
        .get_or_init(|| HttpAgent::from_env().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(eval_runtime::Error::msg)
}

#[eval_dataset("benches/data/bench_1000.jsonl", metrics(contains))]
async fn bench(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}
