//! One connection's lifecycle over a byte reader and writer: a reader task (framing and
//! parsing), the processor ([`crate::dispatch::process`]), a writer task, and an orderly
//! shutdown. Transport-agnostic: stdio passes its pipes, tests pass in-memory ones.

use crate::dispatch::{self, BoxFuture, Inbound, MethodTable};
use crate::message::{Rejected, RpcError, parse_incoming};
use crate::outgoing::OutgoingSender;
use crate::transport::{self, Frame, LineReader, sniff_id};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Messages read ahead of the processor. When full, reading stops (backpressure).
pub const INCOMING_QUEUE: usize = 128;
/// Messages queued for the writer before senders wait.
pub const OUTGOING_QUEUE: usize = 1024;
/// On shutdown: how long the writer gets to flush what is queued.
const WRITER_GRACE: Duration = Duration::from_secs(5);

/// What the services on a connection share: the way to the client, and the signal that
/// the connection is closing. Handed to the code that builds the method table.
#[derive(Clone)]
pub struct Connection {
    /// Responses, notifications and server→client requests on this connection.
    pub outgoing: OutgoingSender,
    /// Fires when the connection is closing (end of input, `stop`, or the peer stopped
    /// reading); running requests are cancelled from it.
    pub shutdown: CancellationToken,
}

/// Serves one connection until its input ends, `stop` fires, or the peer stops reading.
///
/// `methods` builds the method table once the connection exists (handlers may keep its
/// [`Connection`] for notifications outside a request). On the way out, running requests
/// are cancelled and get [`CALLS_GRACE`](crate::dispatch::CALLS_GRACE) to answer, then `on_close` runs (the services'
/// own cleanup, e.g. stopping the engine's threads) before the writer flushes and closes.
pub async fn serve_connection<R, W, F, C>(
    reader: R,
    writer: W,
    stop: CancellationToken,
    methods: F,
    on_close: C,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(&Connection) -> MethodTable,
    C: FnOnce() -> BoxFuture<'static, ()>,
{
    let shutdown = CancellationToken::new();
    let (in_tx, in_rx) = mpsc::channel::<Inbound>(INCOMING_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTGOING_QUEUE);
    let outgoing = OutgoingSender::new(out_tx);

    let writer_done = CancellationToken::new();
    let writer_task = {
        let shutdown = shutdown.clone();
        let done = writer_done.clone();
        tokio::spawn(async move {
            if let Err(e) = transport::write_loop(out_rx, writer, done).await {
                // The client stopped reading: nobody is left to serve.
                tracing::info!("output closed ({e}); shutting down");
                shutdown.cancel();
            }
        })
    };
    // The reader stops at end of input, or when the server is told to stop (a signal); the
    // rest of the shutdown is the same either way.
    let reader_stop = shutdown.child_token();
    {
        let reader_stop = reader_stop.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            reader_stop.cancel();
        });
    }
    let reader_task = tokio::spawn(read_loop(reader, in_tx, reader_stop));

    let conn = Connection {
        outgoing: outgoing.clone(),
        shutdown: shutdown.clone(),
    };
    let table = methods(&conn);
    drop(conn);

    let tasks = dispatch::process(in_rx, table, outgoing.clone(), shutdown.clone()).await;
    shutdown.cancel();
    tracing::info!("input closed; ending {} running call(s)", tasks.len());
    dispatch::end_calls(tasks).await;
    on_close().await;
    outgoing.fail_all_pending();
    drop(outgoing);
    writer_done.cancel();
    let _ = tokio::time::timeout(WRITER_GRACE, writer_task).await;
    reader_task.abort();
}

/// Reads frames, parses them, and queues them for the processor. Stops at EOF, on a read
/// error, or when `shutdown` fires.
async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    tx: mpsc::Sender<Inbound>,
    shutdown: CancellationToken,
) {
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 * 1024, reader),
        transport::DEFAULT_MAX_LINE_BYTES,
    );
    loop {
        let frame = tokio::select! {
            f = lines.next_frame() => f,
            _ = shutdown.cancelled() => return,
        };
        let inbound = match frame {
            Ok(Some(Frame::Line(bytes))) => parse_incoming(&bytes),
            Ok(Some(Frame::TooLong { len, head })) => Err(Rejected {
                id: sniff_id(&head),
                error: RpcError::invalid_request(format!(
                    "message of {len} bytes exceeds the {} MiB limit; send large inputs as files and pass their paths",
                    transport::DEFAULT_MAX_LINE_BYTES / (1024 * 1024)
                )),
            }),
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("reading input failed ({e}); treating it as end of input");
                return;
            }
        };
        if tx.send(inbound).await.is_err() {
            return;
        }
    }
}
