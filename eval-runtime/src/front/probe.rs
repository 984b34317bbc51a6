//! Trying one sample while it is being written (`evals interactive`): the
//! sample goes through the same plan as a dataset's (its metrics — the ones
//! given, else the dataset default —, tool definitions, timeout), the agent
//! is asked once, and the engine scores the answer. What differs from a run
//! is only what a person writing a sample needs: metrics that lack a field
//! the sample does not have yet (an expected answer before it is accepted)
//! are listed as waiting instead of failing the sample, the agent's whole
//! [`Response`] is kept, and the same answer can be scored again after the
//! sample changed ([`Probe::rescore`]) without asking the agent again.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use eval_datasets::Sample;
use eval_datasets::metric::MetricSpec;

use crate::agent::{Agent, BoxFuture, Response};
use crate::config::Config;
use crate::engine::evaluate::evaluate_runs;
use crate::metrics::missing_fields;
use crate::model::{AgentError, SampleError};
use crate::output::SampleReport;
use crate::plan::{PlanBuilder, PlanError};
use crate::services::Services;

/// The name of a probed sample's dataset, as reports show it.
const NAME: &str = "interactive";

/// Scores samples one at a time as they are written, for `evals
/// interactive`: `Probe::new("contains, partial_match >= 0.5").ask(&agent,
/// &sample)` gives the sample's report and the metrics that wait for a
/// field the sample lacks (the command's tests drive it).
#[must_use]
pub struct Probe {
    metrics: String,
    tools: Option<String>,
    base: Option<PathBuf>,
    timeout: Option<Duration>,
    config: Option<Config>,
    services: Option<Services>,
}

/// A metric not scored yet: the field of the sample it needs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Waiting {
    /// The metric, as written.
    pub metric: String,
    /// The field it needs (`expected`, `expected_tools`, `context`, ...;
    /// `expected` of a turn for a metric of one turn).
    pub field: String,
    /// Why it waits, in the engine's words.
    pub why: String,
}

/// What probing a sample gave.
#[derive(Debug)]
#[non_exhaustive]
pub struct Probed {
    /// The engine's report: the whole answer, its context, tool calls,
    /// latency, tokens, cost, and the scores of the metrics that could be
    /// scored (`error` when the agent failed or the plan did not hold).
    pub report: SampleReport,
    /// The agent's answer as it came, when it answered (what
    /// [`Probe::rescore`] scores again).
    pub response: Option<Response>,
    /// Metrics not scored for want of a field the sample lacks.
    pub waiting: Vec<Waiting>,
    /// Why no metric was scored though the agent answered: the plan's
    /// problems (a metric needing a judge that is not configured), one line
    /// each.
    pub problems: Vec<String>,
    /// The metrics the sample is scored with (scored or waiting).
    pub specs: Vec<MetricSpec>,
}

impl Probe {
    /// A probe scoring with `metrics` (the attribute's syntax, e.g.
    /// `"contains, partial_match >= 0.5"`; `""`: a dataset's default — see
    /// [`crate::plan`]), with the environment's settings, judge and embedder.
    pub fn new(metrics: &str) -> Self {
        Probe {
            metrics: metrics.to_string(),
            tools: None,
            base: None,
            timeout: None,
            config: None,
            services: None,
        }
    }

    /// Tool definitions offered with each sample (as
    /// [`PlanBuilder::tools`]: a JSON file relative to the base directory).
    pub fn tools(mut self, path: &str) -> Self {
        self.tools = Some(path.to_string());
        self
    }

    /// Where relative paths (tools, rubric files) are read from.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base = Some(dir.into());
        self
    }

    /// Limit on the agent's answer, and separately on its scoring (default
    /// `EVAL_SAMPLE_TIMEOUT_SECS`, else 300 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Settings to use instead of the environment's.
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Judge and embedder to use.
    pub fn services(mut self, services: Services) -> Self {
        self.services = Some(services);
        self
    }

    /// Checks the metrics and tools as a sample with an expected answer
    /// would be scored: every problem, before anything is asked.
    pub fn check(&self) -> Result<Vec<MetricSpec>, PlanError> {
        let sample = Sample::new("check").with_expected("check");
        self.plan(&sample).map(|(_, specs, _)| specs)
    }

    /// Asks `agent` for `sample` and scores its answer.
    pub fn ask(&self, agent: &dyn Agent, sample: &Sample) -> Probed {
        self.probe(sample, agent)
    }

    /// Scores `response` (an earlier answer) for `sample` again, as if the
    /// agent had given it in `latency`; the agent is not asked.
    pub fn rescore(&self, sample: &Sample, response: &Response, latency: Duration) -> Probed {
        let mut replayed = response.clone();
        replayed.measured_latency = Some(latency);
        self.probe(sample, &Replay(replayed))
    }

    /// The sample as the plan loads it (tool definitions added), its
    /// metrics and its timeout.
    fn plan(&self, sample: &Sample) -> Result<(Sample, Vec<MetricSpec>, Duration), PlanError> {
        let config = Config::own_or_global(self.config.as_ref())
            .map_err(|e| PlanError::new(vec![e.to_string()]))?;
        let services = self.judge_and_embedder();
        let mut builder = PlanBuilder::new().samples(NAME, vec![sample.clone()], &self.metrics);
        if let Some(dir) = &self.base {
            builder = builder.base_dir(dir);
        }
        if let Some(t) = &self.tools {
            builder = builder.tools(t);
        }
        if let Some(t) = self.timeout {
            builder = builder.timeout(t);
        }
        let (_, datasets) = crate::plan::prepare(&builder, config, &services, None, None)?;
        let not_selected = || PlanError::new(vec!["the sample was not selected".into()]);
        let dataset = datasets.first().ok_or_else(not_selected)?;
        let loaded = match dataset.samples.len() {
            0 => return Err(not_selected()),
            _ => dataset
                .sample(0)
                .map_err(|e| PlanError::new(vec![e]))?
                .into_owned(),
        };
        Ok((loaded, dataset.specs(0).to_vec(), dataset.plan.timeout))
    }

    fn judge_and_embedder(&self) -> Services {
        match &self.services {
            Some(s) => s.clone(),
            None => Services::own_or_global(self.config.as_ref()),
        }
    }

    fn probe(&self, sample: &Sample, agent: &dyn Agent) -> Probed {
        let (loaded, specs, timeout, problems) = match self.plan(sample) {
            Ok((loaded, specs, timeout)) => (loaded, specs, timeout, Vec::new()),
            // The answer is still worth seeing: asked, and nothing scored.
            Err(e) => {
                let timeout = Config::own_or_global(self.config.as_ref())
                    .map_or(crate::config::DEFAULT_SAMPLE_TIMEOUT, |c| {
                        c.sample_timeout_or(self.timeout)
                    });
                (sample.clone(), Vec::new(), timeout, e.problems)
            }
        };
        let mut ready = Vec::new();
        let mut waiting = Vec::new();
        for spec in &specs {
            match missing_fields(&loaded, std::slice::from_ref(spec)) {
                Some(why) => waiting.push(Waiting {
                    metric: spec.name.clone(),
                    field: match &why {
                        SampleError::MissingField { field, .. } => field.clone(),
                        SampleError::MissingTurnExpected { turn, .. } => {
                            format!("expected (turn {turn})")
                        }
                        other => other.to_string(),
                    },
                    why: why.to_string(),
                }),
                None => ready.push(spec.clone()),
            }
        }
        let kept: RefCell<Option<Response>> = RefCell::new(None);
        let report = self.run(&loaded, &ready, timeout, async {
            let answer = agent.respond(&loaded).await;
            if let Ok(r) = &answer {
                *kept.borrow_mut() = Some(r.clone());
            }
            answer
        });
        Probed {
            report,
            response: kept.into_inner(),
            waiting,
            problems,
            specs,
        }
    }

    /// The engine's evaluation of `sample`'s answer (`run`) on a runtime of
    /// its own.
    fn run(
        &self,
        sample: &Sample,
        specs: &[MetricSpec],
        timeout: Duration,
        run: impl std::future::Future<Output = Result<Response, AgentError>>,
    ) -> SampleReport {
        let name = format!("{NAME}::{}", sample.id);
        let services = self.judge_and_embedder();
        let mut run = Some(run);
        match crate::engine::schedule::local_runtime() {
            Ok(runtime) => runtime.block_on(evaluate_runs(
                name,
                sample,
                specs,
                timeout,
                Default::default(),
                |_| run.take(),
                &services,
            )),
            Err(e) => {
                let mut report = SampleReport::new(name, sample);
                report.error = Some(SampleError::Agent(AgentError::Setup(
                    format!("cannot start an async runtime: {e}").into(),
                )));
                report
            }
        }
    }
}

/// An earlier answer, given again.
struct Replay(Response);

impl Agent for Replay {
    fn respond<'a>(&'a self, _: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
        let response = self.0.clone();
        Box::pin(async move { Ok(response) })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::agent::FnAgent;

    /// A probe with no environment: no judge, no settings.
    fn probe(metrics: &str) -> Probe {
        let config = Config::from_vars(|_| Ok(None), &[]).unwrap();
        Probe::new(metrics).config(config)
    }

    #[test]
    fn metrics_wait_for_the_expected_answer_and_rescore_without_asking_again() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let agent = FnAgent(async move |s: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            Response::new(format!("You asked: {}", s.input.last())).with_context(["a chunk"])
        });
        let p = probe("contains, latency_ms <= 60000");
        assert_eq!(p.check().unwrap().len(), 2);
        let sample = Sample::new("What is RAG?");
        let first = p.ask(&agent, &sample);
        assert_eq!(
            first.report.output.as_deref(),
            Some("You asked: What is RAG?")
        );
        assert_eq!(first.report.context, vec!["a chunk"]);
        // latency_ms is scored; contains waits for an expected answer.
        assert_eq!(first.report.metrics.len(), 1);
        assert_eq!(first.report.metrics[0].name, "latency_ms");
        assert!(first.report.metrics[0].passed);
        assert_eq!(first.waiting.len(), 1);
        assert_eq!(
            (
                first.waiting[0].metric.as_str(),
                first.waiting[0].field.as_str()
            ),
            ("contains", "expected")
        );
        let answer = first.response.expect("the whole answer kept");
        let accepted = sample.clone().with_expected(answer.output.clone());
        let again = p.rescore(&accepted, &answer, Duration::from_millis(1234));
        assert!(again.waiting.is_empty());
        let contains = again.report.metrics.iter().find(|m| m.name == "contains");
        assert_eq!(contains.and_then(|m| m.score), Some(1.0));
        assert_eq!(again.report.latency, Duration::from_millis(1234));
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the agent was asked once");
    }

    #[test]
    fn a_metric_needing_an_unset_judge_is_a_problem_not_a_lost_answer() {
        let agent = FnAgent(async |_: &Sample| Response::new("an answer"));
        let p = probe("relevance");
        assert!(p.check().is_err());
        let probed = p.ask(&agent, &Sample::new("q"));
        assert_eq!(probed.report.output.as_deref(), Some("an answer"));
        assert!(probed.report.metrics.is_empty());
        assert!(
            probed.problems.iter().any(|e| e.contains("judge")),
            "{:?}",
            probed.problems
        );
    }

    #[test]
    fn an_unknown_metric_is_reported_by_check() {
        let e = probe("no_such_metric").check().unwrap_err();
        assert!(e.to_string().contains("no_such_metric"), "{e}");
    }
}
