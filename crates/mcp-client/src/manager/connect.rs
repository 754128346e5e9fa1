//! Starting a server, restarting one that died, and the handler that receives its requests
//! and notifications (tool list changes, elicitations, sampling, progress).

use super::entry::{ConnState, RefreshInFlight, ServerEntry};
use super::{Inner, send_update};
use crate::connection::{Connection, establish};
use crate::handler::{Handler, ProgressRouter, Responder, ToolsChangedFn};
use futures::FutureExt;
use oi_protocol::protocol::McpStartupStatus;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

impl Inner {
    /// Start (or restart) one server; returns the status to report.
    pub(super) async fn connect(self: &Arc<Self>, entry: &Arc<ServerEntry>) -> McpStartupStatus {
        if self.shutdown.is_cancelled() {
            entry.state.send_replace(ConnState::Stopped);
            return McpStartupStatus::Cancelled;
        }
        entry.state.send_replace(ConnState::Starting);
        let handler = self.handler_for(entry);
        let result = tokio::select! {
            r = establish(&entry.name, &entry.config, &self.opts.cwd, &self.opts.home, self.opts.oauth_browser.clone(), self.opts.oauth_store, handler, entry.task_required.clone(), entry.prior()) => Some(r),
            _ = self.shutdown.cancelled() => None,
        };
        // The catalog is rebuilt before the new state is published, so whoever waits for
        // "ready" (start(), a call, a test) sees the server's tools at once.
        match result {
            None => {
                entry.state.send_replace(ConnState::Stopped);
                self.rebuild_catalog();
                McpStartupStatus::Cancelled
            }
            Some(Err(error)) => {
                // Recorded and reported as its one message.
                let error = error.to_string();
                entry.clear_tools();
                self.rebuild_catalog();
                crate::cache::record_failure(
                    crate::cache::failure_path(&entry.cache_path),
                    error.clone(),
                )
                .await;
                entry.state.send_replace(ConnState::Failed(error.clone()));
                McpStartupStatus::Failed { error }
            }
            Some(Ok(est)) => {
                let conn = est.conn;
                entry.remember_protocol(&conn.negotiated).await;
                entry
                    .runs_tasks
                    .store(conn.negotiated.tasks, Ordering::SeqCst);
                entry.set_live_tools(est.tools, est.tools_ttl).await;
                self.warn_unusable_tools(entry);
                let has_resources = conn
                    .peer
                    .peer_info()
                    .is_some_and(|info| info.capabilities.resources.is_some());
                entry
                    .details
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .has_resources = has_resources;
                super::resources::fetch_details(entry.clone(), conn.clone());
                entry.was_ready.store(true, Ordering::SeqCst);
                crate::cache::clear_failure(crate::cache::failure_path(&entry.cache_path)).await;
                if self.shutdown.is_cancelled() {
                    conn.close().await;
                    entry.state.send_replace(ConnState::Stopped);
                    self.rebuild_catalog();
                    McpStartupStatus::Cancelled
                } else {
                    self.rebuild_catalog();
                    self.listen(entry, &conn);
                    entry.state.send_replace(ConnState::Ready(conn));
                    McpStartupStatus::Ready
                }
            }
        }
    }

    /// Tells the user, once, which of a server's tools cannot be offered and why.
    pub(super) fn warn_unusable_tools(&self, entry: &ServerEntry) {
        if let Some(message) = entry.unusable_tools_warning() {
            tracing::warn!("{message}");
            let _ = self.events.send(oi_protocol::protocol::EventMsg::Warning(
                oi_protocol::protocol::WarningEvent { message },
            ));
        }
    }

    fn handler_for(self: &Arc<Self>, entry: &Arc<ServerEntry>) -> Handler {
        let weak_inner: Weak<Inner> = Arc::downgrade(self);
        let weak_entry: Weak<ServerEntry> = Arc::downgrade(entry);
        let on_tools_changed: ToolsChangedFn = Arc::new(move |peer| {
            let (weak_inner, weak_entry) = (weak_inner.clone(), weak_entry.clone());
            // Counted before the refetch starts, so a request built meanwhile can wait for it.
            let in_flight = weak_entry
                .upgrade()
                .map(|e| RefreshInFlight::new(&e.refreshing));
            async move {
                let _in_flight = in_flight;
                let (Some(inner), Some(entry)) = (weak_inner.upgrade(), weak_entry.upgrade())
                else {
                    return;
                };
                inner.refresh_tools(&entry, &peer, "tools changed").await;
            }
            .boxed()
        });
        Handler {
            responder: Arc::new(Responder {
                server: entry.name.clone(),
                roots: entry.config.resolved_roots(&self.opts.cwd),
                elicitation: self.opts.elicitation.clone(),
                pending_elicitations: entry.pending_elicitations.clone(),
                sampling: self.opts.sampling.clone(),
                sampling_mode: entry.config.sampling,
                sampling_timeout: entry.config.tool_timeout_or_default(),
                questions: Default::default(),
            }),
            progress: ProgressRouter::default(),
            on_tools_changed,
        }
    }

    /// The server's live connection, waiting while it starts and restarting it if it died.
    pub(super) async fn ready_connection(
        self: &Arc<Self>,
        entry: &Arc<ServerEntry>,
        cancel: &CancellationToken,
    ) -> Result<Arc<Connection>, crate::McpRequestError> {
        use crate::McpRequestError::NotReady;
        let mut rx = entry.state.subscribe();
        tokio::select! {
            _ = rx.wait_for(|s| !matches!(s, ConnState::Starting)) => {}
            _ = cancel.cancelled() => return Err(NotReady(format!(
                "interrupted while waiting for MCP server `{}` to start", entry.name
            ))),
        }
        let state = rx.borrow().clone();
        match state {
            ConnState::Ready(conn) if conn.is_alive() => return Ok(conn),
            ConnState::Stopped => {
                return Err(NotReady(
                    "the MCP connection manager has been shut down".to_string(),
                ));
            }
            ConnState::Failed(e) if !entry.was_ready.load(Ordering::SeqCst) => {
                return Err(NotReady(e));
            }
            ConnState::Starting | ConnState::Ready(_) | ConnState::Failed(_) => {}
        }
        let _guard = entry.restart.lock().await;
        // Someone else may have restarted it while we waited for the lock.
        let current = entry.state.borrow().clone();
        if let ConnState::Ready(conn) = current {
            if conn.is_alive() {
                return Ok(conn);
            }
            conn.close().await;
        }
        tracing::info!("restarting MCP server `{}`", entry.name);
        send_update(&self.events, &entry.name, McpStartupStatus::Starting);
        let status = tokio::select! {
            s = self.connect(entry) => s,
            _ = cancel.cancelled() => {
                return Err(NotReady(format!(
                    "interrupted while restarting MCP server `{}`",
                    entry.name
                )));
            }
        };
        send_update(&self.events, &entry.name, status.clone());
        let current = entry.state.borrow().clone();
        match (status, current) {
            (McpStartupStatus::Ready, ConnState::Ready(conn)) => Ok(conn),
            (McpStartupStatus::Failed { error }, _) => Err(NotReady(format!(
                "MCP server `{}` could not be restarted: {error}",
                entry.name
            ))),
            _ => Err(NotReady(format!(
                "MCP server `{}` is not running",
                entry.name
            ))),
        }
    }
}
