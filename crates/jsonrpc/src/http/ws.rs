//! JSON-RPC over WebSocket, as Codex's app-server serves it on `--listen ws://HOST:PORT`
//! and its remote clients (`codex --remote ws://…`) expect: a WebSocket at `/`, one
//! JSON-RPC message per text frame, one connection = one client session with its own
//! method table. `GET /readyz` and `GET /healthz` answer `200 ok` for supervisors.
//!
//! The HTTP listener's guards apply unchanged before the upgrade (Origin, loopback Host,
//! bearer token, per-peer connection limit, header timeout). Once upgraded, the socket
//! counts as one request being handled for as long as it is open, so the listener's idle
//! timeout does not cut it between turns; instead a ping goes out every keep-alive interval
//! and a socket from which nothing (not even a pong) arrived for the idle timeout is closed.

use super::conn::{self, ConnHandle};
use super::{HttpOptions, MethodsFactory, guard, refuse};
use crate::Connection;
use crate::dispatch::{self, Inbound};
use crate::message::parse_incoming;
use crate::outgoing::{OutgoingSender, Routed};
use axum::Router;
use axum::extract::ws::{
    Message, WebSocket, WebSocketUpgrade, rejection::WebSocketUpgradeRejection,
};
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

struct WsState {
    opts: HttpOptions,
    methods: MethodsFactory,
    stop: CancellationToken,
    sockets: TaskTracker,
}

/// Serves WebSocket connections on `listener` until `stop` fires; then closes every socket
/// (running requests are cancelled and get a grace period to answer) and returns.
pub(super) async fn serve_ws(
    listener: tokio::net::TcpListener,
    opts: HttpOptions,
    methods: MethodsFactory,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let state = Arc::new(WsState {
        opts: opts.clone(),
        methods,
        stop: stop.clone(),
        sockets: TaskTracker::new(),
    });
    let health = Router::new()
        .route("/readyz", axum::routing::get(|| async { "ok" }))
        .route("/healthz", axum::routing::get(|| async { "ok" }));
    let app = Router::new()
        .route("/", axum::routing::get(upgrade))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(opts.clone()),
            guard,
        ))
        .merge(health)
        .layer(axum::middleware::from_fn(conn::track_requests))
        .with_state(state.clone());
    let listener = conn::GuardedListener::new(listener, conn::ConnLimits::of(&opts));
    let served = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<ConnHandle>(),
    )
    .with_graceful_shutdown(stop.cancelled_owned())
    .await;
    // Upgraded sockets are not the server's connections any more: wait for them here.
    state.sockets.close();
    state.sockets.wait().await;
    served
}

async fn upgrade(
    State(state): State<Arc<WsState>>,
    ConnectInfo(handle): ConnectInfo<ConnHandle>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let ws = match ws {
        Ok(ws) => ws,
        Err(rejection) => {
            return refuse(
                StatusCode::UPGRADE_REQUIRED,
                format!(
                    "this server speaks JSON-RPC over WebSocket ({rejection}); connect with a WebSocket client, e.g. codex --remote ws://HOST:PORT"
                ),
            );
        }
    };
    if state.stop.is_cancelled() {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        );
    }
    // A socket carries what stdio carries (images as data URLs included): the same bound.
    let limit = crate::transport::DEFAULT_MAX_LINE_BYTES;
    let socket_state = state.clone();
    ws.max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| {
            // The socket is one long request of its connection (see the module docs).
            let busy = handle.0.request();
            let tracker = socket_state.sockets.clone();
            tracker.track_future(async move {
                serve_socket(socket, &socket_state).await;
                drop(busy);
            })
        })
}

/// One client session: the method table built for it, the processor, a writer, and the
/// reader in this task. Ends when the client closes, stops answering pings, or the server
/// stops.
async fn serve_socket(socket: WebSocket, state: &WsState) {
    let (in_tx, in_rx) = mpsc::channel::<Inbound>(crate::connection::INCOMING_QUEUE);
    let (out_tx, out_rx) = mpsc::channel::<Routed>(crate::connection::OUTGOING_QUEUE);
    let outgoing = OutgoingSender::new(out_tx);
    let shutdown = CancellationToken::new();
    let conn = Connection {
        outgoing: outgoing.clone(),
        shutdown: shutdown.clone(),
    };
    let table = (state.methods)(&conn);
    drop(conn);

    let (sink, mut stream) = socket.split();
    let writer_done = CancellationToken::new();
    let writer = tokio::spawn(write_loop(
        sink,
        out_rx,
        writer_done.clone(),
        shutdown.clone(),
        state.opts.keep_alive(),
    ));
    let processor = {
        let shutdown = shutdown.clone();
        let outgoing = outgoing.clone();
        tokio::spawn(async move {
            let tasks = dispatch::process(in_rx, table, outgoing.clone(), shutdown.clone()).await;
            shutdown.cancel();
            dispatch::end_calls(tasks).await;
            outgoing.fail_all_pending();
        })
    };
    drop(outgoing);

    let idle = state.opts.idle_timeout;
    let mut heard = Instant::now();
    loop {
        let frame = tokio::select! {
            _ = state.stop.cancelled() => break,
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep_until(heard + idle) => {
                tracing::info!("closing a WebSocket client that sent nothing, not even a pong, for {idle:?}");
                break;
            }
            frame = stream.next() => frame,
        };
        heard = Instant::now();
        let bytes = match frame {
            Some(Ok(Message::Text(text))) => text.as_str().as_bytes().to_vec(),
            // Codex sends text; a binary frame holding JSON is taken the same way.
            Some(Ok(Message::Binary(bytes))) => bytes.to_vec(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_))) | None => break,
            Some(Err(e)) => {
                tracing::info!(
                    "WebSocket read failed ({e}); closing the session (messages over {} MiB are refused)",
                    crate::transport::DEFAULT_MAX_LINE_BYTES / (1024 * 1024)
                );
                break;
            }
        };
        if in_tx.send(parse_incoming(&bytes)).await.is_err() {
            break;
        }
    }
    // End of input, as on stdio: the processor stops, running calls get their grace.
    drop(in_tx);
    shutdown.cancel();
    let _ = processor.await;
    writer_done.cancel();
    let _ = writer.await;
}

/// Sends every outgoing message as one text frame, and a ping every `keep_alive`, until
/// `done` (then what is queued still goes out, and a close frame).
async fn write_loop<S>(
    mut sink: S,
    mut rx: mpsc::Receiver<Routed>,
    done: CancellationToken,
    shutdown: CancellationToken,
    keep_alive: std::time::Duration,
) where
    S: futures::Sink<Message> + Unpin,
    S::Error: std::fmt::Display,
{
    let mut ping = tokio::time::interval_at(Instant::now() + keep_alive, keep_alive);
    loop {
        let msg = tokio::select! {
            msg = rx.recv() => msg,
            _ = ping.tick() => {
                if let Err(e) = sink.send(Message::Ping(Default::default())).await {
                    tracing::info!("WebSocket write failed ({e}); closing the session");
                    shutdown.cancel();
                    return;
                }
                continue;
            }
            _ = done.cancelled() => None,
        };
        let Some(msg) = msg else { break };
        if let Err(e) = sink.send(text_frame(&msg)).await {
            // The client is gone: nobody is left to serve.
            tracing::info!("WebSocket write failed ({e}); closing the session");
            shutdown.cancel();
            return;
        }
    }
    while let Ok(msg) = rx.try_recv() {
        if sink.send(text_frame(&msg)).await.is_err() {
            return;
        }
    }
    let _ = sink.send(Message::Close(None)).await;
    let _ = sink.close().await;
}

fn text_frame(msg: &Routed) -> Message {
    let mut line = msg.msg.to_line();
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    // Serialized JSON is always UTF-8.
    Message::text(String::from_utf8_lossy(&line).into_owned())
}
