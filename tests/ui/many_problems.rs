use eval_runtime::prelude::*;

// Every problem is reported at once: signature, metrics and dataset.
#[eval_dataset("../../../../tests/ui/data/malformed.jsonl", metrics(contain, exact_match(case_sensitive = "yes")))]
fn rag() -> Response {
    Response::new("x")
}

fn main() {}
