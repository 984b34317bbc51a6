use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains))]
async fn two_args(_sample: &Sample, _extra: u32) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains))]
async fn no_return(_sample: &Sample) {}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains))]
async fn generic<T>(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
