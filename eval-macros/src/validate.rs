//! Semantic checks: the dataset loads, the metrics exist and are set up
//! right, the function has the expected shape. Every problem is reported at
//! once, each at the span it concerns.

use std::path::PathBuf;

use eval_datasets::Dataset;
use eval_datasets::metric::{MetricSpec, Op, OptionValue, SpecErrorKind, SpecPart, Stat, lookup};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Lit, LitStr, ReturnType};

use crate::parse::{Input, MetricArg};

/// Everything expansion needs, all checked.
pub struct Checked {
    pub func: ItemFn,
    pub is_async: bool,
    /// Absolute path for `include_bytes!`.
    pub abs_path: String,
    /// The path as written, for messages.
    pub shown_path: String,
    pub test_names: Vec<String>,
    pub metrics: Vec<CheckedMetric>,
    /// `gate(...)`: each with its statistic.
    pub gates: Vec<(Stat, CheckedMetric)>,
    /// `ci_gate = true`, or a manifest's dataset (judged by its means).
    pub ci_gate: bool,
    /// Whether those gates fail the run: `ci_gate = true` or the
    /// manifest's `ciGate: true` (else reported, not enforced).
    pub enforce_thresholds: bool,
    /// Whether the dataset may have gates (explicit, `ciGate`, or a retrieval
    /// dataset's own thresholds): then a `<fn>::gates` test judges them.
    pub gate_test: bool,
    pub timeout_secs: Option<u64>,
    /// `repeat = N` / `"auto"`, else the manifest's, else 1.
    pub repeat: eval_datasets::Repeat,
    /// `inconclusive = "..."`, checked.
    pub inconclusive: Option<String>,
    /// `cluster = "field"`.
    pub cluster: Option<String>,
    /// Other files the expansion depends on (the manifest), for rebuilds.
    pub tracked: Vec<String>,
    /// `allow_custom_prefix = true`.
    pub allow_custom_prefix: bool,
    /// `allow_outside = true`.
    pub allow_outside: bool,
    /// Under `ci_gate`, whether each threshold gates the mean (agentspec);
    /// `false`: only the explicit gates (a letta suite's `gate`).
    pub threshold_gates: bool,
    /// The samples tested (`sample_tags`, `max_samples`, or a letta suite's):
    /// tags every sample must carry, and at most this many.
    pub sample_tags: Vec<String>,
    pub max_samples: Option<usize>,
    /// What the runtime says when the dataset is loaded (a suite's notes).
    pub notes: Vec<String>,
    /// Metrics (and gates) of the user's, by path.
    pub user: Vec<UserMetricArg>,
    /// The model the agent runs as (a letta suite's dataset `{suite}@{model}`).
    pub model: Option<String>,
}

/// A metric of the user's, written by its path: checked to be a metric by
/// the code the expansion writes (a compile error at the path if not).
pub struct UserMetricArg {
    pub path: syn::Path,
    pub bound: Option<(Op, f64)>,
    /// Its place in `metrics(...)`.
    pub at: usize,
    /// A gate on this statistic of it, rather than a metric.
    pub gate: Option<Stat>,
}

/// `m` as a metric of the user's, when it is written by its path (`None`
/// after pushing an error for options, which such a metric has none of).
fn user_arg(
    m: &MetricArg,
    at: usize,
    gate: Option<Stat>,
    errors: &mut Vec<syn::Error>,
) -> Option<UserMetricArg> {
    let path = m.path.clone()?;
    if let Some((key, _)) = m.options.first() {
        errors.push(syn::Error::new(
            key.span(),
            format!(
                "`{}` is a metric of your own: it takes no options (give it its settings in Rust)",
                m.name
            ),
        ));
        return None;
    }
    let bound = m
        .bound
        .as_ref()
        .map(|b| (if b.at_least { Op::AtLeast } else { Op::AtMost }, b.value));
    Some(UserMetricArg {
        path,
        bound,
        at,
        gate,
    })
}

/// The path as written, for comparing two.
fn path_text(path: &syn::Path) -> String {
    quote::ToTokens::to_token_stream(path)
        .to_string()
        .replace(' ', "")
}

pub struct CheckedMetric {
    pub name: String,
    pub options: Vec<(String, OptionValue)>,
    pub bound: Option<(Op, f64)>,
    /// The name results use when not `name` (a letta grader's key).
    pub named: Option<String>,
}

pub fn validate(input: Input) -> syn::Result<Checked> {
    let mut errors: Vec<syn::Error> = Vec::new();

    // The function.
    let sig = &input.func.sig;
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new(
            sig.generics.span(),
            "an eval function cannot be generic",
        ));
    }
    match sig.inputs.len() {
        1 => {
            if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
                errors.push(syn::Error::new(
                    r.span(),
                    "an eval function takes `sample: &Sample`, not `self`",
                ));
            }
        }
        _ => errors.push(syn::Error::new(
            if sig.inputs.is_empty() {
                sig.ident.span()
            } else {
                sig.inputs.span()
            },
            "an eval function takes exactly one parameter: `sample: &Sample`",
        )),
    }
    if matches!(sig.output, ReturnType::Default) {
        errors.push(syn::Error::new(
            sig.ident.span(),
            "an eval function returns the agent's answer: `-> Response` or `-> eval_runtime::Result<Response>`",
        ));
    }

    // The metrics.
    let mut metrics = Vec::new();
    if input.manifest.is_some()
        && let Some(span) = input.metrics_span
    {
        errors.push(syn::Error::new(
                span,
                "with `manifest = ...` the metrics and thresholds come from the manifest; remove `metrics(...)`",
            ));
    }
    let mut seen: Vec<String> = Vec::new();
    let mut user: Vec<UserMetricArg> = Vec::new();
    for (at, m) in input.metrics.iter().enumerate() {
        if m.path.is_some() {
            if let Some(u) = user_arg(m, at, None, &mut errors) {
                if user
                    .iter()
                    .any(|v| path_text(&v.path) == path_text(&u.path))
                {
                    errors.push(syn::Error::new_spanned(
                        &u.path,
                        format!(
                            "`{}` is listed twice; keep one threshold per metric",
                            path_text(&u.path)
                        ),
                    ));
                    continue;
                }
                user.push(u);
            }
            continue;
        }
        // external scorers are told apart by their results
        // name, which MetricSpec::new gives (checked below).
        if let Some(info) = lookup(&m.name.to_string()).filter(|i| i.name != "exec") {
            // two `g_eval` differ by their `name`
            let key = geval_identity(m, info.name);
            if seen.contains(&key) {
                errors.push(syn::Error::new(
                    m.name.span(),
                    format!(
                        "`{}` is listed twice; keep one threshold per metric",
                        // `g_eval:<name>`
                        if key.starts_with("g_eval:") {
                            key.clone()
                        } else {
                            m.name.to_string()
                        }
                    ),
                ));
                continue;
            }
            seen.push(key);
        }
        if let Some(checked) = check_metric(m, None, &mut errors) {
            metrics.push(checked);
        }
    }
    let mut gates = Vec::new();
    for g in &input.gates {
        let stat = match &g.stat {
            None => Some(Stat::Mean),
            Some(ident) => {
                let name = ident.to_string();
                let stat = Stat::parse(&name);
                if stat.is_none() {
                    errors.push(syn::Error::new(
                        ident.span(),
                        SpecErrorKind::UnknownStat { name }.to_string(),
                    ));
                }
                stat
            }
        };
        // a gate on a metric of the user's.
        if g.metric.path.is_some() {
            if let Some(stat) = stat
                && let Some(u) = user_arg(&g.metric, 0, Some(stat), &mut errors)
            {
                let scored = user
                    .iter()
                    .any(|v| v.gate.is_none() && path_text(&v.path) == path_text(&u.path));
                if !scored {
                    errors.push(syn::Error::new_spanned(
                        &u.path,
                        format!(
                            "gate `{}`: the dataset is not scored with it; add it to `metrics(...)`",
                            path_text(&u.path)
                        ),
                    ));
                } else if user
                    .iter()
                    .any(|v| v.gate == Some(stat) && path_text(&v.path) == path_text(&u.path))
                {
                    errors.push(syn::Error::new_spanned(
                        &u.path,
                        format!("gate on {stat} of `{}` given twice", path_text(&u.path)),
                    ));
                } else {
                    user.push(u);
                }
            }
            continue;
        }
        let checked = check_metric(
            &g.metric,
            stat.filter(|s| s.over_runs().is_some()),
            &mut errors,
        );
        if let (Some(stat), Some(checked)) = (stat, checked) {
            let key = (stat, lookup(&checked.name).map(|i| i.name));
            if gates
                .iter()
                .any(|(_, (s, c)): &(Span, (Stat, CheckedMetric))| {
                    (*s, lookup(&c.name).map(|i| i.name)) == key
                })
            {
                errors.push(syn::Error::new(
                    g.metric.name.span(),
                    format!("gate on {stat} of `{}` given twice", checked.name),
                ));
                continue;
            }
            gates.push((g.metric.name.span(), (stat, checked)));
        }
    }
    let mut ci_gate = input.ci_gate.as_ref().is_some_and(|b| b.value);
    let mut enforce_thresholds = true;
    let mut threshold_gates = true;
    let mut model = None;
    let mut notes = Vec::new();
    // The attribute's own choice of samples wins over a suite's.
    let mut subset: Option<eval_datasets::Subset> = None;
    let max_samples =
        input
            .max_samples
            .as_ref()
            .and_then(|lit| match lit.base10_parse::<usize>() {
                Ok(n) if n >= 1 => Some(n),
                _ => {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "max_samples must be a whole number of samples, 1 or more",
                    ));
                    None
                }
            });
    let sample_tags: Vec<String> = input
        .sample_tags
        .iter()
        .flat_map(|(_, tags)| tags.iter().map(LitStr::value))
        .collect();
    if max_samples.is_some() || input.sample_tags.is_some() {
        subset = Some(eval_datasets::Subset::new(
            sample_tags,
            None,
            None,
            max_samples,
        ));
    }

    let timeout_secs = match &input.timeout_secs {
        None => None,
        Some(lit) => match lit.base10_parse::<u64>() {
            Ok(0) | Err(_) => {
                errors.push(syn::Error::new(
                    lit.span(),
                    "timeout_secs must be a whole number of seconds above 0",
                ));
                None
            }
            Ok(n) => Some(n),
        },
    };

    let repeat = match &input.repeat {
        None => None,
        Some(lit) => {
            let text = match lit {
                Lit::Int(i) => Some(i.base10_digits().to_string()),
                Lit::Str(s) => Some(s.value()),
                _ => None,
            };
            match text.as_deref().map(eval_datasets::Repeat::parse) {
                Some(Ok(r)) => Some(r),
                Some(Err(e)) => {
                    errors.push(syn::Error::new(lit.span(), format!("repeat: {e}")));
                    None
                }
                None => {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "repeat: expected a number of runs (`repeat = 5`) or `\"auto\"` / `\"auto:20\"`",
                    ));
                    None
                }
            }
        }
    };
    let inconclusive = input.inconclusive.as_ref().and_then(|lit| {
        let value = lit.value();
        if matches!(value.as_str(), "estimate" | "fail" | "pass") {
            Some(value)
        } else {
            errors.push(syn::Error::new(
                lit.span(),
                format!("inconclusive = \"{value}\": expected \"estimate\" (the point estimate decides, the default), \"fail\" or \"pass\""),
            ));
            None
        }
    });
    let cluster = input.cluster.as_ref().and_then(|lit| {
        let value = lit.value();
        if value.trim().is_empty() {
            errors.push(syn::Error::new(
                lit.span(),
                "cluster = \"\": name the sample field samples are clustered by (a `metadata` key)",
            ));
            None
        } else {
            Some(value)
        }
    });

    // The dataset, read relative to the crate being compiled.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    // Paths stay inside the project, as a manifest's `$file:` paths do.
    let allow_outside = input.allow_outside.as_ref().is_some_and(|b| b.value);
    let root = eval_datasets::manifest::project_root(&manifest_dir);
    let inside = |written: &str, errors: &mut Vec<syn::Error>, span: Span| -> bool {
        if allow_outside {
            return true;
        }
        match eval_datasets::files::contained(&root, &manifest_dir.join(written)) {
            Err(eval_datasets::files::ContainmentError::Outside {
                resolved,
                root,
                symlink,
            }) => {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "{written}: resolves to {}{}, outside the project {}/ (the nearest directory with .git at or above the crate): keep datasets inside it, or add `allow_outside = true` if that is intended",
                        resolved.display(),
                        if symlink { " (through a symlink)" } else { "" },
                        root.display()
                    ),
                ));
                false
            }
            // A missing file is reported when it is read.
            _ => true,
        }
    };
    let mut tracked = Vec::new();
    crate::schema_file::check(
        &input.metrics,
        &manifest_dir,
        &inside,
        &mut errors,
        &mut tracked,
    );
    let mut repeat = repeat;
    let mut test_names = Vec::new();
    let (shown_path, abs, loaded, path_span) = match (&input.path, &input.manifest) {
        (Some(path), Some(_)) => {
            errors.push(syn::Error::new(
                path.span(),
                "give a dataset path or `manifest = ...` with `dataset = ...`, not both",
            ));
            (String::new(), PathBuf::new(), None, path.span())
        }
        (Some(path), None) => {
            if let Some(d) = &input.dataset {
                errors.push(syn::Error::new(
                    d.span(),
                    "`dataset = ...` names a dataset of a manifest: add `manifest = \"agent.yaml\"`",
                ));
            }
            let shown = path.value();
            let abs = manifest_dir.join(&shown);
            let loaded =
                inside(&shown, &mut errors, path.span()).then(|| Dataset::load_as(&abs, &shown));
            (shown, abs, loaded, path.span())
        }
        (None, Some(manifest)) => {
            let file = manifest_dir.join(manifest.value());
            tracked.push(file.to_string_lossy().into_owned());
            let chosen = match &input.dataset {
                // A manifest of one dataset (a letta suite) needs no name.
                None if inside(&manifest.value(), &mut errors, manifest.span()) => {
                    eval_datasets::Manifest::load_with(
                        &file,
                        &manifest.value(),
                        &root,
                        allow_outside,
                    )
                    .map_err(|e| e.problems())
                    .and_then(|m| match m.datasets.as_slice() {
                        [one] => Ok((m.repeat, m.ci_gate, one.clone())),
                        many => Err(vec![format!(
                            "name the manifest's dataset to test: `dataset = \"...\"` (it has {})",
                            many.iter()
                                .map(|d| d.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )]),
                    })
                }
                None => Err(Vec::new()),
                Some(_) if !inside(&manifest.value(), &mut errors, manifest.span()) => {
                    Err(Vec::new())
                }
                Some(name) => eval_datasets::Manifest::load_with(
                    &file,
                    &manifest.value(),
                    &root,
                    allow_outside,
                )
                .and_then(|m| {
                    m.dataset(&name.value())
                        .cloned()
                        .map(|d| (m.repeat, m.ci_gate, d))
                })
                .map_err(|e| e.problems()),
            };
            match chosen {
                Ok((manifest_repeat, manifest_gate, d)) => {
                    if repeat.is_none() {
                        repeat = Some(manifest_repeat);
                    }
                    // Seed 000: a manifest's thresholds gate the means, and
                    // fail the run only under `ciGate: true`.
                    enforce_thresholds = ci_gate || manifest_gate;
                    ci_gate = true;
                    // A letta suite: its gate decides, its graders are scored.
                    threshold_gates = d.threshold_gates;
                    model = d.model.clone();
                    for g in &d.gates {
                        let (name, options, bound) = g.spec.decl_parts();
                        let named = (g.spec.name != name).then(|| g.spec.name.clone());
                        gates.push((
                            manifest.span(),
                            (
                                g.stat,
                                CheckedMetric {
                                    name,
                                    options,
                                    bound,
                                    named,
                                },
                            ),
                        ));
                    }
                    if subset.is_none() && !d.subset.is_all() {
                        subset = Some(d.subset.clone());
                    }
                    notes.extend(d.notes.iter().cloned());
                    tracked.extend(d.tracked.iter().map(|f| f.to_string_lossy().into_owned()));
                    for spec in &d.specs {
                        let (name, options, bound) = spec.decl_parts();
                        let named = (spec.name != name).then(|| spec.name.clone());
                        metrics.push(CheckedMetric {
                            name,
                            options,
                            bound,
                            named,
                        });
                    }
                    let loaded = d.load();
                    (
                        d.shown.clone(),
                        d.file.clone(),
                        Some(loaded),
                        manifest.span(),
                    )
                }
                Err(problems) => {
                    for p in problems {
                        errors.push(syn::Error::new(manifest.span(), p));
                    }
                    (String::new(), PathBuf::new(), None, manifest.span())
                }
            }
        }
        (None, None) => unreachable!("parse requires a path or a manifest"),
    };
    let repeat = repeat.unwrap_or_default();
    let mut own_gates = false;
    // The metrics a dataset names itself (a runevals file's evaluators).
    let mut own: Vec<String> = Vec::new();
    match loaded {
        None => {}
        Some(Ok(ds)) => {
            for s in &ds.samples {
                // issue38:runevals: a file naming no evaluators has the
                // default dimensions, as in every front end.
                let defaults = eval_datasets::runevals::default_evaluators(s);
                for evaluators in std::iter::once(&s.evaluators)
                    .chain(&s.turn_evaluators)
                    .chain(std::iter::once(&defaults))
                {
                    let specs = eval_datasets::runevals::specs(evaluators).unwrap_or_default();
                    own.extend(specs.into_iter().map(|spec| spec.name));
                }
            }
            own.sort();
            own.dedup();
            let retrieval = ds.samples.iter().any(|s| s.retrieval.is_some());
            if input.manifest.is_none() && input.metrics.is_empty() && own.is_empty() && !retrieval
            {
                errors.push(syn::Error::new(
                    Span::call_site(),
                    format!(
                        "no metrics to check: {shown_path} names no evaluators of its own; add e.g. `metrics(contains >= 1.0, partial_match >= 0.5)`"
                    ),
                ));
            }
            // A retrieval dataset's own thresholds gate its means.
            if ds.samples.iter().any(|s| s.retrieval.is_some()) {
                own_gates = eval_datasets::files::read_checked(
                    &abs,
                    eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
                )
                .ok()
                .and_then(|bytes| {
                    eval_datasets::retrieval::RetrievalDataset::from_bytes(&shown_path, &bytes).ok()
                })
                .is_some_and(|rd| !rd.thresholds.is_empty());
            }
            // seed 004: a retrieval dataset's ingest deletes its scope.
            let allowed = input.allow_custom_prefix.as_ref().is_some_and(|b| b.value);
            if let Some(q) = ds.samples.first().and_then(|s| s.retrieval.as_ref())
                && !allowed
                && !q.scope_is_allowed()
            {
                let prefix = &q.scope_prefix;
                errors.push(syn::Error::new(
                    path_span,
                    format!(
                        "{shown_path}: scopePrefix `{prefix}` {}: ingest deletes every document under it; add `allow_custom_prefix = true` if that is intended",
                        eval_datasets::retrieval::scope_problem(prefix)
                    ),
                ));
            }
            test_names = ds.test_names();
            // Only the samples the run is about get a test (the runtime
            // picks the same ones by the same rule).
            if let Some(subset) = &subset {
                let keep = subset.pick(&ds.samples);
                test_names = keep.into_iter().map(|i| test_names[i].clone()).collect();
                if test_names.is_empty() {
                    errors.push(syn::Error::new(
                        path_span,
                        format!("{shown_path}: no sample is left by `sample_tags`/`max_samples`"),
                    ));
                }
            }
        }
        Some(Err(err)) => {
            let hint = match &err {
                eval_datasets::DatasetError::Io { .. } => format!(
                    " (paths are relative to the crate's directory, CARGO_MANIFEST_DIR = {})",
                    manifest_dir.display()
                ),
                _ => String::new(),
            };
            for problem in err.problems() {
                errors.push(syn::Error::new(path_span, format!("{problem}{hint}")));
            }
        }
    }

    // A gate must gate a metric the dataset is scored with, or what the
    // engine measures of every sample (latency, time to first token, cost).
    for (span, (_, g)) in &gates {
        let known = lookup(&g.name).map(|i| i.name);
        if lookup(&g.name).is_some_and(|i| i.measured().is_some()) {
            continue;
        }
        let scored = |name: &str| lookup(name).map(|i| i.name) == known;
        if !metrics.iter().any(|m| scored(&m.name)) && !own.iter().any(|n| scored(n)) {
            errors.push(syn::Error::new(
                *span,
                format!(
                    "gate `{}`: the dataset is not scored with `{}`; add it to `metrics(...)`",
                    g.name, g.name
                ),
            ));
        }
    }
    let mut errors = errors.into_iter();
    if let Some(mut head) = errors.next() {
        errors.for_each(|e| head.combine(e));
        return Err(head);
    }

    // (a gate on a metric of the user's too)
    let gate_test =
        !gates.is_empty() || ci_gate || own_gates || user.iter().any(|u| u.gate.is_some());
    if gate_test && test_names.iter().any(|n| n == "gates") {
        return Err(syn::Error::new(
            path_span,
            format!(
                "{shown_path}: a sample is named `gates`, the name of the test that judges the dataset's gates (`<fn>::gates`): give the sample another `id`"
            ),
        ));
    }
    let is_async = input.func.sig.asyncness.is_some();
    Ok(Checked {
        gates: gates.into_iter().map(|(_, g)| g).collect(),
        ci_gate,
        enforce_thresholds,
        gate_test,
        func: input.func,
        is_async,
        abs_path: abs.to_string_lossy().into_owned(),
        shown_path,
        test_names,
        metrics,
        timeout_secs,
        repeat,
        inconclusive,
        cluster,
        tracked,
        allow_custom_prefix: input.allow_custom_prefix.as_ref().is_some_and(|b| b.value),
        allow_outside,
        threshold_gates,
        sample_tags: subset.as_ref().map(|s| s.tags.clone()).unwrap_or_default(),
        max_samples: subset.as_ref().and_then(|s| s.max),
        notes,
        user,
        model,
    })
}

/// One `name(options) >= x`, checked: a known metric, its options, the
/// direction and range of its threshold. `None` after pushing the errors.
/// What two metrics of one list must not share: the catalogue name, or for
/// `g_eval` `g_eval:<name>` (its `name` option).
fn geval_identity(m: &MetricArg, canonical: &str) -> String {
    if canonical != "g_eval" {
        return canonical.to_string();
    }
    m.options
        .iter()
        .find_map(|(k, v)| match v {
            Lit::Str(s) if k == "name" => Some(format!("g_eval:{}", s.value())),
            _ => None,
        })
        .unwrap_or_else(|| "g_eval".to_string())
}

/// Checks a metric as written: a metric of the list, or the metric a gate
/// is on; `over_runs` a `pass@k`/`pass^k` statistic, whose bound is the
/// gate's share, not the metric's threshold.
fn check_metric(
    m: &MetricArg,
    over_runs: Option<Stat>,
    errors: &mut Vec<syn::Error>,
) -> Option<CheckedMetric> {
    let name = m.name.to_string();
    let mut options = Vec::new();
    for (key, lit) in &m.options {
        let value = match lit {
            Lit::Bool(b) => OptionValue::Bool(b.value),
            Lit::Str(s) => OptionValue::Str(s.value().into()),
            Lit::Int(i) => OptionValue::Num(i.base10_parse().unwrap_or(f64::NAN)),
            Lit::Float(f) => OptionValue::Num(f.base10_parse().unwrap_or(f64::NAN)),
            other => {
                errors.push(syn::Error::new(
                    other.span(),
                    "expected true, false, a number or a string",
                ));
                continue;
            }
        };
        options.push((key.to_string(), value));
    }
    let bound = m
        .bound
        .as_ref()
        .map(|b| (if b.at_least { Op::AtLeast } else { Op::AtMost }, b.value));
    let opts: Vec<(&str, OptionValue)> = options
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let checked = match over_runs {
        Some(stat) => {
            eval_datasets::metric::GateSpec::over_runs_of(stat, &name, &opts, bound).map(|_| ())
        }
        None => MetricSpec::new(&name, &opts, bound).map(|_| ()),
    };
    match checked {
        Ok(()) => Some(CheckedMetric {
            name,
            options,
            bound,
            named: None,
        }),
        Err(e) => {
            let span = match e.1 {
                SpecPart::Option(i) => m.options.get(i).map_or(m.name.span(), |(k, _)| k.span()),
                SpecPart::Op => m.bound.as_ref().map_or(m.name.span(), |b| b.op_span),
                SpecPart::Threshold => m.bound.as_ref().map_or(m.name.span(), |b| b.value_span),
                _ => m.name.span(),
            };
            // the hint for a metric of your own.
            let text = match &e.0 {
                SpecErrorKind::UnknownMetric { .. } => format!(
                    "{}; a metric of your own is written by its path: `crate::{name}`",
                    e.0
                ),
                other => other.to_string(),
            };
            errors.push(syn::Error::new(span, text));
            None
        }
    }
}
