//! `evals lint`: seed 002's dataset quality checks (the rules are
//! `eval_datasets::lint`), each finding with its code and file:line.

use std::path::{Path, PathBuf};

use eval_datasets::lint::{Finding, Severity, format_findings, lint_samples};
use eval_datasets::{Dataset, Format};

use crate::Failure;

/// Flags of `evals lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Dataset files (.jsonl, .ndjson, .csv, .json), or folders: every
    /// dataset file under them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A file not linted because it is one `evals stats --write` or `evals
/// guide` wrote beside a dataset (said on stderr, and in `--json`).
#[derive(Debug, serde::Serialize)]
struct Skipped {
    file: String,
    reason: &'static str,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    let mut linted = 0;
    for arg in &args.files {
        let files = if arg.is_dir() {
            let mut found = Vec::new();
            dataset_files(arg, &mut found)
                .map_err(|e| Failure::config(format!("{}: cannot list it: {e}", arg.display())))?;
            if found.is_empty() {
                return Err(Failure::config(format!(
                    "{}: no dataset file (.jsonl, .ndjson, .csv, .json) in it",
                    arg.display()
                )));
            }
            found
        } else {
            vec![arg.clone()]
        };
        for file in files {
            linted += 1;
            match lint_file(&file) {
                Err(findings) => match eval_runtime::profile::companion_kind(&file) {
                    Some(reason) => {
                        linted -= 1;
                        skipped.push(Skipped {
                            file: file.to_string_lossy().into_owned(),
                            reason,
                        });
                    }
                    None => all.extend(findings),
                },
                Ok(findings) => all.extend(findings),
            }
        }
    }
    if linted == 0 {
        return Err(Failure::config(format!(
            "nothing to lint: {}",
            skipped
                .iter()
                .map(|s| format!("{} is {}, not a dataset", s.file, s.reason))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let errors = all.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = all.len() - errors;
    if args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "errors": errors,
            "warnings": warnings,
            "findings": all,
            "skipped": skipped,
        }))
        .map_err(|e| Failure::config(e.to_string()))?;
        outln!("{text}");
    } else {
        for f in &all {
            let sev = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            // file:line:column, or the file alone for a finding about all of it.
            let at = match (f.line, f.column) {
                (0, _) => f.file.clone(),
                (line, Some(c)) => format!("{}:{line}:{c}", f.file),
                (line, None) => format!("{}:{line}", f.file),
            };
            outln!("{at}: {sev}[{}]: {}", f.code, f.message);
        }
        for s in &skipped {
            errln!("note: skipped {}: {}, not a dataset", s.file, s.reason);
        }
        outln!("{errors} error(s), {warnings} warning(s)");
    }
    Ok(u8::from(errors > 0))
}

/// The dataset files under `dir` (by extension; hidden folders and
/// `target/` left out; a folder reached twice through symbolic links is
/// read once, so a link loop ends), sorted.
fn dataset_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    walk(dir, out, &mut std::collections::HashSet::new())
}

fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if path.is_dir() {
            if name.is_some_and(|n| !n.starts_with('.') && n != "target") {
                walk(&path, out, seen)?;
            }
        } else if Format::from_path(&path.to_string_lossy()).is_ok() {
            out.push(path);
        }
    }
    Ok(())
}

/// The findings of one file: `Err` with the file's load errors when it
/// does not load as a dataset.
fn lint_file(path: &Path) -> Result<Vec<Finding>, Vec<Finding>> {
    let shown = path.to_string_lossy().into_owned();
    match Dataset::load_limited(path, &shown, eval_runtime::Config::max_dataset_bytes()) {
        Err(e) => Err(format_findings(&shown, &e)),
        Ok(d) => {
            let mut findings = lint_samples(&shown, &d.samples);
            findings.sort_by_key(|f| f.line);
            Ok(findings)
        }
    }
}
