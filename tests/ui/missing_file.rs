use eval_runtime::prelude::*;

#[eval_dataset("evals/does_not_exist.jsonl", metrics(contains))]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("evals/notes.txt", metrics(contains))]
async fn notes(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
