//! Whether an MCP tool call needs the user's approval.

use crate::McpToolInfo;
use oi_config::mcp::McpApprovalMode;
use oi_protocol::config_types::{AskForApproval, SandboxPolicy};

/// Decide whether calling `tool` must ask the user first.
///
/// * `prompt` → always; `approve` → never; `writes` → unless annotated `readOnlyHint: true`.
/// * `auto` → the active policy decides:
///   - `never`: no prompt. That policy means "never ask"; MCP servers run outside our sandbox
///     whatever the sandbox policy is, so the sandbox cannot make a call safer. Users who want
///     a tool gated under `never` set `prompt` or `writes` — the engine then declines those
///     calls, because nobody can be asked.
///   - otherwise: annotations decide. `destructiveHint: true` → ask; else `readOnlyHint: true`
///     → no; else ask if `destructiveHint` or `openWorldHint` (both default to true per the MCP
///     spec) is true.
///
/// The sandbox policy is accepted so the rule can grow (e.g. full access auto-approving under
/// other policies) without an API change; today it only matters through the policy.
pub fn needs_approval(tool: &McpToolInfo, policy: AskForApproval, sandbox: &SandboxPolicy) -> bool {
    let _ = sandbox;
    match tool.approval_mode {
        McpApprovalMode::Prompt => true,
        McpApprovalMode::Approve => false,
        McpApprovalMode::Writes => !hint(tool, "readOnlyHint").unwrap_or(false),
        McpApprovalMode::Auto => {
            if policy == AskForApproval::Never {
                return false;
            }
            annotations_need_approval(tool)
        }
    }
}

fn hint(tool: &McpToolInfo, key: &str) -> Option<bool> {
    tool.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(serde_json::Value::as_bool)
}

/// The MCP annotation rule: destructive → yes; read-only → no; else destructive or open-world
/// (each defaulting to true).
pub fn annotations_need_approval(tool: &McpToolInfo) -> bool {
    if hint(tool, "destructiveHint") == Some(true) {
        return true;
    }
    if hint(tool, "readOnlyHint") == Some(true) {
        return false;
    }
    hint(tool, "destructiveHint").unwrap_or(true) || hint(tool, "openWorldHint").unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(mode: McpApprovalMode, annotations: Option<serde_json::Value>) -> McpToolInfo {
        McpToolInfo {
            qualified_name: "mcp__s__t".into(),
            server: "s".into(),
            tool: "t".into(),
            description: String::new(),
            input_schema: json!({"type":"object","properties":{}}),
            annotations,
            approval_mode: mode,
        }
    }

    const WW: fn() -> SandboxPolicy = SandboxPolicy::workspace_write;

    #[test]
    fn prompt_and_approve_ignore_everything_else() {
        let ro = Some(json!({"readOnlyHint": true}));
        for p in AskForApproval::ALL {
            assert!(needs_approval(
                &tool(McpApprovalMode::Prompt, ro.clone()),
                p,
                &WW()
            ));
            assert!(!needs_approval(
                &tool(
                    McpApprovalMode::Approve,
                    Some(json!({"destructiveHint": true}))
                ),
                p,
                &SandboxPolicy::ReadOnly
            ));
        }
    }

    #[test]
    fn writes_asks_unless_read_only() {
        let p = AskForApproval::OnRequest;
        assert!(needs_approval(
            &tool(McpApprovalMode::Writes, None),
            p,
            &WW()
        ));
        assert!(needs_approval(
            &tool(
                McpApprovalMode::Writes,
                Some(json!({"readOnlyHint": false}))
            ),
            p,
            &WW()
        ));
        assert!(!needs_approval(
            &tool(McpApprovalMode::Writes, Some(json!({"readOnlyHint": true}))),
            AskForApproval::Never,
            &WW()
        ));
    }

    #[test]
    fn auto_follows_annotations() {
        let p = AskForApproval::OnRequest;
        let auto = |a| needs_approval(&tool(McpApprovalMode::Auto, a), p, &WW());
        assert!(
            auto(None),
            "no annotations: destructive and open-world by default"
        );
        assert!(!auto(Some(json!({"readOnlyHint": true}))));
        assert!(auto(Some(
            json!({"readOnlyHint": true, "destructiveHint": true})
        )));
        assert!(
            auto(Some(json!({"destructiveHint": false}))),
            "open world by default"
        );
        assert!(!auto(Some(
            json!({"destructiveHint": false, "openWorldHint": false})
        )));
    }

    #[test]
    fn auto_never_asks_under_never() {
        for sb in [
            SandboxPolicy::DangerFullAccess,
            SandboxPolicy::ReadOnly,
            WW(),
        ] {
            assert!(!needs_approval(
                &tool(
                    McpApprovalMode::Auto,
                    Some(json!({"destructiveHint": true}))
                ),
                AskForApproval::Never,
                &sb
            ));
        }
    }
}
