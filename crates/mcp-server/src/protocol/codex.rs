//! The Codex-compatible shapes of `interpreter mcp-server` (those of `codex mcp-server`
//! 0.153, so its clients work unchanged): the tools' result, the `codex/event`
//! notification, and the approval prompt (an elicitation with `codex_*` correlation keys).

use oi_jsonrpc::RequestId;
use oi_protocol::ThreadId;
use oi_protocol::parse_command::ParsedCommand;
use oi_protocol::protocol::{EventMsg, FileChange};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The notification carrying one engine event of a call's turn.
pub(crate) const CODEX_EVENT: &str = "codex/event";

/// `structuredContent` of a `codex` / `codex-reply` result (the tools' `outputSchema`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CodexOutput {
    pub thread_id: String,
    pub content: String,
}

/// A tool result. Results about a thread carry `structuredContent {threadId, content}`;
/// failures before a thread exists carry only text.
pub(crate) fn tool_result(
    thread_id: Option<ThreadId>,
    text: String,
    is_error: bool,
) -> CallToolResult {
    let mut r = CallToolResult::default();
    if let Some(id) = thread_id {
        let output = CodexOutput {
            thread_id: id.to_string(),
            content: text.clone(),
        };
        r.structured_content = serde_json::to_value(output).ok();
    }
    r.content = vec![ContentBlock::text(text)];
    if is_error {
        r.is_error = Some(true);
    }
    r
}

/// Params of [`CODEX_EVENT`]: the event as the engine published it, with the call it
/// belongs to.
#[derive(Serialize)]
pub(crate) struct CodexEventParams<'a> {
    #[serde(rename = "_meta")]
    pub meta: CodexEventMeta<'a>,
    /// The turn's id (`""` for `session_configured`).
    pub id: &'a str,
    pub msg: &'a EventMsg,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CodexEventMeta<'a> {
    /// The `tools/call` id, with its JSON type kept.
    pub request_id: &'a RequestId,
    pub thread_id: ThreadId,
}

/// The form of an approval prompt: nothing to fill in, the answer is the action.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct EmptyForm {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub properties: BTreeMap<String, serde_json::Value>,
}

impl Default for EmptyForm {
    fn default() -> Self {
        Self {
            kind: "object",
            properties: BTreeMap::new(),
        }
    }
}

/// The params of an approval prompt (`elicitation/create`): the MCP `message` and
/// `requestedSchema`, and the reference's correlation keys.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApprovalPrompt {
    pub message: String,
    pub requested_schema: EmptyForm,
    pub thread_id: ThreadId,
    /// `exec-approval` or `patch-approval`.
    #[serde(rename = "codex_elicitation")]
    pub kind: &'static str,
    #[serde(rename = "codex_mcp_tool_call_id")]
    pub tool_call_id: String,
    #[serde(rename = "codex_event_id")]
    pub event_id: String,
    #[serde(rename = "codex_call_id")]
    pub call_id: String,
    #[serde(flatten)]
    pub subject: ApprovalSubject,
}

/// What an approval is about.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ApprovalSubject {
    Exec {
        codex_command: Vec<String>,
        codex_cwd: PathBuf,
        codex_parsed_cmd: Vec<ParsedCommand>,
        #[serde(skip_serializing_if = "Option::is_none")]
        codex_reason: Option<String>,
    },
    Patch {
        #[serde(skip_serializing_if = "Option::is_none")]
        codex_reason: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        codex_grant_root: Option<PathBuf>,
        codex_changes: BTreeMap<PathBuf, FileChange>,
    },
}
