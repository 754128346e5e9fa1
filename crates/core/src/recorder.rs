//! Where a thread's durable record goes. The engine only needs this narrow interface, so
//! storage (rollout files + index) can change without touching the turn loop.

use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::CompactedItem;
use std::path::{Path, PathBuf};

/// Receives everything a thread must persist. Implementations write synchronously and
/// report failures through the return value; the engine turns them into warnings.
pub trait Recorder: Send {
    /// A conversation item that joined the history (what resume rebuilds it from).
    fn record_item(&mut self, item: &ResponseItem) -> Result<(), String>;
    /// An event that belongs in the stored thread (see `is_persisted`).
    fn record_event(&mut self, event: &EventMsg) -> Result<(), String>;
    /// The settings a turn starts with (cwd, policies, model), written before its events.
    fn record_turn_context(
        &mut self,
        turn_id: &str,
        cwd: &Path,
        approval_policy: AskForApproval,
        sandbox_policy: &SandboxPolicy,
        model: &str,
        effort: Option<ReasoningEffort>,
    ) -> Result<(), String>;
    /// The history was compacted: `item.replacement_history` replaces everything before.
    fn record_compacted(&mut self, item: &CompactedItem) -> Result<(), String> {
        let _ = item;
        Ok(())
    }
    /// Called at the end of every turn and at shutdown.
    fn flush(&mut self) -> Result<(), String>;
    /// The rollout file this recorder writes, if it writes one.
    fn path(&self) -> Option<PathBuf>;
}

/// For ephemeral threads.
pub struct NoopRecorder;

impl Recorder for NoopRecorder {
    fn record_item(&mut self, _: &ResponseItem) -> Result<(), String> {
        Ok(())
    }
    fn record_event(&mut self, _: &EventMsg) -> Result<(), String> {
        Ok(())
    }
    fn record_turn_context(
        &mut self,
        _: &str,
        _: &Path,
        _: AskForApproval,
        _: &SandboxPolicy,
        _: &str,
        _: Option<ReasoningEffort>,
    ) -> Result<(), String> {
        Ok(())
    }
    fn flush(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn path(&self) -> Option<PathBuf> {
        None
    }
}

/// Events worth keeping in a rollout: the store decides (enough to rebuild turns, no deltas).
pub(crate) fn is_persisted(ev: &EventMsg) -> bool {
    oi_thread_store::should_persist_event(ev)
}
