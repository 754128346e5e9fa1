//! The approval server→client requests' replies: what a client answers to
//! `item/commandExecution/requestApproval` and `item/fileChange/requestApproval`, and the
//! params of `mcpServer/elicitation/request`. The request params of the two approvals
//! live in [`super::wire`] beside `serverRequest/resolved`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A client's answer to a command approval. Unit variants are plain strings on the wire
/// (`"accept"`); the amendment variants are one-key objects, as in Codex.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalDecision {
    /// Run the command.
    Accept,
    /// Run it, and do not ask again for the same command in this session.
    AcceptForSession,
    /// Run it and remember a rule. We keep no exec-policy rules, so this approves this
    /// command only.
    AcceptWithExecpolicyAmendment { execpolicy_amendment: Vec<String> },
    /// A host-level network rule. We have no network approvals: `allow` approves this
    /// command, `deny` declines it.
    ApplyNetworkPolicyAmendment {
        network_policy_amendment: NetworkPolicyAmendment,
    },
    /// Do not run it; the turn goes on.
    Decline,
    /// Do not run it, and interrupt the turn.
    Cancel,
}

/// A network rule the client picked for one host.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct NetworkPolicyAmendment {
    pub host: String,
    pub action: NetworkPolicyRuleAction,
}

/// Whether a network rule allows or denies its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkPolicyRuleAction {
    Allow,
    Deny,
}

/// The reply to `item/commandExecution/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CommandExecutionRequestApprovalResponse {
    pub decision: CommandExecutionApprovalDecision,
}

/// A client's answer to a file-change approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeApprovalDecision {
    /// Apply the patch.
    Accept,
    /// Apply it, and do not ask again for these paths in this session.
    AcceptForSession,
    /// Do not apply it; the turn goes on.
    Decline,
    /// Do not apply it, and interrupt the turn.
    Cancel,
}

/// The reply to `item/fileChange/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct FileChangeRequestApprovalResponse {
    pub decision: FileChangeApprovalDecision,
}

/// `mcpServer/elicitation/request`: an MCP server we are a client of asks the user to
/// fill a form (we relay only the MCP `form` mode).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerElicitationRequestParams {
    pub thread_id: String,
    /// The turn during which the server asked, when known.
    pub turn_id: Option<String>,
    pub server_name: String,
    /// Always `form`.
    pub mode: String,
    pub message: String,
    /// The MCP server's JSON Schema of the answer, passed through as it sent it.
    pub requested_schema: Value,
    /// The MCP server's `_meta`, passed through.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}
