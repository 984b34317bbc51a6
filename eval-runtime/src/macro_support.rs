//! What `#[eval_dataset]` expands to calls into here. Not a public API: the
//! macro and this module change together.
//!
//! The first generated test of a dataset to run starts every sample of the
//! dataset that libtest selected (same filters, read from the command line)
//! on one background thread, many at once; each test then waits for its own
//! sample's report. So `cargo test` with 2 test threads still has
//! `EVAL_CONCURRENCY` agent calls in flight. Under nextest (one process per
//! test) or with arguments it does not understand, each test evaluates just
//! its own sample.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use eval_core::metric::MetricSpec;
use eval_core::{Dataset, Sample};

use crate::agent::IntoAgentResult;
use crate::evaluate::{DEFAULT_SAMPLE_TIMEOUT, evaluate};
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
    loaded: OnceLock<Result<Loaded, String>>,
    batch: OnceLock<Option<Arc<Slots>>>,
}

struct Loaded {
    dataset: Dataset,
    /// Full libtest names (module path without the crate, then the sample name).
    names: Vec<String>,
    /// The eval function's name (the generated module's).
    function: String,
    specs: Vec<MetricSpec>,
    timeout: Result<Duration, String>,
}

impl Embedded {
    #[doc(hidden)]
    pub const fn new(
        module_path: &'static str,
        path: &'static str,
        bytes: &'static [u8],
        metrics: &'static [MetricDecl],
        timeout_secs: Option<u64>,
    ) -> Self {
        Embedded {
            module_path,
            path,
            bytes,
            metrics,
            timeout_secs,
            loaded: OnceLock::new(),
            batch: OnceLock::new(),
        }
    }

    fn load(&self) -> Result<&Loaded, &str> {
        self.loaded
            .get_or_init(|| {
                let dataset =
                    Dataset::from_bytes(self.path, self.bytes).map_err(|e| e.to_string())?;
                let specs = self
                    .metrics
                    .iter()
                    .map(MetricDecl::to_spec)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                // `krate::a::rag` -> tests are named `a::rag::<sample>`.
                let prefix = match self.module_path.split_once("::") {
                    Some((_, rest)) => rest,
                    None => self.module_path,
                };
                let function = prefix.rsplit("::").next().unwrap_or(prefix).to_string();
                let names = dataset
                    .test_names()
                    .into_iter()
                    .map(|n| format!("{prefix}::{n}"))
                    .collect();
                Ok(Loaded {
                    dataset,
                    names,
                    function,
                    specs,
                    timeout: self.timeout(),
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }

    fn timeout(&self) -> Result<Duration, String> {
        if let Some(s) = self.timeout_secs {
            return Ok(Duration::from_secs(s));
        }
        match crate::agent::env_var("EVAL_SAMPLE_TIMEOUT_SECS") {
            Ok(Some(v)) => {
                crate::agent::parse_secs("EVAL_SAMPLE_TIMEOUT_SECS", &v).map_err(|e| e.to_string())
            }
            Ok(None) => Ok(DEFAULT_SAMPLE_TIMEOUT),
            Err(e) => Err(e.to_string()),
        }
    }

    fn loaded_or_fail(&self) -> &Loaded {
        self.load()
            .unwrap_or_else(|e| fail(format!("{}: {e}", self.module_path)))
    }
}

/// The process-wide runtime every generated test blocks on, so connection
/// pools and agents outlive single tests.
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
    let loaded = ds.loaded_or_fail();
    let batch = ds.batch.get_or_init(|| {
        start_batch(ds, loaded, move |s| async move {
            agent(s).await.into_agent_result()
        })
    });
    let report = match batch.as_ref().and_then(|b| b.take(index)) {
        Some(report) => report,
        None => {
            let (name, sample, timeout) = single(ds, loaded, index);
            let report =
                runtime().block_on(evaluate(name, sample, &loaded.specs, timeout, async {
                    agent(sample).await.into_agent_result()
                }));
            if batch.is_none() {
                record_single(loaded, &report);
            }
            report
        }
    };
    conclude(&report);
}

/// Entry point for a plain `fn(&Sample) -> R` eval function. Batched like
/// async ones (each call runs on the batch thread, one after another inside
/// the concurrent schedule, so a slow sync agent gains nothing).
pub fn run_sync<F, R>(ds: &'static Embedded, index: usize, agent: F)
where
    F: Fn(&Sample) -> R + Copy + Send + 'static,
    R: IntoAgentResult,
{
    let loaded = ds.loaded_or_fail();
    let batch = ds.batch.get_or_init(|| {
        start_batch(
            ds,
            loaded,
            move |s| async move { agent(s).into_agent_result() },
        )
    });
    let report = match batch.as_ref().and_then(|b| b.take(index)) {
        Some(report) => report,
        None => {
            let (name, sample, timeout) = single(ds, loaded, index);
            // The closure runs inside the future, so only after the field checks.
            let report =
                runtime().block_on(evaluate(name, sample, &loaded.specs, timeout, async {
                    agent(sample).into_agent_result()
                }));
            if batch.is_none() {
                record_single(loaded, &report);
            }
            report
        }
    };
    conclude(&report);
}

fn single<'a>(ds: &Embedded, loaded: &'a Loaded, index: usize) -> (String, &'a Sample, Duration) {
    let Some(sample) = loaded.dataset.samples.get(index) else {
        fail(format!(
            "{}: sample {index} is not in {} (the dataset changed without a rebuild?)",
            ds.module_path, ds.path
        ))
    };
    let name = loaded.names[index].clone();
    let timeout = match &loaded.timeout {
        Ok(t) => *t,
        Err(e) => fail(format!("{name}: {e}")),
    };
    (name, sample, timeout)
}

/// Starts the batch for `ds`, or returns `None` when each test should
/// evaluate its own sample (nextest, unknown libtest arguments, bad config).
fn start_batch<C, Fut>(
    ds: &'static Embedded,
    loaded: &'static Loaded,
    call: C,
) -> Option<Arc<Slots>>
where
    C: Fn(&'static Sample) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<crate::Response, String>> + 'static,
{
    if under_nextest() {
        return None;
    }
    let selection = Selection::from_args(std::env::args().skip(1))?;
    let timeout = loaded.timeout.clone().ok()?;
    let limit = schedule::concurrency().ok()?;
    let selected: Vec<bool> = loaded.names.iter().map(|n| selection.selects(n)).collect();
    let mut order: Vec<usize> = (0..selected.len()).filter(|i| selected[*i]).collect();
    // libtest runs tests in name order: finish them in that order too.
    order.sort_by(|a, b| loaded.names[*a].cmp(&loaded.names[*b]));
    let batch = Arc::new(Slots::new(selected));
    let shared = batch.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("eval-batch:{}", loaded.function))
        .spawn(move || {
            let total = order.len();
            let mut records = Vec::with_capacity(total);
            let jobs = order.into_iter().map(|i| Job {
                key: i,
                name: loaded.names[i].clone(),
                sample: &loaded.dataset.samples[i],
            });
            let done = |key: usize, report: SampleReport| {
                records.push(SampleRecord::from_report(&loaded.function, &report));
                if records.len() == total {
                    // Written before the last test can finish and the process exit.
                    record_dataset(&loaded.function, std::mem::take(&mut records));
                }
                shared.fill(key, report);
            };
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                local_runtime().block_on(schedule::evaluate_all(
                    jobs,
                    &loaded.specs,
                    timeout,
                    limit,
                    call,
                    done,
                ))
            }));
            if let Err(panic) = run {
                let why = schedule::panic_message(&panic);
                eprintln!("eval batch stopped ({why}); remaining samples run one by one");
                shared.abandon();
            }
        });
    if spawned.is_err() {
        return None;
    }
    let _ = ds;
    Some(batch)
}

/// Results of every dataset of this process that has finished, by name.
fn finished() -> &'static Mutex<BTreeMap<String, Vec<SampleRecord>>> {
    static DONE: OnceLock<Mutex<BTreeMap<String, Vec<SampleRecord>>>> = OnceLock::new();
    DONE.get_or_init(Default::default)
}

/// Adds a finished dataset and rewrites this process's results file.
fn record_dataset(dataset: &str, records: Vec<SampleRecord>) {
    let mut done = finished().lock().unwrap_or_else(|p| p.into_inner());
    done.entry(dataset.to_string()).or_default().extend(records);
    let all: Vec<SampleRecord> = done.values().flatten().cloned().collect();
    let binary = results::binary_name();
    let path = results::results_dir().join(format!("{binary}.json"));
    write_results(&Results::new(&binary, all, &BTreeMap::new()), &path);
}

/// One test evaluated alone (nextest): its own part file, merged later.
fn record_single(loaded: &Loaded, report: &SampleReport) {
    let binary = results::binary_name();
    let run = std::env::var("NEXTEST_RUN_ID").unwrap_or_else(|_| "run".into());
    let path = results::results_dir()
        .join(format!("{binary}.parts"))
        .join(results::file_safe(&run))
        .join(format!("{}.json", results::file_safe(&report.test_name)));
    let record = SampleRecord::from_report(&loaded.function, report);
    write_results(
        &Results::new(&binary, vec![record], &BTreeMap::new()),
        &path,
    );
}

fn write_results(results: &Results, path: &std::path::Path) {
    if let Err(e) = results.write(path) {
        eprintln!("warning: {e}");
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
