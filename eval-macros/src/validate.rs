//! Semantic checks: the dataset loads, the metrics exist and are set up
//! right, the function has the expected shape. Every problem is reported at
//! once, each at the span it concerns.

use eval_datasets::metric::{MetricSpec, Op, OptionValue, SpecErrorKind, SpecPart, Stat, lookup};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Lit, LitStr, ReturnType};

use crate::parse::{Input, MetricArg};

mod dataset;

/// Everything expansion needs, all checked.
pub(crate) struct Checked {
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
pub(crate) struct UserMetricArg {
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

pub(crate) struct CheckedMetric {
    pub name: String,
    pub options: Vec<(String, OptionValue)>,
    pub bound: Option<(Op, f64)>,
    /// The name results use when not `name` (a letta grader's key).
    pub named: Option<String>,
}

/// The attribute, checked node by node (one validator each, as thiserror's
/// `valid.rs` does): the function's signature, the metrics, the gates, the
/// run's options, then the dataset (a path or a manifest's) and what it
/// holds. Every problem is reported at once, in that order.
pub(crate) fn validate(input: Input) -> syn::Result<Checked> {
    let mut errors: Vec<syn::Error> = Vec::new();
    check_signature(&input.func.sig, &mut errors);
    let (metrics, mut user) = check_metrics(&input, &mut errors);
    let gates = check_gates(&input, &mut user, &mut errors);
    let mut found = dataset::Found {
        metrics,
        gates,
        ci_gate: input.ci_gate.as_ref().is_some_and(|b| b.value),
        enforce_thresholds: true,
        threshold_gates: true,
        model: None,
        notes: Vec::new(),
        // The attribute's own choice of samples wins over a suite's.
        subset: check_subset(&input, &mut errors),
        tracked: Vec::new(),
        repeat: None,
    };
    let timeout_secs = check_timeout(&input, &mut errors);
    found.repeat = check_repeat(&input, &mut errors);
    let inconclusive = check_inconclusive(&input, &mut errors);
    let cluster = check_cluster(&input, &mut errors);

    // The dataset, read relative to the crate being compiled.
    let place = dataset::Place::of(&input);
    crate::schema_file::check(
        &input.metrics,
        &place.manifest_dir,
        &|written: &str, errors: &mut Vec<syn::Error>, span: Span| {
            place.inside(written, errors, span)
        },
        &mut errors,
        &mut found.tracked,
    );
    let source = dataset::source(&input, &place, &mut found, &mut errors);
    let samples = dataset::check_samples(&input, &place, &source, &found, &mut errors);
    check_gates_scored(&found.gates, &found.metrics, &samples.own, &mut errors);
    let mut errors = errors.into_iter();
    if let Some(mut head) = errors.next() {
        errors.for_each(|e| head.combine(e));
        return Err(head);
    }

    // (a gate on a metric of the user's too)
    let gate_test = !found.gates.is_empty()
        || found.ci_gate
        || samples.own_gates
        || user.iter().any(|u| u.gate.is_some());
    let shown_path = source.shown_path;
    if gate_test && samples.test_names.iter().any(|n| n == "gates") {
        return Err(syn::Error::new(
            source.span,
            format!(
                "{shown_path}: a sample is named `gates`, the name of the test that judges the dataset's gates (`<fn>::gates`): give the sample another `id`"
            ),
        ));
    }
    let is_async = input.func.sig.asyncness.is_some();
    let subset = found.subset;
    Ok(Checked {
        gates: found.gates.into_iter().map(|(_, g)| g).collect(),
        ci_gate: found.ci_gate,
        enforce_thresholds: found.enforce_thresholds,
        gate_test,
        func: input.func,
        is_async,
        abs_path: source.abs.to_string_lossy().into_owned(),
        shown_path,
        test_names: samples.test_names,
        metrics: found.metrics,
        timeout_secs,
        repeat: found.repeat.unwrap_or_default(),
        inconclusive,
        cluster,
        tracked: found.tracked,
        allow_custom_prefix: input.allow_custom_prefix.as_ref().is_some_and(|b| b.value),
        allow_outside: place.allow_outside,
        threshold_gates: found.threshold_gates,
        sample_tags: subset.as_ref().map(|s| s.tags.clone()).unwrap_or_default(),
        max_samples: subset.as_ref().and_then(|s| s.max),
        notes: found.notes,
        user,
        model: found.model,
    })
}

/// The function: not generic, one parameter that is not `self`, a return
/// type.
fn check_signature(sig: &syn::Signature, errors: &mut Vec<syn::Error>) {
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
}

/// `metrics(...)`: each a known metric set up right, or a metric of the
/// user's by its path; none listed twice; none beside a manifest.
fn check_metrics(
    input: &Input,
    errors: &mut Vec<syn::Error>,
) -> (Vec<CheckedMetric>, Vec<UserMetricArg>) {
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
            if let Some(u) = user_arg(m, at, None, errors) {
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
        if let Some(checked) = check_metric(m, None, errors) {
            metrics.push(checked);
        }
    }
    (metrics, user)
}

/// A gate's statistic: the mean unless named, and then a known one.
fn gate_stat(stat: Option<&syn::Ident>, errors: &mut Vec<syn::Error>) -> Option<Stat> {
    match stat {
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
    }
}

/// `gate(...)`: each on a known statistic of a metric set up right, none
/// given twice; a gate on a metric of the user's joins `user`, and must be
/// on one of its `metrics(...)`.
fn check_gates(
    input: &Input,
    user: &mut Vec<UserMetricArg>,
    errors: &mut Vec<syn::Error>,
) -> Vec<(Span, (Stat, CheckedMetric))> {
    let mut gates: Vec<(Span, (Stat, CheckedMetric))> = Vec::new();
    for g in &input.gates {
        let stat = gate_stat(g.stat.as_ref(), errors);
        // a gate on a metric of the user's.
        if g.metric.path.is_some() {
            if let Some(stat) = stat
                && let Some(u) = user_arg(&g.metric, 0, Some(stat), errors)
            {
                check_user_gate(u, stat, user, errors);
            }
            continue;
        }
        let checked = check_metric(&g.metric, stat.filter(|s| s.over_runs().is_some()), errors);
        if let (Some(stat), Some(checked)) = (stat, checked) {
            let key = (stat, lookup(&checked.name).map(|i| i.name));
            if gates
                .iter()
                .any(|(_, (s, c))| (*s, lookup(&c.name).map(|i| i.name)) == key)
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
    gates
}

/// A gate on a metric of the user's: scored with it, and not given twice.
fn check_user_gate(
    u: UserMetricArg,
    stat: Stat,
    user: &mut Vec<UserMetricArg>,
    errors: &mut Vec<syn::Error>,
) {
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

/// `max_samples` (1 or more) and `sample_tags`: the samples tested.
fn check_subset(input: &Input, errors: &mut Vec<syn::Error>) -> Option<eval_datasets::Subset> {
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
    (max_samples.is_some() || input.sample_tags.is_some())
        .then(|| eval_datasets::Subset::new(sample_tags, None, None, max_samples))
}

/// `timeout_secs`: a whole number of seconds above 0.
fn check_timeout(input: &Input, errors: &mut Vec<syn::Error>) -> Option<u64> {
    match &input.timeout_secs {
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
    }
}

/// `repeat`: a number of runs or `"auto"`.
fn check_repeat(input: &Input, errors: &mut Vec<syn::Error>) -> Option<eval_datasets::Repeat> {
    let lit = input.repeat.as_ref()?;
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

/// `inconclusive`: one of its three words.
fn check_inconclusive(input: &Input, errors: &mut Vec<syn::Error>) -> Option<String> {
    input.inconclusive.as_ref().and_then(|lit| {
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
    })
}

/// `cluster`: a field's name, not blank.
fn check_cluster(input: &Input, errors: &mut Vec<syn::Error>) -> Option<String> {
    input.cluster.as_ref().and_then(|lit| {
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
    })
}

/// A gate must gate a metric the dataset is scored with, or what the
/// engine measures of every sample (latency, time to first token, cost).
fn check_gates_scored(
    gates: &[(Span, (Stat, CheckedMetric))],
    metrics: &[CheckedMetric],
    own: &[String],
    errors: &mut Vec<syn::Error>,
) {
    for (span, (_, g)) in gates {
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
