//! Reading what the typed MCP layer drops. rmcp's `Tool` has no `execution` field, so a tool
//! that declares SEP-1686 `execution.taskSupport: "required"` would look callable; these
//! readers pass a stdio server's output, or an HTTP server's event streams, through unchanged
//! and note such tools on the way.

use serde_json::Value;
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// Lines longer than this are not inspected (a huge tool result, not a tool list).
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Names of tools that declared `taskSupport: "required"`.
pub(crate) type TaskRequiredTools = Arc<Mutex<HashSet<String>>>;

pub(crate) struct TaskSupportSniffer<R> {
    inner: R,
    line: Vec<u8>,
    overlong: bool,
    found: TaskRequiredTools,
}

impl<R> TaskSupportSniffer<R> {
    pub(crate) fn new(inner: R, found: TaskRequiredTools) -> Self {
        Self {
            inner,
            line: Vec::new(),
            overlong: false,
            found,
        }
    }

    fn inspect(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            if !self.overlong {
                if self.line.len() + chunk.len() > MAX_LINE {
                    self.overlong = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            if chunk.ends_with(b"\n") {
                if !self.overlong {
                    note_task_required(&self.line, &self.found);
                }
                self.line.clear();
                self.overlong = false;
            }
        }
    }
}

/// If `line` is a `tools/list` reply naming task-only tools, remember them.
fn note_task_required(line: &[u8], found: &TaskRequiredTools) {
    // Cheap pre-check: almost no line mentions it.
    if !line.windows(11).any(|w| w == b"taskSupport") {
        return;
    }
    let Ok(msg) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let Some(tools) = msg.pointer("/result/tools").and_then(Value::as_array) else {
        return;
    };
    let Ok(mut set) = found.lock() else {
        return;
    };
    for t in tools {
        let required =
            t.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required");
        if let (true, Some(name)) = (required, t.get("name").and_then(Value::as_str)) {
            set.insert(name.to_string());
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TaskSupportSniffer<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let new = buf.filled()[before..].to_vec();
            self.inspect(&new);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_task_only_tools_across_reads() {
        let found = TaskRequiredTools::default();
        let mut s = TaskSupportSniffer::new(tokio::io::empty(), found.clone());
        let line = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"research","inputSchema":{},"execution":{"taskSupport":"required"}},{"name":"opt","execution":{"taskSupport":"optional"}}]}}
"#;
        let (head, tail) = line.split_at(40);
        s.inspect(head);
        s.inspect(tail);
        assert_eq!(
            found.lock().unwrap().iter().cloned().collect::<Vec<_>>(),
            vec!["research".to_string()]
        );
    }
}

/// The same reading for a streamable-HTTP server: a client that delegates every request to
/// `inner` and notes task-only tools in the SSE events of the responses on the way. (A
/// server that answers `tools/list` with a plain JSON body is parsed by rmcp before this
/// layer sees it; the servers seen so far stream their replies as SSE.)
#[derive(Clone)]
pub(crate) struct SniffingHttpClient<C> {
    inner: C,
    found: TaskRequiredTools,
}

impl<C> SniffingHttpClient<C> {
    pub(crate) fn new(inner: C, found: TaskRequiredTools) -> Self {
        Self { inner, found }
    }
}

mod http {
    use super::{SniffingHttpClient, TaskRequiredTools, note_task_required};
    use futures::StreamExt;
    use futures::stream::BoxStream;
    use reqwest::header::{HeaderName, HeaderValue};
    use rmcp::model::ClientJsonRpcMessage;
    use rmcp::transport::streamable_http_client::{
        SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
        StreamableHttpResponseLimits,
    };
    use sse_stream::Sse;
    use std::collections::HashMap;
    use std::sync::Arc;

    fn watch<T: Send + 'static>(
        stream: BoxStream<'static, Result<T, SseError>>,
        found: &TaskRequiredTools,
        data: fn(&T) -> Option<&str>,
    ) -> BoxStream<'static, Result<T, SseError>> {
        let found = found.clone();
        stream
            .inspect(move |event| {
                if let Some(d) = event.as_ref().ok().and_then(data) {
                    note_task_required(d.as_bytes(), &found);
                }
            })
            .boxed()
    }

    impl<C: StreamableHttpClient + Sync> StreamableHttpClient for SniffingHttpClient<C> {
        type Error = C::Error;

        async fn post_message(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                StreamableHttpResponseLimits::default(),
            )
            .await
        }

        async fn post_message_with_max_sse_event_size(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            max_sse_event_size: usize,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            let mut limits = StreamableHttpResponseLimits::default();
            limits.max_sse_event_size = max_sse_event_size;
            self.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
        }

        async fn post_message_with_response_limits(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            limits: StreamableHttpResponseLimits,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            let response = self
                .inner
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await?;
            Ok(match response {
                StreamableHttpPostResponse::Sse(stream, session) => {
                    StreamableHttpPostResponse::Sse(
                        watch(stream, &self.found, |e| e.data.as_deref()),
                        session,
                    )
                }
                other => other,
            })
        }

        async fn delete_session(
            &self,
            uri: Arc<str>,
            session_id: Arc<str>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<(), StreamableHttpError<Self::Error>> {
            self.inner
                .delete_session(uri, session_id, auth_header, custom_headers)
                .await
        }

        async fn get_stream(
            &self,
            uri: Arc<str>,
            session_id: Option<Arc<str>>,
            last_event_id: Option<String>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>>
        {
            let stream = self
                .inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
                .await?;
            Ok(watch(stream, &self.found, |e| e.data.as_deref()))
        }

        async fn get_stream_with_max_sse_event_size(
            &self,
            uri: Arc<str>,
            session_id: Option<Arc<str>>,
            last_event_id: Option<String>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            max_sse_event_size: usize,
        ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>>
        {
            let stream = self
                .inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await?;
            Ok(watch(stream, &self.found, |e| e.data.as_deref()))
        }
    }
}
