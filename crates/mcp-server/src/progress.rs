//! `notifications/progress` for calls that carry `_meta.progressToken`: a monotonically
//! increasing counter and a short human summary of what the turn is doing, so clients
//! with idle timers see a long turn is alive. Deltas are folded into at most one
//! notification per second.

use oi_protocol::parse_command::display_command;
use oi_protocol::protocol::EventMsg;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use std::time::{Duration, Instant};

/// The notification.
pub(crate) const PROGRESS: &str = "notifications/progress";

const DELTA_INTERVAL: Duration = Duration::from_secs(1);

pub(crate) struct Progress {
    token: ProgressToken,
    count: u64,
    last_delta_report: Option<Instant>,
    answer_chars: usize,
}

impl Progress {
    pub(crate) fn new(token: ProgressToken) -> Self {
        Self {
            token,
            count: 0,
            last_delta_report: None,
            answer_chars: 0,
        }
    }

    /// Params for a progress notification about `msg`, if it is worth one.
    pub(crate) fn on_event(&mut self, msg: &EventMsg) -> Option<ProgressNotificationParam> {
        self.on_event_at(msg, Instant::now())
    }

    fn on_event_at(&mut self, msg: &EventMsg, now: Instant) -> Option<ProgressNotificationParam> {
        let due =
            |last: Option<Instant>| last.is_none_or(|t| now.duration_since(t) >= DELTA_INTERVAL);
        let message = match msg {
            EventMsg::AgentMessageDelta(d) => {
                self.answer_chars += d.delta.chars().count();
                if !due(self.last_delta_report) {
                    return None;
                }
                self.last_delta_report = Some(now);
                format!(
                    "writing the answer ({} characters so far)",
                    self.answer_chars
                )
            }
            EventMsg::AgentReasoningDelta(_) => {
                if !due(self.last_delta_report) {
                    return None;
                }
                self.last_delta_report = Some(now);
                "thinking".to_string()
            }
            other => summarize(other)?,
        };
        self.count += 1;
        // Counts stay exact far beyond any turn's length.
        #[allow(clippy::cast_precision_loss)]
        let progress = self.count as f64;
        Some(ProgressNotificationParam::new(self.token.clone(), progress).with_message(message))
    }
}

/// One line saying what an event means to a person watching, or `None` for noise.
pub(crate) fn summarize(msg: &EventMsg) -> Option<String> {
    Some(match msg {
        EventMsg::SessionConfigured(s) => format!("session started with model {}", s.model),
        EventMsg::TaskStarted(_) => "turn started".into(),
        EventMsg::ExecCommandBegin(e) => {
            format!("running `{}`", short(&display_command(&e.command)))
        }
        EventMsg::ExecCommandEnd(e) => format!(
            "`{}` exited with code {}",
            short(&display_command(&e.command)),
            e.exit_code
        ),
        EventMsg::ExecApprovalRequest(e) => format!(
            "waiting for approval to run `{}`",
            short(&display_command(&e.command))
        ),
        EventMsg::ApplyPatchApprovalRequest(e) => {
            format!("waiting for approval to change {} file(s)", e.changes.len())
        }
        EventMsg::PatchApplyBegin(e) => format!("editing {} file(s)", e.changes.len()),
        EventMsg::PatchApplyEnd(e) => {
            if e.success {
                "edit applied".into()
            } else {
                "edit failed".into()
            }
        }
        EventMsg::McpToolCallBegin(e) => {
            format!("calling {}.{}", e.invocation.server, e.invocation.tool)
        }
        EventMsg::McpToolCallEnd(e) => {
            format!("{}.{} finished", e.invocation.server, e.invocation.tool)
        }
        EventMsg::McpToolCallProgress(e) => e
            .message
            .clone()
            .unwrap_or_else(|| "MCP tool call in progress".into()),
        EventMsg::ElicitationRequest(e) => {
            format!("waiting for input requested by {}", e.server_name)
        }
        EventMsg::StreamError(e) => format!("retrying the model request: {}", short(&e.message)),
        EventMsg::Warning(w) => format!("warning: {}", short(&w.message)),
        EventMsg::Error(e) => format!("error: {}", short(&e.message)),
        EventMsg::AgentMessage(_) => "answer ready".into(),
        EventMsg::TaskComplete(_) => "turn complete".into(),
        EventMsg::TurnAborted(_) => "turn interrupted".into(),
        _ => return None,
    })
}

fn short(s: &str) -> String {
    const MAX: usize = 80;
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() > MAX || s.contains('\n') {
        let cut: String = line.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::protocol::{AgentMessageDeltaEvent, TaskStartedEvent};
    use rmcp::model::NumberOrString;
    use serde_json::{Value, json};

    fn wire(p: ProgressNotificationParam) -> Value {
        serde_json::to_value(p).unwrap()
    }

    #[test]
    fn progress_increases_and_deltas_are_throttled() {
        let mut p = Progress::new(ProgressToken(NumberOrString::String("tok".into())));
        let started = EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: "1".into(),
            started_at: None,
            model_context_window: None,
            model_context_window_source: None,
            collaboration_mode_kind: "default".into(),
        });
        let t0 = Instant::now();
        let a = wire(p.on_event_at(&started, t0).unwrap());
        assert_eq!(
            a,
            json!({"progressToken":"tok","progress":1.0,"message":"turn started"})
        );
        let delta = EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
            delta: "abc".into(),
        });
        let b = p.on_event_at(&delta, t0).unwrap();
        assert_eq!(b.progress, 2.0);
        // Within the interval, further deltas are folded; after it, reported again.
        assert!(
            p.on_event_at(&delta, t0 + Duration::from_millis(500))
                .is_none()
        );
        let c = p.on_event_at(&delta, t0 + DELTA_INTERVAL).unwrap();
        assert_eq!(
            c.message.as_deref(),
            Some("writing the answer (9 characters so far)")
        );
        assert_eq!(p.on_event_at(&started, t0).unwrap().progress, 4.0);
    }

    #[test]
    fn long_commands_are_shortened() {
        assert_eq!(short(&"x".repeat(100)).chars().count(), 81);
        assert_eq!(short("a\nb"), "a…");
    }
}
