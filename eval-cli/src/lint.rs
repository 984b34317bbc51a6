//! `evals lint`: seed 002's dataset quality checks (the rules are
//! `eval_datasets::lint`), each finding with its code and file:line.

use std::path::{Path, PathBuf};

use eval_datasets::lint::{Finding, Severity, format_findings, lint_samples};
use eval_datasets::terminal::escaped;
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
    /// Fix what can be fixed safely before linting: a sample whose input
    /// repeats an earlier one exactly (`DUPLICATE_QUERIES`, error) is
    /// dropped from a JSONL or CSV file, every other byte kept; a backup of
    /// the file is written first.
    #[arg(long)]
    pub fix: bool,
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
            if args.fix {
                fix_file(&file)?;
            }
            match lint_file(&file) {
                Err(findings) => match crate::profile::companion_kind(&file) {
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
        outjson!(text);
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
            // Ids and file names come from the files: shown escaped.
            outln!(
                "{}: {sev}[{}]: {}",
                escaped(&at),
                f.code,
                escaped(&f.message)
            );
        }
        for s in &skipped {
            errln!(
                "note: skipped {}: {}, not a dataset",
                escaped(&s.file),
                s.reason
            );
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
/// `--fix`: drops the samples whose input repeats an earlier one exactly
/// (after the lint's normalising), each record's bytes cut out of the file
/// and nothing else changed; a backup first. A `.json` document (its
/// samples are not records of their own) and a file that does not load are
/// left alone, said so.
fn fix_file(path: &Path) -> Result<(), Failure> {
    let shown = path.to_string_lossy().into_owned();
    // Read, cut and written back under the lock `evals interactive`'s
    // appenders take: a sample appended meanwhile waits, then lands in the
    // fixed file (none there: the lint says why).
    let Ok(_lock) = eval_datasets::append::lock_for_rewrite(path) else {
        return Ok(());
    };
    let Ok(d) = Dataset::load_limited(path, &shown, eval_runtime::Config::max_dataset_bytes())
    else {
        return Ok(()); // the lint reports why it does not load
    };
    let mut seen = std::collections::HashSet::new();
    let repeated: Vec<usize> = (0..d.samples.len())
        .filter(|&i| {
            let key = eval_datasets::similarity::normalise(d.samples[i].input.last());
            !key.is_empty() && !seen.insert(key)
        })
        .collect();
    if repeated.is_empty() {
        return Ok(());
    }
    if d.format == Format::Json {
        errln!(
            "note: {shown}: {} repeated input(s) not dropped: a .json document is not fixed in place",
            repeated.len()
        );
        return Ok(());
    }
    let bytes = eval_datasets::files::read_checked(path, eval_runtime::Config::max_dataset_bytes())
        .map_err(|e| Failure::config(format!("{shown}: {e}")))?;
    // Records in file order; each spans to the next one's start.
    let mut starts: Vec<(u64, usize)> = d
        .samples
        .iter()
        .enumerate()
        .map(|(i, s)| (s.source.offset, i))
        .collect();
    starts.sort_unstable();
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for (k, (start, i)) in starts.iter().enumerate() {
        if repeated.contains(i) {
            let end = starts
                .get(k + 1)
                .map_or(bytes.len() as u64, |(next, _)| *next);
            cut.push((*start as usize, (end as usize).min(bytes.len())));
        }
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for (start, end) in &cut {
        out.extend_from_slice(&bytes[at..*start]);
        at = *end;
    }
    out.extend_from_slice(&bytes[at..]);
    // The fixed file must still be the same dataset less those samples.
    let check = Dataset::from_bytes(&shown, &out).map_err(|e| {
        Failure::config(format!(
            "{shown}: --fix would not leave a dataset ({e}); the file was not changed"
        ))
    })?;
    if check.samples.len() + repeated.len() != d.samples.len() {
        return Err(Failure::config(format!(
            "{shown}: --fix would change more than the repeated samples; the file was not changed"
        )));
    }
    let lines: Vec<String> = repeated
        .iter()
        .map(|i| d.samples[*i].source.line.to_string())
        .collect();
    if let eval_datasets::files::Replaced::Replaced { backup } =
        eval_datasets::files::write_replacing(path, &out)
            .map_err(|e| Failure::config(format!("cannot write {shown}: {e}")))?
    {
        errln!(
            "fixed {shown}: dropped {} sample(s) repeating an earlier input (line(s) {}); backup: {}",
            repeated.len(),
            lines.join(", "),
            backup.display()
        );
    }
    Ok(())
}

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
