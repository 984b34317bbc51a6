use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/malformed_tools.jsonl", metrics(tool_correctness))]
async fn tools(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(tool_correctness(order = true), tool_call_accuracy(strict_order = "no"))
)]
async fn options(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
