//! What the results file needs of one sample beyond what its dataset and
//! trial already hold, kept small: a run may have 100,000 samples.

use crate::model::Usage;
use crate::output::{SampleReport, Spread, Verdict, cut_chunks, cut_output};

/// One metric of a [`Compact`], in its dataset's spec order.
pub(crate) struct CompactScore {
    pub score: Option<f64>,
    pub passed: bool,
    pub error: Option<Box<str>>,
    pub method: Option<&'static str>,
    pub raw: Option<f64>,
    pub spread: Option<Spread>,
    pub reason: Option<Box<str>>,
}

/// One evaluated sample.
pub(crate) struct Compact {
    pub verdict: Verdict,
    /// Whether it counts as passed (an inconclusive sample as the setting says).
    pub passed: bool,
    pub latency_ms: f32,
    pub metrics: Box<[CompactScore]>,
    pub error: Option<Box<str>>,
    /// The agent's output (cut to 500 characters).
    pub output: Option<Box<str>>,
    /// What most samples of a large run lack (an in-process agent reports
    /// no tokens and calls no tool; no judge, no price table): one
    /// allocation when there is any of it, none when not.
    pub more: Option<Box<More>>,
}

/// The rarer parts of a [`Compact`].
#[derive(Default, PartialEq)]
pub(crate) struct More {
    pub ttft_ms: Option<f32>,
    pub tool_calls: Vec<eval_datasets::ToolCall>,
    pub agent: Usage,
    pub usage: Usage,
    pub embeddings: Usage,
    pub cost_usd: Option<f64>,
    /// Why the cost is unknown (a model without a price).
    pub cost_unknown: Option<Box<str>>,
    /// Runs of the agent scored (`repeat`); 0 here means 1.
    pub runs: u32,
    /// The context the agent returned (cut as in results files).
    pub context: Vec<String>,
    /// The ids it retrieved.
    pub retrieved: Vec<String>,
}

static NONE: More = More {
    ttft_ms: None,
    tool_calls: Vec::new(),
    agent: Usage::ZERO,
    usage: Usage::ZERO,
    embeddings: Usage::ZERO,
    cost_usd: None,
    cost_unknown: None,
    runs: 0,
    context: Vec::new(),
    retrieved: Vec::new(),
};

impl Compact {
    /// The rarer parts (all empty when the sample has none).
    pub(crate) fn more(&self) -> &More {
        self.more.as_deref().unwrap_or(&NONE)
    }

    /// Runs of the agent scored.
    pub(crate) fn runs(&self) -> u32 {
        self.more().runs.max(1)
    }

    pub(crate) fn from_report(report: &SampleReport) -> Self {
        let verdict = Verdict::of(report);
        let runs = report
            .metrics
            .iter()
            .find_map(|m| m.spread.map(|s| s.runs as u32))
            .unwrap_or(1);
        let more = More {
            ttft_ms: report.ttft.map(|t| (t.as_secs_f64() * 1000.0) as f32),
            tool_calls: report.tool_calls.clone(),
            agent: report.agent,
            usage: report.usage,
            embeddings: report.embeddings,
            cost_usd: report.cost_usd,
            cost_unknown: report.cost_unknown.as_ref().map(|e| e.to_string().into()),
            runs: if runs == 1 { 0 } else { runs },
            context: cut_chunks(&report.context),
            retrieved: report.retrieved.clone(),
        };
        Compact {
            verdict,
            passed: report.passed(),
            latency_ms: (report.latency.as_secs_f64() * 1000.0) as f32,
            metrics: report
                .metrics
                .iter()
                .map(|m| CompactScore {
                    score: m.score,
                    passed: m.passed,
                    error: m.error.as_ref().map(|e| e.to_string().into_boxed_str()),
                    method: m.method,
                    raw: m.raw,
                    spread: m.spread,
                    reason: m.reason.as_deref().map(|r| cut_output(r).into_boxed_str()),
                })
                .collect(),
            error: report
                .error
                .as_ref()
                .map(|e| e.to_string().into_boxed_str()),
            output: report
                .output
                .as_deref()
                .map(|out| cut_output(out).into_boxed_str()),
            more: (more != NONE).then(|| Box::new(more)),
        }
    }
}
