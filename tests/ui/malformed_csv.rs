use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/malformed.csv", metrics(exact_match))]
fn faq(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
