// a `schema_file` is read at compile time (relative to the
// crate): a missing file, or one that is not JSON, is an error at the option.
use eval_runtime::prelude::*;

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(json_schema(schema_file = "../../../../tests/ui/data/no_such_schema.json"))
)]
async fn missing(_sample: &Sample) -> Response {
    Response::new("{}")
}

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(json_schema(schema_file = "../../../../tests/ui/data/malformed.csv"), is_json(extract = 1))
)]
async fn not_json(_sample: &Sample) -> Response {
    Response::new("{}")
}

#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(json_schema(schema = "{\"type\": "), json_pointer(pointer = "refund/amount", equals = 42))
)]
async fn inline(_sample: &Sample) -> Response {
    Response::new("{}")
}

fn main() {}
