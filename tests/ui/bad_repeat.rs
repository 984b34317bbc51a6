use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = 0)]
async fn never(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = 1000)]
async fn too_many(_sample: &Sample) -> Response {
    Response::new("x")
}


#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), repeat = "auto:2")]
async fn auto_too_few(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains), inconclusive = "strict")]
async fn unknown_setting(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(contains >= 0.5),
    repeat = "auto:20",
    inconclusive = "fail",
    cluster = "topic"
)]
async fn fine(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
