//! What a sample or a run used: calls, retries, tokens, cache hits.
//!
//! Token counts come from servers (an agent's or a judge's `usage`), so
//! nothing here trusts them: every sum of counts goes through
//! [`saturating`] (a total stops at the type's maximum instead of
//! overflowing, in debug and release builds alike), and one reply claiming
//! more than [`MAX_CREDIBLE_TOKENS`] (10^12) is not counted at all
//! (`Usage::count_reply`): it is counted in [`Usage::not_credible`]
//! instead, which the usage lines of reports show, and said on stderr.

use serde::Serialize;

/// The most tokens (prompt + completion) one reply may report and be
/// counted: 10^12. No model reads or writes that much in one call (the
/// largest context windows hold a few million tokens); a reply claiming
/// more is a broken or hostile server, and its usage is left out of every
/// total (and of the cost) rather than trusted.
pub(crate) const MAX_CREDIBLE_TOKENS: u64 = 1_000_000_000_000;

/// A count that stops at its maximum: see [`saturating`].
pub(crate) trait Count: Copy {
    /// `self + by`, at most the type's maximum.
    fn plus(self, by: Self) -> Self;
}

impl Count for u32 {
    fn plus(self, by: u32) -> u32 {
        self.saturating_add(by)
    }
}

impl Count for u64 {
    fn plus(self, by: u64) -> u64 {
        self.saturating_add(by)
    }
}

impl Count for usize {
    fn plus(self, by: usize) -> usize {
        self.saturating_add(by)
    }
}

/// `*count += by`, stopping at the type's maximum instead of overflowing
/// (a debug build would panic, a release build would wrap to a small
/// number). Every count of calls and tokens is added through it.
pub(crate) fn saturating<T: Count>(count: &mut T, by: T) {
    *count = count.plus(by);
}

/// Calls made and their tokens, for one sample or a run (the results file
/// also keeps retries, re-asks and cache hits).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// HTTP calls made.
    pub calls: u32,
    /// Calls repeated after a 429/5xx, a connection failure or a timeout.
    #[doc(hidden)]
    pub retries: u32,
    /// Judge answers re-asked because they could not be used (not JSON, no message, wrong shape).
    #[doc(hidden)]
    pub reasks: u32,
    /// Prompt tokens reported by the server (at most `u64::MAX`: totals saturate).
    pub prompt_tokens: u64,
    /// Completion tokens reported by the server (at most `u64::MAX`: totals saturate).
    pub completion_tokens: u64,
    /// Answers served from the cache (no call).
    #[doc(hidden)]
    pub cache_hits: u32,
    /// Of the prompt tokens, those the server read from its prompt cache
    /// (billed at its cached rate): OpenAI's and vLLM's
    /// `prompt_tokens_details.cached_tokens`, DeepSeek's
    /// `prompt_cache_hit_tokens`, Anthropic's `cache_read_input_tokens`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    #[doc(hidden)]
    pub cached_tokens: u64,
    /// Replies whose reported usage was not credible (more than 10^12
    /// tokens in one reply): their tokens are in neither count above, nor
    /// in the cost.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[doc(hidden)]
    pub not_credible: u32,
    /// Of the prompt and completion tokens, those this client counted from
    /// the text with a tokenizer because the server reported none (a
    /// streamed answer without a usage chunk): an estimate, shown as
    /// `~N tokens (estimated)`; its cost is computed from them.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    #[doc(hidden)]
    pub estimated_tokens: u64,
    /// Replies that reported no usage and whose tokens could not be counted
    /// (built without the `tokenizer` feature): the cost of their sample is
    /// unknown, never $0.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[doc(hidden)]
    pub unreported: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// The token counts a server reports in a reply's `usage` object, in any
/// of the shapes OpenAI-compatible servers use: `prompt_tokens` and
/// `completion_tokens` (OpenAI's chat completions, vLLM, Ollama,
/// DeepSeek), else `input_tokens` and `output_tokens` (OpenAI's responses,
/// Anthropic); cached prompt tokens from `prompt_tokens_details` or
/// `input_tokens_details` (`cached_tokens`), `prompt_cache_hit_tokens`
/// (DeepSeek) or `cache_read_input_tokens` (Anthropic, whose
/// `input_tokens` leave out the tokens read from or written to the cache:
/// they are added back, so `prompt` is every prompt token). Absent counts
/// are 0; `cached` is at most `prompt`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reported {
    pub(crate) prompt: u64,
    pub(crate) completion: u64,
    pub(crate) cached: u64,
    /// The counts are this client's estimate, not the server's.
    pub(crate) estimated: bool,
    /// The server reported nothing and nothing could be counted.
    pub(crate) unreported: bool,
}

impl Reported {
    /// What `usage` (a reply's `usage` object) reports.
    pub(crate) fn of(usage: Option<&serde_json::Value>) -> Reported {
        let Some(u) = usage else {
            return Reported::default();
        };
        let count = |path: &str| u.pointer(path).and_then(serde_json::Value::as_u64);
        let anthropic_read = count("/cache_read_input_tokens");
        let cached = count("/prompt_tokens_details/cached_tokens")
            .or_else(|| count("/input_tokens_details/cached_tokens"))
            .or_else(|| count("/prompt_cache_hit_tokens"))
            .or(anthropic_read)
            .unwrap_or(0);
        let prompt = match count("/prompt_tokens") {
            Some(p) => p,
            None => {
                let input = count("/input_tokens").unwrap_or(0);
                match anthropic_read {
                    // Anthropic counts cache reads and writes apart.
                    Some(read) => input
                        .saturating_add(read)
                        .saturating_add(count("/cache_creation_input_tokens").unwrap_or(0)),
                    None => input,
                }
            }
        };
        let completion = count("/completion_tokens")
            .or_else(|| count("/output_tokens"))
            .unwrap_or(0);
        Reported {
            prompt,
            completion,
            cached: cached.min(prompt),
            ..Reported::default()
        }
    }

    /// What a reply's [`Usage`] says it used (its tokens, as parsed).
    pub(crate) fn from_usage(usage: &Usage) -> Reported {
        Reported {
            prompt: usage.prompt_tokens,
            completion: usage.completion_tokens,
            cached: usage.cached_tokens.min(usage.prompt_tokens),
            estimated: usage.estimated_tokens > 0,
            unreported: usage.unreported > 0,
        }
    }
}

/// A reply's reported usage that was not counted: more tokens than
/// [`MAX_CREDIBLE_TOKENS`] in one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "reported {prompt} prompt + {completion} completion tokens for one reply, more than the credible {MAX_CREDIBLE_TOKENS}: this reply's usage is not counted"
)]
pub(crate) struct NotCredible {
    /// The prompt tokens it reported.
    prompt: u64,
    /// The completion tokens it reported.
    completion: u64,
}

impl Usage {
    /// Nothing used.
    pub const ZERO: Usage = Usage {
        calls: 0,
        retries: 0,
        reasks: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cache_hits: 0,
        cached_tokens: 0,
        not_credible: 0,
        estimated_tokens: 0,
        unreported: 0,
    };

    /// Adds `other` to `self`, every count stopping at its maximum rather
    /// than overflowing.
    pub fn add(&mut self, other: Usage) {
        saturating(&mut self.calls, other.calls);
        saturating(&mut self.retries, other.retries);
        saturating(&mut self.reasks, other.reasks);
        saturating(&mut self.prompt_tokens, other.prompt_tokens);
        saturating(&mut self.completion_tokens, other.completion_tokens);
        saturating(&mut self.cache_hits, other.cache_hits);
        saturating(&mut self.cached_tokens, other.cached_tokens);
        saturating(&mut self.not_credible, other.not_credible);
        saturating(&mut self.estimated_tokens, other.estimated_tokens);
        saturating(&mut self.unreported, other.unreported);
    }

    /// Prompt and completion tokens together (at most `u64::MAX`).
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    /// Counts one HTTP attempt (`retry`: not the call's first).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn count_attempt(&mut self, retry: bool) {
        self.spend(Usage {
            calls: 1,
            retries: u32::from(retry),
            ..Usage::ZERO
        });
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    /// Adds `delta` (one count) to `self` and to the run's meter in scope
    /// (see [`meter`](super::meter)): every count goes through it.
    fn spend(&mut self, delta: Usage) {
        self.add(delta);
        super::meter::record(delta);
    }

    /// Counts one judge answer re-asked.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn count_reask(&mut self) {
        self.spend(Usage {
            reasks: 1,
            ..Usage::ZERO
        });
    }

    /// Counts `n` answers served from the cache.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn count_cache_hits(&mut self, n: usize) {
        self.spend(Usage {
            cache_hits: u32::try_from(n).unwrap_or(u32::MAX),
            ..Usage::ZERO
        });
    }

    /// Counts the tokens one reply reports: added (saturating) when
    /// credible; when the reply claims more than [`MAX_CREDIBLE_TOKENS`]
    /// in all, nothing is added but [`not_credible`](Self::not_credible),
    /// and the error says what was claimed.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn count_reply(&mut self, prompt: u64, completion: u64) -> Result<(), NotCredible> {
        let claimed = prompt.checked_add(completion);
        if claimed.is_none_or(|n| n > MAX_CREDIBLE_TOKENS) {
            self.spend(Usage {
                not_credible: 1,
                ..Usage::ZERO
            });
            return Err(NotCredible { prompt, completion });
        }
        self.spend(Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            ..Usage::ZERO
        });
        Ok(())
    }

    /// [`count_reply_from`](Self::count_reply_from) of what a reply
    /// reports, its cached prompt tokens counted too when its usage is
    /// credible.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn count_reported(&mut self, from: &str, reported: Reported) {
        if reported.unreported {
            self.spend(Usage {
                unreported: 1,
                ..Usage::ZERO
            });
        }
        match self.count_reply(reported.prompt, reported.completion) {
            Ok(()) => self.spend(Usage {
                cached_tokens: reported.cached.min(reported.prompt),
                estimated_tokens: if reported.estimated {
                    reported.prompt.saturating_add(reported.completion)
                } else {
                    0
                },
                ..Usage::ZERO
            }),
            Err(e) => say_not_credible(from, &e),
        }
    }

    /// `12 + 7 tokens`; with tokens this client estimated (no usage
    /// reported), `~12 + ~7 tokens (estimated: no usage reported)` when all
    /// are, `12 + 7 tokens (~9 of them estimated: no usage reported)` when
    /// some are; and replies whose tokens are unknown, when any.
    #[doc(hidden)]
    pub fn tokens_text(&self) -> String {
        let (p, c) = (self.prompt_tokens, self.completion_tokens);
        let mut text = if self.estimated_tokens == 0 {
            format!("{p} + {c} tokens")
        } else if self.estimated_tokens >= self.tokens() {
            format!("~{p} + ~{c} tokens (estimated: no usage reported)")
        } else {
            format!(
                "{p} + {c} tokens (~{} of them estimated: no usage reported)",
                self.estimated_tokens
            )
        };
        if self.unreported > 0 {
            text.push_str(&format!(
                ", {} repl{} without usage (tokens unknown)",
                self.unreported,
                if self.unreported == 1 { "y" } else { "ies" }
            ));
        }
        text
    }

    /// The usage of an answer replayed from a recording made from `from`
    /// (a cassette): no call made, one more cache hit, and the recorded
    /// tokens counted as a server's reply is ([`count_reply_from`](Self::count_reply_from)):
    /// a recording is a file anyone can edit.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn replayed(recorded: Usage, from: &str) -> Usage {
        let mut usage = Usage::ZERO;
        usage.spend(Usage {
            reasks: recorded.reasks,
            cache_hits: recorded.cache_hits,
            not_credible: recorded.not_credible,
            ..Usage::ZERO
        });
        let reported = Reported {
            estimated: false,
            ..Reported::from_usage(&recorded)
        };
        usage.count_reported(from, reported);
        let estimated = recorded.estimated_tokens.min(usage.tokens());
        usage.spend(Usage {
            estimated_tokens: estimated,
            ..Usage::ZERO
        });
        usage.count_cache_hits(1);
        usage
    }
}

/// Says on stderr that a reply from `from` was not credible, once per
/// `from` and process (the usage lines count them all).
fn say_not_credible(from: &str, e: &NotCredible) {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, OnceLock};
    static SAID: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    let first = SAID
        .get_or_init(Mutex::default)
        .lock()
        .map(|mut said| said.insert(from.to_string()))
        .unwrap_or(true);
    if first {
        crate::notice::warn(&format!(
            "{from} {e} (said once per server; the usage lines count every such reply as not credible)"
        ));
    }
}

pub(crate) mod meter {
    //! What a sample's run has spent so far, seen by the engine when it cuts
    //! the run short: a run that times out (or whose agent fails) keeps the
    //! calls, tokens and cache hits made before, instead of reporting 0 calls
    //! and $0 though the agent and the judge were called.
    //!
    //! The engine runs the agent, then the scoring, inside a [`Meter`]'s scope
    //! (a task-local, so only work polled by the sample's own task is seen: an
    //! in-process agent that runs on a thread of its own reports its usage in
    //! its answer, as before). Every count of [`Usage`] — an HTTP attempt, a
    //! reply's tokens, a re-ask, a cache hit — is also added to the meter in
    //! scope, to the part its [`Role`] says: the agent's while the agent runs,
    //! the judge's while scoring, the embeddings' inside an embeddings call.
    //! What the meter holds is read only when the run was cut short; a run that
    //! completes reports the usage its answer and its metrics carry.

    use std::future::Future;
    use std::sync::{Arc, Mutex};

    use super::Usage;

    /// Whose counts a scope records.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Role {
        /// The agent (and a retrieval query's retriever).
        Agent,
        /// The judge.
        Judge,
        /// The embeddings server.
        Embeddings,
    }

    /// The usage counted so far in a run: the agent's, the judge's and the
    /// embeddings'.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub(crate) struct Spent {
        pub(crate) agent: Usage,
        pub(crate) judge: Usage,
        pub(crate) embeddings: Usage,
    }

    /// A run's meter, shared by the engine and the work it scopes.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct Meter(Arc<Mutex<Spent>>);

    tokio::task_local! {
        static METER: (Meter, Role);
    }

    impl Meter {
        /// A meter with nothing counted.
        pub(crate) fn new() -> Meter {
            Meter::default()
        }

        /// Runs `work` with its counts recorded in this meter as `role`'s.
        pub(crate) async fn scope<F: Future>(&self, role: Role, work: F) -> F::Output {
            METER.scope((self.clone(), role), work).await
        }

        /// What was counted so far.
        pub(crate) fn spent(&self) -> Spent {
            self.0
                .lock()
                .map(|s| *s)
                .unwrap_or_else(|p| *p.into_inner())
        }
    }

    /// Runs `work` with its counts recorded as `role`'s in the meter of the
    /// scope it runs in (if any): an embeddings call made while scoring.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) async fn as_role<F: Future>(role: Role, work: F) -> F::Output {
        match METER.try_with(|(meter, _)| meter.clone()) {
            Ok(meter) => meter.scope(role, work).await,
            Err(_) => work.await,
        }
    }

    /// Adds `delta` to the meter in scope, to its role's part; nothing outside
    /// a scope.
    pub(crate) fn record(delta: Usage) {
        let _ = METER.try_with(|(meter, role)| {
            let mut spent = meter.0.lock().unwrap_or_else(|p| p.into_inner());
            match role {
                Role::Agent => spent.agent.add(delta),
                Role::Judge => spent.judge.add(delta),
                Role::Embeddings => spent.embeddings.add(delta),
            }
        });
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[tokio::test]
        async fn counts_reach_the_meter_in_scope_even_when_the_work_is_cancelled() {
            let meter = Meter::new();
            let work = meter.scope(Role::Agent, async {
                let mut usage = Usage::ZERO;
                usage.count_attempt(false);
                let _ = usage.count_reply(12, 3);
                as_role(Role::Embeddings, async {
                    let mut u = Usage::ZERO;
                    u.count_cache_hits(2);
                })
                .await;
                // Never finishes: the timeout drops `usage`.
                std::future::pending::<()>().await;
            });
            let cut = tokio::time::timeout(std::time::Duration::from_millis(10), work).await;
            assert!(cut.is_err());
            let spent = meter.spent();
            assert_eq!(
                (
                    spent.agent.calls,
                    spent.agent.prompt_tokens,
                    spent.agent.completion_tokens
                ),
                (1, 12, 3)
            );
            assert_eq!(spent.embeddings.cache_hits, 2);
            assert_eq!(spent.judge, Usage::ZERO);
            // Outside a scope nothing is recorded (and nothing fails).
            let mut u = Usage::ZERO;
            u.count_attempt(true);
            assert_eq!(meter.spent().agent.calls, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_prompt_tokens_are_read_in_every_servers_shape() {
        use serde_json::json;
        let of = |v: serde_json::Value| {
            let r = Reported::of(Some(&v));
            (r.prompt, r.completion, r.cached)
        };
        // OpenAI chat completions, vLLM.
        assert_eq!(
            of(json!({"prompt_tokens": 1200, "completion_tokens": 30,
                      "prompt_tokens_details": {"cached_tokens": 1024}})),
            (1200, 30, 1024)
        );
        // OpenAI responses.
        assert_eq!(
            of(json!({"input_tokens": 900, "output_tokens": 20,
                      "input_tokens_details": {"cached_tokens": 768}})),
            (900, 20, 768)
        );
        // DeepSeek.
        assert_eq!(
            of(json!({"prompt_tokens": 500, "completion_tokens": 9,
                      "prompt_cache_hit_tokens": 448, "prompt_cache_miss_tokens": 52})),
            (500, 9, 448)
        );
        // Anthropic: input tokens leave the cache reads and writes out.
        assert_eq!(
            of(json!({"input_tokens": 50, "output_tokens": 7,
                      "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 100})),
            (2150, 7, 2000)
        );
        // No cache said; a cached count above the prompt is cut to it.
        assert_eq!(of(json!({"prompt_tokens": 3})), (3, 0, 0));
        assert_eq!(
            of(json!({"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 9}})),
            (3, 0, 3)
        );
        assert_eq!(Reported::of(None), Reported::default());
        // Counted only when credible.
        let mut u = Usage::ZERO;
        u.count_reported(
            "t",
            Reported {
                prompt: 10,
                completion: 1,
                cached: 8,
                ..Reported::default()
            },
        );
        assert_eq!((u.prompt_tokens, u.cached_tokens), (10, 8));
        u.count_reported(
            "t",
            Reported {
                prompt: u64::MAX,
                completion: 0,
                cached: 5,
                ..Reported::default()
            },
        );
        assert_eq!((u.cached_tokens, u.not_credible), (8, 1));
    }

    #[test]
    fn a_replayed_usage_is_counted_as_a_reply_and_never_overflows() {
        let edited = Usage {
            calls: 3,
            retries: 2,
            prompt_tokens: u64::MAX,
            completion_tokens: 1,
            cache_hits: u32::MAX,
            ..Usage::ZERO
        };
        let u = Usage::replayed(edited, "the cassette t.jsonl");
        assert_eq!((u.calls, u.retries), (0, 0));
        assert_eq!((u.prompt_tokens, u.completion_tokens), (0, 0));
        assert_eq!(u.not_credible, 1);
        assert_eq!(u.cache_hits, u32::MAX);
        let fine = Usage {
            prompt_tokens: 12,
            completion_tokens: 7,
            ..Usage::ZERO
        };
        let u = Usage::replayed(fine, "the cassette t.jsonl");
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.cache_hits),
            (12, 7, 1)
        );
    }

    #[test]
    fn estimated_and_unreported_tokens_are_counted_and_shown() {
        let mut u = Usage::ZERO;
        u.count_reported(
            "t",
            Reported {
                prompt: 20,
                completion: 5,
                estimated: true,
                ..Reported::default()
            },
        );
        assert_eq!((u.tokens(), u.estimated_tokens), (25, 25));
        assert_eq!(
            u.tokens_text(),
            "~20 + ~5 tokens (estimated: no usage reported)"
        );
        u.count_reported(
            "t",
            Reported {
                prompt: 10,
                completion: 1,
                ..Reported::default()
            },
        );
        assert_eq!(
            u.tokens_text(),
            "30 + 6 tokens (~25 of them estimated: no usage reported)"
        );
        u.count_reported(
            "t",
            Reported {
                unreported: true,
                ..Reported::default()
            },
        );
        assert_eq!(u.unreported, 1);
        assert!(
            u.tokens_text()
                .ends_with(", 1 reply without usage (tokens unknown)")
        );
        // Kept through a sum and a recording; not written when 0.
        let mut total = Usage::ZERO;
        total.add(u);
        assert_eq!((total.estimated_tokens, total.unreported), (25, 1));
        let back = Usage::replayed(u, "the cassette t.jsonl");
        assert_eq!((back.estimated_tokens, back.unreported), (25, 1));
        let json = serde_json::to_value(Usage::ZERO).unwrap();
        assert!(json.get("estimated_tokens").is_none() && json.get("unreported").is_none());
    }

    #[test]
    fn sums_saturate_instead_of_overflowing() {
        let mut total = Usage {
            prompt_tokens: u64::MAX - 1,
            calls: u32::MAX,
            ..Usage::ZERO
        };
        total.add(Usage {
            prompt_tokens: 5,
            completion_tokens: u64::MAX,
            calls: 3,
            ..Usage::ZERO
        });
        assert_eq!(total.prompt_tokens, u64::MAX);
        assert_eq!(total.calls, u32::MAX);
        assert_eq!(total.tokens(), u64::MAX);
        let mut n = usize::MAX;
        saturating(&mut n, 1);
        assert_eq!(n, usize::MAX);
    }

    #[test]
    fn a_reply_claiming_too_many_tokens_is_not_counted() {
        let mut usage = Usage::ZERO;
        assert_eq!(usage.count_reply(12, 7), Ok(()));
        let e = usage.count_reply(u64::MAX, 0).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("reported 18446744073709551615 prompt + 0 completion tokens"),
            "{e}"
        );
        // The sum is what counts, and an overflowing sum is not credible.
        assert!(usage.count_reply(MAX_CREDIBLE_TOKENS, 1).is_err());
        assert!(usage.count_reply(u64::MAX, u64::MAX).is_err());
        assert_eq!(usage.count_reply(MAX_CREDIBLE_TOKENS, 0), Ok(()));
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.not_credible
            ),
            (12 + MAX_CREDIBLE_TOKENS, 7, 3)
        );
        // Not written when 0; read as 0 from files of earlier versions.
        let json = serde_json::to_value(Usage::ZERO).unwrap();
        assert!(json.get("not_credible").is_none(), "{json}");
        let back: Usage = serde_json::from_value(json).unwrap();
        assert_eq!(back, Usage::ZERO);
    }
}
