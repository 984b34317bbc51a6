//! `evals stats`: seed 002's statistical summary of a dataset
//! (`crate::profile::DatasetStats`), printed, or written beside the
//! dataset with `--write`; and `evals guide`: its annotation guide.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::profile::{self, DatasetStats, Lengths};
use eval_datasets::Dataset;
use eval_datasets::files::{Replaced, write_replacing};
use eval_datasets::terminal::escaped;

use crate::Failure;

/// Flags of `evals stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset (.jsonl, .csv, .json).
    pub file: PathBuf,
    /// Print the statistics as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write them to `<dataset>-stats.json` beside the dataset (atomically;
    /// a file that differs is backed up first).
    #[arg(long, conflicts_with = "json")]
    pub write: bool,
}

/// Flags of `evals guide`.
#[derive(Debug, clap::Args)]
pub struct GuideArgs {
    /// The dataset (.jsonl, .csv, .json).
    pub file: PathBuf,
    /// Where to write the guide (default: `<dataset>-annotation-guide.md`
    /// beside the dataset); `-` prints it.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

fn load(file: &Path) -> Result<Dataset, Failure> {
    let shown = file.to_string_lossy().into_owned();
    Dataset::load_limited(file, &shown, eval_runtime::Config::max_dataset_bytes())
        .map_err(|e| Failure::config(e.to_string()))
}

/// Writes `text` to `path` (atomically, a backup of a file that differs) and
/// says what was done.
fn write(path: &Path, text: &str) -> Result<(), Failure> {
    let shown = escaped(&path.display().to_string()).into_owned();
    match write_replacing(path, text.as_bytes())
        .map_err(|e| Failure::config(format!("cannot write {shown}: {e}")))?
    {
        Replaced::Created => outln!("wrote {shown}"),
        Replaced::Unchanged => outln!("{shown} is up to date"),
        Replaced::Replaced { backup } => {
            outln!(
                "wrote {shown} (the previous one: {})",
                escaped(&backup.display().to_string())
            )
        }
    }
    Ok(())
}

pub fn guide(args: GuideArgs) -> Result<u8, Failure> {
    let d = load(&args.file)?;
    let name = profile::dataset_name(&args.file);
    let stats = DatasetStats::of(&name, &d);
    let text = profile::guide(&name, &d, &stats);
    match args.output {
        Some(p) if p.as_os_str() == "-" => out!("{text}"),
        Some(p) => write(&p, &text)?,
        None => write(&profile::guide_path(&args.file), &text)?,
    }
    Ok(0)
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let d = load(&args.file)?;
    let st = DatasetStats::of(&profile::dataset_name(&args.file), &d);
    if args.write {
        write(&profile::stats_path(&args.file), &st.to_json())?;
        return Ok(0);
    }
    if args.json {
        outjson!(st.to_json());
        return Ok(0);
    }
    let n = st.samples;
    let pct = |k: usize| {
        if n == 0 {
            0.0
        } else {
            k as f64 * 100.0 / n as f64
        }
    };
    let table = |title: &str, counts: &BTreeMap<String, usize>| {
        if counts.is_empty() {
            return;
        }
        outln!("{title}:");
        for (value, k) in counts {
            outln!("  {:<20} {k:>6} ({:.0}%)", escaped(value), pct(*k));
        }
    };
    let c = &st.coverage;
    outln!(
        "{}: {n} samples ({} multi-turn)",
        escaped(&args.file.display().to_string()),
        st.multi_turn
    );
    table("fields", &c.fields);
    table("query_type", &c.query_types);
    table("difficulty", &c.difficulty);
    table("edge_case", &c.edge_cases);
    table("category", &c.categories);
    table("tags", &c.tags);
    for (key, values) in &c.metadata {
        table(&format!("metadata {}", escaped(key)), values);
    }
    if c.source_docs.samples > 0 {
        outln!(
            "source_docs: {} samples ({:.0}%) name {} documents",
            c.source_docs.samples,
            pct(c.source_docs.samples),
            c.source_docs.documents
        );
    }
    let spread = |what: &str, l: &Option<Lengths>| {
        if let Some(l) = l {
            outln!(
                "{what}: min {}, median {}, mean {}, max {}",
                l.min,
                l.median,
                l.mean,
                l.max
            );
        }
    };
    let ds = &st.distributions;
    spread("input characters", &ds.input_chars);
    spread("input words", &ds.input_words);
    spread("expected answer characters", &ds.expected_chars);
    spread("expected answer words", &ds.expected_words);
    let histogram = |what: &str, h: &BTreeMap<usize, usize>| {
        let parts: Vec<String> = h.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        outln!("{what} (count: samples): {}", parts.join(", "));
    };
    histogram("turns", &ds.turns);
    histogram("contexts", &ds.contexts);
    histogram("reference contexts", &ds.reference_contexts);
    let q = &st.quality;
    outln!(
        "lint: {} error(s), {} warning(s){}",
        q.errors,
        q.warnings,
        if q.findings.is_empty() { "" } else { ":" }
    );
    for (code, k) in &q.findings {
        outln!("  {code:<24} {k:>6}");
    }
    Ok(0)
}
