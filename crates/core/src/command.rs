//! One-off commands outside any turn (the v2 `command/exec` method): the shell tool's
//! execution seam — the config's sandbox (fail closed), the credential-free command
//! environment, process-group timeout — without a thread, approvals or events.

use crate::exec::{ExecError, ExecParams, run_exec};
use oi_config::Config;
use oi_protocol::config_types::SandboxPolicy;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What to run and under which limits.
#[derive(Clone, Debug)]
pub struct CommandRequest {
    /// Program and arguments; must not be empty.
    pub argv: Vec<String>,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// `None`: no timeout.
    pub timeout: Option<Duration>,
    /// The confinement; `DangerFullAccess` is the only policy that runs unconfined.
    pub sandbox_policy: SandboxPolicy,
    /// Changes to the computed environment: `Some` sets a variable, `None` removes it.
    pub env: HashMap<String, Option<String>>,
    /// Bytes of each stream returned; `None`: everything the capture kept.
    pub output_cap: Option<usize>,
}

/// Why a command did not run: it never started, so there is no output.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The request's argv named no program.
    #[error("command must not be empty")]
    Empty,
    /// The sandbox refused to confine it (fail closed), with the sandbox's reason.
    #[error("the sandbox refused to run the command: {0}")]
    SandboxRefused(String),
    /// The program could not be started, with the reason from the operating system.
    #[error("{0}")]
    Spawn(String),
}

/// How the command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOutput {
    /// The exit code; 124 after a timeout, 128+N after signal N.
    pub exit_code: i32,
    /// Standard output, lossily decoded, cut to the output cap.
    pub stdout: String,
    /// Standard error, lossily decoded, cut to the output cap.
    pub stderr: String,
    /// Whether the command was killed for running past its timeout.
    pub timed_out: bool,
}

/// Runs `req` with `config`'s environment policy. Errors name why the command did not run
/// (empty argv, the sandbox refused, the program could not start).
pub async fn run_command(
    config: &Config,
    req: CommandRequest,
    cancel: &CancellationToken,
) -> Result<CommandOutput, CommandError> {
    if req.argv.is_empty() {
        return Err(CommandError::Empty);
    }
    let mut env = config.command_env();
    for (k, v) in req.env {
        match v {
            Some(v) => env.insert(k, v),
            None => env.remove(&k),
        };
    }
    // tokio clamps long sleeps, so "no timeout" is a deadline nobody reaches.
    let timeout = req
        .timeout
        .unwrap_or(Duration::from_secs(100 * 365 * 24 * 3600));
    let sandbox = (!matches!(req.sandbox_policy, SandboxPolicy::DangerFullAccess))
        .then(|| crate::sandbox::SandboxScope::with_policy(config, &req.sandbox_policy, &req.cwd));
    let out = run_exec(
        ExecParams {
            argv: &req.argv,
            cwd: &req.cwd,
            timeout,
            sandbox,
            env: Some(&env),
        },
        |_, _| {},
        cancel,
    )
    .await
    .map_err(|e| match e {
        ExecError::Sandbox(m) => CommandError::SandboxRefused(m),
        ExecError::Spawn(m) => CommandError::Spawn(m),
    })?;
    let cap = |s: String| match req.output_cap {
        Some(n) if s.len() > n => {
            let mut end = n;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s[..end].to_string()
        }
        _ => s,
    };
    Ok(CommandOutput {
        exit_code: out.exit_code,
        stdout: cap(out.stdout),
        stderr: cap(out.stderr),
        timed_out: out.timed_out,
    })
}

/// Most bytes of a user's `!command` output the model is given (head and tail kept).
pub const USER_SHELL_CONTEXT_BYTES: usize = 16 * 1024;

/// What the model is told of a command the user ran themselves (`!command` in the TUI,
/// v2 `thread/shellCommand`): the command, its exit code and its output, cut to
/// [`USER_SHELL_CONTEXT_BYTES`] (head and tail), marked as not one of its own tool calls.
pub fn user_shell_context(command: &str, exit_code: i32, output: &str) -> String {
    let output = oi_protocol::truncate::truncate_head_tail(output, USER_SHELL_CONTEXT_BYTES);
    format!(
        "<user_shell_command>\nThe user ran this command in the terminal (not a tool call):\n$ {command}\nexit code {exit_code}\n{output}\n</user_shell_command>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        let home = tempfile::tempdir().unwrap();
        let loaded = oi_config::load_config(oi_config::ConfigLoadOptions {
            home: Some(home.path().to_path_buf()),
            ..Default::default()
        })
        .unwrap();
        loaded.config
    }

    fn req(argv: &[&str]) -> CommandRequest {
        CommandRequest {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: std::env::temp_dir(),
            timeout: Some(Duration::from_secs(30)),
            sandbox_policy: SandboxPolicy::DangerFullAccess,
            env: HashMap::new(),
            output_cap: None,
        }
    }

    #[tokio::test]
    async fn captures_streams_exit_code_env_and_cap() {
        let cancel = CancellationToken::new();
        let mut r = req(&["sh", "-c", "printf \"$GREETING\"; echo oops >&2; exit 3"]);
        r.env.insert("GREETING".into(), Some("hello world".into()));
        r.output_cap = Some(5);
        let out = run_command(&config(), r, &cancel).await.unwrap();
        assert_eq!(out.exit_code, 3);
        assert_eq!(out.stdout, "hello");
        assert_eq!(out.stderr, "oops\n");
        assert!(!out.timed_out);
    }

    #[tokio::test]
    async fn timeout_and_empty_argv() {
        let cancel = CancellationToken::new();
        let mut r = req(&["sleep", "30"]);
        r.timeout = Some(Duration::from_millis(100));
        let out = run_command(&config(), r, &cancel).await.unwrap();
        assert!(out.timed_out);
        assert_eq!(out.exit_code, 124);
        let e = run_command(&config(), req(&[]), &cancel).await.unwrap_err();
        assert!(matches!(e, CommandError::Empty), "{e}");
        assert!(e.to_string().contains("must not be empty"), "{e}");
    }
}
