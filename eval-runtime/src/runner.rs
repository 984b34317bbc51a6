//! Evaluating whole datasets outside libtest, as the `evals` CLI does: every
//! sample of every dataset, concurrently, into one [`Results`].
//!
//! ```no_run
//! use eval_runtime::runner::{RunDataset, Runner};
//! use eval_runtime::{Dataset, HttpAgent, metric_spec::parse_specs};
//!
//! let data = Dataset::load("evals/rag.jsonl").unwrap();
//! let specs = parse_specs("contains, partial_match >= 0.5").unwrap();
//! let runner = Runner::new(HttpAgent::new("http://127.0.0.1:4000").unwrap());
//! let results = runner.run(&[RunDataset::new("rag", data.samples, specs)], |_| {});
//! println!("{} samples", results.samples.len());
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use eval_core::metric::MetricSpec;
use eval_core::{Sample, naming};

use crate::agent::Agent;
use crate::evaluate::DEFAULT_SAMPLE_TIMEOUT;
use crate::metrics::judged::Services;
use crate::report::SampleReport;
use crate::results::{Gate, Results, SampleRecord};
use crate::schedule::{self, Job};

/// One dataset to evaluate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunDataset {
    /// Name in reports and test names (`<name>::<sample>`).
    pub name: String,
    /// The samples, in order.
    pub samples: Vec<Sample>,
    /// Metric sets; sample `i` is scored with `spec_sets[sample_specs[i]]`.
    pub spec_sets: Vec<Vec<MetricSpec>>,
    /// Index into `spec_sets` per sample.
    pub sample_specs: Vec<usize>,
    /// Gates on the dataset's means.
    pub gates: Vec<Gate>,
    /// Agent runs per sample.
    pub repeat: u32,
}

impl RunDataset {
    /// Every sample scored with `specs`.
    pub fn new(name: impl Into<String>, samples: Vec<Sample>, specs: Vec<MetricSpec>) -> Self {
        let n = samples.len();
        RunDataset {
            name: name.into(),
            samples,
            spec_sets: vec![specs],
            sample_specs: vec![0; n],
            gates: Vec::new(),
            repeat: 1,
        }
    }

    /// Each sample with its own metrics (runevals' per-item evaluators).
    pub fn per_sample(
        name: impl Into<String>,
        samples: Vec<Sample>,
        specs: Vec<Vec<MetricSpec>>,
    ) -> Self {
        let mut spec_sets: Vec<Vec<MetricSpec>> = Vec::new();
        let mut sample_specs = Vec::with_capacity(specs.len());
        for set in specs {
            let i = match spec_sets.iter().position(|s| *s == set) {
                Some(i) => i,
                None => {
                    spec_sets.push(set);
                    spec_sets.len() - 1
                }
            };
            sample_specs.push(i);
        }
        RunDataset {
            name: name.into(),
            samples,
            spec_sets,
            sample_specs,
            gates: Vec::new(),
            repeat: 1,
        }
    }

    /// Gates on the dataset's means.
    pub fn gates(mut self, gates: Vec<Gate>) -> Self {
        self.gates = gates;
        self
    }

    /// Agent runs per sample (at least 1).
    pub fn repeat(mut self, n: u32) -> Self {
        self.repeat = n.max(1);
        self
    }
}

/// Runs datasets against one agent. See the [module docs](self).
#[must_use]
pub struct Runner {
    agent: Arc<dyn Agent>,
    services: Services,
    timeout: Duration,
    concurrency: usize,
    binary: String,
}

impl Runner {
    /// A runner with the environment's judge and embedder, the default
    /// sample timeout and concurrency (`EVAL_CONCURRENCY`, else 16).
    pub fn new(agent: impl Agent) -> Self {
        let env = Services::from_env_once();
        Runner {
            agent: Arc::new(agent),
            services: Services {
                judge: env.judge.clone(),
                embedder: env.embedder.clone(),
            },
            timeout: DEFAULT_SAMPLE_TIMEOUT,
            concurrency: schedule::concurrency().unwrap_or(schedule::DEFAULT_CONCURRENCY),
            binary: "evals".into(),
        }
    }

    /// Judge and embedder to use.
    pub fn services(mut self, services: Services) -> Self {
        self.services = services;
        self
    }

    /// Limit on one sample's agent interaction, and on its scoring.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Agent calls in flight at once.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The name recorded as the results' producer (default `evals`).
    pub fn binary(mut self, name: impl Into<String>) -> Self {
        self.binary = name.into();
        self
    }

    /// Evaluates every sample of `datasets` (blocking; call it outside any
    /// async runtime) and calls `progress` as each sample completes.
    pub fn run(&self, datasets: &[RunDataset], mut progress: impl FnMut(&SampleReport)) -> Results {
        let permits = tokio::sync::Semaphore::new(self.concurrency);
        let mut records: Vec<SampleRecord> = Vec::new();
        let mut gates: BTreeMap<String, Vec<Gate>> = BTreeMap::new();
        let runtime = crate::__private::local_runtime();
        for d in datasets {
            gates.insert(d.name.clone(), d.gates.clone());
        }
        let sink = std::cell::RefCell::new((&mut progress, &mut records));
        let names: Vec<Vec<String>> = datasets
            .iter()
            .map(|d| naming::test_names(&d.samples))
            .collect();
        runtime.block_on(async {
            let agent = &self.agent;
            let (sink, names, permits) = (&sink, &names, &permits);
            // Every group (dataset x metric set) at once, under one cap.
            let groups = datasets.iter().enumerate().flat_map(|(di, d)| {
                d.spec_sets.iter().enumerate().map(move |(set, specs)| {
                    let jobs = d
                        .samples
                        .iter()
                        .enumerate()
                        .filter(move |(i, _)| d.sample_specs.get(*i) == Some(&set))
                        .map(move |(i, sample)| Job {
                            key: i,
                            name: format!("{}::{}", d.name, names[di][i]),
                            sample,
                        });
                    schedule::evaluate_all(
                        jobs,
                        specs,
                        (self.timeout, d.repeat, &self.services),
                        (permits, self.concurrency),
                        move |s| agent.respond(s),
                        move |_, report| {
                            let mut sink = sink.borrow_mut();
                            (sink.0)(&report);
                            sink.1.push(SampleRecord::from_report(&d.name, &report));
                        },
                    )
                })
            });
            futures_util::future::join_all(groups).await;
        });
        Results::new(&self.binary, records, &gates)
    }
}
