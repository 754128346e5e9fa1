//! `sampling/createMessage` against a real server: server-everything (npm) offers its
//! `trigger-sampling-request` tool only to a client that advertises sampling, and that tool
//! asks the client's model to answer. The handler here stands in for the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use futures::future::BoxFuture;
use oi_config::mcp::{McpSamplingMode, McpServerConfig};
use oi_mcp_client::{
    McpConnectionManager, SamplingContent, SamplingError, SamplingHandler, SamplingReply,
    SamplingRequest, SamplingStop,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const SAMPLING_TOOL: &str = "mcp__everything__trigger_sampling_request";
/// One of server-everything's tools registered beside the sampling one, once the client's
/// capabilities are known.
const CONDITIONAL_TOOL: &str = "mcp__everything__trigger_elicitation_request";

/// Records each request and answers with `answer`.
struct RecordingSampler {
    seen: Mutex<Vec<SamplingRequest>>,
    answer: Result<SamplingReply, SamplingError>,
}

impl RecordingSampler {
    fn answering(answer: Result<SamplingReply, SamplingError>) -> Arc<Self> {
        Arc::new(Self {
            seen: Mutex::new(Vec::new()),
            answer,
        })
    }
}

impl SamplingHandler for RecordingSampler {
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'static, Result<SamplingReply, SamplingError>> {
        self.seen.lock().unwrap().push(request);
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

fn everything_sampling(mode: McpSamplingMode) -> McpServerConfig {
    let mut cfg = everything_stdio();
    cfg.sampling = mode;
    cfg
}

struct Running {
    manager: Arc<McpConnectionManager>,
    _home: tempfile::TempDir,
    _cwd: tempfile::TempDir,
}

async fn start_sampling(
    servers: Vec<(&str, McpServerConfig)>,
    sampler: Option<Arc<dyn SamplingHandler>>,
) -> Running {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut opts = options(
        home.path(),
        cwd.path(),
        TestElicitation::accepting(serde_json::json!({})),
    );
    opts.sampling = sampler;
    let servers: BTreeMap<String, McpServerConfig> = servers
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    let (tx, _rx) = mpsc::unbounded_channel();
    let manager = McpConnectionManager::start(servers, opts, tx)
        .await
        .unwrap();
    manager.wait_until_started().await;
    Running {
        manager,
        _home: home,
        _cwd: cwd,
    }
}

async fn trigger(manager: &McpConnectionManager, prompt: &str) -> Result<String, String> {
    manager
        .call_tool(
            "everything",
            "trigger-sampling-request",
            args(serde_json::json!({"prompt": prompt, "maxTokens": 33})),
            None,
            CancellationToken::new(),
        )
        .await
        .map(|r| text_of(&r))
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_offered_sampling_gets_the_handlers_answer() {
    let sampler = RecordingSampler::answering(Ok(SamplingReply {
        text: "teal, mostly".into(),
        model: "the-session-model".into(),
        stop_reason: SamplingStop::EndTurn,
    }));
    let s = start_sampling(
        vec![("everything", everything_sampling(McpSamplingMode::Approve))],
        Some(sampler.clone()),
    )
    .await;
    let m = s.manager.clone();
    wait_until("the sampling tool", || m.lookup(SAMPLING_TOOL).is_some()).await;

    let text = trigger(&s.manager, "name a colour").await.unwrap();
    // The server shows our whole CreateMessageResult.
    assert!(text.contains("teal, mostly"), "{text}");
    assert!(text.contains("\"model\": \"the-session-model\""), "{text}");
    assert!(text.contains("\"stopReason\": \"endTurn\""), "{text}");
    assert!(text.contains("\"role\": \"assistant\""), "{text}");

    let seen = sampler.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.server, "everything");
    assert_eq!(r.mode, McpSamplingMode::Approve);
    assert_eq!(
        r.system_prompt.as_deref(),
        Some("You are a helpful test server.")
    );
    assert_eq!(r.max_tokens, 33);
    assert_eq!(r.temperature, Some(0.7));
    assert_eq!(r.messages.len(), 1);
    match &r.messages[0].content[..] {
        [SamplingContent::Text(t)] => assert!(t.contains("name a colour"), "{t}"),
        other => panic!("unexpected content {other:?}"),
    }
    // The server's tool timeout bounds the model.
    assert_eq!(r.timeout, everything_stdio().tool_timeout_or_default());
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_reaches_the_server_as_an_error_with_its_reason() {
    let sampler = RecordingSampler::answering(Err(SamplingError::Rejected(
        "the user rejected the sampling request of MCP server `everything`".into(),
    )));
    let s = start_sampling(
        vec![("everything", everything_sampling(McpSamplingMode::Prompt))],
        Some(sampler.clone()),
    )
    .await;
    let m = s.manager.clone();
    wait_until("the sampling tool", || m.lookup(SAMPLING_TOOL).is_some()).await;
    let outcome = trigger(&s.manager, "anything").await;
    let text = match outcome {
        Ok(t) | Err(t) => t,
    };
    assert!(
        text.contains("the user rejected the sampling request"),
        "{text}"
    );
    assert_eq!(
        sampler.seen.lock().unwrap()[0].mode,
        McpSamplingMode::Prompt
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_is_advertised_only_when_configured_and_served() {
    let sampler = RecordingSampler::answering(Err(SamplingError::Failed("unused".into())));
    // `off` (the default) with an engine that could serve it; `prompt` with nobody to serve
    // it (a probe): neither is offered sampling, so neither lists the sampling tool.
    let s = start_sampling(
        vec![("everything", everything_sampling(McpSamplingMode::Off))],
        Some(sampler.clone()),
    )
    .await;
    let m = s.manager.clone();
    wait_until("conditional tools", || m.lookup(CONDITIONAL_TOOL).is_some()).await;
    assert!(s.manager.lookup(SAMPLING_TOOL).is_none());
    s.manager.shutdown().await;

    let s = start_sampling(
        vec![("everything", everything_sampling(McpSamplingMode::Prompt))],
        None,
    )
    .await;
    let m = s.manager.clone();
    wait_until("conditional tools", || m.lookup(CONDITIONAL_TOOL).is_some()).await;
    assert!(s.manager.lookup(SAMPLING_TOOL).is_none());
    s.manager.shutdown().await;
    assert!(sampler.seen.lock().unwrap().is_empty());
}
