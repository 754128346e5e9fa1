//! The `shell` tool: approvals, sandboxing, streaming output, result formatting.

use super::{ToolCall, ToolOutcome};
use crate::approval::{
    Asked, CommandDecision, ExecApprovalAsk, ask_exec_approval, assess_command,
    looks_like_sandbox_denial,
};
use crate::exec::{ExecError, ExecOutput, ExecParams, run_exec};
use crate::session::Session;
use base64::Engine;
use oi_protocol::parse_command::parse_command;
use oi_protocol::protocol::{
    EventMsg, ExecCommandBeginEvent, ExecCommandEndEvent, ExecCommandOutputDeltaEvent,
    ExecCommandSource, ExecCommandStatus, ReviewDecision,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Delta events per command; beyond this the output is still captured, just not streamed.
const MAX_DELTA_EVENTS: usize = 10_000;

#[derive(Deserialize)]
#[serde(untagged)]
enum CommandArg {
    Argv(Vec<String>),
    /// Open models often send a string; run it with bash.
    Script(String),
}

#[derive(Deserialize)]
struct ShellArgs {
    /// `cmd`: Codex 0.171's `exec_command` spelling, which models trained on it send.
    #[serde(alias = "cmd")]
    command: CommandArg,
    #[serde(default)]
    workdir: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default, alias = "timeout")]
    _timeout_alias: Option<serde_json::Value>,
    #[serde(default, alias = "sandbox_permissions")]
    with_escalated_permissions: Option<serde_json::Value>,
    #[serde(default)]
    justification: Option<String>,
}

fn wants_escalation(v: &Option<serde_json::Value>) -> bool {
    match v {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::String(s)) => s == "require_escalated" || s == "true",
        _ => false,
    }
}

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
    finish(out, config.tool_output_max_bytes)
}

/// Option keys of a `shell` call, as they may stray into the argv list.
const OPTION_KEYS: &[&str] = &[
    "workdir",
    "timeout_ms",
    "timeout",
    "justification",
    "with_escalated_permissions",
    "sandbox_permissions",
];

/// A `shell` call's arguments in the shapes models send, not only the schema's: an argv list
/// followed by an options object (`["ls"], {"workdir": "src"}`), options inside the argv
/// list (`["ls", {"workdir": "src"}]`, or `"workdir": "src"` written into the list), the
/// whole arguments as the argv list, numbers as argv words, and an argv list sent as a JSON
/// string (vLLM with Qwen3-Coder). The error is one plain sentence for the model, never a
/// parser's type name.
fn shell_args(tool: &str, raw: &str) -> Result<ShellArgs, ToolOutcome> {
    let invalid =
        |message: String| ToolOutcome::err(format!("invalid arguments for `{tool}`: {message}"));
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    let values = json_values(raw)
        .or_else(|| json_values(&options_out_of_argv(raw)?))
        .ok_or_else(|| {
            invalid(format!(
                "the arguments are not JSON ({}). Send an object such as {{\"command\": [\"ls\", \"-la\"], \"workdir\": \"src\"}}",
                one_line(raw)
            ))
        })?;
    let mut obj = Map::new();
    for value in values {
        merge_call_value(&mut obj, value);
    }
    let command = obj.remove("command").or_else(|| obj.remove("cmd"));
    let mut options = Map::new();
    let command = command.map(|c| argv_value(c, &mut options));
    for (k, v) in options {
        obj.entry(k).or_insert(v);
    }
    if let Some(command) = command {
        obj.insert("command".into(), command);
    }
    serde_json::from_value::<ShellArgs>(Value::Object(obj.clone())).map_err(|e| {
        let got = obj.get("command").map_or("nothing".to_string(), |c| one_line(&c.to_string()));
        invalid(if obj.contains_key("command") {
            format!(
                "`command` must be a list of strings such as [\"ls\", \"-la\"], or one command line as a string; got {got}"
            )
        } else if e.to_string().contains("missing field") {
            "`command` is missing. Send an object such as {\"command\": [\"ls\", \"-la\"]}".to_string()
        } else {
            format!("{e}. Send an object such as {{\"command\": [\"ls\", \"-la\"]}}")
        })
    })
}

/// `raw` as one JSON value, or several written one after another (with or without commas
/// between them).
fn json_values(raw: &str) -> Option<Vec<Value>> {
    let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(raw)
        .into_iter::<Value>()
        .collect();
    if let Ok(values) = values
        .map_err(drop)
        .and_then(|v| if v.is_empty() { Err(()) } else { Ok(v) })
    {
        return Some(values);
    }
    match serde_json::from_str::<Value>(&format!("[{raw}]")) {
        Ok(Value::Array(items)) if !items.is_empty() => Some(items),
        _ => None,
    }
}

/// Merges one JSON value of a call's arguments: an object's keys, or an array or string as
/// the command when there is none yet (an array may itself end with an options object).
fn merge_call_value(obj: &mut Map<String, Value>, value: Value) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                obj.entry(k).or_insert(v);
            }
        }
        Value::Array(items) if !obj.contains_key("command") => {
            obj.insert("command".into(), Value::Array(items));
        }
        Value::String(s) if !obj.contains_key("command") => {
            obj.insert("command".into(), Value::String(s));
        }
        _ => {}
    }
}

/// The command as argv words: objects inside it are options (moved to `options`), a lone
/// nested list is the list, numbers and booleans are words, and a string that holds a JSON
/// list of strings is that list.
fn argv_value(command: Value, options: &mut Map<String, Value>) -> Value {
    match command {
        Value::String(s) => {
            let t = s.trim();
            if t.starts_with('[')
                && let Ok(Value::Array(items)) = serde_json::from_str::<Value>(t)
                && !items.is_empty()
                && items.iter().all(Value::is_string)
            {
                return Value::Array(items);
            }
            Value::String(s)
        }
        Value::Array(items) => {
            let mut words = Vec::new();
            for item in items {
                match item {
                    Value::String(_) => words.push(item),
                    Value::Number(n) => words.push(Value::String(n.to_string())),
                    Value::Bool(b) => words.push(Value::String(b.to_string())),
                    Value::Object(m) => {
                        for (k, v) in m {
                            options.entry(k).or_insert(v);
                        }
                    }
                    Value::Array(inner) if inner.iter().all(Value::is_string) => {
                        words.extend(inner)
                    }
                    Value::Array(_) | Value::Null => {}
                }
            }
            Value::Array(words)
        }
        other => other,
    }
}

/// `{"command": ["ls", "workdir": "src"]}` (an option key written inside the argv list,
/// which is not JSON) with the option moved after the list: `{"command": ["ls"],
/// "workdir": "src"}`. `None` when there is no such key to move.
fn options_out_of_argv(raw: &str) -> Option<String> {
    let open = raw.find("\"command\"").or_else(|| raw.find("\"cmd\""))?;
    let start = open + raw[open..].find('[')?;
    let bytes = raw.as_bytes();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut end = None;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    let inner = &raw[start + 1..end];
    let cut = OPTION_KEYS
        .iter()
        .filter_map(|k| inner.find(&format!("\"{k}\"")))
        .min()?;
    // The option and everything after it in the list were meant as keys of the object.
    let words = inner[..cut].trim_end().trim_end_matches(',');
    let moved = &inner[cut..];
    Some(format!(
        "{}[{words}], {moved}{}",
        &raw[..start],
        &raw[end + 1..]
    ))
}

fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 120 {
        return flat;
    }
    let cut: String = flat.chars().take(120).collect();
    format!("{cut}…")
}

/// The argv to run: an array as is, a string as a `bash -lc` script (open models often send
/// one). Empty either way is the model's mistake, explained.
fn command_argv(command: CommandArg) -> Result<Vec<String>, ToolOutcome> {
    match command {
        CommandArg::Argv(v) if !v.is_empty() => Ok(shell_syntax_as_script(v)),
        CommandArg::Script(s) if !s.trim().is_empty() => {
            Ok(vec!["bash".to_string(), "-lc".to_string(), s])
        }
        _ => Err(ToolOutcome::err(
            "`command` is empty; pass an argv array such as [\"ls\", \"-la\"]",
        )),
    }
}

/// Shell operators given as separate argv words (`["echo", "hi", ">", "f"]`), or a whole
/// command line as the only word (`["echo hi > f"]`), which small models often send: run
/// through bash, as they meant, instead of failing or echoing the operator. Decided before
/// approval, so the user approves what really runs.
fn shell_syntax_as_script(argv: Vec<String>) -> Vec<String> {
    const OPERATORS: &[&str] = &[
        ">", ">>", "<", "|", "||", "&&", ";", "2>", "2>&1", "&>", "2>>", "|&",
    ];
    let script = match argv.as_slice() {
        [program, ..] if oi_protocol::parse_command::is_shell(program) => return argv,
        [only] if only.trim().contains(char::is_whitespace) && !Path::new(only).exists() => {
            only.clone()
        }
        words if words[1..].iter().any(|w| OPERATORS.contains(&w.as_str())) => words
            .iter()
            .map(|w| {
                if OPERATORS.contains(&w.as_str()) {
                    w.clone()
                } else {
                    shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned())
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => return argv,
    };
    vec!["bash".to_string(), "-lc".to_string(), script]
}

/// The directory to run in: `workdir` (relative to the session's cwd), or the cwd itself.
fn workdir(workdir: Option<&str>, session_cwd: &Path) -> Result<PathBuf, ToolOutcome> {
    let cwd = match workdir {
        Some(w) if !w.trim().is_empty() => {
            let p = PathBuf::from(w);
            if p.is_absolute() {
                p
            } else {
                session_cwd.join(p)
            }
        }
        _ => session_cwd.to_path_buf(),
    };
    if !cwd.is_dir() {
        return Err(ToolOutcome::err(format!(
            "workdir {} does not exist or is not a directory",
            cwd.display()
        )));
    }
    Ok(cwd)
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
            let why = super::refusal_reason(d);
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
                super::COMMAND_NOT_RUN
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
    let on_client = crate::client_tools::run_command(
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

#[cfg(test)]
mod tests {
    use super::{ShellArgs, command_argv, shell_syntax_as_script};

    fn shell_args(raw: &str) -> Result<ShellArgs, String> {
        super::shell_args("shell", raw).map_err(|e| e.output.text_content())
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn shell_syntax_in_argv_runs_through_bash() {
        assert_eq!(
            shell_syntax_as_script(argv(&["echo", "hi there", ">", "hello.txt"])),
            argv(&["bash", "-lc", "echo 'hi there' > hello.txt"])
        );
        assert_eq!(
            shell_syntax_as_script(argv(&["echo hi > hello.txt"])),
            argv(&["bash", "-lc", "echo hi > hello.txt"])
        );
        assert_eq!(
            shell_syntax_as_script(argv(&["cat", "a", "|", "wc", "-l"])),
            argv(&["bash", "-lc", "cat a | wc -l"])
        );
    }

    #[test]
    fn plain_argv_and_shells_are_left_alone() {
        for words in [
            &["ls", "-la"][..],
            &["bash", "-lc", "echo hi > f"],
            &["grep", "-r", "a > b", "."],
            &["/bin/echo"],
        ] {
            assert_eq!(shell_syntax_as_script(argv(words)), argv(words));
        }
    }

    #[test]
    fn codex_exec_command_arguments_are_understood() {
        // Codex 0.171's `exec_command` sends the script as `cmd`, with fields of its own.
        let args: ShellArgs = serde_json::from_str(
            r#"{"cmd": "touch approved.txt", "yield_time_ms": 1000, "max_output_tokens": 100}"#,
        )
        .unwrap();
        let Ok(argv) = command_argv(args.command) else {
            panic!("no argv");
        };
        assert_eq!(argv.last().map(String::as_str), Some("touch approved.txt"));
    }

    fn argv_of(raw: &str) -> Vec<String> {
        let args = shell_args(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        command_argv(args.command).unwrap_or_else(|_| panic!("{raw}: no argv"))
    }

    /// Issue 43 items 3 and 5: shapes that came back to the model as "data did not match
    /// any variant of untagged enum CommandArg".
    #[test]
    fn argv_lists_with_options_around_or_inside_them_are_run() {
        for raw in [
            r#"["ls", "-la"], {"workdir": "src"}"#,
            r#"{"command": ["ls", "-la"]}, {"workdir": "src"}"#,
            r#"{"command": ["ls", "-la", {"workdir": "src"}]}"#,
            r#"{"command": ["ls", "-la", "workdir": "src"]}"#,
            r#"[["ls", "-la"], {"workdir": "src"}]"#,
        ] {
            assert_eq!(argv_of(raw), argv(&["ls", "-la"]), "{raw}");
            let args = shell_args(raw).unwrap();
            assert_eq!(args.workdir.as_deref(), Some("src"), "{raw}");
        }
        // vLLM with Qwen3-Coder: the argv list as a JSON string.
        assert_eq!(
            argv_of(r#"{"command": "[\"python3\", \"t.py\"]"}"#),
            argv(&["python3", "t.py"])
        );
        assert_eq!(
            argv_of(r#"{"command": ["head", "-n", 5, "a.txt"]}"#),
            argv(&["head", "-n", "5", "a.txt"])
        );
        // What cannot be a command is said plainly.
        let err = match shell_args(r#"{"command": {"program": "ls"}}"#) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert!(
            err.starts_with("invalid arguments for `shell`: `command` must be a list of strings"),
            "{err}"
        );
        assert!(!err.contains("untagged"), "{err}");
        let err = match shell_args(r#"{"workdir": "src"}"#) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert!(err.contains("`command` is missing"), "{err}");
    }
}
