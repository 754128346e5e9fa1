//! `thread/unsubscribe` (stop and unload a thread once no other connection of this server
//! holds it; it stays on disk) and `thread/delete`
//! (unload it and remove it from disk).

use crate::core_error;
use crate::items::Note;
use crate::protocol::methods as m;
use crate::protocol::wire::{
    EmptyResponse, ThreadIdNotification, ThreadIdParams, ThreadUnsubscribeResponse,
    ThreadUnsubscribeStatus,
};
use crate::{Conn, invalid, method, parse_thread_id, thread_not_found};
use oi_core::Thread;
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_protocol::ThreadId;
use oi_protocol::protocol::Op;
use std::sync::Arc;
use std::time::Duration;

/// How long an idle thread gets to flush its rollout and stop.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ThreadUnsubscribe, _, _>(t, conn, Execution::Spawn, unsubscribe);
    method::<m::ThreadDelete, _, _>(t, conn, Execution::Spawn, delete);
}

/// Stops a live thread and forgets it. A running turn is interrupted by the shutdown and
/// its reader (the turn's event pump) sees the end; an idle thread is drained here so its
/// rollout is flushed before this returns.
async fn close(conn: &Conn, id: ThreadId, thread: Arc<Thread>) {
    let busy = thread.is_busy();
    conn.manager.remove_thread(&id);
    conn.ephemeral.remove_thread(&id);
    if busy {
        let _ = thread.submit(Op::Shutdown).await;
        return;
    }
    if !thread.shutdown(CLOSE_GRACE).await {
        tracing::warn!("thread {id} did not confirm its shutdown within {CLOSE_GRACE:?}");
    }
}

async fn unsubscribe(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadIdParams,
) -> Result<ThreadUnsubscribeResponse, RpcError> {
    let id = parse_thread_id(&p.thread_id)?;
    let Some(thread) = conn.live_thread(&id) else {
        return Ok(ThreadUnsubscribeResponse {
            status: ThreadUnsubscribeStatus::NotLoaded,
        });
    };
    conn.listeners.stop(id);
    if conn.release(&id) {
        // Another connection of this server still uses the thread: it stays loaded.
        return Ok(ThreadUnsubscribeResponse {
            status: ThreadUnsubscribeStatus::Unsubscribed,
        });
    }
    close(&conn, id, thread).await;
    let closed = ThreadIdNotification {
        thread_id: id.to_string(),
    };
    conn.notify_after_response(&ctx, vec![Note::of::<m::ThreadClosed>(&closed)]);
    Ok(ThreadUnsubscribeResponse {
        status: ThreadUnsubscribeStatus::Unsubscribed,
    })
}

async fn delete(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadIdParams,
) -> Result<EmptyResponse, RpcError> {
    let id = parse_thread_id(&p.thread_id)?;
    let ephemeral = conn.ephemeral_info(&id).is_some();
    if let Some(thread) = conn.live_thread(&id) {
        if let Some(turn) = thread.active_turn_id() {
            return Err(invalid(format!(
                "thread {id} is running turn {turn}; stop it with turn/interrupt, then delete the thread"
            )));
        }
        // Deleting is for every connection: this one's hold goes, the thread stops.
        conn.release(&id);
        close(&conn, id, thread).await;
    } else if ephemeral {
        return Err(thread_not_found(id));
    }
    if !ephemeral {
        let stored = conn.stored_threads().await?;
        stored.delete(&id).await.map_err(core_error)?;
    }
    let deleted = ThreadIdNotification {
        thread_id: id.to_string(),
    };
    conn.notify_after_response(&ctx, vec![Note::of::<m::ThreadDeleted>(&deleted)]);
    Ok(EmptyResponse {})
}
