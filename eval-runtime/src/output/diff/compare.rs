//! The comparison itself: samples paired by dataset and id, each dataset's
//! metric tested (exact McNemar or paired t), the p-values adjusted
//! together (Holm), each comparison's outcome and what would decide an
//! inconclusive one; gates that flipped (see [`gates`](super::gates)); the
//! runs' provenance and question checked.

use std::collections::BTreeMap;

use super::model::{ALPHA, Change, Comparison, Count, Diff, Needed, Only, Outcome, POWER};
use crate::model::{Allow, QuestionChange};
use crate::output::results::{Results, ResultsError, SampleRecord, Verdict};
use crate::stats::{self, Level, PairedTest, SampleSize, Scale};

fn key(s: &SampleRecord) -> (String, String) {
    (s.dataset.clone(), s.id.clone())
}

/// Compares `old` with `new` when their provenance allows it: the judge of
/// every metric both scored (model, host, settings, prompt and definition
/// versions) and the content of every dataset both hold must be the same,
/// unless `allow` accepts the difference; then the comparison says so in
/// its caveats (shown by [`Diff::render`]). Otherwise [`ResultsError::Incomparable`], naming what
/// differs. See [`diff`] for the comparison itself.
pub fn compare(
    old: &Results,
    new: &Results,
    epsilon: f64,
    allow: Allow,
) -> Result<Diff, ResultsError> {
    let d = diff(old, new, epsilon);
    let (Some(a), Some(b)) = (&old.provenance, &new.provenance) else {
        return Ok(d);
    };
    let metrics: Vec<String> = d.comparisons.iter().map(|c| c.metric.clone()).collect();
    let found = b.differences(a, &metrics);
    let mut refused = Vec::new();
    if !allow.judge_change {
        refused.extend(found.judge.iter().cloned());
    }
    if !allow.dataset_change {
        refused.extend(found.datasets.iter().cloned());
    }
    if refused.is_empty() {
        Ok(d)
    } else {
        Err(ResultsError::Incomparable {
            differences: refused,
        })
    }
}

/// What `new`'s provenance says differs from `old`'s, as a comparison's
/// caveats: judge and dataset changes (allowed, since they are compared),
/// then the rest (the agent, the revision).
fn caveats(old: &Results, new: &Results, metrics: &[String]) -> Vec<String> {
    let (Some(a), Some(b)) = (&old.provenance, &new.provenance) else {
        return Vec::new();
    };
    let found = b.differences(a, metrics);
    found
        .judge
        .into_iter()
        .map(|j| format!("compared across a judge change: {j}"))
        .chain(
            found
                .datasets
                .into_iter()
                .map(|d| format!("compared across a dataset change: {d} (samples whose content changed are not paired)")),
        )
        .chain(found.notes)
        .collect()
}

/// Compares `old` with `new` (see the [`diff`](crate::diff) module); a difference
/// whose 95% interval lies within ±`epsilon` is no change, and per-sample
/// movements of at most `epsilon` are not listed. Samples whose content
/// changed (their hashes differ) are not paired. Whatever differs in the
/// runs' provenance is said in its caveats (shown by [`Diff::render`]); [`compare`] refuses
/// runs scored by different judges or on different data.
pub fn diff(old: &Results, new: &Results, epsilon: f64) -> Diff {
    // The user metrics' scales, from the runs' provenance.
    let scales: BTreeMap<String, Scale> = [&old.provenance, &new.provenance]
        .into_iter()
        .flatten()
        .flat_map(|p| p.user_scales())
        .collect();
    let epsilon = epsilon.abs();
    let before: BTreeMap<(String, String), &SampleRecord> =
        old.samples.iter().map(|s| (key(s), s)).collect();
    let after: BTreeMap<(String, String), &SampleRecord> =
        new.samples.iter().map(|s| (key(s), s)).collect();
    let mut changes = Vec::new();
    let mut compared = 0;
    // Per (dataset, metric): the op, the pairs, the run counts and run
    // variances (for repeats), the samples that lost their score.
    let mut cells: BTreeMap<(String, String), Cell> = BTreeMap::new();
    let mut changed = Vec::new();
    for (k, n) in &after {
        let Some(o) = before.get(k) else { continue };
        // The same id with other content is another sample.
        if let (Some(a), Some(b)) = (&o.hash, &n.hash)
            && a != b
        {
            changed.push(Only {
                dataset: n.dataset.clone(),
                id: n.id.clone(),
                test_name: n.test_name.clone(),
            });
            continue;
        }
        compared += 1;
        compare_pair(o, n, epsilon, &mut cells, &mut changes);
    }
    // Worst first: regressions by size, then improvements.
    changes.sort_by(|a, b| {
        a.better
            .cmp(&b.better)
            .then(
                b.delta
                    .map_or(f64::INFINITY, f64::abs)
                    .total_cmp(&a.delta.map_or(f64::INFINITY, f64::abs)),
            )
            .then((&a.dataset, &a.id, &a.metric).cmp(&(&b.dataset, &b.id, &b.metric)))
    });
    let only = |map: &BTreeMap<(String, String), &SampleRecord>,
                other: &BTreeMap<(String, String), &SampleRecord>| {
        map.iter()
            .filter(|(k, _)| !other.contains_key(*k))
            .map(|(_, s)| Only {
                dataset: s.dataset.clone(),
                id: s.id.clone(),
                test_name: s.test_name.clone(),
            })
            .collect::<Vec<_>>()
    };
    let question = old.question_changes(new);
    // A metric whose options changed scores something else: no verdict.
    let rescored: Vec<(String, String)> = question
        .iter()
        .filter_map(|q| match q {
            QuestionChange::OptionsChanged {
                dataset, metric, ..
            } => Some((dataset.clone(), metric.clone())),
            _ => None,
        })
        .collect();
    let comparisons = judge(cells, epsilon, &rescored, &scales);
    let metrics: Vec<String> = comparisons.iter().map(|c| c.metric.clone()).collect();
    Diff {
        caveats: caveats(old, new, &metrics),
        question,
        gates: super::gates::gate_changes(old, new, &comparisons),
        comparisons,
        added: only(&after, &before),
        removed: only(&before, &after),
        changed,
        changes,
        compared,
        epsilon,
    }
}

/// The changes between the two runs of one sample (`o` before, `n` now),
/// and their scores added to the (dataset, metric) cells.
fn compare_pair(
    o: &SampleRecord,
    n: &SampleRecord,
    epsilon: f64,
    cells: &mut BTreeMap<(String, String), Cell>,
    changes: &mut Vec<Change>,
) {
    for m in &n.metrics {
        let was = o.metrics.iter().find(|x| x.name == m.name);
        let old_score = was.and_then(|x| x.score);
        let lower_is_better = m.op == "<=";
        if was.is_some() {
            let cell = cells
                .entry((n.dataset.clone(), m.name.clone()))
                .or_insert_with(|| Cell::new(&m.op));
            match (old_score, m.score) {
                (Some(a), Some(b)) => {
                    cell.pairs.push((a, b));
                    cell.runs.push((
                        (o.runs, was.and_then(|x| x.spread).and_then(|s| s.sd)),
                        (n.runs, m.spread.and_then(|s| s.sd)),
                    ));
                }
                (Some(_), None) => cell.lost += 1,
                _ => {}
            }
        }
        let (better, delta) = match (old_score, m.score) {
            (Some(a), Some(b)) => {
                let d = b - a;
                // 1.0 -> 0.95 with epsilon 0.05 is within it, float error aside.
                if d.abs() <= epsilon + 1e-12 {
                    continue;
                }
                (if lower_is_better { d < 0.0 } else { d > 0.0 }, Some(d))
            }
            (None, Some(_)) if was.is_some() => (true, None),
            (Some(_), None) => (false, None),
            _ => continue,
        };
        changes.push(Change {
            dataset: n.dataset.clone(),
            id: n.id.clone(),
            test_name: n.test_name.clone(),
            metric: m.name.clone(),
            old: old_score,
            new: m.score,
            delta,
            better,
        });
    }
    // A metric scored before and not at all now is lost coverage.
    for m in o.metrics.iter().filter(|m| m.score.is_some()) {
        if !n.metrics.iter().any(|x| x.name == m.name) {
            cells
                .entry((n.dataset.clone(), m.name.clone()))
                .or_insert_with(|| Cell::new(&m.op))
                .lost += 1;
            changes.push(Change {
                dataset: n.dataset.clone(),
                id: n.id.clone(),
                test_name: n.test_name.clone(),
                metric: m.name.clone(),
                old: m.score,
                new: None,
                delta: None,
                better: false,
            });
        }
    }
    // An agent error where there was none is worse, whatever the metrics say.
    if n.verdict == Verdict::Error && o.verdict != Verdict::Error && n.metrics.is_empty() {
        changes.push(Change {
            dataset: n.dataset.clone(),
            id: n.id.clone(),
            test_name: n.test_name.clone(),
            metric: "(agent)".into(),
            old: None,
            new: None,
            delta: None,
            better: false,
        });
    }
}

/// One side of a pair: the sample's runs and the standard deviation of
/// their scores (when repeated).
type RunsOf = (u32, Option<f64>);

/// The pairs of one dataset's metric.
struct Cell {
    op: String,
    pairs: Vec<(f64, f64)>,
    /// Per pair: (runs, run-to-run standard deviation) before and now.
    runs: Vec<(RunsOf, RunsOf)>,
    lost: usize,
}

impl Cell {
    fn new(op: &str) -> Cell {
        Cell {
            op: op.to_string(),
            pairs: Vec::new(),
            runs: Vec::new(),
            lost: 0,
        }
    }
}

/// Each cell's paired comparison and verdict, the p-values adjusted
/// together (Holm); the metrics `rescored` (their options changed) get no
/// verdict.
fn judge(
    cells: BTreeMap<(String, String), Cell>,
    epsilon: f64,
    rescored: &[(String, String)],
    scales: &BTreeMap<String, Scale>,
) -> Vec<Comparison> {
    let level = Level::STANDARD;
    let mut out: Vec<Comparison> = Vec::with_capacity(cells.len());
    let mut needed_inputs = Vec::with_capacity(cells.len());
    for ((dataset, metric), cell) in cells {
        let paired = crate::stats::paired(&cell.pairs, level);
        // A difference of two scores lies within ± the metric's range.
        // (a user metric's as its provenance records it).
        let base = metric
            .rsplit_once("@turn")
            .map_or(metric.as_str(), |(b, _)| b);
        let scale = scales.get(base).copied();
        let (min, max) = scale.unwrap_or_else(|| Scale::of_metric(&metric)).range();
        let span = max - min;
        let n = cell.pairs.len() as f64;
        let mean_of = |f: fn(&(f64, f64)) -> f64| {
            (!cell.pairs.is_empty()).then(|| cell.pairs.iter().map(f).sum::<f64>() / n)
        };
        out.push(Comparison {
            old_mean: mean_of(|p| p.0),
            new_mean: mean_of(|p| p.1),
            dataset,
            metric,
            op: cell.op.clone(),
            pairs: cell.pairs.len(),
            difference: paired.map(|p| p.mean),
            interval: paired.map(|p| p.interval.clamped((-span, span))),
            sd: paired.map(|p| p.sd),
            p_value: paired.map(|p| p.p_value),
            adjusted_p: None,
            test: paired.map(|p| p.test),
            discordant: paired.and_then(|p| p.discordant),
            lost: cell.lost,
            outcome: Outcome::Inconclusive,
            needed: None,
        });
        needed_inputs.push(run_variance(&cell.runs));
    }
    // Holm over the comparisons that have a p-value.
    let tested: Vec<usize> = (0..out.len())
        .filter(|i| out[*i].p_value.is_some())
        .collect();
    let adjusted = crate::stats::holm(
        &tested
            .iter()
            .map(|i| out[*i].p_value.unwrap_or(1.0))
            .collect::<Vec<_>>(),
    );
    for (i, p) in tested.into_iter().zip(adjusted) {
        out[i].adjusted_p = Some(p);
    }
    // A future run's comparison is held to Holm's adjustment too: the
    // samples that would decide one are those that give 80% power at the
    // strictest level it may face, α over the comparisons tested.
    let level = Level(1.0 - ALPHA / tested_count(&out).max(1) as f64);
    for (c, within) in out.iter_mut().zip(needed_inputs) {
        let key = (c.dataset.clone(), c.metric.clone());
        c.outcome = if rescored.contains(&key) {
            Outcome::OptionsChanged
        } else {
            outcome(c, epsilon)
        };
        if c.outcome == Outcome::Inconclusive {
            c.needed = Some(needed(c, (epsilon, level), within));
        }
    }
    out
}

/// A comparison's verdict (see the [diff module](super)).
fn outcome(c: &Comparison, epsilon: f64) -> Outcome {
    if c.lost > 0 {
        return Outcome::Regression;
    }
    let (Some(d), Some(i), Some(p)) = (c.difference, c.interval, c.adjusted_p) else {
        return Outcome::Inconclusive;
    };
    // Float error aside, an interval within ±ε is no change.
    let tol = 1e-12;
    if i.low >= -epsilon - tol && i.high <= epsilon + tol {
        return Outcome::NoChange;
    }
    if c.pairs < 2 || p >= ALPHA {
        return Outcome::Inconclusive;
    }
    let gain = if c.lower_is_better() { -d } else { d };
    if gain < 0.0 {
        Outcome::Regression
    } else {
        Outcome::Improvement
    }
}

/// How many comparisons have a p-value (the m of Holm's adjustment).
fn tested_count(comparisons: &[Comparison]) -> usize {
    comparisons.iter().filter(|c| c.p_value.is_some()).count()
}

/// The average run-to-run variance of one sample's score (both runs'
/// samples), and the runs per sample, when every pair was repeated.
fn run_variance(runs: &[(RunsOf, RunsOf)]) -> Option<(f64, u32)> {
    if runs.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    let mut k = u32::MAX;
    for ((ko, so), (kn, sn)) in runs {
        let (so, sn) = ((*so)?, (*sn)?);
        if *ko < 2 || *kn < 2 {
            return None;
        }
        sum += so * so + sn * sn;
        k = k.min(*ko).min(*kn);
    }
    Some((sum / (2 * runs.len()) as f64, k))
}

/// What would decide an inconclusive comparison: samples to detect the
/// observed difference (or, within ±ε, to show it is no change) with the
/// test that will be run — exact McNemar for pass/fail pairs, the paired t
/// test otherwise, each at its exact power, at `level` (Holm's strictest)
/// — and runs per sample that would do it with the samples at hand.
fn needed(c: &Comparison, (epsilon, level): (f64, Level), within: Option<(f64, u32)>) -> Needed {
    let none = Needed {
        samples: None,
        repeats: None,
        no_difference: false,
        count: Count::Exact,
    };
    let (Some(d), Some(sd)) = (c.difference, c.sd) else {
        return none;
    };
    let detect = d.abs() > epsilon;
    let size = match (detect, c.test, c.discordant) {
        (false, ..) => stats::within_samples(sd, d, epsilon, level, POWER),
        (true, Some(PairedTest::McNemar), Some((worse, better))) if c.pairs > 0 => {
            let n = c.pairs as f64;
            stats::mcnemar_samples(worse as f64 / n, better as f64 / n, level, POWER)
        }
        (true, ..) => stats::paired_t_samples(sd, d, level, POWER),
    };
    let (samples, no_difference) = match size {
        SampleSize::Samples(n) | SampleSize::About(n) | SampleSize::Beyond(n) => (Some(n), false),
        SampleSize::NoDifference => (None, detect),
    };

    // With K runs per sample, a difference's variance is the samples'
    // own (between) plus twice the run-to-run variance over K.
    let repeats = within.and_then(|(w, k)| {
        if !detect || c.pairs < 2 || no_difference {
            return None;
        }
        let between = (sd * sd - 2.0 * w / f64::from(k)).max(0.0);
        stats::paired_t_runs(
            (c.pairs as u64, d),
            (between, w),
            k,
            eval_datasets::repeat::MAX_REPEAT,
            (level, POWER),
        )
    });
    Needed {
        samples,
        repeats,
        no_difference,
        count: Count::of(size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::results::{MetricRecord, RunSpread};
    use crate::output::test_record as record;

    /// A run of `scores` of `partial_match` (a score, not pass/fail).
    fn scored(scores: &[f64]) -> Results {
        let records = scores
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut r = record("qa", &format!("s{i:03}"), Verdict::Pass);
                r.metrics[0].name = "partial_match".into();
                r.metrics[0].score = Some(*s);
                r.metrics[0].threshold = 0.5;
                r
            })
            .collect();
        Results::new("evals", records, &BTreeMap::new())
    }

    fn pass_fail(passes: &[bool]) -> Results {
        let records = crate::output::test_records(passes);
        Results::new("evals", records, &BTreeMap::new())
    }

    #[test]
    fn identical_runs_are_no_change_and_a_clear_drop_is_a_regression() {
        let all = pass_fail(&[true; 40]);
        let d = diff(&all, &all, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::NoChange);
        assert!(d.regressions().is_empty());
        // 12 of 40 go pass → fail, none back: McNemar p = 2 · 0.5^12 = 0.000488.
        let mut now = vec![true; 40];
        now[..12].iter_mut().for_each(|p| *p = false);
        let d = diff(&all, &pass_fail(&now), 0.0);
        let c = &d.comparisons[0];
        assert_eq!(c.discordant, Some((12, 0)));
        assert!((c.p_value.unwrap() - 2.0 * 0.5f64.powi(12)).abs() < 1e-12);
        assert_eq!(c.outcome, Outcome::Regression);
        assert_eq!(d.regressions().len(), 1);
        // The other way round it is an improvement.
        let d = diff(&pass_fail(&now), &all, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::Improvement);
        assert!(d.regressions().is_empty());
    }

    #[test]
    fn noise_is_inconclusive_with_the_samples_that_would_decide_it() {
        // 20 pairs, 3 pass → fail and 2 fail → pass: p = 1, inconclusive.
        let mut old = vec![true; 20];
        let mut new = vec![true; 20];
        old[..2].iter_mut().for_each(|p| *p = false);
        new[10..13].iter_mut().for_each(|p| *p = false);
        let d = diff(&pass_fail(&old), &pass_fail(&new), 0.0);
        let c = &d.comparisons[0];
        assert_eq!(c.outcome, Outcome::Inconclusive);
        // 3 of 20 pass → fail, 2 fail → pass: the exact McNemar test, the
        // one that will be run, detects rates of 0.15 and 0.10 with 80%
        // power from 817 pairs (power 0.79982 at 816, 0.80032 at 817, by an
        // independent sum in Python over scipy's binomial).
        assert_eq!(c.needed.unwrap().samples, Some(817));
        assert!(
            d.render().contains(
                "817 samples would be needed to detect a difference this size (80% power)"
            )
        );
        // As many pairs one way as the other: no number of samples would
        // detect a difference (not 18446744073709551615 of them).
        let mut even = vec![true; 20];
        even[10..12].iter_mut().for_each(|p| *p = false);
        let d = diff(&pass_fail(&old), &pass_fail(&even), 0.0);
        let n = d.comparisons[0].needed.unwrap();
        assert!(n.no_difference && n.samples.is_none(), "{n:?}");
        assert!(d.render().contains("no difference seen"), "{}", d.render());
        // With a margin: the interval must also lie within ±ε to be no change.
        let d = diff(&pass_fail(&old), &pass_fail(&new), 0.5);
        assert_eq!(d.comparisons[0].outcome, Outcome::NoChange);
    }

    #[test]
    fn what_would_decide_a_comparison_allows_for_holm() {
        // The same 3-of-20 pass → fail, 2 fail → pass on two metrics: each
        // will be tested at Holm's strictest level, α/2, so the count is
        // the one with 80% power there (more than the 817 of one metric).
        let two = |passes: &[bool]| {
            let mut r = pass_fail(passes);
            for s in &mut r.samples {
                let mut second = s.metrics[0].clone();
                second.name = "exact_match".into();
                s.metrics.push(second);
            }
            r
        };
        let mut old = vec![true; 20];
        let mut new = vec![true; 20];
        old[..2].iter_mut().for_each(|p| *p = false);
        new[10..13].iter_mut().for_each(|p| *p = false);
        let d = diff(&two(&old), &two(&new), 0.0);
        assert_eq!(d.comparisons.len(), 2);
        let want = crate::stats::mcnemar_samples(0.15, 0.1, Level(0.975), POWER);
        for c in &d.comparisons {
            let n = c.needed.unwrap().samples.unwrap();
            assert_eq!(SampleSize::Samples(n), want, "{c:?}");
            assert!(n > 817);
            assert!(crate::stats::mcnemar_power(n, 0.15, 0.1, Level(0.975)) >= POWER);
        }
    }

    #[test]
    fn a_lower_is_better_metric_regresses_upwards() {
        let mut old = scored(&[0.1; 30]);
        let mut new = scored(&[0.4; 30]);
        for r in [&mut old, &mut new] {
            for s in &mut r.samples {
                s.metrics[0].name = "hallucination".into();
                s.metrics[0].op = "<=".into();
            }
        }
        // A constant difference over 30 pairs: the sign test's 2·½³⁰,
        // against the direction.
        let d = diff(&old, &new, 0.0);
        assert_eq!(d.comparisons[0].outcome, Outcome::Regression);
        assert_eq!(
            diff(&new, &old, 0.0).comparisons[0].outcome,
            Outcome::Improvement
        );
    }

    #[test]
    fn repeats_that_would_decide_come_from_the_run_to_run_variance() {
        // 10 samples, each the mean of 3 runs whose scores vary (sd 0.3):
        // the differences vary mostly from run to run, so more runs decide.
        let spread = |r: &mut MetricRecord| {
            r.spread = Some(RunSpread {
                runs: 3,
                low: 0.0,
                high: 1.0,
                straddles: true,
                sd: Some(0.3),
                level: 0.95,
                method: None,
                decision: None,
                passes: None,
            });
        };
        let wobble = |base: f64, k: usize| base + if k.is_multiple_of(2) { 0.1 } else { -0.1 };
        let mut old = scored(&(0..10).map(|k| wobble(0.6, k)).collect::<Vec<_>>());
        let mut new = scored(&(0..10).map(|k| wobble(0.55, k + 1)).collect::<Vec<_>>());
        for r in [&mut old, &mut new] {
            for s in &mut r.samples {
                s.runs = 3;
                spread(&mut s.metrics[0]);
            }
        }
        let d = diff(&old, &new, 0.0);
        let c = &d.comparisons[0];
        assert_eq!(c.outcome, Outcome::Inconclusive, "{c:?}");
        // Differences alternate −0.25 / +0.15: mean −0.05, s² = 0.0444...;
        // run-to-run part 2 · 0.09 / 3 = 0.06 ≥ s²: none of it is left to
        // the samples themselves. With K runs the differences' sd is
        // √(0.18/K); statsmodels' TTestPower gives 10 pairs 80% power
        // (0.8031) first at K = 72 (the normal approximation said 57).
        let n = c.needed.unwrap();
        assert_eq!(n.repeats, Some(72), "{n:?}");
        assert!(n.samples.is_some());
    }
}
