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
    /// A report a person can read.
    pub fn render(&self) -> String {
        text(self)
    }
}

impl BaselineOutcome {
    /// What a person reads about it.
    pub fn render(&self, baseline: &Path) -> String {
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
    Some(match (n.samples, n.repeats) {
        (Some(s), Some(k)) => format!(
            "about {s} samples would be needed {what} (80% power), or {k} runs per sample of these {}",
            c.pairs
        ),
        (Some(s), None) => format!("about {s} samples would be needed {what} (80% power)"),
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
                        "; about {k} samples would prove it {proves} (80% power) at this {stat} and spread"
                    ),
                    None => format!("; more samples would be needed to prove it {proves}"),
                }
            });
            format!("the {stat} now {value}{interval} straddles {threshold}{decide}")
        }
        GateOutcome::ThresholdChanged => {
            "the gate changed, so the runs are not comparable on it".into()
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
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::output::diff::diff;
    use crate::output::results::{DatasetTerms, Gate, Verdict};
    use crate::output::test_record as record;

    fn gated(records: Vec<crate::output::SampleRecord>, threshold: f64) -> Results {
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(
                None,
                vec![Gate::new("contains", eval_datasets::Op::AtLeast, threshold)],
                false,
            ),
        )]);
        Results::new("evals", records, &terms)
    }

    #[test]
    fn a_gate_flip_nothing_proves_is_inconclusive_and_samples_are_evidence() {
        // The mean drops from 1 to 2/4, the gate 0.75 goes from met to
        // missed. Three pairs cannot prove the drop, and Wilson's interval
        // of 2/4 (0.150..0.850) straddles 0.75: the flip is inconclusive,
        // not a regression (the rule of earlier versions called it one).
        // What would decide it: s = √(1/3) over the 4 scores, δ = 0.25:
        // (2.801585 · 0.57735 / 0.25)² = 41.9 → 42 samples.
        let old = gated(
            vec![
                record("qa", "qa::a", Verdict::Pass),
                record("qa", "qa::b", Verdict::Pass),
                record("qa", "qa::c", Verdict::Pass),
                record("qa", "qa::gone", Verdict::Pass),
            ],
            0.75,
        );
        let new = gated(
            vec![
                record("qa", "qa::a", Verdict::Fail),
                record("qa", "qa::b", Verdict::Pass),
                record("qa", "qa::c", Verdict::Pass),
                record("qa", "qa::new", Verdict::Fail),
            ],
            0.75,
        );
        let d = diff(&old, &new, 0.0);
        assert_eq!(d.comparisons.len(), 1);
        assert_eq!(d.comparisons[0].outcome, Outcome::Inconclusive);
        assert_eq!(d.comparisons[0].discordant, Some((1, 0)));
        assert!(d.regressions().is_empty(), "{d:#?}");
        assert_eq!(d.gates[0].outcome, GateOutcome::Inconclusive);
        let md = diff_markdown(&old, &new, &d);
        assert!(md.starts_with("## ✅ No regressions\n\n"), "{md}");
        assert!(
            md.contains("| `qa` | `mean(contains) >= 0.75` | met | missed | ❔ inconclusive: the mean now 0.5000 (95% 0.1500..0.8500) straddles 0.75; about 42 samples would prove it missed (80% power) at this mean and spread |"),
            "{md}"
        );
        assert!(
            md.contains("| `qa` | `contains` | 3 | 1.0000 | 0.6667 | -0.3333 |"),
            "{md}"
        );
        let worse = md.find("### Worse (1)").unwrap();
        assert!(
            md[worse..]
                .contains("| `qa` | `qa::a` | `qa::a` | `contains` | 1.0000 | 0.0000 | -1.0000 |")
        );
        assert!(md.contains("### New samples (1)\n\n| Dataset | Sample | Test |\n|---|---|---|\n| `qa` | `qa::new` | `qa::new` |"));
        assert!(md.contains("### Removed samples (1)"));
        let text = d.render();
        assert!(
            text.starts_with("3 sample(s) compared (epsilon 0): no regression, 1 inconclusive, 1 gate flip(s) inconclusive\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "gate qa mean(contains) >= 0.75: met → missed: inconclusive: the mean now 0.5000"
            ),
            "{text}"
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["gates"][0]["outcome"], "inconclusive", "{json}");
        assert_eq!(json["gates"][0]["needed"]["proves_met"], false, "{json}");
    }

    /// The issue's case: run A asks `partial_match >= 0.3` (every sample
    /// passes), run B `>= 0.5` (all 20 fail) with the same scores, each
    /// gating the mean at its threshold.
    #[test]
    fn a_changed_threshold_is_said_in_every_output_and_labels_the_gate() {
        let run = |threshold: f64| {
            let records = (0..20)
                .map(|k| {
                    let mut r = record("qa", &format!("qa::s{k:02}"), Verdict::Pass);
                    let m = &mut r.metrics[0];
                    m.name = "partial_match".into();
                    m.score = Some(0.4);
                    m.threshold = threshold;
                    m.passed = 0.4 >= threshold;
                    if !m.passed {
                        r.verdict = Verdict::Fail;
                    }
                    r
                })
                .collect();
            let gate = Gate::new("partial_match", eval_datasets::Op::AtLeast, threshold);
            let terms = BTreeMap::from([(
                "qa".to_string(),
                DatasetTerms::new(Some(20), vec![gate], false),
            )]);
            Results::new("evals", records, &terms)
        };
        let (a, b) = (run(0.3), run(0.5));
        let d = diff(&a, &b, 0.0);
        // The scores did not move: no change, and no regression.
        assert_eq!(d.comparisons[0].outcome, Outcome::NoChange);
        assert!(d.regressions().is_empty());
        assert_eq!(d.question.len(), 2, "{:?}", d.question);
        let g = &d.gates[0];
        assert_eq!(g.outcome, GateOutcome::ThresholdChanged);
        assert_eq!(
            (g.was.as_deref(), g.gate.as_str(), g.was_met, g.met),
            (
                Some("mean(partial_match) >= 0.3"),
                "mean(partial_match) >= 0.5",
                true,
                false
            )
        );
        let text = d.render();
        for want in [
            "no regression, 1 no change, 1 gate(s) with a changed threshold, the question changed (2 difference(s): see the notes)",
            "note: the question changed: `qa`: `partial_match` threshold changed, >= 0.3 → >= 0.5 (scores are compared as before; which samples pass is not comparable)",
            "note: the question changed: `qa`: gate changed, mean(partial_match) >= 0.3 → mean(partial_match) >= 0.5",
            "gate qa mean(partial_match) >= 0.3 → mean(partial_match) >= 0.5: met → missed: threshold changed",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
        let md = diff_markdown(&a, &b, &d);
        assert!(
            md.contains(r"> ⚠️ the question changed: \`qa\`: \`partial\_match\` threshold changed, \>= 0.3 → \>= 0.5"),
            "{md}"
        );
        assert!(
            md.contains("| `qa` | `mean(partial_match) >= 0.3 → mean(partial_match) >= 0.5` | met | missed | ↔️ threshold changed: the gate changed, so the runs are not comparable on it |"),
            "{md}"
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(
            json["question"][0],
            serde_json::json!({
                "kind": "threshold-changed",
                "dataset": "qa",
                "metric": "partial_match",
                "from": {"op": ">=", "threshold": 0.3},
                "to": {"op": ">=", "threshold": 0.5}
            })
        );
        assert_eq!(json["gates"][0]["outcome"], "threshold-changed");
    }

    #[test]
    fn long_diffs_are_capped() {
        let many = |v: Verdict| {
            gated(
                (0..SHOWN_CHANGES + 3)
                    .map(|k| record("qa", &format!("qa::s{k:03}"), v))
                    .collect(),
                0.5,
            )
        };
        let (old, new) = (many(Verdict::Pass), many(Verdict::Fail));
        let d = diff(&old, &new, 0.0);
        // 53 pass → fail, none the other way: McNemar's p = 2·0.5^53.
        assert_eq!(d.comparisons[0].outcome, Outcome::Regression);
        let md = diff_markdown(&old, &new, &d);
        assert!(md.contains("### Worse (first 50 of 53)"), "{md}");
        assert_eq!(
            md.matches("| `contains` | 1.0000 | 0.0000 | -1.0000 |")
                .count(),
            50
        );
        assert!(md.contains("\n…and 3 more.\n"));
        let empty = Results::new("evals", Vec::new(), &BTreeMap::new());
        let gone = diff_markdown(&old, &empty, &diff(&old, &empty, 0.0));
        assert!(
            gone.contains("### Removed samples (first 50 of 53)"),
            "{gone}"
        );
        assert_eq!(gone.matches("| `qa` | `qa::s").count(), 50);
    }
}
