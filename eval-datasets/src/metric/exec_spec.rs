//! external scorers as specs: what the rest of the code
//! asks a [`MetricSpec`] (its range and direction) instead of looking its
//! catalogue entry up by name, and the shorthand `exec:<command> >= t`.

use super::catalog::Op;
use super::error::MetricSpecError;
use super::exec::{EXEC, ExecMetric};
use super::options::OptionValue;
use super::spec::{MetricKind, MetricSpec};

impl MetricSpec {
    /// An external scorer's spec from what [`super::exec::check`] gave.
    pub(super) fn exec((name, m, op, threshold): super::exec::Checked) -> MetricSpec {
        MetricSpec {
            name,
            kind: MetricKind::Exec(m),
            op,
            threshold,
            turn: None,
            options: Vec::new(),
            catalogue: None,
        }
    }

    /// What [`MetricSpec::decl_parts`] gives for an external scorer `m`.
    pub(super) fn exec_decl_parts(&self, m: &ExecMetric) -> super::spec::DeclParts {
        (
            EXEC.into(),
            super::exec::decl_options(m, &self.name),
            Some((self.op, self.threshold)),
        )
    }

    /// What makes two specs of one list the same metric: the catalogue
    /// metric (aliases are one metric) and turn; an external scorer its name.
    pub fn identity(&self) -> (&str, Option<usize>) {
        (self.canonical_name(), self.turn)
    }
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
    Some(MetricSpec::new(EXEC, &options, bound))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::exec::derived_name;
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
        assert_eq!(spec.op, Op::AtMost);
        assert!(!spec.pass_fail());
        assert_eq!(spec.info().map(|i| i.name), Some("exec"));
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
