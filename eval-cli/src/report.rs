//! `evals report`: join the parts of a nextest run or the shards of a
//! partitioned one (`merge`, which judges the gates over the whole),
//! summarise results files for a person or a CI page (`summary`), compare
//! two results files (`diff`), accept one as the baseline, or write the HTML
//! report of results files (`html`).

use std::path::PathBuf;

use eval_runtime::__cli::Paint;
use eval_runtime::__cli::results::{
    append_step_summary, merge_paths_allowing, summary_markdown, summary_text,
};
use eval_runtime::Config;
use eval_runtime::diff;
use eval_runtime::results::Results;

use crate::Failure;

/// `evals report ...`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Join results files — the parts `cargo nextest run` leaves under
    /// `target/evals/<package>/<binary>.parts/`, or the results of
    /// `--partition` shards — into one, and judge every gate over the whole
    /// dataset. The join is incomplete whenever a part is, unless the other
    /// parts supply what it lacks whole: samples missing, or datasets a
    /// part's run did not reach (killed, stopped, filtered). Exits 1 when
    /// the joined run fails (a missed gate, or a failed sample where
    /// samples are judged singly) or, without --partial, is incomplete
    /// (naming what is missing); 2 when the inputs cannot be joined (a
    /// sample in two of them, different binaries, a file whose totals do
    /// not add up, another question asked of a dataset: thresholds, gates,
    /// metric options or sets).
    Merge(MergeArgs),
    /// A run's summary: the verdict, per dataset its counts, metrics, gates
    /// (with the samples that could not be scored), latency, tokens and
    /// cost, whether the run was complete, and the samples that did not
    /// pass with why. When GITHUB_STEP_SUMMARY is set, its Markdown is also
    /// appended to that file (the GitHub Actions job page shows it). Exits
    /// 0 when every run passed, 1 when one failed (a failed sample where
    /// samples are judged singly, a sample not scored, a missed gate) or is
    /// incomplete (stopped half-way, filtered, datasets missing), 2
    /// when a file cannot be read, does not add up (its totals against its
    /// records, `complete` against what it holds) or the summary cannot be
    /// written.
    Summary(SummaryArgs),
    /// Compare two results files: per dataset and metric, the paired
    /// difference (exact McNemar for pass/fail scores, paired t otherwise)
    /// with its 95% interval, and a verdict: regression, improvement, no
    /// change (the interval within ±--epsilon) or inconclusive, with the
    /// samples that would decide it; gates that flipped (a regression only
    /// when proven missed now, else inconclusive; "threshold changed" when
    /// the gate itself did); what differs in the question asked (thresholds,
    /// gates, metric options or sets); the samples that moved, new or gone.
    /// `--format markdown` for a pull-request comment. Exits 1 only on a
    /// regression (a significant drop, a gate met before and proven missed
    /// now, samples no longer scored), 2 when a file cannot be read, does
    /// not add up, or holds an incomplete run (without --partial), or the
    /// runs cannot be compared (another judge, other data).
    Diff(DiffArgs),
    /// Make a results file the baseline (the old baseline is backed up
    /// first). Refuses (exit 2) a file that does not add up, and one of an
    /// incomplete run without --partial.
    Accept(AcceptArgs),
    /// Write the HTML report of results files: one self-contained page
    /// (no network; opens from file://) with the summary per dataset and
    /// metric, score distributions, every sample (failing first, filterable,
    /// searchable) and, with --baseline, what got better or worse. Exits 2
    /// when an input cannot be read.
    Html(HtmlArgs),
}

/// Flags of `evals report html`.
#[derive(Debug, clap::Args)]
pub struct HtmlArgs {
    /// Results files, shown together.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Where to write the page (default: the first results file with `.html`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// A results file to compare with (e.g. the baseline): per sample and
    /// metric what got better or worse, and the summary deltas.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
}

/// Flags of `evals report diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The earlier results file (e.g. the baseline).
    pub old: PathBuf,
    /// The later results file.
    pub new: PathBuf,
    /// A difference whose 95% interval lies within ±epsilon is no change
    /// (the default 0: only identical scores are).
    #[arg(long, default_value_t = 0.0)]
    pub epsilon: f64,
    /// How to print the comparison: text (for a terminal), json, or
    /// markdown (GitHub-flavoured, for a pull-request comment).
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Compare even when a file holds an incomplete run (its missing
    /// samples then read as removed or added).
    #[arg(long)]
    pub partial: bool,
    /// Compare runs whose judge differs for a metric both scored (model,
    /// host, settings, prompt or definition version); the comparison says so.
    #[arg(long)]
    pub allow_judge_change: bool,
    /// Compare runs whose datasets have different contents; samples whose
    /// content changed are not paired, and the comparison says so.
    #[arg(long)]
    pub allow_dataset_change: bool,
}

/// What `evals report diff` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// For a terminal.
    Text,
    /// The comparison's JSON.
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// What `evals report summary` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryFormat {
    /// For a terminal.
    Text,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// Flags of `evals report summary`.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// Results files (several: one summary, a section per file).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// How to print it: text (for a terminal) or markdown (GitHub-flavoured).
    /// The Markdown goes to GITHUB_STEP_SUMMARY, when set, either way.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub format: SummaryFormat,
}

/// Flags of `evals report merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Where to write the joined results (atomically).
    pub output: PathBuf,
    /// Results files, or directories searched for `*.json` results files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Print the joined results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Accept a join that lacks samples of a dataset, or datasets a part's
    /// run did not reach (its gates are then not judged, and the joined
    /// file still says it is incomplete); without it an incomplete join
    /// exits 1, since a missing shard or a killed part would otherwise pass
    /// unnoticed.
    #[arg(long)]
    pub partial: bool,
    /// What an inconclusive verdict counts as in the joined run: estimate,
    /// fail or pass (default: as the parts were run).
    #[arg(long, value_name = "estimate|fail|pass", value_parser = crate::evaluate::parse_inconclusive)]
    pub inconclusive: Option<eval_runtime::verdict::OnInconclusive>,
    /// Join parts scored by different judges (they are refused otherwise).
    #[arg(long)]
    pub allow_judge_change: bool,
    /// Join parts run on different dataset contents (refused otherwise).
    #[arg(long)]
    pub allow_dataset_change: bool,
}

/// Flags of `evals report accept`.
#[derive(Debug, clap::Args)]
pub struct AcceptArgs {
    /// The results file to accept.
    pub results: PathBuf,
    /// The baseline to replace.
    pub baseline: PathBuf,
    /// Accept the results of an incomplete run (stopped half-way, filtered)
    /// as the baseline anyway.
    #[arg(long)]
    pub partial: bool,
}

/// The results at `path`, refused when they do not add up (totals against
/// records, `complete` against what is there).
fn read(path: &std::path::Path) -> Result<Results, Failure> {
    Results::read_consistent(path).map_err(|e| Failure::config(e.to_string()))
}

/// The results at `path`, which must be of a complete run unless `partial`.
fn read_whole(path: &std::path::Path, partial: bool) -> Result<Results, Failure> {
    let results = read(path)?;
    if !partial {
        results
            .require_complete(path)
            .map_err(|e| Failure::config(e.to_string()))?;
    }
    Ok(results)
}

/// `evals report summary`.
fn summary(args: SummaryArgs) -> Result<u8, Failure> {
    let runs = args
        .results
        .iter()
        .map(|p| read(p))
        .collect::<Result<Vec<Results>, Failure>>()?;
    let markdown = summary_markdown(&runs);
    match args.format {
        SummaryFormat::Markdown => out!("{markdown}"),
        SummaryFormat::Text => {
            let texts: Vec<String> = runs
                .iter()
                .map(|r| summary_text(r, Paint::stdout()))
                .collect();
            out!("{}", texts.join("\n"));
        }
    }
    let config = Config::global().map_err(|e| Failure::config(e.to_string()))?;
    if let Some(path) = &config.step_summary {
        append_step_summary(path, &markdown)
            .map_err(|e| Failure::config(format!("GITHUB_STEP_SUMMARY: {e}")))?;
        errln!("summary appended to {}", path.display());
    }
    // An incomplete run (killed, filtered) is not a pass.
    let passed = runs
        .iter()
        .all(|r| r.verdict().passed() && r.incompleteness().is_none());
    Ok(u8::from(!passed))
}

/// `evals report merge`: the parts joined, the whole judged and written
/// (with its report beside it); exit 1 when it fails or, without
/// `--partial`, is incomplete.
fn merge(args: MergeArgs) -> Result<u8, Failure> {
    // An input that is the output (a rerun into the same place) is not an input.
    let inputs: Vec<PathBuf> = args
        .inputs
        .iter()
        .filter(|p| **p != args.output)
        .cloned()
        .collect();
    let allow = diff::Allow::new(args.allow_judge_change, args.allow_dataset_change);
    let mut merged =
        merge_paths_allowing(&inputs, allow).map_err(|e| Failure::config(e.to_string()))?;
    if let Some(on) = args.inconclusive {
        merged = merged.counting_inconclusive(on);
    }
    merged.written_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    merged
        .write(&args.output)
        .map_err(|e| Failure::config(e.to_string()))?;
    // The report of the whole, beside it (EVAL_HTML=off: not).
    let html = Config::global()
        .is_ok_and(|c| c.html)
        .then(|| eval_runtime::__cli::report::html_path(&args.output))
        .filter(|p| *p != args.output);
    if let Some(path) = &html {
        eval_runtime::__cli::report::write_html(path, std::slice::from_ref(&merged), None)
            .map_err(|e| Failure::config(e.to_string()))?;
    }
    let verdict = merged.verdict();
    if args.json {
        outjson!(
            serde_json::to_string_pretty(&merged).map_err(|e| Failure::config(e.to_string()))?
        );
    } else {
        for d in &merged.datasets {
            outln!(
                "{}: {} of {} samples, {} passed, {} failed, {} errors",
                d.name,
                d.samples,
                d.planned.map_or("?".to_string(), |p| p.to_string()),
                d.passed,
                d.failed,
                d.errors
            );
        }
        for line in verdict.gate_lines_with(eval_runtime::__cli::Paint::stdout()) {
            outln!("{line}");
        }
        // Under nextest no process says how many samples passed or
        // failed without proof: the join does.
        for line in eval_runtime::__cli::results::unproven_lines(&merged, Some(&args.output)) {
            errln!("note: {line}");
        }
        outln!(
            "merged {} sample(s){} into {}",
            merged.samples.len(),
            match merged.incompleteness() {
                None => String::new(),
                Some(why) => format!(" (incomplete: {why})"),
            },
            args.output.display()
        );
        if let Some(path) = &html {
            outln!("html: {}", path.display());
        }
    }
    if !merged.complete && !args.partial {
        for d in merged.datasets.iter().filter(|d| !d.complete) {
            errln!(
                "error: {}: {} of {} samples: a shard or part is missing (--partial accepts that)",
                d.name,
                d.samples,
                d.planned.map_or("?".to_string(), |p| p.to_string())
            );
        }
        for m in &merged.missing_datasets {
            if m.starts_with("(unknown") {
                errln!("error: {m} (--partial accepts that)");
            } else {
                errln!(
                    "error: dataset {m} is not in the join: a part's run did not reach it (killed, stopped or filtered) and no part holds it whole (--partial accepts that)"
                );
            }
        }
        return Ok(1);
    }
    Ok(u8::from(!verdict.passed()))
}

pub fn run(command: Command) -> Result<u8, Failure> {
    match command {
        Command::Summary(args) => summary(args),
        Command::Merge(args) => merge(args),
        Command::Diff(args) => {
            if !args.epsilon.is_finite() || args.epsilon < 0.0 {
                return Err(Failure::config("--epsilon must be a number ≥ 0"));
            }
            let old = read_whole(&args.old, args.partial)?;
            let new = read_whole(&args.new, args.partial)?;
            let allow = diff::Allow::new(args.allow_judge_change, args.allow_dataset_change);
            let d = diff::compare(&old, &new, args.epsilon, allow)
                .map_err(|e| Failure::config(e.to_string()))?;
            let format = if args.json {
                DiffFormat::Json
            } else {
                args.format
            };
            match format {
                DiffFormat::Json => outjson!(
                    serde_json::to_string_pretty(&d).map_err(|e| Failure::config(e.to_string()))?
                ),
                DiffFormat::Markdown => out!(
                    "{}",
                    eval_runtime::__cli::diff::diff_markdown(&old, &new, &d)
                ),
                DiffFormat::Text => out!("{}", d.render()),
            }
            Ok(u8::from(d.regressed()))
        }
        Command::Html(args) => {
            let results = args
                .results
                .iter()
                .map(|p| read(p))
                .collect::<Result<Vec<_>, _>>()?;
            let baseline = args.baseline.as_deref().map(read).transpose()?;
            let output = args
                .output
                .clone()
                .unwrap_or_else(|| eval_runtime::__cli::report::html_path(&args.results[0]));
            if args.results.contains(&output) {
                return Err(Failure::config(format!(
                    "{} is an input: the report would replace it (-o names another file)",
                    output.display()
                )));
            }
            eval_runtime::__cli::report::write_html(&output, &results, baseline.as_ref())
                .map_err(|e| Failure::config(e.to_string()))?;
            outln!("html: {}", output.display());
            Ok(0)
        }
        Command::Accept(args) => {
            let results = read_whole(&args.results, args.partial)?;
            let backup = eval_runtime::__cli::diff::accept(&results, &args.baseline)
                .map_err(|e| Failure::config(e.to_string()))?;
            outln!(
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
