use eval_runtime::prelude::*;

// Ingest deletes everything under the scope: `prod:` needs an explicit opt-in.
#[eval_dataset("../../../../tests/ui/data/prod_retrieval.json", metrics(recall_at_k))]
async fn refused(_sample: &Sample) -> Response {
    Response::new("x")
}

#[eval_dataset("../../../../tests/ui/data/prod_retrieval.json", metrics(recall_at_k), allow_custom_prefix = true)]
async fn allowed(_sample: &Sample) -> Response {
    Response::new("x")
}

// A bare `eval:` names every evaluation scope of the index: refused too.
#[eval_dataset("../../../../tests/ui/data/bare_eval_retrieval.json", metrics(recall_at_k))]
async fn bare(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
