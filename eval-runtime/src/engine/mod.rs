//! The engine: one [`Run`] evaluates a loaded plan for every front end.
//!
//! A run knows its trials (one per sample, named `<dataset>::<sample>`),
//! which of them the test runner selected ([`Selection`]), and evaluates the
//! selected ones concurrently on a thread of their own
//! ([`schedule`](self::schedule)), handing each report to the test waiting
//! for it; a sample nobody scheduled (nextest's one test per process, an
//! evaluation thread that died) is evaluated by its test alone. Every
//! report becomes its results record at once, kept out of memory by the
//! [`spool`]; the results file's summaries and gate verdicts come from
//! [`output`](crate::output).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use tokio::sync::Semaphore;

use eval_datasets::Sample;

use crate::agent::Agent;
pub(crate) use crate::notice::warn;
use crate::output::{
    DatasetSummary, DatasetTerms, Results, ResultsError, ResultsKey, SampleRecord, SampleReport,
    Summaries,
};
use crate::plan::LoadedDataset;
use crate::services::Services;

mod end;
pub(crate) mod evaluate;
mod models;
mod provenance;
pub(crate) mod schedule;
mod select;
mod spool;
mod write;

pub(crate) use end::{End, Ended, Ending, end_run};
pub use select::Selection;

use schedule::{Job, Slots};
use spool::{Held, Spool};
pub(crate) use write::{Files, write_streamed};

/// What runs when the evaluation thread has stored its last report.
pub(crate) type OnComplete = Box<dyn Fn(&Arc<Run>) + Send + Sync>;

/// A loaded plan being evaluated. See the [module docs](self).
pub(crate) struct Run {
    datasets: Vec<LoadedDataset>,
    /// Where each dataset's trials start (trials are its samples, dataset
    /// after dataset), and the total after them.
    starts: Vec<usize>,
    services: Services,
    permits: Arc<Semaphore>,
    limit: usize,
    slots: OnceLock<Slots>,
    /// The finished samples' records (see [`spool`]).
    records: Spool,
    /// The project the run is in (its git revision goes into provenance).
    project: Option<std::path::PathBuf>,
    /// Where calibrations of the judged metrics are looked for.
    calibrations: Option<std::path::PathBuf>,
    /// What the agent says of itself, once it is known.
    agent: OnceLock<crate::output::AgentProvenance>,
    /// Per dataset, the agent answering as its model (see [`models`]).
    models: OnceLock<Vec<Option<Arc<dyn Agent>>>>,
    /// The run's own trace, under which its evaluations are exported.
    trace: crate::otel::RunTrace,
}

impl Run {
    /// A run over `datasets` with at most `limit` agent calls in flight.
    pub(crate) fn new(datasets: Vec<LoadedDataset>, services: Services, limit: usize) -> Run {
        Self::sharing(datasets, services, Arc::new(Semaphore::new(limit)), limit)
    }

    /// The same run, in the project at `dir` (its git revision is recorded).
    pub(crate) fn in_project(mut self, dir: &Path) -> Run {
        self.project = Some(dir.to_path_buf());
        self
    }

    /// The same run under `config`: it shows the κ of calibrations its
    /// project made of its metrics with its judge (from the project's
    /// calibration directory: call [`in_project`](Self::in_project) first),
    /// and holds at most `EVAL_SPILL_BYTES` of finished records in memory.
    pub(crate) fn configured(mut self, config: &crate::config::Config) -> Run {
        let project = self.project.clone().unwrap_or_else(|| config.base_dir());
        self.calibrations = Some(crate::output::project_calibration_dir(config, &project));
        let limit = usize::try_from(config.spill_bytes).unwrap_or(usize::MAX);
        self.records = Spool::with_limit(self.len(), limit);
        self
    }

    /// Notes what `agent` says of itself, the first time (for provenance).
    fn note_agent(&self, agent: &dyn Agent) {
        if self.agent.get().is_none() {
            let _ = self.agent.set(provenance::agent_settings(agent));
        }
        self.models
            .get_or_init(|| models::agents(&self.datasets, agent));
    }

    /// Where the run's scores come from.
    pub(crate) fn provenance(&self) -> crate::output::Provenance {
        let mut p = provenance::gather(
            &self.datasets,
            &self.services,
            self.agent.get(),
            self.project.as_deref(),
        );
        if let Some(dir) = &self.calibrations {
            p.calibrations =
                crate::output::attached_calibrations(dir, p.judge.as_ref(), &self.metric_specs()).0;
        }
        p
    }

    /// Calibrations of the run's judged metrics made with its judge that
    /// are not attached to it (another threshold, no scope), in words.
    pub(crate) fn calibration_notes(&self) -> Vec<String> {
        let Some(dir) = &self.calibrations else {
            return Vec::new();
        };
        let specs = self.metric_specs();
        let all: Vec<&eval_datasets::MetricSpec> =
            specs.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        let judge = crate::metrics::judged::fingerprint(&all, &self.services);
        crate::output::attached_calibrations(dir, judge.as_ref(), &specs).1
    }

    /// Each dataset's name and the metric specs it scores.
    fn metric_specs(&self) -> Vec<(&str, Vec<&eval_datasets::MetricSpec>)> {
        self.datasets
            .iter()
            .map(|d| (d.plan.name.as_str(), d.spec_sets.iter().flatten().collect()))
            .collect()
    }

    /// A run whose agent calls each hold one of `permits`, which other runs
    /// of the process share (the attribute's datasets).
    pub(crate) fn sharing(
        datasets: Vec<LoadedDataset>,
        services: Services,
        permits: Arc<Semaphore>,
        limit: usize,
    ) -> Run {
        let mut starts = vec![0];
        for d in &datasets {
            starts.push(starts[starts.len() - 1] + d.samples.len());
        }
        let records = Spool::new(starts[starts.len() - 1]);
        Run {
            datasets,
            starts,
            services,
            permits,
            limit,
            slots: OnceLock::new(),
            records,
            project: None,
            calibrations: None,
            agent: OnceLock::new(),
            models: OnceLock::new(),
            trace: crate::otel::RunTrace::new(),
        }
    }

    /// The loaded datasets.
    pub(crate) fn datasets(&self) -> &[LoadedDataset] {
        &self.datasets
    }

    /// The judge, embeddings and prices the run uses.
    pub(crate) fn services(&self) -> &Services {
        &self.services
    }

    /// Trials (samples) of the run.
    pub(crate) fn len(&self) -> usize {
        self.starts[self.starts.len() - 1]
    }

    fn at(&self, t: usize) -> (&LoadedDataset, usize) {
        // The last dataset starting at or before `t`.
        let d = self.dataset_index(t);
        (&self.datasets[d], t - self.starts[d])
    }

    /// The full test name of trial `t`.
    pub(crate) fn name(&self, t: usize) -> String {
        let (d, i) = self.at(t);
        format!("{}::{}", d.plan.name, d.names.get(i))
    }

    /// Which trials `selection` runs.
    pub(crate) fn selected(&self, selection: &Selection) -> Vec<bool> {
        (0..self.len())
            .map(|t| selection.selects(&self.name(t)))
            .collect()
    }

    fn job(&self, t: usize) -> Job<'_> {
        let (d, i) = self.at(t);
        let (sample, unreadable) = match d.sample(i) {
            Ok(sample) => (sample, None),
            Err(why) => (std::borrow::Cow::Owned(d.samples.placeholder(i)), Some(why)),
        };
        Job {
            key: t,
            name: self.name(t),
            sample,
            unreadable,
            specs: d.specs(i),
            runs: evaluate::Runs {
                repeat: d.plan.repeat,
                policy: d.plan.inconclusive,
            },
            timeout: d.plan.timeout,
            agent: self
                .models
                .get()
                .and_then(|m| m.get(self.dataset_index(t)))
                .cloned()
                .flatten(),
        }
    }

    /// The index of trial `t`'s dataset.
    fn dataset_index(&self, t: usize) -> usize {
        self.starts.partition_point(|start| *start <= t) - 1
    }

    /// Starts evaluating the `selected` trials, concurrently, on a thread of
    /// their own; their tests take the reports with [`report`](Self::report).
    /// `on_complete` runs once the last report is stored and before it is
    /// handed out (so before its test can finish and the process exit).
    /// `ahead`: at most that many samples started and not yet taken (for
    /// tests that take their reports in order, as the harness's do; the
    /// reports waiting in memory are then bounded).
    pub(crate) fn start(
        self: &Arc<Self>,
        selected: &[bool],
        agent: Arc<dyn Agent>,
        on_complete: Option<OnComplete>,
        ahead: Option<usize>,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        let slots = Slots::new(selected);
        let _ = self.slots.set(match ahead {
            Some(n) => slots.ahead(n).in_flight(self.limit),
            None => slots,
        });
        self.note_agent(&*agent);
        let run = self.clone();
        let order: Vec<usize> = (0..selected.len()).filter(|t| selected[*t]).collect();
        let mut left = order.len();
        std::thread::Builder::new()
            .name("eval-engine".into())
            .spawn(move || {
                let outcome = schedule::contain(|| -> std::io::Result<()> {
                    let runtime = schedule::local_runtime()?;
                    runtime.block_on(schedule::evaluate_all(
                        order.into_iter().map(|t| run.job(t)),
                        &*agent,
                        &run.services,
                        (&run.permits, run.limit),
                        Some(run.slots()),
                        |job, report| {
                            let t = job.key;
                            run.store(t, &job.sample, &report);
                            left -= 1;
                            if left == 0
                                && let Some(f) = &on_complete
                            {
                                f(&run);
                            }
                            run.slots().fill(t, report);
                        },
                    ));
                    Ok(())
                });
                let why = match outcome {
                    Ok(Ok(())) => return,
                    Ok(Err(e)) => format!("cannot start its async runtime: {e}"),
                    Err(panic) => panic,
                };
                warn(&format!(
                    "evaluation stopped ({why}); remaining samples run one by one"
                ));
                run.slots().abandon();
            })
    }

    fn slots(&self) -> &Slots {
        self.slots
            .get_or_init(|| Slots::new(&vec![false; self.len()]))
    }

    /// Trial `t`'s report: the evaluation thread's, or (when it did not
    /// schedule `t`: nextest, or an evaluation thread that stopped) evaluated
    /// here and now, on a runtime of the same kind and under the same cap;
    /// whether it was evaluated here. Call it outside any async runtime.
    pub(crate) fn report(&self, t: usize, agent: &dyn Agent) -> (SampleReport, bool) {
        self.note_agent(agent);
        if let Some(report) = self.slots().take(t) {
            return (report, false);
        }
        let job = self.job(t);
        let report = match schedule::local_runtime() {
            Ok(runtime) => runtime.block_on(async {
                let report = crate::permit::holding(
                    self.permits.clone(),
                    schedule::evaluate_job(&job, agent, &self.services),
                )
                .await;
                if let Some(cassette) = &self.services.cassette {
                    cassette.flush();
                }
                report
            }),
            Err(e) => {
                let mut report = SampleReport::new(job.name.clone(), &job.sample);
                report.error = Some(crate::model::SampleError::Agent(
                    crate::model::AgentError::Setup(
                        format!("cannot start an async runtime: {e}").into(),
                    ),
                ));
                report
            }
        };
        self.store(t, &job.sample, &report);
        (report, true)
    }

    /// Evaluates every trial on this thread, concurrently, calling
    /// `progress` as each completes (the `evals` command).
    pub(crate) fn evaluate_all(
        &self,
        agent: &dyn Agent,
        mut progress: impl FnMut(&SampleReport),
    ) -> std::io::Result<()> {
        self.note_agent(agent);
        let runtime = schedule::local_runtime()?;
        runtime.block_on(schedule::evaluate_all(
            (0..self.len()).map(|t| self.job(t)),
            agent,
            &self.services,
            (&self.permits, self.limit),
            None,
            |job, report| {
                self.store(job.key, &job.sample, &report);
                progress(&report);
            },
        ));
        Ok(())
    }

    /// Waits until the evaluation thread has no sample left to evaluate.
    pub(crate) fn wait(&self) {
        self.slots().wait_all();
    }

    /// Whether trial `t`'s test fails with `report`: an unscored sample
    /// always; a score on the wrong side of a threshold unless its dataset
    /// is judged by its gates (`ciGate`).
    pub(crate) fn fails(&self, t: usize, report: &SampleReport) -> bool {
        let (d, _) = self.at(t);
        report.unscored() || (!d.plan.ci_gate && !report.passed())
    }

    /// Keeps trial `t`'s record (serialized once, here).
    fn store(&self, t: usize, sample: &Sample, report: &SampleReport) {
        let (d, i) = self.at(t);
        self.services
            .traces
            .export_sample(&self.trace, &d.plan.name, report);
        let record = SampleRecord {
            cluster: d.cluster_of(sample),
            ..SampleRecord::from_report(&d.plan.name, sample, report)
        };
        match serde_json::to_vec(&record) {
            Ok(json) => self.records.put(t, (&d.plan.name, d.names.get(i)), &json),
            // Its dataset is then incomplete, and the run with it.
            Err(e) => warn(&format!(
                "the record of {} cannot be serialized ({e}); the run is incomplete",
                eval_datasets::terminal::escaped(&record.test_name)
            )),
        }
    }

    /// The names of the run's datasets.
    pub(crate) fn dataset_names(&self) -> impl Iterator<Item = &str> {
        self.datasets.iter().map(|d| d.plan.name.as_str())
    }

    /// What each dataset's summary is computed under.
    pub(crate) fn terms(&self) -> BTreeMap<String, DatasetTerms> {
        self.datasets
            .iter()
            .map(|d| {
                let (asked, per_sample) = d.asked();
                (
                    d.plan.name.clone(),
                    DatasetTerms::new(Some(d.planned), d.gates.clone(), d.plan.ci_gate)
                        .on_inconclusive(d.plan.inconclusive)
                        .clustered_by(d.plan.cluster.clone())
                        .described(d.description.clone())
                        .asking(asked, per_sample),
                )
            })
            .collect()
    }

    /// The summaries of what ran so far (gates judged over complete datasets).
    pub(crate) fn summaries(&self) -> Result<Vec<DatasetSummary>, ResultsError> {
        let terms = self.terms();
        let mut summaries = Summaries::new(&terms);
        let mut held = [self.records.hold()];
        for_each_record(&mut held, |_, record| {
            summaries.add(&record);
            Ok(())
        })?;
        Ok(summaries.finish(&terms))
    }

    /// The samples of what ran so far that passed or failed without proof
    /// (read back only when `summaries` count an inconclusive one).
    pub(crate) fn unproven(
        &self,
        summaries: &[DatasetSummary],
    ) -> Result<crate::output::Unproven, ResultsError> {
        let mut unproven = crate::output::Unproven::default();
        let mine = |d: &&DatasetSummary| self.dataset_names().any(|n| n == d.name);
        if summaries.iter().filter(mine).all(|d| d.inconclusive == 0) {
            return Ok(unproven);
        }
        let mut held = [self.records.hold()];
        for_each_record(&mut held, |_, record| {
            unproven.add(&record);
            Ok(())
        })?;
        Ok(unproven)
    }
}

/// Calls `f` with every record `held`, in the results file's order (by
/// dataset, then test name): its compact JSON and the record read back.
pub(super) fn for_each_record(
    held: &mut [Held<'_>],
    mut f: impl FnMut(&[u8], SampleRecord) -> Result<(), ResultsError>,
) -> Result<(), ResultsError> {
    for entry in spool::merged(held).map_err(ResultsError::Records)? {
        let entry = entry.map_err(ResultsError::Records)?;
        let record = serde_json::from_slice(entry.record())
            .map_err(|e| ResultsError::Records(std::io::Error::other(e)))?;
        f(entry.record(), record)?;
    }
    Ok(())
}

/// Everything `runs` evaluated so far, as one [`Results`] in memory (see
/// [`end`] for when; otherwise [`write_streamed`] streams it). `missing`:
/// datasets that should be there and are not (the run is then incomplete).
pub(crate) fn results_of(
    runs: &[&Run],
    key: &ResultsKey,
    missing: &[String],
) -> Result<Results, ResultsError> {
    let mut terms = BTreeMap::new();
    for run in runs {
        terms.extend(run.terms());
    }
    let mut held: Vec<Held<'_>> = runs.iter().map(|r| r.records.hold()).collect();
    let mut samples = Vec::with_capacity(held.iter().map(Held::len).sum());
    for_each_record(&mut held, |_, record| {
        samples.push(record);
        Ok(())
    })?;
    drop(held);
    let mut results = Results::new(&key.binary, samples, &terms);
    results.package = key.package.clone();
    results.provenance = provenance::combine(runs.iter().map(|r| r.provenance()));
    results.complete &= missing.is_empty();
    results.missing_datasets = missing.to_vec();
    Ok(results)
}
