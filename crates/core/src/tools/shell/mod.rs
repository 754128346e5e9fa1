//! The `shell` tool: approvals, sandboxing, streaming output, result formatting.

mod args;
mod echo_escapes;
mod needs_terminal;
mod same_file;
mod sed_print;

use super::call::{ToolCall, ToolOutcome};
use crate::approval::{
    Asked, CommandDecision, ExecApprovalAsk, ask_exec_approval, assess_command,
    looks_like_sandbox_denial,
};
use crate::exec::{ExecError, ExecOutput, ExecParams, run_exec};
use crate::session::Session;
use args::{command_argv, shell_args, wants_escalation, workdir};
use base64::Engine;
use oi_protocol::parse_command::parse_command;
use oi_protocol::protocol::{
    EventMsg, ExecCommandBeginEvent, ExecCommandEndEvent, ExecCommandOutputDeltaEvent,
    ExecCommandSource, ExecCommandStatus, ReviewDecision,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Delta events per command; beyond this the output is still captured, just not streamed.
const MAX_DELTA_EVENTS: usize = 10_000;

/// Whether a `shell` call may run beside the other calls of its response: it needs no
/// approval and cannot write (the sandbox is read-only, or the command is on the known
/// read-only list), so running it concurrently changes nothing but the wait. Anything
/// unclear (arguments that do not parse, an escalation, an `apply_patch` through the shell,
/// `on-failure`, which may ask to re-run a denied command outside the sandbox) keeps the
/// call in order.
pub(crate) fn runs_alongside(config: &oi_config::Config, arguments: &str) -> bool {
    let Ok(args) = shell_args("shell", arguments) else {
        return false;
    };
    if wants_escalation(&args.with_escalated_permissions) {
        return false;
    }
    let Ok(argv) = command_argv(args.command) else {
        return false;
    };
    argv_runs_alongside(config, &argv)
}

/// [`runs_alongside`] for a command already turned into argv (a harness profile's read,
/// search or shell call without escalation).
pub(crate) fn argv_runs_alongside(config: &oi_config::Config, argv: &[String]) -> bool {
    use oi_protocol::config_types::{AskForApproval, SandboxPolicy};
    if config.approval_policy == AskForApproval::OnFailure
        || oi_apply_patch::extract_from_argv(argv).is_some()
    {
        return false;
    }
    let read_only = matches!(config.sandbox_policy, SandboxPolicy::ReadOnly);
    match assess_command(
        config.approval_policy,
        &config.sandbox_policy,
        argv,
        None,
        |_| false,
    ) {
        CommandDecision::Run { sandboxed } => {
            (sandboxed && read_only) || crate::safety::is_known_safe_command(argv)
        }
        CommandDecision::Ask { .. } | CommandDecision::Reject(_) => false,
    }
}

pub(crate) async fn handle(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let args = match shell_args(call.name, call.arguments) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let argv = match command_argv(args.command) {
        Ok(argv) => argv,
        Err(e) => return e,
    };
    // Small models write `"timeout_ms": 0` for "no timeout": 0 means the default.
    let timeout = args
        .timeout_ms
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis);
    let escalation = wants_escalation(&args.with_escalated_permissions).then(|| {
        args.justification
            .clone()
            .unwrap_or_else(|| "The model asked to run this command outside the sandbox.".into())
    });
    let request = CommandRun {
        argv,
        workdir: args.workdir,
        timeout,
        escalation,
        ask_after_denial: false,
    };
    run_command(sess, call, request, cancel).await
}

/// One command the model asked for, however it asked (`shell`, or a harness profile's shell,
/// read or search tool).
pub(crate) struct CommandRun {
    pub argv: Vec<String>,
    /// Relative to the session's cwd when not absolute.
    pub workdir: Option<String>,
    pub timeout: Option<Duration>,
    /// Asked to run outside the sandbox, with this justification.
    pub escalation: Option<String>,
    /// Under `on-request`, ask to re-run a command the sandbox stopped outside it, as
    /// `on-failure` does: for tools with no way to ask for escalation up front.
    pub ask_after_denial: bool,
}

/// Runs `request` under the approval policy and the sandbox, streaming `exec_command_*`
/// events: the one path of every command the model runs.
pub(crate) async fn run_command(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    request: CommandRun,
    cancel: &CancellationToken,
) -> ToolOutcome {
    use oi_protocol::config_types::AskForApproval;
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let CommandRun {
        argv,
        workdir: dir,
        timeout,
        escalation,
        ask_after_denial,
    } = request;
    let cwd = match workdir(dir.as_deref(), &config.cwd) {
        Ok(cwd) => cwd,
        Err(e) => return e,
    };

    // `apply_patch` invoked through the shell is treated as the apply_patch tool, so it gets
    // the same approval and atomicity guarantees.
    if let Some((patch, dir)) = oi_apply_patch::extract_from_argv(&argv) {
        let dir = dir.map(|d| if d.is_absolute() { d } else { cwd.join(d) });
        return super::patch::handle_patch(
            sess,
            call.turn_id,
            call.call_id,
            &patch,
            dir.as_deref().unwrap_or(&cwd),
            cancel,
        )
        .await;
    }

    // A pipeline writing over a file it reads would empty it first (see `same_file`).
    let argv = same_file::guarded(&argv).unwrap_or(argv);
    // An editor would wait for keys nobody types, after the rest of the command ran.
    if let Some(why) = needs_terminal::refusal(&argv) {
        return ToolOutcome::err(why);
    }

    // No command is killed before a second (small models write a few milliseconds).
    let timeout = timeout.map_or(config.shell_timeout, |t| t.max(Duration::from_secs(1)));
    // A resumed turn whose park asked to re-run this command outside the sandbox: it ran
    // in the sandbox before the turn parked, so only the answered question remains.
    let sandboxed_run = sess.state().sandboxed_runs.remove(call.call_id);
    if let Some(output) = sandboxed_run {
        let failed = ToolOutcome::with_output(output);
        return retry_unsandboxed(sess, call, config, &argv, &cwd, timeout, failed, cancel).await;
    }
    let sandboxed = match approve(sess, call, config, &argv, &cwd, escalation, cancel).await {
        Ok(sandboxed) => sandboxed,
        Err(refusal) => return refusal,
    };

    let out = match run_once(sess, call, &argv, &cwd, timeout, sandboxed, cancel).await {
        Ok(o) => o,
        Err(outcome) => return outcome,
    };
    // on-failure: a command the sandbox stopped may be re-run outside it, if the user agrees.
    let retry_policy = config.approval_policy == AskForApproval::OnFailure
        || (ask_after_denial && config.approval_policy == AskForApproval::OnRequest);
    if sandboxed
        && !out.aborted
        && !out.timed_out
        && retry_policy
        && looks_like_sandbox_denial(out.exit_code, &out.aggregated)
    {
        let failed = finish(out, config.tool_output_max_bytes);
        return retry_unsandboxed(sess, call, config, &argv, &cwd, timeout, failed, cancel).await;
    }
    let note = (out.exit_code == 0)
        .then(|| sed_print::note(&argv, &cwd).or_else(|| echo_escapes::note(&argv, &cwd)))
        .flatten();
    let mut outcome = finish(out, config.tool_output_max_bytes);
    if let Some(note) = note {
        // Above `Output:`, so what the command printed stays as it was.
        let text =
            outcome
                .output
                .text_content()
                .replacen("Output:\n", &format!("{note}\nOutput:\n"), 1);
        outcome.output = oi_protocol::models::FunctionCallOutput::text(text, true);
    }
    outcome
}

/// Applies the approval policy (asking the user when it says so). `Ok(sandboxed)`: run it,
/// inside the sandbox or not; `Err`: the outcome to give the model instead.
async fn approve(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    config: &oi_config::Config,
    argv: &[String],
    cwd: &Path,
    escalation: Option<String>,
    cancel: &CancellationToken,
) -> Result<bool, ToolOutcome> {
    let approved = |unsandboxed_ok: bool| {
        let st = sess.state();
        st.approved_commands.contains(&(argv.to_vec(), false))
            || (unsandboxed_ok && st.approved_commands.contains(&(argv.to_vec(), true)))
    };
    let decision = assess_command(
        config.approval_policy,
        &config.sandbox_policy,
        argv,
        escalation.as_deref(),
        approved,
    );
    match decision {
        CommandDecision::Run { sandboxed } => Ok(sandboxed),
        CommandDecision::Reject(msg) => Err(ToolOutcome::err(msg)),
        CommandDecision::Ask { reason, sandboxed } => {
            let asked = ask_exec_approval(
                sess,
                ExecApprovalAsk {
                    turn_id: call.turn_id,
                    call_id: call.call_id,
                    approval_id: None,
                    argv,
                    cwd,
                    reason,
                },
                cancel,
            )
            .await;
            let d = match asked {
                Asked::Decided(d) => d,
                Asked::Parked(request) => return Err(ToolOutcome::parked(request, None)),
            };
            match refused(sess, call, argv, cwd, d, sandboxed) {
                Some(outcome) => Err(outcome),
                None => Ok(sandboxed),
            }
        }
    }
}

/// `on-failure`: the sandbox stopped the command; ask whether to run it again without the
/// sandbox, and do so if the user agrees. `failed` is the sandboxed run's outcome, what the
/// model gets otherwise.
#[allow(clippy::too_many_arguments)] // the call's whole context, passed through once
async fn retry_unsandboxed(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    config: &oi_config::Config,
    argv: &[String],
    cwd: &Path,
    timeout: Duration,
    mut failed: ToolOutcome,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let retry_id = format!("{}-retry", call.call_id);
    let asked = ask_exec_approval(
        sess,
        ExecApprovalAsk {
            turn_id: call.turn_id,
            call_id: call.call_id,
            approval_id: Some(retry_id),
            argv,
            cwd,
            reason: Some(
                "The command failed in the sandbox. Run it again without the sandbox?".into(),
            ),
        },
        cancel,
    )
    .await;
    let d = match asked {
        Asked::Decided(d) => d,
        Asked::Parked(request) => return ToolOutcome::parked(request, Some(failed.output)),
    };
    if d.is_approved() {
        if d == ReviewDecision::ApprovedForSession {
            sess.state()
                .approved_commands
                .insert((argv.to_vec(), false));
        }
        return match run_once(sess, call, argv, cwd, timeout, false, cancel).await {
            Ok(o) => finish(o, config.tool_output_max_bytes),
            Err(outcome) => outcome,
        };
    }
    failed.abort_turn = d == ReviewDecision::Abort;
    failed
}

/// Handle a non-approval. Returns `None` when approved (and remembers session approvals).
fn refused(
    sess: &Session,
    call: &ToolCall<'_>,
    argv: &[String],
    cwd: &std::path::Path,
    d: ReviewDecision,
    sandboxed: bool,
) -> Option<ToolOutcome> {
    match d {
        ReviewDecision::Approved => None,
        ReviewDecision::ApprovedForSession => {
            sess.state()
                .approved_commands
                .insert((argv.to_vec(), sandboxed));
            None
        }
        ReviewDecision::Denied | ReviewDecision::TimedOut | ReviewDecision::Abort => {
            let why = super::call::refusal_reason(d);
            let parsed = parse_command(argv);
            sess.send(
                call.turn_id,
                EventMsg::ExecCommandEnd(ExecCommandEndEvent {
                    call_id: call.call_id.to_string(),
                    turn_id: call.turn_id.to_string(),
                    command: argv.to_vec(),
                    cwd: cwd.to_path_buf(),
                    parsed_cmd: parsed,
                    source: ExecCommandSource::Agent,
                    stdout: String::new(),
                    stderr: String::new(),
                    aggregated_output: String::new(),
                    exit_code: -1,
                    duration: Duration::ZERO.into(),
                    formatted_output: String::new(),
                    status: ExecCommandStatus::Declined,
                }),
            );
            let mut o = ToolOutcome::err(format!(
                "{}{why}. Do not retry the same command; continue without it or ask the user.",
                super::call::COMMAND_NOT_RUN
            ));
            o.abort_turn = d == ReviewDecision::Abort;
            Some(o)
        }
    }
}

async fn run_once(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    argv: &[String],
    cwd: &std::path::Path,
    timeout: Duration,
    sandboxed: bool,
    cancel: &CancellationToken,
) -> Result<ExecOutput, ToolOutcome> {
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let parsed = parse_command(argv);
    sess.send(
        call.turn_id,
        EventMsg::ExecCommandBegin(ExecCommandBeginEvent {
            call_id: call.call_id.to_string(),
            turn_id: call.turn_id.to_string(),
            command: argv.to_vec(),
            cwd: cwd.to_path_buf(),
            parsed_cmd: parsed.clone(),
            source: ExecCommandSource::Agent,
        }),
    );
    let mut deltas = 0usize;
    let b64 = base64::engine::general_purpose::STANDARD;
    // In the editor's terminal, when the front end's client offers one; confined there by
    // the same policy, or run here.
    let on_client = crate::tools::through_client::run_command(
        sess,
        crate::client_tools::ClientCommand {
            call_id: call.call_id,
            argv,
            cwd,
            sandbox: sandboxed.then_some(&config.sandbox_policy),
            timeout,
        },
        cancel,
    )
    .await;
    // From the turn's config: a policy change made mid-turn applies from the next turn.
    let env = config.command_env();
    let result = match on_client {
        Some(Ok(out)) => Ok(out),
        Some(Err(e)) => Err(ExecError::Spawn(e.to_string())),
        None => {
            run_exec(
                ExecParams {
                    argv,
                    cwd,
                    timeout,
                    sandbox: sandboxed.then(|| crate::sandbox::SandboxScope::of(config)),
                    env: Some(&env),
                },
                |stream, bytes| {
                    if deltas < MAX_DELTA_EVENTS {
                        deltas += 1;
                        sess.send(
                            call.turn_id,
                            EventMsg::ExecCommandOutputDelta(ExecCommandOutputDeltaEvent {
                                call_id: call.call_id.to_string(),
                                stream,
                                chunk: b64.encode(bytes),
                            }),
                        );
                    }
                },
                cancel,
            )
            .await
        }
    };
    let end = |out: &ExecOutput, formatted: String, status| {
        EventMsg::ExecCommandEnd(ExecCommandEndEvent {
            call_id: call.call_id.to_string(),
            turn_id: call.turn_id.to_string(),
            command: argv.to_vec(),
            cwd: cwd.to_path_buf(),
            parsed_cmd: parsed.clone(),
            source: ExecCommandSource::Agent,
            stdout: out.stdout.clone(),
            stderr: out.stderr.clone(),
            aggregated_output: out.aggregated.clone(),
            exit_code: out.exit_code,
            duration: out.duration.into(),
            formatted_output: formatted,
            status,
        })
    };
    match result {
        Ok(out) => {
            let formatted = format_output(&out, config.tool_output_max_bytes);
            let status = if out.exit_code == 0 {
                ExecCommandStatus::Completed
            } else {
                ExecCommandStatus::Failed
            };
            sess.send(call.turn_id, end(&out, formatted, status));
            Ok(out)
        }
        Err(e) => {
            let msg = match e {
                ExecError::Sandbox(m) | ExecError::Spawn(m) => m,
            };
            let out = ExecOutput {
                exit_code: -1,
                stdout: String::new(),
                stderr: msg.clone(),
                aggregated: msg.clone(),
                duration: Duration::ZERO,
                timed_out: false,
                aborted: false,
            };
            sess.send(
                call.turn_id,
                end(&out, msg.clone(), ExecCommandStatus::Failed),
            );
            Err(ToolOutcome::err(msg))
        }
    }
}

fn format_output(out: &ExecOutput, max_bytes: usize) -> String {
    let body = oi_protocol::truncate::truncate_head_tail(&out.aggregated, max_bytes);
    let mut s = format!(
        "Exit code: {}\nWall time: {:.1} seconds\n",
        out.exit_code,
        out.duration.as_secs_f64()
    );
    if out.timed_out {
        s.push_str("The command timed out and was killed; pass a larger `timeout_ms` if it needs more time.\n");
    }
    if out.aborted {
        s.push_str("The command was stopped because the user interrupted the turn.\n");
    }
    s.push_str("Output:\n");
    s.push_str(&body);
    s
}

/// What the command printed, from a `shell` output as [`format_output`] writes it (the
/// header lines off).
pub(crate) fn printed_output(tool_output: &str) -> &str {
    tool_output
        .split_once("\nOutput:\n")
        .map_or(tool_output, |(_, body)| body)
}

fn finish(out: ExecOutput, max_bytes: usize) -> ToolOutcome {
    let text = format_output(&out, max_bytes);
    let mut o = ToolOutcome::with_output(oi_protocol::models::FunctionCallOutput::text(
        text,
        out.exit_code == 0,
    ));
    o.abort_turn = out.aborted;
    o
}
