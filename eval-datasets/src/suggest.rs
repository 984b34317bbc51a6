//! "Did you mean" hints: the known name closest to a misspelt one.
//!
//! ```
//! use eval_datasets::suggest;
//!
//! let keys = ["topK", "scopePrefix", "mode"];
//! assert_eq!(suggest::closest("topk", keys), Some("topK"));
//! assert_eq!(suggest::did_you_mean(suggest::closest("top_k", keys)), " (did you mean `topK`?)");
//! assert_eq!(suggest::did_you_mean(suggest::closest("zzz", keys)), "");
//! ```

/// How close a candidate must be to be suggested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Closeness {
    /// Largest [`edit_distance`] still suggested.
    pub max_distance: usize,
    /// Compare ignoring ASCII case (`topk` is then 0 away from `topK`).
    pub ignore_ascii_case: bool,
}

impl Closeness {
    /// What [`closest`] uses: ASCII case ignored, at most 3 edits.
    pub const DEFAULT: Closeness = Closeness {
        max_distance: 3,
        ignore_ascii_case: true,
    };

    /// Case counts as a difference; at most `max_distance` edits.
    pub const fn case_sensitive(max_distance: usize) -> Closeness {
        Closeness {
            max_distance,
            ignore_ascii_case: false,
        }
    }
}

impl Default for Closeness {
    fn default() -> Self {
        Closeness::DEFAULT
    }
}

/// The candidate closest to `name` ignoring ASCII case, if one is at most 3
/// edits away (see [`closest_within`]).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    closest_within(name, candidates, Closeness::DEFAULT)
}

/// The candidate with the smallest [`edit_distance`] to `name`, if it is
/// within `closeness`; of equally close candidates, the one that sorts first.
pub fn closest_within<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    closeness: Closeness,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (distance(c, name, closeness.ignore_ascii_case), c))
        .filter(|(d, _)| *d <= closeness.max_distance)
        .min()
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)` for a suggestion, nothing without one: the suffix
/// messages put after the unknown name.
pub fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

/// Levenshtein distance over characters (strsim's; used for "did you
/// mean" hints and by the runtime's string-similarity metrics).
pub fn edit_distance(a: &str, b: &str) -> usize {
    distance(a, b, false)
}

fn distance(a: &str, b: &str, ignore_ascii_case: bool) -> usize {
    if ignore_ascii_case {
        strsim::levenshtein(&a.to_ascii_lowercase(), &b.to_ascii_lowercase())
    } else {
        strsim::levenshtein(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("Ünï", "Uni"), 2);
        assert_eq!(edit_distance("topK", "topk"), 1);
    }

    #[test]
    fn closest_candidates() {
        let keys = ["topK", "scopePrefix", "mode", "rerankTopK"];
        assert_eq!(closest("TOPK", keys), Some("topK"));
        assert_eq!(closest("nothing-like", keys), None);
        assert_eq!(
            closest_within("TOPK", keys, Closeness::case_sensitive(2)),
            None
        );
        // Ties go to the candidate that sorts first.
        assert_eq!(closest("ab", ["ac", "aa"]), Some("aa"));
        assert_eq!(did_you_mean(Some("x")), " (did you mean `x`?)");
        assert_eq!(did_you_mean(None), "");
    }
}
