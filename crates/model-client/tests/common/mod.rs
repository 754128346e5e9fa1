#![allow(dead_code)]
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use oi_config::provider::ModelProviderInfo;
use oi_model_client::{ModelClient, ModelError, Prompt, ResponseEvent, RetryNotice};
use oi_protocol::config_types::WireApi;
use oi_protocol::models::{ResponseItem, ToolSpec};
use oi_test_support::{MockModelServer, MockScript};
use serde_json::json;

pub const WIRES: [WireApi; 2] = [WireApi::Chat, WireApi::Responses];
pub const WAIT: Duration = Duration::from_secs(10);
/// The home handed to clients: no credentials file there, so a key can only come from the
/// environment (never from the real home of whoever runs the tests).
pub const NO_HOME: &str = "/nonexistent/openinterpreter-test-home";

/// A made-up call id: 9 alphanumerics, which every server accepts (Mistral's templates reject
/// anything else).
pub fn portable_id(id: &str) -> bool {
    id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

pub fn prompt() -> Prompt {
    Prompt {
        model: "mock-model".into(),
        instructions: "You are a test.".into(),
        input: vec![ResponseItem::user_text("hello")],
        tools: vec![ToolSpec {
            name: "shell".into(),
            description: "Run a command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "array"}}}),
        }],
        reasoning_effort: None,
        reasoning_summary: None,
        verbosity: None,
        parallel_tool_calls: true,
        ..Prompt::default()
    }
}

/// What one request produced: the events before the end, and the error that ended it.
#[derive(Debug)]
pub struct Outcome {
    pub events: Vec<ResponseEvent>,
    pub error: Option<ModelError>,
    pub retries: Vec<RetryNotice>,
}

impl Outcome {
    pub fn text_deltas(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                ResponseEvent::OutputTextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn reasoning_deltas(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                ResponseEvent::ReasoningDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn items(&self) -> Vec<ResponseItem> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ResponseEvent::OutputItemDone(i) => Some(i.clone()),
                _ => None,
            })
            .collect()
    }

    /// `(call_id, name, arguments)` of finished function calls.
    pub fn calls(&self) -> Vec<(String, String, String)> {
        self.items()
            .into_iter()
            .filter_map(|i| match i {
                ResponseItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } => Some((call_id, name, arguments)),
                _ => None,
            })
            .collect()
    }

    pub fn completed(&self) -> Option<&ResponseEvent> {
        self.events
            .iter()
            .find(|e| matches!(e, ResponseEvent::Completed { .. }))
    }

    pub fn ok(&self) -> &Self {
        assert!(self.error.is_none(), "unexpected error: {:?}", self.error);
        assert!(
            matches!(self.events.last(), Some(ResponseEvent::Completed { .. })),
            "stream did not end with Completed: {:?}",
            self.events
        );
        self
    }

    pub fn err(&self) -> &ModelError {
        match &self.error {
            Some(e) => e,
            None => panic!("expected an error, got events {:?}", self.events),
        }
    }
}

pub fn provider_for(server: &MockModelServer, wire: WireApi) -> ModelProviderInfo {
    server.provider(wire)
}

/// Sends `prompt` once and drains the stream.
pub async fn run_with(client: &ModelClient, prompt: &Prompt) -> Outcome {
    let retries = Arc::new(Mutex::new(Vec::new()));
    let sink = retries.clone();
    let on_retry = move |n: RetryNotice| sink.lock().unwrap().push(n);
    let mut events = Vec::new();
    let error = match client.stream(prompt, &on_retry).await {
        Err(e) => Some(e),
        Ok(mut stream) => {
            let mut error = None;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(ev) => events.push(ev),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            // Nothing may follow an error.
            if error.is_some() {
                assert!(
                    stream.next().await.is_none(),
                    "stream continued after an error"
                );
            }
            error
        }
    };
    let retries = retries.lock().unwrap().clone();
    Outcome {
        events,
        error,
        retries,
    }
}

/// Starts a mock with `script`, sends the default prompt over `wire`.
pub async fn run(
    script: MockScript,
    wire: WireApi,
    tweak: impl FnOnce(&mut ModelProviderInfo),
) -> (Outcome, MockModelServer) {
    let server = MockModelServer::start(script).await.unwrap();
    let mut provider = server.provider(wire);
    tweak(&mut provider);
    let client = ModelClient::new(provider, "mock".into(), std::path::Path::new(NO_HOME)).unwrap();
    let outcome = run_with(&client, &prompt()).await;
    (outcome, server)
}
