use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = 0)]
async fn never(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = 1000)]
async fn too_many(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
