//! What `#[eval_dataset]` expands to calls into here. Not a public API: the
//! macro and this module change together.

use std::sync::OnceLock;
use std::time::Duration;

use eval_core::metric::MetricSpec;
use eval_core::{Dataset, Sample};

use crate::agent::IntoAgentResult;
use crate::evaluate::{DEFAULT_SAMPLE_TIMEOUT, evaluate};
use crate::report::SampleReport;

pub use eval_core::metric::{MetricDecl, Op, OptionValue};
pub use std::borrow::Cow;

/// A dataset embedded in a test binary by the macro (`include_bytes!`, so an
/// edit to the file rebuilds the tests). Parsed once per process, on first use.
pub struct Embedded {
    function: &'static str,
    path: &'static str,
    bytes: &'static [u8],
    metrics: &'static [MetricDecl],
    timeout_secs: Option<u64>,
    loaded: OnceLock<Result<Loaded, String>>,
}

struct Loaded {
    dataset: Dataset,
    names: Vec<String>,
    specs: Vec<MetricSpec>,
}

impl Embedded {
    #[doc(hidden)]
    pub const fn new(
        function: &'static str,
        path: &'static str,
        bytes: &'static [u8],
        metrics: &'static [MetricDecl],
        timeout_secs: Option<u64>,
    ) -> Self {
        Embedded {
            function,
            path,
            bytes,
            metrics,
            timeout_secs,
            loaded: OnceLock::new(),
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
                let names = dataset.test_names();
                Ok(Loaded {
                    dataset,
                    names,
                    specs,
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
}

/// The process-wide runtime every generated test blocks on, so connection
/// pools and agents outlive single tests.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("eval-runtime")
            .build()
            .unwrap_or_else(|e| fail(format!("cannot start the async runtime: {e}")))
    })
}

fn sample_for(
    ds: &'static Embedded,
    index: usize,
) -> (String, &'static Sample, &'static [MetricSpec], Duration) {
    let loaded = match ds.load() {
        Ok(l) => l,
        Err(e) => fail(format!("{}: {e}", ds.function)),
    };
    let Some(sample) = loaded.dataset.samples.get(index) else {
        fail(format!(
            "{}: sample {index} is not in {} (the dataset changed without a rebuild?)",
            ds.function, ds.path
        ))
    };
    let name = format!("{}::{}", ds.function, loaded.names[index]);
    let timeout = ds
        .timeout()
        .unwrap_or_else(|e| fail(format!("{name}: {e}")));
    (name, sample, &loaded.specs, timeout)
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
    F: AsyncFn(&Sample) -> R,
    R: IntoAgentResult,
{
    let (name, sample, specs, timeout) = sample_for(ds, index);
    let report = runtime().block_on(evaluate(name, sample, specs, timeout, async {
        agent(sample).await.into_agent_result()
    }));
    conclude(&report);
}

/// Entry point for a plain `fn(&Sample) -> R` eval function (run on the test
/// thread; the sample timeout cannot interrupt it).
pub fn run_sync<F, R>(ds: &'static Embedded, index: usize, agent: F)
where
    F: Fn(&Sample) -> R,
    R: IntoAgentResult,
{
    let (name, sample, specs, timeout) = sample_for(ds, index);
    // The closure runs inside the future, so only after the field checks.
    let report = runtime().block_on(evaluate(name, sample, specs, timeout, async {
        agent(sample).into_agent_result()
    }));
    conclude(&report);
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
