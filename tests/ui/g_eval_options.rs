use eval_runtime::prelude::*;

// Two criteria metrics score side by side under their names; the same name
// twice, or a scale the judge cannot answer, is refused where it is written.
#[eval_dataset(
    "../../../../tests/ui/data/ok.jsonl",
    metrics(
        g_eval(name = "helpful", criteria = "Helpful.") >= 0.6,
        g_eval(name = "polite", criteria = "Polite.", scale = 10),
        g_eval(name = "helpful", criteria = "Other."),
        g_eval(name = "brief", criteria = "Brief.", scale = 11)
    )
)]
async fn rag(_sample: &Sample) -> Response {
    Response::new("x")
}

fn main() {}
