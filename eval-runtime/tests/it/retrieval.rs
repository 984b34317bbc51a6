//! Retrieval evaluation end to end with in-process retrievers: per-query
//! trials, rank metrics equal to hand-computed values, seed 004's ingest
//! rules (prefix guard, delete-then-ingest, loaderRef, no-ingest), and the
//! diff of two runs where one query regressed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use eval_runtime::Harness;
use eval_runtime::diff;
use eval_runtime::results::Results;
use eval_runtime::retrieval::{
    Hit, IngestDocument, Retriever, RetrieverAgent, RetrieverError, RetrieverFuture,
};
use libtest_mimic::Arguments;

/// Answers each query with a fixed ranking and logs every call.
#[derive(Clone, Default)]
struct Scripted {
    rankings: Arc<HashMap<String, Vec<&'static str>>>,
    log: Arc<Mutex<Vec<String>>>,
    /// A query whose search fails (the retriever is down for it).
    down_on: Option<&'static str>,
}

impl Scripted {
    fn new(rankings: &[(&str, &[&'static str])]) -> Self {
        Scripted {
            rankings: Arc::new(
                rankings
                    .iter()
                    .map(|(q, r)| (q.to_string(), r.to_vec()))
                    .collect(),
            ),
            log: Arc::default(),
            down_on: None,
        }
    }
    /// The same rankings, but searching `query` fails.
    fn down_on(mut self, query: &'static str) -> Self {
        self.down_on = Some(query);
        self
    }
    fn calls(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Retriever for Scripted {
    fn delete_prefix<'a>(&'a self, prefix: &'a str) -> RetrieverFuture<'a, u64> {
        self.log.lock().unwrap().push(format!("delete {prefix}"));
        Box::pin(async { Ok(0) })
    }
    fn ingest<'a>(&'a self, documents: &'a [IngestDocument]) -> RetrieverFuture<'a, ()> {
        let ids: Vec<String> = documents
            .iter()
            .map(|d| format!("{}={}", d.source_id, d.content))
            .collect();
        self.log
            .lock()
            .unwrap()
            .push(format!("ingest {}", ids.join(",")));
        Box::pin(async { Ok(()) })
    }
    fn search<'a>(
        &'a self,
        query: &'a str,
        _prefix: &'a str,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        self.log
            .lock()
            .unwrap()
            .push(format!("search {query} k={k}"));
        if self.down_on == Some(query) {
            return Box::pin(async {
                Err(RetrieverError::Unreachable {
                    url: "scripted".into(),
                    cause: "down".into(),
                })
            });
        }
        let hits = self
            .rankings
            .get(query)
            .map(|r| {
                r.iter()
                    .map(|id| Hit {
                        source_id: id.to_string(),
                        content: None,
                        score: None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Box::pin(async move { Ok(hits) })
    }
}

const DATASET: &str = r#"{
  "version": "1",
  "id": "hand",
  "defaults": {"topK": 5, "scopePrefix": "eval:hand:"},
  "documents": [
    {"sourceId": "eval:hand:d1", "content": "one"},
    {"sourceId": "eval:hand:d2", "content": "two"},
    {"sourceId": "eval:hand:d4", "loaderRef": "ref:four"}
  ],
  "queries": [
    {"id": "q_mixed", "query": "mixed", "relevant": {"sourceIds": ["eval:hand:d2", "eval:hand:d4", "eval:hand:d9"]}},
    {"id": "q_top", "query": "top", "relevant": {"sourceIds": ["eval:hand:d1"]}, "topK": 10},
    {"id": "q_none", "query": "none", "relevant": {"sourceIds": []}}
  ]
}"#;

fn scratch(name: &str, dataset: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-retrieval-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hand.json"), dataset).unwrap();
    dir
}

fn args() -> Arguments {
    crate::common::harness_args(&["harness", "-q", "--test-threads", "2"])
}

const METRICS: &str =
    "hit_at_k, recall_at_k >= 0.5, precision_at_k >= 0.0, mrr_at_k >= 0.0, ndcg_at_k >= 0.0";

fn good() -> Scripted {
    Scripted::new(&[
        // Dedup -> d1 d2 d3 d4 d5 (top 5): relevant at ranks 2 and 4 of {d2, d4, d9}.
        (
            "mixed",
            &[
                "eval:hand:d1",
                "eval:hand:d2",
                "eval:hand:d1",
                "eval:hand:d3",
                "eval:hand:d4",
                "eval:hand:d5",
                "eval:hand:d9",
            ],
        ),
        ("top", &["eval:hand:d1", "eval:hand:d2"]),
        ("none", &["eval:hand:d1"]),
    ])
}

fn run(dir: &PathBuf, retriever: Scripted, out: &str) -> (u8, Results) {
    let agent = RetrieverAgent::new(retriever)
        .base_dir(dir)
        .loader(|r| (r == "ref:four").then(|| "four".to_string()));
    let outcome = Harness::new()
        .base_dir(dir)
        .results_file(dir.join(out))
        .dataset("hand.json", METRICS)
        .agent(agent)
        .evaluate(args());
    (outcome.code, Results::read(&dir.join(out)).unwrap())
}

fn score(r: &Results, id: &str, metric: &str) -> f64 {
    let s = r.samples.iter().find(|s| s.id == id).unwrap();
    s.metrics
        .iter()
        .find(|m| m.name == metric)
        .unwrap()
        .score
        .unwrap()
}

#[test]
fn per_query_trials_score_hand_computed_values_after_a_clean_ingest() {
    let dir = scratch("values", DATASET);
    let retriever = good();
    let (code, r) = run(&dir, retriever.clone(), "r.json");
    assert_eq!(code, 0);
    assert_eq!(r.samples.len(), 3);
    assert!(r.samples.iter().any(|s| s.test_name == "hand::q_mixed"));
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9, "{a} != {b}");
    close(score(&r, "q_mixed", "hit_at_k"), 1.0);
    close(score(&r, "q_mixed", "recall_at_k"), 2.0 / 3.0);
    close(score(&r, "q_mixed", "precision_at_k"), 2.0 / 5.0);
    close(score(&r, "q_mixed", "mrr_at_k"), 0.5);
    let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
    let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
    close(score(&r, "q_mixed", "ndcg_at_k"), dcg / idcg);
    // topK 10 for this query: 1 relevant of 2 retrieved -> P@10 = 0.1 (Unrag's report).
    close(score(&r, "q_top", "precision_at_k"), 0.1);
    close(score(&r, "q_top", "mrr_at_k"), 1.0);
    // No relevant documents: 0 everywhere, and the query passes.
    close(score(&r, "q_none", "hit_at_k"), 0.0);
    let none = r.samples.iter().find(|s| s.id == "q_none").unwrap();
    assert_eq!(none.verdict, eval_runtime::results::Verdict::Pass);
    // The aggregate per dataset is in the results file.
    let d = &r.datasets[0];
    let recall = d.metrics.iter().find(|m| m.name == "recall_at_k").unwrap();
    close(recall.mean.unwrap(), (2.0 / 3.0 + 1.0 + 0.0) / 3.0);
    // Delete, then ingest (the loaderRef resolved), once, before any search.
    let calls = retriever.calls();
    assert_eq!(calls[0], "delete eval:hand:");
    assert_eq!(
        calls[1],
        "ingest eval:hand:d1=one,eval:hand:d2=two,eval:hand:d4=four"
    );
    assert_eq!(calls.iter().filter(|c| c.starts_with("ingest")).count(), 1);
    assert!(calls.contains(&"search top k=10".to_string()));
}

#[test]
fn a_prefix_outside_eval_is_refused_unless_allowed() {
    let dir = scratch("prefix", &DATASET.replace("eval:hand:", "prod:hand:"));
    let retriever = good();
    let agent = RetrieverAgent::new(retriever.clone()).base_dir(&dir);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r.json"))
        .dataset("hand.json", METRICS)
        .agent(agent)
        .evaluate(args());
    // Refused before any call, as the CLI and the attribute refuse it.
    assert_eq!(out.code, 2);
    let error = out.error.unwrap().to_string();
    assert!(
        error.contains("scopePrefix `prod:hand:` does not start with `eval:`"),
        "{error}"
    );
    assert!(!dir.join("r.json").exists(), "nothing ran");
    assert!(
        retriever.calls().is_empty(),
        "nothing deleted, nothing searched"
    );

    // Allowed in the declaration (harness builder), but not confirmed
    // outside it: no prompt is possible here, so still refused.
    let agent = RetrieverAgent::new(retriever.clone())
        .base_dir(&dir)
        .loader(|_| Some("x".into()));
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r2.json"))
        .dataset("hand.json", METRICS)
        .allow_custom_prefix(true)
        .agent(agent)
        .evaluate(args());
    assert_eq!(out.code, 2);
    let error = out.error.unwrap().to_string();
    assert!(
        error.contains(
            "hand.json: ingest would delete every document under scope `prod:hand:` (outside `eval:`); `allow_custom_prefix` allows it, and no prompt is possible here: confirm with EVAL_DELETE_SCOPES=prod:hand: (nothing was deleted)"
        ),
        "{error}"
    );
    assert!(retriever.calls().is_empty(), "nothing deleted");

    // Confirmed by EVAL_DELETE_SCOPES naming the scope: delete and ingest
    // under prod:.
    let confirmed = eval_runtime::Config::from_vars(
        |k| Ok((k == "EVAL_DELETE_SCOPES").then(|| "other:, prod:hand:".to_string())),
        &["EVAL_DELETE_SCOPES".to_string()],
    )
    .unwrap();
    let agent = RetrieverAgent::new(retriever.clone())
        .base_dir(&dir)
        .loader(|_| Some("x".into()));
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r2.json"))
        .dataset("hand.json", METRICS)
        .allow_custom_prefix(true)
        .config(confirmed)
        .agent(agent)
        .evaluate(args());
    assert_eq!(
        out.code, 101,
        "scores now fail (the script ranks eval: ids), but the run went ahead"
    );
    assert_eq!(retriever.calls()[0], "delete prod:hand:");
}

#[test]
fn unresolved_loader_refs_are_named_and_no_ingest_skips_ingest() {
    let dir = scratch("loader", DATASET);
    let retriever = good();
    let agent = RetrieverAgent::new(retriever.clone()).base_dir(&dir);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r.json"))
        .dataset("hand.json", METRICS)
        .agent(agent)
        .evaluate(args());
    assert_eq!(out.code, 101);
    let r = Results::read(&dir.join("r.json")).unwrap();
    let error = r.samples[0].error.as_deref().unwrap();
    assert!(
        error.contains("1 document(s) could not be loaded (no loader hook is set: set one with RetrieverAgent::loader, try_loader or loader_dir)"),
        "the library names its Rust API: {error}"
    );
    assert!(
        error.contains("hand.json:8: loaderRef `ref:four` (document `eval:hand:d4`)"),
        "{error}"
    );
    assert!(
        retriever.calls().iter().all(|c| !c.starts_with("delete")),
        "nothing deleted when a ref is missing"
    );

    let retriever = good();
    let agent = RetrieverAgent::new(retriever.clone())
        .base_dir(&dir)
        .no_ingest(true);
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r.json"))
        .dataset("hand.json", METRICS)
        .agent(agent)
        .evaluate(args());
    assert_eq!(out.code, 0);
    assert!(retriever.calls().iter().all(|c| c.starts_with("search")));
}

#[test]
fn a_diff_shows_the_query_that_regressed_and_the_baseline_gates() {
    let dir = scratch("diff", DATASET);
    let (_, before) = run(&dir, good(), "before.json");
    // The second run ranks q_top's document third instead of first.
    let worse = Scripted::new(&[
        (
            "mixed",
            &[
                "eval:hand:d1",
                "eval:hand:d2",
                "eval:hand:d1",
                "eval:hand:d3",
                "eval:hand:d4",
                "eval:hand:d5",
            ],
        ),
        ("top", &["eval:hand:d7", "eval:hand:d8", "eval:hand:d1"]),
        ("none", &["eval:hand:d1"]),
    ]);
    let (_, after) = run(&dir, worse.clone(), "after.json");
    let d = diff::diff(&before, &after, 0.001);
    // One query of three moved: evidence, listed per sample...
    let moved: Vec<(String, String)> = d
        .worse()
        .iter()
        .map(|c| (c.id.clone(), c.metric.clone()))
        .collect();
    assert_eq!(
        moved,
        [
            ("q_top".to_string(), "mrr_at_k".to_string()),
            ("q_top".to_string(), "ndcg_at_k".to_string())
        ]
    );
    let mrr = d.worse()[0];
    assert!((mrr.delta.unwrap() - (1.0 / 3.0 - 1.0)).abs() < 1e-9);
    assert!(d.better().is_empty());
    assert!(
        d.render()
            .contains("hand::q_top [hand::q_top] mrr_at_k: 1.0000 -> 0.3333 (-0.6667)"),
        "{}",
        d.render()
    );
    // ...but three pairs cannot tell a drop of one query from noise: the
    // comparison is inconclusive, not a regression, and says what would
    // decide it.
    assert!(!d.regressed(), "{}", d.render());
    let mrr = d
        .comparisons
        .iter()
        .find(|c| c.metric == "mrr_at_k")
        .unwrap();
    assert_eq!(
        mrr.outcome,
        eval_runtime::__cli::diff::Outcome::Inconclusive
    );
    assert!(mrr.needed.unwrap().samples.unwrap() > 3, "{mrr:?}");
    assert!(
        d.render().contains("samples would be needed"),
        "{}",
        d.render()
    );
    // Within epsilon nothing moved.
    assert!(diff::diff(&before, &after, 0.9).worse().is_empty());

    // The harness's baseline gate: the first run writes it, a worse run fails.
    let baseline = dir.join("baseline.json");
    let gate = |retriever: Scripted| {
        Harness::new()
            .base_dir(&dir)
            .results_file(dir.join("gate.json"))
            .dataset("hand.json", METRICS)
            .baseline(&baseline, 0.01)
            .agent(
                RetrieverAgent::new(retriever)
                    .base_dir(&dir)
                    .loader(|_| Some("4".into())),
            )
            .evaluate(args())
            .code
    };
    assert_eq!(gate(good()), 0);
    assert!(baseline.exists());
    assert_eq!(gate(good()), 0, "no change, no regression");
    assert_eq!(
        gate(worse.clone()),
        0,
        "one query of three: inconclusive, not a regression"
    );
    // A query that can no longer be scored is a regression.
    // A query that can no longer be scored fails its test, and against the
    // baseline it is lost coverage: a regression.
    assert_eq!(gate(good().down_on("top")), 101);
    let lost = diff::diff(
        &Results::read(&baseline).unwrap(),
        &Results::read(&dir.join("gate.json")).unwrap(),
        0.01,
    );
    assert!(lost.regressed(), "{}", lost.render());
    // Accepting on purpose keeps the old baseline as a backup.
    let backup = eval_runtime::__cli::diff::accept(&after, &baseline)
        .unwrap()
        .unwrap();
    assert!(backup.exists());
    assert_eq!(Results::read(&baseline).unwrap().samples, after.samples);
}

#[test]
fn the_datasets_own_thresholds_gate_the_harness_run() {
    let gated = DATASET.replace(
        "\"scopePrefix\": \"eval:hand:\"}",
        "\"scopePrefix\": \"eval:hand:\", \"thresholds\": {\"min\": {\"recallAtK\": 0.9}}}",
    );
    let dir = scratch("thresholds", &gated);
    let (code, r) = run(&dir, good(), "r.json");
    // recall mean (2/3 + 1 + 0) / 3 = 0.556 < 0.9: every query passes, the gate does not.
    assert_eq!(code, 1);
    let recall = r.datasets[0]
        .metrics
        .iter()
        .find(|m| m.name == "recall_at_k")
        .unwrap();
    let gate = recall.gate.as_ref().unwrap();
    assert!(!gate.passed);
    assert_eq!(gate.gate.threshold, 0.9);
}

#[test]
fn epsilon_is_inclusive_and_vanished_metrics_are_worse() {
    let dir = scratch("epsilon", DATASET);
    let (_, before) = run(&dir, good(), "a.json");
    let mut after = before.clone();
    let q = after.samples.iter_mut().find(|s| s.id == "q_top").unwrap();
    let mrr = q.metrics.iter_mut().find(|m| m.name == "mrr_at_k").unwrap();
    mrr.score = Some(0.95);
    assert!(
        diff::diff(&before, &after, 0.05).worse().is_empty(),
        "1.0 -> 0.95 is within 0.05"
    );
    assert_eq!(diff::diff(&before, &after, 0.04).worse().len(), 1);
    assert!(diff::diff(&before, &after, 0.04).regressions().is_empty());
    let q = after.samples.iter_mut().find(|s| s.id == "q_top").unwrap();
    q.metrics.retain(|m| m.name != "ndcg_at_k");
    let d = diff::diff(&before, &after, 0.05);
    // A metric scored before and not now is lost coverage: a regression.
    assert_eq!(d.regressions().len(), 1);
    let eval_runtime::__cli::diff::Regression::Metric(lost) = d.regressions()[0] else {
        panic!("{d:?}")
    };
    assert_eq!((lost.metric.as_str(), lost.lost), ("ndcg_at_k", 1));
    assert_eq!(d.worse()[0].new, None);
}

/// Ingests slowly (longer than the sample timeout) and counts deletes.
#[derive(Clone, Default)]
struct Slow {
    deletes: Arc<Mutex<usize>>,
}

impl Retriever for Slow {
    fn delete_prefix<'a>(&'a self, _prefix: &'a str) -> RetrieverFuture<'a, u64> {
        *self.deletes.lock().unwrap() += 1;
        Box::pin(async { Ok(0) })
    }
    fn ingest<'a>(&'a self, _documents: &'a [IngestDocument]) -> RetrieverFuture<'a, ()> {
        Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            Ok(())
        })
    }
    fn search<'a>(
        &'a self,
        _query: &'a str,
        _prefix: &'a str,
        _k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

#[test]
fn an_ingest_cut_off_by_the_timeout_is_not_restarted_by_every_query() {
    let dir = scratch("slow", DATASET);
    let slow = Slow::default();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r.json"))
        .dataset("hand.json", METRICS)
        .timeout(std::time::Duration::from_millis(200))
        .concurrency(1)
        .agent(
            RetrieverAgent::new(slow.clone())
                .base_dir(&dir)
                .loader(|_| Some("x".into())),
        )
        .evaluate(args());
    assert_eq!(out.code, 101);
    assert_eq!(
        *slow.deletes.lock().unwrap(),
        1,
        "one delete, not one per query"
    );
    let r = Results::read(&dir.join("r.json")).unwrap();
    let errors: Vec<&str> = r
        .samples
        .iter()
        .filter_map(|s| s.error.as_deref())
        .collect();
    assert_eq!(errors.len(), 3);
    assert!(
        errors
            .iter()
            .filter(|e| e.contains("was cut off by the first query's sample timeout"))
            .count()
            == 2,
        "{errors:?}"
    );
}

/// A retriever that answers the `mixed` query after 150 ms.
#[derive(Clone)]
struct SlowMixed(Scripted);

impl Retriever for SlowMixed {
    fn delete_prefix<'a>(&'a self, prefix: &'a str) -> RetrieverFuture<'a, u64> {
        self.0.delete_prefix(prefix)
    }
    fn ingest<'a>(&'a self, documents: &'a [IngestDocument]) -> RetrieverFuture<'a, ()> {
        self.0.ingest(documents)
    }
    fn search<'a>(
        &'a self,
        query: &'a str,
        prefix: &'a str,
        k: usize,
    ) -> RetrieverFuture<'a, Vec<Hit>> {
        Box::pin(async move {
            if query == "mixed" {
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
            self.0.search(query, prefix, k).await
        })
    }
}

#[test]
fn unrags_p95_total_ms_threshold_gates_the_95th_percentile_of_latency() {
    for (max_ms, code) in [(50, 1), (60_000, 0)] {
        let gated = DATASET.replace(
            "\"scopePrefix\": \"eval:hand:\"}",
            &format!(
                "\"scopePrefix\": \"eval:hand:\", \"thresholds\": {{\"max\": {{\"p95TotalMs\": {max_ms}}}}}}}"
            ),
        );
        let dir = scratch(&format!("p95-{max_ms}"), &gated);
        let agent = RetrieverAgent::new(SlowMixed(good()))
            .base_dir(&dir)
            .loader(|r| (r == "ref:four").then(|| "four".to_string()));
        let outcome = Harness::new()
            .base_dir(&dir)
            .results_file(dir.join("r.json"))
            .dataset("hand.json", METRICS)
            .agent(agent)
            .evaluate(args());
        let r = Results::read(&dir.join("r.json")).unwrap();
        // Three queries, one of them ≥ 150 ms: with Unrag's quantile
        // (h = 2·0.95 = 1.9), p95 = x₍₁₎ + 0.9·(x₍₂₎ − x₍₁₎) at least 0.9 of the slow one's time.
        let mut ms: Vec<f64> = r.samples.iter().map(|s| s.latency_ms).collect();
        ms.sort_by(f64::total_cmp);
        let p95 = ms[1] + 0.9 * (ms[2] - ms[1]);
        assert!(ms[2] >= 150.0, "{ms:?}");
        let latency = r.datasets[0]
            .metrics
            .iter()
            .find(|m| m.name == "latency_ms")
            .expect("the gate's metric is summarised");
        let gate = latency.gate.as_ref().unwrap();
        assert_eq!(
            gate.gate.to_string(),
            format!("p95(latency_ms) <= {max_ms}")
        );
        assert!(gate.judged);
        assert!(
            (gate.margin.unwrap() + max_ms as f64 - p95).abs() < 1e-6,
            "{gate:?} {ms:?}"
        );
        assert_eq!(gate.passed, code == 0, "{gate:?}");
        assert_eq!(outcome.code, code);
        let _ = std::fs::remove_dir_all(dir);
    }
}
