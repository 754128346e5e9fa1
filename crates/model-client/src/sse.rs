//! Turns an HTTP body into a [`ResponseStream`]: SSE framing, the idle timeout, and a
//! wire-specific [`Decoder`] that maps events to [`ResponseEvent`]s.
//!
//! Everything runs inside the stream's own `poll_next`; no task is spawned, so dropping the
//! stream closes the connection and stops all work (that is how a turn is interrupted).

use std::collections::VecDeque;
use std::time::Duration;

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
