//! MCP streamable HTTP (2025-06-18 / 2025-11-25) at `/mcp`, over the same method tables
//! and dispatcher as stdio.
//!
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
//! Safety is checked before anything else: `Origin` (and, on a loopback address, `Host`)
//! against an allow-list (403, against DNS rebinding), the bearer token when one is set
//! (401), a body size limit (413), a cap on sessions (503).

use crate::Connection;
use crate::dispatch::{self, Inbound, MethodTable};
use crate::message::{Incoming, Outgoing, RequestId, RpcError, classify};
use crate::outgoing::{OutgoingSender, Routed};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The session header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// Events kept per stream for `Last-Event-ID` resumption.
const HISTORY: usize = 512;
/// Finished request streams kept for resumption before the oldest is forgotten.
const CLOSED_STREAMS_KEPT: usize = 64;
/// On shutdown: how long running requests get to finish and answer.
const CALLS_GRACE: Duration = Duration::from_secs(5);

/// Builds a session's method table; runs once per session.
pub type MethodsFactory = Arc<dyn Fn(&Connection) -> MethodTable + Send + Sync>;

/// How the HTTP transport is configured.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
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
}

impl HttpOptions {
    /// Defaults for `addr`: no token, loopback origins, 4 MiB bodies, 256 sessions.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            auth_token: None,
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 256,
        }
    }
}

/// Serves `/mcp` on `listener` until `stop` fires; then ends every session (running
/// requests are cancelled and get a grace period to answer) and returns.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    opts: HttpOptions,
    methods: MethodsFactory,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let state = Arc::new(ServerState {
        opts: opts.clone(),
        methods,
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
        .layer(DefaultBodyLimit::max(opts.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state.clone());
    let shutdown = {
        let state = state.clone();
        async move {
            stop.cancelled().await;
            // Ending the sessions ends their streams, so open SSE connections close and the
            // server can finish.
            let sessions: Vec<Arc<Session>> =
                lock(&state.sessions).drain().map(|(_, s)| s).collect();
            let ends = sessions.iter().map(|s| s.end());
            futures::future::join_all(ends).await;
        }
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

struct ServerState {
    opts: HttpOptions,
    methods: MethodsFactory,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    stop: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn plain(status: StatusCode, text: impl Into<String>) -> Response {
    (status, text.into()).into_response()
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
    State(state): State<Arc<ServerState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = req.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(origin, &state.opts.allowed_origins) {
            tracing::warn!("refused a request from origin {origin:?}");
            return plain(
                StatusCode::FORBIDDEN,
                format!(
                    "origin {origin} is not allowed; start the server with --allowed-origin {origin} to allow it"
                ),
            );
        }
    }
    if state.opts.addr.ip().is_loopback() {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !host_allowed(host, &state.opts.allowed_origins) {
            tracing::warn!("refused a request for host {host:?}");
            return plain(
                StatusCode::FORBIDDEN,
                format!(
                    "host {host} is not allowed on a loopback server (DNS rebinding protection); connect to localhost or 127.0.0.1"
                ),
            );
        }
    }
    if let Some(token) = &state.opts.auth_token {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .unwrap_or("");
        if !constant_time_eq(sent.as_bytes(), token.as_bytes()) {
            let mut resp = plain(
                StatusCode::UNAUTHORIZED,
                "missing or wrong bearer token; send `Authorization: Bearer <token>`",
            );
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return resp;
        }
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
        return Err(plain(
            StatusCode::BAD_REQUEST,
            "missing mcp-session-id header; send `initialize` first and echo the id it returns",
        ));
    };
    lock(&state.sessions).get(&id).cloned().ok_or_else(|| {
        plain(
            StatusCode::NOT_FOUND,
            format!("unknown session {id}; it ended or never existed, send `initialize` to start a new one"),
        )
    })
}

async fn post_mcp(
    State(state): State<Arc<ServerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
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
                return plain(StatusCode::NOT_FOUND, "the session ended");
            }
            match reply {
                RequestReply::Stream(rx) => sse_response(rx),
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
                    Err(_) => plain(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the session ended before answering",
                    ),
                },
            }
        }
        other => {
            if !session.deliver(Ok(other)).await {
                return plain(StatusCode::NOT_FOUND, "the session ended");
            }
            StatusCode::ACCEPTED.into_response()
        }
    };
    if created && let Ok(v) = HeaderValue::from_str(&session.id) {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

async fn get_mcp(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    if !accepts_sse(&headers) {
        return plain(
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
        Ok(rx) => sse_response(rx),
        Err(resp) => resp,
    }
}

async fn delete_mcp(State(state): State<Arc<ServerState>>, headers: HeaderMap) -> Response {
    let session = match find_session(&state, &headers) {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    lock(&state.sessions).remove(&session.id);
    session.end().await;
    StatusCode::NO_CONTENT.into_response()
}

fn sse_response(rx: mpsc::UnboundedReceiver<SseItem>) -> Response {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let item = rx.recv().await?;
        let event = Event::default()
            .id(item.id)
            .event("message")
            .data(item.data);
        Some((Ok::<Event, Infallible>(event), rx))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

// A refusal is built once per refused HTTP request; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
fn new_session(state: &Arc<ServerState>) -> Result<Arc<Session>, Response> {
    if state.stop.is_cancelled() {
        return Err(plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        ));
    }
    let mut sessions = lock(&state.sessions);
    if sessions.len() >= state.opts.max_sessions {
        return Err(plain(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "too many sessions ({}); end unused ones with DELETE /mcp and retry",
                state.opts.max_sessions
            ),
        ));
    }
    let session = Session::start(&state.methods);
    sessions.insert(session.id.clone(), session.clone());
    Ok(session)
}

/// One SSE event: its id (`stream/seq`) and its JSON.
#[derive(Clone)]
struct SseItem {
    id: String,
    data: String,
}

enum RequestReply {
    Stream(mpsc::UnboundedReceiver<SseItem>),
    Json(oneshot::Receiver<Vec<u8>>),
}

/// One stream of a session: the standalone stream (0) or a request's stream.
#[derive(Default)]
struct StreamState {
    history: VecDeque<(u64, String)>,
    next_seq: u64,
    /// Highest sequence number handed to a live connection.
    delivered: Option<u64>,
    live: Option<mpsc::UnboundedSender<SseItem>>,
    /// The request's response was sent: no more events will come.
    finished: bool,
}

impl StreamState {
    fn push(&mut self, stream: u64, data: String) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.history.push_back((seq, data.clone()));
        if self.history.len() > HISTORY {
            self.history.pop_front();
        }
        if let Some(live) = &self.live {
            let item = SseItem {
                id: format!("{stream}/{seq}"),
                data,
            };
            if live.send(item).is_ok() {
                self.delivered = Some(seq);
            } else {
                // The client went away; keep the events for a resumption.
                self.live = None;
            }
        }
    }

    /// Connects `tx` and replays what came after `after`.
    fn attach(&mut self, stream: u64, after: Option<u64>, tx: mpsc::UnboundedSender<SseItem>) {
        for (seq, data) in &self.history {
            if after.is_none_or(|a| *seq > a) {
                let _ = tx.send(SseItem {
                    id: format!("{stream}/{seq}"),
                    data: data.clone(),
                });
                self.delivered = Some(*seq);
            }
        }
        if !self.finished {
            self.live = Some(tx);
        }
    }
}

#[derive(Default)]
struct Routes {
    streams: HashMap<u64, StreamState>,
    /// Which stream answers which client request, and whether it answers as JSON.
    requests: HashMap<RequestId, RequestRoute>,
    next_stream: u64,
    finished_order: VecDeque<u64>,
}

enum RequestRoute {
    Stream(u64),
    Json(oneshot::Sender<Vec<u8>>),
}

const STANDALONE: u64 = 0;

impl Routes {
    fn route(&mut self, routed: Routed) {
        let data = match String::from_utf8(routed.msg.to_line()) {
            Ok(mut s) => {
                s.truncate(s.trim_end().len());
                s
            }
            Err(_) => return,
        };
        let reply_to = match &routed.msg {
            Outgoing::Response { id, .. } => Some(id.clone()),
            Outgoing::Error { id, .. } => id.clone(),
            _ => None,
        };
        if let Some(id) = reply_to {
            match self.requests.remove(&id) {
                Some(RequestRoute::Stream(stream)) => {
                    if let Some(s) = self.streams.get_mut(&stream) {
                        s.push(stream, data);
                        s.finished = true;
                        s.live = None;
                    }
                    self.finished_order.push_back(stream);
                    if self.finished_order.len() > CLOSED_STREAMS_KEPT
                        && let Some(old) = self.finished_order.pop_front()
                    {
                        self.streams.remove(&old);
                    }
                }
                Some(RequestRoute::Json(tx)) => {
                    let _ = tx.send(data.into_bytes());
                }
                None => self.push(STANDALONE, data),
            }
            return;
        }
        let stream = match routed.origin.as_ref().and_then(|o| self.requests.get(o)) {
            Some(RequestRoute::Stream(s)) => *s,
            _ => STANDALONE,
        };
        self.push(stream, data);
    }

    fn push(&mut self, stream: u64, data: String) {
        self.streams.entry(stream).or_default().push(stream, data);
    }
}

struct Session {
    id: String,
    inbound: mpsc::Sender<Inbound>,
    routes: Arc<Mutex<Routes>>,
    shutdown: CancellationToken,
    done: CancellationToken,
}

impl Session {
    fn start(methods: &MethodsFactory) -> Arc<Session> {
        let (in_tx, in_rx) = mpsc::channel::<Inbound>(crate::connection::INCOMING_QUEUE);
        let (out_tx, mut out_rx) = mpsc::channel::<Routed>(crate::connection::OUTGOING_QUEUE);
        let outgoing = OutgoingSender::new(out_tx);
        let shutdown = CancellationToken::new();
        let done = CancellationToken::new();
        let routes = Arc::new(Mutex::new(Routes {
            next_stream: STANDALONE + 1,
            ..Routes::default()
        }));
        {
            let routes = routes.clone();
            tokio::spawn(async move {
                while let Some(msg) = out_rx.recv().await {
                    lock(&routes).route(msg);
                }
                // Every sender is gone: close the streams still open.
                for s in lock(&routes).streams.values_mut() {
                    s.live = None;
                }
            });
        }
        let conn = Connection {
            outgoing: outgoing.clone(),
            shutdown: shutdown.clone(),
        };
        let table = methods(&conn);
        drop(conn);
        {
            let shutdown = shutdown.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let mut tasks =
                    dispatch::process(in_rx, table, outgoing.clone(), shutdown.clone()).await;
                shutdown.cancel();
                let drain = async { while tasks.join_next().await.is_some() {} };
                if tokio::time::timeout(CALLS_GRACE, drain).await.is_err() {
                    tracing::warn!(
                        "running calls did not end within {CALLS_GRACE:?}; stopping them"
                    );
                    tasks.abort_all();
                    while tasks.join_next().await.is_some() {}
                }
                outgoing.fail_all_pending();
                done.cancel();
            });
        }
        Arc::new(Session {
            id: uuid::Uuid::new_v4().to_string(),
            inbound: in_tx,
            routes,
            shutdown,
            done,
        })
    }

    fn open_request_stream(&self, id: &RequestId, sse: bool) -> RequestReply {
        let mut routes = lock(&self.routes);
        if sse {
            let stream = routes.next_stream;
            routes.next_stream += 1;
            let (tx, rx) = mpsc::unbounded_channel();
            let state = StreamState {
                live: Some(tx),
                ..StreamState::default()
            };
            routes.streams.insert(stream, state);
            routes
                .requests
                .insert(id.clone(), RequestRoute::Stream(stream));
            RequestReply::Stream(rx)
        } else {
            let (tx, rx) = oneshot::channel();
            routes.requests.insert(id.clone(), RequestRoute::Json(tx));
            RequestReply::Json(rx)
        }
    }

    async fn deliver(&self, msg: Inbound) -> bool {
        !self.shutdown.is_cancelled() && self.inbound.send(msg).await.is_ok()
    }

    /// Attaches a GET: the standalone stream, or (with `Last-Event-ID`) the stream that id
    /// names, replaying what came after it.
    #[allow(clippy::result_large_err)] // see find_session
    fn attach(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<mpsc::UnboundedReceiver<SseItem>, Response> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut routes = lock(&self.routes);
        let (stream, after) = match last_event_id {
            Some(last) => {
                let parsed = last
                    .split_once('/')
                    .and_then(|(s, q)| Some((s.parse::<u64>().ok()?, q.parse::<u64>().ok()?)));
                match parsed {
                    Some((s, q)) if routes.streams.contains_key(&s) => (s, Some(q)),
                    _ => {
                        return Err(plain(
                            StatusCode::BAD_REQUEST,
                            format!(
                                "Last-Event-ID {last} names no stream of this session (it may be too old)"
                            ),
                        ));
                    }
                }
            }
            None => {
                let s = routes.streams.entry(STANDALONE).or_default();
                if s.live.as_ref().is_some_and(|l| !l.is_closed()) {
                    return Err(plain(
                        StatusCode::CONFLICT,
                        "this session already has a GET stream open; close it or resume with Last-Event-ID",
                    ));
                }
                let after = s.delivered;
                (STANDALONE, after)
            }
        };
        if let Some(s) = routes.streams.get_mut(&stream) {
            s.attach(stream, after, tx);
        }
        Ok(rx)
    }

    /// Ends the session: running requests are cancelled and answer, then streams close.
    async fn end(&self) {
        self.shutdown.cancel();
        self.done.cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_and_hosts_only_by_default() {
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8080",
            "http://localhost",
        ] {
            assert!(origin_allowed(ok, &[]), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "null",
            "http://127.0.0.1.nip.io",
        ] {
            assert!(!origin_allowed(bad, &[]), "{bad}");
        }
        let extra = vec!["https://app.example.com".to_string()];
        assert!(origin_allowed("https://app.example.com", &extra));
        assert!(host_allowed("app.example.com", &extra));
        assert!(host_allowed("127.0.0.1:8080", &[]));
        assert!(!host_allowed("evil.example:8080", &[]));
        assert!(!host_allowed("[::2]:80", &[]));
    }

    #[test]
    fn events_reach_the_stream_of_their_request_and_replay_after_an_id() {
        let mut routes = Routes {
            next_stream: 1,
            ..Routes::default()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        routes.streams.insert(
            1,
            StreamState {
                live: Some(tx),
                ..Default::default()
            },
        );
        let call = RequestId::Integer(7);
        routes
            .requests
            .insert(call.clone(), RequestRoute::Stream(1));
        let note = |origin: Option<RequestId>| Routed {
            origin,
            msg: Outgoing::Notification {
                method: "codex/event".into(),
                params: serde_json::json!({}),
            },
        };
        routes.route(note(Some(call.clone())));
        routes.route(note(None));
        routes.route(Routed {
            origin: Some(call.clone()),
            msg: Outgoing::Response {
                id: call,
                result: serde_json::json!({}),
            },
        });
        let first = rx.try_recv().unwrap();
        assert_eq!(first.id, "1/0");
        assert!(first.data.contains("codex/event"));
        assert_eq!(rx.try_recv().unwrap().id, "1/1");
        // The response closed the request's stream.
        assert!(rx.try_recv().is_err());
        // The unrelated notification waits on the standalone stream.
        let (tx, mut rx) = mpsc::unbounded_channel();
        routes
            .streams
            .get_mut(&STANDALONE)
            .unwrap()
            .attach(STANDALONE, None, tx);
        assert_eq!(rx.try_recv().unwrap().id, "0/0");
        // Resuming the finished request stream after its first event replays the rest.
        let (tx, mut rx) = mpsc::unbounded_channel();
        routes.streams.get_mut(&1).unwrap().attach(1, Some(0), tx);
        assert_eq!(rx.try_recv().unwrap().id, "1/1");
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
