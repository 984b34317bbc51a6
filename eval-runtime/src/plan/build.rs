//! [`PlanBuilder`]: datasets (files, globs, manifests, given samples), their
//! metrics and gates, and the run's settings, turned into a [`Plan`] with
//! every problem reported at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use eval_datasets::metric::{MetricSpec, UserMetrics, parse_gates_with, parse_specs_with};
use eval_datasets::{Manifest, Sample, naming};

use super::{Baseline, DatasetPlan, DatasetSource, Metrics, Plan, Subset};
use crate::config::Config;
use crate::output::Gate;

#[derive(Debug, Clone)]
enum Source {
    /// A file or glob, with metrics in the attribute's syntax (`""`: the dataset's own).
    Files { pattern: String, metrics: String },
    /// A manifest's datasets (all, or one by name).
    Manifest { path: String, only: Option<String> },
    /// Samples given directly.
    Samples {
        name: String,
        samples: Vec<Sample>,
        metrics: String,
    },
}

/// Builds a plan. The harness and the `evals` command are thin layers
/// over it; see the [plan module](super) for the rules it applies.
///
/// ```
/// use eval_runtime::plan::PlanBuilder;
/// use eval_runtime::{Config, FnAgent, Response, Runner, Sample};
///
/// // Datasets from files (globs allowed), or samples made in code.
/// let samples = vec![
///     Sample::new("What is RAG?").with_expected("retrieval").with_tags(["basics"]),
///     Sample::new("What is BM25?").with_expected("ranking").with_tags(["advanced"]),
/// ];
/// let plan = PlanBuilder::new()
///     .samples("faq", samples, "contains, partial_match >= 0.2")
///     .repeat(3);
/// let agent = FnAgent(async |s: &Sample| Response::new(format!("{}: retrieval", s.input.last())));
/// let runner = Runner::new().config(Config::empty());
/// let outcome = runner.prepare(plan).unwrap().evaluate(&agent, |_| {}).unwrap();
/// // The second sample's answer lacks "ranking": it fails in all 3 runs.
/// assert!(!outcome.verdict.passed());
/// assert_eq!(outcome.results.samples().len(), 2);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct PlanBuilder {
    sources: Vec<(Source, Vec<String>)>,
    ci_gate: bool,
    repeat: Option<eval_datasets::Repeat>,
    inconclusive: Option<crate::stats::OnInconclusive>,
    cluster: Option<String>,
    timeout: Option<Duration>,
    concurrency: Option<usize>,
    base_dir: Option<PathBuf>,
    allow_custom_prefix: bool,
    allow_outside: bool,
    baseline: Option<Baseline>,
    subset: Option<Subset>,
    /// Tools files, each with the source (index) it applies to.
    tools: Vec<(usize, String)>,
    problems: Vec<String>,
    /// Metrics of the user's the specs may name.
    user: UserMetrics,
}

impl PlanBuilder {
    /// An empty plan.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dataset file(s) at `pattern`, relative to the base directory: an
    /// existing path is that file, literally; one that names nothing and
    /// holds `*`, `?` or `[` is a pattern (`evals/*.jsonl`), as is
    /// `glob:PATTERN` always (see the guide's "Paths" in
    /// `evals-command.md`). Scored with `metrics` in the
    /// attribute's syntax (`"contains >= 1.0, partial_match"`; `""`: the
    /// dataset's own).
    pub fn dataset(mut self, pattern: &str, metrics: &str) -> Self {
        self.sources.push((
            Source::Files {
                pattern: pattern.to_string(),
                metrics: metrics.to_string(),
            },
            Vec::new(),
        ));
        self
    }

    /// Every dataset of an agentspec manifest, or only the one named `only`.
    pub fn manifest(mut self, path: &str, only: Option<&str>) -> Self {
        self.sources.push((
            Source::Manifest {
                path: path.to_string(),
                only: only.map(str::to_string),
            },
            Vec::new(),
        ));
        self
    }

    /// A metric of your own (see [`Metric`](crate::Metric)) the metrics
    /// and gates of every dataset may name, by its name: `.metric(cites_ticket)`
    /// then `"contains, cites_ticket >= 1"`, `.gate("mean(cites_ticket) >= 0.9")`.
    /// A name the catalogue already has is a problem.
    pub fn metric<M>(mut self, metric: impl crate::IntoMetric<M>) -> Self {
        let metric = crate::metrics::user::describe(metric.into_metric());
        if eval_datasets::metric::lookup(&metric.name).is_some() {
            self.problems.push(format!(
                "your metric `{}` has the name of a built-in metric: give it another name",
                metric.name
            ));
        } else {
            self.user.add(metric);
        }
        self
    }

    /// A dataset of samples given directly, named `name`.
    pub fn samples(mut self, name: &str, samples: Vec<Sample>, metrics: &str) -> Self {
        self.sources.push((
            Source::Samples {
                name: name.to_string(),
                samples,
                metrics: metrics.to_string(),
            },
            Vec::new(),
        ));
        self
    }

    /// Gates on the datasets added last: `"partial_match >= 0.7"` (the
    /// mean), `"p95(latency_ms) <= 3000"` (a percentile; see
    /// [`eval_datasets::metric::parse_gates`]).
    pub fn gate(mut self, gates: &str) -> Self {
        match self.sources.last_mut() {
            Some((_, list)) => list.push(gates.to_string()),
            None => self.problems.push(format!(
                "gate `{gates}` comes before any dataset: it gates the dataset added before it"
            )),
        }
        self
    }

    /// Tool definitions offered with each sample of the datasets added last
    /// (added to a sample's own `tools`; a sample's own definition of a tool
    /// wins): a JSON file (relative to the base directory) holding an array
    /// of OpenAI tool definitions, or an object with a `tools` array.
    pub fn tools(mut self, path: &str) -> Self {
        match self.sources.len().checked_sub(1) {
            Some(last) => self.tools.push((last, path.to_string())),
            None => self.problems.push(format!(
                "tools `{path}` come before any dataset: they are offered with the dataset added before them"
            )),
        }
        self
    }

    /// `ciGate`: every threshold gates its dataset's mean; samples fail only
    /// when they cannot be scored.
    pub fn ci_gate(mut self, on: bool) -> Self {
        self.ci_gate = on;
        self
    }

    /// Agent runs per sample, over a manifest's `repeat`: a number (1..=100)
    /// or [`Repeat::Auto`](eval_datasets::Repeat::Auto) (runs added to the
    /// samples whose verdict is still inconclusive, up to a maximum).
    pub fn repeat(mut self, repeat: impl Into<eval_datasets::Repeat>) -> Self {
        self.repeat = Some(match repeat.into() {
            eval_datasets::Repeat::Runs(n) => eval_datasets::Repeat::from(n),
            auto => auto,
        });
        self
    }

    /// What an inconclusive verdict counts as, over `EVAL_INCONCLUSIVE`
    /// (default: the point estimate decides).
    pub fn inconclusive(mut self, on: crate::stats::OnInconclusive) -> Self {
        self.inconclusive = Some(on);
        self
    }

    /// The sample field (a `metadata` key, or another field of the
    /// sample) whose value clusters samples: gates then use the
    /// cluster-robust standard error of the mean.
    pub fn cluster_by(mut self, field: &str) -> Self {
        self.cluster = Some(field.to_string());
        self
    }

    /// Limit on one sample's agent interaction, and on its scoring.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Agent calls in flight at once.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = Some(n.max(1));
        self
    }

    /// Where relative paths start (default `CARGO_MANIFEST_DIR`, else the
    /// working directory).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Retrieval datasets: allows a `scopePrefix` not starting with `eval:`.
    pub fn allow_custom_prefix(mut self, on: bool) -> Self {
        self.allow_custom_prefix = on;
        self
    }

    /// Lets a manifest's dataset paths lead outside its project (the
    /// containment rule's explicit opt-out).
    pub fn allow_outside(mut self, on: bool) -> Self {
        self.allow_outside = on;
        self
    }

    /// Compares complete runs with a baseline results file.
    pub fn baseline(mut self, path: impl Into<PathBuf>, epsilon: f64) -> Self {
        self.baseline = Some(Baseline {
            path: path.into(),
            epsilon,
            allow: crate::output::Allow::default(),
        });
        self
    }

    /// Lets the baseline comparison accept a judge change (`judge`) or a
    /// dataset content change (`dataset`), labelled as such; without it
    /// such a comparison is refused.
    pub fn baseline_allowing(mut self, judge: bool, dataset: bool) -> Self {
        if let Some(b) = &mut self.baseline {
            b.allow = crate::output::Allow::new(judge, dataset);
        } else {
            self.problems.push(
                "allowing a judge or dataset change needs a baseline: call .baseline(...) first"
                    .into(),
            );
        }
        self
    }

    /// Only these samples of each dataset (the `evals` command's selection).
    /// A front end's choice replaces a letta suite's own.
    pub fn subset(mut self, subset: Subset) -> Self {
        self.subset = Some(subset);
        self
    }

    /// At most `n` samples of each dataset, the first in file order (after
    /// [`sample_tags`](Self::sample_tags)): letta's `max_samples`.
    pub fn max_samples(mut self, n: usize) -> Self {
        self.subset.get_or_insert_with(Subset::all).max = Some(n);
        self
    }

    /// Only the samples carrying every one of `tags`: letta's `sample_tags`.
    pub fn sample_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.subset.get_or_insert_with(Subset::all).tags =
            tags.into_iter().map(Into::into).collect();
        self
    }

    /// The plan, or every problem found: metrics, gates, globs, manifests.
    /// Datasets are read when the plan is loaded, not here.
    #[cfg(test)]
    pub(crate) fn build(self, config: &Config) -> Result<Plan, super::PlanError> {
        let (plan, problems) = self.build_lenient(config);
        if problems.is_empty() {
            Ok(plan)
        } else {
            Err(super::PlanError::new(problems))
        }
    }

    /// The plan of every dataset that has no problem, and the problems of
    /// the others (so that loading can report its own problems too).
    pub(crate) fn build_lenient(&self, config: &Config) -> (Plan, Vec<String>) {
        let mut problems = self.problems.clone();
        if self.sources.is_empty() {
            problems.push(
                "no datasets: add one, e.g. .dataset(\"evals/rag.jsonl\", \"contains\")".into(),
            );
        }
        if let Some(b) = &self.baseline
            && (!b.epsilon.is_finite() || b.epsilon < 0.0)
        {
            problems.push(format!(
                "baseline epsilon {} is not a number ≥ 0",
                b.epsilon
            ));
        }
        let base = self.base_dir.clone().unwrap_or_else(|| config.base_dir());
        let timeout = config.sample_timeout_or(self.timeout);
        let mut datasets: Vec<DatasetPlan> = Vec::new();
        let mut agent = eval_datasets::AgentSettings::default();
        for (i, (source, gate_texts)) in self.sources.iter().enumerate() {
            let mut tools: Vec<serde_json::Value> = Vec::new();
            for (_, path) in self.tools.iter().filter(|(s, _)| *s == i) {
                match eval_datasets::tool::read_definitions(&base.join(path), path) {
                    Ok(defs) => eval_datasets::tool::add_definitions(&mut tools, &defs),
                    Err(e) => problems.push(e.to_string()),
                }
            }
            let added = match source {
                Source::Files { pattern, metrics } => {
                    self.files(&base, pattern, metrics, timeout, &mut problems)
                }
                Source::Manifest { path, only } => self.manifest_datasets(
                    &base,
                    path,
                    only.as_deref(),
                    timeout,
                    &mut agent,
                    &mut problems,
                ),
                Source::Samples {
                    name,
                    samples,
                    metrics,
                } => match metrics_of(metrics, name, &self.user) {
                    Ok(m) => vec![self.dataset_plan(
                        name.clone(),
                        DatasetSource::Samples(samples.clone()),
                        m,
                        timeout,
                    )],
                    Err(e) => {
                        problems.push(e);
                        Vec::new()
                    }
                },
            };
            for mut d in added {
                d.max_dataset_bytes = config.max_dataset_bytes;
                d.inconclusive = self
                    .inconclusive
                    .or(config.inconclusive)
                    .unwrap_or_default();
                eval_datasets::tool::add_definitions(&mut d.tools, &tools);
                let what = shown(&d);
                for text in gate_texts {
                    match parse_gates_with(text, &self.user) {
                        Ok(list) => {
                            for gate in list {
                                let gate = Gate::from_gate(&gate);
                                d.gates
                                    .retain(|g| (&g.metric, g.stat) != (&gate.metric, gate.stat));
                                d.gates.push(gate);
                            }
                        }
                        Err(e) => problems.push(format!("gate for {what}: {e}")),
                    }
                }
                if let Some(other) = datasets.iter().find(|o| o.name == d.name) {
                    problems.push(format!(
                        "{} and {} would both be named `{}`: rename one",
                        shown(other),
                        shown(&d),
                        d.name
                    ));
                    continue;
                }
                datasets.push(d);
            }
        }
        let plan = Plan {
            datasets,
            concurrency: config.concurrency_or(self.concurrency),
            baseline: self.baseline.clone(),
            base_dir: base,
            agent,
        };
        (plan, problems)
    }

    fn dataset_plan(
        &self,
        name: String,
        source: DatasetSource,
        metrics: Metrics,
        timeout: Duration,
    ) -> DatasetPlan {
        let mut d = DatasetPlan::new(dataset_name(&name), source, metrics, timeout);
        d.ci_gate = self.ci_gate;
        d.repeat = self.repeat.unwrap_or_default();
        d.cluster = self.cluster.clone();
        d.allow_custom_prefix = self.allow_custom_prefix;
        d.subset = self.subset.clone().unwrap_or_else(Subset::all);
        d
    }

    fn files(
        &self,
        base: &Path,
        pattern: &str,
        metrics: &str,
        timeout: Duration,
        problems: &mut Vec<String>,
    ) -> Vec<DatasetPlan> {
        let metrics = match metrics_of(metrics, pattern, &self.user) {
            Ok(m) => m,
            Err(e) => {
                problems.push(e);
                return Vec::new();
            }
        };
        let files = match super::paths::dataset_files(base, pattern) {
            Ok(f) => f,
            Err(e) => {
                problems.push(e);
                return Vec::new();
            }
        };
        files
            .into_iter()
            .map(|(path, shown)| {
                let stem = Path::new(&shown)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "dataset".into());
                self.dataset_plan(
                    stem,
                    DatasetSource::File { path, shown },
                    metrics.clone(),
                    timeout,
                )
            })
            .collect()
    }

    fn manifest_datasets(
        &self,
        base: &Path,
        path: &str,
        only: Option<&str>,
        timeout: Duration,
        agent: &mut eval_datasets::AgentSettings,
        problems: &mut Vec<String>,
    ) -> Vec<DatasetPlan> {
        let root = manifest_project(base, path);
        let manifest = match Manifest::load_with(&base.join(path), path, &root, self.allow_outside)
        {
            Ok(m) => m,
            Err(e) => {
                problems.extend(e.problems());
                return Vec::new();
            }
        };
        // The first manifest that says something about the agent is heard.
        *agent = std::mem::take(agent).or(&manifest.agent);
        let chosen: Vec<&eval_datasets::ManifestDataset> = match only {
            Some(name) => match manifest.dataset(name) {
                Ok(d) => vec![d],
                Err(e) => {
                    problems.push(e.to_string());
                    return Vec::new();
                }
            },
            None => manifest.datasets.iter().collect(),
        };
        chosen
            .into_iter()
            .map(|m| {
                let mut d = self.dataset_plan(
                    m.name.clone(),
                    DatasetSource::File {
                        path: m.file.clone(),
                        shown: m.shown.clone(),
                    },
                    Metrics::Given(m.specs.clone()),
                    timeout,
                );
                // A manifest's thresholds gate the means, enforced under ciGate.
                d.ci_gate = true;
                d.enforce_thresholds = self.ci_gate || manifest.ci_gate;
                d.repeat = self.repeat.unwrap_or(manifest.repeat);
                d.tools = m.tools.clone();
                d.model = m.model.clone();
                // A letta suite's gate, enforced; its sample filter, unless
                // the front end chose samples itself.
                d.gates = m.gates.iter().map(Gate::from_gate).collect();
                d.threshold_gates = m.threshold_gates;
                if self.subset.as_ref().is_none_or(Subset::is_all) {
                    d.subset = m.subset.clone();
                }
                d.manifest = Some(m.clone());
                d
            })
            .collect()
    }
}

/// The project a manifest's datasets must stay inside: the nearest
/// directory with `.git` at or above the manifest; else the base directory
/// (the crate's, the working directory) when the manifest is inside it;
/// else the manifest's own directory.
fn manifest_project(base: &Path, path: &str) -> PathBuf {
    use eval_datasets::manifest::project_root;
    let file = base.join(path);
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(base);
    let by_manifest = project_root(dir);
    if by_manifest.join(".git").exists() {
        return by_manifest;
    }
    let by_base = project_root(base);
    if by_manifest.starts_with(&by_base) {
        by_base
    } else {
        by_manifest
    }
}

/// A dataset as messages show it: its file, else its name.
fn shown(d: &DatasetPlan) -> String {
    match &d.source {
        DatasetSource::File { shown, .. } => shown.clone(),
        _ => format!("dataset `{}`", d.name),
    }
}

/// `metrics` parsed; `""` means the dataset's own.
fn metrics_of(metrics: &str, what: &str, user: &UserMetrics) -> Result<Metrics, String> {
    if metrics.trim().is_empty() {
        return Ok(Metrics::Own);
    }
    match parse_specs_with(metrics, user) {
        Ok(specs) if specs.is_empty() => Ok(Metrics::Own),
        Ok(specs) => Ok(Metrics::Given(specs)),
        Err(e) => Err(format!("metrics for {what}: {e}")),
    }
}

/// A manifest dataset's name or a file stem as the dataset's name: an identifier.
pub(crate) fn dataset_name(name: &str) -> String {
    match naming::slug(name, 48) {
        s if s.is_empty() => "dataset".to_string(),
        s => s,
    }
}

/// The gates a dataset gets: the explicit ones, every threshold under
/// `ciGate` (`enforced` or not), and a retrieval dataset's own thresholds; an explicit or
/// dataset gate replaces a `ciGate` one on the same metric and statistic. A
/// gate is matched to the metric it gates by the metric's name or alias
/// (`string_match` gates `exact_match`) and recorded under the name the
/// metric is scored as, so the summary finds it. An explicit gate on a
/// metric the dataset is not scored with is a problem, named for `what`,
/// unless it gates what the engine measures of every sample (`latency_ms`,
/// `ttft_ms`, `cost_usd`).
pub(crate) fn all_gates(
    explicit: &[Gate],
    (ci_gate, enforced): (bool, bool),
    spec_sets: &[Vec<MetricSpec>],
    dataset_gates: Vec<Gate>,
    what: &str,
) -> Result<Vec<Gate>, Vec<String>> {
    let scored: Vec<&MetricSpec> = spec_sets.iter().flatten().collect();
    let as_scored = |gate: &Gate| {
        let canonical = eval_datasets::metric::lookup(&gate.metric).map(|i| i.name);
        scored
            .iter()
            // By the name scored, or (for a whole sample's metric, not a
            // turn's) by any name of the metric.
            .find(|s| {
                // (canonical_name: no catalogue entry for a user metric)
                s.name == gate.metric || (s.turn.is_none() && Some(s.canonical_name()) == canonical)
            })
            .map(|s| {
                Gate {
                    metric: s.name.clone(),
                    ..gate.clone()
                }
                .scaled_as(s)
            })
    };
    let mut gates: Vec<Gate> = Vec::new();
    if ci_gate {
        for spec in &scored {
            if !gates.iter().any(|g| g.metric == spec.name) {
                gates.push(Gate::from_spec(spec).enforced(enforced));
            }
        }
    }
    let mut problems = Vec::new();
    for g in explicit.iter().chain(&dataset_gates) {
        let found = as_scored(g).or_else(|| {
            g.measured().map(|m| Gate {
                metric: m.name().to_string(),
                ..g.clone()
            })
        });
        match found {
            Some(g) => {
                gates.retain(|x| (&x.metric, x.stat) != (&g.metric, g.stat));
                gates.push(g);
            }
            None => problems.push(format!(
                "gate `{}` for {what}: the dataset is not scored with `{}`",
                g.metric, g.metric
            )),
        }
    }
    if problems.is_empty() {
        Ok(gates)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The front ends' one rule (the harness's `.dataset` and `evals
    /// evaluate FILE` both build through here): an existing file is itself.
    #[test]
    fn a_dataset_that_exists_is_read_literally() {
        let dir = std::env::temp_dir().join(format!("eval-plan-literal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["set[12].jsonl", "set1.jsonl"] {
            std::fs::write(dir.join(name), "{\"input\": \"q\", \"expected\": \"a\"}\n").unwrap();
        }
        let files = |written: &str| -> Vec<String> {
            let plan = PlanBuilder::new()
                .dataset(written, "contains")
                .base_dir(&dir)
                .build(&Config::empty())
                .unwrap();
            plan.datasets
                .iter()
                .map(|d| match &d.source {
                    DatasetSource::File { shown, .. } => shown.clone(),
                    _ => String::new(),
                })
                .collect()
        };
        assert_eq!(files("set[12].jsonl"), ["set[12].jsonl"]);
        assert_eq!(files("glob:set[12].jsonl"), ["set1.jsonl"]);
        assert_eq!(files("set?.jsonl"), ["set1.jsonl"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn problems_are_all_reported() {
        let dir = std::env::temp_dir().join(format!("eval-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.jsonl"), "").unwrap();
        let e = PlanBuilder::new()
            .gate("contains")
            .dataset("a.jsonl", "containz")
            .dataset("nothing/*.jsonl", "contains")
            .dataset("a.jsonl", "contains")
            .gate("partial_match >= 0.5")
            .base_dir(&dir)
            .build(&Config::empty())
            .unwrap_err();
        let text = e.to_string();
        for want in [
            "gate `contains` comes before any dataset",
            "metrics for a.jsonl: unknown metric `containz`",
            "`nothing/*.jsonl`: no such file, and read as a pattern it matches no dataset file",
        ] {
            assert!(text.contains(want), "{want} not in:\n{text}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn names_and_settings_follow_one_rule() {
        let config = Config::from_vars(
            |n| Ok((n == "EVAL_SAMPLE_TIMEOUT_SECS").then(|| "7".to_string())),
            &[],
        )
        .unwrap();
        let plan = PlanBuilder::new()
            .samples("my-data", vec![Sample::new("q")], "contains")
            .build(&config)
            .unwrap();
        let d = &plan.datasets[0];
        assert_eq!(d.name, "my_data");
        assert_eq!(d.timeout, Duration::from_secs(7));
        assert_eq!(plan.concurrency, 16);
        let plan = PlanBuilder::new()
            .samples("x", vec![Sample::new("q")], "")
            .timeout(Duration::from_secs(2))
            .concurrency(3)
            .build(&config)
            .unwrap();
        assert_eq!(plan.datasets[0].timeout, Duration::from_secs(2));
        assert_eq!(plan.datasets[0].metrics, Metrics::Own);
        assert_eq!(plan.concurrency, 3);
    }

    #[test]
    fn gates_are_matched_by_metric_and_recorded_as_scored() {
        let specs = vec![eval_datasets::metric::parse_specs("string_match, recall@k").unwrap()];
        let explicit = vec![Gate::new("exact_match", eval_datasets::Op::AtLeast, 0.5)];
        let own = vec![Gate::new("recall_at_k", eval_datasets::Op::AtLeast, 0.75)];
        let gates = all_gates(&explicit, (false, true), &specs, own, "x.jsonl").unwrap();
        let names: Vec<&str> = gates.iter().map(|g| g.metric.as_str()).collect();
        assert_eq!(
            names,
            ["string_match", "recall@k"],
            "the names the results record"
        );
        // A percentile gate beside the ciGate mean gate of one metric; a
        // gate on a measured quantity needs no metric of that name.
        let p95 = Gate::new("exact_match", eval_datasets::Op::AtLeast, 0.2)
            .with_stat(eval_datasets::metric::Stat::Percentile(95));
        let latency = Gate::new("latency_ms", eval_datasets::Op::AtMost, 3000.0)
            .with_stat(eval_datasets::metric::Stat::Percentile(95));
        let gates =
            all_gates(&[p95, latency], (true, true), &specs, Vec::new(), "x.jsonl").unwrap();
        let shown: Vec<String> = gates.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "string_match >= 1",
                "recall@k >= 0.75",
                "p95(string_match) >= 0.2",
                "p95(latency_ms) <= 3000"
            ]
        );
        let e = all_gates(
            &[Gate::new("contains", eval_datasets::Op::AtLeast, 0.5)],
            (true, true),
            &specs,
            Vec::new(),
            "x.jsonl",
        )
        .unwrap_err();
        assert_eq!(
            e,
            ["gate `contains` for x.jsonl: the dataset is not scored with `contains`"]
        );
    }
}
