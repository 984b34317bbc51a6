use eval_runtime::prelude::*;

pub fn cites_ticket(_sample: &Sample, response: &Response) -> bool {
    response.output.contains('#')
}

// A metric of your own takes no options; a gate names one the dataset is scored with.
#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(crate::cites_ticket(strict = true)),
    gate(mean(crate::other) >= 0.5)
)]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
