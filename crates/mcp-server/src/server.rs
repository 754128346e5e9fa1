//! The MCP service: every method of both protocol eras, declared once in one method table.
//!
//! Each request's era comes from its own `_meta` ([`era::classify`]): a 2026-07-28 request
//! is served on its own (its `_meta` checked, `resultType` and the server's identity in
//! its result), anything else as the `initialize` era served it. A method exists in one era
//! or both ([`Eras`]): asking a 2026-07-28 request for one it removed is `-32601`.
//!
//! | method | eras |
//! |---|---|
//! | `initialize`, `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe` | handshake |
//! | `server/discover`, `subscriptions/listen` | 2026-07-28 |
//! | `tools/list`, `tools/call`, `resources/list`, `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get` | both |
//! | `tasks/get`, `tasks/update`, `tasks/cancel` (the Tasks extension) | 2026-07-28 |
//!
//! `tools/call` and the task methods are in [`calls`].

mod calls;

use crate::additions::{Additions, Outcome};
use crate::engine::Engine;
use crate::protocol::era::{self, Arrival, Era};
use crate::protocol::reply::{self, Caching};
use crate::protocol::{
    HANDSHAKE_VERSIONS, INSTRUCTIONS, STATELESS_VERSIONS, capabilities, server_implementation,
};
use crate::resources::{self, ThreadUri};
use crate::sealing::Sealer;
use crate::subscriptions::{Sink, Wanted, Watch};
use crate::tool_runner::CallSlot;
use crate::{prompts, tools};
use oi_jsonrpc::{Connection, Execution, MethodTable, RequestContext, RpcError};
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, DiscoverResult, InitializeResult,
    ListToolsResult, ProtocolVersion, ServerResult, SubscriptionFilter, SubscriptionsListenResult,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// More simultaneous tool calls than this on one connection are refused (each one runs an
/// agent turn).
pub(crate) const MAX_CONCURRENT_CALLS: usize = 64;

/// More simultaneous stateless tool calls than this (all of a listener's 2026-07-28 clients
/// together: they share one table) are refused.
pub(crate) const MAX_STATELESS_CALLS: usize = 1024;

/// More open subscriptions than this (`subscriptions/listen` streams of the service, or
/// `resources/subscribe`d URIs of a connection) are refused: each one watches the store.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 64;

/// What the `initialize` handshake of a connection said about its client.
#[derive(Debug)]
pub(crate) struct ClientSession {
    /// The version agreed on.
    #[allow(dead_code)] // read by the `initialize` log line (its `Debug`)
    pub(crate) protocol_version: String,
    /// The client accepts `elicitation/create`.
    pub(crate) supports_elicitation: bool,
    /// Its `clientInfo` name and version.
    #[allow(dead_code)] // read by the `initialize` log line (its `Debug`)
    pub(crate) client_name: String,
}

/// Which protocol eras have a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eras {
    Both,
    /// Only with the `initialize` handshake (2025-11-25 and earlier); removed in 2026-07-28.
    Handshake,
    /// Only in 2026-07-28.
    Stateless,
}

pub(crate) struct McpService {
    engine: Arc<dyn Engine>,
    client: OnceLock<ClientSession>,
    /// Tool calls and tasks running now.
    running_calls: Arc<AtomicUsize>,
    /// `subscriptions/listen` streams open now.
    listening: Arc<AtomicUsize>,
    /// Seals the handles 2026-07-28 clients hold (approval states, task ids) for the
    /// principal the transport let in; why not, when the key could not be had.
    sealer: Sealing,
    server_cwd: PathBuf,
    arrival: Arrival,
    /// The connection the table serves, for what the handshake era sends outside a request
    /// (`resources/subscribe` updates).
    connection: OnceLock<Connection>,
    /// `resources/subscribe` watches of the connection, by URI.
    subscribed: Mutex<HashMap<String, CancellationToken>>,
    /// What a program added to the tables (nothing, for `interpreter mcp-server`).
    additions: Arc<Additions>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    capabilities: Option<Map<String, Value>>,
    #[serde(default)]
    client_info: Option<ClientInfo>,
}

#[derive(Deserialize)]
struct ClientInfo {
    name: String,
    #[serde(default)]
    version: Option<String>,
}

/// Params that carry nothing but `_meta`.
#[derive(Deserialize)]
struct Empty {}

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RequestMeta {
    #[serde(default)]
    progress_token: Option<Value>,
}

#[derive(Deserialize)]
struct ResourceParams {
    uri: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GetPromptParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    /// 2026-07-28, for an added prompt that asked for input.
    #[serde(default)]
    input_responses: Option<crate::mrtr::InputResponses>,
    #[serde(default)]
    request_state: Option<String>,
}

#[derive(Deserialize)]
struct SetLevelParams {
    #[allow(dead_code)] // nothing is logged over the wire in this era; logs go to stderr
    level: String,
}

#[derive(Deserialize)]
struct ListenParams {
    notifications: ListenFilter,
}

/// What `subscriptions/listen` asks for: the core filter and the Tasks extension's task ids.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListenFilter {
    #[serde(flatten)]
    filter: SubscriptionFilter,
    #[serde(default)]
    task_ids: Option<Vec<String>>,
}

/// What seals the handles a service gives 2026-07-28 clients (approval states, task ids):
/// the server's key and the transport's principal; or why there is none (the service then
/// denies those clients' approvals and offers no tasks).
pub(crate) type Sealing = Result<Sealer, crate::sealing::KeyError>;

impl McpService {
    /// The service of a connection (stdio, an HTTP session; both eras) whose handles
    /// `sealing` seals, with what a program adds to the tables ([`crate::additions`]).
    pub(crate) fn sealed_with(
        engine: Arc<dyn Engine>,
        server_cwd: PathBuf,
        sealing: Sealing,
        additions: Arc<Additions>,
    ) -> Arc<Self> {
        Self::with_arrival(engine, server_cwd, Arrival::Connection, sealing, additions)
    }

    /// The service of requests that arrive on their own (HTTP without a session): 2026-07-28
    /// only, since there is no handshake to fall back to; with what a program adds to the
    /// tables.
    pub(crate) fn stateless_with(
        engine: Arc<dyn Engine>,
        server_cwd: PathBuf,
        sealing: Sealing,
        additions: Arc<Additions>,
    ) -> Arc<Self> {
        Self::with_arrival(engine, server_cwd, Arrival::Alone, sealing, additions)
    }

    fn with_arrival(
        engine: Arc<dyn Engine>,
        server_cwd: PathBuf,
        arrival: Arrival,
        sealer: Sealing,
        additions: Arc<Additions>,
    ) -> Arc<Self> {
        Arc::new(Self {
            engine,
            client: OnceLock::new(),
            running_calls: Arc::default(),
            listening: Arc::default(),
            sealer,
            server_cwd,
            arrival,
            connection: OnceLock::new(),
            subscribed: Mutex::default(),
            additions,
        })
    }

    /// The session negotiated by `initialize`, if it happened.
    pub(crate) fn client(&self) -> Option<&ClientSession> {
        self.client.get()
    }

    /// Every method this service answers, on `connection` (if it serves one).
    pub(crate) fn methods(self: &Arc<Self>, connection: Option<&Connection>) -> MethodTable {
        if let Some(c) = connection {
            let _ = self.connection.set(c.clone());
            // The connection's subscriptions end with it.
            let s = self.clone();
            let closing = c.shutdown.clone();
            tokio::spawn(async move {
                closing.cancelled().await;
                for (_, watch) in lock(&s.subscribed).drain() {
                    watch.cancel();
                }
            });
        }
        let mut t = MethodTable::new();
        self.lifecycle_methods(&mut t);
        self.tool_methods(&mut t);
        self.catalog_methods(&mut t);
        if let Some(complete) = self.additions.completer() {
            self.method(
                &mut t,
                "completion/complete",
                Eras::Both,
                Execution::Inline,
                move |_, _, _, p: CompleteRequestParams| {
                    let info = complete(&p);
                    async move { Ok(CompleteResult::new(info).into()) }
                },
            );
        }
        t.notification("notifications/initialized", |_: Value| async {});
        t.notification("notifications/roots/list_changed", |_: Value| async {});
        t.notification("notifications/progress", |_: Value| async {});
        t
    }

    /// `initialize`, `ping`, `logging/setLevel` (the handshake era), `server/discover`.
    fn lifecycle_methods(self: &Arc<Self>, t: &mut MethodTable) {
        self.method(
            t,
            "initialize",
            Eras::Handshake,
            Execution::Inline,
            |s, _, _, p| async move { s.initialize(p) },
        );
        self.method(
            t,
            "ping",
            Eras::Handshake,
            Execution::Inline,
            |_, _, _, _: Empty| async { Ok(ServerResult::empty(())) },
        );
        self.method(
            t,
            "logging/setLevel",
            Eras::Handshake,
            Execution::Inline,
            |_, _, _, _: SetLevelParams| async { Ok(ServerResult::empty(())) },
        );
        self.method(
            t,
            "server/discover",
            Eras::Stateless,
            Execution::Inline,
            |s, _, _, _: Empty| async move { Ok(discover(&s.additions)) },
        );
    }

    /// `tools/list`, `tools/call`, and the Tasks extension's methods.
    fn tool_methods(self: &Arc<Self>, t: &mut MethodTable) {
        self.method(
            t,
            "tools/list",
            Eras::Both,
            Execution::Inline,
            |s, _, _, _: ListParams| async move {
                let c = Caching::FIXED;
                let mut list = tools::tools();
                list.extend(s.additions.tool_list());
                Ok(ListToolsResult::with_all_items(list)
                    .with_ttl_ms(c.ttl_ms)
                    .with_cache_scope(c.scope)
                    .into())
            },
        );
        self.method(
            t,
            "tools/call",
            Eras::Both,
            Execution::Spawn,
            |s, ctx, era, p| async move { s.call_tool(ctx, era, p).await },
        );
        self.method(
            t,
            "tasks/get",
            Eras::Stateless,
            Execution::Spawn,
            |s, _, era, p| async move { s.get_task(era, p).await },
        );
        self.method(
            t,
            "tasks/update",
            Eras::Stateless,
            Execution::Spawn,
            |s, ctx, era, p| async move { s.update_task(ctx, era, p).await },
        );
        self.method(
            t,
            "tasks/cancel",
            Eras::Stateless,
            Execution::Spawn,
            |s, _, era, p| async move { s.cancel_task(era, p).await },
        );
    }

    /// Resources, prompts and their change notifications.
    fn catalog_methods(self: &Arc<Self>, t: &mut MethodTable) {
        self.method(
            t,
            "resources/list",
            Eras::Both,
            Execution::Spawn,
            |s, _, _, p: ListParams| async move {
                let first = p.cursor.is_none();
                let mut list = resources::list(s.engine.as_ref(), p.cursor).await?;
                if first {
                    list.resources
                        .extend(s.additions.resource_list().iter().cloned());
                }
                Ok(list.into())
            },
        );
        self.method(
            t,
            "resources/templates/list",
            Eras::Both,
            Execution::Inline,
            |s, _, _, _: ListParams| async move {
                let mut list = resources::templates();
                list.resource_templates
                    .extend(s.additions.template_list().iter().cloned());
                Ok(list.into())
            },
        );
        self.method(
            t,
            "resources/read",
            Eras::Both,
            Execution::Spawn,
            |s, _, era, p: ResourceParams| async move {
                if ThreadUri::parse(&p.uri).is_none()
                    && let Some(contents) = s.additions.read(&p.uri)
                {
                    return Ok(contents.into());
                }
                Ok(resources::read(s.engine.as_ref(), &era, &p.uri)
                    .await?
                    .into())
            },
        );
        self.method(
            t,
            "prompts/list",
            Eras::Both,
            Execution::Spawn,
            |s, _, _, _: ListParams| async move {
                let folders = s.engine.prompt_folders().await;
                let mut list = blocking(move || Ok(prompts::list_prompts(&folders))).await?;
                list.prompts.extend(s.additions.prompt_list());
                Ok(list.into())
            },
        );
        self.method(
            t,
            "prompts/get",
            Eras::Both,
            Execution::Spawn,
            |s, ctx, era, p: GetPromptParams| async move {
                if let Some(handler) = s.additions.prompt(&p.name) {
                    let request = s.added_request(
                        "prompts/get",
                        p.name,
                        p.arguments.map(Value::Object),
                        p.input_responses,
                        p.request_state,
                        era.clone(),
                        ctx,
                        None,
                    )?;
                    return match handler(request).await? {
                        Outcome::Complete(result) => Ok(result.into()),
                        Outcome::InputRequired(input) => {
                            calls::input_required(&era, "prompts/get", input)
                        }
                    };
                }
                let folders = s.engine.prompt_folders().await;
                let arguments = p.arguments.unwrap_or_default();
                Ok(
                    blocking(move || prompts::get_prompt(&folders, &p.name, &arguments))
                        .await?
                        .into(),
                )
            },
        );
        self.method(
            t,
            "subscriptions/listen",
            Eras::Stateless,
            Execution::Spawn,
            |s, ctx, era, p: ListenParams| async move { s.listen(ctx, era, p.notifications).await },
        );
        self.method(
            t,
            "resources/subscribe",
            Eras::Handshake,
            Execution::Spawn,
            |s, _, era, p: ResourceParams| async move { s.subscribe(&era, p.uri).await },
        );
        self.method(
            t,
            "resources/unsubscribe",
            Eras::Handshake,
            Execution::Inline,
            |s, _, _, p: ResourceParams| async move {
                if let Some(watch) = lock(&s.subscribed).remove(&p.uri) {
                    watch.cancel();
                }
                Ok(ServerResult::empty(()))
            },
        );
    }

    /// Declares `method`: its era is read from the request, a request of an era the method
    /// is not in is refused, params are decoded into `P` (`-32602` naming the problem), and
    /// the handler's typed result is put on its era's wire.
    fn method<P, F, Fut>(
        self: &Arc<Self>,
        t: &mut MethodTable,
        method: &'static str,
        eras: Eras,
        exec: Execution,
        handler: F,
    ) where
        P: DeserializeOwned + Send + 'static,
        F: Fn(Arc<Self>, RequestContext, Era, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ServerResult, RpcError>> + Send + 'static,
    {
        let s = self.clone();
        let handler = Arc::new(handler);
        t.request(method, exec, move |ctx, raw: Map<String, Value>| {
            let s = s.clone();
            let handler = handler.clone();
            async move {
                let era = era::classify(method, Some(&raw), s.arrival, eras == Eras::Stateless)?;
                if era.is_stateless() && eras == Eras::Handshake {
                    return Err(era::removed_method(method));
                }
                let params: P = serde_json::from_value(Value::Object(raw))
                    .map_err(|e| RpcError::invalid_params(method, e))?;
                let result = handler(s, ctx, era.clone(), params).await?;
                reply::finish(&era, result)
            }
        });
    }

    fn initialize(&self, p: InitializeParams) -> Result<ServerResult, RpcError> {
        let version = if HANDSHAKE_VERSIONS.contains(&p.protocol_version.as_str()) {
            p.protocol_version.clone()
        } else {
            // Counter-offer our newest; the client decides whether it can speak it.
            HANDSHAKE_VERSIONS[0].to_string()
        };
        let supports_elicitation = p
            .capabilities
            .as_ref()
            .and_then(|c| c.get("elicitation"))
            .is_some_and(|e| !e.is_null() && e != &Value::Bool(false));
        let client_name = p
            .client_info
            .as_ref()
            .map(|c| format!("{} {}", c.name, c.version.as_deref().unwrap_or("")))
            .unwrap_or_else(|| "unnamed client".into());
        let session = ClientSession {
            protocol_version: version.clone(),
            supports_elicitation,
            client_name,
        };
        tracing::info!(
            "initialize: {session:?} (client asked for {})",
            p.protocol_version
        );
        if self.client.set(session).is_err() {
            return Err(RpcError::new(
                oi_jsonrpc::INVALID_REQUEST,
                "initialize called more than once",
            ));
        }
        let version: ProtocolVersion = serde_json::from_value(Value::String(version))
            .map_err(|e| RpcError::internal(format!("protocol version: {e}")))?;
        let mut caps = capabilities(false);
        if self.additions.completer().is_some() {
            caps.completions = Some(Default::default());
        }
        Ok(InitializeResult::new(caps)
            .with_protocol_version(version)
            .with_server_info(server_implementation())
            .with_instructions(INSTRUCTIONS)
            .into())
    }

    /// `subscriptions/listen`: acknowledges what it honours, then streams notifications
    /// until the client cancels (no answer then) or the server ends it (a completion
    /// result, the spec's graceful end).
    async fn listen(
        self: Arc<Self>,
        ctx: RequestContext,
        era: Era,
        filter: ListenFilter,
    ) -> Result<ServerResult, RpcError> {
        let slot = CallSlot::take(&self.listening);
        if slot.before >= MAX_SUBSCRIPTIONS {
            return Err(RpcError::invalid_request(format!(
                "too many subscriptions are open ({MAX_SUBSCRIPTIONS}); close one (or listen for several things on one) and retry"
            )));
        }
        let tools = self
            .additions
            .tools_can_change()
            .then(|| self.additions.watch_tools());
        let (mut wanted, accepted) = Wanted::from_filter(&filter.filter, tools);
        let task_ids = filter.task_ids.unwrap_or_default();
        if !task_ids.is_empty() {
            calls::require_tasks("subscriptions/listen", &era)?;
            // Only the tasks this client may see are watched (and acknowledged).
            if let Ok(sealer) = &self.sealer {
                wanted.tasks = task_ids
                    .iter()
                    .filter_map(|id| Some((id.clone(), sealer.open_task(id).ok()?)))
                    .collect();
            }
        }
        let accepted_tasks = wanted.tasks.iter().map(|(id, _)| id.clone()).collect();
        let sink = Sink {
            outgoing: ctx.outgoing.clone(),
            subscription: Some(ctx.id.clone()),
        };
        let watch = Watch::start(self.engine.clone(), wanted).await;
        sink.acknowledge(accepted, accepted_tasks).await;
        watch.run(sink, ctx.cancel.clone()).await;
        let id = serde_json::to_value(&ctx.id)
            .ok()
            .and_then(|v| serde_json::from_value::<rmcp::model::RequestId>(v).ok())
            .ok_or_else(|| RpcError::internal("the subscription's id cannot be echoed"))?;
        Ok(SubscriptionsListenResult::complete(id).into())
    }

    /// `resources/subscribe` (handshake era): updates of that thread go to the connection
    /// until `resources/unsubscribe` or the connection's end.
    async fn subscribe(&self, era: &Era, uri: String) -> Result<ServerResult, RpcError> {
        let Some(target) = ThreadUri::parse(&uri) else {
            return Err(resources::not_found(
                era,
                &uri,
                "only interpreter://threads/{threadId} resources can be subscribed to",
            ));
        };
        if matches!(self.engine.thread_summary(target.id).await, Ok(None)) {
            return Err(resources::not_found(
                era,
                &uri,
                "no stored thread has this id",
            ));
        }
        let Some(connection) = self.connection.get() else {
            return Err(RpcError::invalid_request(
                "this connection cannot carry notifications outside a request",
            ));
        };
        let stop = connection.shutdown.child_token();
        {
            let mut subscribed = lock(&self.subscribed);
            if subscribed.len() >= MAX_SUBSCRIPTIONS && !subscribed.contains_key(&uri) {
                return Err(RpcError::invalid_request(format!(
                    "this connection already watches {MAX_SUBSCRIPTIONS} resources; unsubscribe from one first"
                )));
            }
            if let Some(old) = subscribed.insert(uri.clone(), stop.clone()) {
                old.cancel();
            }
        }
        let wanted = Wanted {
            threads: vec![target],
            ..Wanted::default()
        };
        let sink = Sink {
            outgoing: connection.outgoing.clone(),
            subscription: None,
        };
        let watch = Watch::start(self.engine.clone(), wanted).await;
        tokio::spawn(watch.run(sink, stop));
        Ok(ServerResult::empty(()))
    }
}

/// `server/discover`: the versions served per request, what the server offers, who it is.
/// The same for everyone for the server's life.
fn discover(additions: &Additions) -> ServerResult {
    let versions = STATELESS_VERSIONS
        .iter()
        .filter_map(|v| serde_json::from_value::<ProtocolVersion>(Value::String((*v).into())).ok())
        .collect();
    let mut caps = capabilities(true);
    if additions.completer().is_some() {
        caps.completions = Some(Default::default());
    }
    if additions.tools_can_change()
        && let Some(tools) = caps.tools.as_mut()
    {
        tools.list_changed = Some(true);
    }
    let mut result = DiscoverResult::new(versions, caps)
        .with_server_info(server_implementation())
        .with_ttl_ms(Caching::FIXED.ttl_ms)
        .with_cache_scope(CacheScope::Public);
    result.instructions = Some(INSTRUCTIONS.to_string());
    result.into()
}

/// Runs blocking file work (prompt files) on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| RpcError::internal(format!("reading prompt files stopped: {e}")))?
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
