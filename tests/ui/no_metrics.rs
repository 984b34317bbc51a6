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

// issue38:runevals: a runevals file that names no evaluators is scored on
// runevals' default dimensions: accepted (no error below names it), its
// gates on those dimensions too.
#[eval_dataset("../../../../tests/ui/data/starter_1_0_0.json")]
async fn starter(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(
    "../../../../tests/ui/data/starter_1_0_0.json",
    gate(mean(similarity) >= 0.5)
)]
async fn starter_gated(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
