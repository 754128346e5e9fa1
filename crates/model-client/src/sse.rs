//! Turns an HTTP body into a [`ResponseStream`]: SSE framing, the idle timeout, and a
//! wire-specific [`Decoder`] that maps events to [`ResponseEvent`]s.
//!
//! Everything runs inside the stream's own `poll_next`; no task is spawned, so dropping the
//! stream closes the connection and stops all work (that is how a turn is interrupted).

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};

use crate::{ModelError, ResponseEvent, ResponseStream};

/// Whether the decoder wants more events.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Continue,
    /// The response is complete; stop reading (servers may keep the connection open).
    Done,
}

/// Maps one wire format's SSE events to [`ResponseEvent`]s.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one SSE event (`event:` name, `data:` payload), pushing produced events to `out`.
    fn on_event(
        &mut self,
        event: &str,
        data: &str,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<Step, ModelError>;

    /// The body ended before [`Step::Done`]. Either finish (push the last events) or explain
    /// why the stream is incomplete.
    fn on_eof(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ModelError>;
}

struct State<S, D> {
    sse: S,
    decoder: D,
    queue: VecDeque<ResponseEvent>,
    error: Option<ModelError>,
    finished: bool,
    idle: Duration,
}

pub(crate) fn response_stream<B, T, E, D>(body: B, decoder: D, idle: Duration) -> ResponseStream
where
    B: Stream<Item = Result<T, E>> + Send + 'static,
    T: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
    D: Decoder,
{
    let state = State {
        sse: Box::pin(body.eventsource()),
        decoder,
        queue: VecDeque::new(),
        error: None,
        finished: false,
        idle,
    };
    let stream = futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.queue.pop_front() {
                return Some((Ok(ev), st));
            }
            if let Some(err) = st.error.take() {
                st.finished = true;
                return Some((Err(err), st));
            }
            if st.finished {
                return None;
            }
            match tokio::time::timeout(st.idle, st.sse.next()).await {
                Err(_) => st.error = Some(ModelError::IdleTimeout(st.idle)),
                Ok(None) => {
                    st.finished = true;
                    if let Err(e) = st.decoder.on_eof(&mut st.queue) {
                        st.error = Some(e);
                    }
                }
                Ok(Some(Err(e))) => st.error = Some(sse_error(e)),
                Ok(Some(Ok(event))) => {
                    match st
                        .decoder
                        .on_event(&event.event, &event.data, &mut st.queue)
                    {
                        Ok(Step::Continue) => {}
                        Ok(Step::Done) => st.finished = true,
                        Err(e) => st.error = Some(e),
                    }
                }
            }
        }
    });
    ResponseStream::new(Box::pin(stream))
}

/// Rewrites old llama.cpp's non-standard `error: {…}` SSE line into `event: error` +
/// `data: {…}`, so the decoder sees the error instead of an SSE field every parser ignores
/// (the turn would end empty and "successful"). Lines may be cut anywhere between chunks;
/// a chunk with no line starting with `e` passes through without a copy.
pub(crate) fn error_lines_as_events<S, E>(body: S) -> impl Stream<Item = Result<Bytes, E>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    let mut rewriter = ErrorLineRewriter::default();
    body.map(move |chunk| chunk.map(|c| rewriter.rewrite(c)))
}

const ERROR_FIELD: &[u8] = b"error:";
const ERROR_AS_EVENT: &[u8] = b"event: error\ndata:";

#[derive(Debug)]
struct ErrorLineRewriter {
    /// The next byte starts a line.
    at_line_start: bool,
    /// The start of a line that may become `error:`, waiting for the next chunk.
    held: Vec<u8>,
}

impl Default for ErrorLineRewriter {
    fn default() -> Self {
        Self {
            at_line_start: true,
            held: Vec::new(),
        }
    }
}

impl ErrorLineRewriter {
    fn rewrite(&mut self, chunk: Bytes) -> Bytes {
        let buf: Bytes = if self.held.is_empty() {
            chunk
        } else {
            let mut joined = std::mem::take(&mut self.held);
            joined.extend_from_slice(&chunk);
            Bytes::from(joined)
        };
        let first_is_line_start = self.at_line_start;
        if let Some(&last) = buf.last() {
            self.at_line_start = last == b'\n' || last == b'\r';
        }
        // Where the last (unterminated) line starts; it may be the start of `error:`.
        let last_line = match memchr::memrchr2(b'\n', b'\r', &buf) {
            Some(i) => Some(i + 1),
            None => first_is_line_start.then_some(0),
        };
        let hold_from = last_line.filter(|&p| {
            let rest = &buf[p..];
            !rest.is_empty() && rest.len() < ERROR_FIELD.len() && ERROR_FIELD.starts_with(rest)
        });
        let scan_end = hold_from.unwrap_or(buf.len());
        let mut out: Option<Vec<u8>> = None;
        let mut copied = 0;
        // `error:` found by a fast substring search, then checked to start a line.
        for p in memchr::memmem::find_iter(&buf[..scan_end], ERROR_FIELD) {
            let at_line_start = match p {
                0 => first_is_line_start,
                _ => matches!(buf[p - 1], b'\n' | b'\r'),
            };
            if at_line_start {
                let o = out.get_or_insert_with(|| Vec::with_capacity(buf.len() + 16));
                o.extend_from_slice(&buf[copied..p]);
                o.extend_from_slice(ERROR_AS_EVENT);
                copied = p + ERROR_FIELD.len();
            }
        }
        if let Some(p) = hold_from {
            // Too short to tell: hold it back for the next chunk.
            self.held = buf[p..].to_vec();
            self.at_line_start = true;
        }
        match out {
            None if hold_from.is_none() => buf,
            None => buf.slice(..scan_end),
            Some(mut o) => {
                o.extend_from_slice(&buf[copied..scan_end]);
                Bytes::from(o)
            }
        }
    }
}

fn sse_error<E: std::fmt::Display>(e: EventStreamError<E>) -> ModelError {
    match e {
        EventStreamError::Transport(e) => {
            ModelError::StreamDisconnected(format!("the connection failed mid-stream: {e}"))
        }
        EventStreamError::Utf8(e) => {
            ModelError::BadResponse(format!("the event stream is not valid UTF-8: {e}"))
        }
        EventStreamError::Parser(e) => {
            ModelError::BadResponse(format!("the event stream is not valid SSE: {e}"))
        }
    }
}

/// Parses an event payload as JSON, or explains which payload was malformed.
///
/// A malformed `data:` line is an error, not a skipped line: silently dropping it could lose
/// part of the answer or a tool call, and the user would never learn why.
pub(crate) fn parse_json(data: &str) -> Result<serde_json::Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        ModelError::BadResponse(format!(
            "an event's `data:` is not valid JSON ({e}): `{}`",
            truncate(data, 200)
        ))
    })
}

/// A typed event of the Responses and Messages streams: its JSON and its kind (the JSON
/// `type`, which is authoritative; the SSE `event:` name is the fallback). `None` for an
/// empty payload or `[DONE]`.
pub(crate) fn typed_event(
    event: &str,
    data: &str,
) -> Result<Option<(serde_json::Value, String)>, ModelError> {
    let data = data.trim();
    if data.is_empty() || data == "[DONE]" {
        return Ok(None);
    }
    let v = parse_json(data)?;
    let kind = v
        .get("type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or(event)
        .to_string();
    Ok(Some((v, kind)))
}

/// At most `max` bytes of `s`, cut at a char boundary, with an ellipsis when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite_all(chunks: &[&[u8]]) -> Vec<u8> {
        let mut r = ErrorLineRewriter::default();
        let mut out = Vec::new();
        for c in chunks {
            out.extend_from_slice(&r.rewrite(Bytes::copy_from_slice(c)));
        }
        out.extend_from_slice(&r.held);
        out
    }

    #[test]
    fn error_lines_become_error_events_however_they_are_cut() {
        let input: &[u8] = b"data: {\"a\":1}\n\nerror: {\"code\":500}\n\n";
        let expected: &[u8] = b"data: {\"a\":1}\n\nevent: error\ndata: {\"code\":500}\n\n";
        assert_eq!(rewrite_all(&[input]), expected);
        for i in 1..input.len() {
            assert_eq!(
                rewrite_all(&[&input[..i], &input[i..]]),
                expected,
                "cut at {i}"
            );
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(rewrite_all(&bytes), expected);
    }

    #[test]
    fn other_lines_pass_untouched() {
        for input in [
            &b"data: {\"error\": null}\n\nevent: x\ndata: e\n\n"[..],
            b"data: error: not at line start\n\n",
            b"e",
        ] {
            assert_eq!(rewrite_all(&[input]), input);
        }
    }
}
