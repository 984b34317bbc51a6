//! The rules of the runevals JSON Schema (`schema/v1/eval-document.schema.json`):
//! document shapes, allowed keys, field types, evaluators and their options,
//! run results. Each broken rule is a [`PathProblem`].

use serde_json::{Map, Value};

use crate::formats::text::kind_of;
use crate::suggest::{Closeness, closest_within, did_you_mean};

/// schemaVersion `upgrade` writes.
pub const CURRENT_VERSION: &str = "1.6.0";

/// Keys of a single-prompt item.
pub(super) const ITEM_KEYS: &[&str] = &[
    "prompt",
    "expected_response",
    "context",
    "evaluators",
    "evaluators_mode",
    "extensions",
    "testId",
    "category",
    "notes",
    "name",
    "description",
    // written by a run
    "response",
    "citations",
    "scores",
    "diagnostics",
    "status",
    "error",
];

/// Keys of a conversation item.
pub(super) const THREAD_KEYS: &[&str] = &[
    "turns",
    "name",
    "description",
    "extensions",
    "testId",
    "category",
    "notes",
    // written by a run
    "conversation_id",
    "summary",
];

/// Keys of one turn.
pub(super) const TURN_KEYS: &[&str] = &[
    "prompt",
    "expected_response",
    "context",
    "evaluators",
    "evaluators_mode",
    "extensions",
    "response",
    "citations",
    "scores",
    "diagnostics",
    "status",
    "error",
];

/// Most turns in one conversation (the schema's `maxItems`).
pub const MAX_TURNS: usize = 20;

/// What kind of runevals document a JSON value is, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"schemaVersion", "items"}` (or `items` without a version: an error).
    Versioned,
    /// A bare array of `{prompt, expected_response}`.
    LegacyArray,
    /// `{"prompts": [...], "expected_responses": [...]}`.
    LegacyPair,
}

/// The runevals shape of `doc`, by its keys.
pub fn shape(doc: &Value) -> Option<Shape> {
    match doc {
        Value::Object(o) if o.contains_key("schemaVersion") || o.contains_key("items") => {
            Some(Shape::Versioned)
        }
        Value::Object(o) if o.contains_key("prompts") => Some(Shape::LegacyPair),
        Value::Array(items)
            if !items.is_empty()
                && items.iter().all(|i| {
                    i.as_object().is_some_and(|o| {
                        // deepeval conversations also have `turns`, of {role, content}.
                        let runevals_turns = o
                            .get("turns")
                            .and_then(Value::as_array)
                            .is_some_and(|t| t.iter().all(|turn| turn.get("prompt").is_some()));
                        (o.contains_key("prompt") || runevals_turns) && !o.contains_key("input")
                    })
                }) =>
        {
            Some(Shape::LegacyArray)
        }
        _ => None,
    }
}

/// A problem at a JSON path (`$.items[2].turns[0]`), with the key concerned.
#[derive(Debug, Clone, PartialEq)]
pub struct PathProblem {
    /// Which item (0-based), if the problem is inside one.
    pub item: Option<usize>,
    /// The key the problem is about, to find its line.
    pub key: Option<String>,
    /// The message, starting with the JSON path.
    pub message: String,
}

impl std::fmt::Display for PathProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub(super) fn problem(item: Option<usize>, key: Option<&str>, message: String) -> PathProblem {
    PathProblem {
        item,
        key: key.map(str::to_string),
        message,
    }
}

/// Fields seed 003 says need schemaVersion 1.2.0 or later: at the top
/// level, and in an item.
const ROOT_FIELDS_OF_1_2: &[&str] = &["default_evaluators"];
const ITEM_FIELDS_OF_1_2: &[&str] = &["turns", "evaluators", "evaluators_mode"];

/// Checks the top level of a versioned document (`schemaVersion`, misspelt
/// keys, `default_evaluators`, `items`, fields its version does not have)
/// and returns its items and default evaluators; `None` when it is not an
/// object.
pub(super) fn check_versioned(
    doc: &Value,
    problems: &mut Vec<PathProblem>,
) -> Option<(Vec<Value>, Map<String, Value>)> {
    let Some(root) = doc.as_object() else {
        problems.push(problem(None, None, "$: expected an object".into()));
        return None;
    };
    match root.get("schemaVersion") {
        None => problems.push(problem(
            None,
            None,
            "$: missing `schemaVersion` (e.g. \"1.6.0\"); `evals upgrade FILE` adds it".into(),
        )),
        Some(Value::String(v)) if is_v1_semver(v) => check_fields_of_1_2(root, v, problems),
        Some(v) => problems.push(problem(
            None,
            Some("schemaVersion"),
            format!(
                "$.schemaVersion: expected a 1.x.y version such as \"1.6.0\", found {}",
                show(v)
            ),
        )),
    }
    // The schema allows other top-level keys; one a letter or two
    // away from a known key is a typo that would silently change
    // the document (a misspelt `default_evaluators`).
    const ROOT_KEYS: &[&str] = &[
        "$schema",
        "schemaVersion",
        "items",
        "metadata",
        "default_evaluators",
        "description",
    ];
    for k in root.keys().filter(|k| !ROOT_KEYS.contains(&k.as_str())) {
        // (The known keys are 5 or more edits apart: at most one is within 2.)
        let near = closest_within(k, ROOT_KEYS.iter().copied(), Closeness::case_sensitive(2));
        if near.is_some() {
            problems.push(problem(
                None,
                Some(k),
                format!("$.{k}: unknown key{}", did_you_mean(near)),
            ));
        }
    }
    let defaults = match root.get("default_evaluators") {
        None => Map::new(),
        Some(Value::Object(d)) => {
            check_evaluators(d, "$.default_evaluators", None, problems);
            d.clone()
        }
        Some(other) => {
            problems.push(problem(
                None,
                Some("default_evaluators"),
                format!(
                    "$.default_evaluators: expected an object of evaluator names, found {}",
                    kind_of(other)
                ),
            ));
            Map::new()
        }
    };
    let items = match root.get("items") {
        Some(Value::Array(items)) if items.is_empty() => {
            problems.push(problem(
                None,
                Some("items"),
                "$.items: is empty; add at least one item".into(),
            ));
            Vec::new()
        }
        Some(Value::Array(items)) => items.clone(),
        Some(other) => {
            problems.push(problem(
                None,
                Some("items"),
                format!(
                    "$.items: expected an array of items, found {}",
                    kind_of(other)
                ),
            ));
            Vec::new()
        }
        None => {
            problems.push(problem(None, None, "$: missing `items`".into()));
            Vec::new()
        }
    };
    Some((items, defaults))
}

/// Seed 003: `default_evaluators`, and an item's `turns`, `evaluators` and
/// `evaluators_mode`, need schemaVersion 1.2.0 or later; each one a
/// document of version `version` (1.x.y) has before that is a problem.
fn check_fields_of_1_2(root: &Map<String, Value>, version: &str, problems: &mut Vec<PathProblem>) {
    let minor = version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u64>().ok());
    if minor.is_none_or(|m| m >= 2) {
        return;
    }
    let too_new = |path: String| {
        format!("{path}: needs schemaVersion 1.2.0 or later; this document is {version}")
    };
    for key in ROOT_FIELDS_OF_1_2.iter().filter(|k| root.contains_key(**k)) {
        problems.push(problem(None, Some(key), too_new(format!("$.{key}"))));
    }
    let items = root.get("items").and_then(Value::as_array);
    for (i, item) in items.into_iter().flatten().enumerate() {
        let Some(o) = item.as_object() else { continue };
        for key in ITEM_FIELDS_OF_1_2.iter().filter(|k| o.contains_key(**k)) {
            problems.push(problem(
                Some(i),
                Some(key),
                too_new(format!("$.items[{i}].{key}")),
            ));
        }
    }
}

fn is_v1_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts[0] == "1"
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

pub(super) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => kind_of(other).to_string(),
    }
}

pub(super) fn unknown_key(path: &str, key: &str, allowed: &[&str]) -> String {
    let hint = did_you_mean(closest_within(
        key,
        allowed.iter().copied(),
        Closeness::case_sensitive(3),
    ));
    format!(
        "{path}: unknown key `{key}`{hint}; allowed: {}",
        allowed.join(", ")
    )
}

/// The schema's types for the fields of an item or turn.
pub(super) fn check_types(
    o: &Map<String, Value>,
    path: &str,
    item: Option<usize>,
    problems: &mut Vec<PathProblem>,
) {
    for key in [
        "expected_response",
        "context",
        "response",
        "name",
        "description",
        "notes",
        "testId",
        "category",
    ] {
        if let Some(v) = o.get(key)
            && !v.is_string()
        {
            problems.push(problem(
                item,
                Some(key),
                format!("{path}.{key}: expected a string, found {}", kind_of(v)),
            ));
        }
    }
    if let Some(v) = o.get("status")
        && !matches!(v.as_str(), Some("pass" | "fail" | "partial" | "error"))
    {
        problems.push(problem(
            item,
            Some("status"),
            format!(
                "{path}.status: expected \"pass\", \"fail\", \"partial\" or \"error\", found {v}"
            ),
        ));
    }
    for key in ["extensions", "scores", "diagnostics", "error"] {
        if let Some(v) = o.get(key)
            && !v.is_object()
        {
            problems.push(problem(
                item,
                Some(key),
                format!("{path}.{key}: expected an object, found {}", kind_of(v)),
            ));
        }
    }
}

pub(super) fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// Built-in evaluators and their options: (name, options, required).
const BUILT_INS: &[(&str, &[&str], &[&str])] = &[
    ("Relevance", &["threshold"], &[]),
    ("Coherence", &["threshold"], &[]),
    ("Groundedness", &["threshold"], &[]),
    ("Similarity", &["threshold"], &[]),
    ("Citations", &["threshold", "citation_format"], &[]),
    ("ExactMatch", &["case_sensitive"], &[]),
    ("PartialMatch", &["threshold", "case_sensitive"], &[]),
    (
        "RetrievalQuery",
        &["capability", "selector", "includes", "excludes"],
        &["capability", "selector"],
    ),
    (
        "RetrievalResult",
        &[
            "capability",
            "max_rank",
            "min_expected_count",
            "expected_items",
        ],
        &["capability"],
    ),
];

pub(super) fn check_evaluators(
    e: &Map<String, Value>,
    path: &str,
    item: Option<usize>,
    problems: &mut Vec<PathProblem>,
) {
    for (name, options) in e {
        let epath = format!("{path}.{name}");
        let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            problems.push(problem(
                item,
                Some(name),
                format!("{path}: evaluator name `{name}` must start with a letter and hold only letters, digits and `_`"),
            ));
            continue;
        }
        let Some(opts) = options.as_object() else {
            problems.push(problem(
                item,
                Some(name),
                format!(
                    "{epath}: expected an options object ({{}} for defaults), found {}",
                    kind_of(options)
                ),
            ));
            continue;
        };
        let push = |problems: &mut Vec<PathProblem>, m: String| {
            problems.push(problem(item, Some(name), m))
        };
        match BUILT_INS.iter().find(|(n, ..)| n == name) {
            Some((_, allowed, required)) => {
                for k in opts.keys().filter(|k| !allowed.contains(&k.as_str())) {
                    let extra = if k == "threshold" {
                        " (it always scores against 1.0)"
                    } else {
                        ""
                    };
                    push(
                        problems,
                        format!("{}{extra}", unknown_key(&epath, k, allowed)),
                    );
                }
                for r in required
                    .iter()
                    .filter(|r| non_empty_str(opts.get(**r)).is_none())
                {
                    push(
                        problems,
                        format!("{epath}: needs `{r}` (a non-empty string)"),
                    );
                }
                if name == "RetrievalResult"
                    && !opts.contains_key("expected_items")
                    && !opts.contains_key("min_expected_count")
                {
                    push(
                        problems,
                        format!("{epath}: needs `expected_items` or `min_expected_count`"),
                    );
                }
                if let Some(t) = opts.get("threshold") {
                    let ok = match name.as_str() {
                        "PartialMatch" => t.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)),
                        // Seed 003: a count, 0 or more (0: reported, never failing).
                        "Citations" => t.as_u64().is_some(),
                        _ => t.as_f64().is_some_and(|x| (1.0..=5.0).contains(&x)),
                    };
                    if !ok {
                        let range = match name.as_str() {
                            "PartialMatch" => "a number from 0 to 1",
                            "Citations" => "a whole number of citations, 0 or more",
                            _ => "a rating from 1 to 5",
                        };
                        push(
                            problems,
                            format!("{epath}.threshold: expected {range}, found {t}"),
                        );
                    }
                }
                if let Some(c) = opts.get("case_sensitive").filter(|c| !c.is_boolean()) {
                    push(
                        problems,
                        format!("{epath}.case_sensitive: expected true or false, found {c}"),
                    );
                }
            }
            None => {
                // A letter or two from a built-in name (or only its case):
                // a typo, which would otherwise be run as a custom evaluator.
                let near = closest_within(
                    name,
                    BUILT_INS.iter().map(|(n, ..)| *n),
                    Closeness {
                        max_distance: 2,
                        ignore_ascii_case: true,
                    },
                );
                if near.is_some() {
                    push(
                        problems,
                        format!(
                            "{epath}: unknown evaluator{}; a custom evaluator's name must not be this close to a built-in one",
                            did_you_mean(near)
                        ),
                    );
                    continue;
                }
                for k in opts
                    .keys()
                    .filter(|k| !["threshold", "options"].contains(&k.as_str()))
                {
                    push(problems, unknown_key(&epath, k, &["threshold", "options"]));
                }
                if let Some(t) = opts.get("threshold").filter(|t| !t.is_number()) {
                    push(
                        problems,
                        format!("{epath}.threshold: expected a number, found {t}"),
                    );
                }
                if let Some(o) = opts.get("options").filter(|o| !o.is_object()) {
                    push(
                        problems,
                        format!("{epath}.options: expected an object, found {o}"),
                    );
                }
            }
        }
    }
}

pub(super) fn check_scores(
    scores: &Map<String, Value>,
    path: &str,
    item: Option<usize>,
    problems: &mut Vec<PathProblem>,
) {
    for (name, score) in scores {
        let Some(o) = score.as_object() else { continue };
        if o.get("result").and_then(Value::as_str) == Some("error") {
            if non_empty_str(o.get("error")).is_none()
                && !o.get("error").is_some_and(Value::is_object)
            {
                problems.push(problem(
                    item,
                    Some(name),
                    format!("{path}.{name}: `result: \"error\"` needs an `error`"),
                ));
            }
            if let Some(k) = o
                .keys()
                .find(|k| !["result", "error"].contains(&k.as_str()))
            {
                problems.push(problem(
                    item,
                    Some(name),
                    format!(
                        "{path}.{name}: an errored score has only `result` and `error`, found `{k}`"
                    ),
                ));
            }
        }
    }
}
