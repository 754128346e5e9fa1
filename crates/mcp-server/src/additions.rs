//! Tools, prompts and resources a program adds to the server's tables: the extension point
//! of [`crate::server::McpService`]. `interpreter mcp-server` adds none; the conformance host
//! (`examples/conformance-host.rs`, a test program) adds the fixtures the MCP conformance
//! suite calls on its reference server, so the suite can exercise our own machinery.
//!
//! An added tool or prompt is served by the same tables, eras and checks as ours: its
//! request's era and `_meta` are read by the server, its result goes on the era's wire
//! (`resultType`, server identity), and what it asks of the client goes through the
//! server's own paths — [`AddedRequest::require`] raises the server's `-32021` (HTTP 400),
//! [`AddedRequest::input_required`] returns a multi round-trip result whose `requestState`
//! the server's key seals (and [`AddedRequest::state`] opens, refusing a changed one),
//! [`AddedRequest::log`] sends log messages only to a request that asked for a level,
//! [`AddedRequest::progress`] needs the request's progress token, and
//! [`Additions::set_tool`] / [`Additions::remove_tool`] reach `subscriptions/listen`
//! streams as `notifications/tools/list_changed`.
//!
//! Names and URIs of ours win: an addition cannot shadow `codex`, `codex-reply` or the
//! `interpreter://` resources.

use crate::mrtr::InputResponses;
use crate::protocol::era::{self, Era};
use crate::protocol::log::{LogLevel, LogMessage};
use crate::sealing::{OpenError, Sealer};
use oi_jsonrpc::{BoxFuture, RequestContext, RpcError};
use rmcp::model::{
    CallToolResult, ClientCapabilities, CompleteRequestParams, CompletionInfo, GetPromptResult,
    ProgressNotificationParam, ProgressToken, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, ResultType, Tool,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// How long a `requestState` an addition seals stays valid.
pub const ADDED_STATE_TTL: Duration = Duration::from_secs(600);

/// What an added tool's call or prompt's `prompts/get` ends with.
#[derive(Debug)]
pub enum Outcome<T> {
    /// Finished, with its result.
    Complete(T),
    /// `resultType: "input_required"`: ask the client, then expect the retry.
    InputRequired(InputRequired),
}

/// A multi round-trip result of an addition: input requests by key, and the sealed state.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequired {
    /// Always `input_required`.
    pub result_type: ResultType,
    /// What to ask the client, by key (the retry answers by the same keys).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, Value>,
    /// The sealed state the retry must send back, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// Serves one added tool's calls.
pub type ToolHandler = Arc<
    dyn Fn(AddedRequest) -> BoxFuture<'static, Result<Outcome<CallToolResult>, RpcError>>
        + Send
        + Sync,
>;
/// Serves one added prompt's `prompts/get`.
pub type PromptHandler = Arc<
    dyn Fn(AddedRequest) -> BoxFuture<'static, Result<Outcome<GetPromptResult>, RpcError>>
        + Send
        + Sync,
>;
/// Completes an argument of an added prompt or resource template (`completion/complete`).
pub type Completer = Arc<dyn Fn(&CompleteRequestParams) -> CompletionInfo + Send + Sync>;

/// Reads the added resources whose URIs a template or a resource names: `None` for a URI
/// it does not serve.
pub type ResourceReader = Arc<dyn Fn(&str) -> Option<ReadResourceResult> + Send + Sync>;

struct AddedTool {
    tool: Tool,
    handler: ToolHandler,
}

/// What a program adds to the server's tables. Shared by every table of a server (each
/// connection's and the stateless one), so a change is seen by all.
pub struct Additions {
    tools: RwLock<Vec<AddedTool>>,
    prompts: Vec<(Prompt, PromptHandler)>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    readers: Vec<ResourceReader>,
    completer: Option<Completer>,
    /// Bumped whenever the added tool list changes.
    tools_changed: tokio::sync::watch::Sender<u64>,
}

impl Default for Additions {
    fn default() -> Self {
        Self {
            tools: RwLock::default(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            readers: Vec::new(),
            completer: None,
            tools_changed: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl std::fmt::Debug for Additions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Additions")
            .field("tools", &self.tool_list().len())
            .field("prompts", &self.prompts.len())
            .field("resources", &self.resources.len())
            .finish()
    }
}

impl Additions {
    /// Nothing added: what `interpreter mcp-server` serves.
    pub fn none() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Whether nothing is added, not even tools.
    pub fn is_empty(&self) -> bool {
        self.tool_list().is_empty()
            && self.prompts.is_empty()
            && self.resources.is_empty()
            && self.templates.is_empty()
    }

    /// Adds tool `tool`, served by `handler` (builder form of [`Additions::set_tool`]).
    pub fn with_tool<F, Fut>(self, tool: Tool, handler: F) -> Self
    where
        F: Fn(AddedRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome<CallToolResult>, RpcError>> + Send + 'static,
    {
        self.set_tool(tool, handler);
        self
    }

    /// Adds (or replaces) tool `tool`, served by `handler`; open `subscriptions/listen`
    /// streams that asked for tool list changes are told.
    pub fn set_tool<F, Fut>(&self, tool: Tool, handler: F)
    where
        F: Fn(AddedRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome<CallToolResult>, RpcError>> + Send + 'static,
    {
        let handler: ToolHandler = Arc::new(move |r| Box::pin(handler(r)));
        {
            let mut tools = self.tools.write().unwrap_or_else(|e| e.into_inner());
            tools.retain(|t| t.tool.name != tool.name);
            tools.push(AddedTool { tool, handler });
        }
        self.tools_changed.send_modify(|n| *n += 1);
    }

    /// Removes tool `name`, telling list-change subscribers; whether it was there.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = {
            let mut tools = self.tools.write().unwrap_or_else(|e| e.into_inner());
            let before = tools.len();
            tools.retain(|t| t.tool.name != name);
            tools.len() != before
        };
        if removed {
            self.tools_changed.send_modify(|n| *n += 1);
        }
        removed
    }

    /// Adds prompt `prompt`, served by `handler`.
    pub fn with_prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(AddedRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome<GetPromptResult>, RpcError>> + Send + 'static,
    {
        let handler: PromptHandler = Arc::new(move |r| Box::pin(handler(r)));
        self.prompts.push((prompt, handler));
        self
    }

    /// Lists `resources` and `templates`, whose contents `reader` gives by URI.
    pub fn with_resources(
        mut self,
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
        reader: impl Fn(&str) -> Option<ReadResourceResult> + Send + Sync + 'static,
    ) -> Self {
        self.resources.extend(resources);
        self.templates.extend(templates);
        self.readers.push(Arc::new(reader));
        self
    }

    /// Answers `completion/complete` with `completer` (the method, and the `completions`
    /// capability, exist only then: the server's own prompts and templates offer none).
    pub fn with_completion(
        mut self,
        completer: impl Fn(&CompleteRequestParams) -> CompletionInfo + Send + Sync + 'static,
    ) -> Self {
        self.completer = Some(Arc::new(completer));
        self
    }

    pub(crate) fn completer(&self) -> Option<Completer> {
        self.completer.clone()
    }

    /// The added tools, in the order they were added.
    pub fn tool_list(&self) -> Vec<Tool> {
        let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
        tools.iter().map(|t| t.tool.clone()).collect()
    }

    pub(crate) fn tool(&self, name: &str) -> Option<ToolHandler> {
        let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
        tools
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| t.handler.clone())
    }

    /// Whether the tool list can change (then `tools.listChanged` is declared and
    /// `toolsListChanged` subscriptions honoured).
    pub fn tools_can_change(&self) -> bool {
        !self.tool_list().is_empty()
    }

    /// A receiver that sees every change of the added tool list.
    pub fn watch_tools(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tools_changed.subscribe()
    }

    /// The added prompts, as `prompts/list` lists them.
    pub fn prompt_list(&self) -> Vec<Prompt> {
        self.prompts.iter().map(|(p, _)| p.clone()).collect()
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<PromptHandler> {
        self.prompts
            .iter()
            .find(|(p, _)| p.name == name)
            .map(|(_, h)| h.clone())
    }

    /// The added resources, as `resources/list` lists them.
    pub fn resource_list(&self) -> &[Resource] {
        &self.resources
    }

    /// The added resource templates, as `resources/templates/list` lists them.
    pub fn template_list(&self) -> &[ResourceTemplate] {
        &self.templates
    }

    /// The contents of added resource `uri`, if one of the readers serves it.
    pub fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        self.readers.iter().find_map(|r| r(uri))
    }
}

/// One request to an added tool or prompt: what it carries, and the server's ways of
/// answering it.
pub struct AddedRequest {
    /// The tool's or prompt's name.
    pub name: String,
    /// Its `arguments`, as sent.
    pub arguments: Option<Value>,
    /// A retry's answers to the input requests of an earlier `input_required` result (each
    /// one checked to be an object).
    pub input_responses: Option<InputResponses>,
    request_state: Option<String>,
    /// `tools/call` or `prompts/get`.
    method: &'static str,
    era: Era,
    ctx: RequestContext,
    progress_token: Option<ProgressToken>,
    sealer: Option<Sealer>,
    /// What a sealed state is bound to: the method, the name and the arguments.
    digest: String,
    /// What the `initialize` handshake of the connection declared (its era's requests).
    handshake_elicitation: bool,
}

/// How a request to an addition arrived (built by the server's tables).
pub(crate) struct Arrived {
    pub method: &'static str,
    pub name: String,
    pub arguments: Option<Value>,
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
    pub era: Era,
    pub ctx: RequestContext,
    pub progress_token: Option<ProgressToken>,
    pub sealer: Option<Sealer>,
    pub handshake_elicitation: bool,
}

impl AddedRequest {
    pub(crate) fn new(a: Arrived) -> Result<Self, RpcError> {
        if let Some(responses) = &a.input_responses {
            for (key, v) in responses {
                if !v.is_object() {
                    return Err(RpcError::invalid_params(
                        a.method,
                        format!(
                            "`inputResponses.{key}` must be the result of that input request (an object), got {}",
                            oi_jsonrpc::message::json_type_name(v)
                        ),
                    ));
                }
            }
        }
        let digest =
            crate::sealing::call_digest(&format!("{} {}", a.method, a.name), a.arguments.as_ref());
        Ok(Self {
            name: a.name,
            arguments: a.arguments,
            input_responses: a.input_responses,
            request_state: a.request_state,
            method: a.method,
            era: a.era,
            ctx: a.ctx,
            progress_token: a.progress_token,
            sealer: a.sealer,
            digest,
            handshake_elicitation: a.handshake_elicitation,
        })
    }

    /// The request's era: its version and what its `_meta` declared.
    pub fn era(&self) -> &Era {
        &self.era
    }

    /// The capabilities the request may rely on: its `_meta`'s (2026-07-28), or what the
    /// connection's `initialize` declared that the server keeps (elicitation).
    pub fn capabilities(&self) -> ClientCapabilities {
        match self.era.envelope() {
            Some(e) => e.capabilities.clone(),
            None => {
                let mut c = ClientCapabilities::default();
                if self.handshake_elicitation {
                    c.elicitation = Some(Default::default());
                }
                c
            }
        }
    }

    /// `Ok` when the request declared every capability of `required`; else the server's
    /// `-32021` naming the missing ones, with `why` they are needed.
    pub fn require(&self, required: &ClientCapabilities, why: &str) -> Result<(), RpcError> {
        era::require_capabilities(&self.capabilities(), required, why)
    }

    /// The argument `key` as a string, if it is one.
    pub fn argument(&self, key: &str) -> Option<&str> {
        self.arguments.as_ref()?.get(key)?.as_str()
    }

    /// The arguments as an object (empty when none came).
    pub fn argument_map(&self) -> Map<String, Value> {
        match &self.arguments {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        }
    }

    /// The answer to input request `key`, if the retry carries one.
    pub fn response(&self, key: &str) -> Option<&Value> {
        self.input_responses.as_ref()?.get(key)
    }

    /// An `input_required` result asking `inputs` (input requests by key); `state`, when
    /// given, is sealed with the server's key into the `requestState` the retry must send
    /// back (bound to this request's method, name and arguments).
    pub fn input_required(
        &self,
        inputs: BTreeMap<String, Value>,
        state: Option<&impl Serialize>,
    ) -> Result<InputRequired, RpcError> {
        let request_state = match state {
            None => None,
            Some(s) => Some(self.sealer()?.seal_added(&self.digest, s, ADDED_STATE_TTL)),
        };
        Ok(InputRequired {
            result_type: ResultType::INPUT_REQUIRED,
            input_requests: inputs,
            request_state,
        })
    }

    /// The state an earlier [`AddedRequest::input_required`] sealed, as the retry sent it
    /// back (`None` when it sent none); a changed, foreign, expired or misplaced one is
    /// refused (`-32602`, saying which).
    pub fn state<T: DeserializeOwned>(&self) -> Result<Option<T>, RpcError> {
        let Some(sealed) = &self.request_state else {
            return Ok(None);
        };
        self.sealer()?
            .open_added(&self.digest, sealed)
            .map(Some)
            .map_err(|e| RpcError::invalid_params(self.method, refused(e)))
    }

    fn sealer(&self) -> Result<&Sealer, RpcError> {
        self.sealer.as_ref().ok_or_else(|| {
            RpcError::internal(
                "this server cannot seal request states: its state key is not loaded (its log says why)",
            )
        })
    }

    /// Sends a log message at `level`, if the request asked for messages at that level or
    /// above (`_meta` `io.modelcontextprotocol/logLevel`); otherwise nothing is sent.
    pub async fn log(&self, level: LogLevel, data: impl Into<String>) {
        let wanted = self.era.envelope().and_then(|e| e.log_level);
        let message = LogMessage {
            level,
            logger: "openinterpreter",
            data: data.into(),
        };
        crate::tool_runner::send_log(&self.ctx, wanted, &message).await;
    }

    /// Sends `notifications/progress` (`progress` of `total`), if the request carried a
    /// progress token.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut p = ProgressNotificationParam::new(token.clone(), progress);
        p.total = total;
        p.message = message;
        if let Ok(params) = serde_json::to_value(p) {
            self.ctx
                .outgoing
                .notify(crate::progress::PROGRESS, params)
                .await;
        }
    }
}

/// Why an added request's `requestState` was refused.
fn refused(e: OpenError) -> &'static str {
    match e {
        OpenError::Forged => {
            "`requestState` was not issued by this server, or it was changed; send it back exactly as it came"
        }
        OpenError::Expired => "`requestState` has expired; send the request again without it",
        OpenError::OtherPrincipal => "`requestState` was issued to another client",
        OpenError::OtherRequest => {
            "`requestState` belongs to another request; retry the request it came from (the same name and arguments) with it"
        }
    }
}
