//! A run's summary as a person reads it on a terminal ([`summary_text`]),
//! from its results file, and the pieces every report of a results file
//! shares with it (the Markdown summary, JUnit): what a failing metric says
//! in one line, the samples that did not pass (errors first), the latency
//! percentiles of a dataset, the run's verdict in a few words.

use std::fmt::Write as _;

use super::paint::Paint;
use super::results::{MetricRecord, Results, SampleRecord, Verdict};
use super::verdict::RunVerdict;
use crate::model::one_line;
use eval_datasets::terminal::escaped;

/// How many failing samples a summary lists (the results file holds them all).
pub const SHOWN_FAILURES: usize = 20;
/// How much of a reason or an error a summary line shows, in characters.
pub(crate) const REASON_CHARS: usize = 300;

/// One line for a metric that failed or could not be scored, saying why
/// ([`MetricRecord::why`]): `contains 0.000 < 1: <reason>` or
/// `faithfulness error: <error>`; `None` for a metric that passed.
pub(crate) fn metric_line(m: &MetricRecord) -> Option<String> {
    m.why().map(|why| format!("{} {why}", escaped(&m.name)))
}

/// The lines saying why `s` did not pass: its error, then one per metric
/// that failed or could not be scored.
pub(crate) fn failure_lines(s: &SampleRecord) -> Vec<String> {
    s.error
        .iter()
        .map(|e| format!("error: {}", one_line(e, REASON_CHARS)))
        .chain(s.metrics.iter().filter_map(metric_line))
        .collect()
}

/// The input, expected and actual lines of a sample's record, as the
/// attribute's failure report shows them ([`super::report::exchange_lines`]);
/// a conversation's turns numbered `[1] …  [2] …`, as its expected answers are.
pub(crate) fn sample_exchange(s: &SampleRecord) -> Vec<String> {
    super::report::exchange_lines(
        &super::numbered(&s.input),
        s.expected.as_deref(),
        s.output.as_deref().unwrap_or(""),
    )
}

/// One line per metric of `s` whose verdict is inconclusive:
/// `contains 0.800 inconclusive (mean of 5 runs, 95% interval 0.380..0.960)`.
pub(crate) fn inconclusive_lines(s: &SampleRecord) -> Vec<String> {
    s.metrics
        .iter()
        .filter(|m| m.decision() == Some(crate::stats::Decision::Inconclusive))
        .filter_map(|m| {
            let i = m.runs_interval()?;
            Some(format!(
                "{} {:.3} {} {} ({}, {} interval {:.3}..{:.3})",
                escaped(&m.name),
                m.score.unwrap_or(f64::NAN),
                m.op,
                m.threshold,
                format_args!("mean of {} runs", i.runs),
                crate::model::level_text(i.level),
                i.low,
                i.high
            ))
        })
        .collect()
}

/// What an inconclusive sample counted as, in words.
pub(crate) fn counted_text(s: &SampleRecord) -> &'static str {
    if s.counts_as_passed() {
        "counted as passed"
    } else {
        "counted as failed"
    }
}

/// A time in milliseconds for a summary: `850 ms`, `2.35 s`.
pub(crate) fn millis(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// Why the run (or runs) failed, in a few words, or `None` when it passed:
/// `2 of 3 samples did not pass, 1 gate missed`.
pub(crate) fn why_failed(v: &RunVerdict) -> Option<String> {
    if v.passed() {
        return None;
    }
    let mut parts = Vec::new();
    if v.failed_samples > 0 {
        parts.push(format!(
            "{} of {} samples failed",
            v.failed_samples, v.samples
        ));
    }
    if !v.missed_gates.is_empty() {
        parts.push(format!("{} gate(s) missed", v.missed_gates.len()));
    }
    if v.regressions > 0 {
        parts.push(format!("{} regression(s)", v.regressions));
    }
    Some(parts.join(", "))
}

/// A run's verdict in a few words, whether it passed first: `passed`,
/// `FAILED (<why>)`, or `INCOMPLETE (...)` for a run that did not finish
/// (never read as passed). The terminal summary's first line and the HTML
/// report's banner.
pub(crate) fn headline(verdict: &RunVerdict, incomplete: bool) -> (bool, String) {
    match (why_failed(verdict), incomplete) {
        (Some(why), _) => (false, format!("FAILED ({why})")),
        (None, true) => (
            false,
            "INCOMPLETE (nothing failed of what ran; see below)".into(),
        ),
        (None, false) => (true, "passed".into()),
    }
}

/// One tag's share of a dataset's samples: how many carry it, how many of
/// those passed (an inconclusive one as it was counted).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct TagBreakdown {
    pub tag: String,
    pub samples: usize,
    pub passed: usize,
}

/// Most tags a breakdown lists: beyond, tags are labels, not categories.
const MAX_TAGS: usize = 12;

/// Samples counted by tag (a runevals item's `category` is its tag), by
/// tag name: the terminal summary, Markdown and the HTML report show the
/// same breakdown.
/// Counting stops at the first tag past [`MAX_TAGS`]: time and memory stay
/// bounded however many distinct tags a million samples carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct TagCounts {
    tags: Vec<TagBreakdown>,
    too_many: bool,
}

impl TagCounts {
    /// Counts `s` under each of its tags.
    pub(crate) fn add(&mut self, s: &SampleRecord) {
        if self.too_many {
            return;
        }
        let passed = s.counted_as.unwrap_or(s.verdict) == Verdict::Pass;
        for tag in &s.tags {
            let i = match self.tags.iter().position(|t| &t.tag == tag) {
                Some(i) => i,
                None if self.tags.len() == MAX_TAGS => {
                    self.too_many = true;
                    self.tags = Vec::new();
                    return;
                }
                None => {
                    self.tags.push(TagBreakdown {
                        tag: tag.clone(),
                        samples: 0,
                        passed: 0,
                    });
                    self.tags.len() - 1
                }
            };
            self.tags[i].samples += 1;
            self.tags[i].passed += usize::from(passed);
        }
    }

    /// The breakdown; empty when no sample has a tag or the tags are too
    /// many to be categories.
    pub(crate) fn breakdown(mut self) -> Vec<TagBreakdown> {
        self.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
        self.tags
    }
}

/// What a summary shows of a run's samples, gathered one record at a time
/// (from a [`Results`] in memory, or from a results file read as a stream):
/// the first [`SHOWN_FAILURES`] samples that could not be scored, failed or
/// passed inconclusively, how many there were, and per dataset its tags and
/// latencies. Its size is bounded but for the latencies (8 bytes a sample).
#[derive(Debug, Default)]
pub(crate) struct Shown {
    errors: Vec<SampleRecord>,
    failed: Vec<SampleRecord>,
    not_passed: usize,
    doubtful: Vec<SampleRecord>,
    /// Every sample that passed or failed without proof, counted.
    unproven: super::unproven::Unproven,
    datasets: std::collections::BTreeMap<String, (TagCounts, Vec<f64>)>,
}

impl Shown {
    /// Everything `results` holds.
    pub(crate) fn of(results: &Results) -> Shown {
        let mut shown = Shown::default();
        results.samples.iter().for_each(|s| shown.add(s));
        shown
    }

    /// One more sample.
    pub(crate) fn add(&mut self, s: &SampleRecord) {
        let keep = |list: &mut Vec<SampleRecord>| {
            if list.len() < SHOWN_FAILURES {
                list.push(s.clone());
            }
        };
        if s.verdict == Verdict::Error {
            self.not_passed += 1;
            keep(&mut self.errors);
        } else if !s.counts_as_passed() {
            self.not_passed += 1;
            keep(&mut self.failed);
        } else if s.verdict == Verdict::Inconclusive {
            keep(&mut self.doubtful);
        }
        self.unproven.add(s);
        let (tags, latencies) = match self.datasets.get_mut(&s.dataset) {
            Some(d) => d,
            None => self.datasets.entry(s.dataset.clone()).or_default(),
        };
        tags.add(s);
        if let Some(ms) = s.measured(eval_datasets::metric::Measure::LatencyMs) {
            latencies.push(ms);
        }
    }

    /// The samples that did not pass, as many as are shown: those that could
    /// not be scored first, then those that failed (inconclusive ones counted
    /// as failed among them), each in the order they came.
    pub(crate) fn failing(&self) -> impl Iterator<Item = &SampleRecord> {
        self.errors.iter().chain(&self.failed).take(SHOWN_FAILURES)
    }

    /// How many samples did not pass (listed or not).
    pub(crate) fn not_passed(&self) -> usize {
        self.not_passed
    }

    /// Dataset `name`'s samples by tag ([`TagCounts`]) and latency percentiles.
    pub(crate) fn dataset(&self, name: &str) -> (Vec<TagBreakdown>, (Option<f64>, Option<f64>)) {
        let Some((tags, _)) = self.datasets.get(name) else {
            return (Vec::new(), (None, None));
        };
        (tags.clone().breakdown(), self.latency(name))
    }

    /// `(p50, p95)` of the agent's time per run over every sample of dataset
    /// `name`, milliseconds.
    pub(crate) fn latency(&self, name: &str) -> (Option<f64>, Option<f64>) {
        let Some((_, values)) = self.datasets.get(name) else {
            return (None, None);
        };
        // One copy, sorted in place (a million samples: 8 MB, not 16 MB
        // and a merge sort's scratch per percentile).
        let mut sorted = values.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        let at =
            |p: f64| (!sorted.is_empty()).then(|| eval_datasets::metric::percentile(&sorted, p));
        (at(0.5), at(0.95))
    }
}

/// The terminal form of a run's summary: the verdict, per dataset its
/// counts, its metrics (mean, pass rate, samples not scored), latency and
/// usage; the gates; whether the run was complete; then the samples that
/// did not pass (at most [`SHOWN_FAILURES`]), each with one line per
/// failing metric saying why.
pub fn summary_text(results: &Results, paint: Paint) -> String {
    summary_text_of(results, &Shown::of(results), paint, Rest::Unknown)
}

/// Where the samples a summary does not list are, as its last line says.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rest<'a> {
    /// Not known here (a summary of results read back).
    Unknown,
    /// In this results file, which the run wrote.
    File(&'a std::path::Path),
    /// Nowhere: the run wrote no results file.
    NoFile,
}

/// [`summary_text`] of a run whose samples were gathered in `shown`
/// (`results` holds the rest: its samples are not read), saying where the
/// samples not listed are (`rest`).
pub(crate) fn summary_text_of(
    results: &Results,
    shown: &Shown,
    paint: Paint,
    rest: Rest<'_>,
) -> String {
    let verdict = RunVerdict::of(&results.datasets);
    let mut out = String::new();
    // A run that did not finish never reads as passed.
    let headline = match headline(&verdict, results.incompleteness().is_some()) {
        (true, text) => paint.pass(&text),
        (false, text) => paint.fail(&text),
    };
    let _ = writeln!(
        out,
        "{}: {headline}",
        paint.heading(&escaped(&results.binary))
    );
    let count = |n: usize, what: &str, painted: fn(Paint, &str) -> String| {
        let text = format!("{n} {what}");
        if n > 0 { painted(paint, &text) } else { text }
    };
    for d in &results.datasets {
        let _ = writeln!(
            out,
            "{}: {} samples, {}, {}, {}{}{}",
            paint.heading(&escaped(&d.name)),
            d.samples,
            count(d.passed, "passed", Paint::pass),
            count(d.failed, "failed", Paint::fail),
            count(d.errors, "errors", Paint::error),
            if d.inconclusive > 0 {
                format!(
                    ", {}",
                    paint.note(&format!(
                        "{} inconclusive (counted {})",
                        d.inconclusive,
                        counted_word(d.on_inconclusive)
                    ))
                )
            } else {
                String::new()
            },
            if d.ci_gate {
                " (ciGate: samples judged by the gates)"
            } else {
                ""
            }
        );
        if let Some(description) = &d.description {
            let _ = writeln!(out, "  {}", paint.dim(&one_line(description, 160)));
        }
        for m in &d.metrics {
            let mean = m.mean.map_or("-".to_string(), |v| format!("{v:.4}"));
            let rate = m
                .pass_rate
                .map_or("-".to_string(), |v| format!("{:.0}%", v * 100.0));
            let _ = write!(
                out,
                "  {:<20} mean {mean:>7}  pass rate {rate:>4}",
                escaped(&m.name)
            );
            // A sample that could not be scored is never left out unsaid: it
            // is not in the mean, and it did not pass.
            if m.unscored > 0 {
                let _ = write!(
                    out,
                    "{}",
                    paint.error(&format!(
                        "  ({} of {} samples not scored: left out of the mean, counted as not passed)",
                        m.unscored,
                        m.scored + m.unscored
                    ))
                );
            }
            out.push('\n');
        }
        let (tags, latency) = shown.dataset(&d.name);
        if !tags.is_empty() {
            let parts: Vec<String> = tags
                .iter()
                .map(|t| format!("{} {}/{}", escaped(&t.tag), t.passed, t.samples))
                .collect();
            let _ = writeln!(out, "  by tag (category): {} passed", parts.join(", "));
        }
        if let (Some(p50), Some(p95)) = latency {
            let _ = writeln!(out, "  latency p50 {}, p95 {}", millis(p50), millis(p95));
        }
        if !d.usage.is_empty() {
            let _ = writeln!(
                out,
                "  {}",
                paint.dim(&format!("usage: {}", d.usage.line()))
            );
        }
    }
    if results.datasets.len() > 1 && !results.usage.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            paint.dim(&format!("run usage: {}", results.usage.line()))
        );
    }
    for line in verdict.gate_lines_with(paint) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(why) = results.incompleteness() {
        let _ = writeln!(
            out,
            "{}",
            paint.note(&format!(
                "incomplete run: {} (gates of incomplete datasets are not judged)",
                escaped(&why)
            ))
        );
    }
    failing_list(&mut out, shown, paint, rest);
    let doubtful = shown.unproven.passed();
    if doubtful > 0 {
        let _ = writeln!(
            out,
            "\n{}",
            paint.heading(&format!("{}:", super::unproven::heading(doubtful, true)))
        );
        for s in &shown.doubtful {
            let _ = writeln!(
                out,
                "  {} {} ({})",
                paint.note("inconclusive"),
                escaped(&s.test_name),
                escaped(&s.source)
            );
            for line in inconclusive_lines(s) {
                let _ = writeln!(out, "    {}", paint.note(&line));
            }
        }
        if doubtful > SHOWN_FAILURES {
            let _ = writeln!(out, "  ... and {} more", doubtful - SHOWN_FAILURES);
        }
    }
    out
}

/// The samples that did not pass (errors first, at most
/// [`SHOWN_FAILURES`]), each with its input, expected and actual answer and
/// why, then where the rest are (`rest`).
fn failing_list(out: &mut String, shown: &Shown, paint: Paint, rest: Rest<'_>) {
    let total = shown.not_passed;
    if total > 0 {
        let _ = writeln!(
            out,
            "\n{}",
            paint.heading(&format!("{total} sample(s) did not pass:"))
        );
        for s in shown.failing() {
            let word = match s.verdict {
                Verdict::Error => "ERROR",
                Verdict::Inconclusive => "INCONCLUSIVE (counted as failed)",
                _ => "FAILED",
            };
            let _ = write!(
                out,
                "  {} {} ({})",
                paint.verdict(s.verdict, word),
                escaped(&s.test_name),
                escaped(&s.source)
            );
            if let Some(name) = &s.name {
                let _ = write!(out, " \"{}\"", one_line(name, 80));
            }
            out.push('\n');
            if let Some(notes) = &s.notes {
                let _ = writeln!(
                    out,
                    "    {}",
                    paint.dim(&format!("notes: {}", one_line(notes, 160)))
                );
            }
            // What was asked, expected and answered, as the attribute's
            // failure report shows it (a sample the agent failed on says
            // only its error, as there).
            if s.error.is_none() {
                for line in sample_exchange(s) {
                    let _ = writeln!(out, "    {line}");
                }
            }
            for line in failure_lines(s) {
                let _ = writeln!(out, "    {}", paint.verdict(s.verdict, &line));
            }
        }
        if total > SHOWN_FAILURES {
            let more = total - SHOWN_FAILURES;
            let _ = match rest {
                Rest::File(path) => writeln!(
                    out,
                    "  ... and {more} more (every sample is in {})",
                    escaped(&path.display().to_string())
                ),
                Rest::NoFile => writeln!(
                    out,
                    "  ... and {more} more, not listed: no results file was written (`--output FILE` keeps every sample)"
                ),
                Rest::Unknown => writeln!(out, "  ... and {more} more, not listed here"),
            };
        }
    }
}

/// `as passed` / `as failed` / `by the point estimate` for a setting.
pub(crate) fn counted_word(on: crate::stats::OnInconclusive) -> &'static str {
    match on {
        crate::stats::OnInconclusive::Estimate => "by the point estimate",
        crate::stats::OnInconclusive::Fail => "as failed",
        crate::stats::OnInconclusive::Pass => "as passed",
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::output::results::{DatasetTerms, Gate};
    use crate::output::test_record as record;

    #[test]
    fn a_failing_metric_says_why_in_one_line() {
        let mut s = record("qa", "qa::b", Verdict::Fail);
        s.metrics[0].reason = Some("the answer\nnever says \"Paris\"".into());
        assert_eq!(
            failure_lines(&s),
            ["contains 0.000 < 1: the answer never says \"Paris\""]
        );
        let mut e = record("qa", "qa::c", Verdict::Error);
        e.metrics[0].error = Some("judge down: HTTP 503".into());
        assert_eq!(
            failure_lines(&e),
            [
                "error: agent error: down",
                "contains error: judge down: HTTP 503"
            ]
        );
    }

    #[test]
    fn the_summary_lists_errors_first_and_caps_the_list() {
        let mut records: Vec<SampleRecord> = (0..25)
            .map(|k| record("qa", &format!("qa::f{k:02}"), Verdict::Fail))
            .collect();
        records.push(record("qa", "qa::z", Verdict::Error));
        records.push(record("qa", "qa::p", Verdict::Pass));
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(
                Some(27),
                vec![Gate::new("contains", eval_datasets::Op::AtLeast, 0.01)],
                false,
            ),
        )]);
        let results = Results::new("evals", records, &terms);
        let text = summary_text(&results, Paint::plain());
        // On a terminal the same text is painted: the verdicts in their colours.
        let painted = summary_text(&results, Paint::always());
        assert!(
            painted.contains("\u{1b}[35mERROR\u{1b}[0m qa::z (f.jsonl:1)\n"),
            "{painted:?}"
        );
        assert!(
            text.starts_with("evals: FAILED (26 of 27 samples failed, 1 gate(s) missed)\n"),
            "{text}"
        );
        assert!(text.contains("qa: 27 samples, 1 passed, 25 failed, 1 errors\n"));
        assert!(text.contains("  latency p50 1 ms, p95 1 ms\n"), "{text}");
        assert!(
            text.contains(
                "gate qa FAILED: mean(contains) >= 0.01 missed: 1 of 27 samples not scored"
            ),
            "{text}"
        );
        let listed = text.split("did not pass:\n").nth(1).unwrap();
        assert!(
            listed.starts_with("  ERROR qa::z (f.jsonl:1)\n    error: agent error: down\n"),
            "{listed}"
        );
        assert_eq!(listed.matches("  FAILED qa::f").count(), 19);
        assert!(
            listed.ends_with("  ... and 6 more, not listed here\n"),
            "{listed}"
        );
        // A run's own summary names the file it wrote, or says there is none.
        let shown = Shown::of(&results);
        let written = std::path::Path::new("out/r.json");
        let text = summary_text_of(&results, &shown, Paint::plain(), Rest::File(written));
        assert!(
            text.ends_with("  ... and 6 more (every sample is in out/r.json)\n"),
            "{text}"
        );
        let text = summary_text_of(&results, &shown, Paint::plain(), Rest::NoFile);
        assert!(
            text.ends_with("  ... and 6 more, not listed: no results file was written (`--output FILE` keeps every sample)\n"),
            "{text}"
        );
        assert!(!text.contains("results file)"), "{text}");
    }

    #[test]
    fn a_failed_sample_shows_expected_and_actual_as_the_attribute_does() {
        let mut r = record("qa", "qa::what_is_rag", Verdict::Fail);
        r.input = vec!["What is RAG?".into()];
        r.expected = Some("Retrieval Augmented Generation".into());
        // A long answer is cut as the attribute cuts it; a control
        // character in it reaches the terminal escaped.
        r.output = Some(format!("I don't know.\u{1b}[2J {}", "x".repeat(400)));
        let mut e = record("qa", "qa::down", Verdict::Error);
        e.input = vec!["Ping?".into()];
        let results = Results::new("evals", vec![r.clone(), e], &BTreeMap::new());
        let text = summary_text(&results, Paint::plain());
        let listed = text.split("did not pass:\n").nth(1).unwrap();
        assert!(
            listed.contains(
                "  FAILED qa::what_is_rag (f.jsonl:1)\n    input:    What is RAG?\n    expected: Retrieval Augmented Generation\n    actual:   I don't know.\\u{1b}[2J xxx"
            ),
            "{listed}"
        );
        assert!(
            listed.contains("x… (118 more chars)\n    contains 0.000 < 1\n"),
            "{listed}"
        );
        // The same lines as the attribute's failure report.
        let sample = eval_datasets::Sample::new("What is RAG?")
            .with_expected("Retrieval Augmented Generation");
        let mut report = crate::model::SampleReport::new("qa::what_is_rag".into(), &sample);
        report.output = r.output.clone();
        for line in sample_exchange(&r) {
            assert!(report.render().contains(&format!("\n  {line}\n")), "{line}");
        }
        // An agent error says only its error, as the attribute's does.
        assert!(
            listed.contains("  ERROR qa::down (f.jsonl:1)\n    error: agent error: down\n"),
            "{listed}"
        );
        assert!(!listed.contains("Ping?"), "{listed}");
    }

    #[test]
    fn names_from_files_are_shown_escaped() {
        // A results file read back may have been edited: its binary, dataset,
        // metric, tag and test names reach the terminal escaped.
        let evil = "x\u{1b}]0;title\u{7}\u{1b}[2J\u{202e}y";
        let mut r = record(evil, &format!("{evil}::s"), Verdict::Fail);
        r.tags = vec![evil.into()];
        r.metrics[0].name = evil.into();
        r.source = evil.into();
        let terms = BTreeMap::from([(
            evil.to_string(),
            DatasetTerms::new(
                Some(2),
                vec![Gate::new(evil, eval_datasets::Op::AtLeast, 0.5)],
                false,
            ),
        )]);
        let results = Results::new(evil, vec![r], &terms);
        let plain = summary_text(&results, Paint::plain());
        let acting: Vec<char> = plain
            .chars()
            .filter(|c| eval_datasets::terminal::needs_escape(*c) && *c != '\n')
            .collect();
        assert!(acting.is_empty(), "{acting:?} in {plain:?}");
        assert!(plain.contains("x\\u{1b}]0;title\\u{7}"), "{plain}");
        assert!(plain.contains("gate x\\u{1b}"), "{plain}");
        // Painted, only our own colour codes act on the terminal.
        let painted = summary_text(&results, Paint::always());
        for bad in ["\u{1b}]0;", "\u{1b}[2J", "\u{7}", "\u{202e}"] {
            assert!(!painted.contains(bad), "{bad:?} in {painted:?}");
        }
    }

    #[test]
    fn tags_are_counted_up_to_twelve_then_not_at_all() {
        let mut counts = TagCounts::default();
        for i in 0..MAX_TAGS {
            let mut r = crate::output::test_record("d", &format!("s{i}"), Verdict::Pass);
            r.tags = vec![format!("t{i:02}"), "all".into()];
            counts.add(&r);
        }
        // 12 distinct tags and "all": one too many to be categories.
        assert!(counts.breakdown().is_empty());
        let mut few = TagCounts::default();
        for (i, v) in [Verdict::Pass, Verdict::Fail, Verdict::Pass]
            .into_iter()
            .enumerate()
        {
            let mut r = crate::output::test_record("d", &format!("s{i}"), v);
            r.tags = vec![if i == 1 { "b".into() } else { "a".into() }];
            few.add(&r);
        }
        let got: Vec<(String, usize, usize)> = few
            .breakdown()
            .into_iter()
            .map(|t| (t.tag, t.samples, t.passed))
            .collect();
        assert_eq!(got, [("a".into(), 2, 2), ("b".into(), 1, 0)]);
    }
}
