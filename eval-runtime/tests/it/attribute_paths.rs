//! At run time the attribute checks its dataset path again (the file the
//! retriever reads back must still be inside the project), unless the
//! attribute said `allow_outside = true`.

use eval_runtime::__private::{Decl, Embedded, MetricDecl, run_sync};
use eval_runtime::{Response, Sample};

const OUTSIDE: &str = "../../../../../../../../../../../../../../../../nonexistent-outside/x.jsonl";
const BYTES: &[u8] = b"{\"input\": \"q\", \"expected\": \"a\"}\n";
const CONTAINS: &[MetricDecl] = &[MetricDecl {
    name: "contains",
    options: &[],
    bound: None,
    named: None,
}];

const fn decl(module_path: &'static str, allow_outside: bool) -> Decl {
    Decl {
        module_path,
        package: "attribute_paths",
        path: OUTSIDE,
        bytes: BYTES,
        metrics: CONTAINS,
        gates: &[],
        ci_gate: false,
        enforce_thresholds: true,
        timeout_secs: None,
        repeat: eval_runtime::__private::Repeat::Runs(1),
        inconclusive: None,
        cluster: None,
        allow_custom_prefix: false,
        allow_outside,
        threshold_gates: true,
        sample_tags: &[],
        max_samples: None,
        notes: &[],
        registry: None,
        user_metrics: &[],
        model: None,
    }
}

static REFUSED: Embedded = Embedded::new(decl("attribute_paths::refused", false));
static ALLOWED: Embedded = Embedded::new(decl("attribute_paths::allowed", true));

fn agent(_: &Sample) -> Response {
    Response::new("a")
}

#[test]
#[should_panic(expected = "nonexistent-outside/x.jsonl, outside")]
fn a_path_out_of_the_project_is_refused_at_run_time() {
    run_sync(&REFUSED, 0, agent);
}

#[test]
fn allow_outside_runs_the_embedded_samples() {
    run_sync(&ALLOWED, 0, agent);
}
