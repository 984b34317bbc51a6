//! The runner front end: what the `evals` command evaluates with.

use eval_datasets::Sample;

use crate::agent::Agent;
use crate::config::Config;
use std::path::{Path, PathBuf};

use crate::engine::{End, Ending, Run, end_run};
use crate::model::Error;
use crate::output::{BaselineOutcome, Results, ResultsKey, RunVerdict, SampleReport};
use crate::plan::{Baseline, PlanBuilder};
use crate::services::Services;

/// Evaluating a plan outside libtest, as the `evals` command does: every
/// sample of every dataset, concurrently, into one [`Results`] and its
/// [`RunVerdict`].
///
/// ```no_run
/// use eval_runtime::plan::PlanBuilder;
/// use eval_runtime::{HttpAgent, Runner};
///
/// let plan = PlanBuilder::new().dataset("evals/rag.jsonl", "contains, partial_match >= 0.5");
/// let runner = Runner::new();
/// let prepared = runner.prepare(plan).unwrap();
/// let agent = HttpAgent::new("http://127.0.0.1:4000").unwrap();
/// let outcome = prepared.evaluate(&agent, |_| {}).unwrap();
/// println!("{} samples, passed: {}", outcome.results.samples().len(), outcome.verdict.passed());
/// ```
#[must_use]
#[derive(Default)]
pub struct Runner {
    services: Option<Services>,
    config: Option<Config>,
    binary: String,
    output: Option<PathBuf>,
    junit: Option<PathBuf>,
    no_html: bool,
    streamed: bool,
    /// Metrics of the user's the plans' specs may name.
    user: Vec<std::sync::Arc<dyn crate::Metric>>,
}

/// A plan loaded and checked, ready to evaluate ([`Runner::prepare`]; see
/// the [`Runner`] and [`PlanBuilder`] examples).
pub struct Prepared<'a> {
    binary: &'a str,
    output: Option<&'a Path>,
    junit: Option<&'a Path>,
    no_html: bool,
    streamed: bool,
    run: Run,
    baseline: Option<Baseline>,
    config: &'a Config,
    agent: eval_datasets::AgentSettings,
    /// Things worth saying that are not errors (thresholds not checked, datasets left out).
    pub notes: Vec<String>,
}

/// What a run of the runner gave ([`Prepared::evaluate`]; see the
/// [`Runner`] and [`PlanBuilder`] examples).
#[derive(Debug)]
#[non_exhaustive]
pub struct RunOutcome {
    /// Every evaluated sample, the summaries and gate verdicts; without
    /// the samples when they were streamed ([`Runner::streamed`]).
    pub results: Results,
    /// What it amounts to (see [`RunVerdict`]).
    pub verdict: RunVerdict,
    /// The comparison with the plan's baseline, if it has one.
    #[doc(hidden)]
    pub baseline: Option<(PathBuf, BaselineOutcome)>,
    /// The results file written ([`Runner::output`]).
    pub results_path: Option<PathBuf>,
    /// The HTML report written beside it.
    pub html: Option<PathBuf>,
    /// The JUnit file written ([`Runner::junit`], else `EVAL_JUNIT`).
    pub junit: Option<PathBuf>,
    /// What the summary shows of streamed samples.
    shown: Option<crate::output::Shown>,
    /// Things worth saying that are not errors (e.g. how many evaluation
    /// spans were exported, and dropped).
    #[doc(hidden)]
    pub notes: Vec<String>,
}

impl RunOutcome {
    /// The run's summary for a terminal (`summary_text`),
    /// whether its samples are in [`results`](Self::results) or were streamed.
    #[doc(hidden)]
    pub fn summary_text(&self, paint: crate::output::Paint) -> String {
        let rest = match &self.results_path {
            Some(path) => crate::output::Rest::File(path),
            None => crate::output::Rest::NoFile,
        };
        match &self.shown {
            Some(shown) => crate::output::summary_text_of(&self.results, shown, paint, rest),
            None => crate::output::summary_text_of(
                &self.results,
                &crate::output::Shown::of(&self.results),
                paint,
                rest,
            ),
        }
    }
}

impl Runner {
    /// A runner with the environment's settings, judge and embedder.
    pub fn new() -> Self {
        Runner {
            services: None,
            config: None,
            binary: "evals".into(),
            output: None,
            junit: None,
            no_html: false,
            streamed: false,
            user: Vec::new(),
        }
    }

    /// A metric of your own every plan's metrics and gates may name (see
    /// [`PlanBuilder::metric`]).
    pub fn metric<M>(mut self, metric: impl crate::IntoMetric<M>) -> Self {
        self.user.push(metric.into_metric());
        self
    }

    /// Writes the results file to `path` (with the HTML report beside it,
    /// unless `EVAL_HTML=off` or [`no_html`](Self::no_html)).
    pub fn output(mut self, path: impl Into<PathBuf>) -> Self {
        self.output = Some(path.into());
        self
    }

    /// Writes JUnit XML of the run to `path` (over `EVAL_JUNIT`).
    pub fn junit(mut self, path: impl Into<PathBuf>) -> Self {
        self.junit = Some(path.into());
        self
    }

    /// No HTML report beside the results file.
    pub fn no_html(mut self, on: bool) -> Self {
        self.no_html = on;
        self
    }

    /// Streams the records to the results file ([`output`](Self::output))
    /// as they finish and keeps only the summaries: the outcome's `results`
    /// then hold no samples (the run's summary still lists those
    /// that did not pass), and memory stays bounded however large the run.
    /// JUnit, a baseline and a step summary need the run whole and keep it.
    pub fn streamed(mut self, on: bool) -> Self {
        self.streamed = on;
        self
    }

    /// Judge and embedder to use.
    pub fn services(mut self, services: Services) -> Self {
        self.services = Some(services);
        self
    }

    /// Settings to use instead of the environment's.
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// The name recorded as the results' producer (default `evals`).
    pub fn binary(mut self, name: impl Into<String>) -> Self {
        self.binary = name.into();
        self
    }

    /// Builds and loads `plan`: every problem (datasets, metrics, gates,
    /// metrics whose judge is not configured, nothing selected) before any
    /// agent call.
    pub fn prepare(&self, plan: PlanBuilder) -> Result<Prepared<'_>, Error> {
        let config = Config::own_or_global(self.config.as_ref())?;
        let services = match &self.services {
            Some(s) => s.clone(),
            None => Services::own_or_global(self.config.as_ref()),
        };
        let plan = self.user.iter().cloned().fold(plan, |p, m| p.metric(m));
        let (plan, datasets) = crate::plan::prepare(&plan, config, &services, None, None)?;
        let notes = datasets.iter().flat_map(|d| d.notes.clone()).collect();
        Ok(Prepared {
            binary: &self.binary,
            output: self.output.as_deref(),
            junit: self.junit.as_deref(),
            no_html: self.no_html,
            streamed: self.streamed,
            run: Run::new(datasets, services, plan.concurrency)
                .in_project(&plan.base_dir)
                .configured(config),
            baseline: plan.baseline,
            config,
            agent: plan.agent,
            notes,
        })
    }
}

impl Prepared<'_> {
    /// Agent calls the run makes (samples × repeat; under `repeat =
    /// "auto"`, at most).
    #[doc(hidden)]
    pub fn agent_calls(&self) -> usize {
        self.run
            .datasets()
            .iter()
            .map(|d| d.samples.len() * d.plan.repeat.max_runs() as usize)
            .sum()
    }

    /// What the plan's manifest says about the agent
    /// (`spec.evaluation.agent`): apply it with [`HttpAgent::under_plan`](crate::HttpAgent::under_plan),
    /// as the harness does.
    #[doc(hidden)]
    pub fn agent_settings(&self) -> &eval_datasets::AgentSettings {
        &self.agent
    }

    /// What the run will call and cost, computed now without any call
    /// (see `Estimate`).
    #[doc(hidden)]
    pub fn estimate(&self) -> crate::estimate::Estimate {
        crate::estimate::Estimate::of(self.run.datasets(), self.run.services())
    }

    /// [`estimate`](Self::estimate) for an agent answering as `model` (its
    /// tokenizer and price), as the real run prices the agent's answers:
    /// what `evals evaluate --estimate --model M` asks.
    #[doc(hidden)]
    pub fn estimate_for_model(&self, model: Option<&str>) -> crate::estimate::Estimate {
        let mut services = self.run.services().clone();
        if let Some(model) = model {
            services.pricing.agent_model = Some(model.to_string());
        }
        crate::estimate::Estimate::of(self.run.datasets(), &services)
    }

    /// Every sample the run will evaluate, dataset by dataset (a `.jsonl`
    /// dataset's read from its file again; one that cannot be read, as its
    /// file changed, is left out here and is an error in the run).
    pub fn samples(&self) -> impl Iterator<Item = std::borrow::Cow<'_, Sample>> {
        self.run
            .datasets()
            .iter()
            .flat_map(|d| (0..d.samples.len()).filter_map(|i| d.sample(i).ok()))
    }

    /// Whether some sample is a retrieval query, and whether some is not
    /// (known from the load: no sample is read again).
    #[doc(hidden)]
    pub fn holds_retrieval(&self) -> (bool, bool) {
        let datasets = self.run.datasets();
        (
            datasets.iter().any(|d| d.retrieval),
            datasets.iter().any(|d| d.ordinary),
        )
    }

    /// Evaluates every sample with `agent` (blocking; call it outside any
    /// async runtime), calling `progress` as each completes.
    pub fn evaluate(
        self,
        agent: &dyn Agent,
        progress: impl FnMut(&SampleReport),
    ) -> Result<RunOutcome, Error> {
        self.run
            .evaluate_all(agent, progress)
            .map_err(|e| Error::Config {
                what: "async runtime".into(),
                reason: e.to_string(),
            })?;
        let ended = end_run(
            &[&self.run],
            &ResultsKey::named(self.binary),
            End {
                ending: Ending::Command {
                    output: self.output.map(Path::to_path_buf),
                    html: !self.no_html,
                    keep: !self.streamed,
                },
                junit: self.junit.map(Path::to_path_buf),
                baseline: self.baseline.as_ref(),
            },
            self.config,
        )?;
        let results = ended.results.ok_or_else(|| Error::Config {
            what: "run".into(),
            reason: "the command's run was not kept in memory".into(),
        })?;
        Ok(RunOutcome {
            results,
            verdict: ended.verdict,
            baseline: ended.baseline,
            results_path: ended.results_path,
            html: ended.html,
            junit: ended.junit,
            shown: ended.shown,
            notes: ended.notes,
        })
    }
}
