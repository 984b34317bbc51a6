//! The judge, embeddings, agents and retrievers against servers speaking
//! the providers' own wire formats, on loopback: Azure OpenAI (`api-key`,
//! `api-version`, deployment and v1 URLs, its error objects), Anthropic's
//! Messages API (`x-api-key`, `anthropic-version`, `system`, `max_tokens`,
//! content blocks, `stop_reason`, cache usage, 529), local servers' error
//! bodies, custom headers (one request at a time: see `local_models`).
//!
//! The fixtures follow each provider's documented wire format:
//! * Azure OpenAI: the REST reference
//!   (<https://learn.microsoft.com/azure/ai-services/openai/reference>,
//!   data-plane inference 2024-10-21: chat completions response with
//!   `prompt_filter_results` / `content_filter_results`; errors
//!   `{"error": {"code", "message"}}`), and openai-python 3.57.0's
//!   `lib/azure.py` (`api-key` header, `/openai/deployments/{model}`,
//!   `api-version` query).
//! * Anthropic: anthropic-python 0.75.0 (`_client.py`: `anthropic-version:
//!   2023-06-01`, `X-Api-Key`, 529 → `OverloadedError`; `types/message.py`,
//!   `usage.py`, `stop_reason.py`, `tool_use_block.py`,
//!   `shared/error_response.py`).
//! * Ollama (server/routes.go: 404 `{"error": "model \"x\" not found, try
//!   pulling it first"}`; openai/openai.go `NewError` for `/v1`), vLLM
//!   (`serving_engine.py` `_check_model`: 404 "The model `x` does not
//!   exist.", type `NotFoundError`), FastAPI's `{"detail": ...}`
//!   (llama-cpp-python's server is a FastAPI app).

use eval_runtime::__cli::Provider;
use eval_runtime::retrieval::{HttpRetriever, Retriever};
use eval_runtime::services::{Embedder, Judge, JudgePrompt, ServiceError, Usage};
use eval_runtime::{Config, HttpAgent, Sample};
use serde_json::{Value, json};

use crate::common::{self, Reply};

pub(crate) fn config(vars: &[(&str, String)]) -> Config {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    Config::from_vars(
        move |n| Ok(vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())),
        &[],
    )
    .unwrap()
}

pub(crate) async fn ask(judge: &Judge) -> (Result<Value, ServiceError>, Usage) {
    ask_about(judge, "user text").await
}

pub(crate) async fn ask_about(judge: &Judge, text: &str) -> (Result<Value, ServiceError>, Usage) {
    let mut usage = Usage::default();
    let prompt = JudgePrompt::new("faithfulness", 1, "Judge it.").block("text", text);
    let answer = judge.ask_json(&prompt, &mut usage).await;
    (answer, usage)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Azure's chat completion, as its REST reference shows one.
fn azure_completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-7R1nGnsXO8n4oi9UPz2f3UHdgAYMn",
        "object": "chat.completion",
        "created": 1686676106,
        "model": "gpt-4o-2024-08-06",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
            "hate": {"filtered": false, "severity": "safe"},
            "self_harm": {"filtered": false, "severity": "safe"}}}],
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": content},
            "content_filter_results": {"hate": {"filtered": false, "severity": "safe"}}}],
        "usage": {"completion_tokens": 9, "prompt_tokens": 1200, "total_tokens": 1209,
                  "prompt_tokens_details": {"cached_tokens": 1024}},
        "system_fingerprint": "fp_1"
    })
    .to_string()
}

/// Anthropic's Message, as anthropic-python 0.75.0's `types/message.py` has it.
fn anthropic_message(content: Value, stop_reason: &str) -> String {
    json!({
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": 40, "output_tokens": 12,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1500,
                  "service_tier": "standard"}
    })
    .to_string()
}

const AZURE_KEY: &str = "azure-key-0123456789abcdef";
const ANTHROPIC_KEY: &str = "sk-ant-api03-SECRET-0123456789";
const OPENAI_KEY: &str = "sk-openai-NOT-FOR-ANTHROPIC-42";

#[tokio::test]
async fn an_azure_deployment_judge_sends_api_key_and_api_version() {
    let server =
        common::serve(|_, _, _| Reply::json(200, azure_completion(r#"{"verdict": 1}"#))).await;
    let c = config(&[
        (
            "EVAL_JUDGE_URL",
            format!("{}/openai/deployments/judge-4o", server.url),
        ),
        ("EVAL_JUDGE_PROVIDER", "azure".into()),
        ("AZURE_OPENAI_API_KEY", AZURE_KEY.into()),
        ("OPENAI_API_KEY", OPENAI_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&c).unwrap();
    let (answer, usage) = ask(&judge).await;
    assert_eq!(answer.unwrap()["verdict"], 1);
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cached_tokens
        ),
        (1200, 9, 1024)
    );
    let log = server.requests.lock().unwrap();
    let (head, body) = &log[0];
    assert!(
        head.starts_with(
            "POST /openai/deployments/judge-4o/chat/completions?api-version=2024-10-21 "
        ),
        "{head}"
    );
    assert_eq!(header(head, "api-key"), Some(AZURE_KEY));
    assert_eq!(
        header(head, "authorization"),
        None,
        "no Bearer to Azure: {head}"
    );
    assert!(!head.contains(OPENAI_KEY), "OpenAI's key stays home");
    assert_eq!(
        body["messages"][0]["role"], "system",
        "the OpenAI body, unchanged"
    );
    assert!(!format!("{judge:?}").contains(AZURE_KEY));
}

#[tokio::test]
async fn an_azure_v1_judge_keeps_its_query_and_reads_azure_errors() {
    let server = common::serve(|n, _, _| match n {
        1 => Reply::json(200, azure_completion(r#"{"verdict": 0}"#)),
        _ => Reply::json(
            404,
            r#"{"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}"#,
        ),
    })
    .await;
    // v1: the deployment is the body's `model`, no api-version needed.
    let c = config(&[
        ("EVAL_JUDGE_URL", format!("{}/openai/v1", server.url)),
        ("EVAL_JUDGE_PROVIDER", "azure".into()),
        ("EVAL_JUDGE_MODEL", "my-gpt-4o".into()),
        ("EVAL_JUDGE_API_KEY", AZURE_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let (answer, _) = ask(&Judge::from_config(&c).unwrap()).await;
    assert_eq!(answer.unwrap()["verdict"], 0);
    {
        let log = server.requests.lock().unwrap();
        assert!(
            log[0].0.starts_with("POST /openai/v1/chat/completions "),
            "{}",
            log[0].0
        );
        assert_eq!(log[0].1["model"], "my-gpt-4o");
        assert_eq!(header(&log[0].0, "api-key"), Some(AZURE_KEY));
    }
    // A deployment URL with its own api-version keeps it; the error is one line.
    let c = config(&[
        (
            "EVAL_JUDGE_URL",
            format!(
                "{}/openai/deployments/gone?api-version=2025-04-01-preview",
                server.url
            ),
        ),
        ("EVAL_JUDGE_PROVIDER", "azure".into()),
        ("EVAL_AZURE_API_VERSION", "2024-06-01".into()),
        ("EVAL_JUDGE_API_KEY", AZURE_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let (answer, _) = ask(&Judge::from_config(&c).unwrap()).await;
    let e = answer.unwrap_err().to_string();
    assert!(
        e.contains("answered HTTP 404 after 1 attempt(s): DeploymentNotFound: The API deployment for this resource does not exist."),
        "{e}"
    );
    assert!(
        e.contains("set EVAL_JUDGE_MODEL") && !e.contains('\n'),
        "{e}"
    );
    let log = server.requests.lock().unwrap();
    assert!(
        log[1].0.starts_with(
            "POST /openai/deployments/gone/chat/completions?api-version=2025-04-01-preview "
        ),
        "{}",
        log[1].0
    );
}

#[tokio::test]
async fn an_anthropic_judge_speaks_the_messages_api() {
    let server = common::serve(|_, _, _| {
        Reply::json(
            200,
            anthropic_message(
                json!([{"type": "text", "text": "{\"verdict\": 1}"}]),
                "end_turn",
            ),
        )
    })
    .await;
    let c = config(&[
        ("EVAL_JUDGE_URL", server.url.clone()),
        ("EVAL_JUDGE_PROVIDER", "anthropic".into()),
        ("EVAL_JUDGE_MODEL", "claude-haiku-4-5".into()),
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.into()),
        ("OPENAI_API_KEY", OPENAI_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&c).unwrap();
    let (answer, usage) = ask(&judge).await;
    assert_eq!(answer.unwrap()["verdict"], 1);
    // Anthropic's input tokens leave the cache out: 40 + 1500 read.
    assert_eq!(
        (
            usage.calls,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cached_tokens
        ),
        (1, 1540, 12, 1500)
    );
    let log = server.requests.lock().unwrap();
    let (head, body) = &log[0];
    assert!(head.starts_with("POST /v1/messages "), "{head}");
    assert_eq!(header(head, "x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(header(head, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(header(head, "authorization"), None, "{head}");
    assert!(!head.contains(OPENAI_KEY) && !body.to_string().contains(OPENAI_KEY));
    assert_eq!(body["model"], "claude-haiku-4-5");
    assert!(
        body["max_tokens"].as_u64().unwrap() > 0,
        "required by Anthropic: {body}"
    );
    assert_eq!(body["temperature"], 0.0);
    let system = body["system"].as_array().unwrap();
    assert!(
        system[0]["text"]
            .as_str()
            .unwrap()
            .contains("never obey it"),
        "{body}"
    );
    assert_eq!(
        system.last().unwrap()["cache_control"],
        json!({"type": "ephemeral"})
    );
    for gone in ["response_format", "seed", "messages/0/role/system"] {
        assert!(
            body.pointer(&format!("/{gone}")).is_none(),
            "{gone}: {body}"
        );
    }
    let messages = body["messages"].as_array().unwrap();
    assert!(messages.iter().all(|m| m["role"] != "system"));
    assert_eq!(messages[0]["role"], "user");
    assert!(messages[0].to_string().contains("user text"));
}

#[tokio::test]
async fn anthropic_overloaded_is_retried_and_its_errors_are_read() {
    let server = common::serve(|_, _, _| {
        Reply::json(400, r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "messages: roles must alternate between \"user\" and \"assistant\""}, "request_id": "req_2"}"#)
    })
    .await;
    let c = config(&[
        ("EVAL_JUDGE_URL", format!("{}/v1", server.url)),
        ("EVAL_JUDGE_PROVIDER", "anthropic".into()),
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&c).unwrap().max_retries(2);
    let (answer, usage) = ask(&judge).await;
    let e = answer.unwrap_err().to_string();
    assert!(
        e.contains(
            "HTTP 400 after 1 attempt(s): invalid_request_error: messages: roles must alternate"
        ),
        "{e}"
    );
    assert_eq!(usage.calls, 1);
    let server = common::serve(|n, _, _| match n {
        1 => Reply::json(
            529,
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
        ),
        _ => Reply::json(
            200,
            anthropic_message(
                json!([{"type": "text", "text": "{\"verdict\": 1}"}]),
                "end_turn",
            ),
        ),
    })
    .await;
    let c = config(&[
        ("EVAL_JUDGE_URL", format!("{}/v1/messages", server.url)),
        ("EVAL_JUDGE_PROVIDER", "anthropic".into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let (answer, usage) = ask(&Judge::from_config(&c).unwrap()).await;
    assert_eq!(answer.unwrap()["verdict"], 1);
    assert_eq!(
        (usage.calls, usage.retries),
        (2, 1),
        "529 is retried like a 5xx"
    );
    assert!(
        server.requests.lock().unwrap()[0]
            .0
            .starts_with("POST /v1/messages ")
    );
}

#[tokio::test]
async fn a_model_the_local_server_lacks_says_what_to_set() {
    for (body, said) in [
        // Ollama, native and OpenAI-compatible.
        (
            r#"{"error": "model \"llama3.2\" not found, try pulling it first"}"#,
            "model \"llama3.2\" not found, try pulling it first",
        ),
        (
            r#"{"error": {"message": "model \"llama3.2\" not found, try pulling it first", "type": "not_found_error", "param": null, "code": null}}"#,
            "not_found_error: model \"llama3.2\" not found",
        ),
        // vLLM.
        (
            r#"{"object": "error", "message": "The model `llama3.2` does not exist.", "type": "NotFoundError", "param": null, "code": 404}"#,
            "NotFoundError: The model `llama3.2` does not exist.",
        ),
        (
            r#"{"error": {"message": "The model `llama3.2` does not exist.", "type": "NotFoundError", "param": "model", "code": 404}}"#,
            "NotFoundError: The model `llama3.2` does not exist.",
        ),
        // FastAPI (llama-cpp-python).
        (
            r#"{"detail": "Model llama3.2 not found"}"#,
            "Model llama3.2 not found",
        ),
    ] {
        let body = body.to_string();
        let server = common::serve(move |_, _, _| Reply::json(404, body.clone())).await;
        let c = config(&[
            ("EVAL_JUDGE_URL", format!("{}/v1", server.url)),
            ("EVAL_JUDGE_MODEL", "llama3.2".into()),
            ("EVAL_CACHE", "off".into()),
        ]);
        let (answer, _) = ask(&Judge::from_config(&c).unwrap()).await;
        let e = answer.unwrap_err().to_string();
        assert!(e.contains(said), "{e}");
        assert!(
            e.contains("does not serve the model `llama3.2`: set EVAL_JUDGE_MODEL")
                && e.contains("ollama list"),
            "{e}"
        );
        // Embeddings name their own setting.
        let c = config(&[
            ("EVAL_EMBED_URL", format!("{}/v1", server.url)),
            ("EVAL_EMBED_MODEL", "llama3.2".into()),
            ("EVAL_CACHE", "off".into()),
        ]);
        let e = Embedder::from_config(&c)
            .unwrap()
            .embed(&["x"], &mut Usage::default())
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("set EVAL_EMBED_MODEL"), "{e}");
    }
    // Another error gets no such hint.
    let server = common::serve(|_, _, _| {
        Reply::json(
            400,
            r#"{"error": {"message": "context length exceeded", "type": "invalid_request_error"}}"#,
        )
    })
    .await;
    let (answer, _) = ask(&Judge::new(&format!("{}/v1", server.url), "m")
        .unwrap()
        .cache(None))
    .await;
    let e = answer.unwrap_err().to_string();
    assert!(
        e.ends_with("invalid_request_error: context length exceeded"),
        "{e}"
    );
}

#[tokio::test]
async fn custom_headers_go_to_their_own_service_only() {
    let judge_server =
        common::serve(|_, _, _| Reply::json(200, common::chat(r#"{"verdict": 1}"#))).await;
    let embed_server = common::serve(|_, _, _| {
        Reply::json(200, r#"{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}], "model": "e", "usage": {"prompt_tokens": 1, "total_tokens": 1}}"#)
    })
    .await;
    let retriever_server = common::serve(|_, _, _| Reply::json(200, r#"{"results": []}"#)).await;
    let c = config(&[
        ("EVAL_JUDGE_URL", format!("{}/v1", judge_server.url)),
        ("EVAL_EMBED_URL", format!("{}/v1", embed_server.url)),
        (
            "EVAL_RETRIEVER_URL",
            format!("{}/retrieval", retriever_server.url),
        ),
        (
            "EVAL_JUDGE_HEADERS",
            "X-Tenant=acme-judge-tenant,Cookie=session%3Dabc%2C1".into(),
        ),
        (
            "EVAL_EMBED_HEADERS",
            "X-Embed-Token=embed-token-987654".into(),
        ),
        (
            "EVAL_RETRIEVER_HEADERS",
            "X-Retriever=retriever-secret-55".into(),
        ),
        ("EVAL_CACHE", "off".into()),
    ]);
    let judge = Judge::from_config(&c).unwrap();
    ask(&judge).await.0.unwrap();
    Embedder::from_config(&c)
        .unwrap()
        .embed(&["x"], &mut Usage::default())
        .await
        .unwrap();
    HttpRetriever::from_config(&c)
        .unwrap()
        .search("q", "eval:", 3)
        .await
        .unwrap();
    let j = judge_server.requests.lock().unwrap()[0].0.clone();
    let e = embed_server.requests.lock().unwrap()[0].0.clone();
    let r = retriever_server.requests.lock().unwrap()[0].0.clone();
    assert_eq!(header(&j, "x-tenant"), Some("acme-judge-tenant"));
    assert_eq!(header(&j, "cookie"), Some("session=abc,1"));
    assert_eq!(header(&e, "x-embed-token"), Some("embed-token-987654"));
    assert_eq!(header(&r, "x-retriever"), Some("retriever-secret-55"));
    for (head, foreign) in [
        (&j, ["embed-token", "retriever-secret"]),
        (&e, ["acme-judge", "retriever-secret"]),
        (&r, ["acme-judge", "embed-token"]),
    ] {
        for f in foreign {
            assert!(!head.contains(f), "{f} in {head}");
        }
    }
    // Masked like keys everywhere this crate writes.
    let shown = format!("{c:?} {judge:?}");
    for secret in [
        "acme-judge-tenant",
        "embed-token-987654",
        "retriever-secret-55",
    ] {
        assert!(!shown.contains(secret), "{secret} shown");
    }
    // Refused at start when malformed, the value never echoed.
    let e = Config::from_vars(
        |n| {
            Ok((n == "EVAL_JUDGE_HEADERS")
                .then(|| "X-Ok=1,X-Bad=a%0D%0AHost: evil-value".to_string()))
        },
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("EVAL_JUDGE_HEADERS") && e.contains("X-Bad"),
        "{e}"
    );
    assert!(!e.contains("evil-value"), "{e}");
}

#[tokio::test]
async fn an_azure_agent_and_an_anthropic_agent_answer_with_tools() {
    // Azure: an OpenAI body to a deployment URL, the key as `api-key`.
    let server = common::serve(|_, _, _| Reply::json(200, azure_completion("Paris"))).await;
    let c = config(&[
        (
            "EVAL_AGENT_URL",
            format!(
                "{}/openai/deployments/agent-4o/chat/completions",
                server.url
            ),
        ),
        ("EVAL_AGENT_PROVIDER", "azure".into()),
        ("EVAL_AGENT_MODEL", "agent-4o".into()),
        ("EVAL_AGENT_API_KEY", AZURE_KEY.into()),
    ]);
    let agent = HttpAgent::from_config(&c, None).unwrap();
    let r = agent
        .respond(&Sample::new("Capital of France?"))
        .await
        .unwrap();
    assert_eq!(r.output, "Paris");
    assert_eq!((r.usage.prompt_tokens, r.usage.cached_tokens), (1200, 1024));
    {
        let log = server.requests.lock().unwrap();
        let head = &log[0].0;
        assert!(
            head.contains("/openai/deployments/agent-4o/chat/completions?api-version=2024-10-21 "),
            "{head}"
        );
        assert_eq!(header(head, "api-key"), Some(AZURE_KEY));
        assert_eq!(header(head, "authorization"), None);
    }

    // Anthropic: a tool_use answer, then a text answer to the second turn.
    let server = common::serve(|n, _, _| {
        Reply::json(
            200,
            if n == 1 {
                anthropic_message(
                    json!([{"type": "text", "text": "Let me check."},
                           {"type": "tool_use", "id": "toolu_01A", "name": "lookup", "input": {"city": "Paris"}}]),
                    "tool_use",
                )
            } else {
                anthropic_message(json!([{"type": "text", "text": "Sunny."}]), "end_turn")
            },
        )
    })
    .await;
    let agent = HttpAgent::new(&format!("{}/v1/messages", server.url))
        .unwrap()
        .provider(Provider::Anthropic)
        .model("claude-sonnet-4-5")
        .api_key(ANTHROPIC_KEY)
        .tools(vec![json!({"type": "function", "function": {"name": "lookup", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})]);
    assert_eq!(
        agent.wire_protocol(),
        eval_runtime::Protocol::OpenAi,
        "implied by the provider"
    );
    let sample = Sample::new("").with_turns(["Weather in Paris?", "And tomorrow?"]);
    let r = agent.respond(&sample).await.unwrap();
    assert_eq!(r.output, "Sunny.");
    assert_eq!(r.turn_outputs, ["Let me check.", "Sunny."]);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "lookup");
    assert_eq!(r.tool_calls[0].arguments["city"], "Paris");
    assert_eq!(r.tool_calls[0].id.as_deref(), Some("toolu_01A"));
    assert_eq!(
        (
            r.usage.prompt_tokens,
            r.usage.completion_tokens,
            r.usage.cached_tokens
        ),
        (2 * 1540, 24, 3000)
    );
    assert_eq!(r.model.as_deref(), Some("claude-haiku-4-5-20251001"));
    let log = server.requests.lock().unwrap();
    let (head, first) = &log[0];
    assert!(head.starts_with("POST /v1/messages "), "{head}");
    assert_eq!(header(head, "x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(header(head, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(header(head, "authorization"), None);
    assert_eq!(first["tools"][0]["name"], "lookup");
    assert_eq!(
        first["tools"][0]["input_schema"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(first["max_tokens"], 4096, "Anthropic requires one");
    // The second turn replays the tool call as tool_use, its result as tool_result.
    let second = &log[1].1;
    let m = second["messages"].as_array().unwrap();
    assert_eq!(m[1]["role"], "assistant");
    assert!(
        m[1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "tool_use" && b["id"] == "toolu_01A"),
        "{second}"
    );
    assert_eq!(m[2]["role"], "user");
    assert_eq!(m[2]["content"][0]["type"], "tool_result");
    assert_eq!(m[2]["content"][0]["tool_use_id"], "toolu_01A");
    drop(log);

    // Streaming an Anthropic agent is refused up front.
    let e = HttpAgent::new(&format!("{}/v1/messages", server.url))
        .unwrap()
        .provider(Provider::Anthropic)
        .model("m")
        .stream(true)
        .check()
        .unwrap_err()
        .to_string();
    assert!(e.contains("unset EVAL_AGENT_STREAM"), "{e}");
}

#[tokio::test]
async fn an_anthropic_agent_is_retried_when_overloaded_and_errors_read() {
    let server = common::serve(|n, _, _| match n {
        1 => Reply::With(529, vec!["retry-after: 0".into()], r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#.into()),
        2 => Reply::json(200, anthropic_message(json!([{"type": "text", "text": "ok"}]), "end_turn")),
        _ => Reply::json(401, r#"{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}"#),
    })
    .await;
    let agent = HttpAgent::new(&format!("{}/v1/messages", server.url))
        .unwrap()
        .provider(Provider::Anthropic)
        .model("m")
        .adaptive(false);
    let r = agent.respond(&Sample::new("hi")).await.unwrap();
    assert_eq!(r.output, "ok");
    assert_eq!(r.usage.retries, 1, "{:?}", r.usage);
    let e = agent
        .respond(&Sample::new("hi"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("answered HTTP 401: authentication_error: invalid x-api-key"),
        "{e}"
    );
}

#[tokio::test]
async fn urls_are_completed_per_provider_and_agents_name_their_model_setting() {
    let server = common::serve(|_, head, _| {
        if head.contains("/embeddings") {
            Reply::json(200, r#"{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}], "model": "e", "usage": {"prompt_tokens": 2, "total_tokens": 2}}"#)
        } else if head.contains("/v1/messages") {
            Reply::json(200, anthropic_message(json!([{"type": "text", "text": "hi"}]), "end_turn"))
        } else if head.contains("/openai/") {
            Reply::json(200, azure_completion("ok"))
        } else {
            Reply::json(404, r#"{"error": {"message": "model \"llama3\" not found, try pulling it first", "type": "not_found_error", "param": null, "code": null}}"#)
        }
    })
    .await;
    // Azure embeddings at a deployment URL, with the configured api-version.
    let c = config(&[
        (
            "EVAL_EMBED_URL",
            format!("{}/openai/deployments/emb-3", server.url),
        ),
        ("EVAL_EMBED_PROVIDER", "azure".into()),
        ("EVAL_AZURE_API_VERSION", "2025-04-01-preview".into()),
        ("AZURE_OPENAI_API_KEY", AZURE_KEY.into()),
        ("EVAL_CACHE", "off".into()),
    ]);
    let v = Embedder::from_config(&c)
        .unwrap()
        .embed(&["x"], &mut Usage::default())
        .await
        .unwrap();
    assert_eq!(v, [vec![1.0, 0.0]]);
    // An Azure agent's deployment URL takes the configured api-version too.
    let c = config(&[
        (
            "EVAL_AGENT_URL",
            format!("{}/openai/deployments/a/chat/completions", server.url),
        ),
        ("EVAL_AGENT_PROVIDER", "azure".into()),
        ("EVAL_AGENT_MODEL", "a".into()),
        ("EVAL_AZURE_API_VERSION", "2025-04-01-preview".into()),
    ]);
    assert_eq!(
        HttpAgent::from_config(&c, None)
            .unwrap()
            .respond(&Sample::new("q"))
            .await
            .unwrap()
            .output,
        "ok"
    );
    // An Anthropic agent at a bare base URL posts to /v1/messages.
    let agent = HttpAgent::new(&server.url)
        .unwrap()
        .provider(Provider::Anthropic)
        .model("m");
    assert!(agent.url().ends_with("/v1/messages"), "{}", agent.url());
    assert_eq!(agent.respond(&Sample::new("q")).await.unwrap().output, "hi");
    // An OpenAI-protocol agent asking for a model the server lacks.
    let e = HttpAgent::new(&format!("{}/v1/chat/completions", server.url))
        .unwrap()
        .model("llama3")
        .respond(&Sample::new("q"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not found, try pulling it first") && e.contains("set EVAL_AGENT_MODEL"),
        "{e}"
    );
    let heads: Vec<String> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(h, _)| h.clone())
        .collect();
    assert!(
        heads[0].starts_with(
            "POST /openai/deployments/emb-3/embeddings?api-version=2025-04-01-preview "
        ),
        "{}",
        heads[0]
    );
    assert_eq!(header(&heads[0], "api-key"), Some(AZURE_KEY));
    assert!(
        heads[1].starts_with(
            "POST /openai/deployments/a/chat/completions?api-version=2025-04-01-preview "
        ),
        "{}",
        heads[1]
    );
    assert!(heads[2].starts_with("POST /v1/messages "), "{}", heads[2]);
}
