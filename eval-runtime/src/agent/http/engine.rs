//! What the engine and the `evals` command ask of an [`HttpAgent`] beyond
//! its builder: its settings under a plan, its wire protocol, its pacing and
//! what a cassette keys on. Hidden methods: not a test author's API.

use eval_datasets::{AgentSettings, Protocol};
use serde_json::{Map, Value, json};

use super::HttpAgent;

impl HttpAgent {
    /// Applies what a plan says about the agent (a manifest's
    /// `spec.evaluation.agent`) where nothing was chosen in code or by
    /// `evals`' flags: code and flags first, then the manifest, then the
    /// `EVAL_AGENT_*` variables. The engine applies a plan's settings this
    /// way for the harness and for `evals evaluate` alike.
    #[doc(hidden)]
    pub fn under_plan(self, plan: &AgentSettings) -> Self {
        let chosen = self.chosen.clone();
        let mut agent = self.settings(&chosen.clone().or(plan));
        agent.chosen = chosen;
        agent
    }

    /// The protocol, model and streaming in use (the protocol always said:
    /// the one chosen, else the one the URL implies).
    #[doc(hidden)]
    pub fn current_settings(&self) -> AgentSettings {
        AgentSettings::new(
            Some(self.wire_protocol()),
            self.model.clone(),
            Some(self.stream),
        )
        .with_http(self.http.clone())
    }

    /// The protocol spoken: the one chosen, else the one the URL implies.
    #[doc(hidden)]
    pub fn wire_protocol(&self) -> Protocol {
        self.protocol.unwrap_or_else(|| match self.wire.provider {
            crate::config::Provider::OpenAi => Protocol::implied_by_path(self.url.path()),
            _ => Protocol::OpenAi,
        })
    }

    /// The current limit on calls in flight to this agent (`None` when not
    /// [`adaptive`](Self::adaptive): the engine's concurrency alone).
    #[doc(hidden)]
    pub fn concurrency_limit(&self) -> Option<f64> {
        self.pacer.limit()
    }

    /// What shapes this agent's answers besides the sample (see
    /// [`Agent::cassette_settings`](super::Agent::cassette_settings)).
    #[doc(hidden)]
    pub fn cassette_settings(&self) -> Value {
        let mut sampling = Map::new();
        self.sampling.insert_into(&mut sampling);
        let mut settings = json!({
            "protocol": self.wire_protocol().name(),
            "model": self.model,
            "stream": self.stream,
            "sampling": sampling,
            "tools": self.tools.as_ref().ok(),
        });
        if !self.http.is_empty() {
            settings["http"] = self.http.shape();
        }
        settings
    }
}
