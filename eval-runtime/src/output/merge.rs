//! Joining results: the parts nextest leaves (one process per test) and the
//! shards of a `--partition`ed run become one [`Results`], whose gates are
//! judged over every sample — once the parts hold the whole dataset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::results::{DatasetTerms, Results, ResultsError, SampleRecord, Verdict};
use crate::model::{Allow, Provenance};
use crate::stats::{Decision, OnInconclusive};

/// Joins results of one test binary: every sample once, aggregates and
/// gates recomputed over all of them. A sample present in two inputs is an
/// error (shards overlap), and so are different gates, sample counts or
/// `ciGate` settings for one dataset, and parts scored by different judges
/// or on different dataset contents (see [`merge_allowing`]).
pub fn merge(parts: &[Results]) -> Result<Results, ResultsError> {
    merge_allowing(parts, Allow::default())
}

/// [`merge`], accepting the provenance differences `allow` names.
pub fn merge_allowing(parts: &[Results], allow: Allow) -> Result<Results, ResultsError> {
    let names: Vec<String> = (1..=parts.len()).map(|i| format!("input {i}")).collect();
    merge_named(parts, &names, allow)
}

/// [`merge_allowing`] of parts named `names` (their files) in messages.
fn merge_named(parts: &[Results], names: &[String], allow: Allow) -> Result<Results, ResultsError> {
    // Parts scored differently are not one run, whatever else they hold.
    let provenance = joined_provenance(parts, allow)?;
    let mut samples: Vec<SampleRecord> = Vec::new();
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut terms: BTreeMap<String, DatasetTerms> = BTreeMap::new();
    if let Some(first) = parts.first()
        && let Some(other) = parts
            .iter()
            .find(|p| (&p.binary, &p.package) != (&first.binary, &first.package))
    {
        let shown = |r: &Results| match &r.package {
            Some(p) => format!("{p}/{}", r.binary),
            None => r.binary.clone(),
        };
        return Err(ResultsError::Binaries {
            first: shown(first),
            second: shown(other),
        });
    }
    for (i, part) in parts.iter().enumerate() {
        for s in &part.samples {
            if let Some(first) = seen.insert((&s.dataset, &s.test_name), i) {
                let name = |k: usize| {
                    names
                        .get(k)
                        .cloned()
                        .unwrap_or_else(|| format!("input {}", k + 1))
                };
                return Err(ResultsError::Overlap {
                    test_name: s.test_name.clone(),
                    dataset: s.dataset.clone(),
                    first: name(first),
                    second: name(i),
                });
            }
            samples.push(s.clone());
        }
        for (name, t) in part.terms() {
            match terms.get(&name) {
                None => {
                    terms.insert(name, t);
                }
                Some(have) => {
                    let asked = have.question_changes(&name, &t);
                    if !asked.is_empty() {
                        return Err(ResultsError::Questions {
                            dataset: name,
                            differences: asked.iter().map(ToString::to_string).collect(),
                        });
                    }
                    let conflict = if have.gates != t.gates {
                        Some("gates")
                    } else if have.planned != t.planned {
                        Some("sample counts")
                    } else if have.ci_gate != t.ci_gate {
                        Some("ci_gate settings")
                    } else if have.inconclusive != t.inconclusive {
                        Some("inconclusive settings")
                    } else if have.cluster != t.cluster {
                        Some("cluster fields")
                    } else {
                        None
                    };
                    if let Some(what) = conflict {
                        return Err(ResultsError::Plans {
                            dataset: name,
                            what,
                        });
                    }
                    if let Some(have) = terms.get_mut(&name) {
                        have.join_question(&t);
                    }
                }
            }
        }
    }
    let binary = parts.first().map_or("merged", |p| p.binary.as_str());
    let mut merged = Results::new(binary, samples, &terms);
    merged.package = parts.first().and_then(|p| p.package.clone());
    merged.provenance = provenance;
    // A join is incomplete whenever a part is, unless the others supply
    // what it lacks: a killed or filtered part does not become whole.
    merged.missing_datasets = super::integrity::missing_from_join(parts, names, &merged);
    merged.complete &= merged.missing_datasets.is_empty();
    Ok(merged)
}

/// The provenance of joined parts: each dataset once, the first part's
/// judge. Parts of one run agree on both; parts that do not are refused
/// unless `allow` accepts the difference.
fn joined_provenance(parts: &[Results], allow: Allow) -> Result<Option<Provenance>, ResultsError> {
    let mut out: Option<Provenance> = None;
    let mut refused = Vec::new();
    for p in parts.iter().filter_map(|p| p.provenance.as_ref()) {
        let Some(have) = &mut out else {
            out = Some(p.clone());
            continue;
        };
        // Parts may score different metrics (one dataset judged, another
        // not): compare the metrics both judged, and the judges themselves.
        let metrics: Vec<String> = match (&have.judge, &p.judge) {
            (Some(a), Some(b)) => a
                .metrics
                .keys()
                .filter(|m| b.metrics.contains_key(*m))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let d = p.differences(have, &metrics);
        if !allow.judge_change {
            refused.extend(d.judge);
            if let (Some(a), Some(b)) = (&have.judge, &p.judge)
                && metrics.is_empty()
                && !a.same_judge(b)
            {
                refused.push(format!("judge {} → {}", a.identity(), b.identity()));
            }
        }
        if !allow.dataset_change {
            refused.extend(d.datasets);
        }
        for ds in &p.datasets {
            if !have.datasets.iter().any(|h| h.name == ds.name) {
                have.datasets.push(ds.clone());
            }
        }
        match (&mut have.judge, &p.judge) {
            (None, _) => have.judge = p.judge.clone(),
            // Each judged metric once, with its versions.
            (Some(a), Some(b)) => {
                for (m, v) in &b.metrics {
                    a.metrics.entry(m.clone()).or_insert_with(|| v.clone());
                }
            }
            (Some(_), None) => {}
        }
        if have.embeddings.is_none() {
            have.embeddings = p.embeddings.clone();
        }
        // Each part records the calibrations of its own datasets.
        have.join_calibrations(&p.calibrations);
    }
    refused.dedup();
    if refused.is_empty() {
        Ok(out)
    } else {
        Err(ResultsError::Incomparable {
            differences: refused,
        })
    }
}

impl Results {
    /// The same run with inconclusive verdicts counted as `on` says (what
    /// `evals report merge --inconclusive` does): each inconclusive metric
    /// passes or not anew, each inconclusive sample is counted anew, and
    /// aggregates and gates are recomputed. Decided verdicts do not change.
    #[doc(hidden)]
    pub fn counting_inconclusive(&self, on: OnInconclusive) -> Results {
        let mut samples = self.samples.clone();
        for s in &mut samples {
            if s.verdict != Verdict::Inconclusive {
                continue;
            }
            for m in &mut s.metrics {
                if m.decision() == Some(Decision::Inconclusive) {
                    let estimate = m.score.is_some_and(|v| match m.op.as_str() {
                        "<=" => v <= m.threshold,
                        _ => v >= m.threshold,
                    });
                    m.passed = on.passes(Decision::Inconclusive, estimate);
                }
            }
            let passed = s.error.is_none() && s.metrics.iter().all(|m| m.passed);
            s.counted_as = super::results::counted_as(s.verdict, passed);
        }
        let terms = self
            .terms()
            .into_iter()
            .map(|(name, t)| (name, t.on_inconclusive(on)))
            .collect();
        let mut out = Results::new(&self.binary, samples, &terms);
        out.package = self.package.clone();
        out.provenance = self.provenance.clone();
        out.missing_datasets = self.missing_datasets.clone();
        out.complete = out.complete && self.complete;
        out
    }
}

/// Merges every `*.json` results file under each of `paths` (a file, or a
/// directory searched recursively).
pub fn merge_paths(paths: &[PathBuf]) -> Result<Results, ResultsError> {
    merge_paths_allowing(paths, Allow::default())
}

/// [`merge_paths`], accepting the provenance differences `allow` names.
pub fn merge_paths_allowing(paths: &[PathBuf], allow: Allow) -> Result<Results, ResultsError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect_json(path, &mut files).map_err(|source| ResultsError::Read {
                path: path.clone(),
                source,
            })?;
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        return Err(ResultsError::Empty(
            paths.first().cloned().unwrap_or_default(),
        ));
    }
    files.sort();
    files.dedup();
    let parts = files
        .iter()
        .map(|f| Results::read_consistent(f))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    merge_named(&parts, &names, allow)
}

/// Merges every `*.json` results file under `dir` (recursively).
pub fn merge_dir(dir: &Path) -> Result<Results, ResultsError> {
    merge_paths(&[dir.to_path_buf()])
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::results::{Gate, Verdict};
    use crate::output::test_record as record;

    fn part(name: &str, score: f64, planned: usize) -> Results {
        let gate = Gate::new("contains", eval_datasets::Op::AtLeast, 0.5);
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(planned), vec![gate], false),
        )]);
        let verdict = if score >= 1.0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        Results::new("evals", vec![record("rag", name, verdict)], &terms)
    }

    #[test]
    fn parts_merge_into_a_judged_whole() {
        let parts = [part("a", 1.0, 3), part("b", 0.0, 3), part("c", 0.0, 3)];
        for p in &parts {
            let g = p.datasets[0].metrics[0].gate.as_ref().unwrap();
            assert!(!g.judged, "one part of three is not the dataset");
        }
        let merged = merge(&parts).unwrap();
        assert!(merged.complete);
        let g = merged.datasets[0].metrics[0].gate.as_ref().unwrap();
        assert!(g.judged && !g.passed, "mean 1/3 < 0.5");
        assert_eq!(merged.failed_gates().len(), 1);

        let two = merge(&parts[..2]).unwrap();
        assert!(!two.complete, "a shard missing: still not judged");
        assert!(two.failed_gates().is_empty());

        let err = merge(&[parts[0].clone(), parts[0].clone()]).unwrap_err();
        assert!(
            err.to_string()
                .contains("is in results input 1 and input 2: the shards overlap"),
            "{err}"
        );
        // Read from files, the overlapping shards are named by their files.
        let dir = std::env::temp_dir().join(format!("eval-merge-overlap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (one, other) = (dir.join("shard-1.json"), dir.join("shard-2.json"));
        parts[0].write(&one).unwrap();
        parts[0].write(&other).unwrap();
        let err = super::merge_paths(&[one.clone(), other.clone()]).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            err.to_string().contains(&format!(
                "is in results {} and {}: the shards overlap",
                one.display(),
                other.display()
            )),
            "{err}"
        );
        let err = merge(&[part("a", 1.0, 3), part("b", 1.0, 4)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dataset rag has different sample counts in different results files"
        );
    }

    #[test]
    fn parts_that_asked_another_question_are_refused_naming_it() {
        use crate::output::results::WrittenMetric;
        let asked = |name: &str, threshold: f64, options: &str| {
            let mut r = part(name, 1.0, 2);
            let mut m = WrittenMetric::bare("contains", ">=", threshold);
            m.options = options.into();
            let terms = r
                .terms()
                .into_iter()
                .map(|(n, t)| (n, t.asking(vec![m.clone()], false)))
                .collect();
            r = Results::new("evals", r.samples, &terms);
            r
        };
        let merged = merge(&[asked("a", 1.0, ""), asked("b", 1.0, "")]).unwrap();
        assert_eq!(
            merged.datasets[0].metric_specs,
            [WrittenMetric::bare("contains", ">=", 1.0)]
        );
        let err = merge(&[asked("a", 1.0, ""), asked("b", 0.5, "")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dataset rag was asked different questions in different results files (`rag`: `contains` threshold changed, >= 1 → >= 0.5 (scores are compared as before; which samples pass is not comparable)): parts of one run ask the same"
        );
        let err = merge(&[
            asked("a", 1.0, ""),
            asked("b", 1.0, "case_sensitive = true"),
        ])
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`contains` options changed, (defaults) → case_sensitive = true"),
            "{err}"
        );
        // A part of an earlier version records no metrics: its gates are
        // compared, its metrics cannot be.
        let merged = merge(&[asked("a", 1.0, ""), part("b", 1.0, 2)]).unwrap();
        assert_eq!(merged.datasets[0].samples, 2);
        // Another gate is named too.
        let mut other = part("b", 1.0, 2);
        let terms = other
            .terms()
            .into_iter()
            .map(|(n, mut t)| {
                t.gates[0].threshold = 0.9;
                (n, t)
            })
            .collect();
        other = Results::new("evals", other.samples, &terms);
        let err = merge(&[part("a", 1.0, 2), other]).unwrap_err();
        assert!(
            err.to_string()
                .contains("gate changed, mean(contains) >= 0.5 → mean(contains) >= 0.9"),
            "{err}"
        );
    }

    /// Parts of one run where only some datasets were judged (one scored
    /// `relevance`, one `faithfulness`, one nothing judged).
    #[test]
    fn parts_judging_different_metrics_merge_and_keep_every_metrics_versions() {
        use crate::model::{JudgeFingerprint, MetricVersions, Provenance};
        let judged = |model: &str, metric: &str| Provenance {
            judge: Some(JudgeFingerprint {
                model: model.into(),
                host: "127.0.0.1:8000".into(),
                temperature: 0.0,
                seed: 42,
                metrics: BTreeMap::from([(
                    metric.to_string(),
                    MetricVersions {
                        prompts: BTreeMap::from([(format!("rating/{metric}"), 1)]),
                        definition: 1,
                        criteria_sha256: None,
                        steps_sha256: None,
                    },
                )]),
            }),
            ..Provenance::default()
        };
        let with = |name: &str, p: Option<Provenance>| {
            let mut r = part(name, 1.0, 3);
            r.provenance = p;
            r
        };
        let parts = [
            with("a", Some(judged("m", "relevance"))),
            with("b", Some(judged("m", "faithfulness"))),
            with("c", Some(Provenance::default())),
        ];
        let merged = merge(&parts).expect("one judge, different metrics: one run");
        let judge = merged.provenance.unwrap().judge.unwrap();
        assert_eq!(
            judge.metrics.keys().collect::<Vec<_>>(),
            ["faithfulness", "relevance"]
        );
        // Another judge for another metric: the merged file could not say
        // which judge scored what, so it is refused like any judge change.
        let other = [
            with("a", Some(judged("m", "relevance"))),
            with("b", Some(judged("other", "faithfulness"))),
        ];
        let err = merge(&other).unwrap_err().to_string();
        assert!(
            err.contains(
                "judge m at 127.0.0.1:8000 (temperature 0, seed 42) → other at 127.0.0.1:8000"
            ),
            "{err}"
        );
        // One calibration attached to a dataset of each part: once in the
        // join, naming both; another part's own calibration kept too.
        let calibrated = |dataset: &str, labels: &str| {
            let mut p = judged("m", "faithfulness");
            p.calibrations = vec![crate::model::CalibrationSummary {
                metric: "faithfulness".into(),
                spec: "faithfulness >= 0.8".into(),
                kappa: Some(0.5),
                kappa_interval: None,
                accuracy: 0.8,
                samples: 20,
                labels: labels.into(),
                labels_sha256: Some(format!("{labels}-hash")),
                datasets: vec![dataset.into()],
                written_unix: 1.0,
            }];
            p
        };
        let parts = [
            with("a", Some(calibrated("a", "labels.jsonl"))),
            with("b", Some(calibrated("b", "labels.jsonl"))),
            with("c", Some(calibrated("c", "other.jsonl"))),
        ];
        let joined = merge(&parts).unwrap().provenance.unwrap().calibrations;
        let shown: Vec<(&str, Vec<&str>)> = joined
            .iter()
            .map(|c| {
                let datasets = c.datasets.iter().map(String::as_str).collect();
                (c.labels.as_str(), datasets)
            })
            .collect();
        assert_eq!(
            shown,
            [("labels.jsonl", vec!["a", "b"]), ("other.jsonl", vec!["c"])]
        );
    }

    #[test]
    fn percentile_gates_are_judged_over_the_joined_shards() {
        use eval_datasets::metric::Stat;
        // Latencies 10, 20, 30, 40 ms in two shards of two. Definition 7
        // (h = (n − 1)·q): p50 → h = 1.5 → 20 + 0.5·10 = 25;
        // p95 → h = 2.85 → 30 + 0.85·10 = 38.5.
        let gates = vec![
            Gate::new("latency_ms", eval_datasets::Op::AtMost, 25.0)
                .with_stat(Stat::Percentile(50)),
            Gate::new("latency_ms", eval_datasets::Op::AtMost, 38.0)
                .with_stat(Stat::Percentile(95)),
        ];
        let terms = BTreeMap::from([("rag".to_string(), DatasetTerms::new(Some(4), gates, false))]);
        let shard = |names: &[(&str, f64)]| {
            let samples = names
                .iter()
                .map(|(n, ms)| {
                    let mut r = record("rag", n, Verdict::Pass);
                    r.latency_ms = *ms;
                    r
                })
                .collect();
            Results::new("evals", samples, &terms)
        };
        let one = shard(&[("a", 40.0), ("b", 10.0)]);
        let two = shard(&[("c", 30.0), ("d", 20.0)]);
        let latency = |r: &Results| {
            r.datasets[0]
                .metrics
                .iter()
                .find(|m| m.name == "latency_ms")
                .cloned()
                .unwrap()
        };
        assert!(latency(&one).gates().all(|g| !g.judged), "half the dataset");
        let merged = merge(&[one, two]).unwrap();
        let m = latency(&merged);
        let gates: Vec<_> = m.gates().collect();
        assert_eq!(gates.len(), 2);
        assert!(gates[0].judged && gates[0].passed, "p50 = 25 <= 25");
        assert_eq!(gates[0].margin, Some(0.0));
        assert!(gates[1].judged && !gates[1].passed, "p95 = 38.5 > 38");
        assert!((gates[1].margin.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(
            gates[1].to_string(),
            "p95 latency_ms = 38.5000 (95% interval 30.0000..unbounded), gate <= 38 (missed by 0.5000; inconclusive: its interval straddles the threshold)"
        );
        assert_eq!(merged.failed_gates().len(), 1);
        // The mean of what was measured, and no pass rate (no per-sample budget).
        assert_eq!((m.scored, m.mean, m.pass_rate), (4, Some(25.0), None));

        // A sample that could not be scored misses every gate, met or not.
        let mut broken = shard(&[("c", 30.0)]);
        broken.samples.push({
            let mut r = record("rag", "d", Verdict::Error);
            r.latency_ms = 1.0;
            r
        });
        let merged = merge(&[shard(&[("a", 40.0), ("b", 10.0)]), broken]).unwrap();
        let m = latency(&merged);
        assert!(m.gates().all(|g| g.judged && !g.passed && g.unscored == 1));
        // p50 of the three scored samples (10, 30, 40) is 30.
        assert_eq!(m.gate.as_ref().unwrap().margin, Some(5.0));
    }

    #[test]
    fn directories_merge_recursively() {
        let dir = std::env::temp_dir().join(format!("eval-merge-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        part("a", 1.0, 2).write(&dir.join("run/a.json")).unwrap();
        part("b", 1.0, 2)
            .write(&dir.join("run/deeper/b.json"))
            .unwrap();
        let merged = merge_dir(&dir).unwrap();
        assert_eq!(merged.samples.len(), 2);
        assert!(merged.complete && merged.failed_gates().is_empty());
        let empty = dir.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(matches!(merge_dir(&empty), Err(ResultsError::Empty(_))));
        let _ = std::fs::remove_dir_all(dir);
    }
}
