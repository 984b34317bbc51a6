//! Per-sample results and the text a person reads when a sample fails.

use std::fmt::Write as _;
use std::time::Duration;

use eval_core::metric::Op;
use eval_core::{Expected, Sample, Source};
use serde::Serialize;

use crate::error::one_line;

/// One metric's outcome on one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MetricResult {
    /// Metric name as written.
    pub name: String,
    /// The score, when it could be computed.
    pub score: Option<f64>,
    /// Comparison against the threshold.
    #[serde(serialize_with = "ser_op")]
    pub op: Op,
    /// The threshold.
    pub threshold: f64,
    /// Whether the score is on the right side of the threshold.
    pub passed: bool,
    /// Why the score could not be computed.
    pub error: Option<String>,
    /// How it was scored when not by the metric's primary method (e.g. an
    /// offline variant without a judge).
    pub method: Option<&'static str>,
    /// The value in the metric's original direction, when the score is
    /// reported flipped (deepeval toxicity and bias, where lower is better).
    pub raw: Option<f64>,
}

fn ser_op<S: serde::Serializer>(op: &Op, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&op.to_string())
}

/// Everything known about one evaluated sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SampleReport {
    /// Full test name (`<function>::<sample>`).
    pub test_name: String,
    /// Sample id.
    pub id: String,
    /// File and line.
    pub source: Source,
    /// The input (all turns).
    pub input: String,
    /// The expected answer, if any.
    pub expected: Option<String>,
    /// The agent's output, when it answered.
    pub output: Option<String>,
    /// Per-metric outcomes (empty when the agent failed).
    pub metrics: Vec<MetricResult>,
    /// Why the sample could not be scored (agent error, missing field, timeout).
    pub error: Option<String>,
    /// Time spent in the agent.
    #[serde(serialize_with = "ser_secs")]
    pub latency: Duration,
    /// Judge and embedding calls made to score it.
    pub usage: crate::service::Usage,
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

const SHOWN_CHARS: usize = 300;

/// One text, or several numbered per turn: `[1] Hi  [2] Bye`.
pub(crate) fn numbered(texts: &[String]) -> String {
    if texts.len() == 1 {
        return texts[0].clone();
    }
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| format!("[{}] {}", i + 1, one_line(t, 120)))
        .collect::<Vec<_>>()
        .join("  ")
}

impl SampleReport {
    /// A report for `sample` with nothing evaluated yet.
    pub fn new(test_name: String, sample: &Sample) -> Self {
        SampleReport {
            test_name,
            id: sample.id.clone(),
            source: sample.source.clone(),
            input: numbered(sample.input.turns()),
            expected: sample.expected.as_ref().map(|e| match e {
                Expected::PerTurn(list) => numbered(list),
                Expected::Text(t) => t.clone(),
            }),
            output: None,
            metrics: Vec::new(),
            error: None,
            latency: Duration::ZERO,
            usage: crate::service::Usage::default(),
        }
    }

    /// True when the agent answered and every metric passed.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.metrics.iter().all(|m| m.passed)
    }

    /// One line: `ok <name>  metric=score ...`.
    pub fn summary_line(&self) -> String {
        let mut line = format!(
            "{} {} ({})",
            if self.passed() { "ok" } else { "FAILED" },
            self.test_name,
            self.source
        );
        if let Some(e) = &self.error {
            let _ = write!(line, ": {e}");
        }
        for m in &self.metrics {
            match m.score {
                Some(s) => {
                    let _ = write!(line, "  {}={s:.3}", m.name);
                }
                None => {
                    let _ = write!(line, "  {}=error", m.name);
                }
            }
        }
        line
    }

    /// The failure report: one line for an agent error, otherwise sample,
    /// input, expected vs actual, and a table of metrics.
    pub fn render(&self) -> String {
        if let Some(e) = &self.error {
            return format!("{} ({}, id {}): {e}", self.test_name, self.source, self.id);
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} {} ({}, id {})",
            if self.passed() { "passed" } else { "FAILED" },
            self.test_name,
            self.source,
            self.id
        );
        let _ = writeln!(out, "  input:    {}", one_line(&self.input, SHOWN_CHARS));
        if let Some(e) = &self.expected {
            let _ = writeln!(out, "  expected: {}", one_line(e, SHOWN_CHARS));
        }
        let _ = writeln!(
            out,
            "  actual:   {}",
            one_line(self.output.as_deref().unwrap_or(""), SHOWN_CHARS)
        );
        let width = self
            .metrics
            .iter()
            .map(|m| m.name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(out, "  {:<width$}  score   threshold  verdict", "metric");
        for m in &self.metrics {
            let score = m
                .score
                .map_or_else(|| "  -  ".to_string(), |s| format!("{s:.3}"));
            let verdict = if m.passed { "pass" } else { "FAIL" };
            let _ = write!(
                out,
                "  {:<width$}  {score:<6}  {} {:<7.3}  {verdict}",
                m.name, m.op, m.threshold
            );
            if let Some(e) = &m.error {
                let _ = write!(out, " ({e})");
            }
            if let Some(method) = m.method {
                let _ = write!(out, " [{method}]");
            }
            if let Some(raw) = m.raw {
                let _ = write!(out, " [deepeval {} = {raw:.3}, lower is better]", m.name);
            }
            out.push('\n');
        }
        let u = &self.usage;
        if u.calls + u.cache_hits > 0 {
            let _ = writeln!(
                out,
                "  judge/embeddings: {} call(s), {} retr(ies), {} re-ask(s), {} cache hit(s), {} + {} tokens",
                u.calls, u.retries, u.reasks, u.cache_hits, u.prompt_tokens, u.completion_tokens
            );
        }
        out
    }
}
