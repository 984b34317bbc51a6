//! letta-evals suites (seed 001): one YAML file naming a dataset, which of
//! its samples to run, its graders and the reward that passes or fails it,
//! read as a [`Manifest`] with one dataset so that every front end taking a
//! manifest runs a suite (`evals evaluate suite.yaml`,
//! `#[eval_dataset(manifest = "suite.yaml")]`, `Harness::manifest`).
//!
//! The form is letta-evals 0.26's (`letta_evals/models/specs.py`):
//!
//! ```yaml
//! name: capitals                # the dataset's name in results
//! description: Capital cities   # shown in reports
//! dataset: capitals.jsonl       # relative to the suite file
//! max_samples: 10               # the first 10 (after the tag filter)
//! sample_tags: [geography]      # samples carrying every one of these tags
//! num_runs: 3                   # agent runs per sample
//! target:                       # required by letta; noted, not used
//!   kind: letta_code
//!   model_handles: [openai/gpt-4.1-mini, anthropic/claude-sonnet-4]   # one run per model
//! graders:                      # each a metric named by its key
//!   answer:
//!     kind: tool
//!     function: contains        # exact_match, contains, regex_match, ascii_printable_only
//!   quality:
//!     kind: model_judge         # the LLM judge with this rubric
//!     display_name: Quality     # noted
//!     prompt_path: rubric.txt   # or prompt: "..."
//! reward:
//!   kind: metric
//!   metric_key: answer          # the reward: this grader's score
//! ```
//!
//! How it is run, following letta-evals: samples are not failed one by one
//! (a sample fails only when it cannot be scored); the reward (see
//! [`super::suite_reward`]) fails the run when its mean is below letta's
//! pass mark, 1.0; every other grader is scored and reported ("not
//! enforced"). The form before 0.26, a top-level `gate` (`metric_key`,
//! `aggregation`, `op`, `value`) holding its grader's mean to its value, and
//! `kind: rubric`, are still read, with a note. Graders map to this tool's
//! metrics, reported under the grader's key ([`MetricSpec::labelled`]):
//! `exact_match` (case-sensitive, trimmed) to
//! `exact_match(case_sensitive = true)`, `contains` (case-insensitive) to
//! `contains`, `regex_match` (the ground truth as the pattern) to `regex`,
//! `ascii_printable_only` to `regex` with a printable-ASCII pattern, a judge
//! grader to `rubric` with its prompt's text (`{input}`, `{submission}`,
//! `{ground_truth}` and a sample's own `rubric` work as in letta).
//!
//! What cannot run here is refused with the suite's line: a Python grader
//! or extractor (`file.py:function`), an extractor other than
//! `last_assistant` (the agent's final answer is what is scored), a logical
//! or weighted gate, a strict or exact comparison (`gt`, `lt`, `eq`),
//! `accuracy` of a graded (not pass/fail) score, and a reward naming no
//! grader. A `custom` reward (Python) is not run, with a note. The suite's
//! `target` (a Letta agent), `setup_script`, `sandbox` and run settings are
//! not used: the agent is the front end's (`EVAL_AGENT_URL`, the test
//! function), and a note says so.
//!
//! `target.model_handles` runs the suite once per model, as letta-evals
//! does ([`super::suite_models`]): the suite becomes one dataset per model,
//! named `{name}@{model}` (test names and result rows carry the model),
//! each with the graders and the reward gate, so the summary and the
//! results file give each model its verdict, and the run fails when any
//! model's reward misses. Each sample reaches the agent with its model: an
//! HTTP agent's `model` (the OpenAI protocol's request `model`) and the
//! sample's `agent_args.model` (the JSON contract's body, a request
//! template's `{agent_args.model}`, an in-process agent's sample). Without
//! `model_handles` the suite runs once, as the front end set the agent up.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::model::{Manifest, ManifestDataset, ManifestError};
use super::paths::{resolve, yaml_problem};
use super::{suite_models, suite_reward};
use crate::error::Problem;
use crate::metric::{GateSpec, MetricSpec, Op, OptionValue, Stat};
use crate::repeat::MAX_REPEAT;
use crate::subset::Subset;

/// Python's `string.printable`: what letta's `ascii_printable_only` allows.
const PRINTABLE_ASCII: &str = r"^[\x20-\x7E\t\n\r\x0B\x0C]*$";

/// Whether `text` reads as a letta-evals suite: top-level `dataset:` and
/// `graders:` (or `target:`), no agentspec `spec:`.
pub(crate) fn is_suite(text: &str) -> bool {
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with([' ', '\t', '#', '-']))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
        .collect();
    let has = |k: &str| keys.contains(&k);
    has("dataset") && (has("graders") || has("target")) && !has("spec")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: Option<Spanned<String>>,
    description: Option<String>,
    dataset: Option<Spanned<String>>,
    max_samples: Option<Spanned<i64>>,
    sample_tags: Option<Spanned<Vec<String>>>,
    num_runs: Option<Spanned<i64>>,
    setup_script: Option<Spanned<String>>,
    target: Option<Spanned<serde_json::Value>>,
    graders: Option<Spanned<BTreeMap<String, Spanned<RawGrader>>>>,
    /// Early letta-evals: one unnamed grader.
    grader: Option<Spanned<RawGrader>>,
    /// Before letta-evals 0.26: the gate deciding the suite.
    gate: Option<Spanned<RawGate>>,
    /// letta-evals 0.26: the per-sample reward.
    reward: Option<Spanned<RawReward>>,
    sandbox: Option<Spanned<serde_json::Value>>,
    // letta-evals 0.26's run settings, not used here.
    max_concurrent: Option<serde_json::Value>,
    output: Option<serde_json::Value>,
    cleanup: Option<serde_json::Value>,
    dataset_provenance: Option<serde_json::Value>,
}

/// letta-evals 0.26's `reward` (`MetricRewardSpec` or `CustomRewardSpec`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReward {
    kind: Option<String>,
    metric_key: Option<String>,
    function: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // letta's judge settings: the front end's judge is used
struct RawGrader {
    kind: Option<String>,
    display_name: Option<String>,
    function: Option<String>,
    extractor: Option<String>,
    extractor_config: Option<serde_json::Value>,
    prompt: Option<String>,
    prompt_path: Option<String>,
    model: Option<String>,
    temperature: Option<f64>,
    provider: Option<String>,
    max_retries: Option<i64>,
    system_prompt: Option<String>,
    timeout: Option<f64>,
    rubric_vars: Option<serde_json::Value>,
    agent_file: Option<String>,
    judge_tool_name: Option<String>,
    depends_on: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // the logical and weighted gates' fields, refused by kind
struct RawGate {
    kind: Option<String>,
    metric_key: Option<String>,
    aggregation: Option<String>,
    metric: Option<String>,
    op: Option<String>,
    value: Option<f64>,
    pass_op: Option<String>,
    pass_value: Option<f64>,
    operator: Option<String>,
    conditions: Option<serde_json::Value>,
    weights: Option<serde_json::Value>,
    pass_threshold: Option<f64>,
}

/// One grader as a metric (named by its key): its spec and whether its
/// score is pass/fail.
pub(super) struct Graded {
    pub(super) key: String,
    pub(super) spec: MetricSpec,
    pub(super) binary: bool,
}

/// A suite being read: where it is, and what its parts say so far.
struct Reading<'a> {
    shown: &'a str,
    dir: &'a Path,
    root: &'a Path,
    allow_outside: bool,
    problems: Vec<Problem>,
    notes: Vec<String>,
    tracked: Vec<std::path::PathBuf>,
}

/// A map of graders (or the early form's one grader).
type RawGraders = Spanned<BTreeMap<String, Spanned<RawGrader>>>;

/// Parses suite `text` (shown as `shown`, in directory `dir`): the dataset
/// path is relative to `dir` and must lie inside `root` unless
/// `allow_outside`. Every problem is reported at its line.
pub(crate) fn parse(
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
    let raw: RawSuite = serde_saphyr::from_str(text)
        .map_err(|e| invalid(vec![yaml_problem(&e, shown, "letta-evals suite")]))?;
    let mut r = Reading {
        shown,
        dir,
        root,
        allow_outside,
        problems: Vec::new(),
        notes: Vec::new(),
        tracked: Vec::new(),
    };
    let name = r.name(raw.name.as_ref());
    let file = r.dataset_file(raw.dataset.as_ref());
    let line = raw
        .dataset
        .as_ref()
        .map_or(1, |d| d.referenced.line() as usize);
    let max = r.max_samples(raw.max_samples.as_ref());
    let unused = unused_note(&raw);
    let tags = raw.sample_tags.map(|t| t.value).unwrap_or_default();
    let repeat = r.repeat(raw.num_runs.as_ref());

    // The graders, as metrics.
    let (graded, failed) = r.graders(raw.graders, raw.grader);
    // The reward (letta-evals 0.26) or, before it, the gate.
    let gates = r.reward(raw.reward, raw.gate, &graded, &failed);
    // What letta runs that this tool does not.
    if let Some(unused) = unused {
        r.notes.push(format!("{shown}: not used here: {unused}"));
    }
    // One run per model (letta's `target.model_handles`).
    let handles = r.model_handles(raw.target.as_ref(), &name);

    let Reading {
        mut problems,
        notes,
        tracked,
        ..
    } = r;
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(invalid(problems));
    }
    let Some((file, dataset_shown)) = file else {
        return Err(invalid(vec![Problem::new(
            shown,
            1,
            "the suite has no usable `dataset`",
        )]));
    };
    let dataset = ManifestDataset {
        name,
        file,
        shown: dataset_shown,
        specs: graded.into_iter().map(|g| g.spec).collect(),
        line,
        manifest: shown.to_string(),
        tools: Vec::new(),
        description: raw.description.filter(|d| !d.trim().is_empty()),
        subset: Subset::new(tags, None, None, max),
        gates,
        threshold_gates: false,
        notes,
        tracked,
        model: None,
    };
    let datasets = match &handles {
        Some(handles) => suite_models::per_model(dataset, handles),
        None => vec![dataset],
    };
    Ok(Manifest {
        path: shown.to_string(),
        framework: Some("letta-evals".into()),
        datasets,
        // Samples are judged by the gate, not one by one; the graders
        // without a gate are reported, not enforced.
        ci_gate: false,
        repeat,
        // An agent that needs a model to start (the OpenAI protocol) starts
        // with the first handle; each model's dataset runs as its own.
        agent: crate::AgentSettings::new(
            None,
            handles.as_ref().and_then(|h| h.first().cloned()),
            None,
        ),
    })
}

/// What the suite sets that letta runs and this tool does not, listed.
fn unused_note(raw: &RawSuite) -> Option<String> {
    let mut unused = Vec::new();
    let has_handles = raw
        .target
        .as_ref()
        .is_some_and(|t| t.value.get("model_handles").is_some());
    if raw.target.is_some() {
        unused.push(if has_handles {
            "`target` but its `model_handles` (the agent is the front end's: EVAL_AGENT_URL or the test function)"
        } else {
            "`target` (the agent is the front end's: EVAL_AGENT_URL or the test function)"
        });
    }
    if raw.setup_script.is_some() {
        unused.push("`setup_script`");
    }
    if raw.sandbox.is_some() {
        unused.push("`sandbox`");
    }
    for (set, what) in [
        (
            raw.max_concurrent.is_some(),
            "`max_concurrent` (EVAL_CONCURRENCY)",
        ),
        (raw.output.is_some(), "`output`"),
        (raw.cleanup.is_some(), "`cleanup`"),
        (raw.dataset_provenance.is_some(), "`dataset_provenance`"),
    ] {
        if set {
            unused.push(what);
        }
    }
    (!unused.is_empty()).then(|| unused.join(", "))
}

impl Reading<'_> {
    /// A problem at `line` (1 at least).
    fn at(&self, line: usize, message: String) -> Problem {
        Problem::new(self.shown, line.max(1), message)
    }

    /// `name`: not blank.
    fn name(&mut self, name: Option<&Spanned<String>>) -> String {
        match name {
            Some(n) if !n.value.trim().is_empty() => n.value.trim().to_string(),
            _ => {
                let p = self.at(1, "the suite has no `name`".into()).field("name");
                self.problems.push(p);
                String::new()
            }
        }
    }

    /// `dataset`: a file inside the project, and how it is shown.
    fn dataset_file(
        &mut self,
        dataset: Option<&Spanned<String>>,
    ) -> Option<(std::path::PathBuf, String)> {
        match dataset {
            None => {
                let p = self
                    .at(1, "the suite has no `dataset`".into())
                    .field("dataset");
                self.problems.push(p);
                None
            }
            Some(d) => match resolve(&d.value, self.dir, self.root, self.allow_outside) {
                Ok(found) => Some(found),
                Err(message) => {
                    let p = self
                        .at(d.referenced.line() as usize, message)
                        .field("dataset");
                    self.problems.push(p);
                    None
                }
            },
        }
    }

    /// `max_samples`: 1 or more.
    fn max_samples(&mut self, max: Option<&Spanned<i64>>) -> Option<usize> {
        let expected = "a whole number of samples, 1 or more";
        self.whole("max_samples", max, 1..=i64::MAX, expected)
            .map(|m| m as usize)
    }

    /// `num_runs`: 1 to [`MAX_REPEAT`].
    fn repeat(&mut self, runs: Option<&Spanned<i64>>) -> crate::Repeat {
        let expected = format!("1 to {MAX_REPEAT} runs per sample");
        self.whole("num_runs", runs, 1..=i64::from(MAX_REPEAT), &expected)
            .map_or_else(crate::Repeat::default, |n| crate::Repeat::Runs(n as u32))
    }

    /// The whole number `field` holds when it lies in `range`; outside it, a
    /// problem at its line saying what was `expected`.
    fn whole(
        &mut self,
        field: &str,
        value: Option<&Spanned<i64>>,
        range: std::ops::RangeInclusive<i64>,
        expected: &str,
    ) -> Option<i64> {
        let v = value?;
        if range.contains(&v.value) {
            return Some(v.value);
        }
        let message = format!("`{field}: {}`: expected {expected}", v.value);
        let p = self.at(v.referenced.line() as usize, message).field(field);
        self.problems.push(p);
        None
    }

    /// `graders` (or one `grader`): each a metric named by its key. Returns
    /// the graders read and the keys of those refused.
    fn graders(
        &mut self,
        graders: Option<RawGraders>,
        grader: Option<Spanned<RawGrader>>,
    ) -> (Vec<Graded>, Vec<String>) {
        let graders = match (graders, grader) {
            (Some(_), Some(one)) => {
                let p = self
                    .at(
                        one.referenced.line() as usize,
                        "give `graders` or (as early suites did) one `grader`, not both".into(),
                    )
                    .field("grader");
                self.problems.push(p);
                None
            }
            (None, Some(one)) => Some(Spanned {
                referenced: one.referenced,
                defined: one.defined,
                value: BTreeMap::from([("grader".to_string(), one)]),
            }),
            (graders, None) => graders,
        };
        let mut graded: Vec<Graded> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        match graders {
            None if !self.problems.is_empty() => {}
            None => {
                let p = self
                    .at(1, "the suite has no `graders`".into())
                    .field("graders");
                self.problems.push(p);
            }
            Some(g) if g.value.is_empty() => {
                let p = self
                    .at(g.referenced.line() as usize, "`graders` is empty".into())
                    .field("graders");
                self.problems.push(p);
            }
            Some(g) => self.each_grader(g.value, &mut graded, &mut failed),
        }
        (graded, failed)
    }

    /// Each grader as its metric, into `graded` (or its key into `failed`),
    /// with notes of graders renamed and display names.
    fn each_grader(
        &mut self,
        graders: BTreeMap<String, Spanned<RawGrader>>,
        graded: &mut Vec<Graded>,
        failed: &mut Vec<String>,
    ) {
        let shown = self.shown;
        let mut renamed: Vec<String> = Vec::new();
        let mut displayed: Vec<String> = Vec::new();
        for (key, grader) in graders {
            let line = grader.referenced.line() as usize;
            match grader_spec(&grader.value, self.dir, self.root, self.allow_outside) {
                Ok((spec, binary, file)) => {
                    // Each grader is its own metric, named by its key,
                    // so several judges (or tools) of one kind coexist.
                    if spec.name != key {
                        renamed.push(format!("`{key}` ({})", spec.name));
                    }
                    let spec = spec.labelled(&key);
                    if let Some(shown_as) = grader.value.display_name.as_deref() {
                        let shown_as = shown_as.trim();
                        if !shown_as.is_empty() && shown_as != key {
                            displayed.push(format!("`{key}`: {shown_as}"));
                        }
                    }
                    self.tracked.extend(file);
                    graded.push(Graded { key, spec, binary });
                }
                Err(message) => {
                    let p = self
                        .at(line, format!("grader `{key}`: {message}"))
                        .field("graders");
                    self.problems.push(p);
                    failed.push(key);
                }
            }
        }
        if !renamed.is_empty() {
            self.notes.push(format!(
                "{shown}: results name each grader by its key: {}",
                renamed.join(", ")
            ));
        }
        if !displayed.is_empty() {
            self.notes
                .push(format!("{shown}: display names: {}", displayed.join(", ")));
        }
    }

    /// The reward (letta-evals 0.26) or, before it, the gate: the gate of
    /// the run, if any.
    fn reward(
        &mut self,
        reward: Option<Spanned<RawReward>>,
        gate_: Option<Spanned<RawGate>>,
        graded: &[Graded],
        failed: &[String],
    ) -> Vec<GateSpec> {
        let shown = self.shown;
        let mut gates = Vec::new();
        let gate_failed = |key: Option<&String>| {
            // A grader already refused says why; its gate has nothing to add.
            !failed.is_empty() && key.is_none_or(|k| failed.contains(k))
        };
        match (reward, gate_) {
            (Some(_), Some(g)) => {
                let p = self.at(
                    g.referenced.line() as usize,
                    "give `reward` (letta-evals 0.26) or the older `gate`, not both: letta-evals 0.26 refuses a top-level `gate`".into(),
                )
                .field("gate");
                self.problems.push(p);
            }
            (None, None) => self.notes.push(format!(
                "{shown}: the suite has no `reward` (letta-evals 0.26 requires one): every grader is scored and reported, and none fails the run"
            )),
            (Some(r), None) if gate_failed(r.value.metric_key.as_ref()) => {}
            (Some(r), None) if r.value.kind.as_deref() == Some("custom") => self.notes.push(format!(
                "{shown}: `reward.kind: custom` is Python code{}, which this tool does not run: every grader is scored and reported, and none fails the run (use `kind: metric` with a grader's `metric_key` to gate it)",
                r.value.function.as_deref().map(|f| format!(" (`{f}`)")).unwrap_or_default()
            )),
            (Some(r), None) => match suite_reward::reward_gate(
                r.value.kind.as_deref(),
                r.value.metric_key.as_deref(),
                graded,
            ) {
                Ok(gate) => {
                    self.notes.push(format!(
                        "{shown}: the reward is grader `{}`'s score; the run fails when the mean reward is below {:.1} (letta-evals' pass mark: every sample at full marks); the other graders are reported, not enforced",
                        gate.spec.name,
                        suite_reward::REWARD_PASS
                    ));
                    gates.push(gate);
                }
                Err(message) => {
                    let p = self.at(r.referenced.line() as usize, message).field("reward");
                    self.problems.push(p);
                }
            },
            (None, Some(g)) if gate_failed(g.value.metric_key.as_ref()) => {}
            (None, Some(g)) => match gate(&g.value, graded) {
                Ok(gate) => {
                    self.notes.push(format!(
                        "{shown}: `gate` is the form before letta-evals 0.26, which refuses it: write `reward: {{kind: metric, metric_key: {}}}` instead",
                        gate.spec.name
                    ));
                    gates.push(gate);
                }
                Err(message) => {
                    let p = self.at(g.referenced.line() as usize, message).field("gate");
                    self.problems.push(p);
                }
            },
        }
        gates
    }

    /// `target.model_handles`: the models the suite runs once each, noted.
    fn model_handles(
        &mut self,
        target: Option<&Spanned<serde_json::Value>>,
        name: &str,
    ) -> Option<Vec<String>> {
        let shown = self.shown;
        let handles = match suite_models::model_handles(target.map(|t| &t.value)) {
            Ok(handles) => handles,
            Err(message) => {
                let line = target.map_or(1, |t| t.referenced.line() as usize);
                let p = self.at(line, message).field("target");
                self.problems.push(p);
                None
            }
        };
        if let Some(handles) = &handles {
            self.notes.push(format!(
                "{shown}: `target.model_handles`: the suite runs once per model, as datasets {}: each sample is sent with the model (an HTTP agent's `model`, `agent_args.model`), and each model's reward is judged on its own",
                handles
                    .iter()
                    .map(|h| format!("`{name}@{h}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        handles
    }
}

/// A grader as a metric spec, whether its score is pass/fail, and the file
/// it read (a rubric's prompt).
fn grader_spec(
    g: &RawGrader,
    dir: &Path,
    root: &Path,
    allow_outside: bool,
) -> Result<(MetricSpec, bool, Option<std::path::PathBuf>), String> {
    let python = |what: &str, value: &str| {
        format!("{what} `{value}` is Python code, which this tool does not run")
    };
    if let Some(extractor) = g.extractor.as_deref()
        && extractor != "last_assistant"
    {
        return Err(if extractor.contains(".py:") {
            python("extractor", extractor)
        } else {
            format!(
                "extractor `{extractor}` is not supported: the agent's final answer is what is scored (`last_assistant`)"
            )
        });
    }
    let spec = |name: &str, options: &[(&str, OptionValue)]| {
        MetricSpec::new(name, options, None).map_err(|e| e.to_string())
    };
    match g.kind.as_deref().unwrap_or("tool") {
        "tool" => {
            let function = g
                .function
                .as_deref()
                .ok_or("a tool grader names its `function`")?;
            let s = match function {
                "exact_match" => spec(
                    "exact_match",
                    &[("case_sensitive", OptionValue::Bool(true))],
                )?,
                "contains" => spec("contains", &[])?,
                "regex_match" => spec("regex", &[("case_sensitive", OptionValue::Bool(true))])?,
                "ascii_printable_only" => spec(
                    "regex",
                    &[
                        ("pattern", OptionValue::Str(PRINTABLE_ASCII.into())),
                        ("case_sensitive", OptionValue::Bool(true)),
                    ],
                )?,
                f if f.contains(".py:") => return Err(python("function", f)),
                other => {
                    return Err(format!(
                        "function `{other}` is not a built-in grader; expected exact_match, contains, regex_match or ascii_printable_only"
                    ));
                }
            };
            Ok((s, true, None))
        }
        "rubric" | "model_judge" => {
            if g.agent_file.is_some() {
                return Err("an agent-as-judge grader (`agent_file`) needs a Letta agent; give a `prompt` or `prompt_path` for the LLM judge".into());
            }
            let (text, file) = match (&g.prompt, &g.prompt_path) {
                (Some(p), None) => (p.clone(), None),
                (None, Some(path)) => {
                    let (file, shown) = resolve(path, dir, root, allow_outside).map_err(|e| {
                        format!(
                            "`prompt_path`: {}",
                            e.replace("dataset file", "prompt file")
                        )
                    })?;
                    let text = crate::files::read_text(&file, crate::files::PROMPT_MAX_BYTES)
                        .map_err(|e| format!("`prompt_path` {shown}: cannot read it: {e}"))?;
                    (text, Some(file))
                }
                (Some(_), Some(_)) => return Err("give `prompt` or `prompt_path`, not both".into()),
                (None, None) => {
                    return Err("a rubric grader needs `prompt` or `prompt_path`".into());
                }
            };
            let s = spec("rubric", &[("rubric", OptionValue::Str(text.into()))])?;
            Ok((s, false, file))
        }
        "aggregation" => Err(
            "`kind: aggregation` combines other graders with Python code (`function`), which this tool does not run; gate one of its graders instead".into(),
        ),
        other => Err(format!(
            "`kind: {other}`: expected `tool`, `rubric` or `model_judge`"
        )),
    }
}

/// letta's `gate` as a gate on the mean of its grader's metric.
fn gate(g: &RawGate, graded: &[Graded]) -> Result<GateSpec, String> {
    if let Some(kind) = g.kind.as_deref().filter(|k| *k != "simple") {
        return Err(format!(
            "`gate.kind: {kind}` is not supported: one simple gate (metric_key, aggregation, op, value) decides the suite"
        ));
    }
    let grader = match (&g.metric_key, graded) {
        (Some(key), _) => graded.iter().find(|x| &x.key == key).ok_or_else(|| {
            let known: Vec<&str> = graded.iter().map(|x| x.key.as_str()).collect();
            format!(
                "`gate.metric_key: {key}` names no grader; the suite has: {}",
                known.join(", ")
            )
        })?,
        (None, [only]) => only,
        (None, _) => {
            return Err("`gate` needs `metric_key` when the suite has several graders".into());
        }
    };
    let aggregation = g
        .aggregation
        .as_deref()
        .or(g.metric.as_deref())
        .unwrap_or("avg_score");
    match aggregation {
        "avg_score" => {}
        "accuracy" if grader.binary => {
            // A pass/fail score: the share passing is the mean, when a
            // pass means a score of 1.
            let pass_ok = g.pass_op.as_deref().is_none_or(|op| op == "gte")
                && g.pass_value.is_none_or(|v| v > 0.0 && v <= 1.0);
            if !pass_ok {
                return Err("`pass_op`/`pass_value`: a pass/fail grader passes at a score of 1 (`pass_op: gte`, a `pass_value` above 0 and at most 1)".into());
            }
        }
        "accuracy" => {
            return Err(format!(
                "`accuracy` of `{}` (a graded score, not pass/fail) is not supported: gate its `avg_score`",
                grader.key
            ));
        }
        other => {
            return Err(format!(
                "`aggregation: {other}`: expected `avg_score` or `accuracy`"
            ));
        }
    }
    let op = match g.op.as_deref().unwrap_or("gte") {
        "gte" => Op::AtLeast,
        "lte" => Op::AtMost,
        other @ ("gt" | "lt" | "eq") => {
            return Err(format!(
                "`op: {other}` is not supported: a gate holds a mean at or above (`gte`) or at or below (`lte`) its value"
            ));
        }
        other => return Err(format!("`op: {other}`: expected `gte` or `lte`")),
    };
    let value = g.value.ok_or("`gate` needs a `value`")?;
    let (name, options, _) = grader.spec.decl_parts();
    let options: Vec<(&str, OptionValue)> = options
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let spec =
        MetricSpec::new(&name, &options, Some((op, value))).map_err(|e| format!("`gate`: {e}"))?;
    Ok(GateSpec::new(Stat::Mean, spec.labelled(&grader.key)))
}
