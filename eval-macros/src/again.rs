//! The whole attribute — parse, validate, expand — run 1,000 times on one
//! input in one process, as rust-analyzer's long-lived proc-macro server
//! runs it at every keystroke: each expansion is the same, and the
//! build-time registry (`eval_datasets::registry`) records nothing in a
//! process that is no compiler (no entry, no file, no key held).

use quote::quote;

fn expand_once() -> String {
    let args = quote!(
        "../eval-runtime/tests/data/rag.jsonl",
        metrics(contains >= 1.0)
    );
    let item = quote!(
        fn rag(sample: &Sample) -> Response {
            Response::new(sample.input.last())
        }
    );
    match crate::parse::parse(args, item).and_then(crate::validate::validate) {
        Ok(checked) => crate::expand::expand(checked).to_string(),
        Err(e) => panic!("the attribute is refused: {e}"),
    }
}

#[test]
fn expanding_again_and_again_is_the_same_and_records_nothing_outside_a_compiler() {
    assert!(!eval_datasets::registry::records_here(std::env::args()));
    let first = expand_once();
    assert!(
        first.contains("registry : :: core :: option :: Option :: None"),
        "no registry entry outside a compiler"
    );
    for _ in 1..1_000 {
        assert_eq!(expand_once(), first);
    }
}
