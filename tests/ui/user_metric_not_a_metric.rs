use eval_runtime::prelude::*;

/// Not a metric: implements nothing.
pub struct NotAMetric;

/// Not a metric's shape: takes only the sample.
pub fn wrong_shape(_sample: &Sample) -> bool {
    true
}

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(contains, crate::NotAMetric, crate::wrong_shape >= 1.0)
)]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
