//! `evals evaluate`: a manifest, a dataset or inline prompts against an HTTP agent.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use eval_core::metric::{MetricSpec, parse_specs};
use eval_core::{Dataset, Manifest, Sample, manifest};
use eval_runtime::HttpAgent;
use eval_runtime::results::{Gate, Results, Verdict};
use eval_runtime::retrieval::{HttpRetriever, RetrieverAgent};
use eval_runtime::runner::{RunDataset, Runner};

use crate::Failure;
use crate::discover;
use crate::select::{DEFAULT_SEED, select};

/// Flags of `evals evaluate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An agentspec manifest (agent.yaml) or a dataset (.jsonl, .csv, .json).
    /// Without it: --prompts, else the first of prompts.json, evals.json,
    /// tests.json in . then ./evals/.
    pub file: Option<PathBuf>,
    /// The agent's URL (default: EVAL_AGENT_URL).
    #[arg(long)]
    pub url: Option<String>,
    /// Only this dataset of the manifest.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Evaluate N samples drawn at random (per dataset).
    #[arg(long, value_name = "N")]
    pub sample_size: Option<usize>,
    /// Seed for --sample-size (default 42: the same draw every run).
    #[arg(long, requires = "sample_size")]
    pub seed: Option<u64>,
    /// Only samples with this tag; repeat it and a sample needs ALL of them.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// At most N samples per dataset (after --tag and --sample-size).
    #[arg(long, value_name = "N")]
    pub max_samples: Option<usize>,
    /// Print the results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the results file here (atomically).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Metrics for a dataset without a manifest, e.g. "contains, partial_match >= 0.5"
    /// (default for runevals files: their evaluators).
    #[arg(long)]
    pub metrics: Option<String>,
    /// Gate each dataset's mean on the thresholds (exit 1 when missed), as a
    /// manifest's `ciGate: true` does.
    #[arg(long)]
    pub ci_gate: bool,
    /// Inline prompts (runevals): --prompts "A" "B" [--expected "X" "Y"].
    #[arg(long, num_args = 1.., value_name = "PROMPT", conflicts_with = "file")]
    pub prompts: Vec<String>,
    /// Expected answers for --prompts, paired by position.
    #[arg(long, num_args = 1.., value_name = "ANSWER", requires = "prompts")]
    pub expected: Vec<String>,
    /// Agent calls in flight at once (default EVAL_CONCURRENCY, else 16).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Agent runs per sample (default: the manifest's `repeat`, else 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
    /// Retrieval datasets (Unrag): allow a scopePrefix not starting with `eval:`
    /// (ingest deletes everything under it).
    #[arg(long)]
    pub allow_custom_prefix: bool,
    /// Retrieval datasets: search what is already indexed (no delete, no ingest).
    #[arg(long)]
    pub no_ingest: bool,
    /// Retrieval datasets: read a document's `loaderRef` as a file path under DIR.
    #[arg(long, value_name = "DIR")]
    pub loader_dir: Option<PathBuf>,
    /// Limit on one sample's agent interaction and scoring, in seconds (default 300).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: Option<u64>,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let mut datasets = plan(&args)?;
    preflight(&datasets, &args)?;
    // A dataset none of whose samples was selected is left out, and says so.
    datasets.retain(|d| {
        if d.samples.is_empty() {
            eprintln!(
                "note: no sample of `{}` selected; it is not evaluated",
                d.name
            );
        }
        !d.samples.is_empty()
    });
    let is_query = |s: &Sample| s.retrieval.is_some();
    let retrieval = datasets.iter().any(|d| d.samples.iter().any(is_query));
    let ordinary = datasets
        .iter()
        .any(|d| d.samples.iter().any(|s| !is_query(s)));
    let agent_error = |e: eval_runtime::Error| {
        Failure::config(if args.url.is_some() {
            format!("--url: {e}")
        } else {
            format!("{e} (or pass --url)")
        })
    };
    let retriever = if retrieval {
        // --url is the retriever's base URL when every dataset is a
        // retrieval dataset; beside ordinary ones it is the agent's, and the
        // retriever comes from EVAL_RETRIEVER_URL.
        let http = match (&args.url, ordinary) {
            (Some(u), false) => HttpRetriever::new(u).map_err(agent_error)?,
            _ => HttpRetriever::from_env().map_err(|e| Failure::config(e.to_string()))?,
        };
        let mut agent = RetrieverAgent::new(http);
        if let Some(dir) = args.loader_dir.clone() {
            agent = agent.loader(move |r| {
                // Only paths inside DIR: no absolute paths, no `..`.
                let rel = Path::new(r);
                let inside = rel
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
                inside
                    .then(|| std::fs::read_to_string(dir.join(rel)).ok())
                    .flatten()
            });
        }
        Some(
            agent
                // Dataset paths are relative to here (a manifest's: to its project).
                .base_dir(base_dir(&args)?)
                .allow_custom_prefix(args.allow_custom_prefix)
                .no_ingest(args.no_ingest),
        )
    } else {
        None
    };
    let http = if ordinary {
        Some(HttpAgent::from_env_with_url(args.url.as_deref()).map_err(agent_error)?)
    } else {
        None
    };
    let mut runner = Runner::new(Routed { retriever, http });
    if let Some(n) = args.concurrency {
        runner = runner.concurrency(n);
    }
    if let Some(s) = args.timeout_secs {
        runner = runner.timeout(Duration::from_secs(s));
    }
    let total: usize = datasets
        .iter()
        .map(|d| d.samples.len() * d.repeat as usize)
        .sum();
    let bar = if std::io::stderr().is_terminal() && !args.json {
        let bar = indicatif::ProgressBar::new(total as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} samples {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let mut failures: Vec<String> = Vec::new();
    let results = runner.run(&datasets, |report| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        if !report.passed() {
            failures.push(report.summary_line());
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(path) = &args.output {
        results
            .write(path)
            .map_err(|e| Failure::config(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&results)
            .map_err(|e| Failure::config(format!("cannot render the results: {e}")))?;
        println!("{text}");
    } else {
        print_summary(&results, &failures);
        if let Some(path) = &args.output {
            println!("results: {}", path.display());
        }
    }
    if !results.samples.is_empty() && results.samples.iter().all(|s| s.verdict == Verdict::Error) {
        eprintln!("error: no sample could be scored (every one ended in an error; see above)");
        return Ok(2);
    }
    Ok(if results.failed_gates().is_empty() {
        0
    } else {
        1
    })
}

/// Retrieval queries to the retriever, other samples to the agent.
struct Routed {
    retriever: Option<RetrieverAgent>,
    http: Option<HttpAgent>,
}

impl eval_runtime::Agent for Routed {
    fn respond<'a>(
        &'a self,
        sample: &'a Sample,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<eval_runtime::Response, String>> + 'a>,
    > {
        let to_retriever = sample.retrieval.is_some();
        match (to_retriever, &self.retriever, &self.http) {
            (true, Some(r), _) => r.respond(sample),
            (false, _, Some(h)) => eval_runtime::Agent::respond(h, sample),
            _ => Box::pin(async { Err("no agent for this sample".to_string()) }),
        }
    }
}

/// Where the samples' file paths are relative to: a manifest's project
/// root, else the working directory.
fn base_dir(args: &Args) -> Result<std::path::PathBuf, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::config(format!("cannot read the working directory: {e}")))?;
    Ok(match &args.file {
        Some(f) if is_manifest(f) => {
            let dir = f
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            manifest::project_root(&cwd.join(dir))
        }
        _ => cwd,
    })
}

fn is_manifest(file: &Path) -> bool {
    matches!(
        file.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("yaml" | "yml")
    )
}

/// The datasets to run, with their samples selected.
fn plan(args: &Args) -> Result<Vec<RunDataset>, Failure> {
    let seed = args.seed.unwrap_or(DEFAULT_SEED);
    let pick = |samples: Vec<Sample>| {
        select(
            samples,
            &args.tags,
            args.sample_size,
            seed,
            args.max_samples,
        )
    };
    let mut out = Vec::new();
    if !args.prompts.is_empty() {
        if !args.expected.is_empty() && args.expected.len() != args.prompts.len() {
            return Err(Failure::config(format!(
                "{} --prompts but {} --expected: give one expected answer per prompt, or none",
                args.prompts.len(),
                args.expected.len()
            )));
        }
        let samples: Vec<Sample> = args
            .prompts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut s = Sample::new(p.clone());
                s.id = i.to_string();
                s.index = i;
                if let Some(e) = args.expected.get(i) {
                    s = s.with_expected(e.clone());
                }
                s
            })
            .collect();
        if let Some(i) = args.prompts.iter().position(|p| p.trim().is_empty()) {
            return Err(Failure::config(format!(
                "--prompts: prompt {} is empty",
                i + 1
            )));
        }
        if let Some(i) = args.expected.iter().position(|p| p.trim().is_empty()) {
            return Err(Failure::config(format!(
                "--expected: answer {} is empty (it would match anything)",
                i + 1
            )));
        }
        let specs = match &args.metrics {
            Some(m) => parse(m)?,
            None => default_specs(!args.expected.is_empty())?,
        };
        out.push(with_gate(
            RunDataset::new("prompts", pick(samples), specs.clone()),
            &specs,
            args.ci_gate,
            args.repeat,
        ));
        return Ok(out);
    }
    let file = match &args.file {
        Some(f) => f.clone(),
        None => discover::find(Path::new("."))?,
    };
    let shown = file.to_string_lossy().into_owned();
    let is_manifest = matches!(
        file.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("yaml" | "yml")
    );
    if is_manifest {
        if args.metrics.is_some() {
            return Err(Failure::config(
                "--metrics: a manifest names its own metrics",
            ));
        }
        let dir = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let root = manifest::project_root(dir);
        let m = Manifest::load(&file, &shown, &root).map_err(|e| Failure::config(e.to_string()))?;
        let chosen = match &args.dataset {
            Some(name) => vec![
                m.dataset(name)
                    .map_err(|e| Failure::config(e.to_string()))?,
            ],
            None => m.datasets.iter().collect(),
        };
        let mut problems = Vec::new();
        for d in chosen {
            match d.load() {
                Ok(data) => {
                    let gate = m.ci_gate || args.ci_gate;
                    let mut own = Vec::new();
                    if data.samples.iter().any(|s| s.relevant_ids().is_some())
                        && let Ok(rd) =
                            eval_core::retrieval::RetrievalDataset::load(&d.file, &d.shown)
                    {
                        let (gates, notes) =
                            eval_runtime::retrieval::threshold_gates(&rd, &d.specs);
                        notes.iter().for_each(|n| eprintln!("note: {n}"));
                        own = gates;
                    }
                    let mut run = with_gate(
                        RunDataset::new(d.name.clone(), pick(data.samples), d.specs.clone()),
                        &d.specs,
                        gate,
                        Some(args.repeat.unwrap_or(m.repeat)),
                    );
                    // A retrieval dataset's own thresholds gate it too.
                    for g in own {
                        run.gates.retain(|x| x.metric != g.metric);
                        run.gates.push(g);
                    }
                    out.push(run);
                }
                Err(e) => problems.extend(e.problems()),
            }
        }
        if !problems.is_empty() {
            return Err(Failure::config(problems.join("\n")));
        }
        return Ok(out);
    }
    if args.dataset.is_some() {
        return Err(Failure::config(
            "--dataset names a dataset of a manifest; this is a dataset file",
        ));
    }
    let data = Dataset::load_as(&file, &shown).map_err(|e| Failure::config(e.to_string()))?;
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset".into());
    if data
        .samples
        .iter()
        .any(|s| s.retrieval.is_some())
    {
        return retrieval_plan(args, &file, &shown, name, pick(data.samples)).map(|d| vec![d]);
    }
    if let Some(m) = &args.metrics {
        let specs = parse(m)?;
        out.push(with_gate(
            RunDataset::new(name, pick(data.samples), specs.clone()),
            &specs,
            args.ci_gate,
            args.repeat,
        ));
        return Ok(out);
    }
    // A runevals document names each sample's evaluators.
    let samples = pick(data.samples);
    let mut per_sample = Vec::with_capacity(samples.len());
    let mut problems = Vec::new();
    for s in &samples {
        if s.evaluators.is_empty() {
            // runevals' simplest documents name none: PartialMatch against
            // the expected response, else the judge's Relevance and Coherence.
            per_sample.push(default_specs(s.expected.is_some())?);
            continue;
        }
        match eval_core::runevals::specs(&s.evaluators) {
            Ok(specs) => per_sample.push(specs),
            Err(e) => problems.push(format!("{}: {e}", s.source)),
        }
    }
    if !problems.is_empty() {
        let n = problems.len();
        problems.truncate(20);
        if n > 20 {
            problems.push(format!("({} more)", n - 20));
        }
        return Err(Failure::config(problems.join("\n")));
    }
    let mut gates: Vec<Gate> = Vec::new();
    if args.ci_gate {
        for spec in per_sample.iter().flatten() {
            if !gates.iter().any(|g| g.metric == spec.name) {
                gates.push(Gate::from_spec(spec));
            }
        }
    }
    out.push(
        RunDataset::per_sample(name, samples, per_sample)
            .gates(gates)
            .repeat(args.repeat.unwrap_or(1)),
    );
    Ok(out)
}

/// An Unrag dataset: every rank metric per query, and the dataset's own
/// `defaults.thresholds` (`{"min": {"recallAtK": 0.75}}`) as gates on the
/// means, as Unrag judges a run.
fn retrieval_plan(
    args: &Args,
    file: &Path,
    shown: &str,
    name: String,
    samples: Vec<Sample>,
) -> Result<RunDataset, Failure> {
    let dataset = eval_core::retrieval::RetrievalDataset::load(file, shown)
        .map_err(|e| Failure::config(e.to_string()))?;
    if !args.allow_custom_prefix
        && let Err(e) = dataset.check_prefix(false)
    {
        return Err(Failure::config(e.replace(
            "(--allow-custom-prefix, .allow_custom_prefix(true), allow_custom_prefix = true)",
            "(--allow-custom-prefix)",
        )));
    }
    let specs = match &args.metrics {
        Some(m) => parse(m)?,
        None => parse("hit_at_k, recall_at_k, precision_at_k, mrr_at_k, ndcg_at_k")?,
    };
    let (gates, notes) = eval_runtime::retrieval::threshold_gates(&dataset, &specs);
    for n in notes {
        eprintln!("note: {n}");
    }
    let gates = if args.ci_gate {
        let mut all: Vec<Gate> = specs.iter().map(Gate::from_spec).collect();
        all.retain(|g| !gates.iter().any(|x: &Gate| x.metric == g.metric));
        all.extend(gates);
        all
    } else {
        gates
    };
    Ok(RunDataset::new(name, samples, specs)
        .gates(gates)
        .repeat(args.repeat.unwrap_or(1)))
}

/// Metrics when nothing names any: PartialMatch (runevals' default threshold
/// 0.5) with an expected answer, else the judge's Relevance and Coherence.
fn default_specs(has_expected: bool) -> Result<Vec<MetricSpec>, Failure> {
    parse(if has_expected {
        "partial_match"
    } else {
        "relevance, coherence"
    })
}

/// Every problem that would make every sample fail before its agent call:
/// no sample selected, or a metric whose judge or embeddings are not set up.
fn preflight(datasets: &[RunDataset], args: &Args) -> Result<(), Failure> {
    let selected: usize = datasets.iter().map(|d| d.samples.len()).sum();
    if selected == 0 {
        let mut why = Vec::new();
        if !args.tags.is_empty() {
            why.push(format!("--tag {}", args.tags.join(" --tag ")));
        }
        if args.sample_size == Some(0) {
            why.push("--sample-size 0".into());
        }
        if args.max_samples == Some(0) {
            why.push("--max-samples 0".into());
        }
        return Err(Failure::config(format!(
            "no sample selected{}: nothing to evaluate",
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join(", "))
            }
        )));
    }
    let services = eval_runtime::metrics::judged::Services::from_env_once();
    let mut missing = std::collections::BTreeSet::new();
    for d in datasets {
        for specs in &d.spec_sets {
            for spec in specs {
                if let Some(reason) = eval_runtime::metrics::judged::unavailable(spec, services) {
                    missing.insert(reason);
                }
            }
        }
    }
    if !missing.is_empty() {
        return Err(Failure::config(
            missing.into_iter().collect::<Vec<_>>().join("\n"),
        ));
    }
    Ok(())
}

fn parse(metrics: &str) -> Result<Vec<MetricSpec>, Failure> {
    parse_specs(metrics).map_err(|e| Failure::config(format!("--metrics: {e}")))
}

fn with_gate(d: RunDataset, specs: &[MetricSpec], gate: bool, repeat: Option<u32>) -> RunDataset {
    let d = d.repeat(repeat.unwrap_or(1));
    if gate {
        d.gates(specs.iter().map(Gate::from_spec).collect())
    } else {
        d
    }
}

fn print_summary(results: &Results, failures: &[String]) {
    for d in &results.datasets {
        println!(
            "{}: {} samples, {} passed, {} failed, {} errors",
            d.name, d.samples, d.passed, d.failed, d.errors
        );
        for m in &d.metrics {
            let mean = m.mean.map_or("-".to_string(), |v| format!("{v:.4}"));
            let rate = m
                .pass_rate
                .map_or("-".to_string(), |v| format!("{:.0}%", v * 100.0));
            let gate = match &m.gate {
                Some(g) if g.passed => format!("  gate passed: {g}"),
                Some(g) => format!("  gate FAILED: {g}"),
                None => String::new(),
            };
            println!("  {:<20} mean {mean:>7}  pass rate {rate:>4}{gate}", m.name);
        }
    }
    let failed = results
        .samples
        .iter()
        .filter(|s| s.verdict != Verdict::Pass)
        .count();
    if failed > 0 {
        println!("\n{failed} sample(s) did not pass:");
        for line in failures {
            println!("  {line}");
        }
    }
}
