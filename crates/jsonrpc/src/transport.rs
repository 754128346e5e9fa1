//! Newline-delimited framing over any byte stream: a bounded line reader (a huge line is
//! skipped and reported, never buffered whole) and a writer loop that batches flushes.

use crate::message::RequestId;
use crate::outgoing::Routed;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Lines longer than this are rejected. Generous enough for long prompts with inlined
/// files; small enough that a runaway client cannot exhaust memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// How much of an oversized line is kept to try to recover its request id.
const HEAD_BYTES: usize = 512;

/// One unit of input.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A complete line, without its terminator.
    Line(Vec<u8>),
    /// A line over the limit; `head` is its beginning, `len` its full length.
    TooLong {
        /// The line's full length in bytes.
        len: usize,
        /// Its first bytes, enough to find a request id in.
        head: Vec<u8>,
    },
}

/// Reads newline-delimited frames with a size limit.
pub struct LineReader<R> {
    inner: R,
    max: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Frames from `inner`; lines longer than `max` bytes become [`Frame::TooLong`].
    pub fn new(inner: R, max: usize) -> Self {
        Self { inner, max }
    }

    /// The next non-blank line, without its `\n` / `\r\n`. `None` at end of input.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let mut buf = Vec::new();
            let mut len = 0usize;
            let mut saw_newline = false;
            loop {
                let avail = self.inner.fill_buf().await?;
                if avail.is_empty() {
                    break;
                }
                let (chunk, used) = match avail.iter().position(|b| *b == b'\n') {
                    Some(pos) => {
                        saw_newline = true;
                        (&avail[..pos], pos + 1)
                    }
                    None => (avail, avail.len()),
                };
                len += chunk.len();
                if len <= self.max {
                    buf.extend_from_slice(chunk);
                } else if buf.len() < HEAD_BYTES {
                    let room = HEAD_BYTES - buf.len();
                    buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                self.inner.consume(used);
                if saw_newline {
                    break;
                }
            }
            if !saw_newline && len == 0 {
                return Ok(None);
            }
            if len > self.max {
                buf.truncate(HEAD_BYTES);
                return Ok(Some(Frame::TooLong { len, head: buf }));
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                if saw_newline {
                    continue;
                }
                return Ok(None);
            }
            return Ok(Some(Frame::Line(buf)));
        }
    }
}

/// Standard input read on a plain OS thread. Tokio's own stdin reads on its blocking pool,
/// and a runtime waits for that read when it shuts down; if the client closed our stdout
/// but not our stdin, the process would linger until the client exits. A detached thread
/// does not hold the runtime up.
pub struct ThreadStdin {
    rx: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    offset: usize,
}

impl ThreadStdin {
    /// Starts the reader thread.
    pub fn spawn() -> Self {
        let (tx, rx) = mpsc::channel(4);
        let spawned = std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || {
                use std::io::Read;
                let mut stdin = std::io::stdin().lock();
                loop {
                    let mut buf = vec![0u8; 64 * 1024];
                    let msg = match stdin.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            buf.truncate(n);
                            Ok(buf)
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let failed = msg.is_err();
                    if tx.blocking_send(msg).is_err() || failed {
                        break;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the stdin reader thread: {e}; treating input as closed");
        }
        Self {
            rx,
            pending: Vec::new(),
            offset: 0,
        }
    }
}

impl tokio::io::AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        if self.offset >= self.pending.len() {
            match self.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // Sender gone: end of input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    self.pending = chunk;
                    self.offset = 0;
                }
            }
        }
        let n = buf.remaining().min(self.pending.len() - self.offset);
        let start = self.offset;
        buf.put_slice(&self.pending[start..start + n]);
        self.offset += n;
        Poll::Ready(Ok(()))
    }
}

/// Best effort: the `"id"` of a message from its first bytes, so a client whose request
/// was too large gets an error it can match instead of waiting forever.
pub fn sniff_id(head: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(head);
    let mut rest = text.as_ref();
    while let Some(pos) = rest.find("\"id\"") {
        let after = rest[pos + 4..].trim_start();
        if let Some(value) = after.strip_prefix(':') {
            let value = value.trim_start();
            if let Some(s) = value.strip_prefix('"') {
                let end = s.find('"')?;
                return Some(RequestId::String(s[..end].to_string()));
            }
            let digits: String = value
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            return digits.parse().ok().map(RequestId::Integer);
        }
        rest = &rest[pos + 4..];
    }
    None
}

/// Writes every outgoing message as one line. Flushes when the queue is momentarily
/// empty, so a burst of events costs one flush. Returns when the queue closes, when
/// `done` fires (after writing what is already queued), or when the peer stops reading.
pub async fn write_loop<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Routed>,
    writer: W,
    done: CancellationToken,
) -> std::io::Result<()> {
    let mut writer = tokio::io::BufWriter::with_capacity(64 * 1024, writer);
    loop {
        let msg = tokio::select! {
            msg = rx.recv() => msg,
            _ = done.cancelled() => None,
        };
        let Some(msg) = msg else { break };
        writer.write_all(&msg.msg.to_line()).await?;
        while let Ok(more) = rx.try_recv() {
            writer.write_all(&more.msg.to_line()).await?;
        }
        writer.flush().await?;
    }
    while let Ok(more) = rx.try_recv() {
        writer.write_all(&more.msg.to_line()).await?;
    }
    writer.flush().await?;
    writer.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut r = LineReader::new(BufReader::with_capacity(7, input), max);
        let mut out = Vec::new();
        while let Some(f) = r.next_frame().await.unwrap() {
            out.push(f);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_skips_blank_ones() {
        let got = frames(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(b"{\"b\":2}".to_vec()),
                Frame::Line(b"{\"c\":3}".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn oversized_line_is_reported_and_reader_recovers() {
        let mut input = br#"{"jsonrpc":"2.0","id":42,"method":"x","params":{"p":""#.to_vec();
        input.extend(std::iter::repeat_n(b'a', 5000));
        input.extend_from_slice(b"\"}}\n{\"ok\":1}\n");
        let got = frames(&input, 1000).await;
        assert_eq!(got.len(), 2);
        let Frame::TooLong { len, head } = &got[0] else {
            panic!("expected TooLong")
        };
        assert!(*len > 5000 && head.len() <= HEAD_BYTES);
        assert_eq!(sniff_id(head), Some(RequestId::Integer(42)));
        assert_eq!(got[1], Frame::Line(b"{\"ok\":1}".to_vec()));
    }

    #[test]
    fn sniffs_string_ids_and_gives_up_politely() {
        assert_eq!(
            sniff_id(br#"{"method":"m", "id" : "abc","#),
            Some(RequestId::String("abc".into()))
        );
        assert_eq!(sniff_id(br#"{"method":"m","params":{"#), None);
    }
}
