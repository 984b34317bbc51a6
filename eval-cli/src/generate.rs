//! `evals generate`: a synthetic golden dataset from a document corpus,
//! written by the configured judge model. A thin front end over
//! [`crate::synth`]: the flags become [`Options`], the outcome a
//! report and an exit code (0 the target count reached, 1 not reached
//! because candidates kept repeating questions already made, 2 could not
//! run or a batch failed: `SYNTHETIC_GENERATION_FAILED`).

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::synth::{
    Corpus, DEFAULT_BATCH, DEFAULT_CHUNK_WORDS, DEFAULT_SEED, Difficulty, GenerateError, Mix,
    MixError, Options, Outcome, OutputFormat, QueryType, generate_blocking, questions_of,
};
use eval_datasets::terminal::{escaped, escaped_lines};
use eval_runtime::services::Judge;

use crate::Failure;

/// Flags of `evals generate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The corpus: a folder of .txt/.md files (read recursively), one such
    /// file, or an Unrag dataset (.json) whose documents have `content`.
    pub corpus: PathBuf,
    /// The dataset to write (.jsonl or .csv, golden schema). An existing one
    /// is continued up to --count (a backup is kept).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// Samples the output is to hold (those already in it count); seed 002's
    /// minimum is 10.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(10..=100_000))]
    pub count: u64,
    /// Query types and their weights (seed 002's vocabulary), e.g.
    /// "factual=4,analytical=2,procedural=2,multi_hop=2,ambiguous=1,temporal=1,contradictory=1,unanswerable=1,out_of_scope=1"
    /// (the default). Types: factual, analytical, procedural, multi_hop; edge cases: ambiguous,
    /// temporal, contradictory, unanswerable, out_of_scope.
    #[arg(long, value_name = "MIX", conflicts_with = "types")]
    pub mix: Option<String>,
    /// Query types in equal shares, e.g. "factual,procedural".
    #[arg(long, value_name = "TYPES")]
    pub types: Option<String>,
    /// The knowledge domain (seed 002's `domain`, e.g. technical-docs),
    /// written to each sample's `metadata.domain`.
    #[arg(long, value_name = "DOMAIN")]
    pub domain: Option<String>,
    /// Difficulties and their weights, e.g. "easy=1,medium=2,hard=1" (default: equal shares).
    #[arg(long, value_name = "MIX")]
    pub difficulty: Option<String>,
    /// Seed of the passages drawn and the order of the questions.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Questions asked of the judge at once; the output is written after each batch.
    #[arg(long, default_value_t = DEFAULT_BATCH as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub batch: u64,
    /// Drop questions that repeat one of this dataset's (repeatable).
    #[arg(long = "against", value_name = "FILE")]
    pub against: Vec<PathBuf>,
    /// Start over: replace an existing output instead of continuing it (a backup is kept).
    #[arg(long)]
    pub fresh: bool,
    /// Words per chunk of a document, at most.
    #[arg(long, default_value_t = DEFAULT_CHUNK_WORDS as u64, value_parser = clap::value_parser!(u64).range(20..=5_000))]
    pub chunk_words: u64,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let config = crate::dotenv::settings(std::path::Path::new("."))?;
    for w in config.warnings() {
        errln!("warning: {}", escaped_lines(&w.to_string()));
    }
    let bad = |flag: &str, e: MixError| Failure::config(format!("--{flag}: {e}"));
    let types = match (&args.mix, &args.types) {
        (Some(m), _) => Mix::parse(m, QueryType::parse).map_err(|e| bad("mix", e))?,
        (None, Some(t)) => {
            let equal = t
                .split(',')
                .map(|name| name.split_once('=').map_or(name, |(n, _)| n))
                .collect::<Vec<_>>()
                .join(",");
            Mix::parse(&equal, QueryType::parse).map_err(|e| bad("types", e))?
        }
        (None, None) => Mix::default(),
    };
    let difficulty = match &args.difficulty {
        Some(d) => Mix::parse(d, Difficulty::parse).map_err(|e| bad("difficulty", e))?,
        None => Mix::default(),
    };
    let judge = Judge::from_config(config).map_err(|e| Failure::config(e.to_string()))?;
    // A wrong output name is said before the corpus is read.
    OutputFormat::of(&args.output).map_err(|e| failure(&e))?;
    let corpus = Corpus::load(
        &args.corpus,
        args.chunk_words as usize,
        config.max_dataset_bytes,
    )
    .map_err(|e| failure(&e))?;
    let options = Options {
        count: args.count as usize,
        types,
        difficulty,
        seed: args.seed,
        batch: args.batch as usize,
        fresh: args.fresh,
        against: questions_of(&args.against, config.max_dataset_bytes).map_err(|e| failure(&e))?,
        max_file_bytes: config.max_dataset_bytes,
        domain: args.domain.clone(),
    };
    errln!(
        "generating up to {} samples from {} ({} documents, {} chunks) with judge {}",
        options.count,
        escaped(&corpus.source),
        corpus.documents,
        corpus.chunks.len(),
        escaped(judge.model())
    );
    // A progress bar on a terminal: samples in the output of the target.
    let bar = (std::io::stderr().is_terminal() && !args.json).then(|| {
        let bar = indicatif::ProgressBar::new(options.count as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} samples {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let generated = generate_blocking(
        &corpus,
        &args.output,
        &options,
        &judge,
        config.prices.as_ref(),
        &mut |done, _| {
            if let Some(bar) = &bar {
                bar.set_position(done as u64);
            }
        },
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match generated {
        Ok(outcome) => {
            show(&outcome, args.json)?;
            if outcome.reached() {
                Ok(0)
            } else {
                errln!(
                    "error: generated {} of {} samples: the judge kept writing questions already made ({} near-duplicates dropped); try another --seed, a larger corpus or a smaller --count",
                    outcome.total,
                    outcome.target,
                    outcome.dropped
                );
                Ok(1)
            }
        }
        Err(e) => {
            if let GenerateError::Failed { outcome, .. } = &e {
                show(outcome, args.json)?;
            }
            Err(failure(&e))
        }
    }
}

/// The error as printed: what came from outside in it (file names, the
/// judge's words) escaped ([`eval_datasets::terminal`]).
fn failure(e: &GenerateError) -> Failure {
    Failure::config(escaped_lines(&e.to_string()))
}

fn show(outcome: &Outcome, json: bool) -> Result<(), Failure> {
    if json {
        let mut value = serde_json::to_value(outcome)
            .map_err(|e| Failure::config(format!("cannot render the outcome: {e}")))?;
        let u = &outcome.usage;
        value["usage"] = serde_json::json!({
            "calls": u.calls, "retries": u.retries, "reasks": u.reasks, "cache_hits": u.cache_hits,
            "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
        });
        value["cost"] = match &outcome.cost {
            None => serde_json::Value::Null,
            Some(Ok(c)) => serde_json::json!(c),
            Some(Err(why)) => serde_json::json!({ "unknown": why.to_string() }),
        };
        let text = serde_json::to_string_pretty(&value)
            .map_err(|e| Failure::config(format!("cannot render the outcome: {e}")))?;
        outjson!(text);
    } else {
        out!("{}", escaped_lines(&outcome.render()));
    }
    Ok(())
}
