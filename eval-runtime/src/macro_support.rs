//! What `#[eval_dataset]` expands to calls into here. Not a public API: the
//! macro and this module change together.
//!
//! For an `async fn`, the first generated test of a dataset to run starts
//! every sample of the dataset that libtest selected (same filters, read from
//! the command line) on one background thread, many at once; each test then
//! waits for its own sample's report. So `cargo test` with 2 test threads
//! still has `EVAL_CONCURRENCY` agent calls in flight. Under nextest (one
//! process per test), with libtest arguments this module does not know, and
//! for plain (sync) functions, each test evaluates just its own sample.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use eval_core::metric::MetricSpec;
use eval_core::{Dataset, Sample};

use crate::agent::IntoAgentResult;
use crate::evaluate::{evaluate_runs, evaluate_sync, sample_timeout};
use crate::report::SampleReport;
use crate::results::{self, Results, SampleRecord};
use crate::schedule::{self, Job, Slots};
use crate::selection::{Selection, under_nextest};

pub use eval_core::metric::{MetricDecl, Op, OptionValue};
pub use std::borrow::Cow;

/// A dataset embedded in a test binary by the macro (`include_bytes!`, so an
/// edit to the file rebuilds the tests). Parsed once per process, on first use.
pub struct Embedded {
    module_path: &'static str,
    path: &'static str,
    bytes: &'static [u8],
    metrics: &'static [MetricDecl],
    timeout_secs: Option<u64>,
    repeat: u32,
    allow_custom_prefix: bool,
    loaded: OnceLock<Result<Loaded, String>>,
    batch: OnceLock<Result<Option<Arc<Slots>>, String>>,
}

struct Loaded {
    dataset: Dataset,
    /// Full libtest names (module path without the crate, then the sample name).
    names: Vec<String>,
    /// The dataset's name in results: the eval function's path without the
    /// crate (`rag`, or `a::rag` for a function in module `a`).
    name: String,
    specs: Vec<MetricSpec>,
    timeout: Duration,
    repeat: u32,
}

impl Embedded {
    #[doc(hidden)]
    pub const fn new(
        module_path: &'static str,
        path: &'static str,
        bytes: &'static [u8],
        metrics: &'static [MetricDecl],
        timeout_secs: Option<u64>,
        repeat: u32,
    ) -> Self {
        Embedded {
            module_path,
            path,
            bytes,
            metrics,
            timeout_secs,
            repeat,
            allow_custom_prefix: false,
            loaded: OnceLock::new(),
            batch: OnceLock::new(),
        }
    }

    /// The attribute's `allow_custom_prefix = true` (retrieval datasets).
    pub const fn allow_custom_prefix(mut self, on: bool) -> Self {
        self.allow_custom_prefix = on;
        self
    }

    /// The parsed dataset, names, metrics and timeout; a test fails with the
    /// reason when any of them is wrong (bad `EVAL_SAMPLE_TIMEOUT_SECS`...).
    fn loaded(&self) -> &Loaded {
        let loaded = self.loaded.get_or_init(|| {
            let mut dataset =
                Dataset::from_bytes(self.path, self.bytes).map_err(|e| e.to_string())?;
            if self.allow_custom_prefix {
                for s in &mut dataset.samples {
                    if let Some(q) = &mut s.retrieval {
                        q.allow_custom_prefix = true;
                    }
                }
            }
            let specs = self
                .metrics
                .iter()
                .map(MetricDecl::to_spec)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let timeout = match self.timeout_secs {
                Some(s) => Duration::from_secs(s),
                None => sample_timeout().map_err(|e| e.to_string())?,
            };
            // `krate::a::rag` -> tests are named `a::rag::<sample>`.
            let name = match self.module_path.split_once("::") {
                Some((_, rest)) => rest,
                None => self.module_path,
            };
            let names = dataset
                .test_names()
                .into_iter()
                .map(|n| format!("{name}::{n}"))
                .collect();
            Ok(Loaded {
                dataset,
                names,
                name: name.to_string(),
                specs,
                timeout,
                repeat: self.repeat.max(1),
            })
        });
        match loaded {
            Ok(l) => l,
            Err(e) => fail(format!("{}: {e}", self.module_path)),
        }
    }

    fn sample(&self, index: usize) -> (&Loaded, &Sample) {
        let loaded = self.loaded();
        match loaded.dataset.samples.get(index) {
            Some(sample) => (loaded, sample),
            None => fail(format!(
                "{}: sample {index} is not in {} (the dataset changed without a rebuild?)",
                self.module_path, self.path
            )),
        }
    }
}

/// The process-wide multi-threaded runtime tests block on when they
/// evaluate their own sample.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            // Workers only drive I/O and connection tasks (agent futures run on
            // the thread that blocks): half the cores leaves room for libtest's
            // test threads and for an agent on the same machine.
            .worker_threads(
                std::thread::available_parallelism()
                    .map_or(1, |n| n.get().div_ceil(2))
                    .max(1),
            )
            .enable_all()
            .thread_name("eval-runtime")
            .build()
            .unwrap_or_else(|e| fail(format!("cannot start the async runtime: {e}")))
    })
}

/// A single-threaded runtime for an evaluation thread: agent futures, HTTP
/// connections and timers all on that one thread.
pub(crate) fn local_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(format!("cannot start the async runtime: {e}")))
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
    F: AsyncFn(&Sample) -> R + Copy + Send + 'static,
    R: IntoAgentResult,
{
    let (loaded, sample) = ds.sample(index);
    let batch = ds.batch.get_or_init(|| {
        start_batch(ds.loaded(), move |s| async move {
            agent(s).await.into_agent_result()
        })
    });
    let batch = match batch {
        Ok(b) => b,
        Err(e) => fail(format!("{}: {e}", loaded.names[index])),
    };
    let report = match batch.as_ref().and_then(|b| b.take(index)) {
        Some(report) => report,
        None => {
            let runs = (0..loaded.repeat)
                .map(|_| async { agent(sample).await.into_agent_result() })
                .collect();
            let report = runtime().block_on(evaluate_runs(
                loaded.names[index].clone(),
                sample,
                &loaded.specs,
                loaded.timeout,
                runs,
                crate::metrics::judged::Services::from_env_once(),
            ));
            if batch.is_none() {
                record_single(loaded, &report);
            }
            report
        }
    };
    conclude(&report);
}

/// Entry point for a plain `fn(&Sample) -> R` eval function: called on the
/// test's own thread, outside any async runtime (it may start its own), so
/// libtest's test threads run sync agents in parallel.
pub fn run_sync<F, R>(ds: &'static Embedded, index: usize, agent: F)
where
    F: Fn(&Sample) -> R,
    R: IntoAgentResult,
{
    let (loaded, sample) = ds.sample(index);
    let report = evaluate_sync(
        loaded.names[index].clone(),
        sample,
        &loaded.specs,
        loaded.repeat,
        || agent(sample).into_agent_result(),
    );
    record_single(loaded, &report);
    conclude(&report);
}

/// Starts the batch for a dataset. `Ok(None)` when each test should evaluate
/// its own sample (nextest, libtest arguments not understood); `Err` for a
/// configuration error every test of the dataset reports.
fn start_batch<C, Fut>(loaded: &'static Loaded, call: C) -> Result<Option<Arc<Slots>>, String>
where
    C: Fn(&'static Sample) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<crate::Response, String>> + 'static,
{
    let limit = schedule::concurrency().map_err(|e| e.to_string())?;
    if under_nextest() {
        return Ok(None);
    }
    let Some(selection) = Selection::from_args(std::env::args().skip(1)) else {
        warn("eval: unrecognised test arguments; evaluating one sample per test");
        return Ok(None);
    };
    let selected: Vec<bool> = loaded.names.iter().map(|n| selection.selects(n)).collect();
    let mut order: Vec<usize> = (0..selected.len()).filter(|i| selected[*i]).collect();
    // libtest runs tests in name order: finish them in that order too.
    order.sort_by(|a, b| loaded.names[*a].cmp(&loaded.names[*b]));
    let batch = Arc::new(Slots::new(selected));
    let shared = batch.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("eval-batch:{}", loaded.name))
        .spawn(move || {
            let total = order.len();
            let mut records = Vec::with_capacity(total);
            let jobs = order.into_iter().map(|i| Job {
                key: i,
                name: loaded.names[i].clone(),
                sample: &loaded.dataset.samples[i],
            });
            let done = |key: usize, report: SampleReport| {
                records.push(SampleRecord::from_report(&loaded.name, &report));
                if records.len() == total {
                    // Written before the last test can finish and the process exit.
                    record_dataset(&loaded.name, std::mem::take(&mut records));
                }
                shared.fill(key, report);
            };
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                local_runtime().block_on(schedule::evaluate_all(
                    jobs,
                    &loaded.specs,
                    (
                        loaded.timeout,
                        loaded.repeat,
                        crate::metrics::judged::Services::from_env_once(),
                    ),
                    (schedule::process_permits(), limit),
                    call,
                    done,
                ))
            }));
            if let Err(panic) = run {
                let why = schedule::panic_message(&panic);
                warn(&format!(
                    "eval batch stopped ({why}); remaining samples run one by one"
                ));
                shared.abandon();
            }
        });
    match spawned {
        Ok(_) => Ok(Some(batch)),
        Err(_) => Ok(None),
    }
}

/// A warning on the real stderr: threads started from a test inherit its
/// output capture, which would hide it.
fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}

/// Results of every dataset of this process evaluated so far, by name.
fn finished() -> &'static Mutex<BTreeMap<String, Vec<SampleRecord>>> {
    static DONE: OnceLock<Mutex<BTreeMap<String, Vec<SampleRecord>>>> = OnceLock::new();
    DONE.get_or_init(Default::default)
}

/// Adds records and rewrites this process's results file with everything so far.
fn record_dataset(dataset: &str, records: Vec<SampleRecord>) {
    let mut done = finished().lock().unwrap_or_else(|p| p.into_inner());
    done.entry(dataset.to_string()).or_default().extend(records);
    let all: Vec<SampleRecord> = done.values().flatten().cloned().collect();
    let binary = results::binary_name();
    let path = results::results_dir().join(format!("{binary}.json"));
    if let Err(e) = Results::new(&binary, all, &BTreeMap::new()).write(&path) {
        warn(&e.to_string());
    }
}

/// A test that evaluated its own sample: under nextest its own part file
/// (merged later), otherwise added to this process's results file.
fn record_single(loaded: &Loaded, report: &SampleReport) {
    let record = SampleRecord::from_report(&loaded.name, report);
    if !under_nextest() {
        record_dataset(&loaded.name, vec![record]);
        return;
    }
    let binary = results::binary_name();
    let path = results::part_path(&binary, &report.test_name);
    if let Err(e) = Results::new(&binary, vec![record], &BTreeMap::new()).write(&path) {
        warn(&e.to_string());
    }
}

fn conclude(report: &SampleReport) {
    if report.passed() {
        println!("{}", report.summary_line());
    } else {
        fail(report.render());
    }
}

/// Fails the current test with `message` as its whole output: printed to the
/// test's captured stderr, then unwound without the panic hook, so there is no
/// "panicked at" line or backtrace around it.
fn fail(message: String) -> ! {
    eprintln!("{}", message.trim_end());
    std::panic::resume_unwind(Box::new(message))
}
