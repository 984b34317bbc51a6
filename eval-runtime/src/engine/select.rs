//! Which tests of this process the test runner will run: libtest's filters
//! (`cargo test -- <filters> --skip X --exact --ignored`), read from the same
//! command line for the attribute and from libtest-mimic's parsed arguments
//! for the harness, so both start exactly the samples that will be asked for.

/// The test runner's filtering, as far as it concerns eval tests (which are
/// never `#[ignore]`d).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    filters: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    /// `--ignored` or `--list`: none of our (never ignored) tests will run.
    none: bool,
}

/// Options of libtest that take a value.
const WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--skip",
    "--logfile",
    "--color",
    "--format",
    "--shuffle-seed",
    "-Z",
];

/// Flags of libtest that take none.
const FLAGS: &[&str] = &[
    "--exact",
    "--ignored",
    "--include-ignored",
    "--nocapture",
    "--no-capture",
    "--show-output",
    "--list",
    "--test",
    "--bench",
    "-q",
    "--quiet",
    "--force-run-in-process",
    "--shuffle",
    "--fail-fast",
    "--ensure-time",
    "--report-time",
];

impl Selection {
    /// Every test.
    pub fn all() -> Self {
        Selection::default()
    }

    /// What libtest-mimic will run, from its parsed arguments (the harness).
    pub fn from_arguments(args: &libtest_mimic::Arguments) -> Self {
        Selection {
            filters: args.filter.iter().cloned().collect(),
            skip: args.skip.clone(),
            exact: args.exact,
            none: args.list || args.ignored,
        }
    }

    /// Whether every test is selected, whatever its name (no filter, no
    /// `--skip`, not a listing).
    pub(crate) fn takes_all(&self) -> bool {
        !self.none && self.filters.is_empty() && self.skip.is_empty()
    }

    /// The one test named, when the runner asks for exactly one by its full
    /// name (`--exact NAME`, as nextest runs each test).
    pub fn exact_name(&self) -> Option<&str> {
        match (
            self.exact,
            self.none,
            self.skip.is_empty(),
            self.filters.as_slice(),
        ) {
            (true, false, true, [one]) => Some(one),
            _ => None,
        }
    }

    /// Whether some test is asked for by its exact name (an `--exact`
    /// filter), so that a name matching nothing is an error, not a pass.
    pub fn exact_filters(&self) -> &[String] {
        if self.exact { &self.filters } else { &[] }
    }

    /// Reads libtest's arguments. `None` when they hold something unknown:
    /// the caller then evaluates one test at a time, which is always correct.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Option<Selection> {
        let mut sel = Selection::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (arg.clone(), None),
            };
            if WITH_VALUE.contains(&flag.as_str()) {
                let value = match inline {
                    Some(v) => v,
                    None => args.next()?,
                };
                if flag == "--skip" {
                    sel.skip.push(value);
                }
            } else if FLAGS.contains(&flag.as_str()) {
                match flag.as_str() {
                    "--exact" => sel.exact = true,
                    "--ignored" | "--list" | "--bench" => sel.none = true,
                    _ => {}
                }
            } else if arg.starts_with("-Z") {
                // `-Zunstable-options`: an unstable option joined to its flag.
            } else if arg.starts_with('-') {
                return None;
            } else {
                sel.filters.push(arg);
            }
        }
        Some(sel)
    }

    /// Whether the runner will run the test called `name`.
    pub fn selects(&self, name: &str) -> bool {
        if self.none {
            return false;
        }
        let hit = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(hit)) && !self.skip.iter().any(hit)
    }
}

#[cfg(test)]
mod tests {
    use super::Selection;

    fn sel(args: &[&str]) -> Option<Selection> {
        Selection::from_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn reads_libtest_filters() {
        let s = sel(&[
            "advanced",
            "--skip",
            "rag::x",
            "--test-threads=2",
            "--nocapture",
        ])
        .unwrap();
        assert!(s.selects("faq::a__advanced"));
        assert!(!s.selects("faq::a__basics"));
        assert!(!s.selects("rag::x__advanced"));
        let s = sel(&["--exact", "rag::a"]).unwrap();
        assert!(s.selects("rag::a"));
        assert!(!s.selects("rag::ab"));
        let s = sel(&["a", "b"]).unwrap();
        assert!(s.selects("xb") && s.selects("ax") && !s.selects("c"));
        assert!(sel(&[]).unwrap().selects("anything"));
        assert!(!sel(&["--ignored"]).unwrap().selects("anything"));
        assert!(
            !sel(&["--list", "--format", "terse"])
                .unwrap()
                .selects("anything")
        );
        assert_eq!(sel(&["--something-new"]), None);
        let s = sel(&["-Zunstable-options", "--report-time", "adv"]).unwrap();
        assert!(s.selects("x__adv") && !s.selects("x__basic"));
        let s = sel(&["-Z", "unstable-options", "adv"]).unwrap();
        assert!(s.selects("x__adv") && !s.selects("unstable-options"));
        assert_eq!(sel(&["--skip"]), None);
    }
}
