//! The reader's view of a results file: what a test author asks of a run
//! written earlier (the samples, each one's verdict and scores, the run's
//! verdict). The records' fields are the file's keys, documented in the
//! guide's "Results files" chapter; they are hidden in the API so the
//! format can grow without breaking readers, who use these methods.

use super::{Results, RunVerdict, SampleRecord, Verdict};

impl Results {
    /// Every sample's record, in the file's order.
    pub fn samples(&self) -> &[SampleRecord] {
        &self.samples
    }

    /// The verdict the file itself holds: its gates and its failed,
    /// inconclusive and unscored samples. A baseline's regressions are not
    /// in it (a run compared with one says so in its outcome), and a run
    /// that did not finish can still pass: check [`Results::is_complete`]
    /// too, as `evals report summary` does.
    pub fn verdict(&self) -> RunVerdict {
        RunVerdict::of(&self.datasets)
    }

    /// Whether every planned sample ran (a killed or filtered run is not
    /// complete, and says why in [`Results::incompleteness`]).
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}

impl SampleRecord {
    /// The test's name (`<fn>::<key>__<tag>__`).
    pub fn test_name(&self) -> &str {
        &self.test_name
    }

    /// The sample's id in its dataset.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The dataset the sample is from.
    pub fn dataset(&self) -> &str {
        &self.dataset
    }

    /// The sample's verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The agent's answer (its last turn's), when it answered, cut to
    /// `KEPT_CHARS` (500) characters; files of earlier versions keep it
    /// only for samples that did not pass.
    pub fn output(&self) -> Option<&str> {
        self.output.as_deref()
    }

    /// The score of the metric named `metric`, when it was scored.
    pub fn score(&self, metric: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == metric)
            .and_then(|m| m.score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reads_back_through_the_readers_view() {
        let record: SampleRecord = serde_json::from_value(serde_json::json!({
            "dataset": "qa", "test_name": "qa::capital", "id": "1", "source": "qa.jsonl:1",
            "verdict": "fail", "latency_ms": 1.0, "output": "Lyon",
            "metrics": [{"name": "contains", "score": 0.0, "threshold": 1.0, "op": ">=", "passed": false}]
        }))
        .unwrap();
        let results = Results::new("evals", vec![record], &Default::default());
        let sample = &results.samples()[0];
        assert_eq!(
            (sample.test_name(), sample.id(), sample.dataset()),
            ("qa::capital", "1", "qa")
        );
        assert_eq!(sample.verdict(), Verdict::Fail);
        assert_eq!(sample.output(), Some("Lyon"));
        assert_eq!(sample.score("contains"), Some(0.0));
        assert_eq!(sample.score("faithfulness"), None);
        let verdict = results.verdict();
        assert!(!verdict.passed(), "a failed sample fails the run");
        assert_eq!((verdict.samples, verdict.failed_samples), (1, 1));
    }
}
