//! agentspec `agent.yaml` manifests (seed 000): which datasets to evaluate,
//! with which metrics, thresholds and CI gate.
//!
//! ```yaml
//! spec:
//!   evaluation:
//!     framework: ragas
//!     datasets:
//!       - name: rag-quality
//!         path: $file:evals/rag.jsonl
//!         metrics: [faithfulness, context_recall, answer_relevancy]
//!     thresholds:
//!       faithfulness: 0.80
//!     ciGate: true
//!     repeat: 3          # ours: agent runs per sample (letta's num_runs), or auto / "auto:20"
//!     agent:             # ours: how the agent is spoken to (all optional)
//!       protocol: openai # json (default) | openai (OpenAI chat completions)
//!       model: my-model  # the `model` of OpenAI requests
//!       stream: true     # ask for a streamed answer (SSE)
//! ```
//!
//! A dataset entry may also offer tools to the agent: `tools:
//! $file:evals/tools.json` (a JSON array of OpenAI tool definitions, or an
//! object with a `tools` array; relative to the manifest, inside the
//! project) or the list inline; they are added to each of its samples (a
//! sample's own definition of a tool wins). `spec.evaluation.agent` is
//! applied by `evals evaluate` (its flags win over it, and it wins over the
//! `EVAL_AGENT_*` variables).
//!
//! A letta-evals suite (seed 001) is read as a manifest of one dataset: see
//! [`crate::suite`].
//!
//! Rules, each broken rule reported with the manifest's file:line:
//! - dataset paths (`$file:` prefix optional) are relative to the manifest and
//!   must exist inside the project root the caller names;
//! - a dataset's `metrics` override the evaluation-level `metrics`; every
//!   metric must be known, every threshold must name a metric some dataset
//!   uses, and thresholds take the metric's direction;
//! - with `framework: deepeval`, the thresholds of `toxicity` and `bias` are
//!   deepeval's (the most toxicity allowed, e.g. `toxicity: 0.1`) and become
//!   our safety-score minimum `1 - t`; otherwise they are safety minimums as
//!   in seed 000 (`toxicity: 0.90`). `hallucination` is a maximum either way;
//! - [`ManifestDataset::check_fields`] applies seed 000's field table to the
//!   loaded samples, before any agent call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::agent::{AgentSettings, RawAgent};
use crate::dataset::Dataset;
use crate::error::{DatasetError, MAX_PROBLEMS, Problem};
use crate::files::{
    ContainmentError, DEFAULT_MAX_DATASET_BYTES, ReadError, absolute, contained, normalize,
    read_checked,
};
use crate::metric::{MetricKind, MetricSpec, Op, OptionValue, parse_specs};

/// Most agent runs per sample a manifest may ask for.
pub use crate::repeat::MAX_REPEAT;

/// A loaded, checked manifest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Manifest {
    /// The manifest path as shown in messages.
    pub path: String,
    /// `spec.evaluation.framework`, when given.
    pub framework: Option<String>,
    /// The datasets, in manifest order.
    pub datasets: Vec<ManifestDataset>,
    /// `ciGate`: a metric whose dataset mean misses its threshold fails the run.
    pub ci_gate: bool,
    /// Agent runs per sample (`repeat`, default 1; `auto` or `auto:MAX`:
    /// runs added while a verdict is in doubt).
    pub repeat: crate::Repeat,
    /// `agent`: the protocol, model and streaming of the agent.
    pub agent: AgentSettings,
}

/// One entry of `spec.evaluation.datasets`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ManifestDataset {
    /// `name`.
    pub name: String,
    /// The dataset file, absolute.
    pub file: PathBuf,
    /// The dataset path relative to the project root, for messages.
    pub shown: String,
    /// Metrics with their thresholds.
    pub specs: Vec<MetricSpec>,
    /// Line of the entry in the manifest.
    pub line: usize,
    /// The manifest path as shown.
    pub manifest: String,
    /// `tools`: OpenAI tool definitions offered with each of its samples.
    pub tools: Vec<serde_json::Value>,
    /// `description`, shown in reports.
    pub description: Option<String>,
    /// The samples the run is about (a letta suite's `sample_tags` and
    /// `max_samples`); every sample otherwise.
    pub subset: crate::Subset,
    /// Gates given explicitly (a letta suite's `gate`), enforced whatever
    /// `ciGate` says.
    pub gates: Vec<crate::metric::GateSpec>,
    /// Whether each threshold gates the dataset's mean (agentspec's
    /// `thresholds`, enforced under `ciGate`); `false` for a letta suite,
    /// whose `gate` alone decides.
    pub threshold_gates: bool,
    /// What is worth saying about how the file is run (a letta suite's
    /// `target` not used, its graders' names as metrics).
    pub notes: Vec<String>,
    /// Other files read for it (a rubric grader's prompt), so a build that
    /// embeds the manifest is redone when they change.
    pub tracked: Vec<PathBuf>,
}

/// Why a manifest could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest could not be read.
    #[error("{path}: cannot read manifest: {source}")]
    Io {
        /// The manifest path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The manifest breaks one or more rules; every problem is listed.
    #[error("{}", render(.problems))]
    Invalid {
        /// The manifest path.
        path: String,
        /// What is wrong, where.
        problems: Vec<Problem>,
    },
    /// The manifest is not a regular file, or is too large.
    #[error("{path}: cannot read manifest: {source}")]
    Unreadable {
        /// The manifest path.
        path: String,
        /// What is wrong with the file.
        #[source]
        source: ReadError,
    },
    /// No dataset of that name.
    #[error("{path}: no dataset named `{name}`; the manifest has: {}", .known.join(", "))]
    UnknownDataset {
        /// The manifest path.
        path: String,
        /// The name asked for.
        name: String,
        /// The names it has.
        known: Vec<String>,
    },
}

impl ManifestError {
    /// The individual problems, one line each.
    pub fn problems(&self) -> Vec<String> {
        match self {
            ManifestError::Invalid { problems, .. } => {
                problems.iter().map(ToString::to_string).collect()
            }
            other => vec![other.to_string()],
        }
    }
}

fn render(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Deserialize)]
struct RawManifest {
    spec: Option<RawSpec>,
}

#[derive(Deserialize)]
struct RawSpec {
    evaluation: Option<Spanned<RawEvaluation>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvaluation {
    framework: Option<Spanned<String>>,
    datasets: Option<Spanned<Vec<Spanned<RawDataset>>>>,
    metrics: Option<Vec<Spanned<String>>>,
    thresholds: Option<BTreeMap<String, Spanned<f64>>>,
    #[serde(rename = "ciGate")]
    ci_gate: Option<bool>,
    repeat: Option<Spanned<RawRepeat>>,
    agent: Option<Spanned<RawAgent>>,
}

/// `repeat: 3` or `repeat: auto` / `repeat: "auto:20"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawRepeat {
    Runs(i64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDataset {
    description: Option<String>,
    name: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    metrics: Option<Vec<Spanned<String>>>,
    tools: Option<Spanned<serde_json::Value>>,
}

impl Manifest {
    /// Reads the manifest at `path` (shown as `shown`). Dataset paths must
    /// lie inside `root` (the crate, or the project the CLI runs in).
    pub fn load(path: &Path, shown: &str, root: &Path) -> Result<Manifest, ManifestError> {
        Self::load_with(path, shown, root, false)
    }

    /// [`load`](Self::load), but with `allow_outside` dataset paths may lead
    /// outside `root` (the explicit opt-out: `allow_outside = true`,
    /// `--allow-outside`).
    pub fn load_with(
        path: &Path,
        shown: &str,
        root: &Path,
        allow_outside: bool,
    ) -> Result<Manifest, ManifestError> {
        let bytes = read_checked(path, DEFAULT_MAX_DATASET_BYTES).map_err(|e| match e {
            ReadError::Io(source) => ManifestError::Io {
                path: shown.to_string(),
                source,
            },
            other => ManifestError::Unreadable {
                path: shown.to_string(),
                source: other,
            },
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let text = utf8(&bytes, shown)?;
        Self::parse_in(text, shown, dir, root, allow_outside)
    }

    /// Parses manifest `bytes` (UTF-8 text; a byte that is not is reported
    /// with its line and column), as [`parse`](Self::parse) does.
    pub fn parse_bytes(
        bytes: &[u8],
        shown: &str,
        dir: &Path,
        root: &Path,
    ) -> Result<Manifest, ManifestError> {
        Self::parse(utf8(bytes, shown)?, shown, dir, root)
    }

    /// Parses manifest `text`; relative dataset paths resolve against `dir`.
    pub fn parse(
        text: &str,
        shown: &str,
        dir: &Path,
        root: &Path,
    ) -> Result<Manifest, ManifestError> {
        Self::parse_in(text, shown, dir, root, false)
    }

    fn parse_in(
        text: &str,
        shown: &str,
        dir: &Path,
        root: &Path,
        allow_outside: bool,
    ) -> Result<Manifest, ManifestError> {
        let invalid = |problems: Vec<Problem>| ManifestError::Invalid {
            path: shown.to_string(),
            problems,
        };
        let at = |line: u32, message: String| Problem::new(shown, line.max(1) as usize, message);
        if crate::suite::is_suite(text) {
            return crate::suite::parse(text, shown, dir, root, allow_outside);
        }
        let raw: RawManifest = match serde_saphyr::from_str(text) {
            Ok(raw) => raw,
            Err(_) if other_tool(text).is_some() => {
                return Err(invalid(vec![at(1, other_tool(text).unwrap_or_default())]));
            }
            Err(e) => {
                let line = e.location().map(|l| l.line()).unwrap_or(1);
                let full = e.to_string();
                let message = full
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("invalid YAML")
                    .trim();
                let message = message.strip_prefix("error: ").unwrap_or(message);
                let message = match message.split_once(": ") {
                    Some((head, rest)) if head.starts_with("line ") => rest,
                    _ => message,
                };
                let mut p = at(line as u32, format!("invalid manifest: {message}"));
                if let Some(l) = e.location() {
                    p = p.column(l.column() as usize);
                }
                return Err(invalid(vec![p]));
            }
        };
        let Some(evaluation) = raw.spec.and_then(|s| s.evaluation) else {
            if let Some(other) = other_tool(text) {
                return Err(invalid(vec![at(1, other)]));
            }
            return Err(invalid(vec![at(
                1,
                "no `spec.evaluation` block: nothing to evaluate (expected spec.evaluation.datasets)"
                    .into(),
            )]));
        };
        let eval_line = evaluation.referenced.line();
        let evaluation = evaluation.value;
        let mut problems = Vec::new();
        let framework = evaluation.framework.map(|f| f.value);
        let deepeval = framework
            .as_deref()
            .is_some_and(|f| f.trim().eq_ignore_ascii_case("deepeval"));

        let repeat = match evaluation.repeat {
            None => crate::Repeat::default(),
            Some(r) => {
                let text = match &r.value {
                    RawRepeat::Runs(n) => n.to_string(),
                    RawRepeat::Text(t) => t.clone(),
                };
                match crate::Repeat::parse(&text) {
                    Ok(repeat) => repeat,
                    Err(e) => {
                        problems.push(
                            at(r.referenced.line() as u32, format!("`repeat: {text}`: {e}"))
                                .field("repeat"),
                        );
                        crate::Repeat::default()
                    }
                }
            }
        };

        let agent = match evaluation.agent {
            None => AgentSettings::default(),
            Some(a) => a.value.settings(&mut |line, message, field| {
                problems.push(at(line, message).field(field))
            }),
        };

        let thresholds = evaluation.thresholds.unwrap_or_default();
        let mut used_thresholds: Vec<&str> = Vec::new();
        let datasets_raw = match evaluation.datasets {
            Some(d) if !d.value.is_empty() => d.value,
            Some(d) => {
                problems.push(
                    at(
                        d.referenced.line() as u32,
                        "`datasets` is empty: list at least one {name, path, metrics}".into(),
                    )
                    .field("datasets"),
                );
                Vec::new()
            }
            None => {
                problems.push(
                    at(
                        eval_line as u32,
                        "`spec.evaluation` has no `datasets` list".into(),
                    )
                    .field("datasets"),
                );
                Vec::new()
            }
        };
        let mut datasets: Vec<ManifestDataset> = Vec::new();
        for entry in datasets_raw {
            let line = entry.referenced.line() as usize;
            let entry = entry.value;
            let Some(name) = entry.name.filter(|n| !n.value.trim().is_empty()) else {
                problems.push(at(line as u32, "dataset entry has no `name`".into()).field("name"));
                continue;
            };
            if datasets.iter().any(|d| d.name == name.value) {
                problems.push(
                    at(
                        name.referenced.line() as u32,
                        format!("dataset `{}` is listed twice", name.value),
                    )
                    .field("name"),
                );
                continue;
            }
            let file = match entry.path {
                None => {
                    problems.push(
                        at(
                            line as u32,
                            format!("dataset `{}` has no `path`", name.value),
                        )
                        .field("path"),
                    );
                    None
                }
                Some(p) => match resolve(&p.value, dir, root, allow_outside) {
                    Ok(found) => Some(found),
                    Err(message) => {
                        problems.push(at(p.referenced.line() as u32, message).field("path"));
                        None
                    }
                },
            };
            let tools = match entry.tools {
                None => Vec::new(),
                Some(t) => match dataset_tools(&t.value, dir, root, allow_outside) {
                    Ok(list) => list,
                    Err(message) => {
                        problems.push(at(t.referenced.line() as u32, message).field("tools"));
                        Vec::new()
                    }
                },
            };
            let (metric_list, metric_line) = match (entry.metrics, &evaluation.metrics) {
                (Some(m), _) => (m, line),
                (None, Some(m)) => (m.clone(), line),
                (None, None) => {
                    problems.push(
                        at(line as u32, format!(
                            "dataset `{}` has no metrics: give it `metrics: [...]` or list them under spec.evaluation.metrics",
                            name.value
                        ))
                        .field("metrics"),
                    );
                    continue;
                }
            };
            if metric_list.is_empty() {
                problems.push(
                    at(
                        metric_line as u32,
                        format!("dataset `{}` has an empty `metrics` list", name.value),
                    )
                    .field("metrics"),
                );
            }
            let mut specs: Vec<MetricSpec> = Vec::new();
            for m in &metric_list {
                let m_line = m.referenced.line() as u32;
                // A metric with no default threshold (`latency_ms`) takes
                // the one `thresholds` gives.
                let parsed = parse_specs(&m.value).or_else(|e| match e.kind() {
                    crate::metric::SpecErrorKind::ThresholdRequired { name, op } => {
                        match thresholds.iter().find(|(k, _)| k.as_str() == name.as_str()) {
                            Some((_, t)) => parse_specs(&format!("{} {op} {}", m.value, t.value)),
                            None => Err(e),
                        }
                    }
                    _ => Err(e),
                });
                let parsed = match parsed {
                    Ok(mut list) if list.len() == 1 => list.remove(0),
                    Ok(_) => {
                        problems.push(
                            at(m_line, format!("`{}`: one metric per list entry", m.value))
                                .field("metrics"),
                        );
                        continue;
                    }
                    Err(e) => {
                        problems.push(at(m_line, e.to_string()).field("metrics"));
                        continue;
                    }
                };
                let canonical = parsed.info().name;
                if specs.iter().any(|s| s.info().name == canonical) {
                    problems.push(
                        at(
                            m_line,
                            format!("metric `{}` is listed twice for `{}`", m.value, name.value),
                        )
                        .field("metrics"),
                    );
                    continue;
                }
                let written_bound = m.value.contains(">=") || m.value.contains("<=");
                let threshold = thresholds
                    .iter()
                    .find(|(k, _)| k.as_str() == parsed.name || k.as_str() == canonical);
                let spec = match threshold {
                    Some((key, t)) if !written_bound => {
                        used_thresholds.push(key.as_str());
                        let (op, value) = match canonical {
                            "toxicity" | "bias" if deepeval => (Op::AtLeast, 1.0 - t.value),
                            _ => (parsed.info().op, t.value),
                        };
                        let (name_s, options, _) = parsed.decl_parts();
                        let opts: Vec<(&str, OptionValue)> = options
                            .iter()
                            .map(|(k, v)| (k.as_str(), v.clone()))
                            .collect();
                        match MetricSpec::new(&name_s, &opts, Some((op, value))) {
                            Ok(s) => s,
                            Err(e) => {
                                problems.push(
                                    at(
                                        t.referenced.line() as u32,
                                        format!("threshold `{key}: {}`: {e}", t.value),
                                    )
                                    .field("thresholds"),
                                );
                                continue;
                            }
                        }
                    }
                    Some((key, t)) => {
                        used_thresholds.push(key.as_str());
                        problems.push(
                            at(
                                m_line,
                                format!(
                                    "`{}` gives its own threshold, and `thresholds` gives `{key}: {}` (line {}): keep one",
                                    m.value,
                                    t.value,
                                    t.referenced.line()
                                ),
                            )
                            .field("metrics"),
                        );
                        continue;
                    }
                    None => parsed,
                };
                specs.push(spec);
            }
            if let Some((file, shown)) = file {
                datasets.push(ManifestDataset {
                    name: name.value,
                    file,
                    shown,
                    specs,
                    line,
                    manifest: String::new(),
                    tools,
                    description: entry.description.filter(|d| !d.trim().is_empty()),
                    subset: crate::Subset::all(),
                    gates: Vec::new(),
                    threshold_gates: true,
                    notes: Vec::new(),
                    tracked: Vec::new(),
                });
            }
        }
        for (key, t) in &thresholds {
            if !used_thresholds.contains(&key.as_str()) {
                problems.push(
                    at(
                        t.referenced.line() as u32,
                        format!(
                            "threshold for `{key}`, but no dataset is scored with `{key}` (a typo?)"
                        ),
                    )
                    .field("thresholds"),
                );
            }
        }
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line);
            // A threshold shared by several datasets is wrong once.
            problems.dedup();
            return Err(invalid(problems));
        }
        for d in &mut datasets {
            d.manifest = shown.to_string();
        }
        Ok(Manifest {
            path: shown.to_string(),
            framework,
            datasets,
            ci_gate: evaluation.ci_gate.unwrap_or(false),
            repeat,
            agent,
        })
    }

    /// The dataset called `name`.
    pub fn dataset(&self, name: &str) -> Result<&ManifestDataset, ManifestError> {
        self.datasets
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| ManifestError::UnknownDataset {
                path: self.path.clone(),
                name: name.to_string(),
                known: self.datasets.iter().map(|d| d.name.clone()).collect(),
            })
    }
}

/// A dataset entry's `tools`: a path to a tools file (`$file:` optional,
/// relative to the manifest, inside the project like dataset paths) or the
/// definitions inline.
fn dataset_tools(
    value: &serde_json::Value,
    dir: &Path,
    root: &Path,
    allow_outside: bool,
) -> Result<Vec<serde_json::Value>, String> {
    match value {
        serde_json::Value::String(path) => {
            let (file, shown) = resolve(path, dir, root, allow_outside)
                .map_err(|e| e.replace("dataset file", "tools file"))?;
            crate::tool::read_definitions(&file, &shown).map_err(|e| e.to_string())
        }
        list => crate::tool::definitions(list).map_err(|e| format!("`tools`: {e}")),
    }
}

/// What another tool's YAML file is, by its top-level keys, when it is not
/// an agentspec manifest.
fn other_tool(text: &str) -> Option<String> {
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with([' ', '\t', '#', '-']))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
        .collect();
    let has = |k: &str| keys.contains(&k);
    if has("prompts")
        || has("providers")
        || has("tests")
        || has("defaultTest")
        || has("assert")
        || text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .is_some_and(|l| l.starts_with("- "))
    {
        return Some(
            "a promptfoo configuration or test list, not an agentspec manifest (not supported: its prompt templates and assertions have no equivalent here)".into(),
        );
    }
    None
}

/// `$file:relative/path` (or a plain path) resolved against `dir`, checked to
/// exist inside `root` ([`contained`]; anywhere with `allow_outside`).
/// Returns the absolute path and the path to show.
pub(crate) fn resolve(
    raw: &str,
    dir: &Path,
    root: &Path,
    allow_outside: bool,
) -> Result<(PathBuf, String), String> {
    let written = raw.trim();
    let rel = written.strip_prefix("$file:").unwrap_or(written).trim();
    if rel.starts_with('$') {
        return Err(format!(
            "`{written}`: a dataset path is a file (`$file:evals/rag.jsonl` or `evals/rag.jsonl`), not an env or secret reference"
        ));
    }
    if rel.is_empty() {
        return Err("empty dataset path".into());
    }
    let root_abs = normalize(&absolute(root));
    let full = normalize(&absolute(&dir.join(rel)));
    if !allow_outside
        && let Err(ContainmentError::Outside {
            resolved,
            root,
            symlink,
        }) = contained(&root_abs, &full)
    {
        return Err(format!(
            "`{written}` resolves to {}{}, outside the project root {}: keep datasets inside the project (or allow it: `allow_outside = true`, `--allow-outside`)",
            resolved.display(),
            if symlink { " (through a symlink)" } else { "" },
            root.display()
        ));
    }
    let shown = full
        .strip_prefix(&root_abs)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| full.to_string_lossy().into_owned());
    if !full.is_file() {
        return Err(if full.exists() {
            format!("`{written}` ({shown}) is not a file")
        } else {
            format!(
                "dataset file `{written}` does not exist (looked for {shown}, relative to the project root)"
            )
        });
    }
    Ok((full, shown))
}

/// The project a manifest's datasets must stay inside: the nearest directory
/// at or above `start` holding `.git` (a repository, so a workspace's shared
/// `evals/` is allowed), else `start` itself.
pub fn project_root(start: &Path) -> PathBuf {
    let start = normalize(&absolute(start));
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&start)
        .to_path_buf()
}

/// `bytes` as UTF-8 text, else the manifest's problem at the line and
/// column of the first byte that is not.
fn utf8<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, ManifestError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let line = 1 + good.iter().filter(|b| **b == b'\n').count();
        // Valid UTF-8 up to here: count characters, not bytes.
        let column = 1 + String::from_utf8_lossy(&good[line_start..]).chars().count();
        let byte = bytes[e.valid_up_to()];
        ManifestError::Invalid {
            path: shown.to_string(),
            problems: vec![
                Problem::new(
                    shown,
                    line,
                    format!("invalid UTF-8 (byte {byte:#04x}): a manifest is UTF-8 text"),
                )
                .column(column),
            ],
        }
    })
}

impl ManifestDataset {
    /// What each metric needs of every sample in a manifest dataset: seed
    /// 000's table (`context` for faithfulness, context_precision and
    /// hallucination; `context` and `reference_contexts` for
    /// context_recall) plus what the metric itself needs (e.g. `expected`).
    pub fn needs(spec: &MetricSpec) -> Vec<crate::metric::Need> {
        use crate::metric::Need;
        let mut needs: Vec<Need> = spec.needs().to_vec();
        let extra: &[Need] = match spec.kind {
            MetricKind::Faithfulness | MetricKind::Hallucination => &[Need::Context],
            MetricKind::ContextPrecision => &[Need::Context, Need::Expected],
            MetricKind::ContextRecall => &[Need::Context, Need::ReferenceContexts],
            _ => &[],
        };
        for n in extra {
            if !needs.contains(n) {
                needs.push(*n);
            }
        }
        needs
    }

    /// Checks every sample has the fields this dataset's metrics need, before
    /// any agent call; lists every sample that lacks one.
    pub fn check_fields(&self, dataset: &Dataset) -> Result<(), DatasetError> {
        use crate::metric::Need;
        let mut problems = Vec::new();
        'samples: for sample in &dataset.samples {
            for spec in &self.specs {
                for need in Self::needs(spec) {
                    let present = match need {
                        Need::Expected => sample.expected.is_some(),
                        Need::Context => !sample.context.is_empty(),
                        Need::ReferenceContexts => !sample.reference_contexts.is_empty(),
                        Need::RelevantIds => sample.relevant_ids().is_some(),
                        Need::ExpectedTools => sample.expected_tools.is_some(),
                    };
                    if !present {
                        problems.push(
                            Problem::new(
                                &sample.source.file,
                                sample.source.line,
                                format!(
                                    "dataset `{}` ({}:{}) is scored with `{}`, which needs `{need}` in every sample (seed 000's field table); this sample has none",
                                    self.name, self.manifest, self.line, spec.name
                                ),
                            )
                            .field(&need.to_string()),
                        );
                        if problems.len() > MAX_PROBLEMS {
                            break 'samples;
                        }
                        continue 'samples;
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(DatasetError::Invalid {
                path: dataset.path.clone(),
                problems,
            })
        }
    }

    /// Loads the dataset and checks its fields ([`check_fields`](Self::check_fields)).
    pub fn load(&self) -> Result<Dataset, DatasetError> {
        let dataset = Dataset::load_as(&self.file, &self.shown)?;
        self.check_fields(&dataset)?;
        Ok(dataset)
    }
}
