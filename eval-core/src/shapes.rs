//! Record shapes of other tools, rewritten into the common field names before
//! a record becomes a [`Sample`](crate::Sample). Every key a shape does not
//! map stays in [`Sample::extra`](crate::Sample::extra).
//!
//! | shape | recognised by | mapping |
//! |---|---|---|
//! | deepeval goldens (JSON, CSV) | `actual_output`, `retrieval_context`, `expected_outcome`, `scenario`, `additional_metadata` or `custom_column_key_values` | `retrieval_context` → context; `context` (deepeval's ideal context) → reference_contexts; `expected_outcome` → expected; `name` → id; user turns of `turns` (an array, or JSON text in a cell) → input; `additional_metadata` and `custom_column_key_values` → metadata; CSV list cells split on `\|` |
//! | golden dataset (seed 002) | `query` with `ground_truth`, or `source_docs` | `contexts` (reference passages) → reference_contexts; `source_docs` kept |
//! | OpenAI evals | `input` is a list of chat messages | user messages → input (one turn each), or the system message when there is none; `ideal` list (any answer accepted) → expected = the first, all kept as `accepted_answers` |
//! | promptflow multi-turn | `chat_history` | each `inputs.question` → a turn, each `inputs.ground_truth` → its expected answer, `outputs.context` → context |
//! | promptfoo tests | columns `__expected…`, `__metadata:…`, or `vars` | `__metadata:tags[]` → tags, `__metadata:x` → metadata.x; the only template variable → input; `assert` `equals` → expected; assertions kept |
//! | Azure AI RAG evaluator | `truth` | → expected |

use serde_json::{Map, Value};

/// Rewrites one record's fields (see the module docs). `csv` says the values
/// are CSV cells (lists there are `|`-joined text for deepeval).
pub(crate) fn normalize(mut fields: Vec<(String, Value)>, csv: bool) -> Vec<(String, Value)> {
    let has = |fields: &[(String, Value)], k: &str| fields.iter().any(|(key, _)| key.trim() == k);
    if [
        "actual_output",
        "retrieval_context",
        "expected_outcome",
        "scenario",
        "additional_metadata",
        "custom_column_key_values",
    ]
    .iter()
    .any(|k| has(&fields, k))
    {
        fields = deepeval(fields, csv);
    } else if (has(&fields, "query") && has(&fields, "ground_truth")) || has(&fields, "source_docs")
    {
        rename(&mut fields, "contexts", "reference_contexts");
    }
    if has(&fields, "chat_history") {
        fields = promptflow_chat(fields);
    }
    if let Some((_, Value::Array(items))) = fields.iter().find(|(k, _)| k == "input")
        && items.iter().any(|m| m.get("role").is_some())
    {
        fields = openai_messages(fields);
    }
    if fields.iter().any(|(k, _)| k.starts_with("__")) || has(&fields, "vars") {
        fields = promptfoo(fields);
    }
    rename(&mut fields, "truth", "expected");
    fields
}

/// Whether a CSV header without an input column still yields one through a
/// shape: deepeval conversations (`turns`), promptfoo tests with one template
/// variable.
pub(crate) fn csv_gives_input(names: &[&str]) -> bool {
    let vars = names.iter().filter(|n| !n.starts_with("__")).count();
    names.contains(&"turns") || (names.iter().any(|n| n.starts_with("__")) && vars == 1)
}

fn rename(fields: &mut [(String, Value)], from: &str, to: &str) {
    if fields.iter().any(|(k, _)| k == to) {
        return;
    }
    for (k, _) in fields.iter_mut() {
        if k.trim() == from {
            *k = to.to_string();
        }
    }
}

fn take(fields: &mut Vec<(String, Value)>, key: &str) -> Option<Value> {
    let i = fields.iter().position(|(k, _)| k.trim() == key)?;
    Some(fields.remove(i).1)
}

fn pipe_list(v: Value, csv: bool) -> Value {
    match v {
        Value::String(s) if csv => Value::from(
            s.split('|')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>(),
        ),
        other => other,
    }
}

/// JSON text in a cell (or a string field) parsed; anything else as is.
fn maybe_json(v: Value) -> Value {
    match &v {
        Value::String(s) if s.trim_start().starts_with(['[', '{']) => {
            serde_json::from_str(s).unwrap_or(v)
        }
        _ => v,
    }
}

fn deepeval(mut fields: Vec<(String, Value)>, csv: bool) -> Vec<(String, Value)> {
    let context = take(&mut fields, "context");
    let retrieval = take(&mut fields, "retrieval_context");
    if let Some(c) = context.filter(|c| !c.is_null()) {
        fields.push(("reference_contexts".into(), pipe_list(c, csv)));
    }
    if let Some(r) = retrieval.filter(|r| !r.is_null()) {
        fields.push(("context".into(), pipe_list(r, csv)));
    }
    rename(&mut fields, "expected_outcome", "expected");
    rename(&mut fields, "name", "id");
    let mut metadata = match take(&mut fields, "metadata").map(maybe_json) {
        Some(Value::Object(m)) => m,
        Some(other) => {
            fields.push(("metadata".into(), other));
            Map::new()
        }
        None => Map::new(),
    };
    for key in ["additional_metadata", "custom_column_key_values"] {
        match take(&mut fields, key).map(maybe_json) {
            Some(Value::Object(m)) => metadata.extend(m),
            Some(Value::Null) | None => {}
            Some(other) => fields.push((key.into(), other)),
        }
    }
    if !metadata.is_empty() {
        fields.push(("metadata".into(), Value::Object(metadata)));
    }
    if !fields.iter().any(|(k, _)| k == "input")
        && let Some(turns) = take(&mut fields, "turns")
    {
        let turns = maybe_json(turns);
        let users: Vec<Value> = match &turns {
            Value::Array(items) => items
                .iter()
                .filter(|t| t.get("role").and_then(Value::as_str) == Some("user"))
                .filter_map(|t| t.get("content").cloned())
                .collect(),
            _ => Vec::new(),
        };
        if !users.is_empty() {
            fields.push(("input".into(), Value::Array(users)));
        }
        fields.push(("turns".into(), turns));
    }
    fields
}

fn openai_messages(mut fields: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let Some(Value::Array(messages)) = take(&mut fields, "input") else {
        return fields;
    };
    // `content` is text, or a list of parts of which the text ones count.
    let content = |m: &Value| match m.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let text: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    };
    // With assistant messages (few-shot examples), only the last user
    // message is asked; the whole exchange stays in `messages`.
    let few_shot = messages
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    let mut users: Vec<Value> = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter_map(|m| content(m).map(Value::from))
        .collect();
    if few_shot && users.len() > 1 {
        users.drain(..users.len() - 1);
    }
    let input = match users.len() {
        0 => messages
            .iter()
            .filter(|m| {
                m.get("role").and_then(Value::as_str) == Some("system") && m.get("name").is_none()
            })
            .filter_map(content)
            .collect::<Vec<_>>()
            .join("\n"),
        1 => users[0].as_str().unwrap_or_default().to_string(),
        _ => String::new(),
    };
    if users.len() > 1 {
        fields.push(("input".into(), Value::Array(users)));
    } else if !input.is_empty() {
        fields.push(("input".into(), Value::from(input)));
    }
    fields.push(("messages".into(), Value::Array(messages)));
    if let Some(Value::Array(answers)) = fields
        .iter()
        .find(|(k, _)| k == "ideal")
        .map(|(_, v)| v.clone())
    {
        take(&mut fields, "ideal");
        if let Some(first) = answers.first() {
            fields.push(("ideal".into(), first.clone()));
        }
        fields.push(("accepted_answers".into(), Value::Array(answers)));
    }
    fields
}

fn promptflow_chat(mut fields: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let Some(Value::Array(history)) = fields
        .iter()
        .find(|(k, _)| k == "chat_history")
        .map(|(_, v)| v.clone())
    else {
        return fields;
    };
    // A record with its own question: the history's questions come first,
    // then it (one conversation); its ground truth answers the last turn.
    let own = fields
        .iter()
        .position(|(k, _)| crate::fields::field_for(k) == Some(crate::fields::Field::Input));
    if let Some(i) = own {
        let (key, question) = fields.remove(i);
        let mut turns: Vec<Value> = history
            .iter()
            .filter_map(|h| h.get("inputs").and_then(|x| x.get("question")).cloned())
            .collect();
        match question {
            Value::String(q) => turns.push(Value::from(q)),
            other => {
                fields.push((key, other));
                return fields;
            }
        }
        fields.push(("input".into(), Value::Array(turns)));
        return fields;
    }
    let at = |h: &Value, a: &str, b: &str| {
        h.get(a)
            .and_then(|x| x.get(b))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let questions: Vec<String> = history
        .iter()
        .filter_map(|h| at(h, "inputs", "question"))
        .collect();
    let truths: Vec<String> = history
        .iter()
        .filter_map(|h| at(h, "inputs", "ground_truth"))
        .collect();
    let contexts: Vec<String> = history
        .iter()
        .filter_map(|h| at(h, "outputs", "context"))
        .collect();
    if questions.len() == history.len() && !questions.is_empty() {
        fields.push(("input".into(), Value::from(questions.clone())));
        if truths.len() == questions.len() {
            fields.push(("expected".into(), Value::from(truths)));
        }
        if !contexts.is_empty() && !fields.iter().any(|(k, _)| k == "context") {
            fields.push(("context".into(), Value::from(contexts)));
        }
    }
    fields
}

fn promptfoo(mut fields: Vec<(String, Value)>) -> Vec<(String, Value)> {
    // `vars: {...}` (YAML/JSONL tests) become columns, as in CSV tests.
    if let Some(Value::Object(vars)) = fields
        .iter()
        .find(|(k, _)| k == "vars")
        .map(|(_, v)| v.clone())
    {
        take(&mut fields, "vars");
        for (k, v) in vars {
            fields.push((k, v));
        }
        if let Some(Value::Array(asserts)) = fields
            .iter()
            .find(|(k, _)| k == "assert")
            .map(|(_, v)| v.clone())
            && let Some(v) = asserts
                .iter()
                .find(|a| a.get("type").and_then(Value::as_str) == Some("equals"))
                .and_then(|a| a.get("value"))
            && !fields.iter().any(|(k, _)| k == "expected")
        {
            fields.push(("expected".into(), v.clone()));
        }
    }
    let mut metadata = Map::new();
    let mut rest = Vec::new();
    let mut expected: Option<Value> = None;
    for (key, value) in fields {
        // `__expected` with `equals:` or no assertion type is the answer.
        if key.starts_with("__expected")
            && expected.is_none()
            && let Some(text) = value.as_str()
        {
            let t = text.trim();
            let plain = !t.contains(':') && !t.starts_with("is-") && !t.is_empty();
            if let Some(v) = t.strip_prefix("equals:") {
                expected = Some(Value::from(v.trim()));
            } else if plain {
                expected = Some(Value::from(t));
            }
        }
        if let Some(name) = key.strip_prefix("__metadata:") {
            if name == "tags[]" || name == "tags" {
                let text = value.as_str().unwrap_or_default().to_string();
                rest.push(("tags".to_string(), Value::from(split_unescaped(&text))));
            } else {
                metadata.insert(name.trim_end_matches("[]").to_string(), value);
            }
        } else {
            rest.push((key, value));
        }
    }
    if let Some(e) = expected
        && !rest
            .iter()
            .any(|(k, _)| crate::fields::field_for(k) == Some(crate::fields::Field::Expected))
    {
        rest.push(("expected".into(), e));
    }
    if !metadata.is_empty() && !rest.iter().any(|(k, _)| k == "metadata") {
        rest.push(("metadata".into(), Value::Object(metadata)));
    }
    // The prompt is the only template variable, unless a column is named as one.
    let vars: Vec<usize> = rest
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| {
            !k.starts_with("__")
                && ![
                    "tags",
                    "metadata",
                    "assert",
                    "expected",
                    "options",
                    "description",
                ]
                .contains(&k.as_str())
        })
        .map(|(i, _)| i)
        .collect();
    let named = rest
        .iter()
        .any(|(k, _)| crate::fields::field_for(k) == Some(crate::fields::Field::Input));
    if !named && vars.len() == 1 {
        let key = rest[vars[0]].0.clone();
        rest[vars[0]].0 = "input".into();
        rest.push(("prompt_var".into(), Value::from(key)));
    }
    rest
}

/// `a, b\, c` → ["a", "b, c"] (promptfoo's `tags[]` cells).
fn split_unescaped(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                cur.push(',');
                chars.next();
            }
            ',' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}
