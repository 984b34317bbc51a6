//! `evals stats`: counts and distributions of a dataset (seed 002's report).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use eval_core::{Dataset, Expected, Input};
use serde::Serialize;

use crate::Failure;
use eval_core::lint::distribution;

/// Flags of `evals stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset (.jsonl, .csv, .json).
    pub file: PathBuf,
    /// Print the statistics as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What `evals stats` reports.
#[derive(Debug, Serialize)]
pub struct Stats {
    pub file: String,
    pub samples: usize,
    pub multi_turn: usize,
    /// Samples lacking each field.
    pub missing: BTreeMap<&'static str, usize>,
    /// Samples per tag.
    pub tags: BTreeMap<String, usize>,
    /// Samples per value of metadata `category`, `difficulty`, `query_type`, `edge_case`.
    pub distributions: BTreeMap<&'static str, BTreeMap<String, usize>>,
    /// Words in the expected answers: min, median, max.
    pub answer_words: Option<[usize; 3]>,
    /// Characters in the inputs: min, median, max.
    pub input_chars: Option<[usize; 3]>,
}

pub fn stats(file: &Path) -> Result<Stats, Failure> {
    let shown = file.to_string_lossy().into_owned();
    let d = Dataset::load_limited(file, &shown, eval_runtime::Config::max_dataset_bytes())
        .map_err(|e| Failure::config(e.to_string()))?;
    let s = &d.samples;
    let count = |f: &dyn Fn(&eval_core::Sample) -> bool| s.iter().filter(|x| f(x)).count();
    let mut missing = BTreeMap::new();
    missing.insert("expected", count(&|x| x.expected.is_none()));
    missing.insert("context", count(&|x| x.context.is_empty()));
    missing.insert(
        "reference_contexts",
        count(&|x| x.reference_contexts.is_empty()),
    );
    missing.insert("tags", count(&|x| x.tags.is_empty()));
    missing.insert("id", count(&|x| !x.explicit_id));
    let mut tags = BTreeMap::new();
    for x in s {
        for t in &x.tags {
            *tags.entry(t.clone()).or_insert(0) += 1;
        }
    }
    let mut distributions = BTreeMap::new();
    for field in ["category", "difficulty", "query_type", "edge_case"] {
        let dist = distribution(s, field);
        if !dist.is_empty() {
            distributions.insert(field, dist);
        }
    }
    let spread = |mut v: Vec<usize>| {
        v.sort_unstable();
        (!v.is_empty()).then(|| [v[0], v[v.len() / 2], v[v.len() - 1]])
    };
    Ok(Stats {
        file: shown,
        samples: s.len(),
        multi_turn: count(&|x| matches!(x.input, Input::Turns(ref t) if t.len() > 1)),
        missing,
        tags,
        distributions,
        answer_words: spread(
            s.iter()
                .filter_map(|x| x.expected.as_ref())
                .map(|e| match e {
                    Expected::Text(t) => t.split_whitespace().count(),
                    Expected::PerTurn(t) => t.iter().map(|a| a.split_whitespace().count()).sum(),
                })
                .collect(),
        ),
        input_chars: spread(
            s.iter()
                .map(|x| x.input.display_text().chars().count())
                .collect(),
        ),
    })
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let st = stats(&args.file)?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&st).map_err(|e| Failure::config(e.to_string()))?
        );
        return Ok(0);
    }
    let pct = |n: usize| {
        if st.samples == 0 {
            0.0
        } else {
            n as f64 * 100.0 / st.samples as f64
        }
    };
    outln!(
        "{}: {} samples ({} multi-turn)",
        st.file,
        st.samples,
        st.multi_turn
    );
    outln!("missing:");
    for (field, n) in &st.missing {
        outln!("  {field:<20} {n:>6} ({:.0}%)", pct(*n));
    }
    if !st.tags.is_empty() {
        outln!("tags:");
        for (tag, n) in &st.tags {
            outln!("  {tag:<20} {n:>6} ({:.0}%)", pct(*n));
        }
    }
    for (field, dist) in &st.distributions {
        outln!("{field}:");
        for (value, n) in dist {
            outln!("  {value:<20} {n:>6} ({:.0}%)", pct(*n));
        }
    }
    if let Some([lo, mid, hi]) = st.answer_words {
        outln!("expected answer words: min {lo}, median {mid}, max {hi}");
    }
    if let Some([lo, mid, hi]) = st.input_chars {
        outln!("input characters: min {lo}, median {mid}, max {hi}");
    }
    Ok(0)
}
