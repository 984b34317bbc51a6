use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), max_samples = 0)]
async fn none(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), sample_tags = ["nowhere"])]
async fn no_tag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
