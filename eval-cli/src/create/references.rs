//! Step 4 of `evals create`: each pair's context references, asked on a
//! terminal for answered pairs still without them, and what the
//! documents' organisation records.

use eval_datasets::terminal::escaped;
use serde_json::Value;

use super::form::split;
use super::{Ask, Pair};

/// On a terminal, for each answered pair whose sources or passages are
/// still empty (step 5's edge-case examples aside): the documents that contain the answer, the passages that
/// support it, related passages (added after them). Input that ends
/// stops the questions; `save` keeps the answers so far (the draft).
pub(super) fn ask_references(pairs: &mut [Pair], ask: &Ask, save: &mut dyn FnMut(&[Pair])) {
    if !ask.terminal {
        return;
    }
    // Step 5's edge-case examples come after this step and expect a
    // behaviour, not a passage: not asked.
    let missing = |p: &Pair| {
        p.ground_truth.is_some()
            && (p.contexts.is_empty() || p.source_docs.is_empty())
            && p.metadata.get("edge_case").is_none_or(Value::is_null)
    };
    if !pairs.iter().any(missing) {
        return;
    }
    errln!(
        "\n2. For each QA pair, specify (lists: documents comma-separated, passages separated with ` | `):"
    );
    for i in 0..pairs.len() {
        if !missing(&pairs[i]) {
            continue;
        }
        if i > 0 {
            save(pairs);
        }
        let p = &mut pairs[i];
        errln!("\nQuery: \"{}\"", escaped(&p.query));
        if p.source_docs.is_empty() {
            let Some(docs) = ask.line("  Which document(s) contain the answer: ") else {
                return;
            };
            p.source_docs = split(&docs, ',');
        }
        if p.contexts.is_empty() {
            let Some(exact) = ask.line("  The exact passage(s) that support the answer: ") else {
                return;
            };
            let Some(related) = ask.line("  Any related passages (Enter for none): ") else {
                return;
            };
            p.contexts = split(&exact, '|');
            p.contexts.extend(split(&related, '|'));
        }
    }
}

/// `collections`: each pair's `collection`, the top folder of its first
/// source document in a folder; `hierarchical`: its `parent_docs`, the
/// folders of its source documents. Nothing when no source is in a folder.
pub(super) fn organise(pairs: &mut [Pair], organisation: &str) {
    for p in pairs.iter_mut() {
        match organisation {
            "collections" => {
                if let Some(c) = p
                    .source_docs
                    .iter()
                    .find_map(|d| d.split_once('/').map(|(top, _)| top.to_string()))
                {
                    p.metadata.insert("collection".into(), Value::from(c));
                }
            }
            "hierarchical" => {
                let mut parents: Vec<String> = Vec::new();
                for d in &p.source_docs {
                    if let Some((parent, _)) = d.rsplit_once('/')
                        && !parents.iter().any(|x| x == parent)
                    {
                        parents.push(parent.to_string());
                    }
                }
                if !parents.is_empty() {
                    p.metadata
                        .insert("parent_docs".into(), Value::from(parents));
                }
            }
            _ => {}
        }
    }
}
