//! What Codex's TUI calls during a session beyond the thread and turn basics (recorded
//! against `codex app-server` 0.171; docs/v2-api.md lists them):
//!
//! * `review/start` (`/review`): a turn on the thread itself whose input asks the model to
//!   review the target (the working tree, a branch, a commit, or the user's instructions);
//!   the model reads the changes with its own tools, as any turn does.
//! * `thread/settings/update` (`/model`, `/permissions`): settings the engine keeps for the
//!   thread's next turn, from any connection (under that call's own overrides), then
//!   `thread/settings/updated`.
//! * `thread/shellCommand` (`!command`): the user's command, run at once in the thread's
//!   directory under its sandbox and reported as a turn of its own with one
//!   `commandExecution` item (`source: "userShell"`). The model is told the command and its
//!   output with the thread's next turn (`Thread::add_context_for_next_turn`), whichever
//!   client starts it.
//! * `permissionProfile/list` (`/permissions`): the three sandbox modes as profiles.
//! * `experimentalFeature/list` (`/experimental`): empty, there are no feature flags.

use crate::command_exec::DEFAULT_OUTPUT_CAP;
use crate::convert::now_unix;
use crate::items::Note;
use crate::protocol::item::{CommandExecutionSource, CommandExecutionStatus, command_actions};
use crate::protocol::methods as m;
use crate::protocol::notification::{ItemCompletedNotification, ItemStartedNotification};
use crate::protocol::session::*;
use crate::protocol::turn::{TurnCompletedNotification, TurnItemsView, TurnStartedNotification};
use crate::protocol::wire::EmptyResponse;
use crate::protocol::{ThreadItem, Turn, TurnStatus, V2SandboxPolicy};
use crate::turns::{self, live};
use crate::{Conn, invalid, method, offset_page};
use oi_core::{CommandRequest, Thread, run_command};
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use oi_protocol::config_types::{ReasoningEffort, SandboxPolicy};
use oi_protocol::parse_command::{display_command, parse_command};
use oi_protocol::protocol::TurnOverrides;
use oi_protocol::user_input::UserInput;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a user's `!command` may run when the client gives no `timeoutMs`.
const SHELL_COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// The permission profiles: Codex's built-in ids for the three sandbox modes.
const PROFILES: &[(&str, &str)] = &[
    (
        ":read-only",
        "read-only sandbox: commands read files, write nothing, no network",
    ),
    (
        ":workspace",
        "workspace-write sandbox: commands write the working folder and temp dirs, no network",
    ),
    (":danger-full-access", "no sandbox: commands run unconfined"),
];

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ReviewStart, _, _>(t, conn, Execution::Spawn, review_start);
    method::<m::ThreadSettingsUpdate, _, _>(t, conn, Execution::Spawn, settings_update);
    method::<m::ThreadShellCommand, _, _>(t, conn, Execution::Spawn, shell_command);
    method::<m::PermissionProfileList, _, _>(t, conn, Execution::Inline, |_c, _x, p| async move {
        let (start, end, next) = offset_page(PROFILES.len(), p.cursor.as_deref(), p.limit)?;
        Ok(PermissionProfileListResponse {
            data: PROFILES[start..end]
                .iter()
                .map(|(id, description)| PermissionProfileSummary {
                    id: id.to_string(),
                    description: Some(description.to_string()),
                    allowed: true,
                })
                .collect(),
            next_cursor: next,
        })
    });
    method::<m::ExperimentalFeatureList, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(ExperimentalFeatureListResponse::default())
    });
}

/// The sandbox a permission profile id stands for.
fn profile_policy(id: &str) -> Result<SandboxPolicy, RpcError> {
    match id {
        ":read-only" => Ok(SandboxPolicy::ReadOnly),
        ":workspace" => Ok(SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }),
        ":danger-full-access" => Ok(SandboxPolicy::DangerFullAccess),
        other => {
            let known: Vec<&str> = PROFILES.iter().map(|(id, _)| *id).collect();
            Err(invalid(format!(
                "unknown permission profile `{other}`; the profiles are {} (see permissionProfile/list)",
                known.join(", ")
            )))
        }
    }
}

/// The request text of a review turn.
fn review_prompt(target: &ReviewTarget) -> Result<(String, String), RpcError> {
    let findings = "Report prioritized findings: real bugs and risks first, each with its file \
                    and line and why it matters; say so plainly if you find nothing worth fixing. \
                    Do not change any file.";
    match target {
        ReviewTarget::UncommittedChanges => Ok((
            "uncommitted changes".to_string(),
            format!(
                "Review the uncommitted changes in this repository: staged, unstaged and untracked \
                 files (see `git status` and `git diff HEAD`). {findings}"
            ),
        )),
        ReviewTarget::BaseBranch { branch } => {
            let branch = branch.trim();
            if branch.is_empty() {
                return Err(invalid(
                    "target.branch must not be empty: name the base branch",
                ));
            }
            Ok((
                format!("changes against {branch}"),
                format!(
                    "Review the changes of the current branch against the base branch `{branch}` \
                     (see `git diff {branch}...HEAD`). {findings}"
                ),
            ))
        }
        ReviewTarget::Commit { sha, title } => {
            let sha = sha.trim();
            if sha.is_empty() {
                return Err(invalid("target.sha must not be empty: name the commit"));
            }
            let titled = title
                .as_deref()
                .map(|t| format!(" (\"{t}\")"))
                .unwrap_or_default();
            Ok((
                format!("commit {sha}"),
                format!(
                    "Review the changes of commit {sha}{titled} (see `git show {sha}`). {findings}"
                ),
            ))
        }
        ReviewTarget::Custom { instructions } => {
            if instructions.trim().is_empty() {
                return Err(invalid(
                    "target.instructions must not be empty: say what to review",
                ));
            }
            Ok((instructions.clone(), instructions.clone()))
        }
    }
}

async fn review_start(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ReviewStartParams,
) -> Result<ReviewStartResponse, RpcError> {
    let (id, thread) = live(&conn, &p.thread_id)?;
    let (_, prompt) = review_prompt(&p.target)?;
    let items = vec![UserInput::text(prompt)];
    let (turn_id, started_at) =
        turns::start_input(&conn, &ctx, thread, items, TurnOverrides::default()).await?;
    Ok(ReviewStartResponse {
        turn: Turn::in_progress(turn_id, started_at),
        review_thread_id: id.to_string(),
    })
}

fn settings_overrides(
    p: &ThreadSettingsUpdateParams,
    thread: &Thread,
) -> Result<TurnOverrides, RpcError> {
    let sandbox_policy = match (&p.sandbox_policy, &p.permissions) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "permissions cannot be combined with sandboxPolicy; send one of them",
            ));
        }
        (Some(policy), None) => Some(SandboxPolicy::from(policy.clone())),
        (None, Some(profile)) => Some(profile_policy(profile)?),
        (None, None) => None,
    };
    let cwd = match &p.cwd {
        None => None,
        Some(c) => {
            let abs = thread.settings().cwd.join(c);
            Some(abs.canonicalize().map_err(|e| {
                invalid(format!(
                    "cwd {} is not usable: {e}; pass an existing directory",
                    abs.display()
                ))
            })?)
        }
    };
    let mode = p.collaboration_mode.as_ref();
    let mode_effort = mode.and_then(|m| {
        m.settings
            .reasoning_effort
            .or((m.mode == "plan").then_some(ReasoningEffort::Medium))
    });
    Ok(TurnOverrides {
        cwd,
        approval_policy: p.approval_policy,
        sandbox_policy,
        model: p
            .model
            .clone()
            .or_else(|| mode.map(|m| m.settings.model.clone())),
        effort: p.effort.or(mode_effort),
        harness: None,
    })
}

async fn settings_update(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadSettingsUpdateParams,
) -> Result<EmptyResponse, RpcError> {
    let (id, thread) = live(&conn, &p.thread_id)?;
    let update = settings_overrides(&p, &thread)?;
    // Kept by the engine: the next turn of this thread starts with them, whichever
    // connection starts it.
    let pending = thread.update_next_turn_settings(update);
    let mode = p
        .collaboration_mode
        .as_ref()
        .map_or_else(|| "default".to_string(), |m| m.mode.clone());
    let note = ThreadSettingsUpdatedNotification {
        thread_id: id.to_string(),
        thread_settings: settings_of(&thread.settings(), pending, mode),
    };
    conn.notify_after_response(&ctx, vec![Note::of::<m::ThreadSettingsUpdated>(&note)]);
    Ok(EmptyResponse {})
}

/// What the thread's next turn runs with: its config with the pending settings on top.
fn settings_of(config: &oi_config::Config, pending: TurnOverrides, mode: String) -> ThreadSettings {
    let model = pending.model.unwrap_or_else(|| config.model.clone());
    let effort = pending.effort.or(config.model_reasoning_effort);
    let sandbox = pending
        .sandbox_policy
        .unwrap_or_else(|| config.sandbox_policy.clone());
    ThreadSettings {
        model: model.clone(),
        model_provider: config.model_provider_id.clone(),
        cwd: pending.cwd.unwrap_or_else(|| config.cwd.clone()),
        approval_policy: pending.approval_policy.unwrap_or(config.approval_policy),
        approvals_reviewer: "user".to_string(),
        sandbox_policy: V2SandboxPolicy::from(&sandbox),
        effort,
        collaboration_mode: SettingsCollaborationMode {
            mode,
            settings: CollaborationModeSettings {
                model,
                reasoning_effort: effort,
                developer_instructions: None,
            },
        },
        service_tier: None,
        summary: None,
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

async fn shell_command(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadShellCommandParams,
) -> Result<EmptyResponse, RpcError> {
    let (_, thread) = live(&conn, &p.thread_id)?;
    if p.command.trim().is_empty() {
        return Err(invalid(
            "command must not be empty: send the command line to run",
        ));
    }
    let config = thread.settings();
    let argv = vec!["bash".to_string(), "-c".to_string(), p.command.clone()];
    let req = CommandRequest {
        argv: argv.clone(),
        cwd: config.cwd.clone(),
        timeout: Some(
            p.timeout_ms
                .map_or(SHELL_COMMAND_TIMEOUT, Duration::from_millis),
        ),
        sandbox_policy: config.sandbox_policy.clone(),
        env: Default::default(),
        output_cap: Some(DEFAULT_OUTPUT_CAP),
    };
    let sent = ctx.response_sent();
    let shutdown = conn.shutdown.clone();
    tokio::spawn(async move {
        sent.cancelled().await;
        run_shell_command(&conn, &thread, &config, argv, req, &shutdown).await;
    });
    Ok(EmptyResponse {})
}

/// Runs the user's command and reports it as a turn with one `commandExecution` item.
async fn run_shell_command(
    conn: &Conn,
    thread: &Thread,
    config: &oi_config::Config,
    argv: Vec<String>,
    req: CommandRequest,
    shutdown: &tokio_util::sync::CancellationToken,
) {
    let thread_id = thread.id().to_string();
    let turn_id = oi_protocol::ids::new_id();
    let started_at = now_unix();
    let started = Instant::now();
    let mut item = ThreadItem::CommandExecution {
        id: oi_protocol::ids::new_id(),
        command: display_command(&argv),
        cwd: config.cwd.clone(),
        process_id: None,
        source: CommandExecutionSource::UserShell,
        status: CommandExecutionStatus::InProgress,
        command_actions: command_actions(&parse_command(&argv)),
        aggregated_output: None,
        exit_code: None,
        duration_ms: None,
    };
    let out = &conn.outgoing;
    let turn = Turn::in_progress(turn_id.clone(), started_at);
    out.send(Note::of::<m::TurnStarted>(&TurnStartedNotification {
        thread_id: thread_id.clone(),
        turn: turn.clone(),
    }))
    .await;
    out.send(Note::of::<m::ItemStarted>(&ItemStartedNotification {
        thread_id: thread_id.clone(),
        turn_id: turn_id.clone(),
        item: item.clone(),
        started_at_ms: now_ms(),
    }))
    .await;
    let result = run_command(config, req, shutdown).await;
    let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if let ThreadItem::CommandExecution {
        status,
        aggregated_output,
        exit_code,
        duration_ms,
        ..
    } = &mut item
    {
        *duration_ms = Some(elapsed);
        match result {
            Ok(o) => {
                *status = if o.exit_code == 0 {
                    CommandExecutionStatus::Completed
                } else {
                    CommandExecutionStatus::Failed
                };
                *exit_code = Some(o.exit_code);
                let output = format!("{}{}", o.stdout, o.stderr);
                thread.add_context_for_next_turn(oi_core::user_shell_context(
                    argv.last().map_or("", String::as_str),
                    o.exit_code,
                    &output,
                ));
                *aggregated_output = Some(output);
            }
            Err(e) => {
                *status = CommandExecutionStatus::Failed;
                *aggregated_output = Some(e.to_string());
            }
        }
    }
    out.send(Note::of::<m::ItemCompleted>(&ItemCompletedNotification {
        thread_id: thread_id.clone(),
        turn_id: turn_id.clone(),
        item,
        completed_at_ms: now_ms(),
    }))
    .await;
    out.send(Note::of::<m::TurnCompleted>(&TurnCompletedNotification {
        thread_id,
        turn: Turn {
            status: TurnStatus::Completed,
            items_view: Some(TurnItemsView::NotLoaded),
            completed_at: Some(now_unix()),
            duration_ms: Some(elapsed),
            ..turn
        },
    }))
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_prompts_name_their_target_and_refuse_empty_ones() {
        let (_, p) = review_prompt(&ReviewTarget::BaseBranch {
            branch: "main".into(),
        })
        .unwrap();
        assert!(p.contains("git diff main...HEAD"), "{p}");
        let (_, p) = review_prompt(&ReviewTarget::UncommittedChanges).unwrap();
        assert!(p.contains("untracked"), "{p}");
        let err = review_prompt(&ReviewTarget::Commit {
            sha: " ".into(),
            title: None,
        })
        .unwrap_err();
        assert!(err.message.contains("target.sha"), "{}", err.message);
    }

    #[test]
    fn permission_profiles_map_to_sandbox_modes() {
        assert_eq!(
            profile_policy(":read-only").unwrap(),
            SandboxPolicy::ReadOnly
        );
        assert_eq!(
            profile_policy(":danger-full-access").unwrap(),
            SandboxPolicy::DangerFullAccess
        );
        let err = profile_policy("auto").unwrap_err();
        assert!(err.message.contains(":workspace"), "{}", err.message);
    }
}
