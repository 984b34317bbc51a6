//! Seed 004 (Unrag) `retrieve+rerank` against servers that speak the wire
//! formats: the retriever contract of this crate (`delete`, `ingest`,
//! `search`) and a rerank route speaking Cohere's Rerank API, as Unrag's
//! reranker battery calls it (Cohere API reference, "Rerank V2": `POST
//! /v2/rerank` with `{model, query, documents, top_n}`, answered `{id,
//! results: [{index, relevance_score}], meta}`, most relevant first). The
//! reranker's order and scores reach the results file.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::common::{self, Reply};

use eval_runtime::Harness;
use eval_runtime::results::Results;
use eval_runtime::retrieval::{HttpRetriever, RetrieverAgent};

const DATASET: &str = r#"{
  "version": "1",
  "id": "rr",
  "defaults": {"topK": 2, "scopePrefix": "eval:rr:", "mode": "retrieve+rerank", "rerankTopK": 3},
  "documents": [
    {"sourceId": "eval:rr:security", "content": "Account security best practices: use a strong password."},
    {"sourceId": "eval:rr:architecture", "content": "User authentication architecture overview."},
    {"sourceId": "eval:rr:reset", "content": "To reset your password, open Settings and choose Reset password."}
  ],
  "queries": [
    {"id": "q", "query": "how do I reset my password?", "relevant": {"sourceIds": ["eval:rr:reset"]}}
  ]
}"#;

/// The retriever: vector search ranks the reset page last (the seed's
/// "reranking helps" case). The reranker, as Cohere answers: the reset
/// page (index 2) first, then the security page (index 0).
fn servers() -> common::Server {
    common::serve_detached(|_, head, body| {
        let path = head.split(' ').nth(1).unwrap_or_default();
        let reply = match path {
            p if p.ends_with("/retrieval/delete") => json!({"deleted": 0}),
            p if p.ends_with("/retrieval/ingest") => {
                json!({"ingested": body["documents"].as_array().map_or(0, Vec::len)})
            }
            p if p.ends_with("/retrieval/search") => json!({"results": [
                {"sourceId": "eval:rr:security", "score": 0.91, "content": "Account security best practices: use a strong password."},
                {"sourceId": "eval:rr:architecture", "score": 0.88, "content": "User authentication architecture overview."},
                {"sourceId": "eval:rr:reset", "score": 0.80, "content": "To reset your password, open Settings and choose Reset password."}
            ]}),
            "/v2/rerank" => json!({
                "id": "07734bd2-2473-4f07-94e1-0d9f0e6843cf",
                "results": [
                    {"index": 2, "relevance_score": 0.98},
                    {"index": 0, "relevance_score": 0.41}
                ],
                "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}}
            }),
            _ => return Reply::json(404, "{}"),
        };
        Reply::json(200, reply.to_string())
    })
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("eval-rerank-cohere-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rr.json"), DATASET).unwrap();
    dir
}

#[test]
fn rerank_mode_asks_a_cohere_rerank_route_and_its_order_and_scores_reach_the_results() {
    let dir = scratch("order");
    let server = servers();
    let retriever = HttpRetriever::new(&format!("{}/retrieval", server.url))
        .unwrap()
        .cohere_rerank(
            &format!("{}/v2/rerank", server.url),
            "rerank-v3.5",
            Some(eval_runtime::Secret::new("co-test-key")),
        )
        .unwrap();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r.json"))
        .dataset("rr.json", "hit_at_k, mrr_at_k >= 1.0")
        .agent(RetrieverAgent::new(retriever).base_dir(&dir))
        .evaluate(common::harness_args(&["harness", "-q"]));
    let r = Results::read(&dir.join("r.json")).unwrap();
    let s = &r.samples[0];
    assert_eq!(s.error, None, "{s:?}");
    assert_eq!(
        s.retrieved_ids,
        ["eval:rr:reset", "eval:rr:security"],
        "the reranker's order, cut to topK"
    );
    assert_eq!(s.retrieved_scores, [0.98, 0.41], "the reranker's scores");
    // Reranked, the relevant page is first: mrr 1.0 passes.
    assert_eq!(out.code, 0, "{s:?}");

    // The request, as Cohere documents it: the candidates' texts (rerankTopK
    // of them, in search order), top_n = topK, the key as a bearer token.
    let requests = server.requests.lock().unwrap();
    let (head, body): &(String, Value) = requests
        .iter()
        .find(|(h, _)| h.starts_with("POST /v2/rerank "))
        .expect("a rerank request");
    assert_eq!(
        body,
        &json!({
            "model": "rerank-v3.5",
            "query": "how do I reset my password?",
            "documents": [
                "Account security best practices: use a strong password.",
                "User authentication architecture overview.",
                "To reset your password, open Settings and choose Reset password."
            ],
            "top_n": 2
        })
    );
    assert!(
        head.lines()
            .any(|l| l.eq_ignore_ascii_case("authorization: Bearer co-test-key")),
        "{head}"
    );
    // The search asked for rerankTopK candidates.
    let search = requests
        .iter()
        .find(|(h, _)| h.contains("/retrieval/search"))
        .expect("a search");
    assert_eq!(search.1["topK"], 3);
}

#[test]
fn a_rerank_answer_naming_no_sent_document_is_a_clear_error() {
    let dir = scratch("bad-index");
    let server = common::serve_detached(|_, head, _| {
        let path = head.split(' ').nth(1).unwrap_or_default();
        let reply = match path {
            "/v2/rerank" => json!({"results": [{"index": 7, "relevance_score": 0.9}]}),
            p if p.ends_with("/search") => json!({"results": [
                {"sourceId": "eval:rr:reset", "score": 0.8, "content": "reset"}
            ]}),
            _ => json!({"deleted": 0, "ingested": 3}),
        };
        Reply::json(200, reply.to_string())
    });
    let retriever = HttpRetriever::new(&format!("{}/retrieval", server.url))
        .unwrap()
        .cohere_rerank(&format!("{}/v2/rerank", server.url), "rerank-v3.5", None)
        .unwrap();
    Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("r.json"))
        .dataset("rr.json", "hit_at_k")
        .agent(RetrieverAgent::new(retriever).base_dir(&dir))
        .evaluate(common::harness_args(&["harness", "-q"]));
    let r = Results::read(&dir.join("r.json")).unwrap();
    let error = r.samples[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("results[0].index 7 is not one of the 1 documents sent"),
        "{error}"
    );
}
