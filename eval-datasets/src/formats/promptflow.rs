//! promptflow (Azure AI) records.
//!
//! * multi-turn chats, recognised by `chat_history`: each
//!   `inputs.question` → a turn, each `inputs.ground_truth` → its expected
//!   answer, `outputs.context` → context; a record with its own question
//!   asks it after the history's questions.
//! * Azure AI RAG evaluator data: `truth` → expected (applied after every
//!   other record schema).

use serde_json::Value;

use super::record::{Field, field_for, has_key, rename_key};
use super::{Adapter, Input, Records};

/// promptflow's multi-turn `chat_history` records.
pub(crate) struct PromptflowChat;

impl Adapter for PromptflowChat {
    fn recognises(&self, input: &Input<'_>) -> bool {
        matches!(input, Input::Record(r) if has_key(&r.fields, "chat_history"))
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            r.fields = promptflow_chat(std::mem::take(&mut r.fields));
        }
    }
}

/// Azure AI evaluator data, whose expected answer is `truth`.
pub(crate) struct AzureTruth;

impl Adapter for AzureTruth {
    fn recognises(&self, input: &Input<'_>) -> bool {
        matches!(input, Input::Record(r) if has_key(&r.fields, "truth"))
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            rename_key(&mut r.fields, "truth", "expected");
        }
    }
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
        .position(|(k, _)| field_for(k) == Some(Field::Input));
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
