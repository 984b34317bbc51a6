//! Questions that begin alike go one after the other: a provider's prompt
//! cache (OpenAI, Anthropic, DeepSeek, vLLM's prefix caching) serves a
//! prompt's prefix only once a request holding it has been processed, so
//! two questions of one sample on the same retrieved context, sent at
//! once, would both pay for the context in full.
//!
//! [`Warming::enter`] lets the first question with a given shared prefix
//! (its context blocks: [`Rendered::shared_prefix`](super::Rendered::shared_prefix))
//! go at once and hold the others back until it is answered — or has
//! failed, timed out or been cancelled: whatever ends it lets them go.
//! They then go together, all served from the warm cache. Only questions
//! whose prefix is in flight ever wait, and never longer than the one
//! question they wait for; nothing is kept once it ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

/// The shared prefixes being sent now; clones of a judge share it.
#[derive(Debug, Default)]
pub(crate) struct Warming {
    leading: Mutex<HashMap<u64, Arc<Semaphore>>>,
}

/// The first question of its prefix, in flight: dropping it lets the
/// others go.
pub(crate) struct Lead<'a> {
    warming: &'a Warming,
    key: u64,
    gate: Arc<Semaphore>,
}

impl Warming {
    /// Waits while another question with `prefix` is in flight, then lets
    /// this one go: leading (`Some`) when none was, to be held until it is
    /// answered. An empty prefix never waits.
    pub(crate) async fn enter(&self, prefix: &str) -> Option<Lead<'_>> {
        if prefix.is_empty() {
            return None;
        }
        let key = eval_datasets::hash::fnv1a64(&[prefix.as_bytes()]);
        let gate = {
            let mut leading = self.lock();
            match leading.get(&key) {
                Some(gate) => gate.clone(),
                None => {
                    let gate = Arc::new(Semaphore::new(0));
                    leading.insert(key, gate.clone());
                    return Some(Lead {
                        warming: self,
                        key,
                        gate,
                    });
                }
            }
        };
        // No permit is ever added: this returns when the lead closes it.
        let _ = gate.acquire().await;
        None
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Semaphore>>> {
        self.leading.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        let mut leading = self.warming.lock();
        if leading
            .get(&self.key)
            .is_some_and(|g| Arc::ptr_eq(g, &self.gate))
        {
            leading.remove(&self.key);
        }
        self.gate.close();
    }
}

/// Questions in flight by their cache key: the same question asked again
/// while it is in flight (context precision's and recall's, one question)
/// waits for the first and takes its answer, instead of being sent twice.
/// Nothing is kept once a question ends.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    flying: Mutex<HashMap<String, Arc<Flight>>>,
}

#[derive(Debug)]
struct Flight {
    /// Closed when the question ends.
    done: Semaphore,
    /// Its answer, when it had one.
    answer: std::sync::OnceLock<serde_json::Value>,
}

/// What joining a question's flight gives.
pub(crate) enum Joined<'a> {
    /// None was in flight: this one asks, and hands its answer on.
    Lead(FlightLead<'a>),
    /// One was: its answer (`None` when it failed).
    Answer(Option<serde_json::Value>),
}

/// The question in flight: dropping it lets those waiting for it go.
pub(crate) struct FlightLead<'a> {
    flights: &'a Flights,
    key: String,
    flight: Arc<Flight>,
}

impl Flights {
    /// Leads the question `key`, or waits for the one in flight and takes
    /// its answer.
    pub(crate) async fn join(&self, key: &str) -> Joined<'_> {
        let flight = {
            let mut flying = self.lock();
            match flying.get(key) {
                Some(f) => f.clone(),
                None => {
                    let flight = Arc::new(Flight {
                        done: Semaphore::new(0),
                        answer: Default::default(),
                    });
                    flying.insert(key.to_string(), flight.clone());
                    return Joined::Lead(FlightLead {
                        flights: self,
                        key: key.to_string(),
                        flight,
                    });
                }
            }
        };
        // No permit is ever added: this returns when the lead ends.
        let _ = flight.done.acquire().await;
        Joined::Answer(flight.answer.get().cloned())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Flight>>> {
        self.flying.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl FlightLead<'_> {
    /// The question's answer, for those waiting for it.
    pub(crate) fn answered(&self, answer: &serde_json::Value) {
        let _ = self.flight.answer.set(answer.clone());
    }
}

impl Drop for FlightLead<'_> {
    fn drop(&mut self) {
        let mut flying = self.flights.lock();
        if flying
            .get(&self.key)
            .is_some_and(|f| Arc::ptr_eq(f, &self.flight))
        {
            flying.remove(&self.key);
        }
        self.flight.done.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn the_first_of_a_prefix_leads_and_the_others_wait_for_it() {
        let warming = Arc::new(Warming::default());
        let lead = warming.enter("context").await;
        assert!(lead.is_some());
        assert!(warming.enter("").await.is_none(), "no prefix, no wait");
        assert!(
            warming.enter("other").await.is_some(),
            "another prefix leads"
        );
        let w = warming.clone();
        let follower = tokio::spawn(async move { w.enter("context").await.is_none() });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!follower.is_finished(), "waits while the lead is in flight");
        drop(lead);
        assert!(
            tokio::time::timeout(Duration::from_secs(5), follower)
                .await
                .unwrap()
                .unwrap()
        );
        assert!(warming.lock().is_empty(), "nothing kept once it ends");
        // Once answered, the prefix leads again (nothing in flight).
        assert!(warming.enter("context").await.is_some());
    }

    #[tokio::test]
    async fn the_same_question_in_flight_is_asked_once() {
        let flights = Arc::new(Flights::default());
        let Joined::Lead(lead) = flights.join("k").await else {
            panic!("the first leads")
        };
        let f = flights.clone();
        let second = tokio::spawn(async move {
            match f.join("k").await {
                Joined::Answer(a) => a,
                Joined::Lead(_) => None,
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished(), "waits for the first");
        lead.answered(&serde_json::json!({"a": 1}));
        drop(lead);
        let got = tokio::time::timeout(Duration::from_secs(5), second)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, Some(serde_json::json!({"a": 1})));
        assert!(flights.lock().is_empty(), "nothing kept");
        // Once it ended, the same question leads again (nothing remembered).
        assert!(matches!(flights.join("k").await, Joined::Lead(_)));
    }
}
