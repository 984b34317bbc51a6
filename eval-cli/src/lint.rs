//! `evals lint`: seed 002's dataset quality checks (the rules are
//! `eval_core::lint`), each finding with its code and file:line.

use std::path::{Path, PathBuf};

use eval_core::Dataset;
use eval_core::lint::{Finding, Severity, format_findings, lint_samples};

use crate::Failure;

/// Flags of `evals lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Dataset files (.jsonl, .csv, .json).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let mut all = Vec::new();
    for file in &args.files {
        all.extend(lint_file(file));
    }
    let errors = all.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = all.len() - errors;
    if args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "errors": errors,
            "warnings": warnings,
            "findings": all,
        }))
        .map_err(|e| Failure::config(e.to_string()))?;
        outln!("{text}");
    } else {
        for f in &all {
            let sev = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let column = f.column.map(|c| format!(":{c}")).unwrap_or_default();
            outln!(
                "{}:{}{column}: {sev}[{}]: {}",
                f.file,
                f.line,
                f.code,
                f.message
            );
        }
        outln!("{errors} error(s), {warnings} warning(s)");
    }
    Ok(u8::from(errors > 0))
}

pub fn lint_file(path: &Path) -> Vec<Finding> {
    let shown = path.to_string_lossy().into_owned();
    match Dataset::load_limited(path, &shown, eval_runtime::Config::max_dataset_bytes()) {
        Err(e) => format_findings(&shown, &e),
        Ok(d) => {
            let mut findings = lint_samples(&shown, &d.samples);
            findings.sort_by_key(|f| f.line);
            findings
        }
    }
}
