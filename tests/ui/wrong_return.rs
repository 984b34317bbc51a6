use eval_runtime::prelude::*;

#[eval_dataset("../../../../tests/ui/data/ok.jsonl", metrics(contains))]
async fn rag(_sample: &Sample) -> u32 {
    3
}

fn main() {}
