//! Seed 004 (Unrag) from the command: a `loaderRef` without `--loader-dir`
//! is an error that names the flag to pass, not the Rust API
//! (`RetrieverAgent::loader`, what the library's error names); rerank mode
//! against a rerank route speaking Cohere's Rerank API.

use crate::common::*;

#[test]
fn a_loader_ref_without_loader_dir_names_the_flag() {
    let dir = scratch("loader-hint");
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(
        dir.join("docs/refunds.md"),
        "Refunds are accepted within 30 days of purchase.",
    )
    .unwrap();
    std::fs::write(
        dir.join("ld.json"),
        r#"{"version": "1", "id": "ld", "defaults": {"topK": 2, "scopePrefix": "eval:ld:"},
  "documents": [{"sourceId": "eval:ld:refunds", "loaderRef": "docs/refunds.md"}],
  "queries": [{"id": "q", "query": "When are refunds accepted?", "relevant": {"sourceIds": ["eval:ld:refunds"]}}]}"#,
    )
    .unwrap();
    let url = format!("{}/retrieval", demo_url().trim_end_matches('/'));
    let out = evals(&dir, &["evaluate", "ld.json", "--url", &url]);
    let (stdout, stderr) = text(&out);
    let all = format!("{stdout}{stderr}");
    assert_ne!(code(&out), 0, "{all}");
    assert!(
        all.contains("1 document(s) could not be loaded (no loader hook is set: pass --loader-dir DIR, the directory its loaderRef paths are relative to)"),
        "{all}"
    );
    assert!(
        all.contains("loaderRef `docs/refunds.md` (document `eval:ld:refunds`)"),
        "{all}"
    );
    assert!(!all.contains("RetrieverAgent::"), "{all}");
    // With the flag, the same file runs.
    let out = evals(
        &dir,
        &["evaluate", "ld.json", "--url", &url, "--loader-dir", "."],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
}

/// Seed 004's `retrieve+rerank` from the command, with the reranker a
/// service speaking Cohere's Rerank API (`EVAL_RERANK_URL`; Cohere API
/// reference, "Rerank V2": `{model, query, documents, top_n}` →
/// `{results: [{index, relevance_score}]}`): its order and scores are in
/// the results.
#[test]
fn rerank_mode_from_the_command_asks_the_rerank_url() {
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let log = bodies.clone();
    let url = crate::common::loopback::serve(move |r| {
        log.lock().unwrap().push((r.path.clone(), r.text()));
        crate::common::loopback::Reply::ok(&match r.path.as_str() {
            "/retrieval/search" => serde_json::json!({"results": [
                {"sourceId": "eval:rr:security", "score": 0.9, "content": "Use a strong password."},
                {"sourceId": "eval:rr:reset", "score": 0.8, "content": "Open Settings to reset your password."}
            ]}),
            "/v2/rerank" => serde_json::json!({
                "id": "r-1",
                "results": [{"index": 1, "relevance_score": 0.97}],
                "meta": {"billed_units": {"search_units": 1}}
            }),
            _ => serde_json::json!({"deleted": 0, "ingested": 2}),
        })
    });
    let dir = scratch("rerank-command");
    std::fs::write(
        dir.join("rr.json"),
        r#"{"version": "1", "id": "rr", "defaults": {"topK": 1, "scopePrefix": "eval:rr:", "mode": "retrieve+rerank", "rerankTopK": 2},
  "documents": [{"sourceId": "eval:rr:security", "content": "Use a strong password."},
                {"sourceId": "eval:rr:reset", "content": "Open Settings to reset your password."}],
  "queries": [{"id": "q", "query": "how do I reset my password?", "relevant": {"sourceIds": ["eval:rr:reset"]}}]}"#,
    )
    .unwrap();
    let rerank = format!("{url}/v2/rerank");
    let out = evals_with(
        &dir,
        &[
            "evaluate",
            "rr.json",
            "--url",
            &format!("{url}/retrieval"),
            "--json",
        ],
        &[
            ("EVAL_RERANK_URL", rerank.as_str()),
            ("EVAL_RERANK_API_KEY", "co-secret-key"),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(!format!("{stdout}{stderr}").contains("co-secret-key"));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let s = &v["samples"][0];
    assert_eq!(
        s["retrieved_ids"],
        serde_json::json!(["eval:rr:reset"]),
        "{s}"
    );
    assert_eq!(s["retrieved_scores"], serde_json::json!([0.97]), "{s}");
    let bodies = bodies.lock().unwrap();
    let (_, body) = bodies
        .iter()
        .find(|(p, _)| p == "/v2/rerank")
        .expect("a rerank request");
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({
            "model": "rerank-v3.5",
            "query": "how do I reset my password?",
            "documents": ["Use a strong password.", "Open Settings to reset your password."],
            "top_n": 1
        })
    );
}
