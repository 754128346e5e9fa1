//! Running the `[hooks]` commands (configured in `oi_config::hooks`).
//!
//! A hook is a shell command line (`sh -c`) that gets the event as one JSON object on stdin,
//! in the shape Codex and Claude Code send (`session_id`, `cwd`, `hook_event_name`,
//! `tool_name`, `tool_input`, …), so their hook scripts run unchanged. It runs like
//! `notify`: outside the sandbox (it is the user's own program, or one of a project config
//! the user accepted, whose named files are checked against their pins before every run),
//! with the environment commands get (credentials removed), in its own process group under
//! `oi-process` (it cannot outlive the agent), killed at its `timeout`, its output kept
//! head+tail.
//!
//! * `PreToolUse` runs before a call (before its approval) and may block it: exit code 2
//!   (the reason on stderr), or `{"decision":"block","reason":…}`, or
//!   `{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":…}}` on
//!   stdout. The model gets the reason as the call's output; the call does not run.
//! * `PostToolUse` runs after it with `tool_response`; a reason it gives (the same forms, or
//!   `additionalContext`) is added to the output the model reads.
//! * `SessionStart` (before the first turn's first request: its output is context for the
//!   model) and `Stop` (when a turn has its answer: it may send the model back to work) are
//!   run by the turn, see [`lifecycle`].
//!
//! A hook that fails, times out or prints what is not JSON does not block anything: a
//! warning names it (as in Codex, only an explicit block blocks).

pub(crate) mod lifecycle;
mod payload;
mod report;

use crate::session::Session;
use crate::tools::call::{ToolCall, ToolOutcome};
use oi_config::hooks::{HookCommand, HookEvent};
use oi_protocol::protocol::{EventMsg, HookOutputKind, HookRunStatus, WarningEvent};
use report::RunReport;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(crate) use payload::tool_identity;

/// How much of what a hook prints is kept for the model or a warning.
const REASON_MAX_BYTES: usize = 8 * 1024;
/// The exit code that blocks (Codex's and Claude Code's).
const BLOCK_EXIT_CODE: i32 = 2;
/// How an output blocked by a hook begins.
pub(crate) const BLOCKED_BY_HOOK: &str = "blocked by a PreToolUse hook: ";

/// What one hook run ended with.
#[derive(Debug)]
pub(crate) enum HookResult {
    /// Ran and exited 0; `stdout` is what it printed.
    Ok { stdout: String },
    /// Asked to block (exit 2, or a block/deny decision), with its reason.
    Block { reason: String },
    /// Did not run, failed, or timed out: the warning to show.
    Failed { warning: String },
}

/// Where and how hooks run: what the session's config says, taken once.
pub(crate) struct HookEnv {
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
}

impl HookEnv {
    pub(crate) fn from_config(config: &oi_config::Config) -> Self {
        Self {
            cwd: config.cwd.clone(),
            env: config.command_env(),
        }
    }
}

/// Runs `hook` with `payload` on stdin and reads what it answered.
pub(crate) async fn run(
    hook: &HookCommand,
    payload: &Value,
    env: &HookEnv,
    cancel: &CancellationToken,
) -> HookResult {
    if let Some(pins) = hook.pins.clone() {
        // A script a command of this session rewrote is not what the user accepted.
        let (argv, cwd) = (hook.argv(), env.cwd.clone());
        match tokio::task::spawn_blocking(move || pins.verify(&argv, &cwd)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return HookResult::Failed {
                    warning: format!("{} not run: {e}", hook.describe()),
                };
            }
            Err(e) => {
                return HookResult::Failed {
                    warning: format!(
                        "{} not run: its files could not be checked: {e}",
                        hook.describe()
                    ),
                };
            }
        }
    }
    let argv = vec!["sh".to_string(), "-c".to_string(), hook.command.clone()];
    let params = crate::exec::ExecParams {
        argv: &argv,
        cwd: &env.cwd,
        timeout: hook.timeout,
        sandbox: None,
        env: Some(&env.env),
    };
    let input = payload.to_string().into_bytes();
    let out = match crate::exec::run_exec_with_input(params, Some(input), |_, _| {}, cancel).await {
        Ok(out) => out,
        Err(e) => {
            return HookResult::Failed {
                warning: format!("{} could not start: {e:?}", hook.describe()),
            };
        }
    };
    if out.timed_out {
        return HookResult::Failed {
            warning: format!(
                "{} did not finish within {} s and was stopped; raise its `timeout` in config.toml if it needs longer",
                hook.describe(),
                hook.timeout.as_secs()
            ),
        };
    }
    if out.aborted {
        return HookResult::Failed {
            warning: format!("{} was stopped: the turn was interrupted", hook.describe()),
        };
    }
    let stderr = bounded(&out.stderr);
    match out.exit_code {
        0 => HookResult::Ok { stdout: out.stdout },
        BLOCK_EXIT_CODE => HookResult::Block {
            reason: if stderr.is_empty() {
                bounded(&out.stdout)
            } else {
                stderr
            },
        },
        code => HookResult::Failed {
            warning: format!(
                "{} exited with {code}{}",
                hook.describe(),
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {stderr}")
                }
            ),
        },
    }
}

fn bounded(text: &str) -> String {
    oi_protocol::truncate::truncate_head_tail(text.trim(), REASON_MAX_BYTES)
}

/// The JSON object a hook printed on stdout, if it printed one.
fn answer_of(stdout: &str) -> Option<serde_json::Map<String, Value>> {
    let text = stdout.trim();
    if !text.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()?
        .as_object()
        .cloned()
}

/// The reason a hook's JSON answer gives for blocking (Codex's and Claude Code's forms).
fn block_reason(answer: &serde_json::Map<String, Value>) -> Option<String> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    if let Some(s) = specific
        && s.get("permissionDecision").and_then(Value::as_str) == Some("deny")
    {
        return Some(text(s.get("permissionDecisionReason")).unwrap_or_default());
    }
    if answer.get("decision").and_then(Value::as_str) == Some("block") {
        return Some(text(answer.get("reason")).unwrap_or_default());
    }
    if answer.get("continue").and_then(Value::as_bool) == Some(false) {
        return Some(text(answer.get("stopReason")).unwrap_or_default());
    }
    None
}

fn warn(sess: &Session, turn_id: &str, message: String) {
    tracing::warn!("{message}");
    sess.send(turn_id, EventMsg::Warning(WarningEvent { message }));
}

/// A tool hook that did not run right: its run ends `failed`, and the user is warned.
fn failed(sess: &Session, turn_id: &str, report: RunReport, warning: String) {
    report.finish(
        sess,
        HookRunStatus::Failed,
        [(HookOutputKind::Error, warning.clone())],
    );
    warn(sess, turn_id, warning);
}

/// Runs the `PreToolUse` hooks that match `call`; `Some` is the outcome of a blocked call
/// (its output is the reason, for the model), `None` lets it run.
pub(crate) async fn before_tool(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    cancel: &CancellationToken,
) -> Option<ToolOutcome> {
    let ctx = sess.turn_context();
    let config = &ctx.config;
    if !config.hooks.has(HookEvent::PreToolUse) {
        return None;
    }
    let (tool_name, tool_input) = tool_identity(call.name, call.arguments);
    let names = [tool_name.as_str(), call.name];
    let hooks: Vec<HookCommand> = config
        .hooks
        .matching(HookEvent::PreToolUse, Some(&names))
        .cloned()
        .collect();
    if hooks.is_empty() {
        return None;
    }
    let env = HookEnv::from_config(config);
    let event = payload::tool_event(
        sess,
        config,
        HookEvent::PreToolUse,
        call,
        &tool_name,
        &tool_input,
        None,
    );
    for hook in &hooks {
        let report = RunReport::start(sess, Some(call.turn_id), hook);
        let reason = match run(hook, &event, &env, cancel).await {
            HookResult::Ok { stdout } => answer_of(&stdout).as_ref().and_then(block_reason),
            HookResult::Block { reason } => Some(reason),
            HookResult::Failed { warning } => {
                failed(sess, call.turn_id, report, warning);
                continue;
            }
        };
        let Some(reason) = reason else {
            report.finish(sess, HookRunStatus::Completed, []);
            continue;
        };
        let reason = if reason.trim().is_empty() {
            format!("{} gave no reason", hook.describe())
        } else {
            bounded(&reason)
        };
        report.finish(
            sess,
            HookRunStatus::Blocked,
            [(HookOutputKind::Stop, reason.clone())],
        );
        warn(
            sess,
            call.turn_id,
            format!("{} blocked `{}`: {reason}", hook.describe(), call.name),
        );
        return Some(ToolOutcome::err(format!(
            "{BLOCKED_BY_HOOK}{reason}. The call did not run; do not retry it unchanged."
        )));
    }
    None
}

/// Runs the `PostToolUse` hooks that match `call`, with its output; what they say for the
/// model is added to that output.
pub(crate) async fn after_tool(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    outcome: &mut ToolOutcome,
    cancel: &CancellationToken,
) {
    if outcome.parked.is_some() {
        return;
    }
    let ctx = sess.turn_context();
    let config = &ctx.config;
    if !config.hooks.has(HookEvent::PostToolUse) {
        return;
    }
    let (tool_name, tool_input) = tool_identity(call.name, call.arguments);
    let names = [tool_name.as_str(), call.name];
    let hooks: Vec<HookCommand> = config
        .hooks
        .matching(HookEvent::PostToolUse, Some(&names))
        .cloned()
        .collect();
    if hooks.is_empty() {
        return;
    }
    let env = HookEnv::from_config(config);
    let response = outcome.output.text_content();
    let event = payload::tool_event(
        sess,
        config,
        HookEvent::PostToolUse,
        call,
        &tool_name,
        &tool_input,
        Some(&response),
    );
    let mut notes = Vec::new();
    for hook in &hooks {
        let report = RunReport::start(sess, Some(call.turn_id), hook);
        let mut said = Vec::new();
        match run(hook, &event, &env, cancel).await {
            HookResult::Ok { stdout } => {
                if let Some(answer) = answer_of(&stdout) {
                    let context = answer
                        .get("hookSpecificOutput")
                        .and_then(|s| s.get("additionalContext"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    said.extend(
                        block_reason(&answer)
                            .filter(|r| !r.trim().is_empty())
                            .map(|r| (HookOutputKind::Feedback, r)),
                    );
                    said.extend(
                        context
                            .filter(|c| !c.trim().is_empty())
                            .map(|c| (HookOutputKind::Context, c)),
                    );
                }
            }
            HookResult::Block { reason } if !reason.trim().is_empty() => {
                said.push((HookOutputKind::Feedback, reason))
            }
            HookResult::Block { .. } => {}
            HookResult::Failed { warning } => {
                failed(sess, call.turn_id, report, warning);
                continue;
            }
        }
        let said: Vec<(HookOutputKind, String)> = said
            .into_iter()
            .map(|(k, text)| (k, bounded(&text)))
            .collect();
        notes.extend(said.iter().map(|(_, text)| text.clone()));
        report.finish(sess, HookRunStatus::Completed, said);
    }
    if !notes.is_empty() {
        let note = notes;
        outcome
            .output
            .content
            .push(oi_protocol::models::ContentItem::InputText {
                text: format!("\n\nPostToolUse hook: {}", note.join("\n")),
            });
    }
}

/// The session's working folder, for payloads.
fn cwd_of(config: &oi_config::Config) -> &Path {
    &config.cwd
}
