//! The scales of the metrics of the user's this process knows (issue 36,
//! part 2): a user metric is not in the catalogue, so where a statistic
//! knows a metric only by its name (a gate, a comparison of two results
//! files) its range and whether it is pass/fail come from here. Filled when
//! a run's provenance records its user metrics, and when a results file's
//! provenance is read.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// A user metric's range, and whether it is pass/fail.
type Known = ((f64, f64), bool);

fn known() -> &'static RwLock<HashMap<String, Known>> {
    static KNOWN: OnceLock<RwLock<HashMap<String, Known>>> = OnceLock::new();
    KNOWN.get_or_init(|| RwLock::new(HashMap::new()))
}

/// Records that the user metric `name` scores within `range`, pass/fail or not.
pub(crate) fn remember(name: &str, range: (f64, f64), pass_fail: bool) {
    if let Ok(mut map) = known().write() {
        map.insert(name.to_string(), (range, pass_fail));
    }
}

/// The range of the user metric `name` (with `@turn<n>` or not), and
/// whether it is pass/fail, if known.
pub(crate) fn of(name: &str) -> Option<Known> {
    let map = known().read().ok()?;
    map.get(name)
        .or_else(|| map.get(name.rsplit_once("@turn").map_or(name, |(b, _)| b)))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_user_metric_is_known_by_name_and_by_turn() {
        remember("stats_test_metric", (0.0, 1.0), true);
        assert_eq!(of("stats_test_metric"), Some(((0.0, 1.0), true)));
        assert_eq!(of("stats_test_metric@turn2"), Some(((0.0, 1.0), true)));
        assert_eq!(of("stats_test_unknown"), None);
    }
}
