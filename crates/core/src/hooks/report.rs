//! `hook_started` / `hook_completed`: front ends see each hook run, how it ended and what it
//! said (v2 `hook/started` and `hook/completed`, `exec --json` lines, the TUI's status).

use crate::session::Session;
use oi_config::hooks::{HookCommand, HookEvent};
use oi_protocol::protocol::{
    EventMsg, HookOutputEntry, HookOutputKind, HookRunEvent, HookRunStatus,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One hook run, announced when it starts; [`RunReport::finish`] announces its end.
pub(crate) struct RunReport {
    event: HookRunEvent,
    started: Instant,
}

impl RunReport {
    /// Sends `hook_started` for `hook`, run in `turn_id` (`None`: the session's start).
    pub(super) fn start(sess: &Session, turn_id: Option<&str>, hook: &HookCommand) -> Self {
        // Unique within the process: a front end pairs a run's two events by it.
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let event = HookRunEvent {
            id: format!("hook-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            turn_id: turn_id.map(str::to_string),
            event_name: hook.event.wire_name().into(),
            scope: match hook.event {
                HookEvent::SessionStart => "thread",
                _ => "turn",
            }
            .into(),
            command: hook.command.clone(),
            source: hook.source.wire_name().into(),
            source_path: hook.source_path.clone(),
            display_order: hook.display_order,
            status_message: hook.status_message.clone(),
            status: HookRunStatus::Running,
            entries: Vec::new(),
            started_at: unix_ms(),
            completed_at: None,
            duration_ms: None,
        };
        sess.send(
            turn_id.unwrap_or_default(),
            EventMsg::HookStarted(event.clone()),
        );
        RunReport {
            event,
            started: Instant::now(),
        }
    }

    /// Sends `hook_completed`: `status` and what the hook said, each entry as the model or
    /// the user got it.
    pub(super) fn finish(
        mut self,
        sess: &Session,
        status: HookRunStatus,
        entries: impl IntoIterator<Item = (HookOutputKind, String)>,
    ) {
        self.event.status = status;
        self.event.entries = entries
            .into_iter()
            .map(|(kind, text)| HookOutputEntry { kind, text })
            .collect();
        self.event.completed_at = Some(unix_ms());
        self.event.duration_ms =
            Some(u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX));
        let turn_id = self.event.turn_id.clone().unwrap_or_default();
        sess.send(&turn_id, EventMsg::HookCompleted(self.event));
    }
}

fn unix_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
