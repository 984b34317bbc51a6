//! agentspec `agent.yaml` manifests (seed 000): the parser. See
//! [`crate::manifest`] for the rules.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::model::{Manifest, ManifestDataset, ManifestError};
use super::paths::{resolve, yaml_problem};
use crate::agent::{AgentSettings, RawAgent};
use crate::error::Problem;
use crate::metric::{MetricSpec, Op, OptionValue, parse_specs};

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

/// A problem of the manifest `shown` at `line` (1 at least).
fn problem_at(shown: &str, line: u32, message: String) -> Problem {
    Problem::new(shown, line.max(1) as usize, message)
}

/// Parses agentspec manifest `text` (seed 000), every problem with its line.
pub(super) fn parse(
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
    let at = |line: u32, message: String| problem_at(shown, line, message);
    let raw: RawManifest = match serde_saphyr::from_str(text) {
        Ok(raw) => raw,
        Err(_) if other_tool(text).is_some() => {
            return Err(invalid(vec![at(1, other_tool(text).unwrap_or_default())]));
        }
        Err(e) => return Err(invalid(vec![yaml_problem(&e, shown, "manifest")])),
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
    let repeat = read_repeat(evaluation.repeat, shown, &mut problems);
    let agent = match evaluation.agent {
        None => AgentSettings::default(),
        Some(a) => a
            .value
            .settings(&mut |line, message, field| problems.push(at(line, message).field(field))),
    };

    let thresholds = evaluation.thresholds.unwrap_or_default();
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
    let mut entries = Entries {
        shown,
        dir,
        root,
        allow_outside,
        thresholds: &thresholds,
        deepeval,
        shared_metrics: evaluation.metrics.as_ref(),
        problems,
        used_thresholds: Vec::new(),
    };
    let mut datasets: Vec<ManifestDataset> = Vec::new();
    for entry in datasets_raw {
        if let Some(d) = entries.dataset(entry, &datasets) {
            datasets.push(d);
        }
    }
    let used_thresholds = entries.used_thresholds;
    let mut problems = entries.problems;
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

/// `repeat`: a number of runs or `auto`.
fn read_repeat(
    repeat: Option<Spanned<RawRepeat>>,
    shown: &str,
    problems: &mut Vec<Problem>,
) -> crate::Repeat {
    let Some(r) = repeat else {
        return crate::Repeat::default();
    };
    let text = match &r.value {
        RawRepeat::Runs(n) => n.to_string(),
        RawRepeat::Text(t) => t.clone(),
    };
    match crate::Repeat::parse(&text) {
        Ok(repeat) => repeat,
        Err(e) => {
            problems.push(
                problem_at(
                    shown,
                    r.referenced.line() as u32,
                    format!("`repeat: {text}`: {e}"),
                )
                .field("repeat"),
            );
            crate::Repeat::default()
        }
    }
}

/// The manifest's dataset entries being read: where the manifest is, the
/// settings every entry shares, and the problems so far.
struct Entries<'a> {
    shown: &'a str,
    dir: &'a Path,
    root: &'a Path,
    allow_outside: bool,
    thresholds: &'a BTreeMap<String, Spanned<f64>>,
    /// `framework: deepeval`: its `toxicity`/`bias` thresholds are maxima.
    deepeval: bool,
    /// `spec.evaluation.metrics`: the metrics of an entry without its own.
    shared_metrics: Option<&'a Vec<Spanned<String>>>,
    problems: Vec<Problem>,
    /// The keys of `thresholds` some metric took.
    used_thresholds: Vec<&'a str>,
}

impl<'a> Entries<'a> {
    fn push(&mut self, line: u32, message: String, field: &str) {
        self.problems
            .push(problem_at(self.shown, line, message).field(field));
    }

    /// One dataset entry (`datasets` are those before it): a name of its
    /// own, a path inside the project, its tools and metrics. `None` when
    /// there is no dataset to keep.
    fn dataset(
        &mut self,
        entry: Spanned<RawDataset>,
        datasets: &[ManifestDataset],
    ) -> Option<ManifestDataset> {
        let line = entry.referenced.line() as usize;
        let entry = entry.value;
        let Some(name) = entry.name.filter(|n| !n.value.trim().is_empty()) else {
            self.push(line as u32, "dataset entry has no `name`".into(), "name");
            return None;
        };
        if datasets.iter().any(|d| d.name == name.value) {
            self.push(
                name.referenced.line() as u32,
                format!("dataset `{}` is listed twice", name.value),
                "name",
            );
            return None;
        }
        let file = match entry.path {
            None => {
                self.push(
                    line as u32,
                    format!("dataset `{}` has no `path`", name.value),
                    "path",
                );
                None
            }
            Some(p) => match resolve(&p.value, self.dir, self.root, self.allow_outside) {
                Ok(found) => Some(found),
                Err(message) => {
                    self.push(p.referenced.line() as u32, message, "path");
                    None
                }
            },
        };
        let tools = match entry.tools {
            None => Vec::new(),
            Some(t) => match dataset_tools(&t.value, self.dir, self.root, self.allow_outside) {
                Ok(list) => list,
                Err(message) => {
                    self.push(t.referenced.line() as u32, message, "tools");
                    Vec::new()
                }
            },
        };
        let (metric_list, metric_line) = match (entry.metrics, self.shared_metrics) {
            (Some(m), _) => (m, line),
            (None, Some(m)) => (m.clone(), line),
            (None, None) => {
                self.push(
                    line as u32,
                    format!(
                        "dataset `{}` has no metrics: give it `metrics: [...]` or list them under spec.evaluation.metrics",
                        name.value
                    ),
                    "metrics",
                );
                return None;
            }
        };
        if metric_list.is_empty() {
            self.push(
                metric_line as u32,
                format!("dataset `{}` has an empty `metrics` list", name.value),
                "metrics",
            );
        }
        let mut specs: Vec<MetricSpec> = Vec::new();
        for m in &metric_list {
            if let Some(spec) = self.metric(m, &name.value, &specs) {
                specs.push(spec);
            }
        }
        let (file, shown) = file?;
        Some(ManifestDataset {
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
            model: None,
            notes: Vec::new(),
            tracked: Vec::new(),
        })
    }

    /// One metric of dataset `name` (after `specs`): a metric spec, not
    /// listed twice, its threshold written or in `thresholds` (not both).
    fn metric(
        &mut self,
        m: &Spanned<String>,
        name: &str,
        specs: &[MetricSpec],
    ) -> Option<MetricSpec> {
        let thresholds = self.thresholds;
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
                self.push(
                    m_line,
                    format!("`{}`: one metric per list entry", m.value),
                    "metrics",
                );
                return None;
            }
            Err(e) => {
                self.push(m_line, e.to_string(), "metrics");
                return None;
            }
        };
        let canonical = parsed.canonical_name().to_string();
        // External scorers and criteria metrics are told
        // apart by name.
        if specs.iter().any(|s| s.identity() == parsed.identity()) {
            self.push(
                m_line,
                format!("metric `{}` is listed twice for `{name}`", m.value),
                "metrics",
            );
            return None;
        }
        let written_bound = m.value.contains(">=") || m.value.contains("<=");
        let threshold = thresholds
            .iter()
            .find(|(k, _)| k.as_str() == parsed.name || k.as_str() == canonical);
        match threshold {
            Some((key, t)) if !written_bound => {
                self.used_thresholds.push(key.as_str());
                let (op, value) = match canonical.as_str() {
                    "toxicity" | "bias" if self.deepeval => (Op::AtLeast, 1.0 - t.value),
                    _ => (parsed.op, t.value),
                };
                let (name_s, options, _) = parsed.decl_parts();
                let opts: Vec<(&str, OptionValue)> = options
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.clone()))
                    .collect();
                match MetricSpec::new(&name_s, &opts, Some((op, value))) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        self.push(
                            t.referenced.line() as u32,
                            format!("threshold `{key}: {}`: {e}", t.value),
                            "thresholds",
                        );
                        None
                    }
                }
            }
            Some((key, t)) => {
                self.used_thresholds.push(key.as_str());
                self.push(
                    m_line,
                    format!(
                        "`{}` gives its own threshold, and `thresholds` gives `{key}: {}` (line {}): keep one",
                        m.value,
                        t.value,
                        t.referenced.line()
                    ),
                    "metrics",
                );
                None
            }
            None => Some(parsed),
        }
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
