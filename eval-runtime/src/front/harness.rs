//! The harness front end: a libtest-mimic trial per sample over the engine.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use eval_datasets::Sample;
use libtest_mimic::Arguments;

use crate::agent::{Agent, FnAgent, IntoAgentResult};
use crate::config::Config;
use crate::engine::{End, Ended, Ending, Run, Selection, end_run};
use crate::model::Error;
use crate::output::{DatasetSummary, ResultsKey, RunVerdict, results_dir};
use crate::plan::PlanBuilder;
use crate::services::{Embedder, Judge, Services};

/// Samples the evaluation may run ahead of the trials taking their reports.
const AHEAD: usize = 1024;

/// What a harness run did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome {
    /// Exit code: 0 all passed, 101 a sample failed, 1 a gate was missed
    /// (or the baseline regressed), 2 the run could not start.
    pub code: u8,
    /// Per-dataset aggregates and gate verdicts (empty for `--list`).
    #[doc(hidden)]
    pub datasets: Vec<DatasetSummary>,
    /// The verdict of what ran.
    pub verdict: RunVerdict,
    /// Where the results were written.
    pub results_path: Option<PathBuf>,
    /// Why the run could not start.
    pub error: Option<Error>,
}

impl Outcome {
    fn code(code: u8) -> Self {
        Outcome {
            code,
            datasets: Vec::new(),
            verdict: RunVerdict::default(),
            results_path: None,
            error: None,
        }
    }
}

/// The run-time harness: samples found when the test binary runs (no
/// rebuild when data changes), all selected samples evaluated concurrently,
/// one libtest-compatible trial per sample, a results file, gates.
///
/// ```no_run
/// // tests/evals_harness.rs, with `[[test]] name = "evals_harness" harness = false`
/// use eval_runtime::{Harness, HttpAgent};
///
/// fn main() -> std::process::ExitCode {
///     Harness::new()
///         .dataset("evals/*.jsonl", "contains >= 1.0, partial_match >= 0.5")
///         .gate("partial_match >= 0.7")
///         .agent(HttpAgent::from_env())
///         .run()
/// }
/// ```
///
/// Trials are named `<dataset>::<sample>`, the sample part as in the
/// attribute, so `-- advanced`, `--skip`, `--exact` and `--list` behave as
/// with `#[test]`s, and `cargo nextest run` can run and shard them. An
/// `--exact` name that matches no sample is an error, not a silent pass.
/// The harness only builds a plan and turns the
/// engine's verdict into its exit code: 0 all passed, 101 a sample failed, 1
/// a gate was missed (or the baseline regressed), 2 the run could not start.
#[must_use = "call .run() to evaluate"]
pub struct Harness {
    plan: PlanBuilder,
    agent: Option<Arc<dyn Agent>>,
    judge: Option<Judge>,
    embedder: Option<Embedder>,
    results_path: Option<PathBuf>,
    junit_path: Option<PathBuf>,
    config: Option<Config>,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    /// An empty harness: add datasets and an agent, then [`run`](Self::run).
    pub fn new() -> Self {
        Harness {
            plan: PlanBuilder::new(),
            agent: None,
            judge: None,
            embedder: None,
            results_path: None,
            junit_path: None,
            config: None,
        }
    }

    /// Adds the dataset file(s) at `path` (a glob such as `evals/*.jsonl` is
    /// allowed; relative to `CARGO_MANIFEST_DIR`), scored with `metrics` in
    /// the attribute's syntax: `"contains >= 1.0, partial_match"` (`""`: the
    /// dataset's own, e.g. a runevals file's evaluators).
    pub fn dataset(mut self, path: &str, metrics: &str) -> Self {
        self.plan = self.plan.dataset(path, metrics);
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
        self.plan = self.plan.manifest(path, None);
        self
    }

    /// Adds one dataset, by name, of an agentspec manifest (see [`manifest`](Self::manifest)).
    pub fn manifest_dataset(mut self, path: &str, name: &str) -> Self {
        self.plan = self.plan.manifest(path, Some(name));
        self
    }

    /// Gates for the datasets of the last [`dataset`](Self::dataset) call:
    /// the *mean* of each metric over the dataset, e.g.
    /// `"partial_match >= 0.7"`, judged when every sample of the dataset
    /// ran. A missed gate makes the run exit with code 1.
    pub fn gate(mut self, gates: &str) -> Self {
        self.plan = self.plan.gate(gates);
        self
    }

    /// Tool definitions offered with each sample of the datasets of the last
    /// [`dataset`](Self::dataset) call: a JSON file (relative to
    /// `CARGO_MANIFEST_DIR`) holding an array of OpenAI tool definitions, or
    /// an object with a `tools` array. A sample's own `tools` come first.
    pub fn tools(mut self, path: &str) -> Self {
        self.plan = self.plan.tools(path);
        self
    }

    /// agentspec's `ciGate: true`: every metric's threshold becomes a gate on
    /// its mean, and single samples no longer fail on scores (only on errors).
    /// A manifest's thresholds are such gates anyway; this enforces them
    /// when the manifest does not say `ciGate: true`.
    pub fn ci_gate(mut self, on: bool) -> Self {
        self.plan = self.plan.ci_gate(on);
        self
    }

    /// A metric of your own the datasets' metrics and gates may name (see
    /// [`PlanBuilder::metric`]): `.metric(cites_ticket)`, `.metric(CitesTicket)`.
    pub fn metric<M>(mut self, metric: impl crate::IntoMetric<M>) -> Self {
        self.plan = self.plan.metric(metric);
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
        self.plan = self.plan.concurrency(n);
        self
    }

    /// Runs the agent several times per sample: `.repeat(5)`, or
    /// `.repeat(Repeat::Auto { max: 20 })` to add runs only to samples whose
    /// verdict is still inconclusive. Each metric's score is the mean over
    /// the runs, with its interval; the sample passes when the interval lies
    /// on the passing side of the threshold, fails when it lies on the
    /// other, and is inconclusive when it straddles it (see
    /// [`inconclusive`](Self::inconclusive)).
    pub fn repeat(mut self, repeat: impl Into<eval_datasets::Repeat>) -> Self {
        self.plan = self.plan.repeat(repeat);
        self
    }

    /// At most `n` samples of each dataset, the first in file order (after
    /// [`sample_tags`](Self::sample_tags)): letta's `max_samples`, the
    /// attribute's `max_samples = N`, the command's `--max-samples`. Gates
    /// judge the mean of those samples. Replaces a letta suite's own choice.
    pub fn max_samples(mut self, n: usize) -> Self {
        self.plan = self.plan.max_samples(n);
        self
    }

    /// Only the samples carrying every one of `tags`: letta's
    /// `sample_tags`, the attribute's `sample_tags = [...]`, the command's
    /// repeated `--tag`.
    pub fn sample_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.plan = self.plan.sample_tags(tags);
        self
    }

    /// What an inconclusive verdict (a sample's over repeated runs, a
    /// gate's over the dataset) counts as, over `EVAL_INCONCLUSIVE`: the
    /// point estimate decides (the default), `Fail` (strict) or `Pass`.
    pub fn inconclusive(mut self, on: crate::stats::OnInconclusive) -> Self {
        self.plan = self.plan.inconclusive(on);
        self
    }

    /// Gates cluster the datasets' samples by this field (a `metadata` key,
    /// or another field of the sample): their intervals use the
    /// cluster-robust standard error (samples of one document, one
    /// conversation or one user are not independent).
    pub fn cluster_by(mut self, field: &str) -> Self {
        self.plan = self.plan.cluster_by(field);
        self
    }

    /// The LLM judge for model-based metrics (default: `EVAL_JUDGE_*`).
    pub fn judge(mut self, judge: Judge) -> Self {
        self.judge = Some(judge);
        self
    }

    /// The embeddings server for model-based metrics (default: `EVAL_EMBED_*`).
    pub fn embedder(mut self, embedder: Embedder) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Limit on one sample's agent interaction, and separately on its
    /// scoring (default `EVAL_SAMPLE_TIMEOUT_SECS`, else 300 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.plan = self.plan.timeout(timeout);
        self
    }

    /// Directory relative paths are resolved against (default `CARGO_MANIFEST_DIR`, else the working directory).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plan = self.plan.base_dir(dir);
        self
    }

    /// Retrieval datasets: allows a `scopePrefix` that does not start with
    /// `eval:` (ingest deletes everything under it).
    pub fn allow_custom_prefix(mut self, on: bool) -> Self {
        self.plan = self.plan.allow_custom_prefix(on);
        self
    }

    /// Lets a manifest's dataset paths lead outside its project (they must
    /// stay inside it otherwise).
    pub fn allow_outside(mut self, on: bool) -> Self {
        self.plan = self.plan.allow_outside(on);
        self
    }

    /// Gates the run on a baseline results file: a sample's metric that
    /// fell by more than `epsilon` since the baseline fails the run (exit 1),
    /// and the comparison is printed. With `EVAL_ACCEPT_BASELINE=1` the run's
    /// results become the new baseline instead (the old one is backed up),
    /// as `INSTA_UPDATE` accepts snapshots. A missing baseline is written.
    /// Only complete runs are compared (not `-- filter`, not nextest's
    /// single processes: compare the merged results with `evals report diff`).
    pub fn baseline(mut self, path: impl Into<PathBuf>, epsilon: f64) -> Self {
        self.plan = self.plan.baseline(path, epsilon);
        self
    }

    /// Lets the baseline comparison accept a judge change or a dataset
    /// content change, labelled as such (without it, a baseline scored by
    /// another judge or on other data is refused: exit 2 naming the
    /// difference). Call after [`baseline`](Self::baseline).
    pub fn baseline_allowing(mut self, judge_change: bool, dataset_change: bool) -> Self {
        self.plan = self.plan.baseline_allowing(judge_change, dataset_change);
        self
    }

    /// Where to write the results file (default
    /// `target/evals/<package>/<binary>.json`, its results key).
    pub fn results_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.results_path = Some(path.into());
        self
    }

    /// Also write the results as JUnit XML to `path` (else to
    /// `EVAL_JUNIT`, when set): one testcase per sample, see
    /// `junit_xml`.
    pub fn junit(mut self, path: impl Into<PathBuf>) -> Self {
        self.junit_path = Some(path.into());
        self
    }

    /// Settings to use instead of the environment's (tests).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
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
            Err(e) => {
                for line in e.to_string().lines() {
                    // issue37:escape: file names, ids from outside.
                    eprintln!("error: {}", eval_datasets::terminal::escaped(line));
                }
                Outcome {
                    error: Some(e),
                    ..Outcome::code(2)
                }
            }
        }
    }

    fn execute(self, mut args: Arguments) -> Result<Outcome, Error> {
        // A trial only waits for the report the engine hands it (the engine
        // evaluates concurrently on its own thread): one test thread takes
        // them all, with none of the wake-ups of many. `--test-threads`
        // still decides when given.
        if args.test_threads.is_none() {
            args.test_threads = Some(1);
        }
        let config = Config::own_or_global(self.config.as_ref())?;
        for w in config.warnings() {
            eprintln!("warning: {}", eval_datasets::terminal::escaped_lines(&w)); // issue37:escape
        }
        let agent = self.agent.clone().ok_or_else(|| Error::Config {
            what: "harness".into(),
            reason: "no agent: call .agent(HttpAgent::from_env()) or .agent_fn(my_agent)".into(),
        })?;
        let services = self.services(config);
        let selection = Selection::from_arguments(&args);
        let dir = results_dir(config);
        let index_dir = match self.results_path.as_ref().and_then(|p| p.parent()) {
            Some(parent) => parent.join("index"),
            None => dir.join("index"),
        };
        let (plan, datasets) = crate::plan::prepare(
            &self.plan,
            config,
            &services,
            selection.exact_name(),
            Some(&index_dir),
        )?;
        let unconfirmed = crate::plan::unconfirmed_scopes(&datasets, &config.delete_scopes);
        if !unconfirmed.is_empty() {
            return Err(crate::plan::PlanError::new(unconfirmed).into());
        }
        for note in datasets.iter().flat_map(|d| &d.notes) {
            eprintln!("note: {}", eval_datasets::terminal::escaped_lines(note)); // issue37:escape
        }
        let per_model = datasets.iter().any(|d| d.plan.model.is_some());
        let (agent, note) = crate::plan::agent_for_plan(agent, &plan.agent, per_model);
        if let Some(note) = note {
            eprintln!("note: {}", eval_datasets::terminal::escaped_lines(&note)); // issue37:escape
        }
        let run = Arc::new(
            Run::new(datasets, services, plan.concurrency)
                .in_project(&plan.base_dir)
                .configured(config),
        );
        // Trials are indexes: named when printed, evaluated when run.
        let name = |t: usize| run.name(t);
        let trial = |t: usize| {
            let (report, _) = run.report(t, &*agent);
            if run.fails(t, &report) {
                Err(report.render())
            } else {
                Ok(())
            }
        };
        let trials = |args: &Arguments| {
            super::trials::run(args, run.len(), &name, &trial).map_err(|e| Error::Config {
                what: "test output".into(),
                reason: e.to_string(),
            })
        };
        if args.list {
            trials(&args)?;
            return Ok(Outcome::code(0));
        }
        let selected = run.selected(&selection);
        if !selected.contains(&true) {
            // nextest reports a test it cannot find as passed: a name meant for
            // one of these datasets that matches nothing is an error. Names of
            // other tests (`cargo test -- --exact some_unit_test` reaches every
            // test binary) match nothing here, as with libtest.
            if let Some(filter) = selection.exact_filters().iter().find(|f| {
                plan.datasets
                    .iter()
                    .any(|d| f.starts_with(&format!("{}::", d.name)))
            }) {
                return Err(Error::Config {
                    what: "--exact".into(),
                    reason: format!("no sample is named `{filter}`; `--list` shows the names"),
                });
            }
            // Nothing to evaluate: leave the last results file alone.
            trials(&args)?;
            return Ok(Outcome::code(0));
        }
        let first = selected.iter().position(|s| *s).unwrap_or_default();
        let worker = run
            // The trials take their reports in order: the evaluation stays
            // at most this far ahead of them.
            .start(
                &selected,
                agent.clone(),
                None,
                Some(AHEAD.max(2 * args.test_threads.unwrap_or(1))),
            )
            .map_err(|e| Error::Config {
                what: "evaluation thread".into(),
                reason: e.to_string(),
            })?;
        let conclusion = trials(&args);
        let _ = worker.join();
        let conclusion = conclusion?;

        self.finish(&run, (&plan, first), conclusion, (config, &dir))
    }

    /// The judge and embedder given in code, else the configuration's,
    /// bounded together at the judge concurrency; the rest as configured.
    fn services(&self, config: &Config) -> Services {
        let base = Services::own_or_global(self.config.as_ref());
        let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(config.judge_concurrency()));
        Services {
            judge: self
                .judge
                .clone()
                .map(Ok)
                .unwrap_or(base.judge)
                .map(|j| j.share_permits(permits.clone())),
            embedder: self
                .embedder
                .clone()
                .map(Ok)
                .unwrap_or(base.embedder)
                .map(|e| e.share_permits(permits)),
            cassette: base.cassette,
            pricing: base.pricing,
            base_dir: base.base_dir,
            traces: base.traces,
            scorer_permits: base.scorer_permits,
        }
    }

    /// The end of a run whose trials concluded: results, JUnit, baseline,
    /// gate lines, the samples decided without proof, usage, and the exit
    /// code (`first`: the first selected trial, which names a nextest part).
    fn finish(
        &self,
        run: &Run,
        (plan, first): (&crate::plan::Plan, usize),
        conclusion: super::trials::Conclusion,
        (config, dir): (&Config, &std::path::Path),
    ) -> Result<Outcome, Error> {
        let key = ResultsKey::current(config, None);
        let ending = if config.under_nextest {
            Ending::Part {
                path: key.part(dir, config.nextest_run_id.as_deref(), &run.name(first)),
                // The plan's datasets are in the part's provenance.
                missing: Vec::new(),
            }
        } else {
            Ending::Process {
                path: self.results_path.clone().unwrap_or_else(|| key.file(dir)),
                whole: true,
                missing: Vec::new(),
            }
        };
        let ended = end_run(
            &[run],
            &key,
            End {
                ending,
                junit: self.junit_path.clone(),
                baseline: plan.baseline.as_ref(),
            },
            config,
        )?;
        for note in &ended.notes {
            println!("note: {note}");
        }
        if let Some(junit) = &ended.junit {
            println!("junit: {}", junit.display());
        }
        if let Some((old, outcome)) = &ended.baseline {
            print!("{}", outcome.render(old));
        }
        let Ended {
            datasets,
            verdict,
            results_path,
            html,
            ..
        } = ended;
        let paint = crate::output::Paint::stdout();
        for line in verdict.gate_lines_with(paint) {
            println!("{line}");
        }
        // Once per run, what libtest showed as plain `ok` or `FAILED`
        // without proof; under nextest (a process per sample) the merged
        // file's summary says it.
        if !config.under_nextest {
            match run.unproven(&datasets) {
                Ok(unproven) => {
                    for line in unproven.lines(results_path.as_deref()) {
                        println!("{}", paint.note(&format!("note: {line}")));
                    }
                }
                // issue37:escape
                Err(e) => eprintln!(
                    "warning: {}",
                    eval_datasets::terminal::escaped_lines(&e.to_string())
                ),
            }
        }
        let usage = crate::output::total_usage(&datasets);
        if !usage.is_empty() {
            println!("{}", paint.dim(&format!("usage: {}", usage.line())));
        }
        if let Some(path) = &results_path {
            println!("{}", paint.dim(&format!("results: {}", path.display())));
        }
        if let Some(html) = &html {
            println!("{}", paint.dim(&format!("html: {}", html.display())));
        }
        // libtest's code for failed tests; agentspec's 1 for a missed gate.
        // Under nextest a process runs one test: its gates are judged by
        // `evals report merge`, as the attribute's are, not by this test.
        let gates_missed = !verdict.missed_gates.is_empty() && !config.under_nextest;
        let code = if conclusion.has_failed() {
            101
        } else if gates_missed || verdict.regressions > 0 {
            1
        } else {
            0
        };
        Ok(Outcome {
            code,
            datasets,
            verdict,
            results_path,
            error: None,
        })
    }
}
