//! The comparison as a person reads it: text, Markdown, JSON.

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
    // missed. Three pairs cannot prove the drop, and Clopper–Pearson's
    // interval of 2/4 (0.068..0.932) straddles 0.75: the flip is
    // inconclusive, not a regression (the rule of earlier versions called
    // it one). What would decide it: a pass rate of 0.5 is proven below
    // 0.75 with 80% power from 30 samples (a scan in Python over scipy's
    // binomial).
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
        md.contains("| `qa` | `mean(contains) >= 0.75` | met | missed | ❔ inconclusive: the mean now 0.5000 (95% 0.0676..0.9324) straddles 0.75; 30 samples would prove it missed (80% power) at this mean and spread |"),
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

#[test]
fn a_gate_change_says_why_in_words() {
    use crate::output::diff::{GateChange, GateNeeded};
    use crate::stats::{Decision, Interval};
    let g = |outcome, decision, interval, needed| GateChange {
        dataset: "qa".into(),
        gate: "mean(contains) >= 0.7".into(),
        was: None,
        was_met: true,
        met: false,
        outcome,
        value: Some(0.6),
        interval,
        decision,
        needed,
    };
    let i = Some(Interval {
        low: 0.45,
        high: 0.74,
    });
    let none = GateNeeded {
        samples: None,
        proves_met: false,
        count: crate::output::diff::Count::About,
    };
    for (change, want) in [
        (
            g(
                GateOutcome::Inconclusive,
                Some(Decision::Inconclusive),
                None,
                Some(none),
            ),
            "met → missed: inconclusive: the mean now 0.6000 has no interval (too few values); more samples would be needed to prove it missed",
        ),
        (
            g(
                GateOutcome::Inconclusive,
                Some(Decision::Inconclusive),
                i,
                Some(GateNeeded {
                    samples: Some(80),
                    ..none
                }),
            ),
            "met → missed: inconclusive: the mean now 0.6000 (95% 0.4500..0.7400) straddles 0.7; about 80 samples would prove it missed (80% power) at this mean and spread",
        ),
        (
            g(
                GateOutcome::Inconclusive,
                Some(Decision::Inconclusive),
                i,
                Some(GateNeeded {
                    samples: Some(95),
                    count: crate::output::diff::Count::Exact,
                    ..none
                }),
            ),
            "met → missed: inconclusive: the mean now 0.6000 (95% 0.4500..0.7400) straddles 0.7; 95 samples would prove it missed (80% power) at this mean and spread",
        ),
        (
            g(
                GateOutcome::Regression,
                Some(Decision::Inconclusive),
                i,
                None,
            ),
            "met → missed: regression: the paired comparison of its metric regressed",
        ),
        (
            g(GateOutcome::Regression, None, None, None),
            "met → missed: regression: missed now",
        ),
    ] {
        assert_eq!(gate_why(&change), want);
    }
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

#[test]
fn a_metric_whose_options_changed_gets_no_verdict() {
    use crate::output::results::WrittenMetric;
    // `contains` case-insensitive, then case-sensitive: 12 of 40 samples
    // no longer pass (McNemar p = 0.0005, a regression were it the same
    // metric), and the gate on it flips. It scores something else now.
    let run = |options: &str, fails: usize| {
        let records = (0..40)
            .map(|k| {
                let v = if k < fails {
                    Verdict::Fail
                } else {
                    Verdict::Pass
                };
                record("qa", &format!("qa::s{k:02}"), v)
            })
            .collect();
        let mut m = WrittenMetric::bare("contains", ">=", 1.0);
        m.options = options.into();
        let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.9);
        let terms = BTreeMap::from([(
            "qa".to_string(),
            DatasetTerms::new(Some(40), vec![gate], false).asking(vec![m], false),
        )]);
        Results::new("evals", records, &terms)
    };
    let (a, b) = (run("", 0), run("case_sensitive = true", 12));
    let d = diff(&a, &b, 0.0);
    assert_eq!(d.comparisons[0].outcome, Outcome::OptionsChanged);
    assert!(d.comparisons[0].needed.is_none());
    assert_eq!(d.gates[0].outcome, GateOutcome::OptionsChanged);
    assert!(d.regressions().is_empty(), "{}", d.render());
    let text = d.render();
    assert!(
        text.contains("1 with changed options (not compared)"),
        "{text}"
    );
    assert!(
        text.contains("`contains` options changed, (defaults) → case_sensitive = true"),
        "{text}"
    );
    // The same options both times: the drop is a regression.
    let d = diff(&run("", 0), &run("", 12), 0.0);
    assert_eq!(d.comparisons[0].outcome, Outcome::Regression);
}

#[test]
fn names_from_the_files_are_shown_escaped() {
    // issue37:escape: a test name (from a dataset's sample id) with a
    // screen clear, a C1 CSI and a right-to-left override.
    let evil = "qa::a\u{1b}[2J\u{9b}31m\u{202e}txt";
    let old = gated(vec![record("qa", evil, Verdict::Pass)], 0.5);
    let new = gated(vec![record("qa", evil, Verdict::Fail)], 0.5);
    let text = diff(&old, &new, 0.0).render();
    assert!(
        !text
            .chars()
            .any(|c| eval_datasets::terminal::needs_escape(c) && c != '\n' && c != '\t'),
        "{text:?}"
    );
    assert!(
        text.contains("qa::a\\u{1b}[2J\\u{9b}31m\\u{202e}txt"),
        "{text}"
    );
}
