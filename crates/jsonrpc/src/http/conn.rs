//! The connection guard of the HTTP listener: what keeps slow or idle clients from using
//! up the server's connections (slowloris), below HTTP.
//!
//! * **Two budgets.** A connection is *unauthenticated* until one of its requests passes the
//!   listener's checks (Origin, Host, bearer token: [`admit`], called by the guard), and
//!   *authenticated* from then on. Unauthenticated connections have a small budget of their
//!   own — [`UNAUTHENTICATED_PER_PEER`] per IP address and [`UNAUTHENTICATED_TOTAL`] in all —
//!   and a short deadline ([`UNAUTHENTICATED_TIMEOUT`]) for their request head and for being
//!   idle. When the budget is full, a new connection takes the place of the oldest
//!   unauthenticated one that is not being served (it is closed): so a local process holding
//!   hundreds of half-open requests cannot keep a client that has the token out — its request
//!   head arrives right after it connects, long before the newcomers would push it out.
//!   Authenticated connections are limited to `max_per_peer` per address; one more that
//!   authenticates is answered `503` and closed. Loopback clients all share one address.
//! * **Header timeout.** Once a connection opens, or once it sends the first byte of its
//!   next request, the whole request head must arrive within `header_timeout` (the short
//!   deadline while unauthenticated); a client trickling a header byte now and then is cut
//!   off when it runs out.
//! * **Idle timeout.** A connection with no request being handled on which nothing moved
//!   (no byte read or written) for `idle_timeout` is closed. An open SSE stream stays alive
//!   through its keep-alive comments (sent more often than `idle_timeout`); a client that
//!   stops reading it lets the writes stall, and is closed too.
//!
//! The request body is bounded separately (a deadline on reading it, in the handler), since
//! its bytes are read while a request is being handled.
//!
//! [`GuardedStream`] enforces the timeouts itself: when the socket has nothing to give (or
//! cannot take more), it arms one timer for the earliest deadline and fails the read or
//! write with `TimedOut` once it passes, which makes hyper drop the connection.

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

use super::lock;

/// Unauthenticated connections one IP address may hold at once (fewer when
/// `max_per_peer` is lower).
pub(crate) const UNAUTHENTICATED_PER_PEER: usize = 32;
/// Unauthenticated connections held at once from every address together (loopback offers
/// a whole /8 of them).
pub(crate) const UNAUTHENTICATED_TOTAL: usize = 256;
/// How long an unauthenticated connection may take for its request head, or sit idle
/// (`header_timeout`, when that is shorter).
pub(crate) const UNAUTHENTICATED_TIMEOUT: Duration = Duration::from_secs(3);

/// The connection limits (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_per_peer: usize,
}

impl ConnLimits {
    /// The limits a listener's options set (both transports, HTTP and WebSocket).
    pub(crate) fn of(opts: &super::HttpOptions) -> ConnLimits {
        ConnLimits {
            header_timeout: opts.header_timeout,
            idle_timeout: opts.idle_timeout,
            max_per_peer: opts.max_connections_per_peer.max(1),
        }
    }

    fn unauthenticated_per_peer(&self) -> usize {
        UNAUTHENTICATED_PER_PEER.min(self.max_per_peer).max(1)
    }

    fn unauthenticated_timeout(&self) -> Duration {
        UNAUTHENTICATED_TIMEOUT.min(self.header_timeout)
    }
}

/// The connections of one listener, by budget.
struct Budget {
    limits: ConnLimits,
    /// Authenticated connections per address.
    authenticated: HashMap<IpAddr, usize>,
    /// Unauthenticated connections, oldest first.
    pending: Vec<Arc<Activity>>,
}

type Shared = Arc<Mutex<Budget>>;

impl Budget {
    /// Makes room for, and counts, a new unauthenticated connection from `ip`: when its
    /// address (or everyone) has no room left, the oldest unauthenticated connection not
    /// being served gives its place. `false` when none can (all are being served).
    fn enter(&mut self, activity: &Arc<Activity>) -> bool {
        let ip = activity.ip;
        let of_peer = self.pending.iter().filter(|a| a.ip == ip).count();
        let full_for_peer = of_peer >= self.limits.unauthenticated_per_peer();
        if full_for_peer || self.pending.len() >= UNAUTHENTICATED_TOTAL {
            let victim = self
                .pending
                .iter()
                .position(|a| (!full_for_peer || a.ip == ip) && a.evictable());
            let Some(i) = victim else {
                return false;
            };
            let old = self.pending.remove(i);
            old.evict();
        }
        self.pending.push(activity.clone());
        true
    }

    /// Moves `activity` to the authenticated budget of its address.
    fn authenticate(&mut self, activity: &Arc<Activity>) -> Result<(), Refusal> {
        if lock(&activity.state).authenticated {
            return Ok(());
        }
        let Some(i) = self.pending.iter().position(|a| Arc::ptr_eq(a, activity)) else {
            return Err(Refusal::Evicted);
        };
        let count = self.authenticated.entry(activity.ip).or_insert(0);
        if *count >= self.limits.max_per_peer {
            return Err(Refusal::TooMany);
        }
        *count += 1;
        self.pending.remove(i);
        lock(&activity.state).authenticated = true;
        Ok(())
    }

    /// Forgets a closed connection.
    fn leave(&mut self, activity: &Arc<Activity>) {
        if lock(&activity.state).authenticated {
            if let Some(count) = self.authenticated.get_mut(&activity.ip) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    self.authenticated.remove(&activity.ip);
                }
            }
        } else {
            self.pending.retain(|a| !Arc::ptr_eq(a, activity));
        }
    }
}

/// Why a request that passed the checks is not served on its connection.
enum Refusal {
    /// Its address has `max_per_peer` authenticated connections already.
    TooMany,
    /// The connection gave its place to a newer one before its head arrived.
    Evicted,
}

/// A TCP listener that hands axum every connection that fits its budget (see the module
/// docs), each wrapped in a [`GuardedStream`].
pub(crate) struct GuardedListener {
    inner: TcpListener,
    limits: ConnLimits,
    budget: Shared,
}

impl GuardedListener {
    pub(crate) fn new(inner: TcpListener, limits: ConnLimits) -> Self {
        Self {
            inner,
            limits,
            budget: Arc::new(Mutex::new(Budget {
                limits,
                authenticated: HashMap::new(),
                pending: Vec::new(),
            })),
        }
    }

    fn take_slot(&self, ip: IpAddr) -> Option<Arc<Activity>> {
        let activity = Arc::new(Activity::new(self.limits, ip, self.budget.clone()));
        lock(&self.budget).enter(&activity).then_some(activity)
    }
}

impl Listener for GuardedListener {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        loop {
            let (stream, peer) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_error(e).await;
                    continue;
                }
            };
            match self.take_slot(peer.ip()) {
                Some(activity) => return (GuardedStream::new(stream, activity), peer),
                None => refuse(&stream, peer),
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// Like axum's own listener: errors of one connection are skipped; anything else (such as
/// running out of file descriptors) is logged and retried after a pause, so the loop does
/// not spin.
async fn accept_error(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(
        "cannot accept a connection: {e} (if it says too many open files, raise `ulimit -n` or lower --max-connections-per-peer)"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Tells a client for whom no unauthenticated connection could make room why, if its socket
/// takes the bytes right away, then closes.
fn refuse(stream: &TcpStream, peer: SocketAddr) {
    tracing::debug!("refused a connection from {peer}: every connection is being served");
    let error = crate::message::RpcError::new(
        crate::message::INTERNAL_ERROR,
        "too many connections waiting to be served; retry in a moment",
    );
    let body = crate::message::Outgoing::Error { id: None, error }.to_line();
    let body = String::from_utf8_lossy(&body);
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(reply.as_bytes());
}

/// Called by the listener's guard once a request passed every check (Origin, Host, token):
/// its connection counts as authenticated from now on. A `503` response, with the connection
/// closed after it, when the client's address has `max_per_peer` authenticated connections
/// already (or this one was pushed out before its request arrived).
// A refusal is built once per refused request; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
pub(crate) fn admit(req: &axum::extract::Request) -> Result<(), axum::response::Response> {
    let Some(info) = req
        .extensions()
        .get::<axum::extract::ConnectInfo<ConnHandle>>()
    else {
        return Ok(());
    };
    let activity = &info.0.0;
    let refusal = lock(&activity.budget).authenticate(activity);
    let text = match refusal {
        Ok(()) => return Ok(()),
        Err(Refusal::TooMany) => format!(
            "too many connections from {} (at most {} at once); close idle ones and retry\n",
            activity.ip, activity.limits.max_per_peer
        ),
        Err(Refusal::Evicted) => "this connection was closed to make room; retry\n".to_string(),
    };
    tracing::debug!("refused a request from {}: {}", activity.ip, text.trim());
    // Every refusal is a JSON-RPC body, as the listener's others are.
    let mut response = super::refuse(axum::http::StatusCode::SERVICE_UNAVAILABLE, text.trim());
    response.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    Err(response)
}

/// What one connection is doing, shared by its stream and the requests it carries.
pub(crate) struct Activity {
    limits: ConnLimits,
    ip: IpAddr,
    budget: Shared,
    state: Mutex<ActivityState>,
    /// Set when a newer connection took this one's place: its stream fails at once.
    evicted: AtomicBool,
    /// Whom to wake to see it (the stream's last pending poll).
    waker: Mutex<Option<Waker>>,
}

struct ActivityState {
    /// Whether a request passed the listener's checks (see [`admit`]).
    authenticated: bool,
    /// Requests being handled (their handler has not returned yet).
    requests: usize,
    /// When a byte last moved either way (or the last request ended).
    last_io: Instant,
    /// When the request head being read began: the connection opened, or the first byte
    /// read while no request was being handled.
    head_since: Option<Instant>,
}

impl Activity {
    fn new(limits: ConnLimits, ip: IpAddr, budget: Shared) -> Self {
        let now = Instant::now();
        Self {
            limits,
            ip,
            budget,
            state: Mutex::new(ActivityState {
                authenticated: false,
                requests: 0,
                last_io: now,
                head_since: Some(now),
            }),
            evicted: AtomicBool::new(false),
            waker: Mutex::new(None),
        }
    }

    /// Not being served: it may give its place to a newer connection.
    fn evictable(&self) -> bool {
        lock(&self.state).requests == 0
    }

    /// Closes the connection (its stream fails on its next poll, which this wakes).
    fn evict(&self) {
        self.evicted.store(true, Ordering::SeqCst);
        if let Some(w) = lock(&self.waker).take() {
            w.wake();
        }
    }

    fn read(&self) {
        let now = Instant::now();
        let mut s = lock(&self.state);
        s.last_io = now;
        if s.requests == 0 && s.head_since.is_none() {
            s.head_since = Some(now);
        }
    }

    fn wrote(&self) {
        lock(&self.state).last_io = Instant::now();
    }

    /// Marks a request as being handled until the guard drops: its head has arrived, and
    /// the connection is not idle meanwhile, however long the handler takes.
    pub(crate) fn request(self: &Arc<Self>) -> RequestGuard {
        let mut s = lock(&self.state);
        s.requests += 1;
        s.head_since = None;
        RequestGuard(self.clone())
    }

    /// When the connection is to be closed if nothing happens before; `None` while a
    /// request is being handled.
    fn deadline(&self) -> Option<Instant> {
        let s = lock(&self.state);
        if s.requests > 0 {
            return None;
        }
        let (header, idle) = if s.authenticated {
            (self.limits.header_timeout, self.limits.idle_timeout)
        } else {
            let short = self.limits.unauthenticated_timeout();
            (short, short)
        };
        let idle = s.last_io + idle;
        Some(match s.head_since {
            Some(since) => idle.min(since + header),
            None => idle,
        })
    }
}

/// See [`Activity::request`].
pub(crate) struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut s = lock(&self.0.state);
        s.requests = s.requests.saturating_sub(1);
        s.last_io = Instant::now();
    }
}

/// The connection info axum hands every request of a connection (`ConnectInfo`).
#[derive(Clone)]
pub(crate) struct ConnHandle(pub(crate) Arc<Activity>);

impl Connected<IncomingStream<'_, GuardedListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, GuardedListener>) -> Self {
        ConnHandle(stream.io().activity.clone())
    }
}

/// A TCP stream that closes itself past its connection's deadlines (see the module docs),
/// or when a newer connection took its place.
pub(crate) struct GuardedStream {
    inner: TcpStream,
    activity: Arc<Activity>,
    timer: Pin<Box<Sleep>>,
}

impl Drop for GuardedStream {
    fn drop(&mut self) {
        lock(&self.activity.budget).leave(&self.activity);
    }
}

impl GuardedStream {
    fn new(inner: TcpStream, activity: Arc<Activity>) -> Self {
        let _ = inner.set_nodelay(true);
        let first = activity.limits.unauthenticated_timeout();
        Self {
            inner,
            activity,
            timer: Box::pin(tokio::time::sleep(first)),
        }
    }

    /// Called when the socket is not ready: pending until the connection's deadline, then
    /// the error that ends it.
    fn poll_deadline<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        *lock(&self.activity.waker) = Some(cx.waker().clone());
        if self.activity.evicted.load(Ordering::SeqCst) {
            return Poll::Ready(Err(evicted()));
        }
        let Some(deadline) = self.activity.deadline() else {
            return Poll::Pending;
        };
        if Instant::now() >= deadline {
            return Poll::Ready(Err(timed_out()));
        }
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(timed_out())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn after_write(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match r {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.activity.wrote();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => self.poll_deadline(cx),
            other => other,
        }
    }
}

fn evicted() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "an unauthenticated connection gave its place to a newer one",
    )
}

fn timed_out() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the connection was idle, or its request head too slow, past the listener's timeout",
    )
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.activity.evicted.load(Ordering::SeqCst) {
            return Poll::Ready(Err(evicted()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.activity.read();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => this.poll_deadline(cx),
            other => other,
        }
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.after_write(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.after_write(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Pending => this.poll_deadline(cx),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Middleware: marks each request as being handled on its connection (see
/// [`Activity::request`]) while its handler runs.
pub(crate) async fn track_requests(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let _busy = req
        .extensions()
        .get::<axum::extract::ConnectInfo<ConnHandle>>()
        .map(|info| info.0.0.request());
    next.run(req).await
}
