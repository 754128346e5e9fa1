//! The vocabulary of a tool call that the turn, the answer checks and the hooks share with
//! the tools: a call, its outcome, a refused call's words, argument parsing. A leaf: it
//! knows nothing of how a call runs.

use oi_protocol::models::FunctionCallOutput;

/// One function call from the model: `(call_id, name, arguments)`.
pub(crate) type PendingCall = (String, String, String);

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
        || output == REFUSED_MCP_CALL
        || output == REFUSED_MCP_CALL_IN_TIME
}

/// The names the `shell` tool answers to (its own, and those other harnesses taught models),
/// and the harness profiles' shell tools: their output is laid out the same way.
pub(crate) fn is_shell_tool(name: &str) -> bool {
    matches!(
        name,
        "shell" | "container.exec" | "shell_command" | "exec_command"
    ) || crate::harness::is_shell_tool(name)
}

/// What a refused MCP tool call's output says (the MCP tool's approval, `tools::mcp`).
pub(crate) const REFUSED_MCP_CALL: &str = "user rejected MCP tool call";
pub(crate) const REFUSED_MCP_CALL_IN_TIME: &str = "MCP tool call not approved in time (denied)";

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
        assert!(was_refused(super::REFUSED_MCP_CALL));
        assert!(was_refused(super::REFUSED_MCP_CALL_IN_TIME));
        // Stopping the turn is not a refusal of the work; a command's own words are not one.
        let stopped = refusal_reason(ReviewDecision::Abort);
        assert!(!was_refused(&format!("{COMMAND_NOT_RUN}{stopped}.")));
        assert!(!was_refused("Exit code: 1\nthe user denied it"));
        assert!(!was_refused("command not run: sandbox unavailable"));
    }
}
