//! `$OPENINTERPRETER_HOME/history.jsonl`: the prompts typed in interactive sessions (the
//! TUI and the line mode), one JSON object a line in the shape Codex uses,
//! `{"session_id":"…","ts":1745600000,"text":"…"}` (`ts` in seconds since the epoch).
//! This module is the file's only reader and writer.
//!
//! Nothing is read or written when `[history] persistence = "none"`. Slash commands
//! (`/status`, `/compact`, …) are not prompts and are not saved. The file is private to the
//! user (0600 in the home folder): prompts can contain anything.

use crate::{Config, HistoryPersistence};
use std::io::Write;
use std::path::PathBuf;

/// The newest entries [`PromptHistory::read`] returns at most.
pub const READ_LIMIT: usize = 500;
/// Bytes read from the end of the file: room for [`READ_LIMIT`] long prompts.
const READ_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The prompt history of one home directory, or none when persistence is off.
#[derive(Clone, Debug, Default)]
pub struct PromptHistory {
    /// `None`: persistence is off.
    path: Option<PathBuf>,
}

impl PromptHistory {
    /// The history `config` asks for: `history.jsonl` in its home, or none when persistence is off.
    pub fn from_config(config: &Config) -> Self {
        Self::at(
            (config.history_persistence == HistoryPersistence::SaveAll)
                .then(|| config.home.join("history.jsonl")),
        )
    }

    /// A history kept in `path`; `None` keeps none.
    pub fn at(path: Option<PathBuf>) -> Self {
        Self { path }
    }

    /// Whether prompts are saved at all.
    pub fn is_enabled(&self) -> bool {
        self.path.is_some()
    }

    /// Appends one prompt typed in session `session_id`; blank text and slash commands are
    /// skipped. Returns the error when the file cannot be written (the caller logs it and
    /// goes on: a lost history line must not stop a session).
    pub fn append(&self, session_id: &str, text: &str) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if !is_saved(text) {
            return Ok(());
        }
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let line = serde_json::json!({"session_id": session_id, "ts": ts, "text": text});
        let mut file = crate::owner_only::open_append(path)?;
        // One write per line, so concurrent sessions appending never interleave a line.
        file.write_all(format!("{line}\n").as_bytes())
    }

    /// The saved prompts, oldest first, at most the newest [`READ_LIMIT`]. A missing file is
    /// an empty history; a line that is not an entry (cut short by a crash, written by hand)
    /// is skipped. Lines of older versions of the TUI (a bare JSON string) are read too.
    pub fn read(&self) -> Vec<String> {
        let Some(path) = &self.path else {
            return Vec::new();
        };
        // Only the end is read (the newest prompts are at the end), with the bounded reader:
        // a FIFO or device in its place is no history, not a wait.
        let Ok((bytes, cut)) = crate::project_file::read_tail(path, READ_MAX_BYTES) else {
            return Vec::new();
        };
        let body = String::from_utf8_lossy(&bytes);
        let mut lines = body.lines();
        if cut {
            lines.next(); // the first line read may be the end of a longer one
        }
        let mut out: Vec<String> = lines.filter_map(entry_text).collect();
        if out.len() > READ_LIMIT {
            out.drain(..out.len() - READ_LIMIT);
        }
        out
    }
}

/// Whether `text` belongs in the history: not blank, and not a slash command (`/name …`;
/// a path such as `/usr/bin/env is odd` is a prompt).
pub fn is_saved(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return false;
    }
    let Some(rest) = trimmed.strip_prefix('/') else {
        return true;
    };
    let name = rest.split(char::is_whitespace).next().unwrap_or_default();
    name.is_empty() || name.contains('/')
}

fn entry_text(line: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(line).ok()? {
        serde_json::Value::Object(o) => o.get("text")?.as_str().map(str::to_string),
        serde_json::Value::String(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_codex_lines_skips_commands_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        // A line of an older TUI, then a torn one.
        std::fs::write(&path, "\"from the old tui\"\n{\"session_id\":\"s\",\"te\n").unwrap();
        let h = PromptHistory::at(Some(path.clone()));
        h.append("s1", "first prompt").unwrap();
        h.append("s1", "/status").unwrap();
        h.append("s1", "  ").unwrap();
        h.append("s2", "/usr/bin/env is odd").unwrap();
        let body = std::fs::read_to_string(&path).unwrap();
        let last: serde_json::Value = serde_json::from_str(body.lines().last().unwrap()).unwrap();
        assert_eq!(last["session_id"], "s2");
        assert_eq!(last["text"], "/usr/bin/env is odd");
        assert!(last["ts"].as_u64().is_some_and(|t| t > 1_700_000_000));
        assert_eq!(
            h.read(),
            ["from the old tui", "first prompt", "/usr/bin/env is odd"]
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn persistence_off_reads_and_writes_nothing() {
        let h = PromptHistory::at(None);
        assert!(!h.is_enabled());
        h.append("s", "secret").unwrap();
        assert!(h.read().is_empty());
    }

    #[test]
    fn slash_commands_are_not_prompts() {
        assert!(!is_saved("/compact"));
        assert!(!is_saved(" /mcp verbose"));
        assert!(is_saved("/ alone"));
        assert!(is_saved("/etc/hosts is odd"));
        assert!(is_saved("fix /src"));
    }
}
