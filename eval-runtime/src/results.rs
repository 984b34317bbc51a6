//! The results file: every run writes one JSON document with a record per
//! sample and, per dataset and metric, the mean, the pass rate and the verdict
//! of any aggregate gate. Written atomically (temporary file, then rename).
//!
//! Where: `$EVAL_RESULTS_DIR`, else `<cargo target dir>/evals/`, named after the
//! test binary (`target/evals/evals.json` for `tests/evals.rs`). Under
//! `cargo nextest run`, where every test is its own process, each process
//! writes its part under `<dir>/<binary>.parts/<run id>/`; [`merge`] (and
//! [`merge_dir`]) join parts and shards into one [`Results`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use eval_core::metric::{MetricSpec, Op};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::SampleReport;

/// Version of the results-file layout.
pub const FORMAT_VERSION: u32 = 1;

/// A whole run (or several merged runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Results {
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// Test binary (or harness) that produced it.
    pub binary: String,
    /// When the file was written, seconds since the Unix epoch.
    pub written_unix: f64,
    /// Per-dataset aggregates, by dataset name.
    pub datasets: Vec<DatasetSummary>,
    /// One record per evaluated sample, sorted by dataset then test name.
    pub samples: Vec<SampleRecord>,
}

/// Outcome of one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every metric passed.
    Pass,
    /// A metric was on the wrong side of its threshold.
    Fail,
    /// The sample could not be scored (agent error, missing field...).
    Error,
}

impl Verdict {
    /// The verdict of a report.
    pub fn of(report: &SampleReport) -> Verdict {
        if report.error.is_some() {
            Verdict::Error
        } else if report.passed() {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// The part of a failing output kept in results files (500 characters).
pub(crate) fn cut_output(output: &str) -> String {
    output.chars().take(500).collect()
}

/// One metric on one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricRecord {
    /// Metric name.
    pub name: String,
    /// Score, when computed.
    pub score: Option<f64>,
    /// `>=` or `<=`.
    pub op: String,
    /// Threshold.
    pub threshold: f64,
    /// Whether the score met the threshold.
    pub passed: bool,
    /// Why no score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How it was scored when not by the metric's primary method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The value in the metric's original direction when the score is flipped
    /// (deepeval toxicity and bias), or the 1–5 rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<f64>,
    /// Over repeated runs: `[runs, low, high]` of the 95% interval around the
    /// score (the mean), and whether it straddles the threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<RunSpread>,
}

/// A metric's spread over repeated runs, in a results file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunSpread {
    /// Runs.
    pub runs: usize,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// The interval contains the threshold.
    pub straddles: bool,
}

impl From<crate::report::Spread> for RunSpread {
    fn from(s: crate::report::Spread) -> Self {
        RunSpread {
            runs: s.runs,
            low: s.low,
            high: s.high,
            straddles: s.straddles,
        }
    }
}

/// One evaluated sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SampleRecord {
    /// Dataset name (the eval function, or the harness dataset name).
    pub dataset: String,
    /// Full test name.
    pub test_name: String,
    /// Sample id.
    pub id: String,
    /// `file:line`.
    pub source: String,
    /// Pass, fail or error.
    pub verdict: Verdict,
    /// Per-metric scores.
    pub metrics: Vec<MetricRecord>,
    /// Time in the agent, milliseconds.
    pub latency_ms: f64,
    /// Why the sample could not be scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent's output, for samples that did not pass (cut to 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Judge and embedding calls made to score it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage: crate::service::Usage,
}

fn is_zero(u: &crate::service::Usage) -> bool {
    *u == crate::service::Usage::default()
}

impl SampleRecord {
    /// The persisted form of a report.
    pub fn from_report(dataset: &str, report: &SampleReport) -> Self {
        let verdict = Verdict::of(report);
        SampleRecord {
            dataset: dataset.to_string(),
            test_name: report.test_name.clone(),
            id: report.id.clone(),
            source: report.source.to_string(),
            verdict,
            metrics: report
                .metrics
                .iter()
                .map(|m| MetricRecord {
                    name: m.name.clone(),
                    score: m.score,
                    op: m.op.to_string(),
                    threshold: m.threshold,
                    passed: m.passed,
                    error: m.error.clone(),
                    method: m.method.map(str::to_string),
                    raw: m.raw,
                    spread: m.spread.map(RunSpread::from),
                })
                .collect(),
            latency_ms: report.latency.as_secs_f64() * 1000.0,
            error: report.error.clone(),
            output: match (&report.output, verdict) {
                (Some(out), Verdict::Fail) => Some(cut_output(out)),
                _ => None,
            },
            usage: report.usage,
        }
    }
}

/// An aggregate gate: the mean of a metric over a dataset's samples must be
/// on the right side of a threshold (agentspec's `ciGate` meaning).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Gate {
    /// Metric name.
    pub metric: String,
    /// `>=` or `<=`.
    pub op: String,
    /// Threshold on the mean.
    pub threshold: f64,
}

impl Gate {
    /// A gate on the mean of `spec`'s metric, with `spec`'s operator and threshold.
    pub fn from_spec(spec: &MetricSpec) -> Self {
        Gate {
            metric: spec.name.clone(),
            op: spec.op.to_string(),
            threshold: spec.threshold,
        }
    }

    /// A gate on the mean of `metric`.
    pub fn new(metric: &str, op: Op, threshold: f64) -> Self {
        Gate {
            metric: metric.to_string(),
            op: op.to_string(),
            threshold,
        }
    }

    fn passes(&self, mean: f64) -> bool {
        if self.op == Op::AtMost.to_string() {
            mean <= self.threshold
        } else {
            mean >= self.threshold
        }
    }
}

/// A gate's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GateResult {
    /// The gate.
    #[serde(flatten)]
    pub gate: Gate,
    /// Whether the mean met it (false when no sample was scored).
    pub passed: bool,
    /// `mean - threshold` (negative = short of a minimum), when there is a mean.
    pub margin: Option<f64>,
    /// Samples of the dataset that could not be scored: any fails the gate.
    #[serde(default)]
    pub unscored: usize,
}

/// Aggregates of one metric over one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricSummary {
    /// Metric name.
    pub name: String,
    /// Samples with a score.
    pub scored: usize,
    /// Mean score over scored samples.
    pub mean: Option<f64>,
    /// Share of scored samples that passed the per-sample threshold.
    pub pass_rate: Option<f64>,
    /// The aggregate gate on this metric, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateResult>,
}

/// Aggregates of one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSummary {
    /// Dataset name.
    pub name: String,
    /// Samples evaluated.
    pub samples: usize,
    /// Samples that passed.
    pub passed: usize,
    /// Samples with a failing metric.
    pub failed: usize,
    /// Samples that could not be scored.
    pub errors: usize,
    /// Per metric, in first-seen order.
    pub metrics: Vec<MetricSummary>,
    /// Gates declared for this dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    /// True when every gate passed (true when there are none).
    pub gates_passed: bool,
}

impl Results {
    /// Results for `samples`, with `gates` per dataset name; aggregates computed here.
    pub fn new(
        binary: &str,
        mut samples: Vec<SampleRecord>,
        gates: &BTreeMap<String, Vec<Gate>>,
    ) -> Self {
        samples.sort_by(|a, b| (&a.dataset, &a.test_name).cmp(&(&b.dataset, &b.test_name)));
        let mut summaries = Summaries::default();
        samples.iter().for_each(|s| summaries.add(s));
        let datasets = summaries.finish(gates);
        Results {
            version: FORMAT_VERSION,
            binary: binary.to_string(),
            written_unix: now_unix(),
            datasets,
            samples,
        }
    }

    /// The gates that failed, as `(dataset, gate result)`.
    pub fn failed_gates(&self) -> Vec<(&str, &GateResult)> {
        failed_gates(&self.datasets)
    }

    /// Writes the file atomically: a temporary file beside it, then a rename.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomically(path, |out| {
            serde_json::to_writer_pretty(out, self).map_err(std::io::Error::other)
        })
    }

    /// Reads a results file.
    pub fn read(path: &Path) -> Result<Results> {
        let bytes = std::fs::read(path).map_err(|e| Error::Config {
            what: format!("results file {}", path.display()),
            reason: e.to_string(),
        })?;
        let results: Results = serde_json::from_slice(&bytes).map_err(|e| Error::Config {
            what: format!("results file {}", path.display()),
            reason: format!("not a results file: {e}"),
        })?;
        if results.version != FORMAT_VERSION {
            return Err(Error::Config {
                what: format!("results file {}", path.display()),
                reason: format!(
                    "layout version {} (this version reads {FORMAT_VERSION})",
                    results.version
                ),
            });
        }
        Ok(results)
    }
}

impl fmt::Display for GateResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = &self.gate;
        if self.unscored > 0 {
            write!(
                f,
                "{} sample(s) could not be scored, so the gate is missed; ",
                self.unscored
            )?;
        }
        match self.margin {
            Some(m) => write!(
                f,
                "mean {} = {:.4}, gate {} {} ({} by {:.4})",
                g.metric,
                g.threshold + m,
                g.op,
                g.threshold,
                if self.passed { "met" } else { "missed" },
                m.abs()
            ),
            None => write!(
                f,
                "mean {}: no sample was scored, gate {} {} missed",
                g.metric, g.op, g.threshold
            ),
        }
    }
}

/// The gates that failed in `datasets`, as `(dataset, gate result)`.
pub fn failed_gates(datasets: &[DatasetSummary]) -> Vec<(&str, &GateResult)> {
    datasets
        .iter()
        .flat_map(|d| {
            d.metrics
                .iter()
                .filter_map(|m| m.gate.as_ref())
                .filter(|g| !g.passed)
                .map(move |g| (d.name.as_str(), g))
        })
        .collect()
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Running per-dataset, per-metric tallies: records are added one at a time,
/// so a huge run never needs all its records at once.
#[derive(Default)]
pub(crate) struct Summaries {
    datasets: BTreeMap<String, Tally>,
}

#[derive(Default)]
struct Tally {
    samples: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    /// (name, scored, sum, passed), in first-seen order.
    metrics: Vec<(String, usize, f64, usize)>,
}

impl Summaries {
    pub(crate) fn add(&mut self, record: &SampleRecord) {
        let t = self.datasets.entry(record.dataset.clone()).or_default();
        t.samples += 1;
        match record.verdict {
            Verdict::Pass => t.passed += 1,
            Verdict::Fail => t.failed += 1,
            Verdict::Error => t.errors += 1,
        }
        for m in &record.metrics {
            let i = match t.metrics.iter().position(|(n, ..)| *n == m.name) {
                Some(i) => i,
                None => {
                    t.metrics.push((m.name.clone(), 0, 0.0, 0));
                    t.metrics.len() - 1
                }
            };
            if let Some(score) = m.score {
                let entry = &mut t.metrics[i];
                entry.1 += 1;
                entry.2 += score;
                entry.3 += usize::from(m.passed);
            }
        }
    }

    /// One summary per dataset with evaluated samples, by name. Gates of
    /// datasets none of whose samples ran (filtered out, another shard) are
    /// not judged here.
    pub(crate) fn finish(self, gates: &BTreeMap<String, Vec<Gate>>) -> Vec<DatasetSummary> {
        self.datasets
            .into_iter()
            .map(|(name, mut t)| {
                let gates = gates.get(&name).cloned().unwrap_or_default();
                for g in &gates {
                    if !t.metrics.iter().any(|(n, ..)| *n == g.metric) {
                        t.metrics.push((g.metric.clone(), 0, 0.0, 0));
                    }
                }
                let metrics: Vec<MetricSummary> = t
                    .metrics
                    .into_iter()
                    .map(|(metric, n, sum, passed)| {
                        let mean = (n > 0).then(|| sum / n as f64);
                        // A sample that could not be scored must not vanish from a gate.
                        let gate = gates
                            .iter()
                            .find(|g| g.metric == metric)
                            .map(|g| GateResult {
                                gate: g.clone(),
                                passed: t.errors == 0 && mean.is_some_and(|m| g.passes(m)),
                                margin: mean.map(|m| m - g.threshold),
                                unscored: t.errors,
                            });
                        MetricSummary {
                            name: metric,
                            scored: n,
                            mean,
                            pass_rate: (n > 0).then(|| passed as f64 / n as f64),
                            gate,
                        }
                    })
                    .collect();
                DatasetSummary {
                    name,
                    samples: t.samples,
                    passed: t.passed,
                    failed: t.failed,
                    errors: t.errors,
                    gates_passed: metrics
                        .iter()
                        .all(|m| m.gate.as_ref().is_none_or(|g| g.passed)),
                    metrics,
                    gates,
                }
            })
            .collect()
    }
}

/// Writes a results file whose samples come from an iterator, one at a time
/// (same layout as [`Results`]), atomically.
pub(crate) fn write_streaming(
    path: &Path,
    binary: &str,
    datasets: &[DatasetSummary],
    samples: impl Iterator<Item = SampleRecord>,
) -> Result<()> {
    struct Seq<I>(std::cell::RefCell<Option<I>>);
    impl<I: Iterator<Item = SampleRecord>> Serialize for Seq<I> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            match self.0.borrow_mut().take() {
                Some(iter) => s.collect_seq(iter),
                None => s.collect_seq(std::iter::empty::<SampleRecord>()),
            }
        }
    }
    #[derive(Serialize)]
    #[serde(bound = "")]
    struct Streamed<'a, I: Iterator<Item = SampleRecord>> {
        version: u32,
        binary: &'a str,
        written_unix: f64,
        datasets: &'a [DatasetSummary],
        samples: Seq<I>,
    }
    let doc = Streamed {
        version: FORMAT_VERSION,
        binary,
        written_unix: now_unix(),
        datasets,
        samples: Seq(std::cell::RefCell::new(Some(samples))),
    };
    write_atomically(path, |out| {
        serde_json::to_writer_pretty(out, &doc).map_err(std::io::Error::other)
    })
}

/// Writes through a temporary file beside `path`, then renames it over `path`.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let io = |e: std::io::Error| Error::Config {
        what: format!("results file {}", path.display()),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension(format!("json.tmp.{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|file| {
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        std::io::Write::flush(&mut out)?;
        out.get_ref().sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// Joins results (shards of one run, or the per-test parts nextest leaves):
/// every sample once, aggregates and gates recomputed over all of them. A
/// sample present in two inputs is an error (shards overlap), and so are
/// different gates for one dataset.
pub fn merge(parts: &[Results]) -> Result<Results> {
    let mut samples: Vec<SampleRecord> = Vec::new();
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut gates: BTreeMap<String, Vec<Gate>> = BTreeMap::new();
    if let Some(first) = parts.first()
        && let Some(other) = parts.iter().find(|p| p.binary != first.binary)
    {
        return Err(Error::msg(format!(
            "results of different test binaries ({} and {}): merge each binary's results on its own",
            first.binary, other.binary
        )));
    }
    for (i, part) in parts.iter().enumerate() {
        for s in &part.samples {
            let key = (s.dataset.clone(), s.test_name.clone());
            if let Some(first) = seen.insert(key, i) {
                return Err(Error::msg(format!(
                    "sample {} of dataset {} is in results {first} and {i}: the shards overlap",
                    s.test_name, s.dataset
                )));
            }
            samples.push(s.clone());
        }
        for d in &part.datasets {
            match gates.get(&d.name) {
                Some(existing)
                    if *existing != d.gates && !d.gates.is_empty() && !existing.is_empty() =>
                {
                    return Err(Error::msg(format!(
                        "dataset {} has different gates in different results files",
                        d.name
                    )));
                }
                Some(existing) if !existing.is_empty() => {}
                _ => {
                    gates.insert(d.name.clone(), d.gates.clone());
                }
            }
        }
    }
    let binary = parts.first().map_or("merged", |p| p.binary.as_str());
    Ok(Results::new(binary, samples, &gates))
}

/// Merges every `*.json` results file under `dir` (recursively).
pub fn merge_dir(dir: &Path) -> Result<Results> {
    let mut files = Vec::new();
    collect_json(dir, &mut files).map_err(|e| Error::Config {
        what: format!("results directory {}", dir.display()),
        reason: e.to_string(),
    })?;
    files.sort();
    let parts = files
        .iter()
        .map(|f| Results::read(f))
        .collect::<Result<Vec<_>>>()?;
    merge(&parts)
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

/// The directory results go to: `$EVAL_RESULTS_DIR`, else `evals/` in the
/// cargo target directory holding the running binary, else the temp dir.
pub fn results_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("EVAL_RESULTS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Ok(exe) = std::env::current_exe() {
        // cargo marks its target directory with CACHEDIR.TAG.
        for dir in exe.ancestors().skip(1) {
            if dir.join("CACHEDIR.TAG").is_file() {
                return dir.join("evals");
            }
        }
        // An unpacked nextest archive has no tag: `<target>/<profile>/deps/<exe>`.
        let mut up = exe.ancestors().skip(1);
        if let (Some(deps), Some(_profile), Some(target)) = (up.next(), up.next(), up.next())
            && deps.file_name().is_some_and(|n| n == "deps")
        {
            return target.join("evals");
        }
    }
    std::env::temp_dir().join("evals")
}

/// Where one test's part goes under `cargo nextest run`:
/// `<results dir>/<binary>.parts/<run id>/<test>.json`. The first process of
/// a new run removes the parts of earlier runs, so the directory always holds
/// one run.
pub fn part_path(binary: &str, test_name: &str) -> PathBuf {
    let run = std::env::var("NEXTEST_RUN_ID").unwrap_or_else(|_| "run".into());
    let parts = results_dir().join(format!("{binary}.parts"));
    let dir = parts.join(file_safe(&run));
    if !dir.exists()
        && let Ok(entries) = std::fs::read_dir(&parts)
    {
        for e in entries.flatten() {
            if e.path() != dir && e.path().is_dir() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    dir.join(format!("{}.json", file_safe(test_name)))
}

/// The running test binary's name without cargo's `-<hash>` suffix.
pub fn binary_name() -> String {
    let stem = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "evals".into());
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_string()
        }
        _ => stem,
    }
}

/// A file-name-safe form of a test name.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '.'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(dataset: &str, name: &str, score: f64, passed: bool) -> SampleRecord {
        SampleRecord {
            dataset: dataset.into(),
            test_name: name.into(),
            id: name.into(),
            source: "f.jsonl:1".into(),
            verdict: if passed { Verdict::Pass } else { Verdict::Fail },
            metrics: vec![MetricRecord {
                name: "contains".into(),
                score: Some(score),
                op: ">=".into(),
                threshold: 1.0,
                passed,
                error: None,
                method: None,
                raw: None,
                spread: None,
            }],
            latency_ms: 1.0,
            error: None,
            output: None,
            usage: Default::default(),
        }
    }

    #[test]
    fn aggregates_gates_and_merge() {
        let gate = Gate {
            metric: "contains".into(),
            op: ">=".into(),
            threshold: 0.75,
        };
        let gates = BTreeMap::from([("rag".to_string(), vec![gate])]);
        let a = Results::new(
            "evals",
            vec![
                record("rag", "a", 1.0, true),
                record("rag", "b", 0.0, false),
            ],
            &gates,
        );
        let d = &a.datasets[0];
        assert_eq!((d.samples, d.passed, d.failed, d.errors), (2, 1, 1, 0));
        assert_eq!(d.metrics[0].mean, Some(0.5));
        assert_eq!(d.metrics[0].pass_rate, Some(0.5));
        let g = d.metrics[0].gate.as_ref().unwrap();
        assert!(!g.passed);
        assert_eq!(g.margin, Some(-0.25));
        assert_eq!(
            g.to_string(),
            "mean contains = 0.5000, gate >= 0.75 (missed by 0.2500)"
        );
        assert_eq!(a.failed_gates().len(), 1);

        let b = Results::new(
            "evals",
            vec![record("rag", "c", 1.0, true), record("rag", "d", 1.0, true)],
            &gates,
        );
        let merged = merge(&[a.clone(), b]).unwrap();
        assert_eq!(merged.samples.len(), 4);
        assert_eq!(merged.datasets[0].metrics[0].mean, Some(0.75));
        assert!(merged.datasets[0].gates_passed);
        assert!(merged.failed_gates().is_empty());

        let err = merge(&[a.clone(), a]).unwrap_err().to_string();
        assert!(err.contains("the shards overlap"), "{err}");
    }

    #[test]
    fn gates_of_datasets_that_did_not_run_are_not_judged_and_parts_merge() {
        let gate = Gate {
            metric: "contains".into(),
            op: ">=".into(),
            threshold: 0.9,
        };
        let gates = BTreeMap::from([
            ("rag".to_string(), vec![gate.clone()]),
            ("faq".to_string(), vec![]),
        ]);
        let part = |name: &str, passed: bool| {
            Results::new(
                "evals",
                vec![record("rag", name, if passed { 1.0 } else { 0.0 }, passed)],
                &gates,
            )
        };
        let faq_only = Results::new("evals", vec![record("faq", "x", 1.0, true)], &gates);
        assert_eq!(
            faq_only.datasets.len(),
            1,
            "rag did not run: no summary, no gate"
        );
        assert!(faq_only.failed_gates().is_empty());

        let dir = std::env::temp_dir().join(format!("eval-parts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        part("a", true).write(&dir.join("run/a.json")).unwrap();
        part("b", false).write(&dir.join("run/b.json")).unwrap();
        faq_only.write(&dir.join("run/c.json")).unwrap();
        let merged = merge_dir(&dir).unwrap();
        assert_eq!(merged.samples.len(), 3);
        let rag = merged.datasets.iter().find(|d| d.name == "rag").unwrap();
        assert_eq!(rag.gates, vec![gate]);
        let g = rag.metrics[0].gate.as_ref().unwrap();
        assert_eq!((g.passed, g.margin), (false, Some(0.5 - 0.9)));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn atomic_write_and_read_back() {
        let dir = std::env::temp_dir().join(format!("eval-results-test-{}", std::process::id()));
        let path = dir.join("x/evals.json");
        let r = Results::new(
            "evals",
            vec![record("rag", "a", 1.0, true)],
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
                .contains("not a results file")
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
