//! a metric scored by an external command (a "scorer"):
//! `exec(command = "python3 score.py", name = "cites_ticket", timeout_s = 30, min = 0, max = 1) >= 0.8`,
//! or in a list of specs written as text, `exec:python3 score.py >= 0.8`.
//!
//! This module checks the settings (`exec_spec.rs` makes them a
//! [`MetricSpec`](super::MetricSpec) and reads the shorthand, `exec_error.rs`
//! holds the errors); eval-runtime's `metrics::exec` runs the command (without a shell: the command is split into words here, once,
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

use super::catalog::{MetricInfo, Op, OptionDef, Threshold, lookup};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::options::OptionValue;

/// The catalogue name of external scorers.
pub(super) const EXEC: &str = "exec";
/// How long a scorer may run on one sample when `timeout_s` is not given.
pub(super) const DEFAULT_TIMEOUT_S: f64 = 30.0;
pub use super::exec_error::ExecSpecError;
pub(super) use super::exec_error::{MAX_COMMAND_BYTES, MAX_TIMEOUT_S};

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

/// The definition of `exec`: its options, for "known metrics", the docs
/// and option messages. A spec of it is built by [`check`] (its name,
/// direction and range are what the spec writes), never by `build`.
pub(super) static METRICS: &[MetricInfo] = &[MetricInfo {
    name: EXEC,
    aliases: &[],
    op: Op::AtLeast,
    threshold: Threshold::Required { example: 0.8 },
    range: (0.0, 1.0),
    pass_fail: false,
    needs: &[],
    options: &[
        OptionDef::text("command"),
        OptionDef::text("name"),
        OptionDef::number("timeout_s"),
        OptionDef::number("min"),
        OptionDef::number("max"),
    ],
    summary: "an external scorer: the command (run without a shell) reads the sample and the answer as JSON on stdin and prints {\"score\": 0.9, \"reason\": \"...\"}; named by `name` or the script's stem; the operator written says which way is better, min/max the range (default 0..1); e.g. exec:python3 score.py >= 0.8",
    reference: "",
    build: |o| {
        Err(MetricSpecError(
            SpecErrorKind::Exec(ExecSpecError::NotThroughCheck(o.name.to_string())),
            SpecPart::Name,
        ))
    },
}];

fn fail<T>(e: ExecSpecError, part: SpecPart) -> Result<T, MetricSpecError> {
    Err(MetricSpecError(SpecErrorKind::Exec(e), part))
}

/// Whether `name` (as a spec writes it) is an external scorer.
pub(super) fn is_exec(name: &str) -> bool {
    name == EXEC || name.strip_prefix(EXEC).is_some_and(|r| r.starts_with('@'))
}

/// A checked `exec(options) op threshold`: its results name, settings and bound.
pub(super) type Checked = (String, ExecMetric, Op, f64);

/// `exec(options) op threshold` (`name` as written), checked.
pub(super) fn check(
    name: &str,
    options: &[(&str, OptionValue)],
    bound: Option<(Op, f64)>,
) -> Result<Checked, MetricSpecError> {
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
    let m = ExecMetric {
        command,
        argv,
        named,
        timeout_s,
        min,
        max,
        dir: None,
    };
    Ok((results_name, m, op, threshold))
}

/// The options [`check`] takes to build `m` again (defaults left out).
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
pub(super) fn derived_name(argv: &[String]) -> String {
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
