use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/malformed.jsonl", metrics(contains))]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
