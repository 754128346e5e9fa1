//! Approval policy: when a command or patch may run on its own, when the user must be
//! asked, and the waiting itself (which always ends: decision, timeout or interrupt).

use crate::safety::is_known_safe_command;
use crate::session::Session;
use oi_protocol::config_types::{AskForApproval, SandboxPolicy};
use oi_protocol::parse_command::parse_command;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, EventMsg, ExecApprovalRequestEvent, FileChange, ReviewDecision,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// What to do with a command before running it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CommandDecision {
    /// Run it; `sandboxed: false` only for danger-full-access or an approved escalation.
    Run { sandboxed: bool },
    /// Ask the user first; if approved, run with this sandboxing.
    Ask {
        reason: Option<String>,
        sandboxed: bool,
    },
    /// Do not run; tell the model why.
    Reject(String),
}

pub(crate) fn assess_command(
    policy: AskForApproval,
    sandbox: &SandboxPolicy,
    argv: &[String],
    escalation: Option<&str>,
    approved_for_session: impl Fn(bool) -> bool,
) -> CommandDecision {
    let full_access = matches!(sandbox, SandboxPolicy::DangerFullAccess);
    if let Some(justification) = escalation
        && !full_access
    {
        if approved_for_session(false) {
            return CommandDecision::Run { sandboxed: false };
        }
        return match policy {
            AskForApproval::Never => CommandDecision::Reject(
                "escalated permissions were requested, but the approval policy is `never`: nobody can approve running outside the sandbox. Find a way to do this inside the sandbox.".into(),
            ),
            _ => CommandDecision::Ask {
                reason: Some(justification.to_string()),
                sandboxed: false,
            },
        };
    }
    match policy {
        AskForApproval::Untrusted => {
            if is_known_safe_command(argv)
                || approved_for_session(true)
                || approved_for_session(false)
            {
                CommandDecision::Run {
                    sandboxed: !full_access && !approved_for_session(false),
                }
            } else {
                CommandDecision::Ask {
                    reason: None,
                    sandboxed: !full_access,
                }
            }
        }
        AskForApproval::OnFailure | AskForApproval::OnRequest | AskForApproval::Never => {
            if !full_access && approved_for_session(false) {
                CommandDecision::Run { sandboxed: false }
            } else {
                CommandDecision::Run {
                    sandboxed: !full_access,
                }
            }
        }
    }
}

/// Output that suggests the sandbox (not the command's own logic) made it fail.
pub(crate) fn looks_like_sandbox_denial(exit_code: i32, output: &str) -> bool {
    if exit_code == 0 {
        return false;
    }
    const MARKERS: &[&str] = &[
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
        "EACCES",
        "EPERM",
        "Network is unreachable",
        "Could not resolve host",
        "Temporary failure in name resolution",
    ];
    MARKERS.iter().any(|m| output.contains(m))
}

/// What to do with a patch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PatchDecision {
    AutoApprove,
    Ask,
    Reject(String),
}

pub(crate) fn assess_patch(policy: AskForApproval, all_writable: bool) -> PatchDecision {
    match policy {
        AskForApproval::Untrusted => PatchDecision::Ask,
        _ if all_writable => PatchDecision::AutoApprove,
        AskForApproval::Never => PatchDecision::Reject(
            "this patch writes outside the sandbox's writable roots and the approval policy is `never`; only change files inside the workspace".into(),
        ),
        AskForApproval::OnFailure | AskForApproval::OnRequest => PatchDecision::Ask,
    }
}

async fn wait_for_decision(
    sess: &Session,
    key: String,
    rx: oneshot::Receiver<ReviewDecision>,
    cancel: &CancellationToken,
) -> ReviewDecision {
    let timeout = sess.turn_context().config.approval_timeout;
    let decision = tokio::select! {
        d = rx => d.unwrap_or(ReviewDecision::Denied),
        _ = tokio::time::sleep(timeout) => ReviewDecision::TimedOut,
        _ = cancel.cancelled() => ReviewDecision::Abort,
    };
    sess.state().pending_approvals.remove(&key);
    decision
}

pub(crate) struct ExecApprovalAsk<'a> {
    pub turn_id: &'a str,
    pub call_id: &'a str,
    pub approval_id: Option<String>,
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub reason: Option<String>,
}

/// Emit `exec_approval_request` and wait for the answer. Never waits forever.
pub(crate) async fn request_exec_approval(
    sess: &Session,
    ask: ExecApprovalAsk<'_>,
    cancel: &CancellationToken,
) -> ReviewDecision {
    let key = ask
        .approval_id
        .clone()
        .unwrap_or_else(|| ask.call_id.to_string());
    let (tx, rx) = oneshot::channel();
    sess.state().pending_approvals.insert(key.clone(), tx);
    sess.send(
        ask.turn_id,
        EventMsg::ExecApprovalRequest(ExecApprovalRequestEvent {
            call_id: ask.call_id.to_string(),
            approval_id: ask.approval_id,
            turn_id: ask.turn_id.to_string(),
            command: ask.argv.to_vec(),
            cwd: ask.cwd.to_path_buf(),
            reason: ask.reason,
            parsed_cmd: parse_command(ask.argv),
        }),
    );
    wait_for_decision(sess, key, rx, cancel).await
}

/// Emit `apply_patch_approval_request` and wait for the answer.
pub(crate) async fn request_patch_approval(
    sess: &Session,
    turn_id: &str,
    call_id: &str,
    changes: BTreeMap<PathBuf, FileChange>,
    reason: Option<String>,
    grant_root: Option<PathBuf>,
    cancel: &CancellationToken,
) -> ReviewDecision {
    let (tx, rx) = oneshot::channel();
    sess.state()
        .pending_approvals
        .insert(call_id.to_string(), tx);
    sess.send(
        turn_id,
        EventMsg::ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent {
            call_id: call_id.to_string(),
            turn_id: turn_id.to_string(),
            changes,
            reason,
            grant_root,
        }),
    );
    wait_for_decision(sess, call_id.to_string(), rx, cancel).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn untrusted_asks_for_unknown_commands_only() {
        let ww = SandboxPolicy::workspace_write();
        assert_eq!(
            assess_command(AskForApproval::Untrusted, &ww, &v(&["ls"]), None, |_| false),
            CommandDecision::Run { sandboxed: true }
        );
        assert_eq!(
            assess_command(
                AskForApproval::Untrusted,
                &ww,
                &v(&["touch", "x"]),
                None,
                |_| false
            ),
            CommandDecision::Ask {
                reason: None,
                sandboxed: true
            }
        );
        assert_eq!(
            assess_command(
                AskForApproval::Untrusted,
                &ww,
                &v(&["touch", "x"]),
                None,
                |_| true
            ),
            CommandDecision::Run { sandboxed: false }
        );
    }

    #[test]
    fn escalation_needs_approval_and_never_rejects_it() {
        let ww = SandboxPolicy::workspace_write();
        assert_eq!(
            assess_command(
                AskForApproval::OnRequest,
                &ww,
                &v(&["curl", "x"]),
                Some("need net"),
                |_| false
            ),
            CommandDecision::Ask {
                reason: Some("need net".into()),
                sandboxed: false
            }
        );
        assert!(matches!(
            assess_command(
                AskForApproval::Never,
                &ww,
                &v(&["curl", "x"]),
                Some("j"),
                |_| false
            ),
            CommandDecision::Reject(_)
        ));
        assert_eq!(
            assess_command(
                AskForApproval::OnRequest,
                &ww,
                &v(&["curl", "x"]),
                None,
                |_| false
            ),
            CommandDecision::Run { sandboxed: true }
        );
        assert_eq!(
            assess_command(
                AskForApproval::Never,
                &SandboxPolicy::DangerFullAccess,
                &v(&["rm", "x"]),
                Some("j"),
                |_| false
            ),
            CommandDecision::Run { sandboxed: false }
        );
    }

    #[test]
    fn patch_rules() {
        assert_eq!(
            assess_patch(AskForApproval::Untrusted, true),
            PatchDecision::Ask
        );
        assert_eq!(
            assess_patch(AskForApproval::OnRequest, true),
            PatchDecision::AutoApprove
        );
        assert_eq!(
            assess_patch(AskForApproval::OnRequest, false),
            PatchDecision::Ask
        );
        assert!(matches!(
            assess_patch(AskForApproval::Never, false),
            PatchDecision::Reject(_)
        ));
    }

    #[test]
    fn sandbox_denial_heuristic() {
        assert!(looks_like_sandbox_denial(
            1,
            "touch: cannot touch 'x': Permission denied"
        ));
        assert!(!looks_like_sandbox_denial(1, "test failed"));
        assert!(!looks_like_sandbox_denial(0, "Permission denied"));
    }
}
