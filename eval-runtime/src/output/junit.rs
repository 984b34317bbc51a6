//! JUnit XML of a results file, for CI systems that show test reports
//! (GitLab, Jenkins, Azure, GitHub actions that read JUnit).
//!
//! The layout is the one those systems read (Jenkins' and Ant's JUnit
//! format): `<testsuites>` with totals, one `<testsuite>` per dataset, one
//! `<testcase>` per sample, named by its test name, `classname` its dataset,
//! `time` the agent's time in seconds. A sample that failed holds a
//! `<failure>`, one that could not be scored an `<error>`: `message` is one
//! line (each metric that failed, with its score, threshold and reason),
//! the text the failure report a person reads (input, expected, actual,
//! one line per failing metric saying why), the output of a failed sample
//! in `<system-out>`. `eval-cli/tests/junit.xsd` describes the layout, and
//! the tests check what the harness and `evals evaluate` write against it. Text is escaped for XML
//! 1.0, and characters XML cannot hold (control characters) are written as
//! `\u{..}`, as everywhere else.

use std::fmt::Write as _;
use std::path::Path;

use super::text::{failure_lines, metric_line};
use super::{DatasetSummary, Results, ResultsError, SampleRecord, Verdict, numbered};
use crate::model::one_line;

/// How much of the input, the expected and the actual answer a failure
/// report shows, in characters.
const SHOWN_CHARS: usize = 300;
/// How long a failure's one-line message may be, in characters.
const MESSAGE_CHARS: usize = 1000;

/// The JUnit XML of `results`.
pub fn junit_xml(results: &Results) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total_time: f64 = results.samples.iter().map(|s| s.latency_ms / 1000.0).sum();
    let errors = results
        .samples
        .iter()
        .filter(|s| s.verdict == Verdict::Error)
        .count();
    let failures = results
        .samples
        .iter()
        .filter(|s| s.verdict != Verdict::Error && !s.counts_as_passed())
        .count();
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\">",
        attr(&results.binary),
        results.samples.len(),
        total_time
    );
    for dataset in &results.datasets {
        suite(&mut out, dataset, results);
    }
    out.push_str("</testsuites>\n");
    out
}

fn suite(out: &mut String, dataset: &DatasetSummary, results: &Results) {
    let samples: Vec<&SampleRecord> = results
        .samples
        .iter()
        .filter(|s| s.dataset == dataset.name)
        .collect();
    let time: f64 = samples.iter().map(|s| s.latency_ms / 1000.0).sum();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{time:.3}\">",
        attr(&dataset.name),
        samples.len(),
        dataset.failed,
        dataset.errors
    );
    for sample in samples {
        case(out, sample);
    }
    out.push_str("  </testsuite>\n");
}

fn case(out: &mut String, s: &SampleRecord) {
    let (file, line) = match s.source.rsplit_once(':') {
        Some((file, line)) if line.parse::<u64>().is_ok() => (file, Some(line)),
        _ => (s.source.as_str(), None),
    };
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\" file=\"{}\"",
        attr(&s.test_name),
        attr(&s.dataset),
        s.latency_ms / 1000.0,
        attr(file)
    );
    if let Some(line) = line {
        let _ = write!(out, " line=\"{line}\"");
    }
    // JUnit has no third state: an inconclusive sample passes or fails as
    // the run's setting counted it, and says it is inconclusive in its
    // `status` and, when it passed, in its output.
    if s.verdict == Verdict::Inconclusive {
        out.push_str(" status=\"inconclusive\"");
    }
    if s.counts_as_passed() {
        if s.verdict == Verdict::Inconclusive {
            let lines = super::text::inconclusive_lines(s);
            let _ = writeln!(
                out,
                ">\n      <system-out>inconclusive ({}): {}</system-out>\n    </testcase>",
                super::text::counted_text(s),
                text(&lines.join("; "))
            );
        } else {
            out.push_str("/>\n");
        }
        return;
    }
    out.push_str(">\n");
    let (element, kind) = match s.verdict {
        Verdict::Error => ("error", "unscored"),
        Verdict::Inconclusive => ("failure", "inconclusive"),
        _ => ("failure", "threshold"),
    };
    let _ = writeln!(
        out,
        "      <{element} message=\"{}\" type=\"{kind}\">{}</{element}>",
        attr(&message(s)),
        text(&details(s))
    );
    if let Some(output) = &s.output {
        let _ = writeln!(out, "      <system-out>{}</system-out>", text(output));
    }
    out.push_str("    </testcase>\n");
}

/// One line: the sample's error, then each metric that failed or could
/// not be scored, with why (`contains 0.000 < 1: <reason>`).
fn message(s: &SampleRecord) -> String {
    let parts: Vec<String> = s
        .error
        .iter()
        .cloned()
        .chain(s.metrics.iter().filter_map(metric_line))
        .collect();
    if parts.is_empty() {
        return "did not pass".into();
    }
    one_line(&parts.join("; "), MESSAGE_CHARS)
}

/// The failure report a person reads: the sample, its input, the expected
/// and the actual answer (cut), one line per metric that failed or could
/// not be scored saying why, then the metrics that passed.
fn details(s: &SampleRecord) -> String {
    let mut text = format!("{} ({}, id {})\n", s.test_name, s.source, s.id);
    if let Some(name) = &s.name {
        let _ = writeln!(text, "name:     {}", one_line(name, SHOWN_CHARS));
    }
    if !s.input.is_empty() {
        let _ = writeln!(
            text,
            "input:    {}",
            one_line(&numbered(&s.input), SHOWN_CHARS)
        );
    }
    if let Some(e) = &s.expected {
        let _ = writeln!(text, "expected: {}", one_line(e, SHOWN_CHARS));
    }
    if let Some(o) = &s.output {
        let _ = writeln!(text, "actual:   {}", one_line(o, SHOWN_CHARS));
    }
    for line in failure_lines(s) {
        let _ = writeln!(text, "- {line}");
    }
    let passed: Vec<String> = s
        .metrics
        .iter()
        .filter(|m| m.passed)
        .map(|m| match m.score {
            Some(v) => format!("{} {v:.3}", m.name),
            None => m.name.clone(),
        })
        .collect();
    if !passed.is_empty() {
        let _ = writeln!(text, "passed: {}", passed.join(", "));
    }
    text
}

/// `s` for an attribute value: escaped, on one line.
fn attr(s: &str) -> String {
    escape(s, true)
}

/// `s` for element text.
fn text(s: &str) -> String {
    escape(s, false)
}

/// `s` as XML, and under the terminal rule (`eval_datasets::terminal`):
/// a CI page or a terminal showing the report never receives a control
/// character (C0, DEL, C1 such as the one-byte CSI U+009B), a bidi control
/// (U+202E) or a line separator (U+2028) from outside; they are shown
/// escaped (`\u{1b}`), as on the terminal. Line breaks and tabs stay
/// (as character references in attributes, where XML would fold them).
fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            // issue37:escape: the terminal rule (C0 with `\r`, DEL, C1, bidi, U+2028/9).
            c if eval_datasets::terminal::needs_escape(c) => {
                eval_datasets::terminal::push_escaped(&mut out, c);
            }
            // Not allowed in XML 1.0 at all: shown escaped, as on the terminal.
            '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

impl Results {
    /// Writes [`junit_xml`] of these results to `path`, atomically.
    pub fn write_junit(&self, path: &Path) -> Result<(), ResultsError> {
        let error = |source| ResultsError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(error)?;
        }
        eval_datasets::files::write_atomically(path, junit_xml(self).as_bytes()).map_err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_record;
    use std::collections::BTreeMap;

    #[test]
    fn escapes_what_xml_cannot_hold() {
        assert_eq!(attr("a<b & \"c\"\nd"), "a&lt;b &amp; &quot;c&quot;&#10;d");
        assert_eq!(text("x\u{1b}[2J\ny"), "x\\u{1b}[2J\ny");
        // C1 (a one-byte CSI), bidi and line separators too, and a lone CR.
        assert_eq!(
            text("a\u{9b}2J\u{202e}b\u{2028}\rc\u{7f}\u{ffff}"),
            "a\\u{9b}2J\\u{202e}b\\u{2028}\\rc\\u{7f}\\u{ffff}"
        );
        assert_eq!(attr("\u{202e}x\ty"), "\\u{202e}x&#9;y");
    }

    #[test]
    fn one_case_per_sample_failures_and_errors_apart() {
        let mut failed = test_record("qa", "qa::b", Verdict::Fail);
        failed.output = Some("it said <nothing>".into());
        failed.input = vec!["What is 2 + 2?".into()];
        failed.expected = Some("five".into());
        failed.metrics[0].reason = Some("it never says \"5\"".into());
        let records = vec![
            test_record("qa", "qa::a", Verdict::Pass),
            failed,
            test_record("qa", "qa::c", Verdict::Error),
        ];
        let results = Results::new("evals", records, &BTreeMap::new());
        let xml = junit_xml(&results);
        assert!(xml.contains(
            "<testsuites name=\"evals\" tests=\"3\" failures=\"1\" errors=\"1\" time=\"0.003\">"
        ));
        assert!(xml.contains("<testsuite name=\"qa\" tests=\"3\" failures=\"1\" errors=\"1\""));
        assert!(xml.contains(
            "<testcase name=\"qa::a\" classname=\"qa\" time=\"0.001\" file=\"f.jsonl\" line=\"1\"/>"
        ));
        assert!(
            xml.contains(
                "<failure message=\"contains 0.000 &lt; 1: it never says &quot;5&quot;\" type=\"threshold\">qa::b (f.jsonl:1, id qa::b)\ninput:    What is 2 + 2?\nexpected: five\nactual:   it said &lt;nothing&gt;\n- contains 0.000 &lt; 1: it never says \"5\"\n</failure>"
            ),
            "{xml}"
        );
        assert!(xml.contains("<system-out>it said &lt;nothing&gt;</system-out>"));
        assert!(
            xml.contains(
                "<error message=\"agent error: down; contains error: no score\" type=\"unscored\">"
            ),
            "{xml}"
        );
    }
}
