//! A metric's options: the values written in a spec ([`OptionValue`]) and
//! their checking against the metric's declared options
//! ([`Resolved::check`]): repeated, unknown and mistyped options refused,
//! naming the option; the defaults of those not written. What an option
//! means is its metric's business (its constructor reads it from
//! [`Resolved`]).

use std::borrow::Cow;

use super::catalog::{MetricInfo, OptionDef, OptionKind};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};

/// An option value as written in a metric spec.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// `case_sensitive = true`
    Bool(bool),
    /// `pattern = "..."`
    Str(Cow<'static, str>),
    /// `timeout_s = 30`
    Num(f64),
}

/// A spec's options, checked against its metric's declared ones: what its
/// constructor reads.
#[derive(Debug)]
pub(crate) struct Resolved<'a> {
    /// The metric as written.
    pub(crate) name: &'a str,
    /// The metric.
    info: &'static MetricInfo,
    /// Each option as written, with its index in the spec.
    written: Vec<(&'static OptionDef, &'a OptionValue, usize)>,
}

impl<'a> Resolved<'a> {
    /// Checks `options`, as written for the metric `name` (catalogue entry
    /// `info`): a repeated option, a `threshold` option, one `info` does
    /// not take or a value of the wrong type is refused, naming the option.
    pub(crate) fn check(
        name: &'a str,
        info: &'static MetricInfo,
        options: &'a [(&'a str, OptionValue)],
    ) -> Result<Resolved<'a>, MetricSpecError> {
        let err = |kind: SpecErrorKind, i: usize| Err(MetricSpecError(kind, SpecPart::Option(i)));
        let mut written = Vec::with_capacity(options.len());
        for (i, (key, value)) in options.iter().enumerate() {
            if options[..i].iter().any(|(k, _)| k == key) {
                let kind = SpecErrorKind::RepeatedOption {
                    name: name.to_string(),
                    key: key.to_string(),
                };
                return err(kind, i);
            }
            if *key == "threshold" {
                let kind = SpecErrorKind::ThresholdAsOption {
                    name: name.to_string(),
                    op: info.op,
                    default: info.example_threshold(),
                };
                return err(kind, i);
            }
            let Some(def) = info.options.iter().find(|d| d.name == *key) else {
                let known: Vec<&str> = info.options.iter().map(|d| d.name).collect();
                let (name, key) = (name.to_string(), key.to_string());
                let kind = if known.is_empty() {
                    SpecErrorKind::TakesNoOptions { name, key }
                } else {
                    SpecErrorKind::UnknownOption { name, key, known }
                };
                return err(kind, i);
            };
            let typed = matches!(
                (def.kind, value),
                (OptionKind::Bool, OptionValue::Bool(_))
                    | (OptionKind::Str, OptionValue::Str(_))
                    | (OptionKind::Num, OptionValue::Num(_))
                    | (OptionKind::Value, _)
            );
            if !typed {
                let (name, key) = (name.to_string(), key.to_string());
                let kind = match def.kind {
                    OptionKind::Bool => SpecErrorKind::ExpectsBool { name, key },
                    OptionKind::Str => SpecErrorKind::ExpectsString { name, key },
                    OptionKind::Num | OptionKind::Value => {
                        SpecErrorKind::ExpectsNumber { name, key }
                    }
                };
                return err(kind, i);
            }
            written.push((def, value, i));
        }
        Ok(Resolved {
            name,
            info,
            written,
        })
    }

    /// The value of `key`: as written, else its default.
    fn value(&self, key: &str) -> Option<&OptionValue> {
        match self.written.iter().find(|(d, _, _)| d.name == key) {
            Some((_, v, _)) => Some(v),
            None => self
                .info
                .options
                .iter()
                .find(|d| d.name == key)
                .and_then(|d| d.default.as_ref()),
        }
    }

    /// A `true`/`false` option (false when it has no default).
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.value(key), Some(OptionValue::Bool(true)))
    }

    /// A string option, its default when not written.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        match self.value(key) {
            Some(OptionValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// A string option naming one of a few choices (its default when not
    /// written), read by `parse`; another name is refused with `expected`.
    pub(crate) fn choice<T>(
        &self,
        key: &str,
        parse: fn(&str) -> Option<T>,
        expected: &'static str,
    ) -> Result<Option<T>, MetricSpecError> {
        let Some(text) = self.text(key) else {
            return Ok(None);
        };
        parse(text).map(Some).ok_or_else(|| {
            MetricSpecError(
                SpecErrorKind::UnknownChoice {
                    given: format!("`{key} = \"{text}\"` of `{}`", self.name),
                    expected,
                },
                self.part(key),
            )
        })
    }

    /// The metric's own name (not an alias).
    pub(crate) fn info_name(&self) -> &'static str {
        self.info.name
    }

    /// The options as written, with their places.
    pub(crate) fn written(&self) -> impl Iterator<Item = (&'static str, &OptionValue, SpecPart)> {
        self.written
            .iter()
            .map(|(d, v, i)| (d.name, *v, SpecPart::Option(*i)))
    }

    /// Where `key` was written (for errors about it), else the name.
    pub(crate) fn part(&self, key: &str) -> SpecPart {
        self.written
            .iter()
            .find(|(d, _, _)| d.name == key)
            .map_or(SpecPart::Name, |(_, _, i)| SpecPart::Option(*i))
    }

    /// The options as written, less those given their default value: what
    /// the spec keeps and writes out again.
    pub(crate) fn kept(&self) -> Vec<(String, OptionValue)> {
        self.written
            .iter()
            .filter(|(d, v, _)| d.default.as_ref() != Some(*v))
            .map(|(d, v, _)| (d.name.to_string(), (*v).clone()))
            .collect()
    }
}
