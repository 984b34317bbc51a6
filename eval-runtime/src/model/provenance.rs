//! Where a run's scores come from, as its results file records it: the tool,
//! the project's revision, each dataset file's content hash, the judge's and
//! the embeddings' fingerprints, the agent's settings — and what differs
//! between two runs, which decides whether they may be compared (a score is
//! only comparable with one made by the same judge, prompts and definitions
//! on the same data).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Everything a run's scores depend on besides the agent's answers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Provenance {
    /// The tool that scored the run (`eval-runtime 0.1.0`).
    pub tool: String,
    /// The project's git revision, when the run was in a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitState>,
    /// Each dataset: its file and that file's content hash.
    #[serde(default)]
    pub datasets: Vec<DatasetSource>,
    /// The LLM judge that scored the judged metrics, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeFingerprint>,
    /// The embeddings server that scored the embedding metrics, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingsFingerprint>,
    /// Calibrations of the judged metrics made with this very judge (same
    /// fingerprint) for the very metric a dataset scores (same operator,
    /// threshold and options): how far each agrees with human labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibrations: Vec<CalibrationSummary>,
    /// The metrics of the user's the run scored, by name: each one's
    /// version and scale (a new version is a new definition: its scores are
    /// not compared with the old version's as if alike).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub user_metrics: BTreeMap<String, UserMetricProvenance>,
    /// Per external scorer (`exec` metric, by its name): its command and
    /// the hashes of the files it names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scorers: BTreeMap<String, ScorerFingerprint>,
}

/// What a run records of a metric of the user's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserMetricProvenance {
    /// The version of its definition.
    pub version: String,
    /// `>=` (higher is better) or `<=`.
    pub op: String,
    /// The least score it gives (`None`: no least).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The greatest score it gives (`None`: no greatest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Whether every score is pass (the maximum) or fail (the minimum).
    pub pass_fail: bool,
}

impl UserMetricProvenance {
    /// What is recorded of `metric`.
    pub(crate) fn of(metric: &eval_datasets::metric::UserMetric) -> Self {
        let finite = |x: f64| x.is_finite().then_some(x);
        UserMetricProvenance {
            version: metric.version.clone(),
            op: metric.op.to_string(),
            min: finite(metric.range.0),
            max: finite(metric.range.1),
            pass_fail: metric.pass_fail,
        }
    }

    /// Its range, infinite where it has no end.
    pub(crate) fn range(&self) -> (f64, f64) {
        (
            self.min.unwrap_or(f64::NEG_INFINITY),
            self.max.unwrap_or(f64::INFINITY),
        )
    }
}

/// What an external scorer's scores depend on: its command and the content
/// of every word of it that names a file (its script).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScorerFingerprint {
    /// The command as written.
    pub command: String,
    /// Each word of the command that names a file (relative to where it
    /// runs), and the SHA-256 of that file's content.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

impl ScorerFingerprint {
    /// The fingerprint on one line: `python3 score.py (score.py 1a2b3c4d5e6f)`.
    fn text(&self) -> String {
        let files: Vec<String> = self
            .files
            .iter()
            .map(|(f, h)| format!("{f} {}", &h[..h.len().min(12)]))
            .collect();
        if files.is_empty() {
            self.command.clone()
        } else {
            format!("{} ({})", self.command, files.join(", "))
        }
    }
}

/// What a run says of a calibration of one of its judged metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CalibrationSummary {
    /// The metric.
    pub metric: String,
    /// The metric as calibrated (`faithfulness >= 0.8`).
    pub spec: String,
    /// Cohen's κ against the human labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa: Option<f64>,
    /// Its 95% interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa_interval: Option<crate::stats::Interval>,
    /// Share of the labelled samples the metric and the humans agree on.
    pub accuracy: f64,
    /// Labelled samples the metric scored.
    pub samples: u64,
    /// The labels file, as named when calibrated.
    pub labels: String,
    /// SHA-256 of the labels file's content (`None` in files of earlier
    /// versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_sha256: Option<String>,
    /// The datasets whose metric it measured: same metric, operator,
    /// threshold and options, scored by the same judge. Reports show its κ
    /// beside those only (empty in files of earlier versions, which attached
    /// calibrations by the judge alone: not shown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datasets: Vec<String>,
    /// When the calibration was made.
    pub written_unix: f64,
}

/// A git checkout's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GitState {
    /// `HEAD`'s commit.
    pub revision: String,
    /// Tracked files differ from `HEAD` (`None`: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
}

/// One dataset's origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSource {
    /// The dataset's name in the results.
    pub name: String,
    /// The file as named (or `inline` for samples given directly).
    pub file: String,
    /// SHA-256 of the file's bytes (of the samples, for inline ones); `None`
    /// when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The agent its samples went to, as far as it says (an HTTP agent's
    /// protocol, model, sampling; never its URL or key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentSettings>,
}

/// What decides a judged score besides the answer: the judge, its settings,
/// each metric's prompt and definition versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JudgeFingerprint {
    /// The model asked.
    pub model: String,
    /// The server's host (and port): never a path, a user or a key.
    pub host: String,
    /// The sampling temperature asked for.
    pub temperature: f64,
    /// The seed asked for.
    pub seed: u64,
    /// Per judged metric: `prompt <version>, definition <version>`.
    pub metrics: BTreeMap<String, MetricVersions>,
}

impl JudgeFingerprint {
    /// Whether `other` is the same judge (model, host, temperature, seed),
    /// whatever metrics each scored.
    pub(crate) fn same_judge(&self, other: &JudgeFingerprint) -> bool {
        self.model == other.model
            && self.host == other.host
            && self.temperature == other.temperature
            && self.seed == other.seed
    }

    /// The judge on one line: `model at host (temperature t, seed s)`.
    pub(crate) fn identity(&self) -> String {
        format!(
            "{} at {} (temperature {}, seed {})",
            self.model, self.host, self.temperature, self.seed
        )
    }
}

/// The versions of one judged metric's prompts and scoring definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricVersions {
    /// Each prompt the metric asks (`faithfulness/statements`) and its version.
    pub prompts: BTreeMap<String, u32>,
    /// The version of the scoring definition (the formula over the answers).
    pub definition: u32,
    /// A criteria metric's (`g_eval`) definition: 16 hex digits of SHA-256
    /// of its criteria, scale and params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria_sha256: Option<String>,
    /// The evaluation steps a criteria metric used (given, or written by
    /// the judge): 16 hex digits of their SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_sha256: Option<String>,
}

/// The embeddings server that scored embedding metrics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddingsFingerprint {
    /// The model asked.
    pub model: String,
    /// The server's host (and port).
    pub host: String,
    /// The metrics it scored.
    pub metrics: Vec<String>,
}

/// What the agent says of itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentSettings {
    /// `http` or `in-process`.
    pub kind: String,
    /// Its protocol, model, streaming and sampling settings (an HTTP agent).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub settings: serde_json::Value,
}

/// What differs between two runs' provenance.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Differences {
    /// The judge (or embeddings) of a metric both runs scored changed: its
    /// model, host, settings, or the metric's prompt or definition.
    pub judge: Vec<String>,
    /// A dataset both runs hold was read from different content.
    pub datasets: Vec<String>,
    /// Other differences worth saying (the agent, the revision, the tool).
    pub notes: Vec<String>,
}

impl Differences {
    /// Nothing that would stop a comparison.
    pub fn comparable(&self) -> bool {
        self.judge.is_empty() && self.datasets.is_empty()
    }
}

/// Which provenance differences a comparison or a merge accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Allow {
    /// Runs scored by different judges (`--allow-judge-change`).
    pub judge_change: bool,
    /// Runs of different dataset contents (`--allow-dataset-change`).
    pub dataset_change: bool,
}

impl Allow {
    /// Accept what `judge` and `dataset` say.
    pub fn new(judge_change: bool, dataset_change: bool) -> Self {
        Allow {
            judge_change,
            dataset_change,
        }
    }
}

/// The hash of what the dataset says of `sample` — everything but where it
/// stands in its file (`source`, `index`): 16 hex digits of SHA-256 over its
/// JSON, written straight into the hasher.
pub(crate) fn sample_hash(sample: &eval_datasets::Sample) -> String {
    use sha2::Digest as _;
    /// The hasher as an `io::Write`, so the JSON is never held whole.
    struct Hashing(sha2::Sha256);
    impl std::io::Write for Hashing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    #[derive(Serialize)]
    struct Content<'a> {
        id: &'a str,
        input: &'a eval_datasets::Input,
        expected: &'a Option<eval_datasets::Expected>,
        context: &'a [String],
        reference_contexts: &'a [String],
        tags: &'a [String],
        metadata: &'a serde_json::Map<String, serde_json::Value>,
        agent_args: &'a serde_json::Map<String, serde_json::Value>,
        rubric_vars: &'a serde_json::Map<String, serde_json::Value>,
        evaluators: &'a serde_json::Map<String, serde_json::Value>,
        turn_evaluators: &'a [serde_json::Map<String, serde_json::Value>],
        accepted_answers: &'a [String],
        retrieval: &'a Option<Box<eval_datasets::sample::RetrievalQuery>>,
        expected_tools: &'a Option<Vec<eval_datasets::ToolCall>>,
        tools: &'a [serde_json::Value],
        extra: &'a serde_json::Map<String, serde_json::Value>,
    }
    let s = sample;
    // Buffered: serde writes many tiny pieces, each an update otherwise.
    let mut h = std::io::BufWriter::with_capacity(4096, Hashing(sha2::Sha256::new()));
    let _ = serde_json::to_writer(
        &mut h,
        &Content {
            id: &s.id,
            input: &s.input,
            expected: &s.expected,
            context: &s.context,
            reference_contexts: &s.reference_contexts,
            tags: &s.tags,
            metadata: &s.metadata,
            agent_args: &s.agent_args,
            rubric_vars: &s.rubric_vars,
            evaluators: &s.evaluators,
            turn_evaluators: &s.turn_evaluators,
            accepted_answers: &s.accepted_answers,
            retrieval: &s.retrieval,
            expected_tools: &s.expected_tools,
            tools: &s.tools,
            extra: &s.extra,
        },
    );
    // Writing into a hasher cannot fail: the flush in `into_inner` neither.
    let h = h
        .into_inner()
        .unwrap_or_else(|e| e.into_inner().into_parts().0);
    hex(&h.0.finalize()[..8])
}

/// SHA-256 over `parts` (each preceded by its length, so no two lists of
/// parts hash alike), hex: the key of a cached judge answer or a recorded
/// agent answer.
pub(crate) fn parts_hash(parts: &[&str]) -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex(&h.finalize())
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// `a → b`, each `—` when absent.
fn moved<T: std::fmt::Display>(a: Option<T>, b: Option<T>) -> String {
    let show = |x: Option<T>| x.map_or("—".to_string(), |x| x.to_string());
    format!("{} → {}", show(a), show(b))
}

/// What scores `metric` in `p`: the judge (its identity and the metric's
/// versions), or `None` when no judge scored it there.
fn judge_of<'a>(
    p: &'a Provenance,
    metric: &str,
) -> Option<(&'a JudgeFingerprint, &'a MetricVersions)> {
    let j = p.judge.as_ref()?;
    j.metrics.get(metric).map(|v| (j, v))
}

impl Provenance {
    /// The scales of its user metrics, by name: for the statistics that
    /// know a metric only by its name (a comparison of two results files).
    pub(crate) fn user_scales(&self) -> BTreeMap<String, crate::stats::Scale> {
        self.user_metrics
            .iter()
            .map(|(name, m)| {
                let scale = if m.pass_fail {
                    crate::stats::Scale::PassFail
                } else {
                    crate::stats::Scale::of_range(m.range())
                };
                (name.clone(), scale)
            })
            .collect()
    }

    /// Adds `calibrations` of another part of the same run: the same
    /// calibration (spec, labels, their hash, when it was made) once, with
    /// the datasets of both.
    pub(crate) fn join_calibrations(&mut self, calibrations: &[CalibrationSummary]) {
        for c in calibrations {
            let same = |a: &&mut CalibrationSummary| {
                a.spec == c.spec
                    && a.labels == c.labels
                    && a.labels_sha256 == c.labels_sha256
                    && a.written_unix == c.written_unix
            };
            match self.calibrations.iter_mut().find(same) {
                Some(a) => {
                    for d in &c.datasets {
                        if !a.datasets.contains(d) {
                            a.datasets.push(d.clone());
                        }
                    }
                }
                None => self.calibrations.push(c.clone()),
            }
        }
    }

    /// What differs from `old` (this is the newer run), for the metrics
    /// `metrics` both runs scored and the datasets both hold.
    pub fn differences(&self, old: &Provenance, metrics: &[String]) -> Differences {
        let mut d = Differences::default();
        for metric in metrics {
            match (judge_of(old, metric), judge_of(self, metric)) {
                (None, None) => {}
                (Some(_), None) | (None, Some(_)) => d.judge.push(format!(
                    "`{metric}`: judge {}",
                    moved(
                        judge_of(old, metric).map(|(j, _)| j.model.as_str()),
                        judge_of(self, metric).map(|(j, _)| j.model.as_str())
                    )
                )),
                (Some((a, va)), Some((b, vb))) => {
                    let mut what = Vec::new();
                    if a.model != b.model {
                        what.push(format!("model {} → {}", a.model, b.model));
                    }
                    if a.host != b.host {
                        what.push(format!("host {} → {}", a.host, b.host));
                    }
                    if a.temperature != b.temperature {
                        what.push(format!("temperature {} → {}", a.temperature, b.temperature));
                    }
                    if a.seed != b.seed {
                        what.push(format!("seed {} → {}", a.seed, b.seed));
                    }
                    for (prompt, v) in &vb.prompts {
                        let was = va.prompts.get(prompt);
                        if was != Some(v) {
                            what.push(format!("prompt {prompt} {}", moved(was, Some(v))));
                        }
                    }
                    if va.definition != vb.definition {
                        what.push(format!("definition {} → {}", va.definition, vb.definition));
                    }
                    if va.criteria_sha256 != vb.criteria_sha256 {
                        let (a, b) = (va.criteria_sha256.as_deref(), vb.criteria_sha256.as_deref());
                        what.push(format!("criteria {}", moved(a, b)));
                    }
                    if va.steps_sha256 != vb.steps_sha256 {
                        let (a, b) = (va.steps_sha256.as_deref(), vb.steps_sha256.as_deref());
                        what.push(format!("evaluation steps {}", moved(a, b)));
                    }
                    if !what.is_empty() {
                        d.judge
                            .push(format!("`{metric}`: judge {}", what.join(", ")));
                    }
                }
            }
            let embed = |p: &Provenance| {
                p.embeddings
                    .as_ref()
                    .filter(|e| e.metrics.iter().any(|m| m == metric))
                    .map(|e| format!("{} at {}", e.model, e.host))
            };
            // another command or script scores differently.
            let scorer = |p: &Provenance| p.scorers.get(metric).map(ScorerFingerprint::text);
            if scorer(old) != scorer(self) {
                d.judge.push(format!(
                    "`{metric}`: scorer {}",
                    moved(scorer(old), scorer(self))
                ));
            }
            if embed(old) != embed(self) {
                d.judge.push(format!(
                    "`{metric}`: embeddings {}",
                    moved(embed(old), embed(self))
                ));
            }
        }
        for metric in metrics {
            let base = metric
                .rsplit_once("@turn")
                .map_or(metric.as_str(), |(b, _)| b);
            let (a, b) = (old.user_metrics.get(base), self.user_metrics.get(base));
            if let (Some(a), Some(b)) = (a, b)
                && a.version != b.version
            {
                d.judge.push(format!(
                    "`{metric}`: your metric's definition, version {} → {}",
                    a.version, b.version
                ));
            }
        }
        for ds in &self.datasets {
            let Some(was) = old.datasets.iter().find(|o| o.name == ds.name) else {
                continue;
            };
            match (&was.sha256, &ds.sha256) {
                (Some(a), Some(b)) if a != b => d.datasets.push(format!(
                    "dataset `{}`: content {} ({}) → {} ({})",
                    ds.name,
                    &a[..a.len().min(12)],
                    was.file,
                    &b[..b.len().min(12)],
                    ds.file
                )),
                (None, _) | (_, None) => d.notes.push(format!(
                    "dataset `{}`: the content of one run is not known (a results file of an earlier version)",
                    ds.name
                )),
                _ => {}
            }
            if was.agent != ds.agent && was.agent.is_some() && ds.agent.is_some() {
                d.notes.push(format!(
                    "dataset `{}`: the agent's settings differ: {} → {}",
                    ds.name,
                    agent_text(was.agent.as_ref()),
                    agent_text(ds.agent.as_ref())
                ));
            }
        }
        let rev = |p: &Provenance| {
            p.git.as_ref().map(|g| {
                let mut s = g.revision.chars().take(12).collect::<String>();
                if g.dirty == Some(true) {
                    s.push_str(" (dirty)");
                }
                s
            })
        };
        if rev(old) != rev(self) && (old.git.is_some() || self.git.is_some()) {
            d.notes
                .push(format!("revision {}", moved(rev(old), rev(self))));
        }
        if old.tool != self.tool && !old.tool.is_empty() {
            d.notes.push(format!("tool {} → {}", old.tool, self.tool));
        }
        d
    }
}

/// An agent's settings on one line.
fn agent_text(a: Option<&AgentSettings>) -> String {
    match a {
        None => "not recorded".into(),
        Some(a) if a.settings.is_null() => a.kind.clone(),
        Some(a) => {
            let mut s = a.kind.clone();
            if let Some(map) = a.settings.as_object() {
                for (k, v) in map.iter().filter(|(_, v)| !v.is_null()) {
                    let _ = write!(s, " {k}={v}");
                }
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(model: &str, prompt: u32) -> Provenance {
        Provenance {
            tool: "eval-runtime 0.1.0".into(),
            judge: Some(JudgeFingerprint {
                model: model.into(),
                host: "127.0.0.1:8000".into(),
                temperature: 0.0,
                seed: 42,
                metrics: BTreeMap::from([(
                    "faithfulness".to_string(),
                    MetricVersions {
                        prompts: BTreeMap::from([
                            ("faithfulness/statements".to_string(), prompt),
                            ("faithfulness/verdicts".to_string(), 3),
                        ]),
                        definition: 1,
                        criteria_sha256: None,
                        steps_sha256: None,
                    },
                )]),
            }),
            datasets: vec![DatasetSource {
                name: "rag".into(),
                file: "evals/rag.jsonl".into(),
                sha256: Some("a".repeat(64)),
                agent: None,
            }],
            ..Provenance::default()
        }
    }

    #[test]
    fn a_judge_change_on_a_compared_metric_is_named() {
        let metrics = ["faithfulness".to_string(), "contains".to_string()];
        let same = judged("gpt-4o-mini", 3).differences(&judged("gpt-4o-mini", 3), &metrics);
        assert!(same.comparable(), "{same:?}");
        let d = judged("gpt-4o", 4).differences(&judged("gpt-4o-mini", 3), &metrics);
        assert_eq!(
            d.judge,
            [
                "`faithfulness`: judge model gpt-4o-mini → gpt-4o, prompt faithfulness/statements 3 → 4"
            ]
        );
        assert!(!d.comparable());
        // A metric only one run scored is not compared: its judge does not matter.
        let only = judged("gpt-4o", 4).differences(&judged("gpt-4o-mini", 3), &["contains".into()]);
        assert!(only.comparable());
        // Scored by a judge in one run and offline in the other.
        let offline = Provenance {
            judge: None,
            ..judged("x", 1)
        };
        let d = judged("gpt-4o", 3).differences(&offline, &metrics);
        assert_eq!(d.judge, ["`faithfulness`: judge — → gpt-4o"]);
    }

    #[test]
    fn a_sample_hash_follows_its_content_not_its_place() {
        let a = eval_datasets::Sample::new("What is RAG?").with_expected("retrieval");
        let mut moved = a.clone();
        moved.index = 7;
        moved.source.line = 12;
        assert_eq!(sample_hash(&a), sample_hash(&moved));
        assert_eq!(sample_hash(&a).len(), 16);
        let changed = eval_datasets::Sample::new("What is RAG?").with_expected("generation");
        assert_ne!(sample_hash(&a), sample_hash(&changed));
    }

    #[test]
    fn other_dataset_content_is_named_and_older_files_are_noted() {
        let mut new = judged("m", 1);
        new.datasets[0].sha256 = Some("b".repeat(64));
        let d = new.differences(&judged("m", 1), &[]);
        assert_eq!(
            d.datasets,
            [
                "dataset `rag`: content aaaaaaaaaaaa (evals/rag.jsonl) → bbbbbbbbbbbb (evals/rag.jsonl)"
            ]
        );
        new.datasets[0].sha256 = None;
        let d = new.differences(&judged("m", 1), &[]);
        assert!(d.comparable());
        assert_eq!(d.notes.len(), 1, "{d:?}");
    }
}
