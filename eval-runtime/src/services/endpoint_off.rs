//! The judge and embeddings endpoint of a build without the `http` feature:
//! there is no HTTP client, so an endpoint cannot be set up and every
//! metric that needs one says why (the same API as `endpoint.rs`, whose
//! constructors here always fail).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::config::{Secret, ServiceSettings};
pub use crate::model::{ServiceError, Usage};

/// Why no endpoint can be set up in this build.
fn no_client(what: &str) -> ServiceError {
    ServiceError::Config {
        what: format!("{what} URL"),
        reason: "this build of eval-runtime has no HTTP client: enable its `http` feature (on by default)".into(),
    }
}

/// One OpenAI-compatible endpoint (never built without the `http` feature).
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    pub(crate) shown: String,
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) permits: Arc<Semaphore>,
    api_key: Option<Secret>,
}

impl Endpoint {
    pub(crate) fn new(what: &str, _base: &str, _path: &str) -> Result<Endpoint, ServiceError> {
        Err(no_client(what))
    }

    pub(crate) fn with_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.filter(|k| !k.is_empty()).map(Secret::new);
        self
    }

    pub(crate) fn from_settings(
        what: &'static str,
        settings: &ServiceSettings,
        _path: &str,
        hint: &str,
        _permits: usize,
    ) -> Result<(Endpoint, String), ServiceError> {
        match &settings.url {
            None => Err(ServiceError::NotConfigured {
                what,
                hint: hint.to_string(),
            }),
            Some(_) => Err(no_client(what)),
        }
    }

    pub(crate) fn host(&self) -> String {
        String::new()
    }

    pub(crate) fn cache_id(&self) -> &str {
        &self.shown
    }

    pub(crate) async fn post(
        &self,
        _body: &Value,
        _usage: &mut Usage,
    ) -> Result<Value, ServiceError> {
        Err(no_client(&self.shown))
    }

    pub(crate) async fn post_unless(
        &self,
        body: &Value,
        usage: &mut Usage,
        _final_answer: &(dyn Fn(u16, &str) -> bool + Sync),
    ) -> Result<Value, ServiceError> {
        self.post(body, usage).await
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::services::{Judge, Services};

    #[test]
    fn a_judge_named_without_an_http_client_says_which_feature_is_missing() {
        let config = Config::from_vars(
            |name| Ok((name == "EVAL_JUDGE_URL").then(|| "http://127.0.0.1:9/v1".to_string())),
            &[],
        )
        .unwrap();
        let error = Services::from_config(&config)
            .judge
            .unwrap_err()
            .to_string();
        assert!(error.contains("enable its `http` feature"), "{error}");
        let error = Judge::new("http://127.0.0.1:9/v1", "j")
            .unwrap_err()
            .to_string();
        assert!(error.contains("no HTTP client"), "{error}");
        // Nothing named: still "not configured", as with the client.
        let none = Services::from_config(&Config::empty())
            .judge
            .unwrap_err()
            .to_string();
        assert!(none.contains("not configured"), "{none}");
    }
}
