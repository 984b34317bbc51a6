//! The text a person reads when a sample fails, and its one-line summary
//! (the report itself, [`SampleReport`], is in the model).

use std::fmt::Write as _;

use super::paint::Paint;
use super::results::Verdict;
use crate::model::{MetricResult, RunsInterval, SampleReport, one_line};
use crate::stats::Decision;

const SHOWN_CHARS: usize = 300;

/// Document ids for a report line, comma-separated; `(none)` for none.
fn ids_text(ids: &[String]) -> String {
    if ids.is_empty() {
        return "(none)".into();
    }
    one_line(&ids.join(", "), SHOWN_CHARS)
}

/// A metric in a summary line: `name=score` when it passed, else `name`
/// and why it did not.
fn metric_entry(m: &MetricResult, paint: Paint) -> String {
    match (m.why(), m.score) {
        (None, Some(s)) => format!("{}={s:.3}", m.name),
        (None, None) => format!("{}=-", m.name),
        (Some(why), Some(_)) => format!("{} {}", m.name, paint.fail(&why)),
        (Some(why), None) => format!("{} {}", m.name, paint.error(&why)),
    }
}

/// Tool calls for a report line: `name(arg=value, ...)`, comma-separated;
/// `(none)` for no call.
fn calls_text(calls: &[eval_datasets::ToolCall]) -> String {
    if calls.is_empty() {
        return "(none)".into();
    }
    calls
        .iter()
        .map(|c| one_line(&c.display(), 120))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What was asked, what was expected and what the agent answered, one line
/// each (`input:    …`, `expected: …` when the sample says, `actual:   …`),
/// flattened, cut to [`SHOWN_CHARS`] characters and escaped for a terminal:
/// the heart of the attribute's failure report ([`SampleReport::render`]),
/// which a run's summary shows for each sample that did not pass.
pub(crate) fn exchange_lines(input: &str, expected: Option<&str>, actual: &str) -> Vec<String> {
    let mut lines = vec![format!("input:    {}", one_line(input, SHOWN_CHARS))];
    if let Some(e) = expected {
        lines.push(format!("expected: {}", one_line(e, SHOWN_CHARS)));
    }
    lines.push(format!("actual:   {}", one_line(actual, SHOWN_CHARS)));
    lines
}

/// Metadata on one line: `key: value, ...`, strings as they are, other
/// values as JSON.
pub(crate) fn metadata_line(metadata: &serde_json::Map<String, serde_json::Value>) -> String {
    metadata
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl SampleReport {
    /// One line: `ok <name> (<source>)  metric=score ...`, each metric that
    /// did not pass with why (`partial_match 0.200 < 0.5`, `contains error:
    /// ...`).
    #[doc(hidden)]
    pub fn summary_line(&self) -> String {
        self.summary_line_with(Paint::plain())
    }

    /// [`summary_line`](Self::summary_line), its verdicts painted.
    #[doc(hidden)]
    pub fn summary_line_with(&self, paint: Paint) -> String {
        let verdict = Verdict::of(self);
        let word = match (self.passed(), verdict) {
            (true, Verdict::Inconclusive) => "ok (inconclusive)",
            (false, Verdict::Inconclusive) => "FAILED (inconclusive)",
            (true, _) => "ok",
            (false, _) => "FAILED",
        };
        let mut line = format!(
            "{} {} ({})",
            paint.verdict(verdict, word),
            self.test_name,
            self.source
        );
        if let Some(e) = &self.error {
            let _ = write!(line, ": {}", one_line(&e.to_string(), 500));
        }
        for m in &self.metrics {
            let _ = write!(line, "  {}", metric_entry(m, paint));
        }
        line
    }

    /// What the dataset says of the sample beyond its input, one line each
    /// when present: its name, retrieval dataset id, tags and metadata.
    fn described(&self) -> String {
        let mut out = String::new();
        if let Some(name) = &self.name {
            let _ = writeln!(out, "  name:     {}", one_line(name, SHOWN_CHARS));
        }
        if let Some(notes) = &self.notes {
            let _ = writeln!(out, "  notes:    {}", one_line(notes, SHOWN_CHARS));
        }
        if let Some(id) = &self.dataset_id {
            let _ = writeln!(out, "  dataset:  {}", one_line(id, SHOWN_CHARS));
        }
        if !self.tags.is_empty() {
            let _ = writeln!(
                out,
                "  tags:     {}",
                one_line(&self.tags.join(", "), SHOWN_CHARS)
            );
        }
        if !self.metadata.is_empty() {
            let _ = writeln!(
                out,
                "  metadata: {}",
                one_line(&metadata_line(&self.metadata), SHOWN_CHARS)
            );
        }
        out
    }

    /// The failure report: one line for an agent error, otherwise sample,
    /// input, expected vs actual, and a table of metrics.
    pub fn render(&self) -> String {
        if let Some(e) = &self.error {
            let mut out = format!(
                "{} ({}, id {}): {}",
                self.test_name,
                self.source,
                self.id,
                one_line(&e.to_string(), 500)
            );
            let described = self.described();
            if !described.is_empty() {
                out.push('\n');
                out.push_str(described.trim_end());
            }
            return out;
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}{} {} ({}, id {})",
            if self.passed() { "passed" } else { "FAILED" },
            if self.decision() == Some(Decision::Inconclusive) {
                " (inconclusive)"
            } else {
                ""
            },
            self.test_name,
            self.source,
            self.id
        );
        for line in exchange_lines(
            &self.input,
            self.expected.as_deref(),
            self.output.as_deref().unwrap_or(""),
        ) {
            let _ = writeln!(out, "  {line}");
        }
        if !self.retrieved.is_empty() || !self.relevant.is_empty() {
            let _ = writeln!(out, "  retrieved: {}", ids_text(&self.retrieved));
            let _ = writeln!(out, "  relevant:  {}", ids_text(&self.relevant));
        }
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
            let verdict = match (m.passed, m.score, m.decision()) {
                (true, _, Some(Decision::Inconclusive)) => "inconclusive (counted as pass)",
                (false, _, Some(Decision::Inconclusive)) => "INCONCLUSIVE (counted as fail)",
                (true, _, _) => "pass",
                (false, Some(_), _) => "FAIL",
                (false, None, _) => "ERROR",
            };
            let _ = write!(
                out,
                "  {:<width$}  {score:<6}  {} {:<7.3}  {verdict}",
                m.name, m.op, m.threshold
            );
            // Why it did not pass: the error, or the metric's reason.
            if let Some(e) = &m.error {
                let _ = write!(out, "  {}", one_line(&e.to_string(), 500));
            } else if let Some(reason) = m.reason.as_deref().filter(|_| !m.passed) {
                let _ = write!(out, "  {}", one_line(reason, 500));
            }
            if let Some(method) = m.method {
                let _ = write!(out, " [{method}]");
            }
            if let Some(raw) = m.raw {
                if matches!(m.name.as_str(), "toxicity" | "bias") {
                    let _ = write!(out, " [deepeval {} {raw:.3}, lower is better]", m.name);
                } else {
                    let _ = write!(out, " [rating {raw}/5]");
                }
            }
            if let Some(s) = &m.spread {
                let _ = write!(out, " [{}]", RunsInterval::from(*s).text());
            }
            out.push('\n');
        }
        // A failed tool metric shows the calls expected beside those made.
        let tool_failed: Vec<&MetricResult> = self
            .metrics
            .iter()
            .filter(|m| !m.passed && crate::model::is_tool_metric_name(&m.name))
            .collect();
        if !self.tool_calls.is_empty() || !tool_failed.is_empty() {
            let _ = writeln!(out, "  tool calls: {}", calls_text(&self.tool_calls));
        }
        if !tool_failed.is_empty() {
            let expected = match &self.expected_tools {
                Some(calls) => Some(calls_text(calls)),
                // `tool_called`: the expected answer names the tool.
                None => self.expected.as_ref().map(|e| one_line(e, SHOWN_CHARS)),
            };
            if let Some(expected) = expected {
                let _ = writeln!(out, "  expected tool calls: {expected}");
            }
        }
        out.push_str(&self.described());
        for (what, u) in [
            ("agent", &self.agent),
            ("judge", &self.usage),
            ("embeddings", &self.embeddings),
        ] {
            if u.calls > 0 || u.cache_hits > 0 {
                let _ = writeln!(
                    out,
                    "  {what}: {} call(s), {} retr(ies), {} re-ask(s), {} cache hit(s), {}",
                    u.calls,
                    u.retries,
                    u.reasks,
                    u.cache_hits,
                    u.tokens_text()
                );
            }
        }
        if let Some(cost) = self.cost_usd {
            let estimated = [&self.agent, &self.usage, &self.embeddings]
                .iter()
                .any(|u| u.estimated_tokens > 0);
            let _ = if estimated {
                writeln!(out, "  cost: ~${cost:.6} (from estimated tokens)")
            } else {
                writeln!(out, "  cost: ${cost:.6}")
            };
        } else if let Some(why) = &self.cost_unknown {
            let _ = writeln!(out, "  cost: unknown ({why})");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SampleError;
    use eval_datasets::Sample;
    use eval_datasets::metric::{MetricSpec, Op};

    fn spec(name: &str, t: f64) -> MetricSpec {
        MetricSpec::new(name, &[], Some((Op::AtLeast, t))).unwrap()
    }

    /// A retrieval-less sample with a name, tags and metadata, scored: one
    /// metric passed, one failed with a reason, one without a score.
    fn scored_report() -> SampleReport {
        let mut sample = Sample::new("Who wrote Hamlet?").with_expected("Shakespeare");
        sample.extra.insert("name".into(), "Hamlet's author".into());
        sample.tags = vec!["books".into(), "easy".into()];
        sample.metadata.insert("source".into(), "demo".into());
        sample.metadata.insert("level".into(), 2.into());
        let mut report = SampleReport::new("qa::hamlet".into(), &sample);
        report.output = Some("Marlowe, I think.".into());
        report.metrics = vec![
            MetricResult::of(&spec("citations", 0.0), Ok(0.0)),
            MetricResult::of(&spec("faithfulness", 0.5), Ok(0.2))
                .with_reason(Some("1 of 5 statements supported by the context".into())),
            MetricResult::of(
                &spec("contains", 1.0),
                Err("`contains` needs an expected answer".into()),
            ),
        ];
        report
    }

    #[test]
    fn every_metric_that_did_not_pass_says_why_in_one_line() {
        let report = scored_report();
        let why: Vec<Option<String>> = report.metrics.iter().map(MetricResult::why).collect();
        assert_eq!(
            why,
            [
                None,
                Some("0.200 < 0.5: 1 of 5 statements supported by the context".into()),
                Some("error: `contains` needs an expected answer".into()),
            ]
        );
        let mut at_most = MetricResult::of(
            &MetricSpec::new("hallucination", &[], Some((Op::AtMost, 0.1))).unwrap(),
            Ok(0.4),
        );
        at_most.reason = Some("line one\nline two".into());
        assert_eq!(at_most.why().unwrap(), "0.400 > 0.1: line one line two");

        assert_eq!(
            report.summary_line(),
            "FAILED qa::hamlet (<inline>)  citations=0.000  faithfulness 0.200 < 0.5: 1 of 5 statements supported by the context  contains error: `contains` needs an expected answer"
        );
    }

    #[test]
    fn the_failure_report_shows_why_and_what_the_dataset_says() {
        let text = scored_report().render();
        assert!(
            text.contains("  faithfulness  0.200   >= 0.500    FAIL  1 of 5 statements supported by the context\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  contains        -     >= 1.000    ERROR  `contains` needs an expected answer\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  citations     0.000   >= 0.000    pass\n"),
            "{text}"
        );
        assert!(text.contains("  name:     Hamlet's author\n"), "{text}");
        assert!(text.contains("  tags:     books, easy\n"), "{text}");
        assert!(
            text.contains("  metadata: source: demo, level: 2\n"),
            "{text}"
        );
        assert!(
            !text.contains("retrieved:"),
            "not a retrieval sample: {text}"
        );
        assert!(!text.contains('\u{1b}'), "never painted: {text:?}");

        // A retrieval query: retrieved ids beside the relevant ones, and the
        // dataset's id.
        // (A loaded query fills both from the dataset, as the end-to-end
        // tests show.)
        let query = Sample::new("How do refunds work?");
        let mut report = SampleReport::new("kb::refunds".into(), &query);
        report.relevant = vec!["eval:kb:refunds".into()];
        report.dataset_id = Some("support-faq".into());
        report.output = Some(String::new());
        report.retrieved = vec!["eval:kb:shipping".into(), "eval:kb:refunds".into()];
        report.metrics = vec![MetricResult::of(&spec("mrr_at_k", 1.0), Ok(0.5))];
        let text = report.render();
        assert!(
            text.contains(
                "  retrieved: eval:kb:shipping, eval:kb:refunds\n  relevant:  eval:kb:refunds\n"
            ),
            "{text}"
        );
        assert!(text.contains("  dataset:  support-faq\n"), "{text}");
        // An agent error: its line, then what the dataset says of the sample.
        let mut failed = SampleReport::new("qa::hamlet".into(), &{
            let mut s = Sample::new("q");
            s.tags = vec!["books".into()];
            s
        });
        failed.error = Some(SampleError::Timeout { secs: 1.0 });
        let text = failed.render();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.ends_with("\n  tags:     books"), "{text}");
    }
}
