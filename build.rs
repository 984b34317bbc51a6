//! Generates the benchmark's libtest baseline (`benches/libtest_baseline.rs`
//! includes it): 1,000 trivial hand-written-style `#[test]`s, to measure what
//! libtest itself costs per test, so the attribute path's own overhead can be
//! told apart from libtest's. Generated here rather than committed.

use std::fmt::Write as _;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let mut out = String::from(
        "fn check(i: usize) {\n    assert!(std::hint::black_box(i) < 1_000_000);\n}\n",
    );
    for i in 0..1000 {
        let _ = write!(out, "\n#[test]\nfn t{i:04}() {{\n    check({i});\n}}\n");
    }
    let dir = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let path = std::path::Path::new(&dir).join("libtest_baseline.rs");
    std::fs::write(&path, out).expect("write the generated libtest baseline");
}
