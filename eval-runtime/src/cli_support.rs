//! What the `evals` command (eval-cli) uses of this crate beyond the API a
//! test author is promised. Not a public API: hidden from the docs, free to
//! change in any release, and compiled only with the internal `_cli`
//! feature, which eval-cli alone enables (and this workspace's own tests and
//! benchmarks).
//! It only re-exports or forwards; the behaviour lives in the modules it
//! names. The public-API test lists it apart, in `api/eval-runtime.internal.txt`.

pub use crate::config::rerank::RerankSettings;
pub use crate::config::{
    DEFAULT_AZURE_API_VERSION, DEFAULT_MAX_RESPONSE_BYTES, ExportSettings, OtlpProtocol, Provider,
    ProviderSettings, ServiceSettings, ServiceWire, TraceSettings,
};
pub use crate::engine::Selection;
pub use crate::front::probe::{Probe, Probed, Waiting};
#[cfg(feature = "http")]
pub use crate::http::MAX_REDIRECTS;
pub use crate::model::Spread;
pub use crate::output::Paint;

/// The judge's and embedder's workings: answers it checks, prompts as
/// rendered, prices, the estimate's call counts, LangSmith uploads.
pub mod services {
    pub use crate::config::{JudgeAnswers, Price, PriceError, PriceTable, Pricing};
    pub use crate::services::judge::{
        Answer, DEFAULT_MAX_TOKENS, DEFAULT_SEED, MAX_REASKS, MAX_TOKENS_CAP,
    };
    #[cfg(feature = "http")]
    pub use crate::services::langsmith::{
        DEFAULT_ENDPOINT as LANGSMITH_ENDPOINT, LangSmith, UploadError, Uploaded,
    };
    pub use crate::services::prompt::{BoundaryKey, DataBlock, Rendered};
}

/// Results files beyond reading one: where they go, merging parts and
/// shards, provenance, CI summaries, JUnit.
pub mod results {
    pub use crate::model::ScorerFingerprint;
    pub use crate::output::UserMetricProvenance;
    pub use crate::output::unproven_lines;
    pub use crate::output::{
        AgentProvenance, CalibrationSummary, DatasetProvenance, EmbeddingsFingerprint, GitState,
        JudgeFingerprint, MetricVersions, Provenance,
    };
    pub use crate::output::{DatasetSummary, Gate, GateResult, MetricRecord, MetricSummary};
    pub use crate::output::{
        DatasetTerms, KEPT_CHARS, KEPT_CHUNKS, ResultsKey, RunSpread, UsageTotals, WrittenMetric,
        binary_name, calibration_dir, failed_gates, junit_xml, merge, merge_allowing, merge_dir,
        merge_paths, merge_paths_allowing, project_calibration_dir, results_dir, total_usage,
    };
    pub use crate::output::{SHOWN_FAILURES, append_step_summary, summary_markdown, summary_text};
}

/// Comparisons beyond the diff itself: the statistics of each metric and
/// gate, baselines, Markdown.
pub mod diff {
    pub use crate::output::{
        ALPHA, BaselineOutcome, Bound, Comparison, Count, Differences, GateChange, GateNeeded,
        GateOutcome, Needed, POWER, QuestionChange, Regression, accept, check_baseline,
    };
    pub use crate::output::{Change, Only, Outcome, SHOWN_CHANGES, diff_markdown};
    pub use crate::stats::PairedTest;
}

/// Sample sizes and power, for "Needed at 80% power".
pub mod verdict {
    pub use crate::stats::{
        Interval, Level, Method, SampleSize, mcnemar_power, mcnemar_samples, paired_t_power,
        paired_t_samples,
    };
}

/// Calibrating a metric against human labels (`evals calibrate`).
pub mod calibrate {
    pub use crate::front::calibrate::{OUTPUT_FIELDS, calibrate};
    pub use crate::output::{
        CALIBRATION_VERSION, CalibrateError, Calibration, Disagreement, RankCorrelation, Unscored,
        matching_calibrations as matching,
    };
    pub use crate::stats::{Agreement, Confusion};
}

/// The self-contained HTML report of whole runs.
pub mod report {
    pub use crate::output::{html, html_path, write_html};
}

/// What a run would cost, before it runs (`--estimate`).
pub mod estimate {
    pub use crate::estimate::*;
}

/// The single-threaded runtime every way in evaluates on (agents, HTTP
/// connections and timers on the calling thread).
pub fn local_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    crate::engine::schedule::local_runtime()
}

/// The sentences of `text`, trimmed, by Unicode's sentence boundaries.
pub fn sentences(text: &str) -> Vec<String> {
    crate::model::sentences(text)
}
