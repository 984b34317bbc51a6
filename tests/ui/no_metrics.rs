use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl")]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(metrics(contains))]
async fn no_path(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains > 0.5))]
async fn strict_op(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metric(contains))]
async fn typo(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
