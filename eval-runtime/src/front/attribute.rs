//! The attribute front end: what `#[eval_dataset]` expands to calls into
//! here (through the hidden `__private` module, which only re-exports).
//!
//! Each attribute is one dataset of the plan, loaded once per process from
//! the bytes embedded at compile time. The first of its tests to run starts
//! every sample libtest selected (the same filters, read from the command
//! line) on the engine's evaluation thread; each test then waits for its
//! own sample's report. Under nextest (one process per test), or with
//! libtest arguments not understood, each test evaluates its own sample.
//! A dataset with gates gets one more test, `<fn>::gates`, which judges
//! them when every sample of the dataset ran in this process.
//!
//! When a dataset's samples have run, the process says once (on stderr,
//! uncaptured) how many of them passed or failed without proof — an
//! inconclusive verdict over repeated runs, counted as the `inconclusive`
//! setting says — which libtest shows as plain `ok` or `FAILED`. Under
//! nextest each process runs one sample and says nothing of it: the merged
//! file's summary (`evals report summary`) lists them.

use std::sync::{Arc, Mutex, OnceLock};

use eval_datasets::Sample;
use eval_datasets::metric::{GateDecl, MetricDecl};

use crate::agent::{Agent, FnAgent, IntoAgentResult, SyncFnAgent};
use crate::config::Config;
use crate::engine::{End, Ending, Run, Selection, end_run, warn};
use crate::output::{Gate, ResultsKey, RunVerdict, SampleReport, results_dir};
use crate::plan::{DatasetPlan, DatasetSource, Metrics, PlanError};
use crate::services::Services;

/// What the attribute says of its dataset, written by the macro.
#[derive(Debug)]
pub struct Decl {
    /// `module_path!()` of the generated module (`krate::a::rag`).
    pub module_path: &'static str,
    /// `env!("CARGO_PKG_NAME")` of the crate the tests are in.
    pub package: &'static str,
    /// The dataset path as written (relative to the crate).
    pub path: &'static str,
    /// The dataset's bytes at compile time.
    pub bytes: &'static [u8],
    /// Metrics with their thresholds.
    pub metrics: &'static [MetricDecl],
    /// `gate(...)`: gates on a statistic of a metric over the dataset.
    pub gates: &'static [GateDecl],
    /// `ci_gate = true`, or a manifest's dataset (always judged by its means).
    pub ci_gate: bool,
    /// Whether the thresholds' gates fail the run: `ci_gate = true`, or the
    /// manifest's `ciGate: true` (else they are reported, not enforced).
    pub enforce_thresholds: bool,
    /// Under `ci_gate`, whether each threshold gates the mean (`false` for
    /// a letta suite: its `reward` (or older `gate`) alone decides).
    pub threshold_gates: bool,
    /// `sample_tags = [...]` (or a letta suite's): the samples tested carry
    /// every one of these tags.
    pub sample_tags: &'static [&'static str],
    /// `max_samples = N` (or a letta suite's): at most this many.
    pub max_samples: Option<usize>,
    /// Notes on how the file is run (a letta suite's), said when loaded.
    pub notes: &'static [&'static str],
    /// `timeout_secs = N`.
    pub timeout_secs: Option<u64>,
    /// `repeat = N` or `"auto"` (or the manifest's).
    pub repeat: eval_datasets::Repeat,
    /// `inconclusive = "estimate" | "fail" | "pass"` (checked by the macro).
    pub inconclusive: Option<&'static str>,
    /// `cluster = "field"`.
    pub cluster: Option<&'static str>,
    /// `allow_custom_prefix = true`.
    pub allow_custom_prefix: bool,
    /// `allow_outside = true`: the path may lead outside the project.
    pub allow_outside: bool,
    /// Where the macro listed this binary's datasets, and this one's key
    /// there (`eval_datasets::registry`); `None` when it could not.
    pub registry: Option<(&'static str, &'static str)>,
    /// Metrics (and gates) of the user's, named by their path.
    pub user_metrics: &'static [UserDecl],
    /// The model the agent runs as (a letta suite's dataset
    /// `{suite}@{model}`: each sample's `agent_args.model`).
    pub model: Option<&'static str>,
}

/// A metric of the user's in the attribute (`metrics(crate::cites_ticket >= 1.0)`),
/// written by the macro.
#[derive(Debug)]
pub struct UserDecl {
    /// The metric (the path, made one).
    pub metric: fn() -> Arc<dyn crate::Metric>,
    /// Operator and threshold, if written.
    pub bound: Option<(eval_datasets::metric::Op, f64)>,
    /// Its place in `metrics(...)` as written.
    pub at: usize,
    /// A gate on this statistic of it, rather than a metric.
    pub gate: Option<eval_datasets::metric::Stat>,
}

/// `specs` with the attribute's user metrics in their places, and its
/// gates on user metrics.
fn with_user(
    decls: &[UserDecl],
    mut specs: Vec<eval_datasets::MetricSpec>,
) -> Result<(Vec<eval_datasets::MetricSpec>, Vec<Gate>), String> {
    let mut gates = Vec::new();
    for d in decls {
        let metric = crate::metrics::user::describe((d.metric)());
        let spec = metric.spec(d.bound).map_err(|e| e.to_string())?;
        match d.gate {
            Some(stat) => gates.push(Gate::from_gate(&eval_datasets::metric::GateSpec::new(
                stat, spec,
            ))),
            None => specs.insert(d.at.min(specs.len()), spec),
        }
    }
    Ok((specs, gates))
}

/// One attribute's dataset in a test binary. Parsed once per process, on first use.
pub struct Embedded {
    decl: Decl,
    run: OnceLock<Result<Arc<Run>, String>>,
    /// Whether the evaluation thread was started (else each test evaluates
    /// its own sample).
    batch: OnceLock<Batch>,
    /// Said how many of its samples passed or failed without proof.
    told: std::sync::Once,
}

impl Embedded {
    #[doc(hidden)]
    pub const fn new(decl: Decl) -> Self {
        Embedded {
            decl,
            run: OnceLock::new(),
            batch: OnceLock::new(),
            told: std::sync::Once::new(),
        }
    }

    /// The dataset's name: the module path without the crate.
    fn name(&self) -> &'static str {
        match self.decl.module_path.split_once("::") {
            Some((_, rest)) => rest,
            None => self.decl.module_path,
        }
    }

    /// The dataset loaded into a run, or why it cannot be (a bad
    /// `EVAL_SAMPLE_TIMEOUT_SECS`, a metric whose judge is not configured...).
    fn run(&self) -> Result<&Arc<Run>, &String> {
        self.run
            .get_or_init(|| {
                let config = Config::global().map_err(|e| e.to_string())?;
                self.load(config).map_err(|e| e.to_string())
            })
            .as_ref()
    }

    fn load(&self, config: &Config) -> Result<Arc<Run>, PlanError> {
        let d = &self.decl;
        // The bytes were embedded from inside the project; the file the
        // retriever reads again at run time must still be.
        if !d.allow_outside
            && let Some(dir) = &config.manifest_dir
            && let Err(e @ eval_datasets::files::ContainmentError::Outside { .. }) =
                eval_datasets::files::contained(
                    &eval_datasets::manifest::project_root(dir),
                    &dir.join(d.path),
                )
        {
            return Err(PlanError::new(vec![format!(
                "{}: {e}: keep datasets inside the project; add `allow_outside = true` if that is intended",
                d.path
            )]));
        }
        let decls = |list: &[MetricDecl]| {
            list.iter()
                .map(MetricDecl::to_spec)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| PlanError::new(vec![format!("{}: {e}", d.path)]))
        };
        let mut plan = DatasetPlan::new(
            self.name(),
            DatasetSource::Embedded {
                shown: d.path,
                bytes: d.bytes,
            },
            // No `metrics(...)`: the dataset's own (the macro checked it names some).
            // (user metrics in their places)
            match (d.metrics, d.user_metrics.iter().any(|u| u.gate.is_none())) {
                ([], false) => Metrics::Own,
                (given, _) => Metrics::Given(
                    with_user(d.user_metrics, decls(given)?)
                        .map_err(|e| PlanError::new(vec![format!("{}: {e}", d.path)]))?
                        .0,
                ),
            },
            config.sample_timeout_or(d.timeout_secs.map(std::time::Duration::from_secs)),
        );
        plan.gates = d
            .gates
            .iter()
            .map(|g| g.to_gate().map(|g| Gate::from_gate(&g)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PlanError::new(vec![format!("{}: {e}", d.path)]))?;
        plan.gates.extend(
            with_user(d.user_metrics, Vec::new())
                .map_err(|e| PlanError::new(vec![format!("{}: {e}", d.path)]))?
                .1,
        );
        plan.ci_gate = d.ci_gate;
        plan.enforce_thresholds = d.enforce_thresholds;
        plan.threshold_gates = d.threshold_gates;
        plan.model = d.model.map(str::to_string);
        plan.subset = crate::plan::Subset::new(
            d.sample_tags.iter().map(|t| t.to_string()).collect(),
            None,
            None,
            d.max_samples,
        );
        plan.repeat = d.repeat;
        plan.inconclusive = d
            .inconclusive
            .and_then(crate::stats::OnInconclusive::parse)
            .or(config.inconclusive)
            .unwrap_or_default();
        plan.cluster = d.cluster.map(str::to_string);
        plan.allow_custom_prefix = d.allow_custom_prefix;
        let plan = crate::plan::Plan {
            datasets: vec![plan],
            concurrency: config.concurrency_or(None),
            baseline: None,
            base_dir: config.base_dir(),
            agent: eval_datasets::AgentSettings::default(),
        };
        let services = Services::global();
        let datasets = crate::plan::load(&plan, services, None, None)?;
        let unconfirmed = crate::plan::unconfirmed_scopes(&datasets, &config.delete_scopes);
        if !unconfirmed.is_empty() {
            return Err(PlanError::new(unconfirmed));
        }
        for note in d.notes.iter().copied().chain(
            datasets
                .iter()
                .flat_map(|d| d.notes.iter().map(String::as_str)),
        ) {
            warn(note);
        }
        Ok(Arc::new(
            Run::sharing(
                datasets,
                services.clone(),
                process_permits(config),
                plan.concurrency,
            )
            .in_project(&plan.base_dir)
            .configured(config),
        ))
    }

    /// Starts the evaluation thread for the samples libtest will run, once.
    fn start(&'static self, run: &Arc<Run>, agent: Arc<dyn Agent>) -> Batch {
        *self.batch.get_or_init(|| {
            let Ok(config) = Config::global() else {
                return Batch::NotStarted("the settings are invalid");
            };
            if config.under_nextest {
                return Batch::NotStarted(
                    "under nextest each sample is its own process; `evals report merge` judges them",
                );
            }
            let Some(selection) = Selection::from_args(std::env::args().skip(1)) else {
                warn("eval: unrecognised test arguments; evaluating one sample per test");
                return Batch::NotStarted(
                    "the test arguments were not understood, so each test evaluated its own sample",
                );
            };
            let selected = run.selected(&selection);
            if !selected.contains(&true) {
                return Batch::NotStarted("no sample of the dataset is evaluated in this process");
            }
            // Written before the last report is handed out, so before the
            // last test can finish and the process exit.
            let on_complete = move |run: &Arc<Run>| record_process(run, self, true);
            // libtest runs the tests in its own order: no bound on how far
            // the evaluation runs ahead of them.
            match run.start(&selected, agent, Some(Box::new(on_complete)), None) {
                Ok(_) => Batch::Started,
                Err(e) => {
                    warn(&format!(
                        "cannot start the evaluation thread ({e}); evaluating one sample per test"
                    ));
                    Batch::NotStarted("the evaluation thread could not start")
                }
            }
        })
    }

    /// The report of sample `index`, evaluated with `agent`.
    fn report(&'static self, index: usize, agent: Arc<dyn Agent>) -> SampleReport {
        let run = match self.run() {
            Ok(run) => run,
            Err(e) => fail(format!("{}: {e}", self.decl.module_path)),
        };
        if index >= run.len() {
            fail(format!(
                "{}: sample {index} is not in {} (the dataset changed without a rebuild?)",
                self.decl.module_path, self.decl.path
            ));
        }
        self.start(run, agent.clone());
        let (report, evaluated_here) = run.report(index, &*agent);
        // Evaluated here: nothing else records it (no evaluation thread, or
        // one that stopped).
        if evaluated_here {
            record_single(run, index, self);
        }
        if run.fails(index, &report) {
            fail(report.render());
        }
        report
    }
}

/// Whether a dataset's samples are evaluated together on the engine's
/// thread, or why not.
#[derive(Debug, Clone, Copy)]
enum Batch {
    Started,
    NotStarted(&'static str),
}

/// The cap on agent calls in flight shared by every dataset of the process.
fn process_permits(config: &Config) -> Arc<tokio::sync::Semaphore> {
    static SEM: OnceLock<Arc<tokio::sync::Semaphore>> = OnceLock::new();
    SEM.get_or_init(|| Arc::new(tokio::sync::Semaphore::new(config.concurrency_or(None))))
        .clone()
}

/// A run of this process whose samples were evaluated, and its dataset.
type Finished = (Arc<Run>, &'static Embedded);

/// Every run of this process whose samples were evaluated, for its results
/// file, with the dataset it is.
fn process_runs() -> &'static Mutex<Vec<Finished>> {
    static RUNS: OnceLock<Mutex<Vec<Finished>>> = OnceLock::new();
    RUNS.get_or_init(Default::default)
}

/// Adds `run` (of `dataset`) to this process's results and rewrites its
/// results file. `finished`: every sample of `run` selected here has been
/// evaluated (its evaluation thread is done); else it is when the dataset
/// is complete.
fn record_process(run: &Arc<Run>, dataset: &'static Embedded, finished: bool) {
    let Ok(config) = Config::global() else { return };
    let mut runs = process_runs().lock().unwrap_or_else(|p| p.into_inner());
    if !runs.iter().any(|(r, _)| Arc::ptr_eq(r, run)) {
        runs.push((run.clone(), dataset));
    }
    let key = ResultsKey::current(config, Some(dataset.decl.package));
    let path = key.file(&results_dir(config));
    let all: Vec<&Run> = runs.iter().map(|(r, _)| &**r).collect();
    // Every dataset of the binary that has not finished here (not run yet,
    // running, or not selected) makes the file incomplete, so a process
    // stopped half-way never leaves a file that looks whole — on its first
    // run too: the macro listed the binary's datasets as it compiled them.
    let missing = missing_datasets(dataset, &runs, &path);
    // The same end as every run's, written again as each dataset finishes
    // (HTML beside it, EVAL_JUNIT); a test does not know it is the last, so
    // nothing is appended and no baseline judged here.
    let end = End {
        ending: Ending::Process {
            path,
            whole: false,
            missing,
        },
        junit: None,
        baseline: None,
    };
    match end_run(&all, &key, end, config) {
        Ok(ended) => {
            say_where_once(&ended);
            let mine =
                |d: &&crate::output::DatasetSummary| run.dataset_names().any(|n| n == d.name);
            if finished || ended.datasets.iter().filter(mine).all(|d| d.complete) {
                dataset
                    .told
                    .call_once(|| say_unproven(run, dataset, &ended));
            }
        }
        Err(e) => warn(&e.to_string()),
    }
}

/// Says, once per dataset run, how many of its samples passed or failed
/// without proof (libtest shows them as plain `ok` and `FAILED`), naming
/// the first and pointing at the results file for the rest: the words of
/// the command's summary. Nothing when there are none.
fn say_unproven(run: &Run, dataset: &Embedded, ended: &crate::engine::Ended) {
    match run.unproven(&ended.datasets) {
        Ok(unproven) => {
            for line in unproven.lines(ended.results_path.as_deref()) {
                crate::notice::note(&format!("{}: {line}", dataset.name()));
            }
        }
        Err(e) => warn(&e.to_string()),
    }
}

/// Says once per test process where its results file and HTML report are
/// (rewritten as each dataset finishes): libtest shows no summary of ours,
/// so this is how a person running `cargo test` finds them.
fn say_where_once(ended: &crate::engine::Ended) {
    static SAID: std::sync::Once = std::sync::Once::new();
    let Some(path) = &ended.results_path else {
        return;
    };
    SAID.call_once(|| {
        let html = match &ended.html {
            Some(h) => format!(", html: {}", h.display()),
            None => String::new(),
        };
        crate::notice::note(&format!("eval results: {}{html}", path.display()));
    });
}

/// The datasets of this binary not among `done`: from the list the macro
/// wrote as it compiled them; without that list (a test binary whose build
/// directory was cleaned), those of the previous results file, plus a note
/// that the binary cannot tell, so the file is never complete.
fn missing_datasets(
    dataset: &'static Embedded,
    done: &[Finished],
    path: &std::path::Path,
) -> Vec<String> {
    match binary_datasets(dataset) {
        Ok(entries) => entries
            .iter()
            .filter(|e| {
                !done
                    .iter()
                    .any(|(_, d)| d.decl.registry.is_some_and(|(_, key)| key == e.key))
            })
            .map(|e| {
                // Named as the previous results file named it when that
                // says which dataset it is (one name ending in its
                // function's), else by its function and path.
                let previous = previous_datasets(path);
                let mut known = previous
                    .iter()
                    .filter(|n| *n == &e.function || n.ends_with(&format!("::{}", e.function)));
                match (known.next(), known.next()) {
                    (Some(name), None) => name.clone(),
                    _ => e.shown(),
                }
            })
            .collect(),
        Err(unknown) => {
            let runs: Vec<&Run> = done.iter().map(|(r, _)| &**r).collect();
            previous_datasets(path)
                .iter()
                .filter(|d| {
                    !runs
                        .iter()
                        .any(|r| r.dataset_names().any(|n| n == d.as_str()))
                })
                .cloned()
                .chain(std::iter::once(format!("(unknown: {unknown})")))
                .collect()
        }
    }
}

/// The datasets the macro listed for this binary (read once), or why
/// they are not known.
fn binary_datasets(
    dataset: &'static Embedded,
) -> Result<&'static [eval_datasets::registry::Entry], &'static str> {
    static LISTED: OnceLock<Result<Vec<eval_datasets::registry::Entry>, String>> = OnceLock::new();
    LISTED
        .get_or_init(|| {
            let Some((dir, key)) = dataset.decl.registry else {
                return Err(
                    "the macro could not list this test binary's datasets as it compiled it"
                        .to_string(),
                );
            };
            let entries =
                eval_datasets::registry::read(std::path::Path::new(dir)).map_err(|e| {
                    let said = e.to_string();
                    warn(&said);
                    said
                })?;
            if entries.iter().any(|e| e.key == key) {
                Ok(entries)
            } else {
                Err(format!(
                    "{dir} does not list this binary's dataset `{key}`; rebuild the tests"
                ))
            }
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(String::as_str)
}

/// The datasets of the results file at `path` as it was before this process
/// first wrote it (read once).
fn previous_datasets(path: &std::path::Path) -> &'static [String] {
    static PREVIOUS: OnceLock<Vec<String>> = OnceLock::new();
    PREVIOUS.get_or_init(|| {
        crate::output::Results::read(path)
            .map(|r| {
                r.datasets
                    .into_iter()
                    .map(|d| d.name)
                    .chain(r.missing_datasets)
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// A test that evaluated its own sample: under nextest its own part file
/// (merged later by `evals report merge`), otherwise this process's file.
fn record_single(run: &Arc<Run>, index: usize, dataset: &'static Embedded) {
    let Ok(config) = Config::global() else { return };
    if !config.under_nextest {
        record_process(run, dataset, false);
        return;
    }
    let key = ResultsKey::current(config, Some(dataset.decl.package));
    let path = key.part(
        &results_dir(config),
        config.nextest_run_id.as_deref(),
        &run.name(index),
    );
    // The binary's other datasets, so that a join lacking every part of
    // one (a shard killed, a filter) is not taken for the whole run; not
    // knowing them is no reason for the join never to be whole.
    let missing = missing_datasets(dataset, &[(run.clone(), dataset)], &path)
        .into_iter()
        .filter(|m| !m.starts_with("(unknown"))
        .collect();
    let end = End {
        ending: Ending::Part { path, missing },
        junit: None,
        baseline: None,
    };
    if let Err(e) = end_run(&[&**run], &key, end, config) {
        warn(&e.to_string());
    }
}

/// Compile-time check that an async eval function has the right shape.
pub fn check_async<F, R>(_: F)
where
    F: AsyncFn(&Sample) -> R,
    R: IntoAgentResult,
{
}

/// Compile-time check that a sync eval function has the right shape.
pub fn check_sync<F, R>(_: F)
where
    F: Fn(&Sample) -> R,
    R: IntoAgentResult,
{
}

/// Entry point for an `async fn(&Sample) -> R` eval function.
pub fn run_async<F, R>(ds: &'static Embedded, index: usize, agent: F)
where
    F: AsyncFn(&Sample) -> R + Copy + Send + Sync + 'static,
    R: IntoAgentResult,
{
    conclude(&ds.report(index, Arc::new(FnAgent(agent))));
}

/// Entry point for a plain `fn(&Sample) -> R` eval function: each call runs
/// on a thread of its own, outside any async runtime (it may start its own).
pub fn run_sync<F, R>(ds: &'static Embedded, index: usize, agent: F)
where
    F: Fn(&Sample) -> R + Copy + Send + Sync + 'static,
    R: IntoAgentResult,
{
    conclude(&ds.report(index, Arc::new(SyncFnAgent(agent))));
}

/// Entry point of `<fn>::gates` for an async eval function.
pub fn gates_async<F, R>(ds: &'static Embedded, agent: F)
where
    F: AsyncFn(&Sample) -> R + Copy + Send + Sync + 'static,
    R: IntoAgentResult,
{
    gates(ds, Arc::new(FnAgent(agent)));
}

/// Entry point of `<fn>::gates` for a sync eval function.
pub fn gates_sync<F, R>(ds: &'static Embedded, agent: F)
where
    F: Fn(&Sample) -> R + Copy + Send + Sync + 'static,
    R: IntoAgentResult,
{
    gates(ds, Arc::new(SyncFnAgent(agent)));
}

/// Judges the dataset's gates when every one of its samples runs in this
/// process; otherwise says why they are not judged here.
fn gates(ds: &'static Embedded, agent: Arc<dyn Agent>) {
    let run = match ds.run() {
        Ok(run) => run,
        Err(e) => fail(format!("{}: {e}", ds.decl.module_path)),
    };
    let name = ds.name();
    if let Batch::NotStarted(why) = ds.start(run, agent) {
        println!("gates of {name} not judged: {why}");
        return;
    }
    run.wait();
    let summaries = match run.summaries() {
        Ok(summaries) => summaries,
        Err(e) => fail(format!("gates of {name} not judged: {e}")),
    };
    let usage = crate::output::total_usage(&summaries);
    if !usage.is_empty() {
        println!("{name} usage: {}", usage.line());
    }
    let verdict = RunVerdict::of(&summaries);
    let lines = verdict.gate_lines_with(crate::output::Paint::stdout());
    if lines.is_empty() {
        println!("{name}: no gates to judge");
    }
    if verdict.missed_gates.is_empty() {
        println!("{}", lines.join("\n"));
    } else {
        fail(lines.join("\n"));
    }
}

fn conclude(report: &SampleReport) {
    println!(
        "{}",
        report.summary_line_with(crate::output::Paint::stdout())
    );
}

/// Fails the current test with `message` as its whole output: printed to the
/// test's captured stderr, then unwound without the panic hook, so there is no
/// "panicked at" line or backtrace around it.
fn fail(message: String) -> ! {
    eprintln!("{}", message.trim_end());
    std::panic::resume_unwind(Box::new(message))
}
