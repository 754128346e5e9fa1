//! A session of the HTTP transport: its dispatcher, and the routing of what it sends to
//! the SSE stream of the request it belongs to (or the standalone GET stream), with the
//! history kept for `Last-Event-ID` resumption.

use super::{CLOSED_STREAMS_KEPT, HISTORY, MethodsFactory};
use super::{lock, refuse};
use crate::Connection;
use crate::dispatch::{self, Inbound};
use crate::message::{Outgoing, RequestId};
use crate::outgoing::{OutgoingSender, Routed};
use axum::http::StatusCode;
use axum::response::Response;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One SSE event: its id (`stream/seq`) and its JSON.
#[derive(Clone)]
pub(super) struct SseItem {
    pub(super) id: String,
    pub(super) data: String,
}

pub(super) enum RequestReply {
    Stream(mpsc::UnboundedReceiver<SseItem>),
    Json(oneshot::Receiver<Vec<u8>>),
}

/// One stream of a session: the standalone stream (0) or a request's stream.
#[derive(Default)]
pub(super) struct StreamState {
    pub(super) history: VecDeque<(u64, String)>,
    pub(super) next_seq: u64,
    /// Highest sequence number handed to a live connection.
    pub(super) delivered: Option<u64>,
    pub(super) live: Option<mpsc::UnboundedSender<SseItem>>,
    /// The request's response was sent: no more events will come.
    pub(super) finished: bool,
}

impl StreamState {
    pub(super) fn push(&mut self, stream: u64, data: String) {
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
    pub(super) fn attach(
        &mut self,
        stream: u64,
        after: Option<u64>,
        tx: mpsc::UnboundedSender<SseItem>,
    ) {
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
pub(super) struct Routes {
    pub(super) streams: HashMap<u64, StreamState>,
    /// Which stream answers which client request, and whether it answers as JSON.
    pub(super) requests: HashMap<RequestId, RequestRoute>,
    pub(super) next_stream: u64,
    pub(super) finished_order: VecDeque<u64>,
    /// When a message last went out (or a stream was attached).
    pub(super) last_activity: Option<Instant>,
}

pub(super) enum RequestRoute {
    Stream(u64),
    Json(oneshot::Sender<Vec<u8>>),
}

pub(super) const STANDALONE: u64 = 0;

impl Routes {
    pub(super) fn route(&mut self, routed: Routed) {
        self.last_activity = Some(Instant::now());
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

    pub(super) fn push(&mut self, stream: u64, data: String) {
        self.streams.entry(stream).or_default().push(stream, data);
    }
}

pub(super) struct Session {
    pub(super) id: String,
    pub(super) inbound: mpsc::Sender<Inbound>,
    pub(super) routes: Arc<Mutex<Routes>>,
    pub(super) shutdown: CancellationToken,
    pub(super) done: CancellationToken,
    /// When an HTTP request last named this session.
    pub(super) last_used: Mutex<Instant>,
    /// HTTP requests of this session being handled now.
    pub(super) in_use: Arc<AtomicUsize>,
}

/// See [`Session::in_use`].
pub(super) struct InUse<'a>(&'a Session);

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        self.0.in_use.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

impl Session {
    pub(super) fn start(methods: &MethodsFactory) -> Arc<Session> {
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
                let tasks =
                    dispatch::process(in_rx, table, outgoing.clone(), shutdown.clone()).await;
                shutdown.cancel();
                dispatch::end_calls(tasks).await;
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
            last_used: Mutex::new(Instant::now()),
            in_use: Arc::default(),
        })
    }

    pub(super) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Marks the session as in use until the guard drops.
    pub(super) fn in_use(&self) -> InUse<'_> {
        self.in_use.fetch_add(1, Ordering::SeqCst);
        InUse(self)
    }

    /// Since when nothing has used the session: no HTTP request being handled, no stream
    /// a client is reading, no message sent; `None` while something does.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        if self.in_use.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let routes = lock(&self.routes);
        let streaming = routes
            .streams
            .values()
            .any(|s| s.live.as_ref().is_some_and(|l| !l.is_closed()));
        if streaming {
            return None;
        }
        let used = *lock(&self.last_used);
        Some(routes.last_activity.map_or(used, |a| a.max(used)))
    }

    pub(super) fn open_request_stream(&self, id: &RequestId, sse: bool) -> RequestReply {
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

    pub(super) async fn deliver(&self, msg: Inbound) -> bool {
        !self.shutdown.is_cancelled() && self.inbound.send(msg).await.is_ok()
    }

    /// Attaches a GET: the standalone stream, or (with `Last-Event-ID`) the stream that id
    /// names, replaying what came after it.
    #[allow(clippy::result_large_err)] // see find_session
    pub(super) fn attach(
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
                        return Err(refuse(
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
                    return Err(refuse(
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
        routes.last_activity = Some(Instant::now());
        Ok(rx)
    }

    /// Ends the session: running requests are cancelled and answer, then streams close.
    pub(super) async fn end(&self) {
        self.shutdown.cancel();
        self.done.cancelled().await;
    }
}
