//! The engine's events applied to the app, by family: the turn, the answer, tools, MCP and
//! notices. `on_event` routes each event to its family.

use super::{App, McpState, keys};
use crate::cells::{HistoryCell, Outcome, mcp_result_summary};
use crate::overlay::{Approval, ApprovalSubject, ElicitationForm, Overlay};
use oi_protocol::parse_command::shell_join;
use oi_protocol::protocol::{EventMsg, ExecCommandStatus, McpStartupStatus};
use std::time::Instant;

impl App {
    /// Applies one engine event.
    pub fn on_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::SessionConfigured(ev) => self.on_session_configured(ev),
            EventMsg::TaskStarted(_)
            | EventMsg::TokenCount(_)
            | EventMsg::PlanUpdate(_)
            | EventMsg::ContextCompacted(_)
            | EventMsg::TaskComplete(_)
            | EventMsg::TurnAborted(_) => self.on_turn_event(msg),
            EventMsg::UserMessage(_)
            | EventMsg::AgentMessageDelta(_)
            | EventMsg::AgentMessage(_)
            | EventMsg::AgentReasoningDelta(_)
            | EventMsg::AgentReasoning(_) => self.on_message_event(msg),
            EventMsg::ExecCommandBegin(_)
            | EventMsg::ExecCommandOutputDelta(_)
            | EventMsg::ExecCommandEnd(_)
            | EventMsg::ExecApprovalRequest(_)
            | EventMsg::ApplyPatchApprovalRequest(_)
            | EventMsg::PatchApplyBegin(_)
            | EventMsg::PatchApplyEnd(_) => self.on_tool_event(msg),
            EventMsg::McpStartupUpdate(_)
            | EventMsg::McpStartupComplete(_)
            | EventMsg::McpToolCallBegin(_)
            | EventMsg::McpToolCallProgress(_)
            | EventMsg::McpToolCallEnd(_)
            | EventMsg::ElicitationRequest(_) => self.on_mcp_event(msg),
            EventMsg::Error(_)
            | EventMsg::Warning(_)
            | EventMsg::StreamError(_)
            | EventMsg::SkillLoaded(_) => self.on_notice_event(msg),
            // Progress, shutdown, and event kinds newer than this UI: nothing to show.
            _ => {}
        }
    }

    /// A turn starts, counts its tokens, updates its plan, compacts, ends.
    fn on_turn_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::TaskStarted(ev) => {
                self.status.turn_started = Some(Instant::now());
                self.reasoning_shown_from_deltas = 0;
                self.interrupt_requested = false;
                if ev.model_context_window.is_some() {
                    self.status.context_window = ev.model_context_window;
                    self.status.context_window_source = ev.model_context_window_source.clone();
                }
            }
            EventMsg::TokenCount(t) => {
                self.model_response_ended();
                if let Some(info) = &t.info {
                    self.status.context_used = Some(info.last_token_usage.total_tokens);
                    self.status.total_tokens = info.total_token_usage.total_tokens;
                    if info.model_context_window.is_some() {
                        self.status.context_window = info.model_context_window;
                        self.status.context_window_source =
                            info.model_context_window_source.clone();
                    }
                }
            }
            EventMsg::PlanUpdate(p) => self.on_plan_update(p),
            EventMsg::ContextCompacted(c) => {
                let detail = match (c.tokens_before, c.tokens_after) {
                    (Some(b), Some(a)) => format!("{b} → {a} tokens"),
                    _ => String::new(),
                };
                self.push_info(
                    if c.automatic {
                        "Context compacted automatically"
                    } else {
                        "Context compacted"
                    },
                    if detail.is_empty() {
                        vec![]
                    } else {
                        vec![detail]
                    },
                );
            }
            EventMsg::TaskComplete(done) => self.end_turn(false, done.duration_ms),
            EventMsg::TurnAborted(a) => self.end_turn(true, a.duration_ms),
            _ => {}
        }
    }

    /// The user's message echoed, the answer and the reasoning, streamed and whole.
    fn on_message_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::UserMessage(m) => {
                let message = self.user_echo(&m.message);
                self.on_user_message(&message)
            }
            EventMsg::AgentMessageDelta(d) => {
                self.model_output_began();
                self.show_streamed_reasoning();
                self.streaming.push_str(&d.delta);
                self.commit_streamed_blocks();
            }
            EventMsg::AgentMessage(m) => {
                let tail = std::mem::take(&mut self.streaming);
                self.show_streamed_reasoning();
                self.finish_answer(Some(&m.message), tail);
            }
            EventMsg::AgentReasoningDelta(d) => {
                self.model_output_began();
                self.streaming_reasoning.push_str(&d.delta)
            }
            EventMsg::AgentReasoning(r) => {
                if !self.streaming_reasoning.trim().is_empty() {
                    // Still live: the full text replaces the deltas.
                    self.streaming_reasoning.clear();
                } else if self.reasoning_shown_from_deltas > 0 {
                    self.reasoning_shown_from_deltas -= 1;
                    return;
                }
                if !r.text.trim().is_empty() {
                    self.push_cell(HistoryCell::Reasoning {
                        text: r.text.clone(),
                    });
                }
            }
            _ => {}
        }
    }

    /// Commands and patches: their approval requests, output and ends.
    fn on_tool_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::ExecCommandBegin(b) => {
                self.flush_streaming();
                self.running.push((
                    b.call_id.clone(),
                    HistoryCell::Exec {
                        command: shell_join(&b.command),
                        output: String::new(),
                        outcome: Outcome::Running,
                    },
                ));
            }
            EventMsg::ExecCommandOutputDelta(d) => {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&d.chunk)
                    .unwrap_or_default();
                if let Some((_, HistoryCell::Exec { output, .. })) =
                    self.running.iter_mut().find(|(id, _)| *id == d.call_id)
                {
                    output.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
            EventMsg::ExecCommandEnd(e) => {
                self.running.retain(|(id, _)| *id != e.call_id);
                let outcome = if e.status == ExecCommandStatus::Declined {
                    Outcome::Declined
                } else if self.interrupt_requested && e.exit_code != 0 {
                    Outcome::Interrupted
                } else {
                    Outcome::Done {
                        exit_code: e.exit_code,
                        duration_ms: e.duration.as_millis(),
                    }
                };
                self.push_cell(HistoryCell::Exec {
                    command: shell_join(&e.command),
                    output: e.aggregated_output.clone(),
                    outcome,
                });
            }
            EventMsg::ExecApprovalRequest(req) => {
                self.flush_streaming();
                self.open(Overlay::Approval(Approval {
                    request: oi_core::PendingRequest::exec(req),
                    subject: ApprovalSubject::from_exec(
                        &req.command,
                        shell_join(&req.command),
                        req.cwd.clone(),
                    ),
                    reason: req.reason.clone(),
                }));
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                self.flush_streaming();
                self.open(Overlay::Approval(Approval {
                    request: oi_core::PendingRequest::patch(req),
                    subject: ApprovalSubject::Patch {
                        changes: req.changes.clone().into_iter().collect(),
                    },
                    reason: req.reason.clone(),
                }));
            }
            EventMsg::PatchApplyBegin(b) => {
                self.flush_streaming();
                self.running.push((
                    b.call_id.clone(),
                    HistoryCell::Patch {
                        changes: b.changes.clone().into_iter().collect(),
                        ok: None,
                    },
                ));
            }
            EventMsg::PatchApplyEnd(e) => {
                self.running.retain(|(id, _)| *id != e.call_id);
                if e.success {
                    self.patch_applied(e.changes.clone().into_iter().collect());
                }
                self.push_cell(HistoryCell::Patch {
                    changes: e.changes.clone().into_iter().collect(),
                    ok: Some(e.success),
                });
                if !e.success && !e.stderr.trim().is_empty() {
                    self.push_error(e.stderr.trim().to_string());
                }
            }
            _ => {}
        }
    }

    /// MCP servers starting, their tool calls, and their questions (elicitation).
    fn on_mcp_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::McpStartupUpdate(u) => {
                let state = match &u.status {
                    McpStartupStatus::Starting => McpState::Starting,
                    McpStartupStatus::Ready => McpState::Ready,
                    McpStartupStatus::Failed { error } => McpState::Failed(error.clone()),
                    McpStartupStatus::Cancelled => McpState::Cancelled,
                };
                if let McpState::Failed(e) = &state {
                    self.push_cell(HistoryCell::Warning {
                        message: format!("MCP server `{}` failed to start: {e}", u.server),
                    });
                }
                self.status.mcp.insert(u.server.clone(), state);
            }
            EventMsg::McpStartupComplete(c) => {
                for s in &c.ready {
                    self.status.mcp.insert(s.clone(), McpState::Ready);
                }
                for f in &c.failed {
                    self.status
                        .mcp
                        .insert(f.server.clone(), McpState::Failed(f.error.clone()));
                }
                for s in &c.cancelled {
                    self.status.mcp.insert(s.clone(), McpState::Cancelled);
                }
            }
            EventMsg::McpToolCallBegin(b) => {
                self.flush_streaming();
                self.running.push((
                    b.call_id.clone(),
                    HistoryCell::McpCall {
                        server: b.invocation.server.clone(),
                        tool: b.invocation.tool.clone(),
                        arguments: b
                            .invocation
                            .arguments
                            .as_ref()
                            .map(|a| a.to_string())
                            .unwrap_or_default(),
                        result: None,
                        duration_ms: None,
                        progress: None,
                    },
                ));
            }
            EventMsg::McpToolCallProgress(p) => {
                let shown = match (&p.message, p.total) {
                    (Some(m), _) => m.clone(),
                    (None, Some(total)) => format!("{}/{}", p.progress, total),
                    (None, None) => format!("{}", p.progress),
                };
                for (id, cell) in &mut self.running {
                    if *id == p.call_id
                        && let HistoryCell::McpCall { progress, .. } = cell
                    {
                        *progress = Some(shown.clone());
                    }
                }
            }
            EventMsg::McpToolCallEnd(e) => {
                self.running.retain(|(id, _)| *id != e.call_id);
                let result = match &e.result {
                    Ok(v) if v.get("isError").and_then(|b| b.as_bool()) == Some(true) => {
                        Err(mcp_result_summary(v))
                    }
                    Ok(v) => Ok(mcp_result_summary(v)),
                    Err(e) => Err(e.clone()),
                };
                self.push_cell(HistoryCell::McpCall {
                    server: e.invocation.server.clone(),
                    tool: e.invocation.tool.clone(),
                    arguments: e
                        .invocation
                        .arguments
                        .as_ref()
                        .map(|a| a.to_string())
                        .unwrap_or_default(),
                    result: Some(result),
                    duration_ms: Some(e.duration.as_millis()),
                    progress: None,
                });
            }
            EventMsg::ElicitationRequest(req) => {
                self.flush_streaming();
                self.open(Overlay::Elicitation(ElicitationForm::from_request(
                    &req.server_name,
                    req.id.clone(),
                    &req.request,
                )));
            }
            _ => {}
        }
    }

    /// Errors, warnings and notes for the history.
    fn on_notice_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::Error(e) => {
                self.flush_streaming();
                self.push_error(e.message.clone());
            }
            EventMsg::Warning(w) => self.push_cell(HistoryCell::Warning {
                message: w.message.clone(),
            }),
            EventMsg::StreamError(s) => self.push_cell(HistoryCell::Warning {
                message: format!("{} (retrying)", s.message),
            }),
            EventMsg::SkillLoaded(s) => self.push_info(
                &format!("Loaded skill {} ({})", s.name, s.scope),
                vec![s.path.display().to_string()],
            ),
            _ => {}
        }
    }

    fn end_turn(&mut self, interrupted: bool, duration_ms: Option<u64>) {
        self.flush_streaming();
        if self.hint.as_deref() == Some(keys::INTERRUPTING_HINT) {
            self.hint = None;
        }
        // Whatever was still running ends with the turn.
        for (_, cell) in std::mem::take(&mut self.running) {
            let cell = match cell {
                HistoryCell::Exec {
                    command, output, ..
                } => HistoryCell::Exec {
                    command,
                    output,
                    outcome: if interrupted {
                        Outcome::Interrupted
                    } else {
                        Outcome::Declined
                    },
                },
                other => other,
            };
            self.push_cell(cell);
        }
        // Approvals of a finished turn can no longer be answered.
        if matches!(
            self.overlay,
            Some(Overlay::Approval(_)) | Some(Overlay::Elicitation(_))
        ) {
            self.overlay = None;
        }
        self.queued
            .retain(|o| !matches!(o, Overlay::Approval(_) | Overlay::Elicitation(_)));
        let duration_ms = duration_ms.or_else(|| {
            self.status
                .turn_started
                .map(|t| t.elapsed().as_millis() as u64)
        });
        self.status.turn_started = None;
        self.push_cell(HistoryCell::TurnEnded {
            interrupted,
            duration_ms,
        });
        self.followups_at_turn_end(interrupted);
    }
}
