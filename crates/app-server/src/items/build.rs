//! Engine event payloads → typed v2 items ([`ThreadItem`]) and their parts.

use crate::protocol::wire::{
    CommandExecutionSource, CommandExecutionStatus, FileUpdateChange, McpToolCallError,
    McpToolCallResult, McpToolCallStatus, PatchApplyStatus, PatchChangeKind, ThreadItem,
    V2UserInput, command_actions,
};
use oi_protocol::parse_command::{ParsedCommand, display_command};
use oi_protocol::protocol::{
    ExecCommandEndEvent, ExecCommandSource, ExecCommandStatus, FileChange, McpInvocation,
    McpToolCallEndEvent, PatchApplyStatus as EnginePatchStatus, UserMessageEvent,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The user's message as a `userMessage` item: its text, then its images.
pub(super) fn user_message(id: String, m: &UserMessageEvent) -> ThreadItem {
    let mut content = Vec::new();
    if !m.message.is_empty() {
        content.push(V2UserInput::Text {
            text: m.message.clone(),
            text_elements: Vec::new(),
        });
    }
    for url in m.images.iter().flatten() {
        content.push(V2UserInput::Image { url: url.clone() });
    }
    for path in &m.local_images {
        content.push(V2UserInput::LocalImage { path: path.clone() });
    }
    ThreadItem::UserMessage { id, content }
}

pub(super) fn agent_message(id: String, text: String, phase: Option<String>) -> ThreadItem {
    ThreadItem::AgentMessage { id, text, phase }
}

/// A reasoning item; `text` is `None` while it is still streaming.
pub(super) fn reasoning(id: String, text: Option<String>) -> ThreadItem {
    ThreadItem::Reasoning {
        id,
        summary: Vec::new(),
        content: text.into_iter().collect(),
    }
}

/// A command that has not finished (or was declined): no output, exit code or duration.
pub(super) fn command(
    call_id: &str,
    argv: &[String],
    cwd: &Path,
    parsed: &[ParsedCommand],
    source: ExecCommandSource,
    status: CommandExecutionStatus,
) -> ThreadItem {
    ThreadItem::CommandExecution {
        id: call_id.to_string(),
        command: display_command(argv),
        cwd: cwd.to_path_buf(),
        process_id: None,
        source: match source {
            ExecCommandSource::Agent => CommandExecutionSource::Agent,
            ExecCommandSource::UserShell => CommandExecutionSource::UserShell,
        },
        status,
        command_actions: command_actions(parsed),
        aggregated_output: None,
        exit_code: None,
        duration_ms: None,
    }
}

/// A finished command; a declined one carries no output.
pub(super) fn command_end(e: &ExecCommandEndEvent) -> ThreadItem {
    let status = match e.status {
        ExecCommandStatus::Completed => CommandExecutionStatus::Completed,
        ExecCommandStatus::Failed => CommandExecutionStatus::Failed,
        ExecCommandStatus::Declined => CommandExecutionStatus::Declined,
    };
    let mut item = command(
        &e.call_id,
        &e.command,
        &e.cwd,
        &e.parsed_cmd,
        e.source,
        status,
    );
    if status != CommandExecutionStatus::Declined
        && let ThreadItem::CommandExecution {
            aggregated_output,
            exit_code,
            duration_ms,
            ..
        } = &mut item
    {
        *aggregated_output = Some(e.aggregated_output.clone());
        *exit_code = Some(e.exit_code);
        *duration_ms = Some(e.duration.as_millis());
    }
    item
}

pub(super) fn patch_status(s: EnginePatchStatus) -> PatchApplyStatus {
    match s {
        EnginePatchStatus::Completed => PatchApplyStatus::Completed,
        EnginePatchStatus::Failed => PatchApplyStatus::Failed,
        EnginePatchStatus::Declined => PatchApplyStatus::Declined,
    }
}

pub(super) fn file_change(
    call_id: &str,
    changes: &BTreeMap<PathBuf, FileChange>,
    status: PatchApplyStatus,
) -> ThreadItem {
    let changes = changes
        .iter()
        .map(|(path, change)| {
            let (kind, diff) = match change {
                FileChange::Add { content } => (PatchChangeKind::Add, content),
                FileChange::Delete { content } => (PatchChangeKind::Delete, content),
                FileChange::Update {
                    unified_diff,
                    move_path,
                } => (
                    PatchChangeKind::Update {
                        move_path: move_path.clone(),
                    },
                    unified_diff,
                ),
            };
            FileUpdateChange {
                path: path.clone(),
                kind,
                diff: diff.clone(),
            }
        })
        .collect();
    ThreadItem::FileChange {
        id: call_id.to_string(),
        changes,
        status,
    }
}

pub(super) fn mcp_call(
    call_id: &str,
    inv: &McpInvocation,
    status: McpToolCallStatus,
) -> ThreadItem {
    ThreadItem::McpToolCall {
        id: call_id.to_string(),
        server: inv.server.clone(),
        tool: inv.tool.clone(),
        status,
        arguments: inv.arguments.clone().unwrap_or(Value::Null),
        result: None,
        error: None,
        duration_ms: None,
    }
}

/// A finished MCP call: `failed` when the call failed or the tool reported `isError`.
pub(super) fn mcp_call_end(e: &McpToolCallEndEvent) -> ThreadItem {
    let failed = match &e.result {
        Ok(v) => v.get("isError").and_then(Value::as_bool).unwrap_or(false),
        Err(_) => true,
    };
    let status = if failed {
        McpToolCallStatus::Failed
    } else {
        McpToolCallStatus::Completed
    };
    let mut item = mcp_call(&e.call_id, &e.invocation, status);
    if let ThreadItem::McpToolCall {
        result,
        error,
        duration_ms,
        ..
    } = &mut item
    {
        match &e.result {
            Ok(v) => {
                *result = Some(McpToolCallResult {
                    content: v
                        .get("content")
                        .cloned()
                        .unwrap_or_else(|| Value::Array(Vec::new())),
                    structured_content: v.get("structuredContent").cloned(),
                    meta: v.get("_meta").cloned(),
                })
            }
            Err(message) => {
                *error = Some(McpToolCallError {
                    message: message.clone(),
                })
            }
        }
        *duration_ms = Some(e.duration.as_millis());
    }
    item
}
