//! Legacy v1 methods: `getConversationSummary`, `getAuthStatus`, `gitDiffToRemote`
//! (`fuzzyFileSearch*` live in [`crate::fuzzy`]).

use crate::accounts::{KeySource, key_source, key_value};
use crate::protocol::ThreadOverrides;
use crate::protocol::methods::{self as m, ClientRequest};
use crate::protocol::v1::{
    ConversationSummary, GetAuthStatusParams, GetAuthStatusResponse, GetConversationSummaryParams,
    GetConversationSummaryResponse, GitDiffToRemoteParams, GitDiffToRemoteResponse, V1AuthMethod,
    V1GitInfo,
};
use crate::threads::store_error;
use crate::{Conn, blocking, invalid, method};
use oi_core::git::{DiffBase, diff_with_untracked, git};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_protocol::ThreadId;
use oi_thread_store::ThreadSummary;
use serde_json::json;
use std::path::Path;
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
    let store = conn.thread_store().await?;
    let found = match (p.conversation_id, p.rollout_path) {
        (Some(id), _) => {
            let id: ThreadId = id
                .parse()
                .map_err(|e| invalid(format!("invalid conversation id: {e}")))?;
            blocking(move || store.get(&id).map_err(store_error))
                .await?
                .ok_or_else(|| invalid(format!("conversation not found: {id}")))?
        }
        (None, Some(path)) => {
            blocking(move || {
                store.load_path(&path).map(|l| l.summary).map_err(|e| {
                    invalid(format!("cannot read the rollout {}: {e}", path.display()))
                })
            })
            .await?
        }
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

/// Trimmed stdout of a git command that must succeed.
async fn git_ok(cwd: &Path, args: &[&str]) -> Result<String, String> {
    match git(cwd, args).await? {
        (0, out) => Ok(String::from_utf8_lossy(&out).trim().to_string()),
        (code, _) => Err(format!("git {} exited with {code}", args.join(" "))),
    }
}

async fn ref_exists(cwd: &Path, r: &str) -> bool {
    matches!(
        git(cwd, &["rev-parse", "--verify", "--quiet", r]).await,
        Ok((0, _))
    )
}

/// Remote refs that could be the base: the current branch's remote counterparts, each
/// remote's default branch, and remote branches containing HEAD. `origin` first.
async fn candidate_refs(cwd: &Path) -> Result<Vec<String>, String> {
    let mut remotes: Vec<String> = git_ok(cwd, &["remote"])
        .await?
        .lines()
        .map(str::to_string)
        .filter(|r| !r.is_empty())
        .collect();
    if remotes.is_empty() {
        return Err("the repository has no remote".into());
    }
    remotes.sort_by_key(|r| (r != "origin", r.clone()));
    let mut refs = Vec::new();
    let branch = git_ok(cwd, &["rev-parse", "--abbrev-ref", "HEAD"])
        .await
        .ok()
        .filter(|b| b != "HEAD");
    for r in &remotes {
        if let Some(b) = &branch {
            let candidate = format!("refs/remotes/{r}/{b}");
            if ref_exists(cwd, &candidate).await {
                refs.push(candidate);
            }
        }
        let head = format!("refs/remotes/{r}/HEAD");
        match git_ok(cwd, &["symbolic-ref", "--quiet", &head]).await {
            Ok(default) if !default.is_empty() => refs.push(default),
            _ => {
                for name in ["main", "master"] {
                    let candidate = format!("refs/remotes/{r}/{name}");
                    if ref_exists(cwd, &candidate).await {
                        refs.push(candidate);
                        break;
                    }
                }
            }
        }
    }
    if let Ok(out) = git_ok(
        cwd,
        &["branch", "-r", "--contains", "HEAD", "--format=%(refname)"],
    )
    .await
    {
        let mut contains: Vec<String> = out.lines().map(str::to_string).collect();
        contains.sort_by_key(|r| !r.starts_with("refs/remotes/origin/"));
        refs.extend(contains);
    }
    let mut seen = std::collections::HashSet::new();
    refs.retain(|r| !r.ends_with("/HEAD") && seen.insert(r.clone()));
    Ok(refs)
}

/// The closest remote commit (fewest local commits on top of it) and the diff from it
/// to the working tree, untracked files included.
pub async fn diff_to_remote(cwd: &Path) -> Result<(String, String), String> {
    git_ok(cwd, &["rev-parse", "--show-toplevel"]).await?;
    git_ok(cwd, &["rev-parse", "--verify", "HEAD"]).await?;
    let mut best: Option<(u64, String)> = None;
    for r in candidate_refs(cwd).await? {
        let Ok(base) = git_ok(cwd, &["merge-base", "HEAD", &r]).await else {
            continue;
        };
        let Ok(ahead) = git_ok(cwd, &["rev-list", "--count", &format!("{base}..HEAD")]).await
        else {
            continue;
        };
        let ahead: u64 = ahead.parse().unwrap_or(u64::MAX);
        if best.as_ref().is_none_or(|(n, _)| ahead < *n) {
            best = Some((ahead, base));
        }
    }
    let (_, sha) = best.ok_or("no remote branch shares history with HEAD")?;
    let diff = diff_with_untracked(cwd, DiffBase::Commit(&sha), true).await?;
    Ok((sha, diff))
}

async fn git_diff_to_remote(
    _conn: Arc<Conn>,
    _ctx: RequestContext,
    p: GitDiffToRemoteParams,
) -> Result<GitDiffToRemoteResponse, RpcError> {
    match diff_to_remote(&p.cwd).await {
        Ok((sha, diff)) => Ok(GitDiffToRemoteResponse { sha, diff }),
        Err(reason) => Err(invalid(format!(
            "failed to compute git diff to remote for cwd: {:?}",
            p.cwd
        ))
        .with_data(json!({ "reason": reason }))),
    }
}
