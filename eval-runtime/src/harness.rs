//! The run-time harness: samples found when the test binary runs (no rebuild
//! when data changes), all selected samples evaluated concurrently, one
//! libtest-compatible trial per sample, a results file, aggregate gates.
//!
//! ```no_run
//! // tests/evals_harness.rs, with `[[test]] name = "evals_harness" harness = false`
//! use eval_runtime::{Harness, HttpAgent};
//!
//! fn main() -> std::process::ExitCode {
//!     Harness::new()
//!         .dataset("evals/*.jsonl", "contains >= 1.0, partial_match >= 0.5")
//!         .gate("partial_match >= 0.7")
//!         .agent(HttpAgent::from_env())
//!         .run()
//! }
//! ```
//!
//! Trials are named `<dataset>::<sample>` (dataset = file stem), the sample
//! part as in the attribute, so `-- advanced`, `--skip`, `--exact` and
//! `--list` behave as with `#[test]`s, and `cargo nextest run` can run and
//! shard them. An `--exact` name that matches no sample is an error, not a
//! silent pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eval_core::metric::{MetricSpec, parse_specs};
use eval_core::{Dataset, index, naming};
use libtest_mimic::{Arguments, Failed, Trial};

use crate::agent::{Agent, FnAgent, IntoAgentResult};
use crate::embed::Embedder;
use crate::evaluate::sample_timeout;
use crate::judge::Judge;
use crate::metrics::judged::Services;
use crate::report::SampleReport;
use crate::results::{self, DatasetSummary, Gate, MetricRecord, SampleRecord, Summaries, Verdict};
use crate::schedule::{self, Job, Slots};
use crate::selection::under_nextest;
use crate::service::ServiceError;
use eval_core::Sample;

struct Source {
    pattern: String,
    metrics: String,
    gates: Vec<String>,
    /// `Some` for datasets from an agent.yaml: (manifest path, one dataset or all).
    manifest: Option<Option<String>>,
}

/// What a harness run did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome {
    /// Exit code: 0 all passed, 101 a sample failed, 1 a gate was missed, 2 the run could not start.
    pub code: u8,
    /// Per-dataset aggregates and gate verdicts (empty for `--list`; under
    /// nextest each process writes a part file instead).
    pub datasets: Vec<DatasetSummary>,
    /// Where the results were written.
    pub results_path: Option<PathBuf>,
    /// Why the run could not start.
    pub error: Option<String>,
}

impl Outcome {
    fn code(code: u8) -> Self {
        Outcome {
            code,
            datasets: Vec::new(),
            results_path: None,
            error: None,
        }
    }
}

/// Builder for a `harness = false` test binary. See the [module docs](self).
#[must_use = "call .run() to evaluate"]
pub struct Harness {
    sources: Vec<Source>,
    agent: Option<Arc<dyn Agent>>,
    concurrency: Option<usize>,
    timeout: Option<Duration>,
    ci_gate: bool,
    repeat: Option<u32>,
    judge: Option<Result<Judge, ServiceError>>,
    embedder: Option<Result<Embedder, ServiceError>>,
    base_dir: Option<PathBuf>,
    results_path: Option<PathBuf>,
    setup_errors: Vec<String>,
    allow_custom_prefix: bool,
    baseline: Option<(PathBuf, f64)>,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

/// One loaded dataset of the run.
struct Loaded {
    name: String,
    dataset: Dataset,
    /// Test name of each sample (sample part).
    names: Vec<String>,
    specs: Vec<MetricSpec>,
    gates: Vec<Gate>,
    /// Agent runs per sample.
    repeat: u32,
    /// Samples fail only on errors; the thresholds gate the mean.
    ci_gate: bool,
}

/// Everything the trials and the evaluation thread share.
struct Shared {
    datasets: Vec<Loaded>,
    /// (dataset index, sample index, full trial name) per trial, in trial order.
    trials: Vec<(usize, usize, String)>,
    slots: std::sync::OnceLock<Slots>,
    /// Per trial, what its sample scored (compact: a run may have 100k samples).
    records: Mutex<Vec<Option<Compact>>>,
    agent: Arc<dyn Agent>,
    timeout: Duration,
    services: Services,
}

impl Harness {
    /// An empty harness: add datasets and an agent, then [`run`](Self::run).
    pub fn new() -> Self {
        Harness {
            sources: Vec::new(),
            agent: None,
            concurrency: None,
            timeout: None,
            ci_gate: false,
            repeat: None,
            judge: None,
            embedder: None,
            base_dir: None,
            results_path: None,
            setup_errors: Vec::new(),
            allow_custom_prefix: false,
            baseline: None,
        }
    }

    /// Adds the dataset file(s) at `path` (a glob such as `evals/*.jsonl` is
    /// allowed; relative to `CARGO_MANIFEST_DIR`), scored with `metrics` in
    /// the attribute's syntax: `"contains >= 1.0, partial_match"`.
    pub fn dataset(mut self, path: &str, metrics: &str) -> Self {
        self.sources.push(Source {
            pattern: path.to_string(),
            metrics: metrics.to_string(),
            gates: Vec::new(),
            manifest: None,
        });
        self
    }

    /// A harness for every dataset of an agentspec manifest (`agent.yaml`,
    /// relative to `CARGO_MANIFEST_DIR`): see [`manifest`](Self::manifest).
    pub fn from_manifest(path: &str) -> Self {
        Self::new().manifest(path)
    }

    /// Adds every dataset of an agentspec manifest, with its metrics and
    /// thresholds. Trials are `<dataset name>::<sample>`. With `ciGate: true`
    /// the thresholds gate each dataset's *mean* (exit code 1 when missed)
    /// and samples fail only on errors, as agentspec judges them; without it
    /// every sample is held to the thresholds. The manifest's `repeat`
    /// applies unless [`repeat`](Self::repeat) is set. Samples lacking a
    /// field a metric needs (seed 000's table) are rejected before any agent call.
    pub fn manifest(mut self, path: &str) -> Self {
        self.sources.push(Source {
            pattern: path.to_string(),
            metrics: String::new(),
            gates: Vec::new(),
            manifest: Some(None),
        });
        self
    }

    /// Adds one dataset, by name, of an agentspec manifest (see [`manifest`](Self::manifest)).
    pub fn manifest_dataset(mut self, path: &str, name: &str) -> Self {
        self.sources.push(Source {
            pattern: path.to_string(),
            metrics: String::new(),
            gates: Vec::new(),
            manifest: Some(Some(name.to_string())),
        });
        self
    }

    /// Aggregate gates for the datasets of the last [`dataset`](Self::dataset)
    /// call: the *mean* of each metric over the evaluated samples, e.g.
    /// `"partial_match >= 0.7"`. A missed gate makes the run exit with code 1.
    pub fn gate(mut self, gates: &str) -> Self {
        match self.sources.last_mut() {
            Some(last) => last.gates.push(gates.to_string()),
            None => self.setup_errors.push(format!(
                "gate `{gates}` comes before any .dataset(): it gates the dataset added before it"
            )),
        }
        self
    }

    /// agentspec's `ciGate: true`: every metric's threshold becomes a gate on
    /// its mean, and single samples no longer fail on scores (only on errors).
    pub fn ci_gate(mut self, on: bool) -> Self {
        self.ci_gate = on;
        self
    }

    /// The agent every sample goes to.
    pub fn agent(mut self, agent: impl Agent) -> Self {
        self.agent = Some(Arc::new(agent));
        self
    }

    /// An in-process agent: an `async fn(&Sample) -> Response` (or `Result`).
    pub fn agent_fn<F, R>(self, f: F) -> Self
    where
        F: AsyncFn(&Sample) -> R + Send + Sync + 'static,
        R: IntoAgentResult,
    {
        self.agent(FnAgent(f))
    }

    /// Agent calls in flight at once (default `EVAL_CONCURRENCY`, else 16).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = Some(n.max(1));
        self
    }

    /// Runs the agent `n` times per sample: each metric's score is the mean
    /// over the runs, reported with a 95% interval, and samples whose
    /// interval straddles the threshold are flagged.
    pub fn repeat(mut self, n: u32) -> Self {
        self.repeat = Some(n.max(1));
        self
    }

    /// The LLM judge for model-based metrics (default: `EVAL_JUDGE_*`).
    pub fn judge(mut self, judge: Judge) -> Self {
        self.judge = Some(Ok(judge));
        self
    }

    /// The embeddings server for model-based metrics (default: `EVAL_EMBED_*`).
    pub fn embedder(mut self, embedder: Embedder) -> Self {
        self.embedder = Some(Ok(embedder));
        self
    }

    /// Limit on one sample's agent interaction (default 300 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Directory relative paths are resolved against (default `CARGO_MANIFEST_DIR`, else the working directory).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Retrieval datasets: allows a `scopePrefix` that does not start with
    /// `eval:` (ingest deletes everything under it).
    pub fn allow_custom_prefix(mut self, on: bool) -> Self {
        self.allow_custom_prefix = on;
        self
    }

    /// Gates the run on a baseline results file: a sample's metric that
    /// fell by more than `epsilon` since the baseline fails the run (exit 1),
    /// and the comparison is printed. With `EVAL_ACCEPT_BASELINE=1` the run's
    /// results become the new baseline instead (the old one is backed up),
    /// as `INSTA_UPDATE` accepts snapshots. A missing baseline is written.
    pub fn baseline(mut self, path: impl Into<PathBuf>, epsilon: f64) -> Self {
        self.baseline = Some((path.into(), epsilon));
        self
    }

    /// Where to write the results file (default `target/evals/<binary>.json`).
    pub fn results_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.results_path = Some(path.into());
        self
    }

    /// Runs with the process's command line; returns the exit code for `main`.
    pub fn run(self) -> ExitCode {
        self.run_with_args(Arguments::from_args())
    }

    /// Runs with explicit libtest arguments.
    pub fn run_with_args(self, args: Arguments) -> ExitCode {
        ExitCode::from(self.evaluate(args).code)
    }

    /// Runs with explicit libtest arguments and returns what happened, for
    /// programs that drive the harness themselves.
    pub fn evaluate(self, args: Arguments) -> Outcome {
        match self.execute(args) {
            Ok(outcome) => outcome,
            Err(message) => {
                eprintln!("error: {message}");
                Outcome {
                    code: 2,
                    error: Some(message),
                    ..Outcome::code(2)
                }
            }
        }
    }

    fn execute(self, args: Arguments) -> Result<Outcome, String> {
        let agent = self
            .agent
            .clone()
            .ok_or("no agent: call .agent(HttpAgent::from_env()) or .agent_fn(my_agent)")?;
        // Every problem (metrics, globs, every dataset line) is reported at once.
        let mut problems = self.setup_errors.clone();
        let resolved = self.resolve(&mut problems);
        let fast = match &args.filter {
            Some(filter)
                if problems.is_empty()
                    && args.exact
                    && !args.list
                    && !args.ignored
                    && args.skip.is_empty() =>
            {
                self.load_exact(&resolved, filter)
            }
            _ => None,
        };
        let mut datasets = match fast {
            Some(one) => vec![one],
            None => self.load(resolved, &mut problems),
        };
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        let mut trials_meta = Vec::new();
        for (d, loaded) in datasets.iter_mut().enumerate() {
            for (i, name) in std::mem::take(&mut loaded.names).into_iter().enumerate() {
                trials_meta.push((d, i, format!("{}::{name}", loaded.name)));
            }
        }
        let shared = Arc::new(Shared {
            datasets,
            slots: std::sync::OnceLock::new(),
            records: Mutex::new(Vec::new()),

            trials: trials_meta,
            agent: agent.clone(),
            timeout: match self.timeout {
                Some(t) => t,
                None => sample_timeout().map_err(|e| e.to_string())?,
            },
            services: Services {
                judge: self
                    .judge
                    .clone()
                    .unwrap_or_else(|| Services::from_env_once().judge.clone()),
                embedder: self
                    .embedder
                    .clone()
                    .unwrap_or_else(|| Services::from_env_once().embedder.clone()),
            },
        });
        let trials: Vec<Trial> = (0..shared.trials.len())
            .map(|t| {
                let s = shared.clone();
                Trial::test(shared.trials[t].2.clone(), move || s.conclude(t))
            })
            .collect();

        // The samples libtest-mimic will run, in its order.
        let selected: Vec<bool> = trials
            .iter()
            .map(|t| !args.is_filtered_out(t) && !args.is_ignored(t))
            .collect();
        if args.list {
            let _ = libtest_mimic::run(&args, trials);
            return Ok(Outcome::code(0));
        }
        // nextest reports a test it cannot find as passed: a name that is meant
        // for one of these datasets but matches nothing is an error. Names of
        // other tests (`cargo test -- --exact some_unit_test` reaches every
        // test binary) match nothing here, as with libtest.
        if args.exact
            && let Some(filter) = &args.filter
            && !selected.iter().any(|s| *s)
            && shared
                .datasets
                .iter()
                .any(|d| filter.starts_with(&format!("{}::", d.name)))
        {
            return Err(format!(
                "no sample is named `{filter}` (--exact); `--list` shows the names"
            ));
        }
        if !selected.iter().any(|s| *s) {
            // Nothing to evaluate: leave the last results file alone.
            let _ = libtest_mimic::run(&args, trials);
            return Ok(Outcome::code(0));
        }
        let _ = shared.slots.set(Slots::new(selected.iter().copied()));
        let limit = match self.concurrency {
            Some(n) => n,
            None => schedule::concurrency().map_err(|e| e.to_string())?,
        };
        // Gates judge a dataset's mean only when every one of its samples ran.
        let mut complete = vec![true; shared.datasets.len()];
        for (t, (d, ..)) in shared.trials.iter().enumerate() {
            complete[*d] &= selected[t];
        }
        let worker = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("eval-harness".into())
                .spawn({
                    let selected = selected.clone();
                    move || shared.evaluate(&selected, limit)
                })
                .map_err(|e| format!("cannot start the evaluation thread: {e}"))?
        };
        let conclusion = libtest_mimic::run(&args, trials);
        let _ = worker.join();

        let mut gates: BTreeMap<String, Vec<Gate>> = BTreeMap::new();
        for (d, loaded) in shared.datasets.iter().enumerate() {
            if complete[d] || under_nextest() {
                // (under nextest the gates travel in the part, judged on the merge)
                gates.insert(loaded.name.clone(), loaded.gates.clone());
            } else if !loaded.gates.is_empty() {
                println!(
                    "gates of {} not judged: only part of its samples ran",
                    loaded.name
                );
            }
        }
        let binary = results::binary_name();
        let path = if under_nextest() {
            let first = selected.iter().position(|s| *s).unwrap_or_default();
            results::part_path(&binary, &shared.trials[first].2)
        } else {
            self.results_path
                .clone()
                .unwrap_or_else(|| results::results_dir().join(format!("{binary}.json")))
        };
        let records = shared.records.lock().unwrap_or_else(|p| p.into_inner());
        let all = || {
            records
                .iter()
                .enumerate()
                .filter_map(|(t, c)| c.as_ref().map(|c| shared.record(t, c)))
        };
        let mut summaries = Summaries::default();
        all().for_each(|r| summaries.add(&r));
        let datasets = summaries.finish(&gates);
        results::write_streaming(&path, &binary, &datasets, all())
            .map_err(|e| format!("the samples ran, but {e}"))?;
        drop(records);
        if under_nextest() {
            if let Some((baseline, _)) = &self.baseline {
                // Each process holds one sample: the baseline is judged on the
                // merged run (`merge_results`, then `evals report diff`).
                eprintln!(
                    "note: baseline {} is not compared under nextest; merge the parts and run `evals report diff {} <merged>`",
                    baseline.display(),
                    baseline.display()
                );
            }
            return Ok(Outcome::code(if conclusion.has_failed() { 101 } else { 0 }));
        }
        for d in &datasets {
            for m in &d.metrics {
                if let Some(g) = &m.gate {
                    println!(
                        "gate {} {}: {g}",
                        d.name,
                        if g.passed { "passed" } else { "FAILED" }
                    );
                }
            }
        }
        println!("results: {}", path.display());
        let all_ran = complete.iter().all(|c| *c);
        let regressed = match &self.baseline {
            // A filtered run would make a partial baseline: judge only whole runs.
            Some((baseline, _)) if !all_ran => {
                println!(
                    "baseline {} not compared: only part of the samples ran",
                    baseline.display()
                );
                false
            }
            Some((baseline, epsilon)) => compare_with_baseline(&path, baseline, *epsilon)?,
            None => false,
        };
        // libtest's code for failed tests; agentspec's 1 for a missed gate.
        let code = if conclusion.has_failed() {
            101
        } else if !results::failed_gates(&datasets).is_empty() || regressed {
            1
        } else {
            0
        };
        Ok(Outcome {
            code,
            datasets,
            results_path: Some(path),
            error: None,
        })
    }

    /// `allow_custom_prefix` travels with the samples to the retriever agent.
    fn mark(&self, mut dataset: Dataset) -> Dataset {
        if self.allow_custom_prefix {
            for s in &mut dataset.samples {
                if let Some(q) = &mut s.retrieval {
                        q.allow_custom_prefix = true;
                    }
            }
        }
        dataset
    }

    fn base(&self) -> PathBuf {
        self.base_dir
            .clone()
            .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default()
    }

    /// Where dataset name indexes are kept: `index/` beside the results.
    fn index_dir(&self) -> PathBuf {
        match self.results_path.as_ref().and_then(|p| p.parent()) {
            Some(dir) => dir.join("index"),
            None => results::results_dir().join("index"),
        }
    }

    /// Parses every source's metrics and gates and expands its globs,
    /// reporting every problem; no dataset is read yet.
    fn resolve(&self, problems: &mut Vec<String>) -> Vec<Resolved> {
        if self.sources.is_empty() {
            problems.push("no datasets: call .dataset(\"evals/rag.jsonl\", \"contains\")".into());
        }
        let base = self.base();
        let mut resolved: Vec<Resolved> = Vec::new();
        for source in &self.sources {
            if let Some(only) = &source.manifest {
                self.resolve_manifest(
                    &base,
                    &source.pattern,
                    only.as_deref(),
                    &mut resolved,
                    problems,
                );
                continue;
            }
            let specs = match parse_specs(&source.metrics) {
                Ok(s) => s,
                Err(e) => {
                    problems.push(format!("metrics for {}: {e}", source.pattern));
                    continue;
                }
            };
            let mut gates: Vec<Gate> = if self.ci_gate {
                specs.iter().map(Gate::from_spec).collect()
            } else {
                Vec::new()
            };
            for g in &source.gates {
                match parse_specs(g) {
                    Ok(list) => {
                        for spec in list {
                            if !specs.iter().any(|s| s.info().name == spec.info().name) {
                                problems.push(format!(
                                    "gate `{}` for {}: the dataset is not scored with `{}`",
                                    spec.name, source.pattern, spec.name
                                ));
                            }
                            gates.retain(|x| x.metric != spec.name);
                            gates.push(Gate::from_spec(&spec));
                        }
                    }
                    Err(e) => problems.push(format!("gate for {}: {e}", source.pattern)),
                }
            }
            let files = match expand(&base, &source.pattern) {
                Ok(f) => f,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            for (file, shown) in files {
                let stem = Path::new(&shown)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let name = match naming::slug(&stem, 48) {
                    s if s.is_empty() => "dataset".to_string(),
                    s => s,
                };
                if let Some(other) = resolved.iter().find(|r| r.name == name) {
                    problems.push(format!(
                        "{shown} and {} would both be named `{name}`: rename one",
                        other.shown
                    ));
                    continue;
                }
                resolved.push(Resolved {
                    name,
                    file,
                    shown,
                    specs: specs.clone(),
                    gates: gates.clone(),
                    repeat: self.repeat.unwrap_or(1),
                    ci_gate: self.ci_gate,
                    manifest: None,
                });
            }
        }
        resolved
    }

    /// The datasets of the manifest at `path` (all, or the one named `only`).
    fn resolve_manifest(
        &self,
        base: &Path,
        path: &str,
        only: Option<&str>,
        resolved: &mut Vec<Resolved>,
        problems: &mut Vec<String>,
    ) {
        let root = eval_core::manifest::project_root(base);
        let manifest = match eval_core::Manifest::load(&base.join(path), path, &root) {
            Ok(m) => m,
            Err(e) => {
                problems.extend(e.problems());
                return;
            }
        };
        let chosen: Vec<&eval_core::ManifestDataset> = match only {
            Some(name) => match manifest.dataset(name) {
                Ok(d) => vec![d],
                Err(e) => {
                    problems.push(e.to_string());
                    return;
                }
            },
            None => manifest.datasets.iter().collect(),
        };
        let ci_gate = self.ci_gate || manifest.ci_gate;
        for d in chosen {
            let name = match naming::slug(&d.name, 48) {
                s if s.is_empty() => "dataset".to_string(),
                s => s,
            };
            if resolved.iter().any(|r| r.name == name) {
                problems.push(format!(
                    "{path}: dataset `{}` would be named `{name}` like another dataset of this run: rename one",
                    d.name
                ));
                continue;
            }
            resolved.push(Resolved {
                name,
                file: d.file.clone(),
                shown: d.shown.clone(),
                specs: d.specs.clone(),
                gates: if ci_gate {
                    d.specs.iter().map(Gate::from_spec).collect()
                } else {
                    Vec::new()
                },
                repeat: self.repeat.unwrap_or(manifest.repeat),
                ci_gate,
                manifest: Some(d.clone()),
            });
        }
    }

    /// Loads every dataset, reporting every problem, and (re)writes the
    /// name index of each so a later `--exact` run can skip the full parse.
    fn load(&self, resolved: Vec<Resolved>, problems: &mut Vec<String>) -> Vec<Loaded> {
        let mut loaded = Vec::new();
        for r in resolved {
            let dataset = Dataset::load_as(&r.file, &r.shown)
                .map(|d| self.mark(d))
                .and_then(|d| match &r.manifest {
                    Some(m) => m.check_fields(&d).map(|()| d),
                    None => Ok(d),
                });
            match dataset {
                Ok(dataset) => {
                    let names = naming::test_names(&dataset.samples);
                    if let Ok(idx) = index::path_for(&self.index_dir(), &r.file)
                        && !idx.exists()
                    {
                        // A cache: failing to write it only costs speed later.
                        let _ = index::write(&idx, &dataset, &names);
                    }
                    // A retrieval dataset's own thresholds gate its means.
                    let mut gates = r.gates;
                    if dataset
                        .samples
                        .first()
                        .is_some_and(|s| s.relevant_ids().is_some())
                        && let Ok(rd) =
                            eval_core::retrieval::RetrievalDataset::load(&r.file, &r.shown)
                    {
                        let (more, notes) = crate::retrieval::threshold_gates(&rd, &r.specs);
                        for n in notes {
                            eprintln!("note: {n}");
                        }
                        for g in more {
                            gates.retain(|x| x.metric != g.metric);
                            gates.push(g);
                        }
                    }
                    loaded.push(Loaded {
                        name: r.name,
                        dataset,
                        names,
                        specs: r.specs,
                        gates,
                        repeat: r.repeat,
                        ci_gate: r.ci_gate,
                    });
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
        loaded
    }

    /// `--exact <dataset>::<sample>`: the one sample, found through the
    /// dataset's index and read alone. `None` when there is no usable index
    /// (the caller then loads everything).
    fn load_exact(&self, resolved: &[Resolved], filter: &str) -> Option<Loaded> {
        let (dataset, sample) = filter.split_once("::")?;
        let r = resolved.iter().find(|r| r.name == dataset)?;
        let idx = index::path_for(&self.index_dir(), &r.file).ok()?;
        let entry = index::lookup(&idx, sample).ok()??;
        let one = Dataset::load_record(&r.file, &r.shown, &entry)
            .ok()
            .map(|d| self.mark(d));
        // The record must still be the sample the index named (a same-size
        // edit within one mtime tick, or other naming rules, make it stale).
        // A manifest's field rules: a failing sample goes through the full
        // load, which reports it.
        if let (Some(m), Some(d)) = (&r.manifest, &one)
            && m.check_fields(d).is_err()
        {
            return None;
        }
        let fresh = one.as_ref().is_some_and(|d| {
            let s = &d.samples[0];
            entry.name.starts_with(&naming::sample_key(s))
                && entry.name.ends_with(&naming::tag_suffix(s))
        });
        if !fresh {
            let _ = std::fs::remove_file(&idx);
            return None;
        }
        let one = one?;
        Some(Loaded {
            name: r.name.clone(),
            dataset: one,
            names: vec![entry.name],
            specs: r.specs.clone(),
            gates: r.gates.clone(),
            repeat: r.repeat,
            ci_gate: r.ci_gate,
        })
    }
}

/// Compares the run's results with the baseline (or accepts them as the new
/// baseline); true when something regressed beyond `epsilon`.
fn compare_with_baseline(
    results_path: &Path,
    baseline: &Path,
    epsilon: f64,
) -> Result<bool, String> {
    let current = results::Results::read(results_path).map_err(|e| e.to_string())?;
    let accept = std::env::var("EVAL_ACCEPT_BASELINE").is_ok_and(|v| v == "1" || v == "true");
    if accept || !baseline.exists() {
        let backup = crate::diff::accept(&current, baseline).map_err(|e| e.to_string())?;
        println!(
            "baseline {} written{}",
            baseline.display(),
            backup
                .map(|b| format!(" (previous kept as {})", b.display()))
                .unwrap_or_default()
        );
        return Ok(false);
    }
    let old = results::Results::read(baseline).map_err(|e| format!("baseline: {e}"))?;
    let d = crate::diff::diff(&old, &current, epsilon);
    print!("against baseline {}: {}", baseline.display(), d.render());
    if !d.regressions().is_empty() {
        println!(
            "baseline gate FAILED: EVAL_ACCEPT_BASELINE=1 accepts these results as the new baseline"
        );
    }
    Ok(!d.regressions().is_empty())
}

/// A dataset file to load, with its name, metrics and gates.
struct Resolved {
    name: String,
    file: PathBuf,
    shown: String,
    specs: Vec<MetricSpec>,
    gates: Vec<Gate>,
    repeat: u32,
    ci_gate: bool,
    /// For a manifest's dataset: checks the samples' fields after loading.
    manifest: Option<eval_core::ManifestDataset>,
}

/// The files a pattern names, with the path to show for each.
fn expand(base: &Path, pattern: &str) -> Result<Vec<(PathBuf, String)>, String> {
    let is_glob = pattern.contains(['*', '?', '[']);
    let full = base.join(pattern);
    if !is_glob {
        return Ok(vec![(full, pattern.to_string())]);
    }
    let text = full.to_string_lossy().into_owned();
    let paths = glob::glob(&text).map_err(|e| format!("bad glob `{pattern}`: {e}"))?;
    let mut files = Vec::new();
    for entry in paths {
        let path = entry.map_err(|e| format!("{pattern}: {e}"))?;
        if eval_core::Format::from_path(&path.to_string_lossy()).is_err() {
            continue; // a glob like `evals/*` also matches READMEs
        }
        let shown = path
            .strip_prefix(base)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string_lossy().into_owned());
        files.push((path, shown));
    }
    if files.is_empty() {
        return Err(format!(
            "`{pattern}` matches no dataset file (relative to {})",
            base.display()
        ));
    }
    files.sort();
    Ok(files)
}

impl Shared {
    /// Evaluates every selected sample, in trial order, filling the slots.
    fn evaluate(&self, selected: &[bool], limit: usize) {
        let (agent, timeout) = (&self.agent, self.timeout);
        // One cap for the whole run, across its datasets.
        let permits = tokio::sync::Semaphore::new(limit);
        let jobs = self
            .trials
            .iter()
            .enumerate()
            .filter(|(t, _)| selected[*t])
            .map(|(t, (d, i, name))| Job {
                key: t,
                name: name.clone(),
                sample: &self.datasets[*d].dataset.samples[*i],
            });
        // Datasets may differ in metrics: evaluate each dataset's jobs with its specs.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::__private::local_runtime().block_on(async {
                let mut by_dataset: BTreeMap<usize, Vec<Job<'_>>> = BTreeMap::new();
                for job in jobs {
                    let d = self.trials[job.key].0;
                    by_dataset.entry(d).or_default().push(job);
                }
                let runs = by_dataset.into_iter().map(|(d, jobs)| {
                    schedule::evaluate_all(
                        jobs,
                        &self.datasets[d].specs,
                        (timeout, self.datasets[d].repeat, &self.services),
                        (&permits, limit),
                        move |s| agent.respond(s),
                        |key, report| self.fill(key, report),
                    )
                });
                futures_util::future::join_all(runs).await;
            })
        }));
        if let Err(panic) = run {
            eprintln!(
                "evaluation stopped ({}); remaining samples run one by one",
                schedule::panic_message(&panic)
            );
            self.slots().abandon();
        }
    }

    fn slots(&self) -> &Slots {
        self.slots
            .get()
            .expect("slots are set before evaluation starts")
    }

    fn fill(&self, t: usize, report: SampleReport) {
        self.store(t, &report);
        self.slots().fill(t, report);
    }

    fn store(&self, t: usize, report: &SampleReport) {
        let mut records = self.records.lock().unwrap_or_else(|p| p.into_inner());
        if records.len() != self.trials.len() {
            records.resize_with(self.trials.len(), || None);
        }
        records[t] = Some(Compact::from_report(report));
    }

    /// The full record of trial `t`, rebuilt from its compact form.
    fn record(&self, t: usize, c: &Compact) -> SampleRecord {
        let (d, i, name) = &self.trials[t];
        let loaded = &self.datasets[*d];
        let sample = &loaded.dataset.samples[*i];
        SampleRecord {
            dataset: loaded.name.clone(),
            test_name: name.clone(),
            id: sample.id.clone(),
            source: sample.source.to_string(),
            verdict: c.verdict,
            metrics: loaded
                .specs
                .iter()
                .zip(c.metrics.iter())
                .map(|(spec, m)| MetricRecord {
                    name: spec.name.clone(),
                    score: m.score,
                    op: spec.op.to_string(),
                    threshold: spec.threshold,
                    passed: m.passed,
                    error: m.error.as_deref().map(str::to_string),
                    method: m.method.map(str::to_string),
                    raw: m.raw,
                    spread: m.spread.map(results::RunSpread::from),
                })
                .collect(),
            latency_ms: f64::from(c.latency_ms),
            error: c.error.as_deref().map(str::to_string),
            output: c.output.as_deref().map(str::to_string),
            usage: c.usage,
        }
    }

    /// The trial body: waits for the sample's report and turns it into a verdict.
    fn conclude(&self, t: usize) -> Result<(), Failed> {
        let report = match self.slots().take(t) {
            Some(report) => report,
            None => {
                // Not scheduled (the evaluation thread stopped): evaluate alone.
                let (d, i, name) = &self.trials[t];
                let loaded = &self.datasets[*d];
                let sample = &loaded.dataset.samples[*i];
                let agent = self.agent.clone();
                let runs = (0..loaded.repeat).map(|_| agent.respond(sample)).collect();
                let report = crate::__private::runtime().block_on(crate::evaluate::evaluate_runs(
                    name.clone(),
                    sample,
                    &loaded.specs,
                    self.timeout,
                    runs,
                    &self.services,
                ));
                self.store(t, &report);
                report
            }
        };
        let failed = if self.datasets[self.trials[t].0].ci_gate {
            report.error.is_some()
        } else {
            !report.passed()
        };
        if failed {
            Err(Failed::from(report.render()))
        } else {
            Ok(())
        }
    }
}

/// One metric of a [`Compact`].
struct CompactScore {
    score: Option<f64>,
    passed: bool,
    error: Option<Box<str>>,
    method: Option<&'static str>,
    raw: Option<f64>,
    spread: Option<crate::report::Spread>,
}

/// What the results file needs of one sample beyond what the dataset and the
/// trial already hold.
struct Compact {
    verdict: Verdict,
    latency_ms: f32,
    /// Per metric, in spec order.
    metrics: Box<[CompactScore]>,
    error: Option<Box<str>>,
    output: Option<Box<str>>,
    usage: crate::service::Usage,
}

impl Compact {
    fn from_report(report: &SampleReport) -> Self {
        let verdict = Verdict::of(report);
        Compact {
            verdict,
            latency_ms: (report.latency.as_secs_f64() * 1000.0) as f32,
            metrics: report
                .metrics
                .iter()
                .map(|m| CompactScore {
                    score: m.score,
                    passed: m.passed,
                    error: m.error.as_deref().map(Box::from),
                    method: m.method,
                    raw: m.raw,
                    spread: m.spread,
                })
                .collect(),
            error: report.error.as_deref().map(Box::from),
            output: match (&report.output, verdict) {
                (Some(out), Verdict::Fail) => Some(results::cut_output(out).into_boxed_str()),
                _ => None,
            },
            usage: report.usage,
        }
    }
}
