//! Methods of Codex features this server does not have, which Codex's own clients call
//! while starting: `configRequirements/read`, `plugin/installed`,
//! `account/bedrock/checkGovCloudRequirements`, `thread/readState/update`, and on resume
//! `thread/goal/get` and `thread/backgroundTerminals/list`. Each answers what is true here:
//! no requirements, no plugins, no Bedrock, no unread tracking (every thread reads as
//! read), no goals, no background terminals. The thread methods check the thread exists.

use crate::protocol::absent::*;
use crate::protocol::methods as m;
use crate::threads::summary_of;
use crate::{Conn, invalid, method, parse_thread_id, thread_not_found};
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ConfigRequirementsRead, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(ConfigRequirementsReadResponse::default())
    });
    method::<m::PluginInstalled, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(PluginInstalledResponse::default())
    });
    method::<m::BedrockCheckGovCloudRequirements, _, _>(
        t,
        conn,
        Execution::Inline,
        |_c, _x, _p| async { Ok(BedrockCheckGovCloudRequirementsResponse::default()) },
    );
    method::<m::ThreadReadStateUpdate, _, _>(t, conn, Execution::Spawn, read_state_update);
    method::<m::ThreadGoalGet, _, _>(t, conn, Execution::Spawn, |c, _x, p| async move {
        known_thread(&c, &p.thread_id).await?;
        Ok(ThreadGoalGetResponse::default())
    });
    method::<m::ThreadBackgroundTerminalsList, _, _>(
        t,
        conn,
        Execution::Spawn,
        |c, _x, p| async move {
            known_thread(&c, &p.thread_id).await?;
            Ok(ThreadBackgroundTerminalsListResponse::default())
        },
    );
}

/// An error unless `thread_id` names a loaded or stored thread.
async fn known_thread(conn: &Arc<Conn>, thread_id: &str) -> Result<(), RpcError> {
    let id = parse_thread_id(thread_id)?;
    if conn.live_thread(&id).is_none() && summary_of(conn, id).await?.is_none() {
        return Err(thread_not_found(id));
    }
    Ok(())
}

/// Marking a thread read succeeds (it already reads as read); marking it unread is refused,
/// since nothing here would remember it.
async fn read_state_update(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ThreadReadStateUpdateParams,
) -> Result<ThreadReadStateUpdateResponse, RpcError> {
    known_thread(&conn, &p.thread_id).await?;
    if p.operation == ThreadReadStateOperation::Unread {
        return Err(invalid(
            "marking a thread unread is not supported: this server keeps no read/unread state",
        ));
    }
    Ok(ThreadReadStateUpdateResponse {
        read_state: ThreadReadState {
            revision: p.expected_revision,
            first_unread: None,
        },
    })
}
