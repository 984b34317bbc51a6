//! The results file: every run writes one JSON document with a record per
//! sample and, per dataset and metric, the mean, the pass rate and the
//! verdict of each gate. It says whether the run was complete: a dataset is
//! complete when every sample the plan holds for it is in the file, and
//! gates are judged only over complete datasets.
//!
//! Where it goes is [`location`](super::location)'s business; joining parts
//! and shards is [`merge`](super::merge()).

use std::path::Path;

use serde::Serialize;

pub use crate::model::{
    DatasetSummary, DatasetTerms, FORMAT_VERSION, Gate, GateResult, KEPT_CHARS, KEPT_CHUNKS,
    MetricRecord, MetricSummary, Results, ResultsError, RunSpread, SampleRecord, UsageTotals,
    Verdict, WrittenMetric, failed_gates, total_usage,
};
pub(crate) use crate::model::{counted_as, incompleteness, now_unix};

impl Results {
    /// Writes the file atomically: readers see the old file or the new one.
    #[doc(hidden)]
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        super::write_json(path, self)
    }

    /// Reads a results file.
    pub fn read(path: &Path) -> Result<Results, ResultsError> {
        let bytes = eval_datasets::files::read_checked(
            path,
            eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
        )
        .map_err(|e| ResultsError::Read {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let results: Results =
            serde_json::from_slice(&bytes).map_err(|source| ResultsError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
        if results.version != FORMAT_VERSION {
            return Err(ResultsError::Version {
                path: path.to_path_buf(),
                found: results.version,
            });
        }
        Ok(results)
    }
}

/// Writes a results file whose samples come from an iterator, one at a time
/// (same layout as [`Results`]), atomically: a run of a million samples never
/// holds all its records at once.
pub(crate) fn write_streaming(
    path: &Path,
    (binary, package): (&str, Option<&str>),
    (datasets, complete, missing): (&[DatasetSummary], bool, &[String]),
    provenance: Option<&crate::model::Provenance>,
    samples: impl Iterator<Item = impl Serialize>,
) -> Result<(), ResultsError> {
    struct Seq<I>(std::cell::RefCell<Option<I>>);
    impl<I: Iterator<Item: Serialize>> Serialize for Seq<I> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            match self.0.borrow_mut().take() {
                Some(iter) => s.collect_seq(iter),
                None => s.collect_seq(std::iter::empty::<SampleRecord>()),
            }
        }
    }
    #[derive(Serialize)]
    #[serde(bound = "")]
    struct Streamed<'a, I: Iterator<Item: Serialize>> {
        version: u32,
        binary: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        package: Option<&'a str>,
        written_unix: f64,
        complete: bool,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        missing_datasets: &'a [String],
        #[serde(skip_serializing_if = "Option::is_none")]
        provenance: Option<&'a crate::model::Provenance>,
        datasets: &'a [DatasetSummary],
        #[serde(skip_serializing_if = "UsageTotals::is_empty")]
        usage: UsageTotals,
        samples: Seq<I>,
    }
    let doc = Streamed {
        version: FORMAT_VERSION,
        binary,
        package,
        written_unix: now_unix(),
        complete: complete && missing.is_empty(),
        missing_datasets: missing,
        provenance,
        datasets,
        usage: total_usage(datasets),
        samples: Seq(std::cell::RefCell::new(Some(samples))),
    };
    super::write_json(path, &doc)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use eval_datasets::metric::{Op, Stat};

    use super::*;
    use crate::output::test_record as record;

    fn gate(threshold: f64) -> Gate {
        Gate::new("contains", Op::AtLeast, threshold)
    }

    #[test]
    fn aggregates_and_gates_over_a_complete_dataset() {
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(2), vec![gate(0.75)], false),
        )]);
        let a = Results::new(
            "evals",
            vec![
                record("rag", "a", Verdict::Pass),
                record("rag", "b", Verdict::Fail),
            ],
            &terms,
        );
        assert!(a.complete);
        let d = &a.datasets[0];
        assert_eq!((d.samples, d.passed, d.failed, d.errors), (2, 1, 1, 0));
        assert_eq!(d.metrics[0].mean, Some(0.5));
        assert_eq!(d.metrics[0].pass_rate, Some(0.5));
        let g = d.metrics[0].gate.as_ref().unwrap();
        assert!(g.judged && !g.passed);
        assert_eq!(g.margin, Some(-0.25));
        assert_eq!(
            g.to_string(),
            "mean contains = 0.5000 (95% interval 0.0126..0.9874), gate >= 0.75 (missed by 0.2500; inconclusive: its interval straddles the threshold)"
        );
        assert_eq!(a.failed_gates().len(), 1);
    }

    #[test]
    fn a_gate_over_part_of_a_dataset_is_not_judged() {
        let terms = BTreeMap::from([(
            "rag".to_string(),
            DatasetTerms::new(Some(3), vec![gate(0.9)], false),
        )]);
        let part = Results::new("evals", vec![record("rag", "a", Verdict::Fail)], &terms);
        assert!(!part.complete);
        let d = &part.datasets[0];
        assert!(!d.complete);
        let g = d.metrics[0].gate.as_ref().unwrap();
        assert!(!g.judged && !g.passed);
        assert_eq!(
            g.to_string(),
            "gate contains >= 0.9 not judged: 1 of 3 samples ran (gates judge whole datasets only)"
        );
        assert!(part.failed_gates().is_empty(), "not judged is not failed");
        assert!(!d.gates_passed);
    }

    #[test]
    fn gates_of_earlier_files_are_on_the_mean() {
        let old: Gate =
            serde_json::from_str(r#"{"metric": "contains", "op": ">=", "threshold": 0.5}"#)
                .unwrap();
        assert_eq!(old, gate(0.5));
        assert_eq!(old.stat, Stat::Mean);
        let p95 = Gate::new("latency_ms", Op::AtMost, 3000.0).with_stat(Stat::Percentile(95));
        let text = serde_json::to_string(&p95).unwrap();
        assert!(text.contains(r#""stat":"p95""#), "{text}");
        assert_eq!(serde_json::from_str::<Gate>(&text).unwrap(), p95);
        assert_eq!(p95.to_string(), "p95(latency_ms) <= 3000");
    }

    #[test]
    fn atomic_write_and_read_back() {
        let dir = std::env::temp_dir().join(format!("eval-results-test-{}", std::process::id()));
        let path = dir.join("x/evals.json");
        let r = Results::new(
            "evals",
            vec![record("rag", "a", Verdict::Pass)],
            &BTreeMap::new(),
        );
        r.write(&path).unwrap();
        assert_eq!(Results::read(&path).unwrap(), r);
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
        std::fs::write(&path, b"{}").unwrap();
        assert!(
            Results::read(&path)
                .unwrap_err()
                .to_string()
                .contains("is not a results file")
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
