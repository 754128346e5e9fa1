//! The connection guard of the HTTP listener: what keeps slow or idle clients from using
//! up the server's connections (slowloris), below HTTP.
//!
//! * **Per-peer limit.** At most `max_per_peer` connections from one IP address are open
//!   at once; one more is answered `503` (best effort, without reading it) and closed at
//!   once, so it costs the server nothing. Loopback clients all share one address.
//! * **Header timeout.** Once a connection opens, or once it sends the first byte of its
//!   next request, the whole request head must arrive within `header_timeout`; a client
//!   trickling a header byte now and then is cut off when it runs out.
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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

use super::lock;

/// The connection limits (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_per_peer: usize,
}

type PeerCounts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// A TCP listener that hands axum only connections within the per-peer limit, each wrapped
/// in a [`GuardedStream`].
pub(crate) struct GuardedListener {
    inner: TcpListener,
    limits: ConnLimits,
    peers: PeerCounts,
}

impl GuardedListener {
    pub(crate) fn new(inner: TcpListener, limits: ConnLimits) -> Self {
        Self {
            inner,
            limits,
            peers: PeerCounts::default(),
        }
    }

    fn take_slot(&self, ip: IpAddr) -> Option<PeerSlot> {
        let mut peers = lock(&self.peers);
        let count = peers.entry(ip).or_insert(0);
        if *count >= self.limits.max_per_peer {
            return None;
        }
        *count += 1;
        Some(PeerSlot {
            ip,
            peers: self.peers.clone(),
        })
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
                Some(slot) => return (GuardedStream::new(stream, slot, self.limits), peer),
                None => refuse(&stream, peer, self.limits.max_per_peer),
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

/// Tells an over-limit client why, if its socket takes the bytes right away, then closes.
fn refuse(stream: &TcpStream, peer: SocketAddr, limit: usize) {
    tracing::debug!("refused a connection from {peer}: {limit} already open");
    let error = crate::message::RpcError::new(
        crate::message::INTERNAL_ERROR,
        format!(
            "too many connections from {} (at most {limit} at once); close idle ones and retry",
            peer.ip()
        ),
    );
    let body = crate::message::Outgoing::Error { id: None, error }.to_line();
    let body = String::from_utf8_lossy(&body);
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(reply.as_bytes());
}

/// One connection's place in its peer's count, given back when the connection closes.
struct PeerSlot {
    ip: IpAddr,
    peers: PeerCounts,
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut peers = lock(&self.peers);
        if let Some(count) = peers.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                peers.remove(&self.ip);
            }
        }
    }
}

/// What one connection is doing, shared by its stream and the requests it carries.
pub(crate) struct Activity {
    limits: ConnLimits,
    state: Mutex<ActivityState>,
}

struct ActivityState {
    /// Requests being handled (their handler has not returned yet).
    requests: usize,
    /// When a byte last moved either way (or the last request ended).
    last_io: Instant,
    /// When the request head being read began: the connection opened, or the first byte
    /// read while no request was being handled.
    head_since: Option<Instant>,
}

impl Activity {
    fn new(limits: ConnLimits) -> Self {
        let now = Instant::now();
        Self {
            limits,
            state: Mutex::new(ActivityState {
                requests: 0,
                last_io: now,
                head_since: Some(now),
            }),
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
        let idle = s.last_io + self.limits.idle_timeout;
        Some(match s.head_since {
            Some(since) => idle.min(since + self.limits.header_timeout),
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

/// A TCP stream that closes itself past its connection's deadlines (see the module docs).
pub(crate) struct GuardedStream {
    inner: TcpStream,
    activity: Arc<Activity>,
    timer: Pin<Box<Sleep>>,
    _slot: PeerSlot,
}

impl GuardedStream {
    fn new(inner: TcpStream, slot: PeerSlot, limits: ConnLimits) -> Self {
        let _ = inner.set_nodelay(true);
        Self {
            inner,
            activity: Arc::new(Activity::new(limits)),
            timer: Box::pin(tokio::time::sleep(limits.header_timeout)),
            _slot: slot,
        }
    }

    /// Called when the socket is not ready: pending until the connection's deadline, then
    /// the error that ends it.
    fn poll_deadline<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
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
