//! A stored thread's turns as a reader sees them: typed items (what the user asked, what
//! the agent said and did) and a Markdown transcript of the same items. No I/O.
//!
//! What is left out on purpose: instructions, environment context and configuration (they
//! are the server's, not the conversation's), the rollout file's location, and absolute
//! paths — a command's working directory and a changed file are shown relative to the
//! thread's folder, or by file name when outside it. Outputs are cut head+tail like the
//! model's own view of them.

use oi_core::{RolloutItem, StoredTurn, TurnStatus, truncate_head_tail};
use oi_protocol::parse_command::display_command;
use oi_protocol::protocol::EventMsg;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Bytes of one command's output (or one tool result) kept in a transcript.
const OUTPUT_MAX_BYTES: usize = 4 * 1024;

/// One turn.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnView {
    /// From 0, oldest first.
    pub index: usize,
    pub id: String,
    /// `completed`, `interrupted`, `failed` or `inProgress`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub items: Vec<Item>,
}

/// One thing that happened in a turn.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum Item {
    UserMessage {
        text: String,
    },
    AgentMessage {
        text: String,
    },
    Reasoning {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    Command {
        command: String,
        /// The working directory relative to the thread's folder (`.` for itself).
        cwd: String,
        exit_code: i32,
        output: String,
    },
    #[serde(rename_all = "camelCase")]
    FileChange {
        files: Vec<String>,
        success: bool,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        server: String,
        tool: String,
        success: bool,
    },
    Error {
        message: String,
    },
    Compacted,
}

fn status_name(s: TurnStatus) -> &'static str {
    match s {
        TurnStatus::Completed => "completed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::Failed => "failed",
        TurnStatus::InProgress => "inProgress",
        // Stopped at an approval, waiting for its answer (a 2026-07-28 client's retry or
        // `tasks/update`), on whichever server gets it.
        TurnStatus::Parked => "waitingForApproval",
    }
}

/// `path` as a reader of the thread may see it: relative to `root` when inside it, else its
/// file name.
fn shown_path(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) if path.is_relative() => path.display().to_string(),
        Err(_) => path
            .file_name()
            .map_or_else(|| "…".to_string(), |n| format!("…/{}", n.to_string_lossy())),
    }
}

/// The turns of a thread whose folder is `root`, numbered from `first`.
pub(crate) fn turns(stored: &[StoredTurn], first: usize, root: &Path) -> Vec<TurnView> {
    stored
        .iter()
        .enumerate()
        .map(|(i, t)| TurnView {
            index: first + i,
            id: t.id.clone(),
            status: status_name(t.status),
            started_at: t.started_at,
            completed_at: t.completed_at,
            error: t.error.clone(),
            items: t.items.iter().filter_map(|r| item(r, root)).collect(),
        })
        .collect()
}

fn item(record: &RolloutItem, root: &Path) -> Option<Item> {
    let RolloutItem::EventMsg(msg) = record else {
        return None;
    };
    Some(match msg {
        EventMsg::UserMessage(m) => Item::UserMessage {
            text: m.message.clone(),
        },
        EventMsg::AgentMessage(m) => Item::AgentMessage {
            text: m.message.clone(),
        },
        EventMsg::AgentReasoning(r) => Item::Reasoning {
            text: r.text.clone(),
        },
        EventMsg::ExecCommandEnd(e) => Item::Command {
            command: display_command(&e.command),
            cwd: shown_path(&e.cwd, root),
            exit_code: e.exit_code,
            output: truncate_head_tail(&e.aggregated_output, OUTPUT_MAX_BYTES),
        },
        EventMsg::PatchApplyEnd(p) => Item::FileChange {
            files: p.changes.keys().map(|f| shown_path(f, root)).collect(),
            success: p.success,
        },
        EventMsg::McpToolCallEnd(c) => Item::ToolCall {
            server: c.invocation.server.clone(),
            tool: c.invocation.tool.clone(),
            success: c.result.is_ok(),
        },
        EventMsg::Error(e) => Item::Error {
            message: e.message.clone(),
        },
        EventMsg::ContextCompacted(_) => Item::Compacted,
        _ => return None,
    })
}

/// The Markdown transcript of `turns` of a thread titled `title`; `earlier` names where the
/// turns before these are, if there are any.
pub(crate) fn markdown(title: &str, turns: &[TurnView], earlier: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", one_line(title));
    if let Some(uri) = earlier {
        let _ = writeln!(out, "_Earlier turns: {uri}_\n");
    }
    for turn in turns {
        let _ = writeln!(
            out,
            "## Turn {} ({})\n",
            turn.index + 1,
            match turn.status {
                "inProgress" => "running",
                "waitingForApproval" => "waiting for approval",
                other => other,
            }
        );
        for item in &turn.items {
            match item {
                Item::UserMessage { text } => {
                    let _ = writeln!(out, "**User:**\n\n{}\n", text.trim_end());
                }
                Item::AgentMessage { text } => {
                    let _ = writeln!(out, "**Agent:**\n\n{}\n", text.trim_end());
                }
                Item::Reasoning { text } => {
                    let _ = writeln!(out, "> _Reasoning:_ {}\n", one_line(text));
                }
                Item::Command {
                    command,
                    cwd,
                    exit_code,
                    output,
                } => {
                    let fence = fence_for(output);
                    let _ = writeln!(
                        out,
                        "**Ran** `{command}` in `{cwd}` (exit code {exit_code}):\n\n{fence}\n{}\n{fence}\n",
                        output.trim_end()
                    );
                }
                Item::FileChange { files, success } => {
                    let verb = if *success {
                        "Changed"
                    } else {
                        "Failed to change"
                    };
                    let _ = writeln!(out, "**{verb}** {}\n", code_list(files));
                }
                Item::ToolCall {
                    server,
                    tool,
                    success,
                } => {
                    let how = if *success { "" } else { " (failed)" };
                    let _ = writeln!(out, "**Called** `{server}.{tool}`{how}\n");
                }
                Item::Error { message } => {
                    let _ = writeln!(out, "**Error:** {}\n", one_line(message));
                }
                Item::Compacted => {
                    let _ = writeln!(out, "_The conversation so far was summarized._\n");
                }
            }
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn code_list(files: &[String]) -> String {
    files
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::protocol::{
        AgentMessageEvent, ExecCommandEndEvent, ExecCommandStatus, PatchApplyEndEvent,
        PatchApplyStatus, UserMessageEvent,
    };
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn turn(items: Vec<EventMsg>) -> StoredTurn {
        StoredTurn {
            id: "t1".into(),
            status: TurnStatus::Completed,
            items: items.into_iter().map(RolloutItem::EventMsg).collect(),
            started_at: Some(1),
            completed_at: Some(2),
            duration_ms: None,
            error: None,
        }
    }

    #[test]
    fn paths_are_relative_to_the_thread_and_never_absolute_elsewhere() {
        let root = Path::new("/home/me/project");
        assert_eq!(shown_path(Path::new("/home/me/project"), root), ".");
        assert_eq!(
            shown_path(Path::new("/home/me/project/src/a.rs"), root),
            "src/a.rs"
        );
        assert_eq!(
            shown_path(Path::new("/etc/secret.conf"), root),
            "…/secret.conf"
        );
    }

    #[test]
    fn a_turn_reads_as_items_and_markdown() {
        let root = PathBuf::from("/w");
        let mut changes = BTreeMap::new();
        changes.insert(
            PathBuf::from("/w/notes.txt"),
            oi_protocol::protocol::FileChange::Add {
                content: "x".into(),
            },
        );
        let stored = turn(vec![
            EventMsg::UserMessage(UserMessageEvent {
                message: "list files".into(),
                images: None,
                local_images: vec![],
                text_elements: vec![],
            }),
            EventMsg::ExecCommandEnd(ExecCommandEndEvent {
                call_id: "c".into(),
                turn_id: "t1".into(),
                command: vec!["ls".into(), "-a".into()],
                cwd: PathBuf::from("/w/src"),
                parsed_cmd: vec![],
                source: Default::default(),
                stdout: String::new(),
                stderr: String::new(),
                aggregated_output: "a.rs\n```\n".into(),
                exit_code: 0,
                duration: Default::default(),
                formatted_output: String::new(),
                status: ExecCommandStatus::Completed,
            }),
            EventMsg::PatchApplyEnd(PatchApplyEndEvent {
                call_id: "p".into(),
                turn_id: "t1".into(),
                stdout: String::new(),
                stderr: String::new(),
                success: true,
                changes,
                status: PatchApplyStatus::Completed,
            }),
            EventMsg::AgentMessage(AgentMessageEvent {
                message: "Done.".into(),
                phase: None,
                memory_citation: None,
            }),
        ]);
        let views = turns(&[stored], 3, &root);
        assert_eq!(views[0].index, 3);
        assert_eq!(
            views[0].items[1],
            Item::Command {
                command: "ls -a".into(),
                cwd: "src".into(),
                exit_code: 0,
                output: "a.rs\n```\n".into()
            }
        );
        let md = markdown(
            "list files",
            &views,
            Some("interpreter://threads/x?before=3"),
        );
        assert!(md.starts_with("# list files\n"), "{md}");
        assert!(md.contains("## Turn 4 (completed)"), "{md}");
        assert!(
            md.contains("**Ran** `ls -a` in `src` (exit code 0):\n\n````\na.rs\n```\n````"),
            "{md}"
        );
        assert!(md.contains("**Changed** `notes.txt`"), "{md}");
        assert!(md.contains("**Agent:**\n\nDone."), "{md}");
        assert!(!md.contains("/w"), "{md}");
        let json = serde_json::to_value(&views[0]).unwrap();
        assert_eq!(json["items"][1]["type"], "command");
        assert_eq!(json["items"][1]["exitCode"], 0);
    }
}
