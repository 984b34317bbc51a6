//! Tool-call metrics: the agent's calls ([`Response::tool_calls`], every
//! turn, in order) against what the sample expects — the tool its expected
//! answer names (letta-evals), or its expected calls
//! ([`Sample::expected_tools`]: deepeval `expected_tools`, ragas
//! `reference_tool_calls`).
//!
//! | metric | published definition |
//! |---|---|
//! | `tool_called` | [`tool_called`] (letta-evals "Tool Usage Testing") |
//! | `tool_correctness` | [`tool_correctness`] (deepeval `ToolCorrectnessMetric`) |
//! | `tool_call_accuracy` | [`tool_call_accuracy`] (ragas 0.4.3 `ToolCallAccuracy`); `pairing = "best"`: [`tool_call_accuracy_best`] |
//! | `tool_call_f1` | [`tool_call_f1`] (ragas `ToolCallF1`) |
//!
//! Arguments are JSON values and compare the way each definition compares
//! them (both tools are written in Python): deepeval and ragas' F1 use
//! Python equality, so numbers are equal when their values are, exactly
//! (`1` and `1.0`, not `9007199254740993` and `9007199254740992.0`), and a
//! number never equals a string (`75` is not `"75"`); ragas' accuracy
//! compares the arguments' text (`str()`), so `75` and `"75"` match there,
//! `75` and `75.0` do not. One departure from both: booleans equal only
//! booleans — JSON `true` is not the number `1` here, where Python's
//! `True == 1` would make them equal.
//!
//! A metric of one turn (`tool_correctness@turn2`) scores the calls made in
//! that turn only; `tool_called@turn2` against that turn's expected answer.
//!
//! A call whose arguments the agent sent as broken JSON (or as something
//! other than an object: [`ToolCall::invalid_arguments`]) is kept: metrics
//! of names (`tool_called`, `tool_correctness` without `parameters`) score
//! it like any call; metrics of arguments (`tool_correctness(parameters)`,
//! `tool_call_accuracy`, `tool_call_f1`, and the trajectory metrics unless
//! `args = "ignore"`) count its arguments as equal to none, and their
//! explanation names the parse error.
//!
//! Files: `tools/accuracy.rs` (ragas' `ToolCallAccuracy`, both pairings),
//! `tools/python.rs` (Python's `==`, `str()` and `repr` of JSON values, which
//! the comparisons above follow).
//!
//! [`Response::tool_calls`]: crate::Response::tool_calls

use eval_datasets::metric::{MetricSpec, ToolMetric, ToolPairing};
use eval_datasets::{Expected, Sample, ToolCall};
use serde_json::{Map, Value};

use super::MetricError;
use crate::agent::Response;

mod accuracy;
mod python;

#[cfg(test)]
use accuracy::canonical_text;
use accuracy::{tool_call_accuracy, tool_call_accuracy_best};
#[cfg(test)]
use python::python_str;
pub(crate) use python::{map_eq, py_eq};

/// Scores a tool-call metric (`kind` is `spec`'s): the agent's calls in
/// `response` (of user turn `turn` only, when given) against the sample's
/// expectation.
pub(crate) fn score(
    spec: &MetricSpec,
    kind: &ToolMetric,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Result<f64, MetricError> {
    if let Some(refusal) = incomplete_trace(spec, response) {
        return Err(refusal);
    }
    let calls: Vec<ToolCall> = match turn {
        Some(t) => response
            .tool_calls
            .iter()
            .filter(|c| c.turn == t)
            .cloned()
            .collect(),
        None => response.tool_calls.clone(),
    };
    if let ToolMetric::ToolCalled = kind {
        return score_tool_called(spec, sample, &calls, turn);
    }
    let Some(expected) = &sample.expected_tools else {
        return Err(format!(
            "`{}` needs the sample's expected tool calls (`expected_tools`, or ragas `reference_tool_calls`)",
            spec.name
        )
        .into());
    };
    Ok(match *kind {
        ToolMetric::ToolCalled => score_tool_called(spec, sample, &calls, turn)?,
        ToolMetric::ToolCorrectness {
            parameters,
            ordering,
            exact,
        } => tool_correctness(
            expected,
            &calls,
            Correctness {
                parameters,
                ordering,
                exact,
            },
        ),
        ToolMetric::ToolCallAccuracy {
            strict_order,
            pairing,
        } => match pairing {
            ToolPairing::Position => tool_call_accuracy(expected, &calls, strict_order),
            ToolPairing::Best => tool_call_accuracy_best(expected, &calls, strict_order),
        },
        ToolMetric::ToolCallF1 => tool_call_f1(expected, &calls),
    })
}

/// A refusal when the calls to score are those of the agent's spans and
/// its trace was incomplete when the wait ended (spans late, an exporter in
/// backoff): a call whose span had not arrived would read as not made. The
/// trajectory metrics refuse such a trace too. Calls the answer reported
/// itself are scored whatever the spans did.
fn incomplete_trace(spec: &MetricSpec, response: &Response) -> Option<MetricError> {
    let trajectory = response.trajectory.as_ref().filter(|t| t.incomplete)?;
    if response.tool_calls != trajectory.tool_calls() {
        return None;
    }
    Some(MetricError::Unscorable(format!(
        "`{}`: the agent's trace was incomplete, so the tools it called are not known: {}",
        spec.name,
        trajectory.note.as_deref().unwrap_or("spans missing")
    )))
}

/// Why a tool metric scored as it did, in one line: the expected tools the
/// agent did not call and the calls nobody expected (by name), or that the
/// names match and the arguments or order do not. `None` when there is no
/// expectation to compare with.
pub(crate) fn explain(
    kind: &ToolMetric,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Option<String> {
    let called: Vec<&str> = response
        .tool_calls
        .iter()
        .filter(|c| turn.is_none_or(|t| c.turn == t))
        .map(|c| c.name.as_str())
        .collect();
    let called_text = if called.is_empty() {
        "no tool was called".to_string()
    } else {
        format!("called: {}", called.join(", "))
    };
    if let ToolMetric::ToolCalled = kind {
        let names: Vec<&str> = match (turn, &sample.expected) {
            (Some(t), _) => sample.expected_for_turn(t).into_iter().collect(),
            (None, Some(Expected::PerTurn(names))) => names.iter().map(String::as_str).collect(),
            (None, Some(Expected::Text(_))) if sample.accepted_answers.len() > 1 => {
                sample.accepted_answers.iter().map(String::as_str).collect()
            }
            (None, Some(Expected::Text(name))) => vec![name.as_str()],
            (None, None) => return None,
        };
        let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
        return Some(format!(
            "expected `{}`; {called_text}",
            names.join("` or `")
        ));
    }
    let expected = sample.expected_tools.as_ref()?;
    let unreadable = unreadable_arguments(kind, response, turn);
    let mut unexpected = called.clone();
    let mut missing = Vec::new();
    for e in expected {
        match unexpected.iter().position(|c| *c == e.name) {
            Some(i) => {
                unexpected.remove(i);
            }
            None => missing.push(e.name.as_str()),
        }
    }
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("not called: {}", missing.join(", ")));
    }
    if !unexpected.is_empty() {
        parts.push(format!("not expected: {}", unexpected.join(", ")));
    }
    parts.extend(unreadable);
    if parts.is_empty() {
        parts.push(if expected.is_empty() {
            "no tool call was expected and none was made".to_string()
        } else {
            "the expected tools were called, with other arguments or in another order".to_string()
        });
    }
    Some(parts.join("; "))
}

/// For a metric that compares arguments: each call (of `turn`, when given)
/// whose arguments could not be read, and why: `` `calc`: its arguments are
/// not a JSON object (not valid JSON: …): {"x": ``.
fn unreadable_arguments(
    kind: &ToolMetric,
    response: &Response,
    turn: Option<usize>,
) -> Vec<String> {
    let compares_arguments = match *kind {
        ToolMetric::ToolCorrectness { parameters, .. } => parameters,
        ToolMetric::ToolCallAccuracy { .. } | ToolMetric::ToolCallF1 => true,
        ToolMetric::ToolCalled => false,
    };
    if !compares_arguments {
        return Vec::new();
    }
    response
        .tool_calls
        .iter()
        .filter(|c| turn.is_none_or(|t| c.turn == t))
        .filter_map(|c| {
            let bad = c.invalid_arguments.as_ref()?;
            Some(format!(
                "`{}`: {bad} (its arguments match none expected)",
                c.name
            ))
        })
        .collect()
}

/// `tool_called`: against the expected answer (the tool's name); one per
/// turn gives the mean over the turns of each turn's own calls, an OpenAI
/// evals `ideal` list the best of its names.
fn score_tool_called(
    spec: &MetricSpec,
    sample: &Sample,
    calls: &[ToolCall],
    turn: Option<usize>,
) -> Result<f64, MetricError> {
    let named = |name: &str| -> Result<f64, MetricError> {
        if name.trim().is_empty() {
            return Err(format!("`{}` needs a tool name as the expected answer", spec.name).into());
        }
        Ok(tool_called(name, calls))
    };
    if let Some(t) = turn {
        return match sample.expected_for_turn(t) {
            Some(name) => named(name),
            None => {
                Err(format!("`{}` needs turn {}'s expected tool name", spec.name, t + 1).into())
            }
        };
    }
    match &sample.expected {
        None => Err(format!(
            "`{}` needs the expected tool's name as the expected answer (`ground_truth`)",
            spec.name
        )
        .into()),
        Some(Expected::PerTurn(names)) => {
            let mut total = 0.0;
            for (t, name) in names.iter().enumerate() {
                let own: Vec<ToolCall> = calls.iter().filter(|c| c.turn == t).cloned().collect();
                if name.trim().is_empty() {
                    return Err(format!("`{}`: turn {} names no tool", spec.name, t + 1).into());
                }
                total += tool_called(name, &own);
            }
            Ok(total / names.len().max(1) as f64)
        }
        Some(Expected::Text(_)) if sample.accepted_answers.len() > 1 => sample
            .accepted_answers
            .iter()
            .map(|a| named(a))
            .try_fold(0.0f64, |best, s| s.map(|s| best.max(s))),
        Some(Expected::Text(name)) => named(name),
    }
}

fn bool_score(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// letta-evals' "Tool Usage Testing" use case
/// (<https://docs.letta.com/guides/evals/concepts/datasets>, "Examples by
/// Use Case"): the sample's `ground_truth` is the name of the tool the agent
/// is expected to call. 1 if any of the agent's calls, in any turn, has
/// exactly that name, else 0. Names compare as letta-evals' tool extractors
/// compare them (`letta_evals/extractors/builtin.py`, `tool_arguments`:
/// `tool_call.name == tool_name` over every message of every turn): case
/// and all, after trimming the expected name as its `exact_match` grader
/// trims `ground_truth`. One name per sample (a letta `ground_truth` is one
/// string, or one per turn).
pub(crate) fn tool_called(expected: &str, calls: &[ToolCall]) -> f64 {
    let name = expected.trim();
    bool_score(calls.iter().any(|c| c.name == name))
}

/// deepeval's `ToolCorrectnessMetric` options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct Correctness {
    /// `evaluation_params=[ToolCallParams.INPUT_PARAMETERS]`: arguments count.
    pub parameters: bool,
    /// `should_consider_ordering=True`.
    pub ordering: bool,
    /// `should_exact_match=True`.
    pub exact: bool,
}

impl Correctness {
    /// Options as `tool_correctness(parameters = .., ordering = .., exact = ..)`.
    #[cfg(test)]
    pub(crate) fn new(parameters: bool, ordering: bool, exact: bool) -> Self {
        Correctness {
            parameters,
            ordering,
            exact,
        }
    }
}

/// deepeval's tool correctness
/// (<https://deepeval.com/docs/metrics-tool-correctness>; the code,
/// `deepeval/metrics/tool_correctness/tool_correctness.py`, fixes the
/// details): whether every expected tool was called, by exact name match,
/// no model involved. Threshold 0.5 by default, passed when the score is
/// at least the threshold.
///
/// * default: each expected tool, in order, takes the not-yet-used call of
///   the same name that scores best (1, or with `parameters` the argument
///   match below; the first of equal scores); score = sum of the best
///   scores / number of expected tools.
/// * `ordering`: the same per-pair scores, but the pairs must keep both
///   lists' order: the weighted longest common subsequence of expected and
///   called tools (pairs of equal names weigh their argument match), / number
///   of expected tools.
/// * `exact` (stronger; `ordering` then has no effect): 1 if the agent made
///   exactly the expected calls, same count, same order, same names (and
///   with `parameters`, equal arguments), else 0.
/// * argument match (`parameters`): 1 when the two argument objects are
///   equal; else each key present in both with equal values adds
///   1 / |keys of either|, with nested objects compared the same way.
/// * no expected tools: 1 when the agent called none, else 0; no calls and
///   some expected: 0.
///
/// One departure from deepeval's code, not from its definition: a call is
/// used once *by position*. deepeval marks used calls by value, so two
/// identical expected calls met by two identical calls score 0.5 there (the
/// second finds its match already "used"); here 1.
pub(crate) fn tool_correctness(
    expected: &[ToolCall],
    called: &[ToolCall],
    options: Correctness,
) -> f64 {
    if options.exact {
        return exact_calls(expected, called, options.parameters);
    }
    if expected.is_empty() {
        return bool_score(called.is_empty());
    }
    let pair = |e: &ToolCall, c: &ToolCall| -> f64 {
        if e.name != c.name {
            0.0
        } else if options.parameters {
            if c.invalid_arguments.is_some() {
                0.0
            } else {
                argument_match(&e.arguments, &c.arguments)
            }
        } else {
            1.0
        }
    };
    let total = if options.ordering {
        weighted_lcs(expected, called, pair)
    } else {
        let mut used = vec![false; called.len()];
        let mut total = 0.0;
        for e in expected {
            let mut best: Option<(usize, f64)> = None;
            for (j, c) in called.iter().enumerate() {
                let s = pair(e, c);
                if !used[j] && s > best.map_or(0.0, |(_, b)| b) {
                    best = Some((j, s));
                }
            }
            if let Some((j, s)) = best {
                used[j] = true;
                total += s;
            }
        }
        total
    };
    total / expected.len() as f64
}

/// deepeval's exact match: same calls, same order.
fn exact_calls(expected: &[ToolCall], called: &[ToolCall], parameters: bool) -> f64 {
    bool_score(
        expected.len() == called.len()
            && expected
                .iter()
                .zip(called)
                .all(|(e, c)| e.name == c.name && (!parameters || arguments_eq(e, c))),
    )
}

/// Weighted longest common subsequence: `dp[i][j]` the best total weight of
/// order-keeping pairs among the first `i` expected and `j` called tools.
fn weighted_lcs(
    expected: &[ToolCall],
    called: &[ToolCall],
    pair: impl Fn(&ToolCall, &ToolCall) -> f64,
) -> f64 {
    let n = called.len();
    let mut prev = vec![0.0f64; n + 1];
    let mut row = vec![0.0f64; n + 1];
    for e in expected {
        for (j, c) in called.iter().enumerate() {
            let s = pair(e, c);
            let diagonal = if s > 0.0 { prev[j] + s } else { 0.0 };
            row[j + 1] = prev[j + 1].max(row[j]).max(diagonal);
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[n]
}

/// deepeval's `_compare_dicts(expected, called)`.
fn argument_match(expected: &Map<String, Value>, called: &Map<String, Value>) -> f64 {
    if map_eq(expected, called) {
        return 1.0;
    }
    let union = expected.len() + called.keys().filter(|k| !expected.contains_key(*k)).count();
    let mut score = 0.0;
    for (key, e) in expected {
        let Some(c) = called.get(key) else { continue };
        if py_eq(e, c) {
            score += 1.0 / union as f64;
        } else if let (Value::Object(e), Value::Object(c)) = (e, c) {
            score += argument_match(e, c) / union as f64;
        }
    }
    score
}

/// ragas' tool call F1
/// (<https://docs.ragas.io/en/stable/concepts/metrics/available_metrics/agents/#tool-call-f1>;
/// the code, `ragas/metrics/_tool_call_f1.py` and its collections
/// version): calls as a set of (name, arguments), order ignored, a call
/// matching only when its name and every argument are equal.
///
/// TP = distinct calls made that were expected, FP = distinct calls made
/// that were not, FN = distinct expected calls not made; precision =
/// TP / (TP + FP), recall = TP / (TP + FN), each 0 when its denominator is;
/// F1 = 2·P·R / (P + R), 0 when P + R is 0 — so no calls and nothing
/// expected scores 0. Rounded to 4 decimals, as ragas returns it. Being
/// sets, a call repeated counts once on either side.
pub(crate) fn tool_call_f1(expected: &[ToolCall], called: &[ToolCall]) -> f64 {
    let expected = distinct(expected);
    let actual = distinct(called);
    let tp = actual
        .iter()
        .filter(|a| expected.iter().any(|e| same_call(a, e)))
        .count() as f64;
    let fp = actual.len() as f64 - tp;
    let fn_ = expected.len() as f64 - tp;
    let precision = if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
    let recall = if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 0.0 };
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    (f1 * 10_000.0).round() / 10_000.0
}

fn same_call(a: &ToolCall, b: &ToolCall) -> bool {
    a.name == b.name && arguments_eq(a, b)
}

/// Whether two calls' arguments are equal (Python's `==`); arguments that
/// could not be read ([`ToolCall::invalid_arguments`]) equal none, not even
/// their own kind.
pub(crate) fn arguments_eq(a: &ToolCall, b: &ToolCall) -> bool {
    a.invalid_arguments.is_none()
        && b.invalid_arguments.is_none()
        && map_eq(&a.arguments, &b.arguments)
}

fn distinct(calls: &[ToolCall]) -> Vec<&ToolCall> {
    let mut out: Vec<&ToolCall> = Vec::with_capacity(calls.len());
    for c in calls {
        if !out.iter().any(|o| same_call(o, c)) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests;
