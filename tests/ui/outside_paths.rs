use eval_runtime::prelude::*;

// Dataset and manifest paths stay inside the project (the nearest directory
// with .git at or above the crate), as a manifest's `$file:` paths do.
#[eval_dataset("/nonexistent-outside/x.jsonl", metrics(contains))]
async fn absolute(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(
    "../../../../../../../../../../../../../../../../../../../../nonexistent-outside/x.jsonl",
    metrics(contains)
)]
async fn climbing(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(manifest = "/nonexistent-outside/agent.yaml", dataset = "ok")]
async fn manifest(_sample: &Sample) -> Response {
    Response::new("x")
}

// The opt-out: the path is read wherever it leads (here: nowhere).
#[eval_dataset("/nonexistent-outside/x.jsonl", metrics(contains), allow_outside = true)]
async fn allowed(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
