//! issue36:exec — a metric scored by an external command (a "scorer"):
//! `exec(command = "python3 score.py", name = "cites_ticket", timeout_s = 30, min = 0, max = 1) >= 0.8`,
//! or in a list of specs written as text, `exec:python3 score.py >= 0.8`.
//!
//! This module checks the spec; eval-runtime's `metrics::exec` runs the
//! command (without a shell: the command is split into words here, once,
//! with shell quoting rules, by the `shlex` crate).
//!
//! - The results name is `name`, else the stem of the script the command
//!   names (`score` for `python3 score.py`), else of the program. A name
//!   taken by a catalogue metric is refused.
//! - The user's operator decides the direction (`>=`: higher is better,
//!   `<=`: lower is better); there is no default threshold.
//! - `min` and `max` give the range (default 0 and 1): the threshold must
//!   lie in it, and a score outside it is that sample's error.

use std::borrow::Cow;

use super::catalog::{Op, lookup};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::options::OptionValue;
use super::spec::{MetricKind, MetricSpec};

/// The catalogue name of external scorers.
pub const EXEC: &str = "exec";
/// How long a scorer may run on one sample when `timeout_s` is not given.
pub const DEFAULT_TIMEOUT_S: f64 = 30.0;
/// The longest `timeout_s` accepted (one hour).
pub const MAX_TIMEOUT_S: f64 = 3600.0;
/// The longest command accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 4096;

/// An external scorer's settings, checked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExecMetric {
    /// The command as written (`python3 score.py`).
    pub command: String,
    /// The command split into words with shell quoting rules (no variable,
    /// glob or command substitution: a word is passed as it stands).
    pub argv: Vec<String>,
    /// Whether the results name was given (`name = "..."`).
    pub named: bool,
    /// Seconds one run may take (`timeout_s`, default 30).
    pub timeout_s: f64,
    /// The lowest score (`min`, default 0).
    pub min: f64,
    /// The highest score (`max`, default 1).
    pub max: f64,
    /// The directory the command runs in (and its relative paths start
    /// from): set when a plan loads the spec, to the plan's base directory
    /// (the crate's for the attribute, the manifest's, else the working
    /// directory); `None` until then.
    pub dir: Option<std::path::PathBuf>,
}

impl ExecMetric {
    /// These settings running in `dir`.
    pub fn in_dir(mut self, dir: impl Into<std::path::PathBuf>) -> ExecMetric {
        self.dir = Some(dir.into());
        self
    }
}

/// What is wrong with an `exec` spec.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecSpecError {
    /// No `command`.
    #[error(
        "`exec` needs a command: write `exec(command = \"python3 score.py\") >= 0.8` (or `exec:python3 score.py >= 0.8` in a list)"
    )]
    NoCommand,
    /// The command does not split into words (an unclosed quote), or is empty.
    #[error("`exec` command `{0}` does not split into words (an unclosed quote?), or is empty")]
    BadCommand(String),
    /// The command is too long.
    #[error("`exec` command is {0} bytes long, over the {MAX_COMMAND_BYTES}-byte limit")]
    CommandTooLong(usize),
    /// An option `exec` does not take, or of the wrong type.
    #[error(
        "`exec` option `{0}`: expected command = \"...\", name = \"...\", timeout_s = <seconds>, min = <number>, max = <number>"
    )]
    BadOption(String),
    /// `name` that is not an identifier.
    #[error("`exec` name `{0}` is not a name: use letters, digits and `_` (e.g. `cites_ticket`)")]
    BadName(String),
    /// The results name is a catalogue metric's (given or derived).
    #[error(
        "`exec` metric `{name}` would be named like the built-in metric `{name}`; give it a name of its own: `exec(command = \"{command}\", name = \"...\")`"
    )]
    NameTaken {
        /// The results name.
        name: String,
        /// The command, for the suggestion.
        command: String,
    },
    /// Two specs of one list with the same results name.
    #[error(
        "two metrics of the list are named `{0}`; give each `exec` metric a name of its own: `exec(command = \"...\", name = \"...\")`"
    )]
    NameTwice(String),
    /// `timeout_s` out of bounds.
    #[error("`exec` timeout_s = {0}: give a number of seconds above 0 and at most {MAX_TIMEOUT_S}")]
    BadTimeout(f64),
    /// `min` not below `max`, or not finite.
    #[error("`exec` range min = {0}, max = {1}: give finite numbers with min below max")]
    BadRange(f64, f64),
    /// No threshold.
    #[error(
        "`exec` metric `{0}` needs a threshold; its operator says which way is better: `>= 0.8` (higher is better) or `<= 0.2` (lower is better)"
    )]
    NoThreshold(String),
    /// The threshold outside the range.
    #[error(
        "`exec` metric `{name}` scores from {min} to {max}, so a threshold of {threshold} can never be met as intended"
    )]
    ThresholdOutOfRange {
        /// The results name.
        name: String,
        /// The threshold given.
        threshold: f64,
        /// `min`.
        min: f64,
        /// `max`.
        max: f64,
    },
    /// `exec@turn<n>`.
    #[error(
        "`exec` scores the whole sample, not one turn: the scorer is given every turn and answer"
    )]
    NotPerTurn,
}

fn fail<T>(e: ExecSpecError, part: SpecPart) -> Result<T, MetricSpecError> {
    Err(MetricSpecError(SpecErrorKind::Exec(e), part))
}

/// Whether `name` (as a spec writes it) is an external scorer.
pub(super) fn is_exec(name: &str) -> bool {
    name == EXEC || name.strip_prefix(EXEC).is_some_and(|r| r.starts_with('@'))
}

/// `exec(options) op threshold`, checked.
pub(super) fn new_spec(
    name: &str,
    options: &[(&str, OptionValue)],
    bound: Option<(Op, f64)>,
) -> Result<MetricSpec, MetricSpecError> {
    if name != EXEC {
        return fail(ExecSpecError::NotPerTurn, SpecPart::Name);
    }
    let (mut command, mut given_name) = (None, None);
    let (mut timeout_s, mut min, mut max) = (DEFAULT_TIMEOUT_S, 0.0, 1.0);
    for (i, (key, value)) in options.iter().enumerate() {
        let part = SpecPart::Option(i);
        if options[..i].iter().any(|(k, _)| k == key) {
            return Err(MetricSpecError(
                SpecErrorKind::RepeatedOption {
                    name: EXEC.into(),
                    key: key.to_string(),
                },
                part,
            ));
        }
        match (*key, value) {
            ("command", OptionValue::Str(s)) => command = Some(s.to_string()),
            ("name", OptionValue::Str(s)) => given_name = Some(s.to_string()),
            ("timeout_s", OptionValue::Num(n)) => timeout_s = *n,
            ("min", OptionValue::Num(n)) => min = *n,
            ("max", OptionValue::Num(n)) => max = *n,
            (key, _) => return fail(ExecSpecError::BadOption(key.to_string()), part),
        }
    }
    let Some(command) = command else {
        return fail(ExecSpecError::NoCommand, SpecPart::Name);
    };
    if command.len() > MAX_COMMAND_BYTES {
        return fail(ExecSpecError::CommandTooLong(command.len()), SpecPart::Name);
    }
    let argv = match shlex::split(&command) {
        Some(words) if !words.is_empty() && !words[0].is_empty() => words,
        _ => return fail(ExecSpecError::BadCommand(command), SpecPart::Name),
    };
    if !(timeout_s > 0.0 && timeout_s <= MAX_TIMEOUT_S) {
        return fail(ExecSpecError::BadTimeout(timeout_s), SpecPart::Name);
    }
    if !(min.is_finite() && max.is_finite() && min < max) {
        return fail(ExecSpecError::BadRange(min, max), SpecPart::Name);
    }
    let named = given_name.is_some();
    let results_name = match given_name {
        Some(n) => {
            if !is_identifier(&n) {
                return fail(ExecSpecError::BadName(n), SpecPart::Name);
            }
            n
        }
        None => derived_name(&argv),
    };
    if lookup(&results_name).is_some() {
        return fail(
            ExecSpecError::NameTaken {
                name: results_name,
                command,
            },
            SpecPart::Name,
        );
    }
    let Some((op, threshold)) = bound else {
        return fail(ExecSpecError::NoThreshold(results_name), SpecPart::Name);
    };
    if !(min..=max).contains(&threshold) {
        return fail(
            ExecSpecError::ThresholdOutOfRange {
                name: results_name,
                threshold,
                min,
                max,
            },
            SpecPart::Threshold,
        );
    }
    Ok(MetricSpec {
        name: results_name,
        kind: MetricKind::Exec(ExecMetric {
            command,
            argv,
            named,
            timeout_s,
            min,
            max,
            dir: None,
        }),
        op,
        threshold,
        turn: None,
    })
}

/// The options [`new_spec`] takes to build `m` again (defaults left out).
pub(super) fn decl_options(m: &ExecMetric, name: &str) -> Vec<(String, OptionValue)> {
    let mut options = vec![(
        "command".to_string(),
        OptionValue::Str(Cow::Owned(m.command.clone())),
    )];
    if m.named {
        options.push(("name".into(), OptionValue::Str(Cow::Owned(name.into()))));
    }
    for (key, value, default) in [
        ("timeout_s", m.timeout_s, DEFAULT_TIMEOUT_S),
        ("min", m.min, 0.0),
        ("max", m.max, 1.0),
    ] {
        if value != default {
            options.push((key.into(), OptionValue::Num(value)));
        }
    }
    options
}

/// A list entry of the shorthand `exec:<command> [>= | <= threshold]`,
/// as the `exec` spec it stands for (`None`: not the shorthand).
pub(super) fn shorthand(part: &str) -> Option<Result<MetricSpec, MetricSpecError>> {
    let rest = part.trim().strip_prefix("exec:")?;
    let at = rest.rfind(">=").into_iter().chain(rest.rfind("<=")).max();
    let (command, bound) = match at {
        Some(at) => match rest[at + 2..].trim().parse::<f64>() {
            Ok(t) => {
                let op = if rest[at..].starts_with(">=") {
                    Op::AtLeast
                } else {
                    Op::AtMost
                };
                (&rest[..at], Some((op, t)))
            }
            Err(_) => (rest, None),
        },
        None => (rest, None),
    };
    let options = [(
        "command",
        OptionValue::Str(command.trim().to_string().into()),
    )];
    Some(new_spec(EXEC, &options, bound))
}

/// Whether `name` may name results: ASCII letters, digits, `_`, not
/// starting with a digit.
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The results name of a command: the stem of the first argument after
/// the program that looks like a file (has an extension or a `/`, does
/// not start with `-`), else the program's stem; made an identifier.
pub fn derived_name(argv: &[String]) -> String {
    let file_like = |w: &&String| !w.starts_with('-') && (w.contains('.') || w.contains('/'));
    let word = argv
        .iter()
        .skip(1)
        .find(file_like)
        .or(argv.first())
        .map(String::as_str)
        .unwrap_or("exec");
    let path = std::path::Path::new(word);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(word)
        .to_string();
    let mut name: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "exec_");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::parse_specs;

    fn s(v: &'static str) -> OptionValue {
        OptionValue::Str(v.into())
    }

    #[test]
    fn a_spec_takes_its_name_range_and_direction_from_what_is_written() {
        let spec = MetricSpec::new(
            "exec",
            &[
                ("command", s("python3 checks/cites.py --strict")),
                ("timeout_s", OptionValue::Num(5.0)),
                ("max", OptionValue::Num(10.0)),
            ],
            Some((Op::AtMost, 2.0)),
        )
        .unwrap();
        assert_eq!(spec.name, "cites");
        assert_eq!(spec.range(), (0.0, 10.0));
        assert!(!spec.higher_is_better());
        assert!(!spec.pass_fail());
        assert_eq!(spec.info().name, "exec");
        let MetricKind::Exec(m) = &spec.kind else {
            panic!("{:?}", spec.kind)
        };
        assert_eq!(m.argv, ["python3", "checks/cites.py", "--strict"]);
        assert_eq!(m.timeout_s, 5.0);
        // It round-trips through its parts (as the attribute writes them).
        let (name, options, bound) = spec.decl_parts();
        let options: Vec<(&str, OptionValue)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        assert_eq!(MetricSpec::new(&name, &options, bound).unwrap(), spec);
    }

    #[test]
    fn the_shorthand_splits_the_threshold_off_the_end() {
        let specs = parse_specs(
            "contains, exec:python3 'my score.py' --x=1 >= 0.8, exec:./lint.sh <= 0.25",
        )
        .unwrap();
        assert_eq!(specs.len(), 3);
        assert_eq!(
            (specs[1].name.as_str(), specs[1].op, specs[1].threshold),
            ("my_score", Op::AtLeast, 0.8)
        );
        let MetricKind::Exec(m) = &specs[1].kind else {
            panic!()
        };
        assert_eq!(m.argv, ["python3", "my score.py", "--x=1"]);
        assert_eq!(m.command, "python3 'my score.py' --x=1");
        assert_eq!((specs[2].name.as_str(), specs[2].op), ("lint", Op::AtMost));
        // The long form in a list, with a name.
        let named = parse_specs(
            r#"exec(command = "python3 score.py", name = "cites_ticket", min = -1) >= 0"#,
        )
        .unwrap();
        assert_eq!(named[0].name, "cites_ticket");
        assert_eq!(named[0].range(), (-1.0, 1.0));
    }

    #[test]
    fn names_and_settings_that_cannot_work_are_refused() {
        let e = |text: &str| parse_specs(text).unwrap_err().to_string();
        assert!(e("exec:python3 score.py").contains("needs a threshold"));
        assert!(e("exec:python3 contains.py >= 1").contains("give it a name of its own"));
        assert!(
            e("exec:python3 a/score.py >= 1, exec:node b/score.js >= 1")
                .contains("two metrics of the list are named `score`")
        );
        assert!(parse_specs(
            r#"exec:python3 a/score.py >= 1, exec(command = "node b/score.js", name = "js") >= 1"#
        )
        .is_ok());
        assert!(e("exec:python3 'score.py >= 1").contains("does not split"));
        assert!(e("exec:python3 s.py >= 2").contains("scores from 0 to 1"));
        assert!(e(r#"exec(command = "x", timeout_s = 0) >= 1"#).contains("timeout_s = 0"));
        assert!(e(r#"exec(command = "x", min = 1, max = 1) >= 1"#).contains("min below max"));
        assert!(e(r#"exec(command = "x", name = "a b") >= 1"#).contains("is not a name"));
        assert!(e(r#"exec(command = "x", shell = true) >= 1"#).contains("option `shell`"));
        assert!(e(r#"exec(name = "x") >= 1"#).contains("needs a command"));
        assert!(e("exec@turn2 >= 1").contains("not one turn"));
    }

    #[test]
    fn a_name_is_derived_from_the_script() {
        let n =
            |words: &[&str]| derived_name(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>());
        assert_eq!(n(&["python3", "score.py"]), "score");
        assert_eq!(n(&["python3", "-u", "checks/json-ok.py"]), "json_ok");
        assert_eq!(n(&["./grade"]), "grade");
        assert_eq!(n(&["/usr/bin/2fa"]), "exec_2fa");
    }
}
