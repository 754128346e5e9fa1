//! MCP streamable HTTP at `/mcp`, over the same method tables and dispatcher as stdio, in
//! both protocol eras.
//!
//! **2026-07-28 (stateless).** A `POST` whose request names its protocol version in
//! `_meta` (or whose `MCP-Protocol-Version` header is a version without the `initialize`
//! handshake) is served on its own by [`stateless`], with no session: the standard headers
//! are checked against the body, and the request runs on the listener's stateless table;
//! its answer is one JSON body, or an SSE stream when its handler sends notifications
//! first. Closing that stream cancels the request. A `POST` that has neither a session nor
//! `initialize` goes the same way (and is told what its `_meta` lacks).
//!
//! **2025-11-25 and earlier (sessions).**
//! * `POST /mcp` carries one JSON-RPC message. A request is answered on its own SSE stream
//!   (or as one JSON body when the client does not accept `text/event-stream`); messages
//!   its handler sends while it runs (notifications, server→client requests such as
//!   approval elicitations) go on that stream, before the response. Notifications and
//!   replies to our requests get `202 Accepted`.
//! * `GET /mcp` opens the session's standalone stream: everything not tied to a running
//!   request. With `Last-Event-ID` it resumes any stream of the session where the client
//!   lost it (events are kept per stream, bounded).
//! * `DELETE /mcp` ends the session. `initialize` creates one; its id comes back in
//!   `mcp-session-id` and must be sent with every later request (unknown id → 404).
//!
//! Safety is checked before anything else, for both eras: `Origin` (and, on a loopback
//! address, `Host`) against an allow-list (403, against DNS rebinding), the bearer token when
//! one is set (401, scheme matched case-insensitively as RFC 6750 says), a body size limit
//! (413) and a deadline on reading the body (408), a cap on sessions (503). Below HTTP,
//! [`conn`] limits connections per peer address and closes slow and idle ones; sessions
//! nobody uses for [`HttpOptions::session_idle_timeout`] are ended. Every refusal is a
//! JSON-RPC error body (`application/json`), never plain text.

use crate::Connection;
use crate::dispatch::MethodTable;
use crate::message::{Incoming, Outgoing, RequestId, RpcError, classify};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod conn;
mod session;
mod stateless;
mod ws;

use session::{RequestReply, Session, SseItem};
#[cfg(test)]
use session::{RequestRoute, Routes, STANDALONE, StreamState};

/// The session header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// Events kept per stream for `Last-Event-ID` resumption.
const HISTORY: usize = 512;
/// Finished request streams kept for resumption before the oldest is forgotten.
const CLOSED_STREAMS_KEPT: usize = 64;

/// Builds a session's method table; runs once per session.
pub type MethodsFactory = Arc<dyn Fn(&Connection) -> MethodTable + Send + Sync>;

/// What a listener serves: a table per session (the `initialize` era, and the WebSocket
/// transport), and optionally one table that answers every stateless request (MCP
/// 2026-07-28); without it, a request that has no session is refused.
#[derive(Clone)]
pub struct Tables {
    /// Builds each session's table.
    pub sessions: MethodsFactory,
    /// Serves requests that carry no session, each on its own.
    pub stateless: Option<MethodTable>,
}

impl From<MethodsFactory> for Tables {
    fn from(sessions: MethodsFactory) -> Self {
        Self {
            sessions,
            stateless: None,
        }
    }
}

/// What the listener speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// MCP streamable HTTP at `/mcp`.
    #[default]
    StreamableHttp,
    /// JSON-RPC over WebSocket at `/`, one message per text frame (Codex's app-server
    /// transport).
    WebSocket,
}

/// How the HTTP transport is configured. Its `Debug` shows whether a token is set, never the
/// token.
#[derive(Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Streamable HTTP or WebSocket.
    pub protocol: Protocol,
    /// Bearer token clients must send (`Authorization: Bearer …`); `None`: no check (only
    /// allowed on a loopback address; the CLI enforces that).
    pub auth_token: Option<String>,
    /// Origins allowed besides loopback ones (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`), exactly as browsers send them, e.g. `https://app.example.com`.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Most sessions open at once.
    pub max_sessions: usize,
    /// A session with no request running, no stream open and nothing sent for this long is
    /// ended (its id then gets 404); `None`: sessions live until `DELETE` or shutdown.
    pub session_idle_timeout: Option<Duration>,
    /// A connection must deliver each request head within this time of opening, or of the
    /// first byte of that request.
    pub header_timeout: Duration,
    /// A request body must arrive within this time of its handler starting (else 408).
    pub body_timeout: Duration,
    /// A connection with no request being handled and no byte moving for this long is
    /// closed. SSE streams send keep-alive comments often enough to stay open.
    pub idle_timeout: Duration,
    /// Most authenticated connections open at once from one IP address (loopback clients
    /// share one); unauthenticated ones have their own budget (see `conn`).
    pub max_connections_per_peer: usize,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field("protocol", &self.protocol)
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .field("allowed_origins", &self.allowed_origins)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_sessions", &self.max_sessions)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_connections_per_peer", &self.max_connections_per_peer)
            .finish()
    }
}

impl HttpOptions {
    /// Defaults for `addr`: no token, loopback origins, 4 MiB bodies, 256 sessions ended
    /// after an hour unused, 10 s for a request head, 60 s for a body, connections closed
    /// after 60 s idle, 256 connections per peer address.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            protocol: Protocol::StreamableHttp,
            auth_token: None,
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 256,
            session_idle_timeout: Some(Duration::from_secs(3600)),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            max_connections_per_peer: 256,
        }
    }

    /// Where clients reach a server bound to `addr` (the port of `:0` resolved), as printed
    /// at startup.
    pub fn url(&self, addr: SocketAddr) -> String {
        match self.protocol {
            Protocol::StreamableHttp => format!("http://{addr}/mcp"),
            Protocol::WebSocket => format!("ws://{addr}"),
        }
    }

    /// How often SSE streams send a keep-alive comment (and WebSocket sessions a ping):
    /// well within the idle timeout.
    fn keep_alive(&self) -> Duration {
        (self.idle_timeout / 3)
            .min(Duration::from_secs(15))
            .max(Duration::from_millis(10))
    }
}

/// Serves `/mcp` on `listener` until `stop` fires; then ends every session (running
/// requests are cancelled and get a grace period to answer) and returns. With
/// [`Protocol::WebSocket`] it serves WebSocket sessions at `/` instead (see [`ws`]).
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    opts: HttpOptions,
    tables: impl Into<Tables>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let tables = tables.into();
    if opts.protocol == Protocol::WebSocket {
        return ws::serve_ws(listener, opts, tables.sessions, stop).await;
    }
    let state = Arc::new(ServerState {
        opts: opts.clone(),
        methods: tables.sessions,
        stateless: tables
            .stateless
            .map(|table| stateless::Stateless::new(table, &stop)),
        sessions: Mutex::default(),
        stop: stop.clone(),
    });
    let app = Router::new()
        .route(
            "/mcp",
            axum::routing::post(post_mcp)
                .get(get_mcp)
                .delete(delete_mcp),
        )
        .fallback(|| async {
            refuse(
                StatusCode::NOT_FOUND,
                "nothing is served here: the MCP endpoint is /mcp",
            )
        })
        .method_not_allowed_fallback(|| async {
            refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                "/mcp takes POST (and GET or DELETE with the mcp-session-id of a session)",
            )
        })
        .layer(DefaultBodyLimit::max(opts.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(opts.clone()),
            guard,
        ))
        .layer(axum::middleware::from_fn(conn::track_requests))
        .with_state(state.clone());
    if let Some(after) = opts.session_idle_timeout {
        tokio::spawn(expire_idle_sessions(state.clone(), after));
    }
    let shutdown = {
        let state = state.clone();
        async move {
            stop.cancelled().await;
            // Ending the sessions ends their streams, so open SSE connections close and the
            // server can finish; stateless requests answer too (their streams then end).
            let sessions: Vec<Arc<Session>> =
                lock(&state.sessions).drain().map(|(_, s)| s).collect();
            let ends = sessions.iter().map(|s| s.end());
            let stateless = async {
                if let Some(stateless) = &state.stateless {
                    stateless.end().await;
                }
            };
            futures::future::join(futures::future::join_all(ends), stateless).await;
        }
    };
    let listener = conn::GuardedListener::new(listener, conn::ConnLimits::of(&opts));
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<conn::ConnHandle>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

/// Ends the sessions idle for `after` (see [`Session::idle_since`]) until the server stops.
async fn expire_idle_sessions(state: Arc<ServerState>, after: Duration) {
    let tick = (after / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
    loop {
        tokio::select! {
            _ = state.stop.cancelled() => return,
            _ = tokio::time::sleep(tick) => {}
        }
        let now = Instant::now();
        let expired: Vec<Arc<Session>> = {
            let mut sessions = lock(&state.sessions);
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| {
                    s.idle_since()
                        .is_some_and(|t| now.duration_since(t) >= after)
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in expired {
            tracing::info!("session {} ended: unused for {after:?}", session.id);
            tokio::spawn(async move { session.end().await });
        }
    }
}

struct ServerState {
    opts: HttpOptions,
    methods: MethodsFactory,
    stateless: Option<stateless::Stateless>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    stop: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A refusal of the transport (no such session, a bad token, a body too large…): status
/// `status` with a JSON-RPC error body (`id: null`) whose message says what to fix.
pub(crate) fn refuse(status: StatusCode, text: impl Into<String>) -> Response {
    let code = if status.is_server_error() {
        crate::message::INTERNAL_ERROR
    } else {
        crate::message::INVALID_REQUEST
    };
    rpc_error_response(status, None, RpcError::new(code, text))
}

fn rpc_error_response(status: StatusCode, id: Option<RequestId>, error: RpcError) -> Response {
    let body = Outgoing::Error { id, error }.to_line();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// Origin, Host and token checks, before any handler runs.
async fn guard(
    State(opts): State<Arc<HttpOptions>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = req.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(origin, &opts.allowed_origins) {
            tracing::warn!("refused a request from origin {origin:?}");
            return refuse(
                StatusCode::FORBIDDEN,
                format!(
                    "origin {origin} is not allowed; start the server with --allowed-origin {origin} to allow it"
                ),
            );
        }
    }
    if opts.addr.ip().is_loopback() {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !host_allowed(host, &opts.allowed_origins) {
            tracing::warn!("refused a request for host {host:?}");
            return refuse(
                StatusCode::FORBIDDEN,
                format!(
                    "host {host} is not allowed on a loopback server (DNS rebinding protection); connect to localhost or 127.0.0.1"
                ),
            );
        }
    }
    if let Some(token) = &opts.auth_token {
        let sent = bearer_token(headers).unwrap_or("");
        if !constant_time_eq(sent.as_bytes(), token.as_bytes()) {
            let mut resp = refuse(
                StatusCode::UNAUTHORIZED,
                "missing or wrong bearer token; send `Authorization: Bearer <token>`",
            );
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return resp;
        }
    }
    // Passed every check: the connection leaves the unauthenticated budget.
    if let Err(resp) = conn::admit(&req) {
        return resp;
    }
    next.run(req).await
}

/// Loopback origins on any port, plus the configured ones (exact match).
pub fn origin_allowed(origin: &str, extra: &[String]) -> bool {
    if extra.iter().any(|o| o == origin) {
        return true;
    }
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match rest {
        Some(hostport) => is_loopback_host(hostport),
        None => false,
    }
}

fn host_allowed(host: &str, extra_origins: &[String]) -> bool {
    if is_loopback_host(host) {
        return true;
    }
    extra_origins.iter().any(|o| {
        o.split_once("://")
            .map(|(_, hostport)| hostport == host)
            .unwrap_or(false)
    })
}

/// `localhost`, `127.0.0.1` or `[::1]`, with or without a port.
fn is_loopback_host(hostport: &str) -> bool {
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, port)) if port.is_empty() || port.starts_with(':') => return h == "::1",
            _ => return false,
        }
    } else {
        hostport.split(':').next().unwrap_or("")
    };
    host == "localhost" || host == "127.0.0.1"
}

/// The credentials of `Authorization: Bearer <token>`; the scheme is case-insensitive
/// (RFC 6750 §2.1, RFC 9110 §11.1), whitespace around the token is not part of it.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn accepts_sse(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"))
}

fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
}

// A refusal is built once per refused HTTP request; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
fn find_session(state: &ServerState, headers: &HeaderMap) -> Result<Arc<Session>, Response> {
    let Some(id) = session_id(headers) else {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "missing mcp-session-id header; send `initialize` first and echo the id it returns",
        ));
    };
    let session = lock(&state.sessions).get(&id).cloned().ok_or_else(|| {
        refuse(
            StatusCode::NOT_FOUND,
            format!("unknown session {id}; it ended (DELETE, unused too long, or a restart) or never existed, send `initialize` to start a new one"),
        )
    })?;
    session.touch();
    Ok(session)
}

async fn post_mcp(State(state): State<Arc<ServerState>>, req: axum::extract::Request) -> Response {
    use axum::extract::FromRequest;
    let headers = req.headers().clone();
    let body = match tokio::time::timeout(state.opts.body_timeout, Bytes::from_request(req, &()))
        .await
    {
        Ok(Ok(body)) => body,
        Ok(Err(rejection)) => {
            let status = rejection.status();
            let why = if status == StatusCode::PAYLOAD_TOO_LARGE {
                format!(
                    "the body is larger than {} bytes; send large inputs as files and pass their paths",
                    state.opts.max_body_bytes
                )
            } else {
                format!("the body could not be read: {}", rejection.body_text())
            };
            return refuse(status, why);
        }
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {:?}; send the whole body at once",
                    state.opts.body_timeout
                ),
            );
        }
    };
    let value: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error_response(
                StatusCode::BAD_REQUEST,
                None,
                RpcError::parse_error(format!("the body is not JSON ({e})")),
            );
        }
    };
    let incoming = match classify(value) {
        Ok(m) => m,
        Err(rejected) => {
            return rpc_error_response(StatusCode::BAD_REQUEST, rejected.id, rejected.error);
        }
    };
    let is_initialize =
        matches!(&incoming, Incoming::Request { method, .. } if method == "initialize");
    // The era: a request that names a 2026-07-28 protocol version is served on its own
    // (any session id it carries is ignored, as the spec says); so is one with neither a
    // session nor `initialize`, to be told what it lacks.
    if let Some(stateless) = &state.stateless
        && (stateless::wants_stateless(&headers, &incoming)
            || (session_id(&headers).is_none() && !is_initialize))
    {
        return stateless.serve(&state.opts, &headers, incoming).await;
    }
    let (session, created) = if is_initialize && session_id(&headers).is_none() {
        match new_session(&state) {
            Ok(s) => (s, true),
            Err(resp) => return resp,
        }
    } else {
        match find_session(&state, &headers) {
            Ok(s) => (s, false),
            Err(resp) => return resp,
        }
    };
    // The session is in use while this request is handled (a JSON answer can take a turn).
    let _in_use = session.in_use();
    let mut resp = match incoming {
        Incoming::Request { id, method, params } => {
            let sse = accepts_sse(&headers);
            let reply = session.open_request_stream(&id, sse);
            if !session
                .deliver(Ok(Incoming::Request {
                    id: id.clone(),
                    method,
                    params,
                }))
                .await
            {
                return refuse(StatusCode::NOT_FOUND, "the session ended");
            }
            match reply {
                RequestReply::Stream(rx) => sse_response(rx, state.opts.keep_alive()),
                RequestReply::Json(rx) => match rx.await {
                    Ok(line) => (
                        StatusCode::OK,
                        [(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static("application/json"),
                        )],
                        line,
                    )
                        .into_response(),
                    Err(_) => refuse(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the session ended before answering",
                    ),
                },
            }
        }
        other => {
            if !session.deliver(Ok(other)).await {
                return refuse(StatusCode::NOT_FOUND, "the session ended");
            }
            StatusCode::ACCEPTED.into_response()
        }
    };
    if created && let Ok(v) = HeaderValue::from_str(&session.id) {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

/// `GET` and `DELETE` belong to sessions; the 2026-07-28 protocol has neither (change
/// notifications come from `subscriptions/listen`).
fn no_session_method(state: &ServerState, headers: &HeaderMap, what: &str) -> Option<Response> {
    if state.stateless.is_none() || session_id(headers).is_some() {
        return None;
    }
    let mut resp = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{what} /mcp needs the mcp-session-id of a session opened with `initialize` (MCP 2025-11-25 and earlier); MCP 2026-07-28 has no sessions: POST each request, and use `subscriptions/listen` for change notifications"
        ),
    );
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    Some(resp)
}

async fn get_mcp(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    if let Some(resp) = no_session_method(&state, &headers, "GET") {
        return resp;
    }
    if !accepts_sse(&headers) {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "GET /mcp opens an event stream; send `Accept: text/event-stream`",
        );
    }
    let session = match find_session(&state, &headers) {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    let last = headers
        .get("last-event-id")
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    match session.attach(last.as_deref()) {
        Ok(rx) => sse_response(rx, state.opts.keep_alive()),
        Err(resp) => resp,
    }
}

async fn delete_mcp(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    if let Some(resp) = no_session_method(&state, &headers, "DELETE") {
        return resp;
    }
    let session = match find_session(&state, &headers) {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    lock(&state.sessions).remove(&session.id);
    session.end().await;
    StatusCode::NO_CONTENT.into_response()
}

fn sse_response(rx: mpsc::UnboundedReceiver<SseItem>, keep_alive: Duration) -> Response {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let item = rx.recv().await?;
        let event = Event::default()
            .id(item.id)
            .event("message")
            .data(item.data);
        Some((Ok::<Event, Infallible>(event), rx))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default().interval(keep_alive))
        .into_response()
}

// A refusal is built once per refused HTTP request; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
fn new_session(state: &Arc<ServerState>) -> Result<Arc<Session>, Response> {
    if state.stop.is_cancelled() {
        return Err(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        ));
    }
    let mut sessions = lock(&state.sessions);
    if sessions.len() >= state.opts.max_sessions {
        return Err(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "too many sessions ({}); end unused ones with DELETE /mcp and retry{}",
                state.opts.max_sessions,
                match state.opts.session_idle_timeout {
                    Some(t) => format!(" (sessions unused for {t:?} end by themselves)"),
                    None => String::new(),
                }
            ),
        ));
    }
    let session = Session::start(&state.methods);
    sessions.insert(session.id.clone(), session.clone());
    Ok(session)
}

#[cfg(test)]
mod tests;
