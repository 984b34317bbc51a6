//! The engine: one [`Run`] evaluates a loaded plan for every front end.
//!
//! A run knows its trials (one per sample, named `<dataset>::<sample>`),
//! which of them the test runner selected ([`Selection`]), and evaluates the
//! selected ones concurrently on a thread of their own
//! ([`schedule`](self::schedule)), handing each report to the test waiting
//! for it; a sample nobody scheduled (nextest's one test per process, an
//! evaluation thread that died) is evaluated by its test alone. Every
//! report is kept compactly for the results file, whose summaries and gate
//! verdicts come from [`output`](crate::output).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::sync::Semaphore;

use crate::agent::Agent;
pub(crate) use crate::notice::warn;
use crate::output::{
    DatasetSummary, DatasetTerms, Measured, MetricRecord, Results, ResultsError, ResultsKey,
    SampleRecord, SampleReport, ScoreOf, Summaries, SummarySample,
};
use crate::plan::LoadedDataset;
use crate::services::Services;
use crate::stats::Decision;

mod end;
pub(crate) mod evaluate;
mod provenance;
mod record;
pub(crate) mod schedule;
mod select;

pub(crate) use end::{End, Ended, Ending, end_run};
pub use select::Selection;

use record::Compact;
use schedule::{Job, Slots};

/// What runs when the evaluation thread has stored its last report.
pub(crate) type OnComplete = Box<dyn Fn(&Arc<Run>) + Send + Sync>;

/// A loaded plan being evaluated. See the [module docs](self).
pub(crate) struct Run {
    datasets: Vec<LoadedDataset>,
    /// (dataset, sample) per trial, in trial order.
    trials: Vec<(u32, u32)>,
    services: Services,
    permits: Arc<Semaphore>,
    limit: usize,
    slots: OnceLock<Slots>,
    records: Mutex<Vec<Option<Compact>>>,
    /// The project the run is in (its git revision goes into provenance).
    project: Option<std::path::PathBuf>,
    /// Where calibrations of the judged metrics are looked for.
    calibrations: Option<std::path::PathBuf>,
    /// What the agent says of itself, once it is known.
    agent: OnceLock<crate::output::AgentProvenance>,
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

    /// The same run, showing the κ of calibrations in `dir` made with its
    /// judge.
    pub(crate) fn calibrated_from(mut self, dir: PathBuf) -> Run {
        self.calibrations = Some(dir);
        self
    }

    /// Notes what `agent` says of itself, the first time (for provenance).
    fn note_agent(&self, agent: &dyn Agent) {
        if self.agent.get().is_none() {
            let _ = self.agent.set(provenance::agent_settings(agent));
        }
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
            p.calibrations = crate::output::matching_calibrations(dir, p.judge.as_ref())
                .iter()
                .map(crate::output::Calibration::summary)
                .collect();
        }
        p
    }

    /// A run whose agent calls each hold one of `permits`, which other runs
    /// of the process share (the attribute's datasets).
    pub(crate) fn sharing(
        datasets: Vec<LoadedDataset>,
        services: Services,
        permits: Arc<Semaphore>,
        limit: usize,
    ) -> Run {
        let trials: Vec<(u32, u32)> = datasets
            .iter()
            .enumerate()
            .flat_map(|(d, l)| (0..l.samples.len()).map(move |i| (d as u32, i as u32)))
            .collect();
        let records = (0..trials.len()).map(|_| None).collect();
        Run {
            datasets,
            trials,
            services,
            permits,
            limit,
            slots: OnceLock::new(),
            records: Mutex::new(records),
            project: None,
            calibrations: None,
            agent: OnceLock::new(),
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
        self.trials.len()
    }

    fn at(&self, t: usize) -> (&LoadedDataset, usize) {
        let (d, i) = self.trials[t];
        (&self.datasets[d as usize], i as usize)
    }

    /// The full test name of trial `t`.
    pub(crate) fn name(&self, t: usize) -> String {
        let (d, i) = self.at(t);
        format!("{}::{}", d.plan.name, d.names[i])
    }

    /// Which trials `selection` runs.
    pub(crate) fn selected(&self, selection: &Selection) -> Vec<bool> {
        (0..self.len())
            .map(|t| selection.selects(&self.name(t)))
            .collect()
    }

    fn job(&self, t: usize) -> Job<'_> {
        let (d, i) = self.at(t);
        Job {
            key: t,
            name: self.name(t),
            sample: &d.samples[i],
            specs: d.specs(i),
            runs: evaluate::Runs {
                repeat: d.plan.repeat,
                policy: d.plan.inconclusive,
            },
            timeout: d.plan.timeout,
        }
    }

    /// Starts evaluating the `selected` trials, concurrently, on a thread of
    /// their own; their tests take the reports with [`report`](Self::report).
    /// `on_complete` runs once the last report is stored and before it is
    /// handed out (so before its test can finish and the process exit).
    pub(crate) fn start(
        self: &Arc<Self>,
        selected: &[bool],
        agent: Arc<dyn Agent>,
        on_complete: Option<OnComplete>,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        let _ = self.slots.set(Slots::new(selected));
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
                        |t, report| {
                            run.store(t, &report);
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
            .get_or_init(|| Slots::new(&vec![false; self.trials.len()]))
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
        let report = match schedule::local_runtime() {
            Ok(runtime) => runtime.block_on(async {
                let report = crate::permit::holding(
                    self.permits.clone(),
                    schedule::evaluate_job(self.job(t), agent, &self.services),
                )
                .await;
                if let Some(cassette) = &self.services.cassette {
                    cassette.flush();
                }
                report
            }),
            Err(e) => {
                let mut report =
                    SampleReport::new(self.name(t), &self.at(t).0.samples[self.at(t).1]);
                report.error = Some(crate::model::SampleError::Agent(
                    crate::model::AgentError::Setup(
                        format!("cannot start an async runtime: {e}").into(),
                    ),
                ));
                report
            }
        };
        self.store(t, &report);
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
            |t, report| {
                self.store(t, &report);
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

    fn store(&self, t: usize, report: &SampleReport) {
        self.lock()[t] = Some(Compact::from_report(report));
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Option<Compact>>> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
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
                (
                    d.plan.name.clone(),
                    DatasetTerms::new(Some(d.planned), d.gates.clone(), d.plan.ci_gate)
                        .on_inconclusive(d.plan.inconclusive)
                        .clustered_by(d.plan.cluster.clone())
                        .described(d.description.clone()),
                )
            })
            .collect()
    }

    /// The record of trial `t`, rebuilt from its compact form.
    fn record(&self, t: usize, c: &Compact) -> SampleRecord {
        let (d, i) = self.at(t);
        let sample = &d.samples[i];
        SampleRecord {
            dataset: d.plan.name.clone(),
            test_name: self.name(t),
            verdict: c.verdict,
            counted_as: crate::output::counted_as(c.verdict, c.passed),
            cluster: d.cluster_of(sample),
            metrics: d
                .specs(i)
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
                    spread: m.spread.map(Into::into),
                    reason: m.reason.as_deref().map(str::to_string),
                })
                .collect(),
            latency_ms: f64::from(c.latency_ms),
            error: c.error.as_deref().map(str::to_string),
            output: c.output.as_deref().map(str::to_string),
            context: c.more().context.clone(),
            retrieved_ids: c.more().retrieved.clone(),
            ttft_ms: c.more().ttft_ms.map(f64::from),
            tool_calls: c.more().tool_calls.clone(),
            agent: c.more().agent,
            usage: c.more().usage,
            embeddings: c.more().embeddings,
            cost_usd: c.more().cost_usd,
            cost_unknown: c.more().cost_unknown.as_deref().map(str::to_string),
            runs: c.runs(),
            ..SampleRecord::describing(sample)
        }
    }

    /// Adds trial `t`'s compact record to `summaries` (no record rebuilt).
    fn summarise(&self, t: usize, c: &Compact, summaries: &mut Summaries) {
        let (d, i) = self.at(t);
        let scores = d
            .specs(i)
            .iter()
            .zip(c.metrics.iter())
            .map(|(spec, m)| ScoreOf {
                name: spec.name.as_str(),
                score: m.score,
                passed: m.passed,
                inconclusive: m
                    .spread
                    .is_some_and(|s| s.decision == Decision::Inconclusive),
            });
        let more = c.more();
        let measured = Measured::from_totals(
            (
                f64::from(c.latency_ms),
                more.ttft_ms.map(f64::from),
                more.cost_usd,
            ),
            c.runs(),
            [more.agent, more.usage, more.embeddings],
            more.cost_unknown.is_some(),
        );
        let cluster = d.cluster_of(&d.samples[i]);
        let sample = SummarySample {
            dataset: &d.plan.name,
            verdict: c.verdict,
            passed: c.passed,
            cluster: cluster.as_deref(),
        };
        summaries.add_scores(sample, scores, &measured);
    }

    /// The summaries of what ran so far (gates judged over complete datasets).
    pub(crate) fn summaries(&self) -> Vec<DatasetSummary> {
        let records = self.lock();
        let terms = self.terms();
        let mut summaries = Summaries::new(&terms);
        for (t, c) in records.iter().enumerate() {
            if let Some(c) = c {
                self.summarise(t, c, &mut summaries);
            }
        }
        summaries.finish(&terms)
    }
}

/// Everything `runs` evaluated so far, as one [`Results`] in memory (see
/// [`end`] for when; otherwise [`write_results`] streams it). `missing`:
/// datasets that should be there and are not (the run is then incomplete).
pub(crate) fn results_of(runs: &[&Run], key: &ResultsKey, missing: &[String]) -> Results {
    let mut terms = BTreeMap::new();
    let mut samples = Vec::new();
    for run in runs {
        terms.extend(run.terms());
        let records = run.lock();
        samples.extend(
            records
                .iter()
                .enumerate()
                .filter_map(|(t, c)| c.as_ref().map(|c| run.record(t, c))),
        );
    }
    let mut results = Results::new(&key.binary, samples, &terms);
    results.package = key.package.clone();
    results.provenance = provenance::combine(runs.iter().map(|r| r.provenance()));
    results.complete &= missing.is_empty();
    results.missing_datasets = missing.to_vec();
    results
}

/// Writes the results of `runs` to `path` (one file for all of them: the
/// attribute's datasets of one process), sorted by dataset and test name,
/// one record at a time; returns the datasets' summaries. `missing`: datasets
/// that should be there and are not (the run is then incomplete). `html`:
/// the HTML report is written there too, in the same pass.
pub(crate) fn write_results(
    path: &Path,
    key: &ResultsKey,
    runs: &[&Run],
    missing: &[String],
    html: Option<&Path>,
) -> Result<Vec<DatasetSummary>, ResultsError> {
    let guards: Vec<_> = runs.iter().map(|r| r.lock()).collect();
    let mut terms = BTreeMap::new();
    for run in runs {
        terms.extend(run.terms());
    }
    // (run, trial), sorted by dataset then sample name (= by test name).
    let mut order: Vec<(usize, usize)> = Vec::new();
    let mut summaries = Summaries::new(&terms);
    for (r, run) in runs.iter().enumerate() {
        for (t, c) in guards[r].iter().enumerate() {
            if let Some(c) = c {
                run.summarise(t, c, &mut summaries);
                order.push((r, t));
            }
        }
    }
    let key_of = |&(r, t): &(usize, usize)| {
        let (d, i) = runs[r].at(t);
        (d.plan.name.as_str(), d.names[i].as_str())
    };
    order.sort_by(|a, b| key_of(a).cmp(&key_of(b)));
    let (datasets, complete) = summaries.finish_run(&terms);
    let provenance = provenance::combine(runs.iter().map(|r| r.provenance()));
    let provenance = provenance.as_ref();
    let count = order.len();
    let records = order
        .into_iter()
        .filter_map(|(r, t)| guards[r][t].as_ref().map(|c| runs[r].record(t, c)));
    let names = (key.binary.as_str(), key.package.as_deref());
    let Some(html) = html else {
        crate::output::write_streaming(
            path,
            names,
            (&datasets, complete, missing),
            provenance,
            records,
        )?;
        return Ok(datasets);
    };
    crate::output::write_html_along(html, &key.binary, count, |page| {
        crate::output::write_streaming(
            path,
            names,
            (&datasets, complete, missing),
            provenance,
            records.map(|r| {
                // Serialized once, for both files (the results file's
                // layout writes records compact, as the page does).
                match serde_json::value::to_raw_value(&r) {
                    Ok(raw) => {
                        page.sample_as(&r, Some(raw.get()));
                        Written::Raw(raw)
                    }
                    Err(_) => {
                        page.sample(&r);
                        Written::Record(Box::new(r))
                    }
                }
            }),
        )?;
        let whole = complete && missing.is_empty();
        page.end_run(&crate::output::RunMeta {
            binary: &key.binary,
            package: key.package.as_deref(),
            written_unix: crate::output::now_unix(),
            complete: whole,
            incomplete: crate::output::incompleteness(whole, &datasets, missing),
            usage: crate::output::total_usage(&datasets),
            provenance,
            datasets: &datasets,
        });
        Ok(())
    })?;
    Ok(datasets)
}

/// A sample record as the results file gets it: already serialized (for
/// the page too), or as it is.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Written {
    Raw(Box<serde_json::value::RawValue>),
    Record(Box<crate::output::SampleRecord>),
}
