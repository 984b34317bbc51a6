//! Steps of `evals evaluate` after the plan is prepared: the estimate
//! (`--estimate`), and the deletions ingest would make confirmed
//! (`--allow-custom-prefix`).

use eval_runtime::Config;

use super::Args;
use crate::Failure;

/// `--estimate`: the run's notes, and what it would cost, printed.
pub(super) fn print_estimate(
    args: &Args,
    prepared: &eval_runtime::Prepared<'_>,
    config: &Config,
) -> Result<(), Failure> {
    for note in &prepared.notes {
        errln!("note: {note}");
    }
    // The model the real run's agent would be asked for: the flag, else
    // the manifest's, else EVAL_AGENT_MODEL (its tokenizer and price).
    let model = args
        .agent
        .model
        .clone()
        .or_else(|| prepared.agent_settings().model.clone())
        .or_else(|| config.agent_model.clone());
    let estimate = prepared.estimate_for_model(model.as_deref());
    if args.json {
        let text = serde_json::to_string_pretty(&estimate)
            .map_err(|e| Failure::config(format!("cannot render the estimate: {e}")))?;
        outjson!(text); // issue37:escape
    } else {
        out!("{}", estimate.render());
    }
    Ok(())
}

/// `--allow-custom-prefix`: every scope outside `eval:` that ingest would
/// delete, confirmed by EVAL_DELETE_SCOPES or asked (`--yes`).
pub(super) fn confirm_scopes(
    args: &Args,
    prepared: &eval_runtime::Prepared<'_>,
    config: &Config,
) -> Result<(), Failure> {
    let scopes: std::collections::BTreeSet<String> = prepared
        .samples()
        .filter_map(|s| s.retrieval.as_ref().map(|q| q.scope_prefix.clone()))
        .filter(|p| !eval_datasets::retrieval::scope_is_safe(p))
        .collect();
    // EVAL_DELETE_SCOPES confirms as the attribute and the harness take it.
    let (confirmed, asked): (std::collections::BTreeSet<&str>, _) = scopes
        .iter()
        .map(String::as_str)
        .partition(|s| config.delete_scopes.iter().any(|c| c == s));
    for scope in &confirmed {
        errln!(
            "note: ingest deletes every document under `{scope}` (confirmed by EVAL_DELETE_SCOPES)"
        );
    }
    if !asked.is_empty() {
        super::confirm_deletion(&asked, args.yes)?;
    }
    Ok(())
}
