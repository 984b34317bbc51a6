use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(partial_match <= 0.5, contains >= 1.5))]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
