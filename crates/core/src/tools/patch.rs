//! The `apply_patch` tool: parse, plan without touching disk, approve, apply atomically.

use super::call::{ToolCall, ToolOutcome, parse_args};
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
    let (plan, changes) = match plan(sess, patch, cwd, tool).await {
        Ok(planned) => planned,
        Err(failed) => return failed,
    };
    let client = crate::tools::through_client::of(sess);
    if let Some(client) = &client {
        client.change_planned(call_id, &crate::tools::through_client::planned_files(&plan));
    }
    let call = PatchCall {
        sess,
        turn_id,
        call_id,
        tool,
    };
    let auto_approved = match approve(&call, &plan, &changes, cancel).await {
        Ok(auto_approved) => auto_approved,
        Err(refused) => return refused,
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
        Some(client) => {
            match crate::tools::through_client::apply_through(client.as_ref(), &plan).await {
                Ok(summary) => (true, summary, String::new()),
                Err(e) => (false, String::new(), e.to_string()),
            }
        }
        None => match off_runtime(move || plan.apply()).await {
            Ok(Ok(summary)) => (true, summary, String::new()),
            Ok(Err(e)) => (false, String::new(), format!("{e}")),
            Err(e) => (false, String::new(), e.to_string()),
        },
    };
    let status = if ok {
        PatchApplyStatus::Completed
    } else {
        PatchApplyStatus::Failed
    };
    call.send_end(stdout.clone(), stderr.clone(), ok, changes, status);
    if ok {
        ToolOutcome::ok(stdout)
    } else {
        ToolOutcome::err(format!("{tool} failed: {stderr}. No file was changed."))
    }
}

/// The change a patch makes, file by file, as the approval and the events show it.
type FileChanges =
    std::collections::BTreeMap<std::path::PathBuf, oi_protocol::protocol::FileChange>;

/// Plans `patch` against what the user sees: an editor's buffers, saved or not, where the
/// front end's client offers them, else the files on disk. `Err`: the call's output, why
/// it cannot apply.
async fn plan(
    sess: &Arc<Session>,
    patch: oi_apply_patch::Patch,
    cwd: &Path,
    tool: &str,
) -> Result<(oi_apply_patch::PatchPlan, FileChanges), ToolOutcome> {
    let paths: Vec<_> = patch
        .hunks
        .iter()
        .map(|h| oi_apply_patch::resolve(cwd, h.path()))
        .collect();
    let client_texts = crate::tools::through_client::read_for_planning(sess, &paths).await;
    // Planning reads every file the patch touches and diffs it: disk and CPU work that
    // belongs on the blocking pool, not on a runtime worker.
    let cwd = cwd.to_path_buf();
    let planned = off_runtime(move || {
        let read = |path: &Path, _shown: &str| match client_texts.get(path) {
            Some(text) => Ok(text.clone()),
            None => oi_apply_patch::read_target(path),
        };
        oi_apply_patch::plan_patch_with(&patch, &cwd, read).map(|plan| {
            let changes = plan.file_changes();
            (plan, changes)
        })
    })
    .await;
    let failed =
        |e: &dyn std::fmt::Display| ToolOutcome::err(format!("{tool}: {e}. No file was changed."));
    match planned {
        Ok(Ok(planned)) => Ok(planned),
        Ok(Err(e)) => Err(failed(&e)),
        Err(e) => Err(failed(&e)),
    }
}

/// The call a planned change answers.
struct PatchCall<'a> {
    sess: &'a Arc<Session>,
    turn_id: &'a str,
    call_id: &'a str,
    /// The tool's name, for errors.
    tool: &'a str,
}

impl PatchCall<'_> {
    fn send_end(
        &self,
        stdout: String,
        stderr: String,
        success: bool,
        changes: FileChanges,
        status: PatchApplyStatus,
    ) {
        self.sess.send(
            self.turn_id,
            EventMsg::PatchApplyEnd(PatchApplyEndEvent {
                call_id: self.call_id.to_string(),
                turn_id: self.turn_id.to_string(),
                stdout,
                stderr,
                success,
                changes,
                status,
            }),
        );
    }
}

/// Asks for approval as the policy says. `Ok(auto_approved)` to go on; `Err`: the call's
/// output (refused, declined, or parked until someone answers).
async fn approve(
    call: &PatchCall<'_>,
    plan: &oi_apply_patch::PatchPlan,
    changes: &FileChanges,
    cancel: &CancellationToken,
) -> Result<bool, ToolOutcome> {
    let (sess, tool) = (call.sess, call.tool);
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let scope = crate::sandbox::SandboxScope::of(config);
    let all_writable = plan
        .affected_paths()
        .iter()
        .all(|p| crate::sandbox::is_path_writable(&scope, p));
    match assess_patch(config.approval_policy, all_writable) {
        PatchDecision::AutoApprove => return Ok(true),
        PatchDecision::Reject(msg) => {
            return Err(ToolOutcome::err(format!(
                "{tool}: {msg}. No file was changed."
            )));
        }
        PatchDecision::Ask => {}
    }
    let reason = (!all_writable)
        .then(|| "This change writes outside the writable roots of the sandbox.".to_string());
    let asked = ask_patch_approval(
        sess,
        ApplyPatchApprovalRequestEvent {
            call_id: call.call_id.to_string(),
            turn_id: call.turn_id.to_string(),
            changes: changes.clone(),
            reason,
            grant_root: None,
        },
        cancel,
    )
    .await;
    let decision = match asked {
        Asked::Decided(d) => d,
        Asked::Parked(request) => return Err(ToolOutcome::parked(request, None)),
    };
    match decision {
        ReviewDecision::Approved | ReviewDecision::ApprovedForSession => Ok(false),
        other => {
            call.send_end(
                String::new(),
                String::new(),
                false,
                changes.clone(),
                PatchApplyStatus::Declined,
            );
            let why = super::call::refusal_reason(other);
            let mut o = ToolOutcome::err(format!(
                "{}{why}. No file was changed.",
                super::call::CHANGE_NOT_APPLIED
            ));
            o.abort_turn = other == ReviewDecision::Abort;
            Err(o)
        }
    }
}

/// Runs the patch's disk work on the blocking pool. A panic there comes back as an error
/// (the patch is then reported as not applied) instead of taking the turn down.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, PatchTaskFailed> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(PatchTaskFailed)
}

/// The blocking task that planned or applied a patch panicked or was cancelled.
#[derive(Debug, thiserror::Error)]
#[error("the patch task failed ({0})")]
struct PatchTaskFailed(tokio::task::JoinError);
