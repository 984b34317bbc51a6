//! Merges results files (CI shards, or the per-test parts `cargo nextest run`
//! leaves under `target/evals/<binary>.parts/<run id>/`) into one, checks the
//! gates over all samples, and exits 1 when one is missed.
//!
//! `cargo run --example merge_results -- OUT.json INPUT...` (an INPUT may be
//! a directory: every `*.json` under it is read).

use std::path::PathBuf;
use std::process::ExitCode;

use eval_runtime::results::{self, Results};

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [out, inputs @ ..] = args.as_slice() else {
        eprintln!("usage: merge_results OUT.json INPUT...");
        return ExitCode::from(2);
    };
    if inputs.is_empty() {
        eprintln!("usage: merge_results OUT.json INPUT...");
        return ExitCode::from(2);
    }
    let mut parts = Vec::new();
    for input in inputs {
        let read = if input.is_dir() {
            results::merge_dir(input)
        } else {
            Results::read(input)
        };
        match read {
            Ok(r) => parts.push(r),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let merged = match results::merge(&parts) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = merged.write(out) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    for d in &merged.datasets {
        println!(
            "{}: {} samples, {} passed, {} failed, {} errors",
            d.name, d.samples, d.passed, d.failed, d.errors
        );
    }
    let failed = merged.failed_gates();
    for (dataset, gate) in &failed {
        println!("gate {dataset} FAILED: {gate}");
    }
    println!("merged: {}", out.display());
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
