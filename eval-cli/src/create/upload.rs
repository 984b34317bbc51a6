//! Step 7 of `evals create`: the upload to LangSmith, asked and configured
//! (name, description, tags) on a terminal or by flags, refused while
//! validation errors remain (unless `--force-upload`), the dataset's URL
//! printed.

use eval_datasets::terminal::escaped;
use eval_runtime::__cli::services::{LANGSMITH_ENDPOINT, LangSmith};
use eval_runtime::Config;
use serde_json::{Map, Value, json};

use super::Args;
use super::ask::Ask;
use crate::Failure;

/// What step 7 did: the summary's `LangSmith:` line and the exit code.
pub(super) struct Outcome {
    pub line: String,
    pub code: u8,
}

fn outcome(line: impl Into<String>, code: u8) -> Outcome {
    Outcome {
        line: line.into(),
        code,
    }
}

/// Tags as typed: comma-separated, trimmed, each once.
pub(super) fn parse_tags(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// Step 7: `records` (the golden records written) uploaded as dataset
/// `default_name` unless told otherwise; `errors` the validation error
/// codes that remain.
pub(super) fn step7(
    args: &Args,
    ask: &Ask,
    config: &Config,
    default_name: &str,
    domain: &str,
    records: &[Map<String, Value>],
    errors: &[&str],
) -> Result<Outcome, Failure> {
    let Some(key) = config.langsmith_api_key.clone() else {
        return Ok(outcome("not uploaded (LANGSMITH_API_KEY is not set)", 0));
    };
    if args.no_upload {
        return Ok(outcome("not uploaded (--no-upload)", 0));
    }
    errln!("\nELICIT: LangSmith Upload\n");
    if !errors.is_empty() && !args.force_upload {
        errln!(
            "error: not uploaded: validation errors remain ({}); fix them (see `evals lint`) and run again, or give --force-upload",
            errors.join(", ")
        );
        return Ok(outcome("not uploaded (validation errors remain)", 1));
    }
    if !args.upload && ask.terminal && !ask.confirm("1. Upload dataset to LangSmith? (yes/no): ")? {
        return Ok(outcome("not uploaded (declined)", 0));
    }
    if ask.terminal {
        errln!("\n2. Dataset configuration:");
    }
    let name = match &args.name {
        Some(n) => n.clone(),
        None if ask.terminal => {
            ask.choose(
                &format!("   Name [{default_name}]: "),
                |a| Ok(a.to_string()),
            )?
        }
        None => String::new(),
    };
    let name = if name.trim().is_empty() {
        default_name.to_string()
    } else {
        name.trim().to_string()
    };
    let default_description = format!("{domain}: golden dataset made with evals create");
    let description = match &args.description {
        Some(d) => d.clone(),
        None if ask.terminal => ask.choose("   Description: ", |a| Ok(a.to_string()))?,
        None => String::new(),
    };
    let description = if description.trim().is_empty() {
        default_description
    } else {
        description
    };
    let tags = match &args.tags {
        Some(t) => parse_tags(t),
        None if ask.terminal => {
            parse_tags(&ask.choose("   Tags (comma-separated): ", |a| Ok(a.to_string()))?)
        }
        None => Vec::new(),
    };
    let examples: Vec<Value> = records
        .iter()
        .map(|r| {
            json!({"inputs": {"query": r["query"]},
                   "outputs": {"ground_truth": r.get("ground_truth").cloned().unwrap_or(Value::Null),
                               "contexts": r.get("contexts").cloned().unwrap_or(Value::Null)},
                   "metadata": r.get("metadata").cloned().unwrap_or(Value::Null)})
        })
        .collect();
    let endpoint = config
        .langsmith_endpoint
        .as_deref()
        .unwrap_or(LANGSMITH_ENDPOINT);
    errln!(
        "\n3. Uploading {} QA pairs to LangSmith as {}...",
        examples.len(),
        escaped(&name)
    );
    match LangSmith::new(endpoint, key)
        .and_then(|ls| ls.upload_tagged_blocking(&name, &description, &tags, &examples))
    {
        Ok(up) => {
            errln!("   Progress: [████████████████████] 100%");
            outln!("Dataset URL: {}", escaped(&up.url));
            Ok(outcome(
                format!("{} ({} examples)", escaped(&up.url), up.examples),
                0,
            ))
        }
        Err(e) => {
            errln!("error: {e}");
            errln!(
                "the local files are kept; upload them again with `evals create` or LangSmith's tools"
            );
            Ok(outcome("upload failed (LANGSMITH_UPLOAD_FAILED)", 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_split_trimmed_and_once() {
        assert_eq!(parse_tags(" rag, v1 ,,rag"), ["rag", "v1"]);
        assert!(parse_tags(" , ").is_empty());
    }
}
