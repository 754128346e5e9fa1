//! The `apply_patch` tool: parse, plan without touching disk, approve, apply atomically.

use super::{ToolCall, ToolOutcome, parse_args};
use crate::approval::{Asked, PatchDecision, ask_patch_approval, assess_patch};
use crate::session::Session;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, EventMsg, PatchApplyBeginEvent, PatchApplyEndEvent,
    PatchApplyStatus, ReviewDecision,
};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize)]
struct PatchArgs {
    #[serde(alias = "patch")]
    input: String,
}

pub(crate) async fn handle_tool(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    cancel: &CancellationToken,
) -> ToolOutcome {
    // Some models send the raw patch instead of a JSON object.
    let input = if call.arguments.trim_start().starts_with("*** Begin Patch") {
        call.arguments.to_string()
    } else {
        match parse_args::<PatchArgs>(
            call.name,
            call.arguments,
            r#"{"input": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch"}"#,
        ) {
            Ok(a) => a.input,
            Err(e) => return e,
        }
    };
    let cwd = sess.turn_context().config.cwd.clone();
    handle_patch(sess, call.turn_id, call.call_id, &input, &cwd, cancel).await
}

pub(crate) async fn handle_patch(
    sess: &Arc<Session>,
    turn_id: &str,
    call_id: &str,
    input: &str,
    cwd: &Path,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let patch = match oi_apply_patch::parse_patch(input) {
        Ok(p) => p,
        Err(e) => {
            return ToolOutcome::err(format!(
                "apply_patch: invalid patch: {e}. No file was changed."
            ));
        }
    };
    apply_planned(sess, turn_id, call_id, patch, cwd, "apply_patch", cancel).await
}

/// Plans `patch`, asks for approval as the policy says, applies it and reports it with
/// `patch_apply_*` events: the one path of every file change, whether it came as a patch
/// or as a harness profile's write or string replacement (`tool` names it in errors).
pub(crate) async fn apply_planned(
    sess: &Arc<Session>,
    turn_id: &str,
    call_id: &str,
    patch: oi_apply_patch::Patch,
    cwd: &Path,
    tool: &str,
    cancel: &CancellationToken,
) -> ToolOutcome {
    // An editor's buffers, where the front end's client offers them: the change is planned
    // against what the user sees, saved or not.
    let paths: Vec<_> = patch
        .hunks
        .iter()
        .map(|h| oi_apply_patch::resolve(cwd, h.path()))
        .collect();
    let client_texts = crate::client_tools::read_for_planning(sess, &paths).await;
    // Planning reads every file the patch touches and diffs it: disk and CPU work that
    // belongs on the blocking pool, not on a runtime worker.
    let planned = {
        let cwd = cwd.to_path_buf();
        off_runtime(move || {
            let read = |path: &Path, _shown: &str| match client_texts.get(path) {
                Some(text) => Ok(text.clone()),
                None => oi_apply_patch::read_target(path),
            };
            oi_apply_patch::plan_patch_with(&patch, &cwd, read).map(|plan| {
                let changes = plan.file_changes();
                (plan, changes)
            })
        })
        .await
    };
    let (plan, changes) = match planned {
        Ok(Ok(planned)) => planned,
        Ok(Err(e)) => return ToolOutcome::err(format!("{tool}: {e}. No file was changed.")),
        Err(e) => return ToolOutcome::err(format!("{tool}: {e}. No file was changed.")),
    };
    let client = crate::client_tools::of(sess);
    if let Some(client) = &client {
        client.change_planned(call_id, &crate::client_tools::planned_files(&plan));
    }
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let scope = crate::sandbox::SandboxScope::of(config);
    let all_writable = plan
        .affected_paths()
        .iter()
        .all(|p| crate::sandbox::is_path_writable(&scope, p));
    let auto_approved = match assess_patch(config.approval_policy, all_writable) {
        PatchDecision::AutoApprove => true,
        PatchDecision::Reject(msg) => {
            return ToolOutcome::err(format!("{tool}: {msg}. No file was changed."));
        }
        PatchDecision::Ask => {
            let reason = (!all_writable).then(|| {
                "This change writes outside the writable roots of the sandbox.".to_string()
            });
            let asked = ask_patch_approval(
                sess,
                ApplyPatchApprovalRequestEvent {
                    call_id: call_id.to_string(),
                    turn_id: turn_id.to_string(),
                    changes: changes.clone(),
                    reason,
                    grant_root: None,
                },
                cancel,
            )
            .await;
            let d = match asked {
                Asked::Decided(d) => d,
                Asked::Parked(request) => return ToolOutcome::parked(request, None),
            };
            match d {
                ReviewDecision::Approved | ReviewDecision::ApprovedForSession => false,
                other => {
                    sess.send(
                        turn_id,
                        EventMsg::PatchApplyEnd(PatchApplyEndEvent {
                            call_id: call_id.to_string(),
                            turn_id: turn_id.to_string(),
                            stdout: String::new(),
                            stderr: String::new(),
                            success: false,
                            changes: changes.clone(),
                            status: PatchApplyStatus::Declined,
                        }),
                    );
                    let why = super::refusal_reason(other);
                    let mut o = ToolOutcome::err(format!(
                        "{}{why}. No file was changed.",
                        super::CHANGE_NOT_APPLIED
                    ));
                    o.abort_turn = other == ReviewDecision::Abort;
                    return o;
                }
            }
        }
    };
    sess.send(
        turn_id,
        EventMsg::PatchApplyBegin(PatchApplyBeginEvent {
            call_id: call_id.to_string(),
            turn_id: turn_id.to_string(),
            auto_approved,
            changes: changes.clone(),
        }),
    );
    let writer = client.filter(|c| c.writes_files());
    let (ok, stdout, stderr) = match writer {
        // Through the editor, so the change lands in its buffers.
        Some(client) => match crate::client_tools::apply_through(client.as_ref(), &plan).await {
            Ok(summary) => (true, summary, String::new()),
            Err(e) => (false, String::new(), e.to_string()),
        },
        None => match off_runtime(move || plan.apply()).await {
            Ok(Ok(summary)) => (true, summary, String::new()),
            Ok(Err(e)) => (false, String::new(), format!("{e}")),
            Err(e) => (false, String::new(), e),
        },
    };
    sess.send(
        turn_id,
        EventMsg::PatchApplyEnd(PatchApplyEndEvent {
            call_id: call_id.to_string(),
            turn_id: turn_id.to_string(),
            stdout: stdout.clone(),
            stderr: stderr.clone(),
            success: ok,
            changes,
            status: if ok {
                PatchApplyStatus::Completed
            } else {
                PatchApplyStatus::Failed
            },
        }),
    );
    if ok {
        ToolOutcome::ok(stdout)
    } else {
        ToolOutcome::err(format!("{tool} failed: {stderr}. No file was changed."))
    }
}

/// Runs the patch's disk work on the blocking pool. A panic there comes back as an error
/// (the patch is then reported as not applied) instead of taking the turn down.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("the patch task failed ({e})"))
}
