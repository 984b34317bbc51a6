//! The scales of the metrics of the user's this process knows (issue 36,
//! part 2): a user metric is not in the catalogue, so where a statistic
//! knows a metric only by its name (a gate, a comparison of two results
//! files) its range and whether it is pass/fail come from here. Filled when
//! a run's provenance records its user metrics, and when a results file's
//! provenance is read for a comparison.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use super::bounded::Scale;

fn known() -> &'static RwLock<HashMap<String, Scale>> {
    static KNOWN: OnceLock<RwLock<HashMap<String, Scale>>> = OnceLock::new();
    KNOWN.get_or_init(|| RwLock::new(HashMap::new()))
}

/// Records that the user metric `name` scores within `range`, pass/fail or not.
pub(crate) fn remember(name: &str, range: (f64, f64), pass_fail: bool) {
    let scale = if pass_fail {
        Scale::PassFail
    } else {
        Scale::of_range(range)
    };
    if let Ok(mut map) = known().write() {
        map.insert(name.to_string(), scale);
    }
}

/// The scale of the user metric `name` (with `@turn<n>` or not), if known.
pub(crate) fn of(name: &str) -> Option<Scale> {
    let map = known().read().ok()?;
    map.get(name)
        .or_else(|| map.get(name.rsplit_once("@turn").map_or(name, |(b, _)| b)))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_user_metric_has_its_scale_by_name_and_by_turn() {
        remember("stats_test_metric", (0.0, 1.0), true);
        assert_eq!(Scale::of_metric("stats_test_metric"), Scale::PassFail);
        assert_eq!(Scale::of_metric("stats_test_metric@turn2"), Scale::PassFail);
        remember("stats_test_tone", (0.0, 5.0), false);
        assert_eq!(
            Scale::of_metric("stats_test_tone"),
            Scale::Bounded(0.0, 5.0)
        );
    }
}
