//! ragas' `ToolCallAccuracy`: the agent's calls paired with the reference
//! calls by position, as ragas 0.4.3 does ([`tool_call_accuracy`]), or,
//! retry-tolerant, each reference call with its best match
//! ([`tool_call_accuracy_best`]); arguments compared by their text.

use eval_datasets::ToolCall;
use serde_json::{Map, Value};

use super::python::{python_float, python_str};

/// ragas' tool call accuracy as released: `ToolCallAccuracy` of ragas
/// 0.4.3 (<https://pypi.org/project/ragas/0.4.3/>,
/// `ragas/metrics/_tool_call_accuracy.py`, the same in its
/// `metrics.collections`; docs:
/// <https://docs.ragas.io/en/stable/concepts/metrics/available_metrics/agents/#tool-call-accuracy>).
/// The reference calls are the ideal; the calls are paired with them *by
/// position*, and a sequence of names that is not the reference's scores 0.
///
/// 1. No calls and no reference: 1. No calls, or no reference: 0.
/// 2. Unless `strict_order`, both lists are first sorted, stably, by
///    (name, then each argument's name and `str()` text, argument names
///    sorted) — ragas' `_sorted_key_for_tool_call`; so two calls of one
///    name are put in the order of their arguments' text on both sides.
/// 3. Aligned (`is_sequence_aligned`): the calls' names equal the
///    reference's, in order (without `strict_order`, the sorted names) — as
///    many calls as reference calls, so a retried or extra call is not
///    aligned.
/// 4. The i-th call against the i-th reference call (Python's `zip`), when
///    their names are equal: the share of the reference's arguments the
///    call has with the same `str()` text (no reference arguments: 1 if the
///    call has none either, else 0); extra arguments of the call cost
///    nothing.
/// 5. score = sum over the pairs / reference calls (× calls / reference
///    calls when fewer calls were made: ragas' coverage penalty, which
///    only ever multiplies a score that step 6 zeroes), × 1 if aligned else 0.
///
/// Argument text is Python's `str()` of the value as `json.loads` gives it:
/// a string is itself, `75` is `75`, `75.0` is `75.0`, `true` is `True`,
/// `null` is `None`; a list or an object is Python's `repr` of it, strings
/// inside quoted (`['a', 1]`), keys in the order written (`{'a': 1, 'b': 2}`
/// is not `{'b': 2, 'a': 1}`).
pub(crate) fn tool_call_accuracy(
    expected: &[ToolCall],
    called: &[ToolCall],
    strict_order: bool,
) -> f64 {
    let (refs, preds) = match in_order(expected, called, strict_order, python_str) {
        Ok(lists) => lists,
        Err(score) => return score,
    };
    let ref_names: Vec<&str> = refs.iter().map(|c| c.name.as_str()).collect();
    let pred_names: Vec<&str> = preds.iter().map(|c| c.name.as_str()).collect();
    let aligned = if strict_order {
        pred_names == ref_names
    } else {
        let (mut p, mut r) = (pred_names.clone(), ref_names.clone());
        p.sort_unstable();
        r.sort_unstable();
        p == r
    };
    let mut score: f64 = refs
        .iter()
        .zip(&preds)
        .filter(|(r, p)| r.name == p.name)
        .map(|(r, p)| call_arguments_as_text(p, r, python_str))
        .sum();
    score /= refs.len() as f64;
    if preds.len() < refs.len() {
        score *= preds.len() as f64 / refs.len() as f64;
    }
    score * f64::from(aligned)
}

/// `tool_call_accuracy(pairing = "best")`: retry-tolerant, and not a
/// released ragas definition — this crate's earlier reading of ragas'
/// unreleased development code after 0.4.3
/// (`ragas/metrics/collections/tool_call_accuracy`), kept as an option for
/// agents that retry or make extra calls. The reference calls are the
/// ideal; a sequence that does not contain them in line scores 0, one that
/// does scores how well the arguments match, compared as text.
///
/// 1. No calls and no reference: 1. No calls, or no reference: 0.
/// 2. Unless `strict_order`, both lists are first sorted by (name, then
///    each argument's name and text, argument names sorted).
/// 3. Aligned: with `strict_order`, the names are the reference's, in its
///    order (when the counts differ: the reference's names are a
///    subsequence of the calls', so extra or retried calls are allowed);
///    without, every reference name is called at least as many times.
/// 4. Each reference call, in order, takes the not-yet-used call of the
///    same name with the best argument score (the first of equal scores; a
///    score of 0 takes none): the share of the reference's arguments the
///    call has with the same text (no reference arguments: 1 if the call
///    has none either, else 0). Extra arguments of the call cost nothing.
/// 5. score = sum of the best scores / reference calls, times calls /
///    reference calls when fewer calls were made than referenced, times 1
///    if aligned else 0.
///
/// Argument text is Python's `str()` of the value with objects' keys
/// sorted at every depth (that code's `canonical_arg_value`): a string is
/// itself, `75` is `75`, `75.0` is `75.0`, `true` is `True`, `null` is
/// `None`; lists and objects render item by item, strings inside unquoted.
pub(crate) fn tool_call_accuracy_best(
    expected: &[ToolCall],
    called: &[ToolCall],
    strict_order: bool,
) -> f64 {
    let (refs, preds) = match in_order(expected, called, strict_order, canonical_text) {
        Ok(lists) => lists,
        Err(score) => return score,
    };
    let ref_names: Vec<&str> = refs.iter().map(|c| c.name.as_str()).collect();
    let pred_names: Vec<&str> = preds.iter().map(|c| c.name.as_str()).collect();
    let aligned = if strict_order {
        if ref_names.len() == pred_names.len() {
            ref_names == pred_names
        } else {
            is_subsequence(&ref_names, &pred_names)
        }
    } else {
        ref_names.iter().all(|name| {
            let want = ref_names.iter().filter(|n| *n == name).count();
            pred_names.iter().filter(|n| *n == name).count() >= want
        })
    };
    let mut remaining = preds.clone();
    let mut score = 0.0;
    for r in &refs {
        let mut best: Option<(usize, f64)> = None;
        for (i, p) in remaining.iter().enumerate() {
            if p.name == r.name {
                let s = call_arguments_as_text(p, r, canonical_text);
                if s > best.map_or(0.0, |(_, b)| b) {
                    best = Some((i, s));
                }
            }
        }
        if let Some((i, s)) = best {
            score += s;
            remaining.remove(i);
        }
    }
    score /= refs.len() as f64;
    if preds.len() < refs.len() {
        score *= preds.len() as f64 / refs.len() as f64;
    }
    (score * f64::from(aligned)).clamp(0.0, 1.0)
}

/// Whether `sub` appears in order within `seq`.
fn is_subsequence(sub: &[&str], seq: &[&str]) -> bool {
    let mut rest = seq.iter();
    sub.iter().all(|s| rest.any(|x| x == s))
}

/// ragas' `_sorted_key_for_tool_call`: the name, then each argument's name
/// and text, argument names sorted (Python compares the tuples item by
/// item, strings by code point, as Rust compares these).
/// The expected and the made calls, in the order they are paired.
type Paired<'a> = (Vec<&'a ToolCall>, Vec<&'a ToolCall>);

/// The expected and the made calls in the order they are paired: as
/// given, or (without `strict_order`) sorted stably, as Python's `sorted`,
/// by name, then argument names and `text` of their values; the score
/// itself when either list is empty (1 when both are).
fn in_order<'a>(
    expected: &'a [ToolCall],
    called: &'a [ToolCall],
    strict_order: bool,
    text: fn(&Value) -> String,
) -> Result<Paired<'a>, f64> {
    match (called.is_empty(), expected.is_empty()) {
        (true, true) => return Err(1.0),
        (true, false) | (false, true) => return Err(0.0),
        (false, false) => {}
    }
    let mut refs: Vec<&ToolCall> = expected.iter().collect();
    let mut preds: Vec<&ToolCall> = called.iter().collect();
    if !strict_order {
        refs.sort_by_cached_key(|c| sort_key(c, text));
        preds.sort_by_cached_key(|c| sort_key(c, text));
    }
    Ok((refs, preds))
}

fn sort_key(call: &ToolCall, text: fn(&Value) -> String) -> Vec<String> {
    let mut names: Vec<&String> = call.arguments.keys().collect();
    names.sort();
    let mut key = vec![call.name.clone()];
    for name in names {
        key.push(name.clone());
        key.push(text(&call.arguments[name]));
    }
    key
}

/// ragas' `_get_arg_score(preds, refs)` with its default `ExactMatch`
/// (`exact_match_args` in its collections version): the share of the
/// reference's arguments the call has with the same text.
/// [`arguments_as_text`] of two calls: 0 when the call's arguments could
/// not be read ([`ToolCall::invalid_arguments`]: they match nothing).
fn call_arguments_as_text(
    pred: &ToolCall,
    reference: &ToolCall,
    text: fn(&Value) -> String,
) -> f64 {
    if pred.invalid_arguments.is_some() {
        return 0.0;
    }
    arguments_as_text(&pred.arguments, &reference.arguments, text)
}

fn arguments_as_text(
    pred: &Map<String, Value>,
    reference: &Map<String, Value>,
    text: fn(&Value) -> String,
) -> f64 {
    if reference.is_empty() {
        return f64::from(pred.is_empty());
    }
    let matched = reference
        .iter()
        .filter(|(k, v)| pred.get(*k).is_some_and(|p| text(p) == text(v)))
        .count();
    matched as f64 / reference.len() as f64
}

/// An argument's text for `pairing = "best"`: Python's `str()` of the
/// value with objects' keys sorted (`canonical_arg_value` of ragas'
/// development code), strings inside lists and objects unquoted.
pub(super) fn canonical_text(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if !(n.is_i64() || n.is_u64()) => python_float(f),
            _ => n.to_string(),
        },
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_text).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k:?}: {}", canonical_text(&map[k])))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}
