//! The main job: every sample of the example datasets in `examples/evals/` is
//! a test, run against the agent at `EVAL_AGENT_URL` — or, when that is not
//! set, against the bundled demo agent started here on 127.0.0.1:0 (the tool
//! datasets through its OpenAI-compatible `/v1/chat/completions`, streamed).
//!
//! ```text
//! cargo test --test evals                 # everything
//! cargo test --test evals -- advanced     # samples tagged `advanced`
//! cargo test --test evals -- faq::        # one dataset
//! ```

use std::sync::OnceLock;

use eval_runtime::prelude::*;

/// One agent for the whole test process (its connection pool is shared).
fn agent() -> eval_runtime::Result<&'static HttpAgent> {
    static AGENT: OnceLock<Result<HttpAgent, String>> = OnceLock::new();
    AGENT
        .get_or_init(|| {
            if std::env::var_os("EVAL_AGENT_URL").is_some() {
                return HttpAgent::from_env().map_err(|e| e.to_string());
            }
            let config = eval_examples::demo::DemoConfig::from_env().map_err(|e| e.to_string())?;
            let server = eval_examples::demo::spawn(config)
                .map_err(|e| format!("cannot start the demo agent: {e}"))?;
            let agent = HttpAgent::new(&server.url()).map_err(|e| e.to_string());
            // The server lives as long as the test process.
            std::mem::forget(server);
            agent
        })
        .as_ref()
        .map_err(eval_runtime::Error::msg)
}

#[eval_dataset("examples/evals/rag.jsonl", metrics(contains >= 1.0, partial_match >= 0.2))]
async fn rag(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

#[eval_dataset("examples/evals/conversations.jsonl", metrics(contains >= 1.0))]
async fn conversations(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

#[eval_dataset("examples/evals/faq.csv", metrics(contains >= 1.0, regex))]
async fn faq(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

// Metrics and thresholds from the agentspec manifest instead of the attribute.
#[eval_dataset(manifest = "examples/agent.yaml", dataset = "faq")]
async fn faq_from_manifest(sample: &Sample) -> eval_runtime::Result<Response> {
    agent()?.respond(sample).await
}

/// The agent spoken to through the OpenAI chat protocol, streaming, with the
/// demo agent's tools (a calculator and a lookup over its corpus) offered:
/// `EVAL_AGENT_URL` (then `EVAL_AGENT_MODEL` and `EVAL_AGENT_PROTOCOL=openai`
/// say how), else the demo agent's `/v1/chat/completions`.
fn chat_agent() -> eval_runtime::Result<&'static HttpAgent> {
    static AGENT: OnceLock<Result<HttpAgent, String>> = OnceLock::new();
    AGENT
        .get_or_init(|| {
            let tools = eval_examples::demo::tool_definitions();
            if std::env::var_os("EVAL_AGENT_URL").is_some() {
                return HttpAgent::from_env()
                    .map(|a| a.tools(tools))
                    .map_err(|e| e.to_string());
            }
            let base = agent()
                .map_err(|e| e.to_string())?
                .url()
                .trim_end_matches('/')
                .to_string();
            HttpAgent::new(&format!("{base}/v1/chat/completions"))
                .map(|a| {
                    a.model(eval_examples::demo::MODEL_NAME)
                        .stream(true)
                        .tools(tools)
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(eval_runtime::Error::msg)
}

// Tool use (deepeval / ragas shape: `expected_tools`), through the OpenAI
// protocol with streaming: the calls the agent made, their arguments, the
// answer, and the time to its first token.
#[eval_dataset(
    "examples/evals/tools.jsonl",
    metrics(
        tool_correctness(parameters = true) >= 1.0,
        tool_call_accuracy,
        tool_call_f1 >= 1.0,
        contains,
        ttft_ms <= 5000
    ),
    gate(p95(latency_ms) <= 5000)
)]
async fn tools(sample: &Sample) -> eval_runtime::Result<Response> {
    chat_agent()?.respond(sample).await
}

// letta-evals' "Tool Usage Testing": `ground_truth` names the tool to call.
#[eval_dataset("examples/evals/tools_letta.jsonl", metrics(tool_called))]
async fn tool_usage(sample: &Sample) -> eval_runtime::Result<Response> {
    chat_agent()?.respond(sample).await
}

/// The demo agent's retrieval endpoints (`/retrieval/*`), for the retrieval
/// dataset: its documents are ingested once under `eval:support:`.
fn retriever() -> eval_runtime::Result<&'static eval_runtime::retrieval::RetrieverAgent> {
    use eval_runtime::retrieval::{HttpRetriever, RetrieverAgent};
    static RETRIEVER: OnceLock<Result<RetrieverAgent, String>> = OnceLock::new();
    RETRIEVER
        .get_or_init(|| {
            let http = match std::env::var_os("EVAL_RETRIEVER_URL") {
                Some(_) => HttpRetriever::from_env(),
                None => {
                    let base = agent()
                        .map_err(|e| e.to_string())?
                        .url()
                        .trim_end_matches('/')
                        .to_string();
                    HttpRetriever::new(&format!("{base}/retrieval"))
                }
            };
            http.map(RetrieverAgent::new).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(eval_runtime::Error::msg)
}

// One test per query (Unrag, seed 004), held to per-query rank thresholds.
#[eval_dataset("examples/evals/support.json", metrics(recall_at_k >= 1.0, mrr_at_k >= 0.5, hit_at_k))]
async fn support(sample: &Sample) -> eval_runtime::Result<Response> {
    retriever()?.search(sample).await
}
