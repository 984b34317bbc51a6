//! `evals create`: seed 002's "Create Evaluation Dataset", its seven steps
//! walked on a terminal, every answer also a flag (for scripts, and to skip
//! a question): scope (domain, query types, size), sample queries (typed,
//! a `.txt`/`.jsonl`/`.csv` file, production traces, synthetic generation
//! from a corpus, or several), ground truth (a file merged by id or query,
//! the traces' outputs, the judge model's, or typed), contexts, edge cases,
//! validation (`evals lint`'s checks, safe fixes on request) and approval.
//! It writes the bundle — `{domain}-eval-dataset-v{n}.jsonl` and `.csv`
//! (the golden schema, `metadata.domain` and `confidence` on every pair),
//! `{domain}-annotation-guide.md`, `{domain}-dataset-stats.json` — and,
//! with `LANGSMITH_API_KEY`, uploads it to LangSmith
//! (`LANGSMITH_UPLOAD_FAILED` on failure, the files kept).

use std::io::{BufRead as _, IsTerminal as _};
use std::path::{Path, PathBuf};

use eval_datasets::Dataset;
use eval_runtime::profile::{self, DatasetStats};
use eval_runtime::services::{LANGSMITH_ENDPOINT, LangSmith};
use serde_json::{Map, Value, json};

use crate::Failure;

mod answers;
mod bundle;
mod form;
mod references;
mod sources;

use bundle::{dedupe, fix, golden, report_validation, summary, to_samples, write};
use sources::{Sources, generated};

/// Flags of `evals create` (each answers one question of the walk).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Step 1: the knowledge domain (e.g. technical-docs): names the files.
    #[arg(long)]
    pub domain: Option<String>,
    /// Step 1: query types, comma-separated: factual, analytical,
    /// procedural, multi_hop, or mixed (all four).
    #[arg(long)]
    pub types: Option<String>,
    /// Step 1: target number of QA pairs (at least 10).
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..=100_000))]
    pub size: Option<u64>,
    /// Step 2: sample queries: a .txt file (one query per line), or a
    /// .jsonl/.csv dataset.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// Step 3: ground truth to merge into the queries (.jsonl/.csv: `query`
    /// or `id`, `ground_truth`, `contexts`, `source_docs`).
    #[arg(long = "ground-truth", value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Step 2: production traces (.jsonl/.csv, e.g. a LangSmith run
    /// export: `inputs`/`outputs`, or `input`/`output` columns).
    #[arg(long, value_name = "FILE")]
    pub traces: Option<PathBuf>,
    /// Step 2: a document corpus to generate queries (and answers) from,
    /// with the judge model (as `evals generate`).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Step 3: how ground truth is made: manual, expert, document or llm.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Step 3: how judge-written answers (strategies expert and llm) are
    /// validated: `ask` reviews them pair by pair on a terminal (the
    /// default there), `accept` keeps them unreviewed (`reviewed: false`;
    /// the default without a terminal).
    #[arg(long, value_name = "ask|accept")]
    pub review: Option<String>,
    /// Step 4: how the source documents are organised: single,
    /// collections or hierarchical.
    #[arg(long)]
    pub organisation: Option<String>,
    /// Step 5: edge cases to cover, comma-separated: unanswerable,
    /// ambiguous, multi_hop, temporal, contradictory, out_of_scope (or none).
    #[arg(long = "edge-cases")]
    pub edge_cases: Option<String>,
    /// Step 6: fix what can be fixed safely (repeated queries dropped,
    /// whitespace trimmed) without asking.
    #[arg(long)]
    pub fix: bool,
    /// Step 6: approve the dataset without asking.
    #[arg(long)]
    pub yes: bool,
    /// Where the files are written.
    #[arg(long, value_name = "DIR", default_value = "data/eval")]
    pub out_dir: PathBuf,
    /// Step 7: the LangSmith dataset's description.
    #[arg(long)]
    pub description: Option<String>,
    /// Step 7: do not upload, even with LANGSMITH_API_KEY set.
    #[arg(long)]
    pub no_upload: bool,
}

/// The four query types of step 1 and the six edge cases of step 5.
const TYPES: [&str; 4] = ["factual", "analytical", "procedural", "multi_hop"];
const EDGE_CASES: [&str; 6] = [
    "unanswerable",
    "ambiguous",
    "multi_hop",
    "temporal",
    "contradictory",
    "out_of_scope",
];

/// Asks on a terminal; elsewhere every question must have come as a flag.
struct Ask {
    terminal: bool,
}

impl Ask {
    fn new() -> Ask {
        Ask {
            terminal: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        }
    }

    /// `prompt` shown, one line read (trimmed); `None` without a terminal
    /// or at the end of input.
    fn line(&self, prompt: &str) -> Option<String> {
        if !self.terminal {
            return None;
        }
        err!("{prompt}");
        let mut answer = String::new();
        match std::io::stdin().lock().read_line(&mut answer) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(answer.trim().to_string()),
        }
    }

    /// A flag's value, else the answer to `prompt`, else why it is needed.
    fn value(&self, flag: &Option<String>, prompt: &str, name: &str) -> Result<String, Failure> {
        if let Some(v) = flag {
            return Ok(v.clone());
        }
        self.line(prompt).ok_or_else(|| {
            Failure::config(format!(
                "{name} is needed: give --{name} (no terminal to ask)"
            ))
        })
    }

    fn yes(&self, prompt: &str) -> bool {
        self.line(prompt)
            .is_some_and(|a| matches!(a.to_ascii_lowercase().as_str(), "y" | "yes"))
    }
}

/// One QA pair of the golden schema being made.
#[derive(Debug, Clone)]
struct Pair {
    query: String,
    ground_truth: Option<String>,
    contexts: Vec<String>,
    source_docs: Vec<String>,
    metadata: Map<String, Value>,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let config = crate::dotenv::settings(Path::new("."))?;
    let ask = Ask::new();

    // Step 1: scope.
    let domain = ask.value(
        &args.domain,
        "1. What is the knowledge domain for this evaluation?\n   Examples: \"technical-documentation\", \"customer-support\", \"legal-contracts\", \"medical-research\"\n\n   Domain: ",
        "domain",
    )?;
    let slug = eval_datasets::naming::slug(&domain, 60).replace('_', "-");
    if slug.is_empty() {
        return Err(Failure::config(format!(
            "domain `{domain}`: name it with letters or digits (it names the files)"
        )));
    }
    let types = parse_types(&ask.value(
        &args.types,
        "2. What type of queries does your RAG pipeline handle?\n   [1] Factual questions (Who, What, When, Where)\n   [2] Analytical questions (How, Why, Compare)\n   [3] Procedural questions (How to, Steps to)\n   [4] Multi-hop reasoning (requires combining multiple sources)\n   [5] Mixed (all of the above)\n\n   Select types (comma-separated): ",
        "types",
    )?)?;
    let size = match args.size {
        Some(n) => n as usize,
        None => size_choice(&ask.value(
            &None,
            "3. What is the target dataset size?\n   [1] Small   (10-25 pairs)  - Quick validation\n   [2] Medium  (50-100 pairs) - Standard evaluation (recommended)\n   [3] Large   (100-200 pairs) - Comprehensive benchmark\n   [4] Custom  (specify number)\n\n   Your choice? [1/2/3/4]: ",
            "size",
        )?, &ask)?,
    };

    // Step 2: sample queries.
    let mut sources = Sources {
        queries: args.queries.clone(),
        traces: args.traces.clone(),
        corpus: args.corpus.clone(),
        typed: Vec::new(),
    };
    if sources.is_empty() {
        sources.ask(&ask)?;
    }
    // Steps 3 and 4: how ground truth is made, how the documents are organised.
    let plan = answers::Plan::ask(&args, &ask, &sources, config)?;
    let (strategy, organisation) = (plan.strategy.name().to_string(), plan.organisation);
    // Step 5: edge cases.
    let edge_cases = parse_edge_cases(&match &args.edge_cases {
        Some(e) => e.clone(),
        None => ask
            .line("ELICIT: Edge Case Annotation\n\n[1] Unanswerable queries\n[2] Ambiguous queries\n[3] Multi-hop queries\n[4] Temporal queries\n[5] Contradictory sources\n[6] Out-of-scope queries\n\nSelect edge case categories to annotate (comma-separated, empty for none): ")
            .unwrap_or_default(),
    })?;

    // The pairs: files, traces, typed queries, then generation up to the size.
    let annotator = match strategy.as_str() {
        "manual" | "expert" => "human",
        "document" => "document",
        _ => "llm",
    };
    let mut pairs = sources.read(&args)?;
    if let Some(corpus) = &sources.corpus {
        let missing = size.saturating_sub(pairs.len());
        if missing > 0 {
            pairs.extend(generated(
                corpus,
                missing.max(10),
                &types,
                &edge_cases,
                &slug,
                config,
                &args.out_dir,
            )?);
        }
    }
    let mut dropped = dedupe(&mut pairs);
    if pairs.len() > size {
        pairs.truncate(size);
    }
    // Steps 3 and 4 on each pair: answers, annotation, context references.
    answers::annotate(&plan, &mut pairs, &ask, config)?;
    for p in pairs.iter_mut() {
        p.metadata
            .insert("domain".into(), Value::from(slug.clone()));
        let kind = query_type_of(&p.query, &types);
        p.metadata.entry("query_type").or_insert(Value::from(kind));
        p.metadata.entry("edge_case").or_insert(Value::Null);
        p.metadata
            .entry("annotator")
            .or_insert(Value::from(annotator));
        p.metadata
            .entry("confidence")
            .or_insert(Value::from(match annotator {
                "human" => "high",
                _ => "medium",
            }));
        p.metadata.entry("version").or_insert(Value::from(1));
    }

    // Step 6: validation.
    let samples = to_samples(&pairs)?;
    let findings = eval_datasets::lint::lint_golden("(new dataset)", &samples);
    report_validation(&pairs, &findings, &edge_cases);
    if !findings.is_empty()
        && (args.fix || ask.yes("\nFix issues automatically where possible? (yes/no): "))
    {
        let trimmed = fix(&mut pairs);
        dropped += trimmed;
        errln!("fixed: whitespace trimmed, {trimmed} repeated query(ies) dropped");
    }
    if pairs.is_empty() {
        return Err(Failure::config(
            "no QA pairs: give queries (--queries, --traces) or a --corpus to generate from",
        ));
    }
    if !(args.yes || ask.yes("Review and approve final dataset? (yes/no): ")) {
        return Err(Failure {
            code: if ask.terminal { 1 } else { 2 },
            message: if ask.terminal {
                "not approved: nothing was written".into()
            } else {
                "approve the dataset with --yes (no terminal to ask); nothing was written".into()
            },
        });
    }

    // The bundle.
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| Failure::config(format!("cannot create {}: {e}", args.out_dir.display())))?;
    // Runs into one folder at once: each its own version, its bundle
    // written whole before the next picks (the lock is let go with `lock`).
    let lock_path = args.out_dir.join(format!(".{slug}-eval-dataset.lock"));
    let lock = eval_datasets::files::lock(&lock_path)
        .map_err(|e| Failure::config(format!("cannot lock {}: {e}", lock_path.display())))?;
    let version = (1..)
        .find(|v| {
            !args
                .out_dir
                .join(format!("{slug}-eval-dataset-v{v}.jsonl"))
                .exists()
        })
        .unwrap_or(1);
    let name = format!("{slug}-eval-dataset-v{version}");
    let records: Vec<Map<String, Value>> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| golden(i, p))
        .collect();
    let jsonl = args.out_dir.join(format!("{name}.jsonl"));
    let csv = args.out_dir.join(format!("{name}.csv"));
    let guide = args.out_dir.join(format!("{slug}-annotation-guide.md"));
    let stats = args.out_dir.join(format!("{slug}-dataset-stats.json"));
    write(
        &jsonl,
        &eval_datasets::write::objects_to_jsonl(records.clone()),
    )?;
    let columns = [
        "id",
        "query",
        "ground_truth",
        "contexts",
        "source_docs",
        "metadata",
    ];
    let csv_text = eval_datasets::write::objects_to_csv(&records, &columns)
        .map_err(|e| Failure::config(format!("cannot write {}: {e}", csv.display())))?;
    write(&csv, &csv_text)?;
    let shown = jsonl.to_string_lossy().into_owned();
    let dataset = Dataset::load_as(&jsonl, &shown).map_err(|e| Failure::config(e.to_string()))?;
    let file_name = profile::dataset_name(&jsonl);
    let st = DatasetStats::of(&file_name, &dataset);
    let mut stats_json: Value = serde_json::from_str(&st.to_json()).unwrap_or(Value::Null);
    if let Some(o) = stats_json.as_object_mut() {
        o.insert(
            "creation".into(),
            json!({"domain": slug, "query_types": types, "edge_cases": edge_cases,
                   "ground_truth_strategy": strategy, "context_organisation": organisation,
                   "target_size": size, "near_duplicates_dropped": dropped}),
        );
    }
    write(
        &stats,
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&stats_json).unwrap_or_default()
        ),
    )?;
    write(&guide, &profile::guide(&file_name, &dataset, &st))?;
    drop(lock);

    // Step 7: LangSmith.
    let mut langsmith_line = "not uploaded (LANGSMITH_API_KEY is not set)".to_string();
    let mut code = 0;
    if let Some(key) = config.langsmith_api_key.clone().filter(|_| !args.no_upload) {
        let endpoint = config
            .langsmith_endpoint
            .as_deref()
            .unwrap_or(LANGSMITH_ENDPOINT);
        let examples: Vec<Value> = records
            .iter()
            .map(|r| {
                json!({"inputs": {"query": r["query"]},
                       "outputs": {"ground_truth": r.get("ground_truth").cloned().unwrap_or(Value::Null),
                                   "contexts": r.get("contexts").cloned().unwrap_or(Value::Null)},
                       "metadata": r.get("metadata").cloned().unwrap_or(Value::Null)})
            })
            .collect();
        let description = args
            .description
            .clone()
            .unwrap_or_else(|| format!("{domain}: golden dataset made with evals create"));
        match LangSmith::new(endpoint, key)
            .and_then(|ls| ls.upload_blocking(&name, &description, &examples))
        {
            Ok(up) => {
                langsmith_line = format!("dataset {} ({} examples)", up.dataset_id, up.examples);
            }
            Err(e) => {
                errln!("error: {e}");
                errln!(
                    "the local files are kept; upload them again with `evals create` or LangSmith's tools"
                );
                langsmith_line = "upload failed (LANGSMITH_UPLOAD_FAILED)".into();
                code = 1;
            }
        }
    }
    summary(
        &name,
        &domain,
        &pairs,
        &langsmith_line,
        &[&jsonl, &csv, &guide, &stats],
    );
    // Errors the validation found and nothing fixed: written as approved,
    // and the exit code says it is not ready (as `evals lint`'s does).
    let errors: Vec<&str> = eval_datasets::lint::lint_golden("(new dataset)", &dataset.samples)
        .into_iter()
        .filter(|f| f.severity == eval_datasets::lint::Severity::Error)
        .map(|f| f.code)
        .collect();
    if !errors.is_empty() {
        let mut codes = errors.clone();
        codes.sort_unstable();
        codes.dedup();
        errln!(
            "error: {} validation error(s) remain ({}): see `evals lint {}`",
            errors.len(),
            codes.join(", "),
            jsonl.display()
        );
        code = code.max(1);
    }
    Ok(code)
}

/// A query's type when its source does not say: by its opening words, as
/// seed 002 describes the types (how to / steps to: procedural; how, why,
/// compare: analytical; who, what, when, where: factual), among `types`
/// (the first of them otherwise).
fn query_type_of(query: &str, types: &[&'static str]) -> &'static str {
    let q = eval_datasets::similarity::normalise(query);
    let guess = if q.starts_with("how to ")
        || q.starts_with("how do i ")
        || q.starts_with("how can i ")
        || q.contains("steps to")
        || q.starts_with("what are the steps")
    {
        "procedural"
    } else if ["how ", "why ", "compare ", "what is the difference"]
        .iter()
        .any(|w| q.starts_with(w))
    {
        "analytical"
    } else {
        "factual"
    };
    if types.contains(&guess) {
        guess
    } else {
        types.first().copied().unwrap_or("factual")
    }
}

fn parse_types(text: &str) -> Result<Vec<&'static str>, Failure> {
    let mut out: Vec<&'static str> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let picked: &[&'static str] = match part.to_ascii_lowercase().replace('-', "_").as_str() {
            "1" | "factual" => &TYPES[0..1],
            "2" | "analytical" => &TYPES[1..2],
            "3" | "procedural" => &TYPES[2..3],
            "4" | "multi_hop" => &TYPES[3..4],
            "5" | "mixed" | "all" => &TYPES,
            other => {
                return Err(Failure::config(format!(
                    "query type `{other}`: expected factual, analytical, procedural, multi_hop or mixed (or 1-5)"
                )));
            }
        };
        for t in picked {
            if !out.contains(t) {
                out.push(t);
            }
        }
    }
    if out.is_empty() {
        out.extend(TYPES);
    }
    Ok(out)
}

fn parse_edge_cases(text: &str) -> Result<Vec<&'static str>, Failure> {
    let mut out: Vec<&'static str> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let lower = part.to_ascii_lowercase().replace('-', "_");
        if lower == "none" {
            continue;
        }
        let found = match lower.parse::<usize>() {
            Ok(n @ 1..=6) => Some(EDGE_CASES[n - 1]),
            _ => EDGE_CASES.iter().copied().find(|e| *e == lower),
        };
        match found {
            Some(e) if !out.contains(&e) => out.push(e),
            Some(_) => {}
            None => {
                return Err(Failure::config(format!(
                    "edge case `{part}`: expected {} (or 1-6)",
                    EDGE_CASES.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

fn size_choice(choice: &str, ask: &Ask) -> Result<usize, Failure> {
    let n = match choice {
        "1" => 25,
        "" | "2" => 50,
        "3" => 100,
        "4" => ask
            .line("   Number of pairs (10 or more): ")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| Failure::config("a custom size is a number"))?,
        other => other
            .parse::<usize>()
            .map_err(|_| Failure::config(format!("size `{other}`: expected 1-4 or a number")))?,
    };
    if n < eval_datasets::lint::MIN_SAMPLES {
        return Err(Failure::config(format!(
            "DATASET_TOO_SMALL: {n} pairs; seed 002's minimum is {}",
            eval_datasets::lint::MIN_SAMPLES
        )));
    }
    Ok(n)
}
