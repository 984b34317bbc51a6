//! `evals`: run agentspec manifests and eval datasets against any HTTP
//! agent, and lint, describe, convert and upgrade datasets.
//!
//! Exit codes: 0 success; 1 the evaluation failed (a sample failed where
//! samples are judged singly, a gate was missed, a baseline regressed), lint
//! found errors, `report diff` found a regression, or `report summary` a
//! failed run; 2 the command could
//! not run (bad flags, unreadable or malformed files, an unreachable setup,
//! no sample scored).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod out;
mod calibrate;
mod convert;
mod convert_names; // issue38:convert
mod create;
mod discover;
mod dotenv;
mod evaluate;
mod generate;
mod interactive;
mod lint;
mod profile;
mod report;
mod stats;
mod synth;

/// Run LLM-agent evals from the command line.
#[derive(Debug, Parser)]
#[command(
    name = "evals",
    version,
    about,
    after_help = "Exit codes: 0 success; 1 the evaluation failed (a sample failed where samples are judged singly, a gate was missed, a baseline regressed), lint found errors, or report diff/merge/summary found a regression, a missed gate or a failed run; 2 the command could not run (every problem is listed with file and line)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a manifest or dataset against an HTTP agent and report the scores.
    Evaluate(Box<evaluate::Args>),
    /// Talk to the agent, see its answers scored, and append the ones you accept to a dataset.
    Interactive(Box<interactive::Args>),
    /// Write a starter `evals/evals.json` (runevals format).
    Init(discover::InitArgs),
    /// Create a golden evaluation dataset, seed 002's seven steps (asked on a terminal, or given as flags): scope, queries, ground truth, contexts, edge cases, validation, LangSmith upload.
    Create(Box<create::Args>),
    /// Check datasets for quality problems (seed 002's checks and codes).
    Lint(lint::Args),
    /// Counts, distributions and lint findings of a dataset (`--write`: `<dataset>-stats.json` beside it).
    Stats(stats::Args),
    /// Write a dataset's annotation guide (`<dataset>-annotation-guide.md` beside it), from the dataset itself.
    Guide(stats::GuideArgs),
    /// Generate a golden dataset from a document corpus with the judge model (synthetic questions, answers and contexts).
    Generate(Box<generate::Args>),
    /// Convert a dataset between JSONL, CSV and runevals JSON.
    Convert(convert::Args),
    /// Upgrade a legacy runevals file to the versioned format (a backup is written first).
    Upgrade(convert::UpgradeArgs),
    /// Measure a metric against human labels: Cohen's κ, accuracy, true-pass and true-fail rates, Spearman's ρ, under the judge's fingerprint (`--min-kappa K` exits 1 below K).
    Calibrate(calibrate::Args),
    /// Join parts and shards (`merge`), summarise results for a terminal or CI (`summary`), compare results files (`diff`), or accept one as the baseline (`accept`).
    #[command(subcommand)]
    Report(report::Command),
}

/// A failure that ends the command: its message and exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// A usage or configuration error (exit code 2).
    pub fn config(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

fn main() -> ExitCode {
    // SIGPIPE stays ignored (Rust's default): a socket the agent closed is a
    // failed sample, and stdout to a closed pipe ends output quietly (`out`).
    let cli = Cli::parse();
    let result = match cli.command {
        // runevals' `--interactive`: the same as `evals interactive`.
        Command::Evaluate(args) if args.interactive => interactive::run(interactive::Args {
            agent: args.agent,
            metrics: args.metrics,
            dataset: None,
            tags: Vec::new(),
            timeout_secs: args.timeout_secs,
        }),
        Command::Evaluate(args) => evaluate::run(*args),
        Command::Interactive(args) => interactive::run(*args),
        Command::Init(args) => discover::init(args),
        Command::Create(args) => create::run(*args),
        Command::Lint(args) => lint::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Guide(args) => stats::guide(args),
        Command::Generate(args) => generate::run(*args),
        Command::Convert(args) => convert::run(args),
        Command::Upgrade(args) => convert::upgrade(args),
        Command::Report(command) => report::run(command),
        Command::Calibrate(args) => calibrate::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            for line in failure.message.lines() {
                errln!("error: {line}");
            }
            ExitCode::from(failure.code)
        }
    }
}
