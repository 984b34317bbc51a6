//! Benchmark target for the harness path (run by `examples/bench.rs`):
//! the dataset named by `BENCH_DATASET`, against `EVAL_AGENT_URL`, or an
//! in-process agent echoing the expected answer when `BENCH_AGENT=in-process`.

use std::process::ExitCode;

use eval_runtime::{Harness, HttpAgent, Response, Sample};

fn main() -> ExitCode {
    let Some(dataset) = std::env::var_os("BENCH_DATASET") else {
        eprintln!("error: set BENCH_DATASET to a dataset file");
        return ExitCode::from(2);
    };
    let harness = Harness::new().dataset(&dataset.to_string_lossy(), "contains");
    let harness = if std::env::var("BENCH_AGENT").as_deref() == Ok("in-process") {
        harness.agent_fn(async |s: &Sample| Response::new(s.expected_text().unwrap_or_default()))
    } else {
        harness.agent(HttpAgent::from_env())
    };
    harness.run()
}
