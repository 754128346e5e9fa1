//! `session/prompt`: one turn of the session's thread, its events streamed as updates, its
//! approvals asked as permission requests, ended by the turn's own end: `end_turn`,
//! `cancelled` (a `session/cancel`, or the client going away), or an error for a turn that
//! failed. The thread keeps what happened in every case.

use super::{Agent, lock, to_value};
use crate::prompt::{PromptTurn, turn_of};
use crate::schema::{PromptRequest, PromptResponse, StopReason, ToolCallUpdateFields};
use oi_core::{CoreError, PendingRequest, StartTurn, Stop, TurnEnd, TurnFrontEnd, TurnHandle};
use oi_jsonrpc::{RequestContext, RpcError};
use oi_protocol::protocol::{Event, EventMsg};
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// After an interrupt, how long the engine gets to end the turn.
const INTERRUPT_GRACE: Duration = Duration::from_secs(30);

impl Agent {
    pub(super) async fn prompt(
        &self,
        ctx: RequestContext,
        p: PromptRequest,
    ) -> Result<Value, RpcError> {
        let session = self.session(&p.session_id.0)?;
        let settings = lock(&session.settings).clone();
        let turn = turn_of(&p.prompt, &settings.model)
            .map_err(|e| RpcError::invalid_params("session/prompt", e))?;
        let cancel = CancellationToken::new();
        {
            let mut running = lock(&session.prompt);
            if running.is_some() {
                return Err(RpcError::invalid_request(format!(
                    "a prompt is already running in session `{}`; wait for it to end, or send session/cancel",
                    p.session_id.0
                )));
            }
            *running = Some(cancel.clone());
        }
        let _running = Running(&session.prompt);
        let start = match turn {
            PromptTurn::Input(items) => StartTurn::Input {
                items,
                overrides: settings.overrides(),
            },
            PromptTurn::Compact => StartTurn::Compact,
        };
        let mut handle = session.thread.start_turn(start).await.map_err(|e| match e {
            CoreError::TurnRunning { .. } => RpcError::invalid_request(format!(
                "session `{}` is busy with another turn (started elsewhere); wait for it to end",
                p.session_id.0
            )),
            CoreError::EmptyInput => RpcError::invalid_params("session/prompt", e),
            other => RpcError::internal(other),
        })?;
        let turn_over = CancellationToken::new();
        let _withdraw = turn_over.clone().drop_guard();
        let mut front_end = PromptFrontEnd {
            agent: self,
            session: &session,
            cancel,
            connection_closing: ctx.cancel.clone(),
            turn_over,
            timeout: session.thread.settings().approval_timeout,
            interrupted: false,
            error: None,
        };
        handle.drive(&mut front_end).await;
        let PromptFrontEnd {
            interrupted, error, ..
        } = front_end;
        let stop = match handle.end() {
            Some(TurnEnd::Completed { failed: false, .. }) if !interrupted => StopReason::EndTurn,
            Some(TurnEnd::Completed { failed: true, .. }) if !interrupted => {
                return Err(RpcError::internal(format!(
                    "the turn failed: {}",
                    error.unwrap_or_else(|| "no reason given".into())
                ))
                .with_data(serde_json::json!({ "sessionId": p.session_id.0 })));
            }
            Some(TurnEnd::Completed { .. }) | Some(TurnEnd::Aborted(_)) => StopReason::Cancelled,
            Some(TurnEnd::Unresponsive) => {
                tracing::warn!(
                    "the turn did not end within {INTERRUPT_GRACE:?} of the cancel; reporting it cancelled"
                );
                StopReason::Cancelled
            }
            // ACP asks its approvals while the turn waits; it never starts a turn that parks.
            Some(TurnEnd::Parked(_)) => {
                return Err(RpcError::internal(
                    "the turn parked at its approvals, which this agent never asks for",
                ));
            }
            Some(TurnEnd::ThreadClosed) | None => {
                return Err(RpcError::internal(
                    "the session stopped before the turn ended (the agent is shutting down)",
                ));
            }
        };
        to_value(&PromptResponse::new(stop))
    }
}

/// A prompt as the front end of its turn: events as session updates, approvals as
/// permission requests (asked while the turn waits), a `session/cancel` or the client
/// going away as an interrupt.
struct PromptFrontEnd<'a> {
    agent: &'a Agent,
    session: &'a super::sessions::AcpSession,
    /// `session/cancel`.
    cancel: CancellationToken,
    /// The connection is closing (the client went away).
    connection_closing: CancellationToken,
    /// Withdraws the permission requests still open when the turn ends or is interrupted.
    turn_over: CancellationToken,
    timeout: Duration,
    interrupted: bool,
    /// The turn's last `error`.
    error: Option<String>,
}

impl PromptFrontEnd<'_> {
    fn interrupt(&mut self) -> Stop {
        self.interrupted = true;
        self.turn_over.cancel();
        Stop::Interrupt(Some(INTERRUPT_GRACE))
    }
}

impl TurnFrontEnd for PromptFrontEnd<'_> {
    async fn stop_requested(&mut self) -> Stop {
        if self.interrupted {
            return std::future::pending().await;
        }
        tokio::select! {
            _ = self.cancel.cancelled() => {}
            // The thread records the turn as interrupted.
            _ = self.connection_closing.cancelled() => {}
        }
        self.interrupt()
    }

    async fn on_event(&mut self, turn: &TurnHandle, event: &Event) -> Option<Stop> {
        if event.id == turn.id()
            && let EventMsg::Error(e) = &event.msg
        {
            self.error = Some(e.message.clone());
        }
        if !self.session.out.event(&event.msg).await && !self.interrupted {
            return Some(self.interrupt());
        }
        None
    }

    async fn on_request(&mut self, turn: &TurnHandle, request: PendingRequest, event: &Event) {
        if event.id != turn.id() {
            return;
        }
        let thread = &self.session.thread;
        if self.interrupted {
            let _ = thread.submit(request.refusal()).await;
            return;
        }
        let (call_id, reason) = match (&request, &event.msg) {
            (PendingRequest::Elicitation { server_name, .. }, _) => {
                // ACP has no form questions of its own in v1 that we map yet: decline,
                // so the server's call goes on without an answer.
                tracing::info!("declining an MCP elicitation from `{server_name}`");
                let _ = thread.submit(request.refusal()).await;
                return;
            }
            (_, EventMsg::ExecApprovalRequest(r)) => (r.call_id.clone(), r.reason.clone()),
            (_, EventMsg::ApplyPatchApprovalRequest(r)) => (r.call_id.clone(), r.reason.clone()),
            _ => return,
        };
        let mut fields = ToolCallUpdateFields::new();
        if let Some(reason) = reason {
            fields = fields.content(vec![crate::schema::ToolCallContent::from(format!(
                "Why it asks: {reason}"
            ))]);
        }
        let thread = thread.clone();
        let outgoing = self.agent.inner.outgoing.clone();
        let session_id = self.session.out.session_id.clone();
        let over = self.turn_over.clone();
        let timeout = self.timeout;
        // Asked on its own task: the turn's events keep flowing while the client decides.
        tokio::spawn(async move {
            let decision =
                crate::permission::ask(&outgoing, &session_id, &call_id, fields, timeout, &over)
                    .await;
            if over.is_cancelled() {
                return;
            }
            if let Err(e) = thread.answer(&request, decision).await {
                tracing::warn!("could not answer an approval: {e}");
            }
        });
    }
}

/// Clears the session's running prompt when the prompt ends, however it ends.
struct Running<'a>(&'a std::sync::Mutex<Option<CancellationToken>>);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        *lock(self.0) = None;
    }
}
