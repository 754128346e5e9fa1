//! Legacy v1 methods: `getConversationSummary`, `getAuthStatus`, `gitDiffToRemote`
//! (`fuzzyFileSearch*` live in [`crate::fuzzy`]).

use crate::accounts::{KeySource, key_source, key_value};
use crate::core_error;
use crate::protocol::ThreadOverrides;
use crate::protocol::methods::{self as m, ClientRequest};
use crate::protocol::v1::{
    ConversationSummary, GetAuthStatusParams, GetAuthStatusResponse, GetConversationSummaryParams,
    GetConversationSummaryResponse, GitDiffToRemoteParams, GitDiffToRemoteResponse, V1AuthMethod,
    V1GitInfo,
};
use crate::{Conn, invalid, method};
use oi_core::{ThreadSummary, WorkingTreeBase, working_tree_diff};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_protocol::ThreadId;
use serde_json::json;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    v1_method::<m::GetConversationSummary, _, _>(t, conn, "use thread/read", conversation_summary);
    v1_method::<m::GetAuthStatus, _, _>(t, conn, "use account/read", auth_status);
    method::<m::GitDiffToRemote, _, _>(t, conn, Execution::Spawn, git_diff_to_remote);
}

/// A v1 method kept for old clients: it works, and the first call on a connection is
/// followed by a `deprecationNotice` naming the v2 replacement.
fn v1_method<M, F, Fut>(t: &mut MethodTable, conn: &Arc<Conn>, replacement: &'static str, f: F)
where
    M: ClientRequest,
    M::Params: serde::de::DeserializeOwned + Send + 'static,
    F: Fn(Arc<Conn>, RequestContext, M::Params) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<M::Result, RpcError>> + Send + 'static,
{
    let f = Arc::new(f);
    let name = M::NAME;
    method::<M, _, _>(t, conn, Execution::Spawn, move |conn, ctx, p| {
        let f = f.clone();
        async move {
            conn.deprecated(
                &ctx,
                name,
                format!("`{name}` is a v1 method kept for old clients; {replacement}"),
            );
            f(conn, ctx, p).await
        }
    });
}

fn rfc3339(unix: i64) -> Option<String> {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The v1 summary (its `gitInfo` keys are snake_case, as in the reference).
fn summary(s: &ThreadSummary) -> ConversationSummary {
    ConversationSummary {
        conversation_id: s.id.to_string(),
        path: s.path.clone(),
        preview: s.preview.clone(),
        timestamp: rfc3339(s.created_at),
        updated_at: rfc3339(s.updated_at),
        model_provider: s.model_provider.clone(),
        cwd: s.cwd.clone(),
        cli_version: s.cli_version.clone(),
        source: s.source.as_v2_str().to_string(),
        git_info: s.git.as_ref().map(|g| V1GitInfo {
            sha: g.commit_hash.clone(),
            branch: g.branch.clone(),
            origin_url: g.repository_url.clone(),
        }),
    }
}

async fn conversation_summary(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: GetConversationSummaryParams,
) -> Result<GetConversationSummaryResponse, RpcError> {
    let stored = conn.stored_threads().await?;
    let found = match (p.conversation_id, p.rollout_path) {
        (Some(id), _) => {
            let id: ThreadId = id
                .parse()
                .map_err(|e| invalid(format!("invalid conversation id: {e}")))?;
            stored
                .get(&id)
                .await
                .map_err(core_error)?
                .ok_or_else(|| invalid(format!("conversation not found: {id}")))?
        }
        (None, Some(path)) => stored
            .load_path(&path)
            .await
            .map(|l| l.summary)
            .map_err(|e| invalid(format!("cannot read the rollout {}: {e}", path.display())))?,
        (None, None) => {
            return Err(invalid(
                "pass either `conversationId` (a thread id) or `rolloutPath` (a rollout file)",
            ));
        }
    };
    Ok(GetConversationSummaryResponse {
        summary: summary(&found),
    })
}

async fn auth_status(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: GetAuthStatusParams,
) -> Result<GetAuthStatusResponse, RpcError> {
    let config = conn.load_config(&ThreadOverrides::default()).await?.config;
    let home = conn.home()?;
    let status = match key_source(&config, &home).await? {
        KeySource::NotNeeded => GetAuthStatusResponse {
            auth_method: None,
            auth_token: None,
            requires_openai_auth: false,
        },
        KeySource::Missing => GetAuthStatusResponse {
            auth_method: None,
            auth_token: None,
            requires_openai_auth: true,
        },
        KeySource::Env | KeySource::CredentialsFile => GetAuthStatusResponse {
            auth_method: Some(V1AuthMethod::Apikey),
            auth_token: if p.include_token.unwrap_or(false) {
                key_value(&config, &home).await?
            } else {
                None
            },
            requires_openai_auth: true,
        },
    };
    Ok(status)
}

async fn git_diff_to_remote(
    _conn: Arc<Conn>,
    _ctx: RequestContext,
    p: GitDiffToRemoteParams,
) -> Result<GitDiffToRemoteResponse, RpcError> {
    match working_tree_diff(&p.cwd, WorkingTreeBase::ClosestRemote).await {
        Ok(d) => Ok(GitDiffToRemoteResponse {
            sha: d.base.unwrap_or_default(),
            diff: d.diff,
        }),
        Err(reason) => Err(invalid(format!(
            "failed to compute git diff to remote for cwd: {:?}",
            p.cwd
        ))
        .with_data(json!({ "reason": reason.to_string() }))),
    }
}
