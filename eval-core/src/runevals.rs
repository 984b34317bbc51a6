//! Microsoft 365 Agents Toolkit `runevals` documents (seed 003), checked
//! against the rules of its JSON Schema (`schema/v1/eval-document.schema.json`).
//!
//! Shapes read:
//! - versioned: `{"schemaVersion": "1.x.y", "items": [...], "default_evaluators": {...}}`;
//! - legacy: a bare array of `{prompt, expected_response}`, or
//!   `{"prompts": [...], "expected_responses": [...]}` paired by position
//!   (`evals upgrade` rewrites both as versioned documents).
//!
//! An item is a single prompt (`prompt`, `expected_response`, `context`,
//! `evaluators`, `evaluators_mode`) or a named conversation (`turns`, each
//! with the same fields), never both. `testId` (the sample id), `category`
//! (a tag) and `notes` are accepted as the seed documents them, although the
//! schema does not list them. Fields a finished run writes (`response`,
//! `scores`, `citations`, `status`, ...) are accepted and kept in
//! `Sample::extra`. Any other key is an error, with a suggestion.
//!
//! Evaluators: an item's `evaluators` extend `default_evaluators`
//! (`evaluators_mode: "extend"`, the default) or replace them (`"replace"`).
//! In a conversation each turn resolves its own set; the conversation is
//! scored with the union of its turns' sets.

use serde_json::{Map, Value};

use crate::fields::kind_of;
use crate::metric::{MetricSpec, Op};
use crate::suggest::{Closeness, closest_within, did_you_mean};

/// schemaVersion `upgrade` writes.
pub const CURRENT_VERSION: &str = "1.6.0";

/// Keys of a single-prompt item.
const ITEM_KEYS: &[&str] = &[
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
const THREAD_KEYS: &[&str] = &[
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
const TURN_KEYS: &[&str] = &[
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

fn problem(item: Option<usize>, key: Option<&str>, message: String) -> PathProblem {
    PathProblem {
        item,
        key: key.map(str::to_string),
        message,
    }
}

/// One item turned into sample fields (before the common field mapping).
pub struct ItemFields {
    /// Index of the item in `items`.
    pub item: usize,
    /// The fields, in the common names.
    pub fields: Vec<(String, Value)>,
}

/// Checks a document of `shape` and turns its items into sample fields.
/// Every problem is returned, not only the first.
pub fn items(doc: &Value, shape: Shape) -> Result<Vec<ItemFields>, Vec<PathProblem>> {
    let mut problems = Vec::new();
    let (items, defaults): (Vec<Value>, Map<String, Value>) = match shape {
        Shape::Versioned => {
            let Some(root) = doc.as_object() else {
                return Err(vec![problem(None, None, "$: expected an object".into())]);
            };
            match root.get("schemaVersion") {
                None => problems.push(problem(
                    None,
                    None,
                    "$: missing `schemaVersion` (e.g. \"1.6.0\"); `evals upgrade FILE` adds it"
                        .into(),
                )),
                Some(Value::String(v)) if is_v1_semver(v) => {}
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
                let near =
                    closest_within(k, ROOT_KEYS.iter().copied(), Closeness::case_sensitive(2));
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
                    check_evaluators(d, "$.default_evaluators", None, &mut problems);
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
            (items, defaults)
        }
        Shape::LegacyArray => (doc.as_array().cloned().unwrap_or_default(), Map::new()),
        Shape::LegacyPair => match legacy_pair_items(doc) {
            Ok(items) => (items, Map::new()),
            Err(p) => return Err(vec![p]),
        },
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(fields) = item_fields(i, item, &defaults, &mut problems) {
            out.push(ItemFields { item: i, fields });
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// `{"prompts", "expected_responses"}` as items.
pub fn legacy_pair_items(doc: &Value) -> Result<Vec<Value>, PathProblem> {
    let o = doc
        .as_object()
        .ok_or_else(|| problem(None, None, "$: expected an object".into()))?;
    let strings = |key: &str| -> Result<Vec<String>, PathProblem> {
        match o.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        problem(
                            None,
                            Some(key),
                            format!("$.{key}[{i}]: expected a string, found {}", kind_of(v)),
                        )
                    })
                })
                .collect(),
            Some(other) => Err(problem(
                None,
                Some(key),
                format!(
                    "$.{key}: expected an array of strings, found {}",
                    kind_of(other)
                ),
            )),
        }
    };
    let prompts = strings("prompts")?;
    let expected = strings("expected_responses")?;
    if !expected.is_empty() && expected.len() != prompts.len() {
        return Err(problem(
            None,
            Some("expected_responses"),
            format!(
                "$.expected_responses: {} answers for {} prompts; they pair by position, so give one per prompt",
                expected.len(),
                prompts.len()
            ),
        ));
    }
    if let Some(k) = o
        .keys()
        .find(|k| !["prompts", "expected_responses"].contains(&k.as_str()))
    {
        return Err(problem(
            None,
            Some(k),
            format!("$.{k}: unknown key in a {{prompts, expected_responses}} document"),
        ));
    }
    Ok(prompts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let mut item = Map::new();
            item.insert("prompt".into(), Value::from(p));
            if let Some(e) = expected.get(i) {
                item.insert("expected_response".into(), Value::from(e.clone()));
            }
            Value::Object(item)
        })
        .collect())
}

fn is_v1_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts[0] == "1"
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => kind_of(other).to_string(),
    }
}

fn unknown_key(path: &str, key: &str, allowed: &[&str]) -> String {
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
fn check_types(
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

fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

fn item_fields(
    i: usize,
    item: &Value,
    defaults: &Map<String, Value>,
    problems: &mut Vec<PathProblem>,
) -> Option<Vec<(String, Value)>> {
    let path = format!("$.items[{i}]");
    let before = problems.len();
    let Some(o) = item.as_object() else {
        problems.push(problem(
            Some(i),
            None,
            format!("{path}: expected an object, found {}", kind_of(item)),
        ));
        return None;
    };
    let mut fields: Vec<(String, Value)> = Vec::new();
    match (o.get("prompt"), o.get("turns")) {
        (Some(_), Some(_)) => {
            problems.push(problem(
                Some(i),
                Some("turns"),
                format!("{path}: has both `prompt` and `turns`; an item is one prompt or one conversation"),
            ));
            return None;
        }
        (None, None) => {
            problems.push(problem(
                Some(i),
                None,
                format!("{path}: needs `prompt` (one prompt) or `turns` (a conversation)"),
            ));
            return None;
        }
        (Some(_), None) => {
            for k in o.keys().filter(|k| !ITEM_KEYS.contains(&k.as_str())) {
                problems.push(problem(Some(i), Some(k), unknown_key(&path, k, ITEM_KEYS)));
            }
            check_types(o, &path, Some(i), problems);
            let Some(prompt) = non_empty_str(o.get("prompt")) else {
                problems.push(problem(
                    Some(i),
                    Some("prompt"),
                    format!("{path}.prompt: expected a non-empty string"),
                ));
                return None;
            };
            fields.push(("input".into(), Value::from(prompt)));
            if let Some(e) = o.get("expected_response") {
                fields.push(("expected".into(), e.clone()));
            }
            if let Some(c) = o.get("context") {
                fields.push(("context".into(), c.clone()));
            }
            let evaluators = resolve(o, defaults, &path, Some(i), problems);
            if !evaluators.is_empty() {
                fields.push(("evaluators".into(), Value::Object(evaluators)));
            }
        }
        (None, Some(turns)) => {
            for k in o.keys().filter(|k| !THREAD_KEYS.contains(&k.as_str())) {
                problems.push(problem(
                    Some(i),
                    Some(k),
                    unknown_key(&path, k, THREAD_KEYS),
                ));
            }
            check_types(o, &path, Some(i), problems);
            let Some(turns) = turns.as_array() else {
                problems.push(problem(
                    Some(i),
                    Some("turns"),
                    format!(
                        "{path}.turns: expected an array of turns, found {}",
                        kind_of(turns)
                    ),
                ));
                return None;
            };
            if turns.is_empty() || turns.len() > MAX_TURNS {
                problems.push(problem(
                    Some(i),
                    Some("turns"),
                    format!(
                        "{path}.turns: has {} turns; a conversation has 1 to {MAX_TURNS}",
                        turns.len()
                    ),
                ));
                return None;
            }
            let mut prompts = Vec::new();
            let mut expected = Vec::new();
            let mut contexts = Vec::new();
            let mut union = Map::new();
            for (t, turn) in turns.iter().enumerate() {
                let tpath = format!("{path}.turns[{t}]");
                let Some(to) = turn.as_object() else {
                    problems.push(problem(
                        Some(i),
                        Some("turns"),
                        format!("{tpath}: expected an object, found {}", kind_of(turn)),
                    ));
                    continue;
                };
                for k in to.keys().filter(|k| !TURN_KEYS.contains(&k.as_str())) {
                    problems.push(problem(Some(i), Some(k), unknown_key(&tpath, k, TURN_KEYS)));
                }
                check_types(to, &tpath, Some(i), problems);
                match non_empty_str(to.get("prompt")) {
                    Some(p) => prompts.push(Value::from(p)),
                    None => problems.push(problem(
                        Some(i),
                        Some("turns"),
                        format!("{tpath}: needs a non-empty `prompt`"),
                    )),
                }
                expected.push(to.get("expected_response").cloned());
                if let Some(Value::String(c)) = to.get("context") {
                    contexts.push(Value::from(c.clone()));
                }
                for (name, options) in resolve(to, defaults, &tpath, Some(i), problems) {
                    union.entry(name).or_insert(options);
                }
            }
            fields.push(("input".into(), Value::Array(prompts)));
            // One expected answer per turn when every turn has one; else the
            // last turn's, when it has one.
            if expected.iter().all(Option::is_some) {
                fields.push((
                    "expected".into(),
                    Value::Array(expected.into_iter().flatten().collect()),
                ));
            } else if let Some(Some(last)) = expected.last() {
                fields.push(("expected".into(), last.clone()));
            }
            if !contexts.is_empty() {
                fields.push(("context".into(), Value::Array(contexts)));
            }
            if !union.is_empty() {
                fields.push(("evaluators".into(), Value::Object(union)));
            }
            // The turns as written, unless `evals convert` wrote them from
            // the sample (their data is then all in the sample already).
            let ours = o.get("extensions").and_then(|e| e.get("evals")).is_some();
            if !ours {
                fields.push(("turns".into(), Value::Array(turns.clone())));
            }
        }
    }
    // What `evals convert` keeps of other formats, under extensions.evals.
    if let Some(Value::Object(ours)) = o.get("extensions").and_then(|e| e.get("evals")) {
        for (k, v) in ours {
            if !fields.iter().any(|(have, _)| have == k) {
                fields.push((k.clone(), v.clone()));
            }
        }
    }
    if let Some(id) = o.get("testId") {
        fields.push(("id".into(), id.clone()));
    }
    if let Some(c) = o.get("category")
        && !fields.iter().any(|(k, _)| k == "tags")
    {
        fields.push(("tags".into(), c.clone()));
    }
    if let Some(Value::Object(ext)) = o.get("extensions") {
        let mut rest = ext.clone();
        rest.remove("evals");
        if !rest.is_empty() {
            fields.push(("extensions".into(), Value::Object(rest)));
        }
    }
    for k in [
        "notes",
        "name",
        "description",
        "response",
        "citations",
        "scores",
        "diagnostics",
        "status",
        "error",
        "conversation_id",
        "summary",
    ] {
        if let Some(v) = o.get(k) {
            fields.push((k.into(), v.clone()));
        }
    }
    if let Some(Value::Object(scores)) = o.get("scores") {
        check_scores(scores, &format!("{path}.scores"), Some(i), problems);
    }
    (problems.len() == before).then_some(fields)
}

/// The evaluators an item (or turn) is scored with, after `evaluators_mode`.
fn resolve(
    o: &Map<String, Value>,
    defaults: &Map<String, Value>,
    path: &str,
    item: Option<usize>,
    problems: &mut Vec<PathProblem>,
) -> Map<String, Value> {
    let own = match o.get("evaluators") {
        None => Map::new(),
        Some(Value::Object(e)) => {
            check_evaluators(e, &format!("{path}.evaluators"), item, problems);
            e.clone()
        }
        Some(other) => {
            problems.push(problem(
                item,
                Some("evaluators"),
                format!(
                    "{path}.evaluators: expected an object of evaluator names, found {}",
                    kind_of(other)
                ),
            ));
            Map::new()
        }
    };
    let replace = match o.get("evaluators_mode") {
        None => false,
        Some(Value::String(m)) if m == "extend" => false,
        Some(Value::String(m)) if m == "replace" => true,
        Some(other) => {
            problems.push(problem(
                item,
                Some("evaluators_mode"),
                format!(
                    "{path}.evaluators_mode: expected \"extend\" or \"replace\", found {}",
                    show(other)
                ),
            ));
            false
        }
    };
    if replace {
        return own;
    }
    let mut all = defaults.clone();
    for (k, v) in own {
        all.insert(k, v);
    }
    all
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

fn check_evaluators(
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
                        "Citations" => t.as_u64().is_some_and(|x| x >= 1),
                        _ => t.as_f64().is_some_and(|x| (1.0..=5.0).contains(&x)),
                    };
                    if !ok {
                        let range = match name.as_str() {
                            "PartialMatch" => "a number from 0 to 1",
                            "Citations" => "a whole number of citations, at least 1",
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

fn check_scores(
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

/// The metrics a sample's runevals `evaluators` stand for: Relevance,
/// Coherence, Groundedness and Similarity as 1–5 ratings (threshold `t`,
/// default 3, becomes `(t - 1) / 4` on the normalised score), Citations as a
/// count (default 1), ExactMatch, PartialMatch (default 0.5).
/// RetrievalQuery/RetrievalResult (Microsoft 365 retrieval diagnostics) and
/// custom evaluators have no equivalent here: an error names them.
pub fn specs(evaluators: &Map<String, Value>) -> Result<Vec<MetricSpec>, String> {
    let mut specs = Vec::new();
    let mut unsupported = Vec::new();
    for (name, options) in evaluators {
        let threshold = options.get("threshold").and_then(Value::as_f64);
        let case_sensitive = options
            .get("case_sensitive")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let spec = match name.as_str() {
            "Relevance" | "Coherence" | "Groundedness" | "Similarity" => MetricSpec::new(
                &name.to_ascii_lowercase(),
                &[],
                Some((Op::AtLeast, (threshold.unwrap_or(3.0) - 1.0) / 4.0)),
            ),
            "Citations" => MetricSpec::new(
                "citations",
                &[],
                Some((Op::AtLeast, threshold.unwrap_or(1.0))),
            ),
            "ExactMatch" => MetricSpec::new(
                "exact_match",
                &[(
                    "case_sensitive",
                    crate::metric::OptionValue::Bool(case_sensitive),
                )],
                None,
            ),
            "PartialMatch" if case_sensitive => {
                unsupported.push("PartialMatch with case_sensitive: true (token F1 compares normalised, lower-cased tokens)".to_string());
                continue;
            }
            "PartialMatch" => MetricSpec::new(
                "partial_match",
                &[],
                Some((Op::AtLeast, threshold.unwrap_or(0.5))),
            ),
            "RetrievalQuery" | "RetrievalResult" => {
                unsupported.push(format!(
                    "{name} (it reads Microsoft 365 Copilot retrieval diagnostics)"
                ));
                continue;
            }
            other => {
                unsupported.push(format!(
                    "{other} (a custom evaluator: its code lives in the runevals project)"
                ));
                continue;
            }
        };
        specs.push(spec.map_err(|e| format!("evaluator `{name}`: {e}"))?);
    }
    if !unsupported.is_empty() {
        return Err(format!(
            "unsupported runevals evaluator(s): {}",
            unsupported.join("; ")
        ));
    }
    Ok(specs)
}

/// A legacy document (bare array, or `{prompts, expected_responses}`, or a
/// versioned object without `schemaVersion`) as a versioned one.
pub fn upgrade(doc: &Value) -> Result<Value, String> {
    let items = match shape(doc) {
        Some(Shape::LegacyArray) => doc.as_array().cloned().unwrap_or_default(),
        Some(Shape::LegacyPair) => legacy_pair_items(doc).map_err(|p| p.message)?,
        Some(Shape::Versioned) => {
            let o = doc.as_object().cloned().unwrap_or_default();
            if o.contains_key("schemaVersion") {
                return Err("already a versioned runevals document (it has `schemaVersion`)".into());
            }
            let mut out = Map::new();
            out.insert("schemaVersion".into(), Value::from(CURRENT_VERSION));
            out.extend(o);
            return Ok(Value::Object(out));
        }
        None => return Err("not a runevals document: expected a JSON array of {\"prompt\", \"expected_response\"} or {\"prompts\", \"expected_responses\"}".into()),
    };
    let mut out = Map::new();
    out.insert("schemaVersion".into(), Value::from(CURRENT_VERSION));
    out.insert("items".into(), Value::Array(items));
    Ok(Value::Object(out))
}
