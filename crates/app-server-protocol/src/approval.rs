//! The replies to our server→client requests: what a client answers to
//! `item/commandExecution/requestApproval`, `item/fileChange/requestApproval` and
//! `mcpServer/elicitation/request` (whose params are here too). The request params of the
//! two approvals live in [`super::wire`] beside `serverRequest/resolved`.

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
    AcceptWithExecpolicyAmendment {
        /// The command prefix the rule would allow.
        execpolicy_amendment: Vec<String>,
    },
    /// A host-level network rule. We have no network approvals: `allow` approves this
    /// command, `deny` declines it.
    ApplyNetworkPolicyAmendment {
        /// The host and whether to allow it.
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
    /// The host name.
    pub host: String,
    /// Allow or deny it.
    pub action: NetworkPolicyRuleAction,
}

/// Whether a network rule allows or denies its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkPolicyRuleAction {
    /// Allow the host.
    Allow,
    /// Deny the host.
    Deny,
}

/// The reply to `item/commandExecution/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CommandExecutionRequestApprovalResponse {
    /// What the user decided.
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
    /// What the user decided.
    pub decision: FileChangeApprovalDecision,
}

/// `mcpServer/elicitation/request`: an MCP server we are a client of asks the user to
/// fill a form (we relay only the MCP `form` mode).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerElicitationRequestParams {
    /// The thread whose MCP server asks.
    pub thread_id: String,
    /// The turn during which the server asked, when known.
    pub turn_id: Option<String>,
    /// The configured MCP server that asks (its key under `mcp_servers`).
    pub server_name: String,
    /// Always `form`.
    pub mode: String,
    /// The server's question, for the user to read.
    pub message: String,
    /// The MCP server's JSON Schema of the answer, passed through as it sent it.
    pub requested_schema: Value,
    /// The MCP server's `_meta`, passed through.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// What the user did with an MCP server's form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpServerElicitationAction {
    /// Submitted the form (`content` holds the answer).
    Accept,
    /// Refused to answer.
    Decline,
    /// Dismissed the form without choosing.
    Cancel,
}

/// The reply to `mcpServer/elicitation/request`, relayed to the MCP server as its
/// `elicitation/create` result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct McpServerElicitationRequestResponse {
    /// What the user did.
    pub action: McpServerElicitationAction,
    /// The answer, shaped by the request's `requestedSchema`; read only with `accept`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// Accepted, not relayed: the MCP server gets the action and the content.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl From<McpServerElicitationRequestResponse> for oi_protocol::protocol::ElicitationResponse {
    /// Content counts only with an accept: a decline or cancel never carries an answer.
    fn from(r: McpServerElicitationRequestResponse) -> Self {
        use oi_protocol::protocol::ElicitationAction as A;
        let action = match r.action {
            McpServerElicitationAction::Accept => A::Accept,
            McpServerElicitationAction::Decline => A::Decline,
            McpServerElicitationAction::Cancel => A::Cancel,
        };
        let content = match action {
            A::Accept => r.content.filter(|c| !c.is_null()),
            _ => None,
        };
        oi_protocol::protocol::ElicitationResponse { action, content }
    }
}
