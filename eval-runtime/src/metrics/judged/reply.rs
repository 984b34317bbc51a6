//! Strict reading of a judge's reply: exactly the keys the prompt asked
//! for, each of the type asked for. Anything else (a missing key, an extra
//! one such as an injected `"score"` next to `"verdicts"`, `true` where `1`
//! was asked, `"Yes"` where `"yes"` was, a rating out of range, one verdict
//! too many) makes the answer unusable: it is re-asked, then the metric
//! fails alone.
//!
//! The shape is also what an estimate's dry judge answers with
//! ([`Shape::assumed`]): the metric that asks a question says, beside the
//! keys it reads, how long the lists the judge writes itself are assumed
//! to be, so the estimate never guesses a metric's prompt from outside.

use serde_json::{Value, json};

use crate::services::{Answer, JudgePrompt};

/// A reason a dry judge's answer gives (about 8 tokens).
const REASON: &str = "The context states this directly.";

/// How many items an estimate assumes a list holds whose length the judge
/// decides (the statements it extracts, the questions it writes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Assume<'a> {
    /// One item per sentence of this text (at least one).
    Sentences(&'a str),
    /// This many copies of this text.
    Copies(usize, &'a str),
    /// None.
    Nothing,
}

impl Assume<'_> {
    fn items(self) -> Vec<String> {
        match self {
            Assume::Sentences(text) => {
                let mut items = crate::model::sentences(text);
                if items.is_empty() {
                    items.push("A statement of the answer.".to_string());
                }
                items
            }
            Assume::Copies(n, text) => vec![text.to_string(); n],
            Assume::Nothing => Vec::new(),
        }
    }
}

/// What one key of a reply holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Field<'a> {
    /// A list of strings, as many as the judge finds (an estimate assumes
    /// the [`Assume`]d ones).
    Strings(Assume<'a>),
    /// A list of bare `0`/`1` flags; with `(n, what)`, exactly one per each
    /// of `n` `what` (statements, chunks).
    Flags(Option<(usize, &'static str)>),
    /// A list of bare `0`/`1` flags, one per item the judge finds itself
    /// (an estimate assumes one per [`Assume`]d item).
    FlagsPer(Assume<'a>),
    /// A list of bare `0`/`1` flags, exactly one per string of the
    /// [`Field::Strings`] under this other key (a verdict per statement the
    /// judge lists itself).
    FlagsFor(&'static str),
    /// A list of `"yes"`/`"no"`, one per each of `n` `what`.
    YesNo(usize, &'static str),
    /// A bare `0` or `1`.
    Flag,
    /// A number from `low` to `high`; a JSON integer when `integer`.
    Number { low: f64, high: f64, integer: bool },
    /// A string.
    Text,
}

/// The keys a metric asks its judge for, each with what it holds: the
/// [`Answer`] a judge's reply is checked against.
pub(super) struct Shape<'a>(pub &'a [(&'a str, Field<'a>)]);

impl Answer for Shape<'_> {
    fn check(&self, v: &Value) -> Result<(), String> {
        check(v, self.0)
    }

    /// A JSON schema admitting exactly the answers [`check`] admits (but
    /// for the length of lists tied to another list, which no schema says).
    fn schema(&self) -> Option<Value> {
        let mut properties = serde_json::Map::new();
        for (key, field) in self.0 {
            properties.insert(key.to_string(), field_schema(*field));
        }
        let required: Vec<&str> = self.0.iter().map(|(k, _)| *k).collect();
        Some(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }))
    }

    /// Room for the answer the shape describes, twice over: a flag per
    /// item, the assumed lists' text, a reason.
    fn max_tokens(&self) -> Option<u32> {
        let text = |t: &str| t.chars().count() / 3 + 4;
        let items = |key: &str| {
            self.0.iter().find_map(|(k, f)| match f {
                Field::Strings(a) if *k == key => Some(a.items().len()),
                _ => None,
            })
        };
        let mut tokens = 16usize;
        for (key, field) in self.0 {
            tokens += key.len() / 3 + 4;
            tokens += match *field {
                Field::Strings(Assume::Nothing) => 200,
                Field::Strings(assume) => {
                    2 * assume.items().iter().map(|t| text(t)).sum::<usize>() + 32
                }
                Field::Flags(Some((n, _))) | Field::YesNo(n, _) => 3 * n + 8,
                Field::Flags(None) => 64,
                Field::FlagsPer(assume) => 6 * assume.items().len() + 32,
                Field::FlagsFor(other) => 6 * items(other).unwrap_or(8) + 32,
                Field::Flag | Field::Number { .. } => 8,
                Field::Text => 200,
            };
        }
        Some(tokens.clamp(64, 2048) as u32)
    }

    /// Every key, holding what an estimate assumes: the assumed items, a
    /// `1` per statement or chunk, `"yes"` per context, the top of a
    /// rating, a short reason.
    fn assumed(&self, _prompt: &JudgePrompt) -> Value {
        let mut answer = serde_json::Map::new();
        for (key, field) in self.0 {
            let value = match *field {
                Field::Strings(assume) => json!(assume.items()),
                Field::Flags(Some((n, _))) => json!(vec![1; n]),
                Field::Flags(None) => json!([1]),
                Field::FlagsPer(assume) => json!(vec![1; assume.items().len()]),
                Field::FlagsFor(other) => {
                    let n = self.0.iter().find_map(|(k, f)| match f {
                        Field::Strings(a) if *k == other => Some(a.items().len()),
                        _ => None,
                    });
                    json!(vec![1; n.unwrap_or(1)])
                }
                Field::YesNo(n, _) => json!(vec!["yes"; n]),
                Field::Flag => json!(0),
                Field::Number { high, integer, .. } if integer => json!(high as i64),
                Field::Number { high, .. } => json!(high),
                Field::Text => json!(REASON),
            };
            answer.insert(key.to_string(), value);
        }
        Value::Object(answer)
    }
}

/// Whether `v` is an object with exactly the keys of `shape`, each holding
/// what its [`Field`] says; the first problem otherwise.
pub(super) fn check(v: &Value, shape: &[(&str, Field)]) -> Result<(), String> {
    let Value::Object(map) = v else {
        return Err("the answer is not a JSON object".into());
    };
    let asked = || {
        shape
            .iter()
            .map(|(k, _)| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(extra) = map.keys().find(|k| !shape.iter().any(|(s, _)| s == k)) {
        return Err(format!(
            "unexpected key `{extra}`: the answer holds exactly {}",
            asked()
        ));
    }
    for (key, field) in shape {
        let Some(value) = map.get(*key) else {
            return Err(format!("no `{key}`: the answer holds exactly {}", asked()));
        };
        field_ok(key, *field, value)?;
        if let Field::FlagsFor(other) = field {
            let (mine, theirs) = (
                value.as_array().map_or(0, Vec::len),
                map.get(*other)
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len),
            );
            if mine != theirs {
                return Err(format!(
                    "the judge gave {mine} {key} for {theirs} {other}: one per item, in order"
                ));
            }
        }
    }
    Ok(())
}

/// The JSON schema of one field's value.
fn field_schema(field: Field) -> Value {
    let flag = json!({"type": "integer", "enum": [0, 1]});
    let list = |item: Value, n: Option<usize>| match n {
        Some(n) => json!({"type": "array", "items": item, "minItems": n, "maxItems": n}),
        None => json!({"type": "array", "items": item}),
    };
    match field {
        Field::Strings(_) => list(json!({"type": "string"}), None),
        Field::Flags(n) => list(flag, n.map(|(n, _)| n)),
        Field::FlagsPer(_) | Field::FlagsFor(_) => list(flag, None),
        Field::YesNo(n, _) => list(json!({"type": "string", "enum": ["yes", "no"]}), Some(n)),
        Field::Flag => flag,
        Field::Number { low, high, integer } if integer && high - low <= 10.0 => {
            let values: Vec<i64> = (low as i64..=high as i64).collect();
            json!({"type": "integer", "enum": values})
        }
        Field::Number { low, high, integer } => json!({
            "type": if integer { "integer" } else { "number" },
            "minimum": low,
            "maximum": high,
        }),
        Field::Text => json!({"type": "string"}),
    }
}

fn field_ok(key: &str, field: Field, v: &Value) -> Result<(), String> {
    let list = || {
        v.as_array()
            .ok_or_else(|| format!("`{key}` is {}, not a list", short(v)))
    };
    let count = |items: &Vec<Value>, n: usize, what: &str| {
        if items.len() == n {
            Ok(())
        } else {
            Err(format!(
                "the judge gave {} {key} for {n} {what}",
                items.len()
            ))
        }
    };
    match field {
        Field::Strings(_) => {
            if let Some(bad) = list()?.iter().find(|s| !s.is_string()) {
                return Err(format!("`{key}` holds {}, not a string", short(bad)));
            }
        }
        Field::FlagsPer(_) | Field::FlagsFor(_) => {
            let items = list()?;
            if let Some(bad) = items.iter().find(|x| flag(x).is_none()) {
                return Err(format!("`{key}` holds {}, not 1 or 0", short(bad)));
            }
        }
        Field::Flags(n) => {
            let items = list()?;
            if let Some(bad) = items.iter().find(|x| flag(x).is_none()) {
                return Err(format!("`{key}` holds {}, not 1 or 0", short(bad)));
            }
            if let Some((n, what)) = n {
                count(items, n, what)?;
            }
        }
        Field::YesNo(n, what) => {
            let items = list()?;
            if let Some(bad) = items.iter().find(|x| yes_no(x).is_none()) {
                return Err(format!(
                    "`{key}` holds {}, not \"yes\" or \"no\"",
                    short(bad)
                ));
            }
            count(items, n, what)?;
        }
        Field::Flag => {
            if flag(v).is_none() {
                return Err(format!("`{key}` is {}, not 1 or 0", short(v)));
            }
        }
        Field::Number { low, high, integer } => {
            number(v, low, high, integer).ok_or_else(|| {
                format!(
                    "`{key}` is {}, not {} from {low} to {high}",
                    short(v),
                    if integer { "an integer" } else { "a number" }
                )
            })?;
        }
        Field::Text => {
            if !v.is_string() {
                return Err(format!("`{key}` is {}, not a string", short(v)));
            }
        }
    }
    Ok(())
}

/// A bare `1` or `0` (not `true`, `"1"` or `1.0`).
fn flag(v: &Value) -> Option<bool> {
    match v.as_u64() {
        Some(1) => Some(true),
        Some(0) => Some(false),
        _ => None,
    }
}

/// `"yes"` or `"no"`, as asked.
fn yes_no(v: &Value) -> Option<bool> {
    match v.as_str() {
        Some("yes") => Some(true),
        Some("no") => Some(false),
        _ => None,
    }
}

fn number(v: &Value, low: f64, high: f64, integer: bool) -> Option<f64> {
    if integer && !(v.is_i64() || v.is_u64()) {
        return None;
    }
    v.as_f64().filter(|x| (low..=high).contains(x))
}

fn short(v: &Value) -> String {
    crate::model::one_line(&v.to_string(), 60)
}

/// The flags of `key` in a reply [`check`]ed with [`Field::Flags`],
/// [`Field::FlagsPer`] or [`Field::FlagsFor`].
pub(super) fn flags(v: &Value, key: &str) -> Result<Vec<bool>, String> {
    read(v, key, flag, "1 or 0")
}

/// The answers of `key` (`"yes"`: true) in a reply [`check`]ed with
/// [`Field::YesNo`].
pub(super) fn yeses(v: &Value, key: &str) -> Result<Vec<bool>, String> {
    read(v, key, yes_no, "\"yes\" or \"no\"")
}

fn read(
    v: &Value,
    key: &str,
    item: fn(&Value) -> Option<bool>,
    what: &str,
) -> Result<Vec<bool>, String> {
    v[key]
        .as_array()
        .ok_or_else(|| format!("the judge's answer has no `{key}` list"))?
        .iter()
        .map(|x| item(x).ok_or_else(|| format!("`{key}` holds {}, not {what}", short(x))))
        .collect()
}

/// The strings of `key` in a reply [`check`]ed with [`Field::Strings`].
pub(super) fn strings(v: &Value, key: &str) -> Result<Vec<String>, String> {
    v[key]
        .as_array()
        .ok_or_else(|| format!("the judge's answer has no `{key}` list"))?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("`{key}` holds a non-string"))
        })
        .collect()
}

/// The flag of `key` in a reply [`check`]ed with [`Field::Flag`].
pub(super) fn one_flag(v: &Value, key: &str) -> Result<bool, String> {
    flag(&v[key]).ok_or_else(|| format!("the judge's `{key}` is not 1 or 0"))
}

/// The number of `key` in a reply [`check`]ed with [`Field::Number`].
pub(super) fn score(v: &Value, key: &str, field: Field) -> Result<f64, String> {
    field_ok(key, field, &v[key]).map_err(|e| format!("the judge's {e}"))?;
    v[key]
        .as_f64()
        .ok_or_else(|| format!("the judge's `{key}` is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VERDICTS: &[(&str, Field)] = &[("verdicts", Field::Flags(Some((2, "statements"))))];

    #[test]
    fn exactly_the_keys_asked_each_of_its_type() {
        assert!(check(&json!({"verdicts": [1, 0]}), VERDICTS).is_ok());
        let e = check(&json!({"verdicts": [1, 0], "score": 1}), VERDICTS).unwrap_err();
        assert_eq!(
            e,
            "unexpected key `score`: the answer holds exactly `verdicts`"
        );
        assert!(
            check(&json!({}), VERDICTS)
                .unwrap_err()
                .starts_with("no `verdicts`")
        );
        for wrong in [
            json!({"verdicts": [true, false]}),
            json!({"verdicts": ["1", "0"]}),
            json!({"verdicts": [1.0, 0]}),
            json!({"verdicts": [2, 0]}),
            json!({"verdicts": [{"verdict": 1}, 0]}),
            json!({"verdicts": 1}),
        ] {
            assert!(check(&wrong, VERDICTS).is_err(), "{wrong}");
        }
        assert_eq!(
            check(&json!({"verdicts": [1]}), VERDICTS).unwrap_err(),
            "the judge gave 1 verdicts for 2 statements"
        );
        let yes_no: &[(&str, Field)] = &[("verdicts", Field::YesNo(1, "contexts"))];
        assert!(check(&json!({"verdicts": ["yes"]}), yes_no).is_ok());
        assert!(check(&json!({"verdicts": ["Yes"]}), yes_no).is_err());
        assert!(check(&json!({"verdicts": [1]}), yes_no).is_err());
        let rating: &[(&str, Field)] = &[
            (
                "rating",
                Field::Number {
                    low: 1.0,
                    high: 5.0,
                    integer: true,
                },
            ),
            ("reason", Field::Text),
        ];
        assert!(check(&json!({"rating": 4, "reason": "r"}), rating).is_ok());
        for wrong in [
            json!({"rating": 4.0, "reason": "r"}),
            json!({"rating": 6, "reason": "r"}),
            json!({"rating": 0, "reason": "r"}),
            json!({"rating": "4", "reason": "r"}),
            json!({"rating": 4, "reason": 1}),
            json!({"rating": 4}),
        ] {
            assert!(check(&wrong, rating).is_err(), "{wrong}");
        }
        assert!(check(&json!([1]), VERDICTS).is_err());
    }

    #[test]
    fn what_an_estimate_assumes_is_an_answer_of_the_shape() {
        let prompt = JudgePrompt::new("t", 1, "i");
        let shapes: &[&[(&str, Field)]] = &[
            VERDICTS,
            &[(
                "statements",
                Field::Strings(Assume::Sentences("One. Two! Three?")),
            )],
            &[
                ("questions", Field::Strings(Assume::Copies(3, "q"))),
                ("noncommittal", Field::Flag),
            ],
            &[("opinions", Field::Strings(Assume::Nothing))],
            &[(
                "classifications",
                Field::FlagsPer(Assume::Sentences("A. B.")),
            )],
            &[("verdicts", Field::YesNo(2, "contexts"))],
            &[
                (
                    "rating",
                    Field::Number {
                        low: 1.0,
                        high: 5.0,
                        integer: true,
                    },
                ),
                ("reason", Field::Text),
            ],
        ];
        for shape in shapes {
            let shape = Shape(shape);
            let answer = shape.assumed(&prompt);
            assert_eq!(shape.check(&answer), Ok(()), "{answer}");
        }
        let statements = Shape(&[(
            "statements",
            Field::Strings(Assume::Sentences("One. Two! Three?")),
        )]);
        assert_eq!(
            statements.assumed(&prompt)["statements"],
            json!(["One.", "Two!", "Three?"])
        );
        let classes = Shape(&[("classifications", Field::FlagsPer(Assume::Sentences("")))]);
        assert_eq!(classes.assumed(&prompt), json!({"classifications": [1]}));
    }

    /// Whether `v` satisfies `schema`, for the keywords [`field_schema`]
    /// writes (a test's own reading of JSON Schema).
    fn satisfies(v: &Value, schema: &Value) -> bool {
        if let Some(values) = schema["enum"].as_array() {
            return values.contains(v);
        }
        match schema["type"].as_str() {
            Some("object") => {
                let (Some(map), Some(props)) = (v.as_object(), schema["properties"].as_object())
                else {
                    return false;
                };
                let required = schema["required"].as_array().unwrap();
                required
                    .iter()
                    .all(|k| map.contains_key(k.as_str().unwrap()))
                    && map
                        .iter()
                        .all(|(k, x)| props.get(k).is_some_and(|s| satisfies(x, s)))
            }
            Some("array") => v.as_array().is_some_and(|items| {
                let n = items.len() as u64;
                schema["minItems"].as_u64().is_none_or(|m| n >= m)
                    && schema["maxItems"].as_u64().is_none_or(|m| n <= m)
                    && items.iter().all(|x| satisfies(x, &schema["items"]))
            }),
            Some("string") => v.is_string(),
            Some("integer") => v.is_i64() || v.is_u64(),
            Some("number") => v.as_f64().is_some_and(|x| {
                schema["minimum"].as_f64().is_none_or(|m| x >= m)
                    && schema["maximum"].as_f64().is_none_or(|m| x <= m)
            }),
            _ => false,
        }
    }

    #[test]
    fn the_schema_admits_the_answers_check_admits_and_refuses_the_others() {
        let faithfulness: &[(&str, Field)] = &[
            ("statements", Field::Strings(Assume::Sentences("A. B."))),
            ("verdicts", Field::FlagsFor("statements")),
        ];
        let reference: &[(&str, Field)] = &[
            ("useful", Field::Flags(Some((2, "context chunks")))),
            ("attributed", Field::FlagsPer(Assume::Sentences("A."))),
        ];
        let rating: &[(&str, Field)] = &[
            (
                "rating",
                Field::Number {
                    low: 1.0,
                    high: 5.0,
                    integer: true,
                },
            ),
            ("reason", Field::Text),
        ];
        let prompt = JudgePrompt::new("t", 1, "i");
        for shape in [faithfulness, reference, rating, VERDICTS] {
            let shape = Shape(shape);
            let schema = shape.schema().unwrap();
            assert_eq!(schema["additionalProperties"], false);
            let good = shape.assumed(&prompt);
            assert!(satisfies(&good, &schema), "{good} / {schema}");
            assert_eq!(shape.check(&good), Ok(()));
            let bound = shape.max_tokens().unwrap();
            assert!((64..=2048).contains(&bound), "{bound}");
        }
        let verdicts = Shape(VERDICTS).schema().unwrap();
        for bad in [
            json!({"verdicts": [1, 0], "score": 1}),
            json!({"verdicts": [true, false]}),
            json!({"verdicts": [1]}),
            json!({"verdicts": [2, 0]}),
            json!({}),
        ] {
            assert!(!satisfies(&bad, &verdicts), "{bad}");
            assert!(Shape(VERDICTS).check(&bad).is_err(), "{bad}");
        }
        let rated = Shape(rating).schema().unwrap();
        assert!(!satisfies(&json!({"rating": 6, "reason": "r"}), &rated));
        assert!(!satisfies(&json!({"rating": 4.5, "reason": "r"}), &rated));
        // A verdict per statement: no schema says so; the check does.
        let f = Shape(faithfulness);
        let uneven = json!({"statements": ["A.", "B."], "verdicts": [1]});
        assert!(satisfies(&uneven, &f.schema().unwrap()));
        assert_eq!(
            f.check(&uneven).unwrap_err(),
            "the judge gave 1 verdicts for 2 statements: one per item, in order"
        );
        // The bound grows with what the judge must write.
        let long = "A sentence of the answer. ".repeat(40);
        let many = Shape(&[("statements", Field::Strings(Assume::Sentences(&long)))]);
        let few = Shape(&[("statements", Field::Strings(Assume::Sentences("A.")))]);
        assert!(many.max_tokens() > few.max_tokens());
    }
}
