//! Method tables and the processor loop. Each wire method is declared once, with its
//! params type; params are decoded from that declaration (`-32602` naming the problem
//! when they do not fit) before the handler runs. Other APIs served on the same
//! connection (e.g. the v2 thread/turn API) register their own methods in the same table.
//!
//! The base-protocol parts that apply to every request live here: duplicate-id
//! rejection, `notifications/cancelled` (a cancelled request gets no response), and
//! routing of the client's replies to our own requests.

use crate::message::{Incoming, Rejected, RequestId, RpcError, json_type_name};
use crate::outgoing::OutgoingSender;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// A boxed, sendable future: what handlers and seams return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a handler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    /// In the processor, before the next message is read: for quick handlers whose
    /// order matters (e.g. `initialize`).
    Inline,
    /// In its own task: long-running work; other requests are served meanwhile.
    Spawn,
}

/// What a request handler gets besides its params.
#[derive(Clone)]
pub struct RequestContext {
    /// The request's id, as the client sent it.
    pub id: RequestId,
    /// The connection's sender (notifications during the request, server→client requests).
    pub outgoing: OutgoingSender,
    /// Fired when the client cancels this request or the server shuts down.
    pub cancel: CancellationToken,
    client_cancelled: Arc<AtomicBool>,
    responded: CancellationToken,
}

impl RequestContext {
    /// Fires once this request's response has been queued (or it was cancelled and will
    /// get none). Lets a handler send notifications that must follow its response, e.g.
    /// `thread/started` after the `thread/start` result.
    pub fn response_sent(&self) -> CancellationToken {
        self.responded.clone()
    }

    /// True when the client sent `notifications/cancelled` for this request (as opposed
    /// to the server shutting down).
    pub fn cancelled_by_client(&self) -> bool {
        self.client_cancelled.load(Ordering::SeqCst)
    }
}

type RequestFn = Arc<
    dyn Fn(RequestContext, Option<Value>) -> BoxFuture<'static, Result<Value, RpcError>>
        + Send
        + Sync,
>;
type NotificationFn = Arc<dyn Fn(Option<Value>) -> BoxFuture<'static, ()> + Send + Sync>;

/// Every method a connection answers, each declared once with its params type. Built by
/// the services (MCP, v2, v1) and merged into one table per connection; the processor
/// decodes params from the declaration before a handler runs.
#[derive(Default, Clone)]
pub struct MethodTable {
    requests: HashMap<&'static str, (RequestFn, Execution)>,
    notifications: HashMap<&'static str, NotificationFn>,
}

impl MethodTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a request method with params type `P`. Absent params decode as `{}`.
    pub fn request<P, F, Fut>(&mut self, method: &'static str, exec: Execution, handler: F)
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(RequestContext, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let f: RequestFn = Arc::new(move |ctx, params| {
            let handler = handler.clone();
            Box::pin(async move {
                let params = decode_params::<P>(method, params)?;
                handler(ctx, params).await
            })
        });
        self.requests.insert(method, (f, exec));
    }

    /// Declares a notification. Bad params are logged and dropped (there is no one to
    /// answer).
    pub fn notification<P, F, Fut>(&mut self, method: &'static str, handler: F)
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let f: NotificationFn = Arc::new(move |params| {
            let handler = handler.clone();
            Box::pin(async move {
                match decode_params::<P>(method, params) {
                    Ok(p) => handler(p).await,
                    Err(e) => tracing::warn!("ignoring {method}: {}", e.message),
                }
            })
        });
        self.notifications.insert(method, f);
    }

    /// Adds every method of `other`; on a name clash `other` wins.
    pub fn merge(&mut self, other: MethodTable) {
        self.requests.extend(other.requests);
        self.notifications.extend(other.notifications);
    }

    /// True when a request method of that name is declared.
    pub fn has_request(&self, method: &str) -> bool {
        self.requests.contains_key(method)
    }

    /// Runs `method`'s handler directly, decoding `params` as its declaration says; `None`
    /// when there is no such method. Lets a method that replaces another on the same
    /// connection fall back to it (the v2 `initialize` hands MCP-form calls to MCP's).
    pub fn call(
        &self,
        method: &str,
        ctx: RequestContext,
        params: Option<Value>,
    ) -> Option<BoxFuture<'static, Result<Value, RpcError>>> {
        self.requests.get(method).map(|(f, _)| f(ctx, params))
    }
}

/// Decodes params into `P`. Missing/null params are `{}`, so a params struct with
/// required fields reports "missing field `x`".
pub fn decode_params<P: DeserializeOwned>(
    method: &str,
    params: Option<Value>,
) -> Result<P, RpcError> {
    let value = match params {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v @ Value::Object(_)) => v,
        Some(other) => {
            return Err(RpcError::invalid_params(
                method,
                format!("params must be an object, got {}", json_type_name(&other)),
            ));
        }
    };
    serde_json::from_value(value).map_err(|e| RpcError::invalid_params(method, e))
}

struct InFlight {
    cancel: CancellationToken,
    client_cancelled: Arc<AtomicBool>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelledParams {
    request_id: RequestId,
    #[serde(default)]
    reason: Option<String>,
}

/// What the reader hands the processor.
pub type Inbound = Result<Incoming, Rejected>;

/// How long calls still running when a connection ends get to answer before they stop.
pub(crate) const CALLS_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits for the calls [`process`] left running, at most [`CALLS_GRACE`]; then stops the
/// rest. Every transport ends its connection this way.
pub(crate) async fn end_calls(mut tasks: JoinSet<()>) {
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(CALLS_GRACE, drain).await.is_err() {
        tracing::warn!("running calls did not end within {CALLS_GRACE:?}; stopping them");
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
}

/// Serves messages until `inbound` closes or `shutdown` fires, then cancels whatever is
/// still running (without the "client cancelled" flag, so those requests still answer)
/// and returns the tasks so the caller can wait for them within a deadline.
pub async fn process(
    mut inbound: mpsc::Receiver<Inbound>,
    table: MethodTable,
    outgoing: OutgoingSender,
    shutdown: CancellationToken,
) -> JoinSet<()> {
    let in_flight: Arc<Mutex<HashMap<RequestId, InFlight>>> = Arc::default();
    let mut tasks = JoinSet::new();
    loop {
        let msg = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            msg = inbound.recv() => match msg {
                Some(m) => m,
                None => break,
            },
        };
        // Reap finished tasks so the set does not grow with the connection's age.
        while tasks.try_join_next().is_some() {}
        match msg {
            Err(Rejected { id, error }) => {
                tracing::warn!("rejected a message: {}", error.message);
                outgoing.respond_error(id, error).await;
            }
            Ok(Incoming::Response { id, result }) => {
                if !outgoing.route_response(&id, result) {
                    tracing::debug!("reply for unknown or expired request id {id}");
                }
            }
            Ok(Incoming::Notification { method, params }) => {
                tracing::debug!("notification: {method}");
                if method == "notifications/cancelled" {
                    match decode_params::<CancelledParams>(&method, params) {
                        Ok(p) => cancel_in_flight(&in_flight, &p),
                        Err(e) => tracing::warn!("ignoring notifications/cancelled: {}", e.message),
                    }
                } else if let Some(f) = table.notifications.get(method.as_str()) {
                    f(params).await;
                } else {
                    tracing::debug!("ignoring unknown notification {method}");
                }
            }
            Ok(Incoming::Request { id, method, params }) => {
                tracing::debug!("request {id}: {method}");
                let Some((handler, exec)) = table.requests.get(method.as_str()).cloned() else {
                    tracing::warn!("request {id}: unknown method {method}");
                    outgoing
                        .respond_error(Some(id), RpcError::method_not_found(&method))
                        .await;
                    continue;
                };
                let ctx = RequestContext {
                    id: id.clone(),
                    outgoing: outgoing.for_request(id.clone()),
                    cancel: shutdown.child_token(),
                    client_cancelled: Arc::new(AtomicBool::new(false)),
                    responded: CancellationToken::new(),
                };
                let registered = register(&in_flight, &ctx);
                if !registered {
                    let error = RpcError::invalid_request(format!(
                        "request id {id} is already in use by a request that is still running; use a new id"
                    ));
                    outgoing.respond_error(Some(id), error).await;
                    continue;
                }
                let fut = run_request(handler, ctx, params, in_flight.clone());
                match exec {
                    Execution::Inline => fut.await,
                    Execution::Spawn => {
                        tasks.spawn(fut);
                    }
                }
            }
        }
    }
    // Wake every running request; they end their turns and answer (not client-cancelled).
    for (_, f) in lock(&in_flight).iter() {
        f.cancel.cancel();
    }
    tasks
}

/// A request served on its own, outside any connection's processor (the stateless path of
/// MCP 2026-07-28 over HTTP, where each request is its own HTTP exchange). See
/// [`run_detached`].
pub struct Detached {
    cancel: CancellationToken,
    client_cancelled: Arc<AtomicBool>,
}

impl Detached {
    /// The client gave up on the request (its HTTP stream closed): the handler is cancelled
    /// as by `notifications/cancelled`, and no response is sent.
    pub fn cancel_by_client(&self) {
        self.client_cancelled.store(true, Ordering::SeqCst);
        self.cancel.cancel();
    }
}

/// Runs request `id` of `table` by itself: the returned future runs the handler (in a task
/// of its own, so a panic answers `-32603`) and sends its response through `outgoing`, or an
/// error for a method the table does not have. `cancel` stops it (the server is shutting
/// down: it still answers); [`Detached::cancel_by_client`] stops it without an answer.
pub fn run_detached(
    table: &MethodTable,
    id: RequestId,
    method: &str,
    params: Option<Value>,
    outgoing: OutgoingSender,
    cancel: CancellationToken,
) -> (Detached, BoxFuture<'static, ()>) {
    let client_cancelled = Arc::new(AtomicBool::new(false));
    let detached = Detached {
        cancel: cancel.clone(),
        client_cancelled: client_cancelled.clone(),
    };
    let Some((handler, _)) = table.requests.get(method).cloned() else {
        let error = RpcError::method_not_found(method);
        let outgoing = outgoing.for_request(id.clone());
        return (
            detached,
            Box::pin(async move {
                outgoing.respond_error(Some(id), error).await;
            }),
        );
    };
    let ctx = RequestContext {
        id: id.clone(),
        outgoing: outgoing.for_request(id),
        cancel,
        client_cancelled,
        responded: CancellationToken::new(),
    };
    // Its own table of running requests: a detached request shares ids with nobody.
    let in_flight: Arc<Mutex<HashMap<RequestId, InFlight>>> = Arc::default();
    register(&in_flight, &ctx);
    (
        detached,
        Box::pin(run_request(handler, ctx, params, in_flight)),
    )
}

async fn run_request(
    handler: RequestFn,
    ctx: RequestContext,
    params: Option<Value>,
    in_flight: Arc<Mutex<HashMap<RequestId, InFlight>>>,
) {
    let outgoing = ctx.outgoing.clone();
    let id = ctx.id.clone();
    let flag = ctx.client_cancelled.clone();
    let _responded = ctx.responded.clone().drop_guard();
    // Run the handler in its own task so a bug that panics answers -32603 instead of
    // leaving the client waiting; the guard stops it if this task is aborted.
    let mut task = AbortOnDrop(tokio::spawn(handler(ctx, params)));
    let result = match (&mut task.0).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("handler for request {id} failed: {e}");
            Err(RpcError::internal(format!(
                "the server failed while handling this request ({e}); the connection is still usable"
            )))
        }
    };
    lock(&in_flight).remove(&id);
    // MCP: a request the client cancelled gets no response.
    if flag.load(Ordering::SeqCst) {
        return;
    }
    match result {
        Ok(v) => outgoing.respond(id, v).await,
        Err(e) => outgoing.respond_error(Some(id), e).await,
    };
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Records a request as running; false if its id is already taken.
fn register(in_flight: &Mutex<HashMap<RequestId, InFlight>>, ctx: &RequestContext) -> bool {
    let mut map = lock(in_flight);
    if map.contains_key(&ctx.id) {
        return false;
    }
    map.insert(
        ctx.id.clone(),
        InFlight {
            cancel: ctx.cancel.clone(),
            client_cancelled: ctx.client_cancelled.clone(),
        },
    );
    true
}

fn cancel_in_flight(in_flight: &Mutex<HashMap<RequestId, InFlight>>, p: &CancelledParams) {
    match lock(in_flight).get(&p.request_id) {
        Some(f) => {
            tracing::info!(
                "client cancelled request {} ({})",
                p.request_id,
                p.reason.as_deref().unwrap_or("no reason given")
            );
            f.client_cancelled.store(true, Ordering::SeqCst);
            f.cancel.cancel();
        }
        // Normal race: the request finished before the cancellation arrived.
        None => tracing::debug!(
            "cancellation for request {} that is not running",
            p.request_id
        ),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
