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

// pass@k and pass^k are `pass_at_k` / `pass_hat_k` in the attribute (the
// first compiles); a measured quantity has none, and the bound is a share
// from 0 to 1, a minimum.
#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = 3, gate(pass_at_3(contains) >= 0.9, pass_hat_2(contains) >= 0.5))]
async fn runs(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = 3, gate(pass_at_3(latency_ms) >= 0.9, pass_hat_2(contains) <= 0.5, pass_at_0(contains) >= 0.5))]
async fn bad_runs(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
