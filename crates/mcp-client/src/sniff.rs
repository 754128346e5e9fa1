//! Reading what the typed MCP layer drops. rmcp's `Tool` has no `execution` field, so a tool
//! that declares SEP-1686 `execution.taskSupport: "required"` would look callable; this reader
//! passes a stdio server's output through unchanged and notes such tools on the way.

use serde_json::Value;
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// Lines longer than this are not inspected (a huge tool result, not a tool list).
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Names of tools that declared `taskSupport: "required"`.
pub type TaskRequiredTools = Arc<Mutex<HashSet<String>>>;

pub struct TaskSupportSniffer<R> {
    inner: R,
    line: Vec<u8>,
    overlong: bool,
    found: TaskRequiredTools,
}

impl<R> TaskSupportSniffer<R> {
    pub fn new(inner: R, found: TaskRequiredTools) -> Self {
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
