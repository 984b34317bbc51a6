use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains, faithfulnes >= 0.8))]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
