//! The agent of each dataset that runs as a model of its own (a letta
//! suite's `target.model_handles`: dataset `{suite}@{model}`): the run's
//! agent answering as that model ([`Agent::with_model`]), made once per
//! dataset the first time the run sees its agent. An agent without a model
//! setting (in-process) runs as it is: the model reaches it as each
//! sample's `agent_args.model`.

use std::sync::Arc;

use crate::agent::Agent;
use crate::plan::LoadedDataset;

/// Per dataset, the agent it runs with instead of the run's (`None`: the
/// run's).
pub(super) fn agents(datasets: &[LoadedDataset], agent: &dyn Agent) -> Vec<Option<Arc<dyn Agent>>> {
    datasets
        .iter()
        .map(|d| d.plan.model.as_deref().and_then(|m| agent.with_model(m)))
        .collect()
}
