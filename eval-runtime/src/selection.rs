//! Which tests of this process libtest will run, read from the same command
//! line (`cargo test -- <filters> --skip X --exact --ignored`), so that the
//! macro path can start every selected sample at once.

/// libtest's filtering, as far as it concerns generated eval tests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Selection {
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
    /// Reads libtest's arguments. `None` when they hold something unknown:
    /// the caller then evaluates one test at a time, which is always correct.
    pub(crate) fn from_args(args: impl IntoIterator<Item = String>) -> Option<Selection> {
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

    /// Whether libtest will run the test called `name`.
    pub(crate) fn selects(&self, name: &str) -> bool {
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

/// True inside a `cargo nextest run` test process (one test per process).
pub(crate) fn under_nextest() -> bool {
    std::env::var_os("NEXTEST").is_some() || std::env::var_os("NEXTEST_RUN_ID").is_some()
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
