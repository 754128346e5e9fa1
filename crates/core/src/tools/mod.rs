//! Tools offered to the model and the router that runs a model's function call.

mod file_io;
mod mcp;
mod mcp_resource;
mod parallel;
mod patch;
mod plan;
mod profile;
pub(crate) mod search;
mod shell;
mod viewer;

pub(crate) use mcp::fetch_pending_tasks;
pub(crate) use parallel::{CallsRun, ParkedCalls, PendingCall, run_calls};
pub(crate) use shell::printed_output;

/// Why a call the approval policy asked about was not run, as its output tells the model.
/// The answer checks read these words back ([`was_refused`]): a task left undone because the
/// user said no is the user's decision, not the model's failure.
pub(crate) fn refusal_reason(d: oi_protocol::protocol::ReviewDecision) -> &'static str {
    use oi_protocol::protocol::ReviewDecision;
    match d {
        ReviewDecision::TimedOut => REFUSED_TIMED_OUT,
        ReviewDecision::Abort => "the user stopped the turn",
        _ => REFUSED_BY_USER,
    }
}

const REFUSED_BY_USER: &str = "the user denied it";
const REFUSED_TIMED_OUT: &str = "no approval arrived in time, so it was denied";
/// How a refused command's and a refused patch's outputs begin, before the reason.
pub(crate) const COMMAND_NOT_RUN: &str = "command not run: ";
pub(crate) const CHANGE_NOT_APPLIED: &str = "change not applied: ";

/// Whether a call's output is the refusal its approval gave (the user said no, or no answer
/// came). Only the outputs the tools write for a refusal count: a command that merely
/// printed these words did not run into one.
pub(crate) fn was_refused(output: &str) -> bool {
    let reason = output
        .strip_prefix(COMMAND_NOT_RUN)
        .or_else(|| output.strip_prefix(CHANGE_NOT_APPLIED));
    reason.is_some_and(|r| r.starts_with(REFUSED_BY_USER) || r.starts_with(REFUSED_TIMED_OUT))
        || output == mcp::REFUSED_MCP_CALL
        || output == mcp::REFUSED_MCP_CALL_IN_TIME
}

/// The names the `shell` tool answers to (its own, and those other harnesses taught models),
/// and the harness profiles' shell tools: their output is laid out the same way.
pub(crate) fn is_shell_tool(name: &str) -> bool {
    matches!(
        name,
        "shell" | "container.exec" | "shell_command" | "exec_command"
    ) || crate::harness::is_shell_tool(name)
}

use crate::session::Session;
use oi_protocol::config_types::Harness;
use oi_protocol::models::{FunctionCallOutput, ToolSpec};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Result of one tool call.
pub(crate) struct ToolOutcome {
    pub output: FunctionCallOutput,
    /// The user chose "abort": end the turn after recording this output.
    pub abort_turn: bool,
    /// The call waits for an approval the turn parks: it has no output yet (`output` is
    /// not recorded) and the turn stops (see `parking`).
    pub parked: Option<Box<ParkedAsk>>,
}

/// What a parked call waits for.
pub(crate) struct ParkedAsk {
    pub request: oi_protocol::protocol::ParkedRequest,
    /// For a request to run again outside the sandbox a command the sandbox stopped: the
    /// output of that sandboxed run, which the model gets if the answer is no (the command
    /// is not run again inside the sandbox when the turn resumes).
    pub sandboxed_output: Option<FunctionCallOutput>,
}

impl ToolOutcome {
    pub(crate) fn ok(text: impl Into<String>) -> Self {
        Self::with_output(FunctionCallOutput::text(text, true))
    }

    pub(crate) fn err(text: impl Into<String>) -> Self {
        Self::with_output(FunctionCallOutput::text(text, false))
    }

    pub(crate) fn with_output(output: FunctionCallOutput) -> Self {
        Self {
            output,
            abort_turn: false,
            parked: None,
        }
    }

    /// The call waits for `request`, which the turn parks.
    pub(crate) fn parked(
        request: oi_protocol::protocol::ParkedRequest,
        sandboxed_output: Option<FunctionCallOutput>,
    ) -> Self {
        Self {
            output: FunctionCallOutput::text("waiting for approval", false),
            abort_turn: false,
            parked: Some(Box::new(ParkedAsk {
                request,
                sandboxed_output,
            })),
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct ToolCall<'a> {
    pub turn_id: &'a str,
    pub call_id: &'a str,
    pub name: &'a str,
    pub arguments: &'a str,
}

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
        name if is_shell_tool(name) => shell::handle(sess, &call, cancel).await,
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

/// Parse tool arguments, turning bad JSON into a message the model can act on.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    raw: &str,
    example: &str,
) -> Result<T, ToolOutcome> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    serde_json::from_str(raw).map_err(|e| {
        ToolOutcome::err(format!(
            "invalid arguments for `{tool}`: {e}. Send a JSON object such as {example}"
        ))
    })
}

#[cfg(test)]
mod refusal_tests {
    use super::{CHANGE_NOT_APPLIED, COMMAND_NOT_RUN, refusal_reason, was_refused};
    use oi_protocol::protocol::ReviewDecision;

    #[test]
    fn the_outputs_of_refused_calls_are_recognised_and_nothing_else() {
        for d in [ReviewDecision::Denied, ReviewDecision::TimedOut] {
            let why = refusal_reason(d);
            assert!(was_refused(&format!(
                "{COMMAND_NOT_RUN}{why}. Do not retry."
            )));
            assert!(was_refused(&format!(
                "{CHANGE_NOT_APPLIED}{why}. No file was changed."
            )));
        }
        assert!(was_refused(super::mcp::REFUSED_MCP_CALL));
        assert!(was_refused(super::mcp::REFUSED_MCP_CALL_IN_TIME));
        // Stopping the turn is not a refusal of the work; a command's own words are not one.
        let stopped = refusal_reason(ReviewDecision::Abort);
        assert!(!was_refused(&format!("{COMMAND_NOT_RUN}{stopped}.")));
        assert!(!was_refused("Exit code: 1\nthe user denied it"));
        assert!(!was_refused("command not run: sandbox unavailable"));
    }
}
