//! letta-evals' `target.model_handles`: the suite run once per model
//! (letta-evals 0.26, `letta_evals/runner.py`: `for model_handle in
//! self.model_handles`, results kept in `results_by_model[model]`, one
//! `ModelSummary` per model, each with its own mean reward; a suite without
//! `model_handles` runs once, under the model id `default`). Here the
//! suite's dataset becomes one dataset per model, named `{suite}@{model}`,
//! each with the suite's graders and reward gate and the model its agent
//! runs as ([`ManifestDataset::model`]); the run fails when any model's
//! reward misses (letta-evals reports each model's reward and decides
//! nothing for the run; a gate here decides each dataset).

use super::model::ManifestDataset;

/// The models `target.model_handles` lists: `Ok(None)` when it is not
/// given (the suite runs once, as the front end set its agent up);
/// `Err(message)` when it is not a non-empty list of distinct names.
pub(super) fn model_handles(
    target: Option<&serde_json::Value>,
) -> Result<Option<Vec<String>>, String> {
    let Some(list) = target.and_then(|t| t.get("model_handles")) else {
        return Ok(None);
    };
    if list.is_null() {
        return Ok(None);
    }
    let items = list.as_array().ok_or(
        "`target.model_handles`: expected a list of model handles (e.g. [openai/gpt-4.1-mini])",
    )?;
    if items.is_empty() {
        return Err("`target.model_handles` is empty: letta-evals would run no model; list at least one, or leave it out".into());
    }
    let mut handles: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let handle = item
            .as_str()
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                format!("`target.model_handles`: `{item}` is not a model handle (a name such as openai/gpt-4.1-mini)")
            })?;
        if handles.iter().any(|h| h == handle) {
            return Err(format!(
                "`target.model_handles` lists `{handle}` twice: each model runs once"
            ));
        }
        // Test names and result rows spell a dataset's name as a slug.
        let slug = |h: &str| crate::naming::slug(h, 1024);
        if let Some(other) = handles.iter().find(|h| slug(h) == slug(handle)) {
            return Err(format!(
                "`target.model_handles`: `{other}` and `{handle}` would name the same tests and results (`{}`): keep one",
                slug(handle)
            ));
        }
        handles.push(handle.to_string());
    }
    Ok(Some(handles))
}

/// `dataset` once per model of `handles`, named `{name}@{model}`.
pub(super) fn per_model(dataset: ManifestDataset, handles: &[String]) -> Vec<ManifestDataset> {
    handles
        .iter()
        .map(|handle| {
            let mut d = dataset.clone();
            d.name = format!("{}@{handle}", dataset.name);
            d.model = Some(handle.clone());
            d
        })
        .collect()
}
