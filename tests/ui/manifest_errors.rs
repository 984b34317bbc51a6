use eval_runtime::prelude::*;

#[eval_dataset(manifest = "../../../../tests/ui/data/agent.yaml")]
async fn no_name(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(manifest = "../../../../tests/ui/data/agent.yaml", dataset = "nope")]
async fn unknown(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(manifest = "../../../../tests/ui/data/agent.yaml", dataset = "needs-context")]
async fn fields(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(manifest = "../../../../tests/ui/data/agent.yaml", dataset = "ok", metrics(contains))]
async fn metrics_too(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", manifest = "../../../../tests/ui/data/agent.yaml")]
async fn both(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset(manifest = "../../../../tests/ui/data/missing.yaml", dataset = "ok")]
async fn missing(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
