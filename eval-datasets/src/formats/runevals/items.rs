//! Runevals items → sample fields: prompts and conversations, expected
//! responses, contexts, and the evaluators each item is scored with.

use serde_json::{Map, Value};

use super::schema::{
    ITEM_KEYS, MAX_TURNS, PathProblem, Shape, THREAD_KEYS, TURN_KEYS, check_evaluators,
    check_scores, check_types, check_versioned, non_empty_str, problem, show, unknown_key,
};
use crate::formats::text::kind_of;

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
        Shape::Versioned => match check_versioned(doc, &mut problems) {
            Some(found) => found,
            None => return Err(problems),
        },
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

/// An item of the file as a record's fields: a prompt or a conversation,
/// with what the item keeps besides. `None` after pushing its problems.
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
    let mut fields: Vec<(String, Value)> = match (o.get("prompt"), o.get("turns")) {
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
        (Some(_), None) => prompt_fields(i, &path, o, defaults, problems)?,
        (None, Some(turns)) => thread_fields(i, &path, o, turns, defaults, problems)?,
    };
    kept_fields(o, &mut fields);
    if let Some(Value::Object(scores)) = o.get("scores") {
        check_scores(scores, &format!("{path}.scores"), Some(i), problems);
    }
    (problems.len() == before).then_some(fields)
}

/// An item of one prompt (at `path`): its input, expected answer, context
/// and evaluators.
fn prompt_fields(
    i: usize,
    path: &str,
    o: &Map<String, Value>,
    defaults: &Map<String, Value>,
    problems: &mut Vec<PathProblem>,
) -> Option<Vec<(String, Value)>> {
    let mut fields: Vec<(String, Value)> = Vec::new();
    for k in o.keys().filter(|k| !ITEM_KEYS.contains(&k.as_str())) {
        problems.push(problem(Some(i), Some(k), unknown_key(path, k, ITEM_KEYS)));
    }
    check_types(o, path, Some(i), problems);
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
    let evaluators = resolve(o, defaults, path, Some(i), problems);
    if !evaluators.is_empty() {
        fields.push(("evaluators".into(), Value::Object(evaluators)));
    }
    Some(fields)
}

/// A conversation's turns, read one by one.
#[derive(Default)]
struct Turns {
    prompts: Vec<Value>,
    expected: Vec<Option<Value>>,
    contexts: Vec<Value>,
    per_turn: Vec<Value>,
}

/// The turns of item `i` (at `path`), each checked.
fn read_turns(
    i: usize,
    path: &str,
    turns: &[Value],
    defaults: &Map<String, Value>,
    problems: &mut Vec<PathProblem>,
) -> Turns {
    let mut read = Turns::default();
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
            Some(p) => read.prompts.push(Value::from(p)),
            None => problems.push(problem(
                Some(i),
                Some("turns"),
                format!("{tpath}: needs a non-empty `prompt`"),
            )),
        }
        read.expected.push(to.get("expected_response").cloned());
        if let Some(Value::String(c)) = to.get("context") {
            read.contexts.push(Value::from(c.clone()));
        }
        read.per_turn.push(Value::Object(resolve(
            to,
            defaults,
            &tpath,
            Some(i),
            problems,
        )));
    }
    read
}

/// An item of a conversation (at `path`): its turns as the input, their
/// expected answers, contexts and evaluators, and the turns as written.
fn thread_fields(
    i: usize,
    path: &str,
    o: &Map<String, Value>,
    turns: &Value,
    defaults: &Map<String, Value>,
    problems: &mut Vec<PathProblem>,
) -> Option<Vec<(String, Value)>> {
    let mut fields: Vec<(String, Value)> = Vec::new();
    for k in o.keys().filter(|k| !THREAD_KEYS.contains(&k.as_str())) {
        problems.push(problem(Some(i), Some(k), unknown_key(path, k, THREAD_KEYS)));
    }
    check_types(o, path, Some(i), problems);
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
    let Turns {
        prompts,
        expected,
        contexts,
        per_turn,
    } = read_turns(i, path, turns, defaults, problems);
    fields.push(("input".into(), Value::Array(prompts)));
    // One expected answer per turn when every turn has one; else the
    // last turn's, when it has one.
    if expected.iter().all(Option::is_some) {
        fields.push((
            "expected".into(),
            Value::Array(expected.into_iter().flatten().collect()),
        ));
    } else {
        if let Some(Some(last)) = expected.last() {
            fields.push(("expected".into(), last.clone()));
        }
        // An earlier turn has an answer: each keeps its own (seed
        // 003); only the last turn's is the sample's `expected`.
        let earlier = &expected[..expected.len().saturating_sub(1)];
        if earlier.iter().any(Option::is_some) {
            fields.push((
                "turn_expected".into(),
                Value::Array(
                    expected
                        .into_iter()
                        .map(|e| e.unwrap_or(Value::Null))
                        .collect(),
                ),
            ));
        }
    }
    if !contexts.is_empty() {
        fields.push(("context".into(), Value::Array(contexts)));
    }
    // Each turn's evaluators score that turn (seed 003: in the
    // "Expense policy flow", turn 1 inherits the defaults and turn 2,
    // `replace`, runs only ExactMatch).
    if per_turn
        .iter()
        .any(|e| e.as_object().is_some_and(|m| !m.is_empty()))
    {
        fields.push(("turn_evaluators".into(), Value::Array(per_turn)));
    }
    // The turns as written, unless `evals convert` wrote them from
    // the sample (their data is then all in the sample already).
    let ours = o.get("extensions").and_then(|e| e.get("evals")).is_some();
    if !ours {
        fields.push(("turns".into(), Value::Array(turns.clone())));
    }
    Some(fields)
}

/// What an item keeps besides its prompt or turns: `evals convert`'s
/// fields under `extensions.evals`, its id, category, other extensions and
/// the fields of a run's item.
fn kept_fields(o: &Map<String, Value>, fields: &mut Vec<(String, Value)>) {
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
