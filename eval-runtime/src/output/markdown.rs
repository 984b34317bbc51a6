//! GitHub-flavoured Markdown of results files, for CI: a run's summary
//! ([`summary_markdown`], what `$GITHUB_STEP_SUMMARY` receives). The
//! comparison of two runs (`diff_markdown`, a pull-request comment) is
//! [`diff`](super::diff)'s, with these escaping rules.
//!
//! Everything taken from a results file (names, reasons, errors) is
//! escaped: on one line, Markdown's punctuation backslash-escaped (so a
//! `*`, a `|`, a `$` or a `<tag>` in an answer stays text and cannot break a
//! table or start math), control characters shown as `\u{..}`, long texts
//! cut. Lists are capped ([`SHOWN_FAILURES`]) and say how
//! many more there are: GitHub limits a step summary to 1 MiB and a comment
//! to 65,536 characters.

use std::fmt::Write as _;
use std::path::Path;

use super::diff::BaselineOutcome;
use super::md::{code, inline, mean, percent};
use super::results::{
    DatasetSummary, GateResult, MetricSummary, Results, ResultsError, UsageTotals, Verdict,
};
use super::text::{SHOWN_FAILURES, Shown, failure_lines, millis, why_failed};
use super::verdict::RunVerdict;

/// How much of the expected and the actual answer a failing sample shows.
const ANSWER_CHARS: usize = 160;

fn tokens(u: &UsageTotals) -> u64 {
    [u.agent, u.judge, u.embeddings]
        .iter()
        .map(|u| u.prompt_tokens.saturating_add(u.completion_tokens))
        .fold(0, u64::saturating_add)
}

fn cost(u: &UsageTotals) -> String {
    // From tokens counted here because no usage was reported: an estimate.
    let about = if [u.agent, u.judge, u.embeddings]
        .iter()
        .any(|u| u.estimated_tokens > 0)
    {
        "~"
    } else {
        ""
    };
    match (u.cost_usd, u.cost_unknown) {
        (Some(c), 0) => format!("{about}${}", crate::model::usd(c)),
        (Some(c), n) => format!("{about}${} + unknown ({n})", crate::model::usd(c)),
        (None, n) if n > 0 => format!("unknown ({n})"),
        _ => "—".into(),
    }
}

/// A run's verdict over several results files.
fn combined(runs: &[(&Results, &Shown)]) -> RunVerdict {
    let mut all = RunVerdict::default();
    for (r, _) in runs {
        let v = RunVerdict::of(&r.datasets);
        all.failed_samples += v.failed_samples;
        all.samples += v.samples;
        all.unscored += v.unscored;
        all.inconclusive_samples += v.inconclusive_samples;
        all.missed_gates.extend(v.missed_gates);
        all.unjudged_gates.extend(v.unjudged_gates);
        all.met_gates.extend(v.met_gates);
        all.unenforced_gates.extend(v.unenforced_gates);
    }
    all
}

/// The verdict cell of a gate: met, missed (saying when samples that could
/// not be scored are why), or not judged.
fn gate_verdict(g: &GateResult) -> String {
    if !g.judged {
        let (ran, planned) = g.ran.unwrap_or((0, 0));
        return format!("⏸️ not judged: {ran} of {planned} samples ran");
    }
    let doubt = if g.decision == Some(crate::stats::Decision::Inconclusive) {
        " (inconclusive: its interval straddles the threshold)"
    } else {
        ""
    };
    if g.passed {
        return format!("✅ met{doubt}");
    }
    if !g.gate.enforced {
        return format!("⚠️ missed, not enforced (ciGate is false){doubt}");
    }
    let value_meets = g
        .margin
        .is_some_and(|m| g.gate.passes(g.gate.threshold + m));
    match (g.margin, g.unscored) {
        (None, _) => "❌ missed: no sample was scored".into(),
        (Some(_), 0) => format!("❌ missed{doubt}"),
        (Some(_), n) => format!(
            "❌ missed: {n} sample(s) could not be scored{}",
            if value_meets {
                " (the value alone meets it)"
            } else {
                ""
            }
        ),
    }
}

fn gate_row(out: &mut String, g: &GateResult) {
    let end = |x: f64| {
        if x.is_finite() {
            format!("{x:.4}")
        } else {
            "∞".to_string()
        }
    };
    let interval = g.interval.map_or("—".to_string(), |i| {
        format!("{}–{}", end(i.low), end(i.high))
    });
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        code(&format!("{}({})", g.gate.stat, g.gate.metric), true),
        mean(g.margin.map(|m| g.gate.threshold + m)),
        interval,
        inline(&g.gate.op, 4),
        g.gate.threshold,
        gate_verdict(g),
        g.margin.map_or("—".to_string(), |m| format!("{m:+.4}")),
        g.unscored
    );
}

fn dataset_section(out: &mut String, shown: &Shown, d: &DatasetSummary) {
    let _ = writeln!(out, "#### Dataset {}\n", code(&d.name, false));
    if let Some(description) = &d.description {
        let _ = writeln!(out, "{}\n", inline(description, 400));
    }
    if !d.complete {
        let _ = writeln!(
            out,
            "> ⚠️ Incomplete: {} of {} samples ran; its gates are not judged.\n",
            d.samples,
            d.planned.map_or("?".to_string(), |p| p.to_string())
        );
    }
    if d.ci_gate {
        out.push_str("ciGate: samples are judged by the gates on the means.\n\n");
    }
    if !d.metrics.is_empty() {
        out.push_str("| Metric | Mean | Pass rate | Unscored |\n|---|--:|--:|--:|\n");
        for m in &d.metrics {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                code(&m.name, true),
                mean(m.mean),
                percent(m.pass_rate),
                unscored_cell(m)
            );
        }
        out.push('\n');
    }
    let gates: Vec<&GateResult> = d.metrics.iter().flat_map(MetricSummary::gates).collect();
    if !gates.is_empty() {
        out.push_str(
            "| Gate | Value | 95% interval | Op | Threshold | Verdict | Margin | Unscored samples |\n|---|--:|--:|:-:|--:|---|--:|--:|\n",
        );
        for g in gates {
            gate_row(out, g);
        }
        out.push('\n');
    }
    let (tags, (p50, p95)) = shown.dataset(&d.name);
    if !tags.is_empty() {
        out.push_str("| Tag (category) | Samples | Passed |\n|---|--:|--:|\n");
        for t in &tags {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                code(&t.tag, true),
                t.samples,
                t.passed
            );
        }
        out.push('\n');
    }
    let mut facts = Vec::new();
    if let (Some(p50), Some(p95)) = (p50, p95) {
        facts.push(format!("latency p50 {}, p95 {}", millis(p50), millis(p95)));
    }
    if !d.usage.is_empty() {
        facts.push(inline(&d.usage.line(), 400));
    }
    if !facts.is_empty() {
        let _ = writeln!(out, "{}\n", facts.join(" · "));
    }
}

fn unscored_cell(m: &MetricSummary) -> String {
    if m.unscored == 0 {
        "0".into()
    } else {
        format!("**{} of {}**", m.unscored, m.scored + m.unscored)
    }
}

fn run_section(out: &mut String, results: &Results, shown: &Shown, heading: bool) {
    if heading {
        let _ = writeln!(out, "### {}\n", code(&results.binary, false));
    }
    match results.incompleteness() {
        None => {
            let _ = writeln!(
                out,
                "{}: complete run, every planned sample was evaluated.\n",
                code(&results.binary, false)
            );
        }
        Some(why) => {
            let _ = writeln!(
                out,
                "> ⚠️ **Incomplete run** of {}: {}. Gates of incomplete datasets are not judged.\n",
                code(&results.binary, false),
                inline(&why, 1000)
            );
        }
    }
    out.push_str(
        "| Dataset | Samples | Passed | Failed | Inconclusive | Errors (not scored) | Latency p50 | p95 | Tokens | Cost |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for d in &results.datasets {
        let (p50, p95) = shown.latency(&d.name);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            code(&d.name, true),
            d.samples,
            d.passed,
            d.failed,
            if d.inconclusive > 0 {
                format!(
                    "{} (counted {})",
                    d.inconclusive,
                    super::text::counted_word(d.on_inconclusive)
                )
            } else {
                "0".into()
            },
            d.errors,
            p50.map_or("—".into(), millis),
            p95.map_or("—".into(), millis),
            tokens(&d.usage),
            inline(&cost(&d.usage), 80)
        );
    }
    out.push('\n');
    for d in &results.datasets {
        dataset_section(out, shown, d);
    }
    let total = shown.not_passed();
    if total == 0 {
        return;
    }
    let listed = total.min(SHOWN_FAILURES);
    let _ = writeln!(
        out,
        "#### Samples that did not pass ({})\n",
        if listed < total {
            format!("first {listed} of {total}")
        } else {
            total.to_string()
        }
    );
    for s in shown.failing() {
        let (mark, word) = match s.verdict {
            Verdict::Error => ("⚠️", "error"),
            Verdict::Inconclusive => ("❔", "inconclusive, counted as failed"),
            _ => ("❌", "failed"),
        };
        let _ = writeln!(
            out,
            "- {mark} **{}** · {} · {word}",
            code(&s.test_name, false),
            code(&s.source, false)
        );
        if let Some(notes) = &s.notes {
            let _ = writeln!(out, "  - notes: {}", inline(notes, 400));
        }
        for line in failure_lines(s) {
            let _ = writeln!(out, "  - {}", inline(&line, 1000));
        }
        if s.verdict != Verdict::Error && (s.expected.is_some() || s.output.is_some()) {
            let shown =
                |t: Option<&String>| t.map_or("—".to_string(), |t| inline(t, ANSWER_CHARS));
            let _ = writeln!(
                out,
                "  - expected: {} · actual: {}",
                shown(s.expected.as_ref()),
                shown(s.output.as_ref())
            );
        }
    }
    if total > listed {
        let _ = writeln!(out, "\n…and {} more, not listed here.", total - listed);
    }
    out.push('\n');
}

/// The summary of one or more results files (several: the runs of one CI
/// job), as GitHub-flavoured Markdown: the overall verdict, then per run
/// whether it was complete, per dataset its counts, latency p50/p95,
/// tokens and cost, its metrics (mean, pass rate, samples not scored) and
/// gates (statistic, value, operator, threshold, verdict, margin, samples
/// not scored: a gate missed because samples could not be scored says so),
/// then the samples that did not pass (at most [`SHOWN_FAILURES`] per run),
/// each with one line per failing or unscored metric saying why.
pub fn summary_markdown(runs: &[Results]) -> String {
    summary_with_baseline(runs, None)
}

/// [`summary_markdown`] of a run compared with its baseline: the
/// regressions count in the verdict, and the comparison follows.
pub(crate) fn summary_with_baseline(
    runs: &[Results],
    baseline: Option<(&Path, &BaselineOutcome)>,
) -> String {
    let shown: Vec<Shown> = runs.iter().map(Shown::of).collect();
    let runs: Vec<(&Results, &Shown)> = runs.iter().zip(&shown).collect();
    summary_of(&runs, baseline)
}

/// [`summary_with_baseline`] of runs given as their header (the samples
/// need not be there) and what a summary shows of their samples, gathered
/// as they were written: the end of a run streams, the summary follows.
fn summary_of(runs: &[(&Results, &Shown)], baseline: Option<(&Path, &BaselineOutcome)>) -> String {
    let mut verdict = combined(runs);
    verdict.regressions = baseline.map_or(0, |(_, b)| b.regressions());
    let mut out = match why_failed(&verdict) {
        None => format!(
            "## ✅ Evals passed: {} sample(s), {} gate(s) met\n\n",
            verdict.samples,
            verdict.met_gates.len()
        ),
        Some(why) => format!("## ❌ Evals failed: {why}\n\n"),
    };
    if !verdict.unjudged_gates.is_empty() {
        let _ = writeln!(
            out,
            "{} gate(s) not judged: only part of their dataset ran.\n",
            verdict.unjudged_gates.len()
        );
    }
    if !verdict.unenforced_gates.is_empty() {
        let _ = writeln!(
            out,
            "⚠️ {} threshold(s) missed, not enforced (ciGate is false).\n",
            verdict.unenforced_gates.len()
        );
    }
    if let Some((path, outcome)) = baseline {
        baseline_section(&mut out, path, outcome);
    }
    for (r, shown) in runs {
        run_section(&mut out, r, shown, runs.len() > 1);
    }
    out
}

/// The baseline's part of a run's summary.
fn baseline_section(out: &mut String, path: &Path, outcome: &BaselineOutcome) {
    out.push_str(&super::diff::baseline_markdown(path, outcome));
}

/// Appends `markdown` to the file at `path` (GitHub Actions'
/// `$GITHUB_STEP_SUMMARY`, which the runner collects at the end of the
/// step), creating it; appended, not replaced, as that file is meant to be.
pub fn append_step_summary(path: &Path, markdown: &str) -> Result<(), ResultsError> {
    let error = |source| ResultsError::Write {
        path: path.to_path_buf(),
        source,
    };
    // One write: several steps' summaries never interleave mid-text.
    let mut text = markdown.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push('\n');
    eval_datasets::files::append(path, text.as_bytes()).map_err(error)
}

/// What a run does with its summary on GitHub Actions, once, for every
/// front end that ends with one whole run (the harness outside nextest,
/// `evals evaluate`): appends its Markdown to `$GITHUB_STEP_SUMMARY` when
/// that is set and `EVAL_STEP_SUMMARY` is not off. A file that cannot be
/// written is a warning, never the run's failure.
pub(crate) fn auto_step_summary(
    config: &crate::Config,
    results: &Results,
    baseline: Option<(&Path, &BaselineOutcome)>,
) {
    let Some(path) = config
        .step_summary
        .as_ref()
        .filter(|_| config.step_summary_auto)
    else {
        return;
    };
    let markdown = summary_with_baseline(std::slice::from_ref(results), baseline);
    if let Err(e) = append_step_summary(path, &markdown) {
        crate::notice::warn(&e.to_string());
    }
}

/// [`auto_step_summary`] of a run that was streamed: `header` is its
/// results without their samples, `shown` what a summary shows of them.
pub(crate) fn auto_step_summary_streamed(config: &crate::Config, header: &Results, shown: &Shown) {
    let Some(path) = config
        .step_summary
        .as_ref()
        .filter(|_| config.step_summary_auto)
    else {
        return;
    };
    let markdown = summary_of(&[(header, shown)], None);
    if let Err(e) = append_step_summary(path, &markdown) {
        crate::notice::warn(&e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::output::results::{DatasetTerms, Gate};
    use crate::output::test_record as record;

    #[test]
    fn text_from_a_results_file_cannot_break_the_markdown() {
        assert_eq!(
            inline("a | b\n`c` *d* $x$ <b>&amp;", 100),
            "a \\| b \\`c\\` \\*d\\* \\$x\\$ \\<b\\>\\&amp;"
        );
        assert_eq!(inline("# title", 100), "\\# title");
        assert_eq!(inline("- item", 100), "\\- item");
        assert_eq!(inline("12. Step", 100), "12\\. Step");
        assert_eq!(inline("x\u{1b}[2J", 100), "x\\\\u{1b}\\[2J");
        assert_eq!(code("qa::a|b", true), "`qa::a\\|b`");
        assert_eq!(code("qa::a|b", false), "`qa::a|b`");
        assert_eq!(code("say `hi`", false), "`` say `hi` ``");
        assert_eq!(code("``", true), "``` `` ```");
    }

    fn gated(records: Vec<crate::output::SampleRecord>, threshold: f64) -> Results {
        let n = records.len();
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(
                Some(n),
                vec![Gate::new("contains", eval_datasets::Op::AtLeast, threshold)],
                false,
            ),
        )]);
        Results::new("evals", records, &terms)
    }

    #[test]
    fn a_gate_missed_for_unscored_samples_says_so() {
        // The issue's case: mean 0.3333 over the samples scored, gate 0.3,
        // missed because a sample could not be scored.
        let mut failed = record("qa", "qa::b", Verdict::Fail);
        failed.metrics[0].reason = Some("never | says `4`".into());
        failed.output = Some("*4*".into());
        let results = gated(
            vec![
                record("qa", "qa::a", Verdict::Pass),
                failed,
                record("qa", "qa::c", Verdict::Fail),
                record("qa", "qa::d", Verdict::Error),
            ],
            0.3,
        );
        let md = summary_markdown(std::slice::from_ref(&results));
        assert!(
            md.starts_with("## ❌ Evals failed: 3 of 4 samples failed, 1 gate(s) missed\n"),
            "{md}"
        );
        assert!(md.contains("`evals`: complete run, every planned sample was evaluated."));
        assert!(
            md.contains("| `qa` | 4 | 1 | 2 | 0 | 1 | 1 ms | 1 ms | 0 | — |"),
            "{md}"
        );
        assert!(
            md.contains("| `contains` | 0.3333 | 25.0% | **1 of 4** |"),
            "{md}"
        );
        assert!(
            md.contains("| `mean(contains)` | 0.3333 | 0.0084–0.9057 | \\>= | 0.3 | ❌ missed: 1 sample(s) could not be scored (the value alone meets it) | +0.0333 | 1 |"),
            "{md}"
        );
        assert!(md.contains("#### Samples that did not pass (3)\n"), "{md}");
        // Errors first, each with why.
        let listed = md.split("did not pass (3)\n\n").nth(1).unwrap();
        assert!(
            listed.starts_with("- ⚠️ **`qa::d`** · `f.jsonl:1` · error\n  - error: agent error: down\n  - contains error: no score\n"),
            "{listed}"
        );
        assert!(
            listed.contains("- ❌ **`qa::b`** · `f.jsonl:1` · failed\n  - contains 0.000 \\< 1: never \\| says \\`4\\`\n  - expected: — · actual: \\*4\\*\n"),
            "{listed}"
        );
    }

    #[test]
    fn failing_samples_are_capped_and_counted() {
        let records: Vec<_> = (0..SHOWN_FAILURES + 7)
            .map(|k| record("qa", &format!("qa::f{k:02}"), Verdict::Fail))
            .collect();
        let md = summary_markdown(&[gated(records, 0.5)]);
        assert!(
            md.contains("#### Samples that did not pass (first 20 of 27)\n"),
            "{md}"
        );
        assert_eq!(md.matches("\n- ❌ ").count(), 20);
        assert!(md.contains("\n…and 7 more, not listed here.\n"));
        assert!(md.contains("| ❌ missed | -0.5000 | 0 |"), "{md}");
    }

    #[test]
    fn an_incomplete_run_leaves_its_gates_unjudged_and_says_so() {
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(
                Some(3),
                vec![Gate::new("contains", eval_datasets::Op::AtLeast, 0.5)],
                false,
            ),
        )]);
        let results = Results::new("evals", vec![record("qa", "qa::a", Verdict::Pass)], &terms);
        let md = summary_markdown(&[results.clone(), results]);
        assert!(
            md.starts_with("## ✅ Evals passed: 2 sample(s), 0 gate(s) met\n"),
            "{md}"
        );
        assert!(md.contains("2 gate(s) not judged"));
        assert_eq!(
            md.matches("### `evals`\n").count(),
            2,
            "one section per file"
        );
        assert!(
            md.contains("> ⚠️ **Incomplete run** of `evals`: 1 of 3 samples of \\`qa\\`."),
            "{md}"
        );
        assert!(md.contains("⏸️ not judged: 1 of 3 samples ran"));
    }

    #[test]
    fn the_step_summary_is_appended_to() {
        let dir = std::env::temp_dir().join(format!("eval-md-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("summary.md");
        std::fs::write(&path, "earlier step\n").unwrap();
        append_step_summary(&path, "## one").unwrap();
        append_step_summary(&path, "## two\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "earlier step\n## one\n\n## two\n\n"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
