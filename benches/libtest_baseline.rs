//! Baseline for the benchmark (see examples/bench.rs): 1,000 trivial
//! `#[test]`s, generated at build time by `build.rs`, to measure what libtest
//! itself costs per test (it spawns a thread per test), so the attribute
//! path's own overhead can be told apart from libtest's.

include!(concat!(env!("OUT_DIR"), "/libtest_baseline.rs"));
