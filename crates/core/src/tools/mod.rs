//! Tools offered to the model and the router that runs a model's function call.

mod file_io;
mod mcp;
mod mcp_resource;
mod parallel;
mod patch;
mod plan;
mod profile;
pub(crate) mod search;
pub(crate) mod search_history;
mod shell;
mod through_client;
mod viewer;

pub(crate) mod call;

pub(crate) use call::{ToolCall, ToolOutcome};
pub(crate) use mcp::fetch_pending_tasks;
pub(crate) use parallel::{CallsRun, ParkedCalls, run_calls};
pub(crate) use shell::printed_output;

use crate::session::Session;
use oi_protocol::config_types::Harness;
use oi_protocol::models::ToolSpec;
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(crate) fn builtin_tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "shell".into(),
            description: "Runs a command and returns its exit code and output. `command` is an argv array, e.g. [\"bash\", \"-lc\", \"ls -la\"].".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "array", "items": {"type": "string"}, "description": "The command and its arguments."},
                    "workdir": {"type": "string", "description": "Working directory; defaults to the session's working directory."},
                    "timeout_ms": {"type": "number", "description": "Timeout in milliseconds."},
                    "with_escalated_permissions": {"type": "boolean", "description": "Ask the user to run this command outside the sandbox."},
                    "justification": {"type": "string", "description": "One sentence: why the command needs escalated permissions."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "apply_patch".into(),
            description: "Edits files with a patch in the `*** Begin Patch` format (Add File / Update File with @@ hunks / Delete File / Move to).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "input": {"type": "string", "description": "The entire patch, from `*** Begin Patch` to `*** End Patch`."}
                },
                "required": ["input"],
                "additionalProperties": false
            }),
        },
    ]
}

/// Every tool the model may call now: built-ins, then the MCP tools of ready (or cached)
/// servers — or `tool_search` and the tools it loaded, when the MCP schemas would take too
/// much of the context window. Recomputed per request, so tools of late servers join when
/// they are ready.
pub(crate) fn tool_specs(sess: &Session) -> Vec<ToolSpec> {
    let ctx = sess.turn_context();
    let harness = ctx.harness;
    // The plan tool: `update_plan` beside the built-ins, or the profile's own todo tool;
    // `include_plan_tool = false` offers neither.
    let with_plan = ctx.config.include_plan_tool;
    let mut specs = match crate::harness::tool_specs(harness) {
        Some(profile) => {
            let mut specs: Vec<ToolSpec> = profile
                .into_iter()
                .filter(|t| with_plan || !crate::harness::is_todo_tool(&t.name))
                .collect();
            // A profile without a todo tool of its own (SWE-agent's) keeps `update_plan`;
            // `minimal` stays one tool by design.
            let has_todo = specs.iter().any(|t| crate::harness::is_todo_tool(&t.name));
            if with_plan && !has_todo && harness != Harness::Minimal {
                specs.push(plan::spec());
            }
            specs
        }
        None => {
            let mut specs = builtin_tool_specs();
            if with_plan {
                specs.push(plan::spec());
            }
            specs
        }
    };
    specs.extend(crate::skills::tool::spec(sess));
    let mcp = mcp_tool_specs(sess);
    specs.extend(search::offered(sess, mcp, sess.context_window()));
    if let Some(m) = &sess.mcp {
        let with_resources = m.servers_with_resources();
        if !with_resources.is_empty() {
            specs.extend(mcp_resource::specs(&with_resources));
        }
    }
    specs
}

fn mcp_tool_specs(sess: &Session) -> Vec<ToolSpec> {
    sess.mcp
        .as_ref()
        .map(|m| m.tools().iter().map(|t| t.to_tool_spec()).collect())
        .unwrap_or_default()
}

/// Run one function call. Never fails: problems become tool errors the model can read.
pub(crate) async fn dispatch(
    sess: &Arc<Session>,
    call: ToolCall<'_>,
    cancel: &CancellationToken,
) -> ToolOutcome {
    match call.name {
        // Before `shell`'s names: a profile's shell takes a command line, not an argv.
        name if crate::harness::is_profile_tool(name) => profile::handle(sess, &call, cancel).await,
        name if call::is_shell_tool(name) => shell::handle(sess, &call, cancel).await,
        "apply_patch" => patch::handle_tool(sess, &call, cancel).await,
        plan::UPDATE_PLAN => plan::handle(sess, &call),
        name if mcp_resource::is_resource_tool(name) && sess.mcp.is_some() => {
            mcp_resource::handle(sess, &call, cancel).await
        }
        search::TOOL_SEARCH => search::handle(sess, &call, &mcp_tool_specs(sess)),
        crate::skills::tool::LOAD_SKILL => crate::skills::tool::handle(sess, &call).await,
        // Unit tests of turn supervision need a tool that panics; no production build has it.
        #[cfg(test)]
        crate::supervisor::tests::PANICKING_TOOL => panic!("{}", call.arguments),
        other => {
            if let Some(info) = sess.mcp.as_ref().and_then(|m| m.lookup(other)) {
                return mcp::handle(sess, &call, info, cancel).await;
            }
            let names: Vec<String> = tool_specs(sess).into_iter().map(|t| t.name).collect();
            ToolOutcome::err(format!(
                "unknown tool `{other}`; available tools: {}",
                names.join(", ")
            ))
        }
    }
}
