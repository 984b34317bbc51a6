//! `evals report`: compare two results files, or accept one as the baseline.

use std::path::PathBuf;

use eval_runtime::diff;
use eval_runtime::results::Results;

use crate::Failure;

/// `evals report ...`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Per sample (or query) and metric, what got better or worse between
    /// two results files, and which samples are new or gone. Exits 1 when
    /// something got worse by more than --epsilon.
    Diff(DiffArgs),
    /// Make a results file the baseline (the old baseline is backed up first).
    Accept(AcceptArgs),
}

/// Flags of `evals report diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The earlier results file (e.g. the baseline).
    pub old: PathBuf,
    /// The later results file.
    pub new: PathBuf,
    /// Ignore movements of at most this much.
    #[arg(long, default_value_t = 0.0)]
    pub epsilon: f64,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `evals report accept`.
#[derive(Debug, clap::Args)]
pub struct AcceptArgs {
    /// The results file to accept.
    pub results: PathBuf,
    /// The baseline to replace.
    pub baseline: PathBuf,
}

fn read(path: &std::path::Path) -> Result<Results, Failure> {
    Results::read(path).map_err(|e| Failure::config(e.to_string()))
}

pub fn run(command: Command) -> Result<u8, Failure> {
    match command {
        Command::Diff(args) => {
            if !args.epsilon.is_finite() || args.epsilon < 0.0 {
                return Err(Failure::config("--epsilon must be a number ≥ 0"));
            }
            let d = diff::diff(&read(&args.old)?, &read(&args.new)?, args.epsilon);
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&d).map_err(|e| Failure::config(e.to_string()))?
                );
            } else {
                print!("{}", d.render());
            }
            Ok(u8::from(!d.regressions().is_empty()))
        }
        Command::Accept(args) => {
            let results = read(&args.results)?;
            let backup = diff::accept(&results, &args.baseline)
                .map_err(|e| Failure::config(e.to_string()))?;
            println!(
                "{} is the baseline now{}",
                args.baseline.display(),
                backup
                    .map(|b| format!(" (previous kept as {})", b.display()))
                    .unwrap_or_default()
            );
            Ok(0)
        }
    }
}
