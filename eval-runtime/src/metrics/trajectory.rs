//! Trajectory metrics: the steps the agent took for a sample
//! ([`Response::trajectory`], from its OpenTelemetry spans; without spans,
//! one tool step per tool call in its answers).
//!
//! | metric | score |
//! |---|---|
//! | `trajectory_match` | [`trajectory_match`]: LangChain agentevals 0.0.8's trajectory match (`python/agentevals/trajectory/{strict,unordered,subset,superset}.py` and `utils.py`, `_is_trajectory_superset`), 1 or 0 |
//! | `steps` | the number of steps (of one kind with `step = "..."`) |
//! | `repeated_calls` | [`repeated_calls`]: the most times one call (same tool, same arguments) was made |
//! | `step_latency_ms` | the slowest step's duration (span end − start), milliseconds |
//! | `step_tokens` | the most tokens (in + out) of one step, as its span reported them |
//!
//! Arguments compare as the tool metrics compare them (Python's `==` on
//! JSON values, which agentevals uses: `1 == 1.0`, `75 != "75"`).
//!
//! A metric of one turn (`steps@turn2`) looks at that turn's steps only.
//!
//! [`Response::trajectory`]: crate::Response::trajectory

use eval_datasets::metric::{ArgsMatch, MetricSpec, StepKind, TrajectoryMetric, TrajectoryMode};
use eval_datasets::{Sample, ToolCall};
use serde_json::{Map, Value};

use super::MetricError;
use super::tools::{map_eq, py_eq};
use crate::agent::Response;
use crate::model::{Step, Trajectory};

/// The trajectory a response is scored by: its own, else one tool step per
/// tool call in its answers.
pub(crate) fn of(response: &Response) -> std::borrow::Cow<'_, Trajectory> {
    match &response.trajectory {
        Some(t) => std::borrow::Cow::Borrowed(t),
        None => std::borrow::Cow::Owned(Trajectory::from_tool_calls(&response.tool_calls)),
    }
}

/// Scores a trajectory metric (`kind` is `spec`'s): the steps of
/// `response` (of user turn `turn` only, when given).
pub(crate) fn score(
    spec: &MetricSpec,
    kind: &TrajectoryMetric,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Result<f64, MetricError> {
    let trajectory = of(response);
    if trajectory.incomplete {
        return Err(MetricError::Unscorable(format!(
            "`{}`: the agent's trace was incomplete, so its steps are not known: {}",
            spec.name,
            trajectory.note.as_deref().unwrap_or("spans missing")
        )));
    }
    let steps: Vec<&Step> = trajectory
        .steps
        .iter()
        .filter(|s| turn.is_none_or(|t| s.turn == t))
        .collect();
    match kind {
        TrajectoryMetric::TrajectoryMatch { mode, args } => {
            let Some(expected) = &sample.expected_tools else {
                return Err(format!(
                    "`{}` needs the sample's expected tool calls (`expected_tools`, or ragas `reference_tool_calls`)",
                    spec.name
                )
                .into());
            };
            let calls = called(response, &steps, turn);
            Ok(f64::from(u8::from(trajectory_match(
                &calls, expected, *mode, *args,
            ))))
        }
        TrajectoryMetric::Steps { step } => Ok(of_kind(&steps, *step).count() as f64),
        TrajectoryMetric::RepeatedCalls => {
            Ok(repeated_calls(&called(response, &steps, turn)) as f64)
        }
        TrajectoryMetric::StepLatency { step } => {
            most(spec, &trajectory, &steps, *step, "duration", |s| {
                s.duration_ms
            })
        }
        TrajectoryMetric::StepTokens { step } => {
            most(spec, &trajectory, &steps, *step, "token count", |s| {
                s.tokens().map(|t| t as f64)
            })
        }
    }
}

/// The tool calls scored: the answers' own when they report any (what the
/// tool metrics score too), else the trajectory's tool steps; of turn
/// `turn` only, when given.
fn called(response: &Response, steps: &[&Step], turn: Option<usize>) -> Vec<ToolCall> {
    if response.tool_calls.is_empty() {
        steps.iter().filter_map(|s| s.tool_call()).collect()
    } else {
        response
            .tool_calls
            .iter()
            .filter(|c| turn.is_none_or(|t| c.turn == t))
            .cloned()
            .collect()
    }
}

fn of_kind<'a>(
    steps: &'a [&'a Step],
    kind: Option<StepKind>,
) -> impl Iterator<Item = &'a Step> + 'a {
    steps
        .iter()
        .copied()
        .filter(move |s| kind.is_none_or(|k| s.kind == k))
}

/// The largest of `value` over the steps of `kind`; an error when no such
/// step reports it.
fn most(
    spec: &MetricSpec,
    trajectory: &Trajectory,
    steps: &[&Step],
    kind: Option<StepKind>,
    what: &str,
    value: impl Fn(&Step) -> Option<f64>,
) -> Result<f64, MetricError> {
    let values: Vec<f64> = of_kind(steps, kind).filter_map(value).collect();
    if let Some(max) = values.iter().copied().reduce(f64::max) {
        return Ok(max);
    }
    let steps_of = kind.map_or(String::new(), |k| format!("{} ", k.name()));
    let why = if of_kind(steps, kind).next().is_none() {
        format!("the agent took no {steps_of}step")
    } else if trajectory.source == crate::model::TrajectorySource::Answer {
        // Spans arrive through the OTLP receiver, which is the `otel` feature's.
        let receiver = if cfg!(feature = "otel") {
            ""
        } else {
            "; this build has no OTLP receiver: enable eval-runtime's `otel` feature (`features = [\"otel\"]`) and set EVAL_OTLP_RECEIVER"
        };
        format!(
            "no {steps_of}step has a {what}: the steps come from the answer's tool calls, not from spans (see the guide's Traces chapter){receiver}"
        )
    } else {
        format!("no {steps_of}step's span reported a {what}")
    };
    Err(MetricError::Unscorable(format!("`{}`: {why}", spec.name)))
}

/// agentevals' trajectory match of the agent's tool calls (`called`, in
/// order) against the expected ones, `mode` and `args` as
/// `create_trajectory_match_evaluator(trajectory_match_mode=...,
/// tool_args_match_mode=...)` take them (LangChain agentevals 0.0.8,
/// `python/agentevals/trajectory/`):
///
/// * `superset`: [`covers`]`(called, expected)`: every expected call is
///   matched by a call of its own, duplicates counted;
/// * `subset`: `covers(expected, called)`: every call is matched by an
///   expected one (so no call beyond them);
/// * `unordered`: both, so the same calls as many times, in any order;
/// * `strict`: as many calls as expected, the i-th matching the i-th (the
///   agentevals strict match of trajectories whose messages each carry one
///   tool call; message text and roles, which a trajectory of steps does not
///   have, are not compared — agentevals does not compare text either).
///
/// Two trajectories without a call match in every mode.
pub(crate) fn trajectory_match(
    called: &[ToolCall],
    expected: &[ToolCall],
    mode: TrajectoryMode,
    args: ArgsMatch,
) -> bool {
    match mode {
        TrajectoryMode::Strict => {
            called.len() == expected.len()
                && called
                    .iter()
                    .zip(expected)
                    .all(|(c, e)| c.name == e.name && calls_args_match(c, e, args))
        }
        TrajectoryMode::Superset => covers(called, expected, args),
        TrajectoryMode::Subset => covers(expected, called, args),
        _ => covers(called, expected, args) && covers(expected, called, args),
    }
}

/// agentevals' `_is_trajectory_superset(a, b)`: each call of `b`, in order,
/// takes the first call of `a` not yet taken with its name and matching
/// arguments (`args` compares the `a` call's arguments with the `b`
/// call's); false when one finds none. First fit, as agentevals does: no
/// search for another pairing when a greedy choice leaves a later call
/// unmatched (which only `args = "subset"` / `"superset"` can do).
fn covers(a: &[ToolCall], b: &[ToolCall], args: ArgsMatch) -> bool {
    let mut taken = vec![false; a.len()];
    b.iter().all(|want| {
        let found = a.iter().enumerate().position(|(i, have)| {
            !taken[i] && have.name == want.name && calls_args_match(have, want, args)
        });
        match found {
            Some(i) => {
                taken[i] = true;
                true
            }
            None => false,
        }
    })
}

/// [`args_match`] of two calls' arguments; arguments that could not be
/// read ([`ToolCall::invalid_arguments`]) match none, unless ignored.
fn calls_args_match(first: &ToolCall, second: &ToolCall, args: ArgsMatch) -> bool {
    args == ArgsMatch::Ignore
        || (first.invalid_arguments.is_none()
            && second.invalid_arguments.is_none()
            && args_match(&first.arguments, &second.arguments, args))
}

/// agentevals' tool-argument matchers, `first` and `second` as its
/// `matcher(first, second)` takes them: `exact`, equal; `ignore`, always;
/// `subset`, every argument `first` gives `second` gives equal; `superset`,
/// every argument `second` gives `first` gives equal.
fn args_match(first: &Map<String, Value>, second: &Map<String, Value>, args: ArgsMatch) -> bool {
    let within = |small: &Map<String, Value>, large: &Map<String, Value>| {
        small
            .iter()
            .all(|(k, v)| large.get(k).is_some_and(|w| py_eq(v, w)))
    };
    match args {
        ArgsMatch::Ignore => true,
        ArgsMatch::Subset => within(first, second),
        ArgsMatch::Superset => within(second, first),
        _ => map_eq(first, second),
    }
}

/// Loop detection: the most times one call was made (the same tool with
/// equal arguments), anywhere in the trajectory; 0 without calls, 1 when no
/// call was repeated.
pub(crate) fn repeated_calls(calls: &[ToolCall]) -> usize {
    let mut most = 0;
    for (i, call) in calls.iter().enumerate() {
        // Counted once, at its first occurrence.
        if calls[..i].iter().any(|c| same(c, call)) {
            continue;
        }
        most = most.max(calls[i..].iter().filter(|c| same(c, call)).count());
    }
    most
}

fn same(a: &ToolCall, b: &ToolCall) -> bool {
    a.name == b.name && super::tools::arguments_eq(a, b)
}

/// Why a trajectory metric scored as it did, in one line.
pub(crate) fn explain(
    kind: &TrajectoryMetric,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Option<String> {
    let trajectory = of(response);
    let steps: Vec<&Step> = trajectory
        .steps
        .iter()
        .filter(|s| turn.is_none_or(|t| s.turn == t))
        .collect();
    let names = |calls: &[ToolCall]| {
        if calls.is_empty() {
            "none".to_string()
        } else {
            calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(" → ")
        }
    };
    Some(match kind {
        TrajectoryMetric::TrajectoryMatch { mode, .. } => {
            let calls = called(response, &steps, turn);
            let expected = sample.expected_tools.as_deref().unwrap_or_default();
            format!(
                "{} match: called {}; expected {}",
                mode.name(),
                names(&calls),
                names(expected)
            )
        }
        TrajectoryMetric::Steps { step } => {
            let kinds: Vec<&str> = of_kind(&steps, *step)
                .map(|s| match s.kind {
                    StepKind::Tool => s.name.as_str(),
                    other => other.name(),
                })
                .collect();
            format!("{} steps: {}", kinds.len(), kinds.join(" → "))
        }
        TrajectoryMetric::RepeatedCalls => {
            let calls = called(response, &steps, turn);
            let most = repeated_calls(&calls);
            match calls
                .iter()
                .find(|c| calls.iter().filter(|d| same(c, d)).count() == most)
            {
                Some(c) => format!(
                    "`{}` called {most} times with the same arguments {}",
                    c.name,
                    crate::model::one_line(&Value::Object(c.arguments.clone()).to_string(), 200)
                ),
                None => "no tool call".into(),
            }
        }
        TrajectoryMetric::StepLatency { step } => slowest(&steps, *step, |s| s.duration_ms, "ms"),
        TrajectoryMetric::StepTokens { step } => {
            slowest(&steps, *step, |s| s.tokens().map(|t| t as f64), "tokens")
        }
    })
}

fn slowest(
    steps: &[&Step],
    kind: Option<StepKind>,
    value: impl Fn(&Step) -> Option<f64>,
    unit: &str,
) -> String {
    let top = of_kind(steps, kind)
        .filter_map(|s| value(s).map(|v| (s, v)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match top {
        Some((s, v)) => format!(
            "{} step `{}` (turn {}): {v:.0} {unit}",
            s.kind.name(),
            s.name,
            s.turn + 1
        ),
        None => "no step reported it".into(),
    }
}

#[cfg(test)]
mod tests;
