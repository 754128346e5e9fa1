//! Keeping a server's lists current: `notifications/tools/list_changed` as the handshake era
//! sends it (through the handler), `subscriptions/listen` on 2026-07-28 servers (which send
//! list changes only to a client that listens), and re-listing a tool list past the `ttlMs`
//! the server gave it.

use super::entry::{ConnState, RefreshInFlight, ServerEntry};
use super::{Inner, McpConnectionManager};
use crate::connection::Connection;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{RoleClient, ServiceError};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A stale list is re-listed at most this often, whatever its `ttlMs` (0 is allowed).
const MIN_RELIST_INTERVAL: Duration = Duration::from_secs(1);
/// Pause before opening a subscription again after it ended; doubles up to the maximum.
const LISTEN_RETRY: Duration = Duration::from_secs(1);
const LISTEN_RETRY_MAX: Duration = Duration::from_secs(30);

impl Inner {
    /// Re-lists one server's tools and rebuilds the catalog. Counted in the server's
    /// `refreshing`, so the next model request can wait for it briefly.
    pub(super) async fn refresh_tools(
        self: &Arc<Self>,
        entry: &Arc<ServerEntry>,
        peer: &rmcp::Peer<RoleClient>,
        why: &str,
    ) {
        let _in_flight = RefreshInFlight::new(&entry.refreshing);
        let listed = tokio::time::timeout(
            entry.config.tool_timeout_or_default(),
            crate::tool_list::list_tools(peer),
        )
        .await;
        match listed {
            Ok(Ok(listed)) => {
                entry.set_live_tools(listed.tools, listed.ttl).await;
                self.warn_unusable_tools(entry);
                self.rebuild_catalog();
            }
            // The server went away while we asked (stopped at the end of a probe or a
            // session, or crashed): nothing to tell here, a crash is reported where the
            // connection ends.
            Ok(Err(ServiceError::TransportClosed)) => tracing::debug!(
                "MCP server `{}` ({why}) closed before tools/list answered",
                entry.name
            ),
            Ok(Err(e)) => tracing::warn!(
                "MCP server `{}`: tools/list ({why}) failed: {e}",
                entry.name
            ),
            Err(_) => tracing::warn!("MCP server `{}`: tools/list ({why}) timed out", entry.name),
        }
    }

    /// On a 2026-07-28 server that says its lists change, keeps a `subscriptions/listen`
    /// stream open for as long as the connection lives (opened again after it ends), and
    /// re-lists what it says changed.
    pub(super) fn listen(self: &Arc<Self>, entry: &Arc<ServerEntry>, conn: &Arc<Connection>) {
        let Some(filter) = subscription_filter(conn) else {
            return;
        };
        let (inner, entry) = (Arc::downgrade(self), Arc::downgrade(entry));
        let conn = Arc::downgrade(conn);
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = listen_loop(inner, entry, conn, filter) => {}
                _ = shutdown.cancelled() => {}
            }
        });
    }
}

/// The notifications worth a subscription: the lists the server says may change.
fn subscription_filter(conn: &Connection) -> Option<SubscriptionFilter> {
    let info = conn.peer.peer_info()?;
    if info.protocol_version.has_initialize() {
        return None;
    }
    let caps = &info.capabilities;
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true);
    if !(tools || prompts || resources) {
        return None;
    }
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = tools.then_some(true);
    filter.prompts_list_changed = prompts.then_some(true);
    filter.resources_list_changed = resources.then_some(true);
    Some(filter)
}

async fn listen_loop(
    inner: Weak<Inner>,
    entry: Weak<ServerEntry>,
    conn: Weak<Connection>,
    filter: SubscriptionFilter,
) {
    let mut pause = LISTEN_RETRY;
    loop {
        let Some(peer) = conn
            .upgrade()
            .filter(|c| c.is_alive())
            .map(|c| c.peer.clone())
        else {
            return;
        };
        let name = entry.upgrade().map(|e| e.name.clone()).unwrap_or_default();
        match peer.listen(filter.clone()).await {
            Ok(mut subscription) => {
                tracing::debug!("MCP server `{name}`: subscribed to list changes");
                pause = LISTEN_RETRY;
                loop {
                    match subscription.next().await {
                        Ok(Some(notification)) => {
                            let (Some(inner), Some(entry), Some(conn)) =
                                (inner.upgrade(), entry.upgrade(), conn.upgrade())
                            else {
                                return;
                            };
                            on_change(&inner, &entry, &conn, notification).await;
                        }
                        Ok(None) => break,
                        Err(e) => {
                            tracing::debug!("MCP server `{name}`: subscription failed: {e}");
                            break;
                        }
                    }
                }
            }
            // A server that does not serve subscriptions is not asked again.
            Err(ServiceError::McpError(e))
                if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
            {
                tracing::debug!(
                    "MCP server `{name}` has no subscriptions/listen: {}",
                    e.message
                );
                return;
            }
            Err(e) => tracing::debug!("MCP server `{name}`: subscriptions/listen failed: {e}"),
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LISTEN_RETRY_MAX);
    }
}

/// What one notification of the subscription changes.
async fn on_change(
    inner: &Arc<Inner>,
    entry: &Arc<ServerEntry>,
    conn: &Arc<Connection>,
    notification: ServerNotification,
) {
    match notification {
        ServerNotification::ToolListChangedNotification(_) => {
            inner
                .refresh_tools(entry, &conn.peer, "tools changed")
                .await;
        }
        ServerNotification::PromptListChangedNotification(_)
        | ServerNotification::ResourceListChangedNotification(_) => {
            super::resources::fetch_details(entry.clone(), conn.clone());
        }
        other => tracing::debug!(
            "MCP server `{}`: subscription notification ignored: {other:?}",
            entry.name
        ),
    }
}

impl McpConnectionManager {
    /// Re-lists, in the background, the tools of ready servers whose list is past the
    /// `ttlMs` it came with (at most once a second each); the next model request gets them.
    pub(crate) fn refresh_stale_catalogs(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for entry in self.inner.servers.values() {
            if !entry.tools_stale_for(MIN_RELIST_INTERVAL) || *entry.refreshing.borrow() > 0 {
                continue;
            }
            let ConnState::Ready(conn) = entry.state.borrow().clone() else {
                continue;
            };
            if !conn.is_alive() {
                continue;
            }
            // Counted now, so a request built meanwhile can wait for it.
            let in_flight = RefreshInFlight::new(&entry.refreshing);
            let (inner, entry) = (self.inner.clone(), entry.clone());
            runtime.spawn(async move {
                inner
                    .refresh_tools(&entry, &conn.peer, "its ttlMs ran out")
                    .await;
                drop(in_flight);
            });
        }
    }
}
