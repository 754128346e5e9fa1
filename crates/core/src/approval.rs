//! Approval policy: when a command or patch may run on its own, when the user must be
//! asked, and the waiting itself (which always ends: decision, timeout or interrupt), or,
//! for a turn that parks approvals, not waiting (see `parking`).

use crate::safety::is_known_safe_command;
use crate::session::Session;
use oi_protocol::config_types::{AskForApproval, SandboxPolicy};
use oi_protocol::parse_command::parse_command;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, EventMsg, ExecApprovalRequestEvent, ParkedRequest,
    ReviewDecision,
};
use std::path::Path;
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

impl ExecApprovalAsk<'_> {
    fn event(&self) -> ExecApprovalRequestEvent {
        ExecApprovalRequestEvent {
            call_id: self.call_id.to_string(),
            approval_id: self.approval_id.clone(),
            turn_id: self.turn_id.to_string(),
            command: self.argv.to_vec(),
            cwd: self.cwd.to_path_buf(),
            reason: self.reason.clone(),
            parsed_cmd: parse_command(self.argv),
        }
    }
}

/// The answer to an approval a model's call asked for: decided (by the user now, by an
/// answer given to the parked turn, or by the rules that end every wait), or parked.
#[derive(Debug)]
pub(crate) enum Asked {
    Decided(ReviewDecision),
    /// The turn parks approvals: it is not waited for; the turn stops and records it.
    Parked(ParkedRequest),
}

/// Emit `exec_approval_request` and wait for the answer. Never waits forever. For what the
/// model's calls ask, use [`ask_exec_approval`], which may park instead.
pub(crate) async fn request_exec_approval(
    sess: &Session,
    ask: ExecApprovalAsk<'_>,
    cancel: &CancellationToken,
) -> ReviewDecision {
    let request = ask.event();
    let key = request.effective_approval_id().to_string();
    let (tx, rx) = oneshot::channel();
    sess.state().pending_approvals.insert(key.clone(), tx);
    sess.send(ask.turn_id, EventMsg::ExecApprovalRequest(request));
    wait_for_decision(sess, key, rx, cancel).await
}

/// The approval of a command (or an MCP tool call) the model asked for: the answer a
/// resumed turn was given for exactly this request, else parked when the turn parks
/// approvals, else asked and waited for ([`request_exec_approval`]).
pub(crate) async fn ask_exec_approval(
    sess: &Session,
    ask: ExecApprovalAsk<'_>,
    cancel: &CancellationToken,
) -> Asked {
    let request = ParkedRequest::Exec(ask.event());
    if let Some(asked) = answered_or_parked(sess, request) {
        return asked;
    }
    Asked::Decided(request_exec_approval(sess, ask, cancel).await)
}

/// Emit `apply_patch_approval_request` and wait for the answer, or use the answer a resumed
/// turn was given, or park (as [`ask_exec_approval`]).
pub(crate) async fn ask_patch_approval(
    sess: &Session,
    event: ApplyPatchApprovalRequestEvent,
    cancel: &CancellationToken,
) -> Asked {
    let request = ParkedRequest::Patch(event.clone());
    if let Some(asked) = answered_or_parked(sess, request) {
        return asked;
    }
    let (tx, rx) = oneshot::channel();
    let key = event.call_id.clone();
    let turn_id = event.turn_id.clone();
    sess.state().pending_approvals.insert(key.clone(), tx);
    sess.send(&turn_id, EventMsg::ApplyPatchApprovalRequest(event));
    Asked::Decided(wait_for_decision(sess, key, rx, cancel).await)
}

/// The answer given to a parked turn for this very request, if any; else `Parked` when the
/// running turn parks approvals; else `None` (ask now). An answer whose request no longer
/// matches (the file changed, so the diff did) is dropped with a warning: it was not given
/// for what would run, so the call asks again.
fn answered_or_parked(sess: &Session, request: ParkedRequest) -> Option<Asked> {
    let (given, parks) = {
        let mut st = sess.state();
        let given = st.preanswers.remove(request.id());
        let parks = st.active_turn.as_ref().is_some_and(|t| t.park_approvals);
        (given, parks)
    };
    if let Some(given) = given {
        if given.request.asks_the_same_as(&request) {
            return Some(Asked::Decided(given.decision));
        }
        sess.warn(
            request.turn_id(),
            format!(
                "the approval given for `{}` is not used: what it would do changed since it was asked (e.g. a file it edits changed), so it asks again",
                request.id()
            ),
        );
    }
    parks.then_some(Asked::Parked(request))
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
