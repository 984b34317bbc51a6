//! The `#[eval_dataset]` compile errors users see, pinned (trybuild).
//!
//! Dataset paths in `tests/ui/*.rs` are relative to trybuild's scratch crate
//! under `target/tests/trybuild/`, hence the `../../../../`.
//! After an intended message change: `TRYBUILD=overwrite cargo test --test compile_errors`.

#[test]
fn compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
