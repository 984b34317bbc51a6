//! A comparison as a person reads it: terminal text ([`text`]) and
//! GitHub-flavoured Markdown for a pull-request comment ([`diff_markdown`]).
//! The verdict comes first — per dataset and metric, the paired comparison
//! and its outcome; gates that flipped — then the per-sample movements as
//! evidence, capped at [`SHOWN_CHANGES`] per list.

use std::fmt::Write as _;
use std::path::Path;

use super::model::{
    BaselineOutcome, Change, Comparison, Diff, GateChange, GateOutcome, Only, Outcome, Regression,
};
use crate::output::md::{code, inline, mean};
use crate::output::results::Results;
use crate::stats::PairedTest;

impl std::fmt::Display for Regression<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Regression::Metric(c) => write!(f, "{}: {}", c.dataset, comparison_line(c)),
            Regression::Gate(g) => write!(f, "{}: gate {} {}", g.dataset, g.gate, gate_why(g)),
        }
    }
}

impl Diff {
    /// A report a person can read (names from the results files shown
    /// escaped, as `eval_datasets::terminal` says).
    pub fn render(&self) -> String {
        // issue37:escape: ids, names and paths come from the files.
        eval_datasets::terminal::escaped_layout(&text(self), false).into_owned()
    }
}

impl BaselineOutcome {
    /// What a person reads about it (escaped, as [`Diff::render`]).
    pub fn render(&self, baseline: &Path) -> String {
        // issue37:escape
        let text = self.render_raw(baseline);
        eval_datasets::terminal::escaped_layout(&text, false).into_owned()
    }

    fn render_raw(&self, baseline: &Path) -> String {
        match self {
            BaselineOutcome::Written { backup, .. } => format!(
                "baseline {} written{}\n",
                baseline.display(),
                backup
                    .as_ref()
                    .map(|b| format!(" (previous kept as {})", b.display()))
                    .unwrap_or_default()
            ),
            BaselineOutcome::Compared(d) => {
                let mut out = format!("against baseline {}: {}", baseline.display(), d.render());
                if !d.regressions().is_empty() {
                    out.push_str("baseline gate FAILED: a regression since the baseline; EVAL_ACCEPT_BASELINE=1 accepts these results as the new baseline\n");
                }
                out
            }
            BaselineOutcome::NotCompared => format!(
                "baseline {} not compared: only part of the samples ran\n",
                baseline.display()
            ),
        }
    }
}

/// How many changes (and new or removed samples) a diff lists, per list.
pub const SHOWN_CHANGES: usize = 50;

/// `+0.0123`, or `—`.
fn signed(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{v:+.4}"))
}

/// `p 0.0312` (Holm-adjusted), or nothing.
fn p_text(c: &Comparison) -> String {
    match (c.p_value, c.adjusted_p) {
        (Some(p), Some(a)) if (p - a).abs() > 1e-12 => format!("p {a:.4} (Holm; {p:.4} alone)"),
        (_, Some(a)) => format!("p {a:.4}"),
        _ => String::new(),
    }
}

/// How the comparison was tested: `McNemar, 12 pass→fail, 9 fail→pass`.
fn test_text(c: &Comparison) -> String {
    match (c.test, c.discordant) {
        (Some(PairedTest::McNemar), Some((worse, better))) => {
            format!("exact McNemar: {worse} pass→fail, {better} fail→pass")
        }
        (Some(PairedTest::PairedT), _) => "paired t".into(),
        _ => "not tested".into(),
    }
}

/// What would decide an inconclusive comparison, in words.
fn needed_text(c: &Comparison, epsilon: f64) -> Option<String> {
    let n = c.needed?;
    let within = c.difference.is_some_and(|d| d.abs() <= epsilon);
    let what = if within {
        format!("to show the difference lies within ±{epsilon}")
    } else {
        "to detect a difference this size".to_string()
    };
    if n.no_difference {
        return Some(
            "no difference seen (as many samples moved one way as the other): more samples would not detect one"
                .into(),
        );
    }
    let about = n.count.prefix();
    Some(match (n.samples, n.repeats) {
        (Some(s), Some(k)) => format!(
            "{about}{s} samples would be needed {what} (80% power), or {k} runs per sample of these {}",
            c.pairs
        ),
        (Some(s), None) => format!("{about}{s} samples would be needed {what} (80% power)"),
        (None, Some(k)) => format!("{k} runs per sample would be needed {what} (80% power)"),
        (None, None) if epsilon == 0.0 && c.difference == Some(0.0) => {
            "no difference seen; give --epsilon to be able to call it no change".into()
        }
        (None, None) => "too few samples to say".into(),
    })
}

/// `mean(contains) >= 0.7`, or `mean(pm) >= 0.3 → mean(pm) >= 0.5` when it changed.
fn gate_name(g: &GateChange) -> String {
    match &g.was {
        Some(was) => format!("{was} → {}", g.gate),
        None => g.gate.clone(),
    }
}

/// `met → missed: inconclusive: ...`: how a gate moved, the verdict, and
/// why.
fn gate_why(g: &GateChange) -> String {
    let word = |met: bool| if met { "met" } else { "missed" };
    let moved = format!("{} → {}: {}", word(g.was_met), word(g.met), g.outcome);
    match gate_reason(g) {
        Some(why) => format!("{moved}: {why}"),
        None => moved,
    }
}

/// Why a gate change got its verdict: the new run's statistic and interval;
/// for an inconclusive flip, what would decide it.
fn gate_reason(g: &GateChange) -> Option<String> {
    let interval = g.interval.map_or(String::new(), |i| {
        let end = |x: f64| {
            if x.is_finite() {
                format!("{x:.4}")
            } else {
                "unbounded".into()
            }
        };
        format!(" (95% {}..{})", end(i.low), end(i.high))
    });
    let value = g.value.map_or("—".to_string(), |v| format!("{v:.4}"));
    let threshold = g.gate.rsplit(' ').next().unwrap_or_default();
    let stat = g.gate.split('(').next().unwrap_or("mean");
    Some(match g.outcome {
        GateOutcome::Regression if g.decision == Some(crate::stats::Decision::Fail) => {
            format!("proven missed, the {stat} now {value}{interval}")
        }
        GateOutcome::Regression if g.decision.is_none() => "missed now".into(),
        GateOutcome::Regression => "the paired comparison of its metric regressed".into(),
        GateOutcome::Improvement => format!("proven met, the {stat} now {value}{interval}"),
        GateOutcome::Inconclusive => {
            let decide = g.needed.map_or(String::new(), |n| {
                let proves = if n.proves_met { "met" } else { "missed" };
                match n.samples {
                    Some(k) => format!(
                        "; {}{k} samples would prove it {proves} (80% power) at this {stat} and spread",
                        n.count.prefix()
                    ),
                    None => format!("; more samples would be needed to prove it {proves}"),
                }
            });
            if g.interval.is_some() {
                format!("the {stat} now {value}{interval} straddles {threshold}{decide}")
            } else {
                format!("the {stat} now {value} has no interval (too few values){decide}")
            }
        }
        GateOutcome::ThresholdChanged => {
            "the gate changed, so the runs are not comparable on it".into()
        }
        GateOutcome::OptionsChanged => {
            "its metric's options changed, so the runs are not comparable on it".into()
        }
        GateOutcome::NoChange => return None,
    })
}

/// One comparison on one line: `contains: 0.7000 → 0.6850, Δ -0.0150 (95%
/// -0.0950..+0.0650; exact McNemar: 12 pass→fail, 9 fail→pass; p 0.6636):
/// inconclusive`.
pub(crate) fn comparison_line(c: &Comparison) -> String {
    if c.lost > 0 {
        return format!(
            "{}: regression: {} sample(s) scored before are not scored now",
            c.metric, c.lost
        );
    }
    let interval = c.interval.map_or(String::new(), |i| {
        format!("95% {:+.4}..{:+.4}; ", i.low, i.high)
    });
    format!(
        "{}: {} → {}, Δ {} ({interval}{}{}{}): {}",
        c.metric,
        mean(c.old_mean),
        mean(c.new_mean),
        signed(c.difference),
        test_text(c),
        if p_text(c).is_empty() { "" } else { "; " },
        p_text(c),
        c.outcome
    )
}

/// The verdict line: `3 sample(s) compared (epsilon 0): no regression; 1
/// inconclusive`.
fn headline(diff: &Diff) -> String {
    let count = |o: Outcome| diff.with_outcome(o).count();
    let regressions = diff.regressions().len();
    let mut parts = vec![if regressions == 0 {
        "no regression".to_string()
    } else {
        format!("{regressions} REGRESSION(S)")
    }];
    for (o, word) in [
        (Outcome::Improvement, "improved"),
        (Outcome::NoChange, "no change"),
        (Outcome::Inconclusive, "inconclusive"),
        (
            Outcome::OptionsChanged,
            "with changed options (not compared)",
        ),
    ] {
        if count(o) > 0 {
            parts.push(format!("{} {word}", count(o)));
        }
    }
    for (o, word) in [
        (GateOutcome::Improvement, "gate(s) now proven met"),
        (GateOutcome::Inconclusive, "gate flip(s) inconclusive"),
        (
            GateOutcome::ThresholdChanged,
            "gate(s) with a changed threshold",
        ),
        (
            GateOutcome::OptionsChanged,
            "gate(s) on a metric with changed options",
        ),
    ] {
        let n = diff.gates.iter().filter(|g| g.outcome == o).count();
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    if !diff.question.is_empty() {
        parts.push(format!(
            "the question changed ({} difference(s): see the notes)",
            diff.question.len()
        ));
    }
    format!(
        "{} sample(s) compared (epsilon {}): {}",
        diff.compared,
        diff.epsilon,
        parts.join(", ")
    )
}

/// The terminal report of a comparison.
pub(crate) fn text(diff: &Diff) -> String {
    let mut out = headline(diff);
    out.push('\n');
    for caveat in &diff.caveats {
        let _ = writeln!(out, "note: {caveat}");
    }
    for q in &diff.question {
        let _ = writeln!(out, "note: the question changed: {q}");
    }
    let mut dataset = "";
    for c in &diff.comparisons {
        if c.dataset != dataset {
            dataset = &c.dataset;
            let _ = writeln!(out, "{dataset}:");
        }
        let _ = writeln!(out, "  {}", comparison_line(c));
        if let Some(why) = needed_text(c, diff.epsilon) {
            let _ = writeln!(out, "    {why}");
        }
    }
    for g in diff
        .gates
        .iter()
        .filter(|g| g.outcome != GateOutcome::NoChange)
    {
        let _ = writeln!(out, "gate {} {}: {}", g.dataset, gate_name(g), gate_why(g));
    }
    let show = |v: Option<f64>| v.map_or("error".to_string(), |x| format!("{x:.4}"));
    let (worse, better) = (diff.worse(), diff.better());
    if !worse.is_empty() || !better.is_empty() {
        let _ = writeln!(
            out,
            "samples that moved beyond epsilon (evidence; the verdict is per dataset and metric): {} worse, {} better",
            worse.len(),
            better.len()
        );
    }
    for (title, list) in [("worse", worse), ("better", better)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{title}:");
        for c in list.iter().take(SHOWN_CHANGES) {
            let delta = c.delta.map_or(String::new(), |d| format!(" ({d:+.4})"));
            let _ = writeln!(
                out,
                "  {}::{} [{}] {}: {} -> {}{delta}",
                c.dataset,
                c.id,
                c.test_name,
                c.metric,
                show(c.old),
                show(c.new)
            );
        }
        if list.len() > SHOWN_CHANGES {
            let _ = writeln!(out, "  ... and {} more", list.len() - SHOWN_CHANGES);
        }
    }
    for (title, list) in [
        ("changed (not paired)", &diff.changed),
        ("new", &diff.added),
        ("removed", &diff.removed),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{title}: {}", list.len());
        for o in list.iter().take(SHOWN_CHANGES) {
            let _ = writeln!(out, "  {}::{} [{}]", o.dataset, o.id, o.test_name);
        }
    }
    out
}

/// A list's heading, saying how many of its rows are shown (at most
/// [`SHOWN_CHANGES`]); how many are.
fn capped_heading(out: &mut String, heading: &str, title: &str, len: usize) -> usize {
    let shown = len.min(SHOWN_CHANGES);
    let _ = writeln!(
        out,
        "{heading} {title} ({})\n",
        if shown < len {
            format!("first {shown} of {len}")
        } else {
            len.to_string()
        }
    );
    shown
}

fn change_rows(out: &mut String, heading: &str, title: &str, list: &[&Change]) {
    if list.is_empty() {
        return;
    }
    let shown = capped_heading(out, heading, title, list.len());
    out.push_str(
        "| Dataset | Sample | Test | Metric | Before | Now | Δ |\n|---|---|---|---|--:|--:|--:|\n",
    );
    let score = |v: Option<f64>| v.map_or("not scored".to_string(), |v| format!("{v:.4}"));
    for c in &list[..shown] {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            code(&c.dataset, true),
            code(&c.id, true),
            code(&c.test_name, true),
            code(&c.metric, true),
            score(c.old),
            score(c.new),
            c.delta.map_or("—".to_string(), |d| format!("{d:+.4}"))
        );
    }
    if list.len() > shown {
        let _ = writeln!(out, "\n…and {} more.", list.len() - shown);
    }
    out.push('\n');
}

fn only_rows(out: &mut String, heading: &str, title: &str, list: &[Only]) {
    if list.is_empty() {
        return;
    }
    let shown = capped_heading(out, heading, title, list.len());
    out.push_str("| Dataset | Sample | Test |\n|---|---|---|\n");
    for o in &list[..shown] {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            code(&o.dataset, true),
            code(&o.id, true),
            code(&o.test_name, true)
        );
    }
    if list.len() > shown {
        let _ = writeln!(out, "\n…and {} more.", list.len() - shown);
    }
    out.push('\n');
}

/// The outcome cell: `❌ regression`, `✅ improvement`...
fn outcome_cell(o: Outcome) -> &'static str {
    match o {
        Outcome::Regression => "❌ **regression**",
        Outcome::Improvement => "✅ improvement",
        Outcome::NoChange => "➖ no change",
        Outcome::Inconclusive => "❔ inconclusive",
        Outcome::OptionsChanged => "↔️ options changed",
    }
}

/// The comparisons as a table, then the gates that flipped, then the
/// per-sample evidence and the samples new or gone.
fn markdown_body(out: &mut String, heading: &str, diff: &Diff) {
    let _ = writeln!(out, "{}.\n", inline(&headline(diff), 500));
    for caveat in &diff.caveats {
        let _ = writeln!(out, "> ⚠️ {}\n", inline(caveat, 1000));
    }
    for q in &diff.question {
        let _ = writeln!(
            out,
            "> ⚠️ the question changed: {}\n",
            inline(&q.to_string(), 1000)
        );
    }
    if !diff.comparisons.is_empty() {
        out.push_str("| Dataset | Metric | Pairs | Before | Now | Δ | 95% interval | Test | p (Holm) | Verdict |\n|---|---|--:|--:|--:|--:|--:|---|--:|---|\n");
        for c in &diff.comparisons {
            let verdict = match needed_text(c, diff.epsilon) {
                Some(why) => format!("{}: {}", outcome_cell(c.outcome), inline(&why, 300)),
                None if c.lost > 0 => format!(
                    "{}: {} sample(s) no longer scored",
                    outcome_cell(c.outcome),
                    c.lost
                ),
                None => outcome_cell(c.outcome).to_string(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {verdict} |",
                code(&c.dataset, true),
                code(&c.metric, true),
                c.pairs,
                mean(c.old_mean),
                mean(c.new_mean),
                signed(c.difference),
                c.interval.map_or("—".to_string(), |i| format!(
                    "{:+.4}…{:+.4}",
                    i.low, i.high
                )),
                inline(&test_text(c), 120),
                c.adjusted_p.map_or("—".to_string(), |p| format!("{p:.4}")),
            );
        }
        out.push('\n');
    }
    let moved: Vec<_> = diff
        .gates
        .iter()
        .filter(|g| g.outcome != GateOutcome::NoChange)
        .collect();
    if !moved.is_empty() {
        out.push_str("| Dataset | Gate | Before | Now | Verdict |\n|---|---|---|---|---|\n");
        for g in moved {
            let word = |met: bool| if met { "met" } else { "missed" };
            let cell = match g.outcome {
                GateOutcome::Regression => "❌ **regression**",
                GateOutcome::Improvement => "✅ improvement",
                GateOutcome::Inconclusive => "❔ inconclusive",
                GateOutcome::ThresholdChanged => "↔️ threshold changed",
                GateOutcome::OptionsChanged => "↔️ options changed",
                GateOutcome::NoChange => "➖ no change",
            };
            let why = gate_reason(g).map_or(String::new(), |w| format!(": {}", inline(&w, 300)));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {cell}{why} |",
                code(&g.dataset, true),
                code(&gate_name(g), true),
                word(g.was_met),
                word(g.met),
            );
        }
        out.push('\n');
    }
    let (worse, better) = (diff.worse(), diff.better());
    if !worse.is_empty() || !better.is_empty() {
        out.push_str("Per-sample movements beyond epsilon (evidence: the verdict is per dataset and metric):\n\n");
    }
    change_rows(out, heading, "Worse", &worse);
    change_rows(out, heading, "Better", &better);
    only_rows(out, heading, "Changed samples", &diff.changed);
    only_rows(out, heading, "New samples", &diff.added);
    only_rows(out, heading, "Removed samples", &diff.removed);
}

/// The comparison of two runs as GitHub-flavoured Markdown, for a
/// pull-request comment: the verdict (regressions or none), per dataset and
/// metric the paired comparison (means, difference and its interval, the
/// test, the Holm-adjusted p-value, the verdict; for an inconclusive one,
/// what would decide it), the gates that flipped, then the sample metrics
/// that got worse (worst first), those that got better, and the samples new
/// or gone — each list at most [`SHOWN_CHANGES`] rows, saying how many more
/// there are.
pub fn diff_markdown(_old: &Results, _new: &Results, diff: &Diff) -> String {
    let regressions = diff.regressions();
    let mut out = if regressions.is_empty() {
        "## ✅ No regressions\n\n".to_string()
    } else {
        format!("## ❌ {} regression(s)\n\n", regressions.len())
    };
    markdown_body(&mut out, "###", diff);
    out
}

/// The baseline's part of a run's Markdown summary.
pub(crate) fn baseline_markdown(path: &Path, outcome: &BaselineOutcome) -> String {
    let name = code(&path.display().to_string(), false);
    let mut out = String::new();
    match outcome {
        BaselineOutcome::Compared(d) => {
            let _ = writeln!(out, "### Against the baseline {name}\n");
            markdown_body(&mut out, "####", d);
        }
        BaselineOutcome::Written { accepted, .. } => {
            let _ = writeln!(
                out,
                "Baseline {name} written ({}).\n",
                if *accepted {
                    "accepted on purpose"
                } else {
                    "there was none"
                }
            );
        }
        BaselineOutcome::NotCompared => {
            let _ = writeln!(
                out,
                "Baseline {name} not compared: only part of the samples ran.\n"
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
