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
use super::workspace::FilePaths;
use super::{DatasetSummary, Results, ResultsError, SampleRecord, Verdict, numbered};
use crate::model::one_line;

/// How much of the input, the expected and the actual answer a failure
/// report shows, in characters.
const SHOWN_CHARS: usize = 300;
/// How long a failure's one-line message may be, in characters.
const MESSAGE_CHARS: usize = 1000;

/// The JUnit XML of `results`.
pub fn junit_xml(results: &Results) -> String {
    let plan = JunitPlan::of(&results.samples);
    let mut out = String::new();
    head(&mut out, &results.binary, &plan);
    for dataset in &results.datasets {
        suite_head(&mut out, dataset, &plan);
        for sample in results.samples.iter().filter(|s| s.dataset == dataset.name) {
            case(&mut out, sample, None);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// What JUnit's totals need of a run's records, tallied in a first pass
/// over them (the file is then written one record at a time:
/// [`write_junit_along`]).
#[derive(Default, Debug)]
pub(crate) struct JunitPlan {
    tests: usize,
    failures: usize,
    errors: usize,
    time: f64,
    /// Per dataset: its samples and their time.
    datasets: std::collections::BTreeMap<String, (usize, f64)>,
}

impl JunitPlan {
    /// One more record.
    pub(crate) fn add(&mut self, s: &SampleRecord) {
        let time = s.latency_ms / 1000.0;
        self.tests += 1;
        self.time += time;
        if s.verdict == Verdict::Error {
            self.errors += 1;
        } else if !s.counts_as_passed() {
            self.failures += 1;
        }
        let d = match self.datasets.get_mut(&s.dataset) {
            Some(d) => d,
            None => self.datasets.entry(s.dataset.clone()).or_default(),
        };
        d.0 += 1;
        d.1 += time;
    }

    fn of(samples: &[SampleRecord]) -> JunitPlan {
        let mut plan = JunitPlan::default();
        samples.iter().for_each(|s| plan.add(s));
        plan
    }
}

/// The XML declaration and `<testsuites>` with the run's totals.
fn head(out: &mut String, binary: &str, plan: &JunitPlan) {
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3}\">",
        attr(binary),
        plan.tests,
        plan.failures,
        plan.errors,
        plan.time
    );
}

/// A dataset's `<testsuite>` opening.
fn suite_head(out: &mut String, dataset: &DatasetSummary, plan: &JunitPlan) {
    let (tests, time) = plan
        .datasets
        .get(&dataset.name)
        .copied()
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{time:.3}\">",
        attr(&dataset.name),
        dataset.failed,
        dataset.errors
    );
}

/// Writes the JUnit XML of one run to `path` (atomically) as `with` hands
/// it the run's records one by one, in the results file's order (by
/// dataset): one record's XML is held at a time. `datasets`: the run's
/// summaries; `plan`: a first pass over the same records; `base`: where
/// the samples' relative file paths start, when known (each `file=` is then
/// relative to its workspace root, [`FilePaths`]). An error of
/// `with` is returned as is (and no file is written).
pub(crate) fn write_junit_along(
    path: &Path,
    binary: &str,
    (datasets, plan): (&[DatasetSummary], &JunitPlan),
    base: Option<&Path>,
    with: impl FnOnce(&mut JunitWriter<'_>) -> Result<(), ResultsError>,
) -> Result<(), ResultsError> {
    let error = |source| ResultsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    let mut failed = None;
    let written = eval_datasets::files::write_atomically_with(path, |out| {
        let mut buf = String::new();
        head(&mut buf, binary, plan);
        out.write_all(buf.as_bytes())?;
        let mut writer = JunitWriter {
            out,
            datasets,
            plan,
            paths: base.map(FilePaths::under),
            next: 0,
            buf,
            error: None,
        };
        if let Err(e) = with(&mut writer) {
            failed = Some(e);
            return Err(std::io::Error::other(
                "the run's records could not be written",
            ));
        }
        writer.finish()
    });
    match failed {
        Some(e) => Err(e),
        None => written.map_err(error),
    }
}

/// A JUnit file being written (see [`write_junit_along`]).
pub(crate) struct JunitWriter<'a> {
    out: &'a mut dyn std::io::Write,
    datasets: &'a [DatasetSummary],
    plan: &'a JunitPlan,
    /// How sources' file paths are written (`None`: as they are).
    paths: Option<FilePaths>,
    /// The dataset whose suite opens next (the one before it is open).
    next: usize,
    buf: String,
    error: Option<std::io::Error>,
}

impl JunitWriter<'_> {
    /// One more record, after those of the datasets before its own. A
    /// record of no dataset of the run is not written (as [`junit_xml`]).
    pub(crate) fn sample(&mut self, s: &SampleRecord) {
        if self.error.is_some() {
            return;
        }
        self.buf.clear();
        let open = self.next.checked_sub(1).map(|i| &self.datasets[i]);
        if open.is_none_or(|d| d.name != s.dataset) {
            let Some(at) = self.datasets[self.next..]
                .iter()
                .position(|d| d.name == s.dataset)
            else {
                return;
            };
            for d in &self.datasets[self.next..self.next + at + 1] {
                if self.next > 0 {
                    self.buf.push_str("  </testsuite>\n");
                }
                suite_head(&mut self.buf, d, self.plan);
                self.next += 1;
            }
        }
        case(&mut self.buf, s, self.paths.as_ref());
        if let Err(e) = self.out.write_all(self.buf.as_bytes()) {
            self.error = Some(e);
        }
    }

    /// Closes the open suite, writes the datasets without records left, and
    /// the end.
    fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.buf.clear();
        for d in &self.datasets[self.next..] {
            if self.next > 0 {
                self.buf.push_str("  </testsuite>\n");
            }
            suite_head(&mut self.buf, d, self.plan);
            self.next += 1;
        }
        if self.next > 0 {
            self.buf.push_str("  </testsuite>\n");
        }
        self.buf.push_str("</testsuites>\n");
        self.out.write_all(self.buf.as_bytes())?;
        self.out.flush()
    }
}

fn case(out: &mut String, s: &SampleRecord, paths: Option<&FilePaths>) {
    let (file, line) = match s.source.rsplit_once(':') {
        Some((file, line)) if line.parse::<u64>().is_ok() => (file, Some(line)),
        _ => (s.source.as_str(), None),
    };
    let file = paths.map_or(std::borrow::Cow::Borrowed(file), |p| p.file(file));
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\" file=\"{}\"",
        attr(&s.test_name),
        attr(&s.dataset),
        s.latency_ms / 1000.0,
        attr(&file)
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
    /// Writes [`junit_xml`] of these results to `path`, atomically, one
    /// sample's XML at a time.
    #[doc(hidden)]
    pub fn write_junit(&self, path: &Path) -> Result<(), ResultsError> {
        self.write_junit_from(path, None)
    }

    /// [`write_junit`](Self::write_junit), each `file=` relative to the
    /// workspace root of `base` (where the samples' relative paths start).
    pub(crate) fn write_junit_from(
        &self,
        path: &Path,
        base: Option<&Path>,
    ) -> Result<(), ResultsError> {
        let plan = JunitPlan::of(&self.samples);
        let datasets = (&self.datasets[..], &plan);
        write_junit_along(path, &self.binary, datasets, base, |junit| {
            // Grouped by dataset, in the summaries' order, as `junit_xml`.
            for d in &self.datasets {
                for s in self.samples.iter().filter(|s| s.dataset == d.name) {
                    junit.sample(s);
                }
            }
            Ok(())
        })
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

    #[test]
    fn written_one_record_at_a_time_it_is_the_same_document() {
        // Two datasets, the second with no sample; records in the results
        // file's order (by dataset), as the engine hands them.
        let mut records = vec![
            test_record("b", "b::x", Verdict::Fail),
            test_record("a", "a::y", Verdict::Pass),
            test_record("a", "a::x", Verdict::Error),
        ];
        records.sort_by(|x, y| (&x.dataset, &x.test_name).cmp(&(&y.dataset, &y.test_name)));
        let mut results = Results::new("evals", records, &BTreeMap::new());
        let mut empty = results.datasets[0].clone();
        empty.name = "c".into();
        results.datasets.push(empty);
        let dir = std::env::temp_dir().join(format!("eval-junit-along-{}", std::process::id()));
        let path = dir.join("j.xml");
        let plan = JunitPlan::of(&results.samples);
        write_junit_along(&path, "evals", (&results.datasets, &plan), None, |junit| {
            results.samples.iter().for_each(|s| junit.sample(s));
            Ok(())
        })
        .unwrap();
        let streamed = std::fs::read_to_string(&path).unwrap();
        assert_eq!(streamed, junit_xml(&results));
        assert!(
            streamed.contains("<testsuite name=\"c\" tests=\"0\""),
            "{streamed}"
        );
        results.write_junit(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), streamed);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn file_paths_are_relative_to_the_workspace_root() {
        // A member crate `crates/app` of a workspace: its dataset path
        // `evals/qa.jsonl` is `crates/app/evals/qa.jsonl` for a CI
        // annotator, which resolves paths from the repository's root.
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/app\"]\n",
        )
        .unwrap();
        let app = root.path().join("crates/app");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::write(app.join("Cargo.toml"), "[package]\nname = \"app\"\n").unwrap();
        let mut record = test_record("qa", "qa::a", Verdict::Fail);
        record.source = "evals/qa.jsonl:3".into();
        let results = Results::new("evals", vec![record], &BTreeMap::new());
        let path = root.path().join("j.xml");
        results.write_junit_from(&path, Some(&app)).unwrap();
        let xml = std::fs::read_to_string(&path).unwrap();
        assert!(
            xml.contains("file=\"crates/app/evals/qa.jsonl\" line=\"3\""),
            "{xml}"
        );
        // Without a base (a results file read back), as the file says.
        results.write_junit(&path).unwrap();
        let xml = std::fs::read_to_string(&path).unwrap();
        assert!(xml.contains("file=\"evals/qa.jsonl\" line=\"3\""), "{xml}");
    }
}
