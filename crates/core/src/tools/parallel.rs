//! Running the function calls of one model response. Calls that follow each other run
//! concurrently when they cannot affect each other: calls to MCP tools (and the MCP resource
//! tools), which are independent requests to servers, and shell commands that need no
//! approval and cannot write (`shell::runs_alongside`), each with its own timeout and
//! cancellation. Everything else (a command that writes or asks, apply_patch) runs alone, in
//! order, as a barrier between such groups. Outputs are recorded in call order whatever order
//! the calls finish in.

use super::call::{ParkedAsk, PendingCall, ToolCall, ToolOutcome};
use super::dispatch;
use crate::session::Session;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use oi_protocol::models::ResponseItem;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long the next request may wait for `tools/list_changed` refreshes that the calls
/// caused (a slow server must not hold up the turn).
const LIST_REFRESH_WAIT: Duration = Duration::from_millis(300);

/// How running a response's calls ended.
pub(crate) struct CallsRun {
    /// The user chose to abort the turn.
    pub abort: bool,
    /// Calls wait for approvals the turn parks: the turn stops here.
    pub parked: Option<ParkedCalls>,
}

/// The calls a parking turn leaves without output: those that wait for an approval (with
/// what they wait for), and the ones after them, which did not run (a call may depend on
/// the one before it). In call order.
pub(crate) struct ParkedCalls {
    pub waiting: Vec<(PendingCall, ParkedAsk)>,
    /// Every call without output, the waiting ones included, in order.
    pub unanswered: Vec<PendingCall>,
}

/// Run `calls` and record every output in history (also when the turn stops, so history
/// stays valid), unless calls park: then the calls of the group that parked get no output
/// (those that ran do), the groups after it do not run, and all of those are returned for
/// the turn to record as parked.
pub(crate) async fn run_calls(
    sess: &Arc<Session>,
    turn_id: &str,
    calls: Vec<PendingCall>,
    cancel: &CancellationToken,
) -> CallsRun {
    let mut abort = false;
    let mut ran_mcp = false;
    let mut rest = calls.as_slice();
    while let Some(first) = rest.first() {
        let group_len = if runs_concurrently(sess, first) {
            rest.iter()
                .take_while(|c| runs_concurrently(sess, c))
                .count()
        } else {
            1
        };
        let (group, tail) = rest.split_at(group_len);
        rest = tail;
        let outcomes = if abort || cancel.is_cancelled() {
            group
                .iter()
                .map(|_| ToolOutcome::err("not run: the turn was interrupted"))
                .collect()
        } else if group_len == 1 && !runs_concurrently(sess, &group[0]) {
            vec![run_one(sess, turn_id, &group[0], cancel).await]
        } else {
            ran_mcp |= group
                .iter()
                .any(|(_, name, _)| !super::call::is_shell_tool(name));
            run_group(sess, turn_id, group, cancel).await
        };
        let mut waiting = Vec::new();
        let mut outputs = Vec::new();
        for (call, outcome) in group.iter().zip(outcomes) {
            abort |= outcome.abort_turn;
            match outcome.parked {
                Some(ask) => waiting.push((call.clone(), *ask)),
                None => outputs.push(ResponseItem::FunctionCallOutput {
                    call_id: call.0.clone(),
                    output: outcome.output,
                }),
            }
        }
        // A stop (an abort, an interrupt) wins over a park: the turn ends, and the calls
        // that would wait get the interrupted output like every call after them.
        let stopping = abort || cancel.is_cancelled();
        if stopping {
            for (call, _) in waiting.drain(..) {
                outputs.push(ResponseItem::FunctionCallOutput {
                    call_id: call.0,
                    output: ToolOutcome::err("not run: the turn was interrupted").output,
                });
            }
        }
        // Each output is written before the next: a call that ran is in the rollout with
        // its output even if the process is killed right after.
        for output in outputs {
            sess.push_history(turn_id, vec![output]).await;
        }
        if !waiting.is_empty() {
            let mut unanswered: Vec<PendingCall> = waiting.iter().map(|(c, _)| c.clone()).collect();
            unanswered.extend(rest.iter().cloned());
            return CallsRun {
                abort: false,
                parked: Some(ParkedCalls {
                    waiting,
                    unanswered,
                }),
            };
        }
    }
    if ran_mcp
        && !abort
        && !cancel.is_cancelled()
        && let Some(mcp) = &sess.mcp
    {
        mcp.settle_tool_list_refresh(LIST_REFRESH_WAIT).await;
    }
    CallsRun {
        abort,
        parked: None,
    }
}

/// MCP tool calls, the MCP resource tools and commands that cannot write may overlap;
/// everything else runs alone.
fn runs_concurrently(sess: &Session, (_, name, arguments): &PendingCall) -> bool {
    if crate::harness::is_profile_tool(name) {
        // A profile's read, search or shell call is a command: the same rule as `shell`.
        return match crate::harness::interpret(name, arguments) {
            Some(Ok(crate::harness::Action::Command(req))) => {
                req.escalation.is_none()
                    && req.workdir.is_none()
                    && super::shell::argv_runs_alongside(&sess.turn_context().config, &req.argv)
            }
            _ => false,
        };
    }
    if super::call::is_shell_tool(name) {
        return super::shell::runs_alongside(&sess.turn_context().config, arguments);
    }
    let Some(mcp) = &sess.mcp else {
        return false;
    };
    super::mcp_resource::is_resource_tool(name) || mcp.lookup(name).is_some()
}

async fn run_one(
    sess: &Arc<Session>,
    turn_id: &str,
    (call_id, name, arguments): &PendingCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let call = ToolCall {
        turn_id,
        call_id,
        name,
        arguments,
    };
    // `PreToolUse` hooks may block the call; `PostToolUse` hooks see its output.
    if let Some(blocked) = crate::hooks::before_tool(sess, &call, cancel).await {
        return blocked;
    }
    let mut outcome = dispatch(sess, call, cancel).await;
    crate::hooks::after_tool(sess, &call, &mut outcome, cancel).await;
    outcome
}

/// Run a group at once; outcomes in the group's order. An "abort" answer to one call's
/// approval interrupts the others.
async fn run_group(
    sess: &Arc<Session>,
    turn_id: &str,
    group: &[PendingCall],
    cancel: &CancellationToken,
) -> Vec<ToolOutcome> {
    let group_cancel = cancel.child_token();
    let group_cancel_ref = &group_cancel;
    let mut running: FuturesUnordered<_> = group
        .iter()
        .enumerate()
        .map(|(i, call)| async move { (i, run_one(sess, turn_id, call, group_cancel_ref).await) })
        .collect();
    let mut outcomes: Vec<Option<ToolOutcome>> = group.iter().map(|_| None).collect();
    while let Some((i, outcome)) = running.next().await {
        if outcome.abort_turn {
            group_cancel.cancel();
        }
        outcomes[i] = Some(outcome);
    }
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| ToolOutcome::err("not run: the turn was interrupted")))
        .collect()
}
