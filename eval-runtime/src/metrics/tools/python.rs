//! Python's view of JSON values, as the tools whose definitions the tool
//! metrics follow (deepeval, ragas) see them after `json.loads`: `==`
//! ([`py_eq`], exact on numbers: [`number_eq`]) and the text of `str()`
//! ([`python_str`]) and `repr` ([`python_repr`], [`python_float`]).

use serde_json::{Map, Number, Value};

/// Python `==` on JSON values: numbers by value, containers item by item;
/// a boolean equals only a boolean (unlike Python's `True == 1`).
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_eq(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| py_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => map_eq(x, y),
        _ => a == b,
    }
}

/// Python's `==` on two numbers, which is exact: integers as integers, an
/// integer and a float equal only when the float is exactly that integer
/// (`3 == 3.0`, but `9007199254740993 != 9007199254740992.0`, though the
/// integer rounds to that float), floats as floats.
fn number_eq(x: &Number, y: &Number) -> bool {
    // Every JSON integer serde_json keeps (i64 or u64) fits an i128.
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    // A float that is a whole number within i128's range, exactly.
    let whole = |f: f64| {
        (f.is_finite() && f.fract() == 0.0 && f.abs() < 2f64.powi(127)).then_some(f as i128)
    };
    match (int(x), int(y), x.as_f64(), y.as_f64()) {
        (Some(i), Some(j), _, _) => i == j,
        (Some(i), None, _, Some(f)) | (None, Some(i), Some(f), _) => whole(f) == Some(i),
        (None, None, Some(f), Some(g)) => f == g,
        _ => false,
    }
}

pub(crate) fn map_eq(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| py_eq(v, w)))
}

/// Python's `str()` of a JSON value as `json.loads` gives it: a string is
/// itself, the rest as Python's `repr` (see [`python_repr`]).
pub(super) fn python_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        _ => {
            let mut out = String::new();
            python_repr(v, &mut out);
            out
        }
    }
}

/// Python's `repr` of a JSON value as `json.loads` gives it: `None`,
/// `True`, `False`; an integer in decimal, a float as [`python_float`];
/// a string quoted as [`python_repr_str`]; `[a, b]` and `{'k': v}` (keys
/// in their order, as a `dict` keeps them) with `, ` and `: `.
fn python_repr(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => match n.as_f64() {
            Some(f) if !(n.is_i64() || n.is_u64()) => out.push_str(&python_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => python_repr_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_repr_str(k, out);
                out.push_str(": ");
                python_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr` of a `str` (CPython's `unicode_repr`): in single quotes,
/// or double quotes when the text has a `'` and no `"`; the quote in use and
/// `\` escaped with a backslash, `\t`, `\n`, `\r`; other characters below
/// U+0020 and U+007F as `\xhh`; a character beyond ASCII as itself when
/// Python counts it printable — any but the general categories Cc, Cf, Cs,
/// Co, Cn, Zl, Zp and Zs — else as `\xhh`, `\uhhhh` or `\Uhhhhhhhh`
/// (lower-case hex). Categories are those of the Unicode version of the
/// `unicode-properties` crate, which may be newer than a given Python's.
fn python_repr_str(s: &str, out: &mut String) {
    use std::fmt::Write;
    use unicode_properties::{GeneralCategory as G, UnicodeGeneralCategory};
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c < ' ' || c == '\x7f' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_ascii() => out.push(c),
            c => {
                let printable = !matches!(
                    c.general_category(),
                    G::Control
                        | G::Format
                        | G::Surrogate
                        | G::PrivateUse
                        | G::Unassigned
                        | G::LineSeparator
                        | G::ParagraphSeparator
                        | G::SpaceSeparator
                );
                let code = c as u32;
                if printable {
                    out.push(c);
                } else if code <= 0xff {
                    let _ = write!(out, "\\x{code:02x}");
                } else if code <= 0xffff {
                    let _ = write!(out, "\\u{code:04x}");
                } else {
                    let _ = write!(out, "\\U{code:08x}");
                }
            }
        }
    }
    out.push(quote);
}

/// Python's `repr` of a float: the shortest text that reads back, with a
/// `.0` on whole numbers, and an exponent (`1e+16`, `1e-05`) below 1e-4 or
/// from 1e16 — where Rust's `{:?}` switches too.
pub(super) fn python_float(f: f64) -> String {
    let text = format!("{f:?}");
    match text.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => text,
    }
}
