use eval_runtime::prelude::*;

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(contains, string_match, exact_match >= 0.5, regex(pattern = "(unclosed"))
)]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(contains(case_sensitive = true, case_sensitive = false), partial_match(threshold = 0.5))
)]
async fn options(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
