//! `$OPENINTERPRETER_HOME/history.jsonl`: prompts typed in interactive sessions, one JSON line
//! each (`{"session_id","ts","text"}`, the shape Codex uses), unless `[history] persistence =
//! "none"`. The file is private to the user (0600): prompts can contain anything.

use oi_config::{Config, HistoryPersistence};
use std::io::Write;
use std::path::PathBuf;

pub struct PromptHistory {
    /// `None`: persistence is off.
    path: Option<PathBuf>,
}

impl PromptHistory {
    pub fn from_config(config: &Config) -> Self {
        let path = (config.history_persistence == HistoryPersistence::SaveAll)
            .then(|| config.home.join("history.jsonl"));
        Self { path }
    }

    /// Append one prompt. Failing to save history must not stop the session: log and go on.
    pub fn append(&self, session_id: &str, text: &str) {
        let Some(path) = &self.path else {
            return;
        };
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let line = serde_json::json!({"session_id": session_id, "ts": ts, "text": text});
        let mut opts = std::fs::OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let result = opts.open(path).and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = result {
            tracing::warn!("cannot append to {}: {e}", path.display());
        }
    }
}
