use eval_runtime::prelude::*;

// A gate must gate a metric the dataset is scored with, in the metrics' syntax.
#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), gate(partial_match >= 0.5, contains <= 0.5))]
async fn gated(_sample: &Sample) -> Response {
    Response::new("x")
}

// `gates` is the name of the dataset's gate test.
#[eval_dataset("../../../../tests/ui/data/gates_sample.jsonl", metrics(contains), gate(contains >= 0.5))]
async fn named(_sample: &Sample) -> Response {
    Response::new("x")
}

// A statistic is `mean` or `p1`..`p99`; a measured metric needs no
// `metrics(...)` entry but does need a threshold, the right way round.
#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), gate(p955(latency_ms) <= 3000, p95(latency_ms), p50(cost_usd) >= 0.1, p95(latency_ms) <= 3000))]
async fn stats(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
