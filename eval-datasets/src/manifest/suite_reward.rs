//! letta-evals 0.26's `reward` (its `letta_evals/models/specs.py`,
//! `MetricRewardSpec`, and `letta_evals/rewards.py`): a sample's reward is
//! the score of the grader `metric_key` names, 0 to 1. letta-evals reports
//! the mean reward and counts a score as passed at `pass_threshold` 1.0
//! (`letta_evals/utils.py`, `build_turn_summary`); here the run fails when
//! the mean reward is below 1.0, that is when any sample's reward falls
//! short of full marks. A `custom` reward is a Python function: not run
//! (the suite's graders are then reported, none enforced).

use super::Graded;
use crate::metric::{GateSpec, MetricSpec, Op, OptionValue, Stat};

/// letta-evals' pass mark for a reward (`pass_threshold` in its utils).
pub(super) const REWARD_PASS: f64 = 1.0;

/// The gate a `reward` of `kind` (`metric`) on `metric_key` puts on the
/// run, over the suite's `graded` graders.
pub(super) fn reward_gate(
    kind: Option<&str>,
    metric_key: Option<&str>,
    graded: &[Graded],
) -> Result<GateSpec, String> {
    match kind {
        Some("metric") => {}
        Some(other) => {
            return Err(format!(
                "`reward.kind: {other}`: expected `metric` (or `custom`, Python code)"
            ));
        }
        None => return Err("`reward` needs `kind: metric` and a `metric_key`".into()),
    }
    let key = metric_key.ok_or("`reward` of `kind: metric` needs a `metric_key`")?;
    let grader = graded.iter().find(|g| g.key == key).ok_or_else(|| {
        let known: Vec<&str> = graded.iter().map(|g| g.key.as_str()).collect();
        format!(
            "`reward.metric_key: {key}` names no grader; the suite has: {}",
            known.join(", ")
        )
    })?;
    let (name, options, _) = grader.spec.decl_parts();
    let options: Vec<(&str, OptionValue)> = options
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let spec = MetricSpec::new(&name, &options, Some((Op::AtLeast, REWARD_PASS)))
        .map_err(|e| format!("`reward`: {e}"))?;
    Ok(GateSpec::new(Stat::Mean, spec.labelled(&grader.key)))
}
