//! Launching stdio servers: a cleared environment, their own process group, and a kill that
//! does not rely on the server honouring stdin EOF.

use crate::connect_error::ConnectError;
use oi_config::mcp::{
    EnvRefError, McpEnvVarSource, McpServerTransportConfig, expand_env_refs, resolve_env_value,
};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::watch;

/// Host variables every stdio server gets (when set), before `env_vars` and `env`.
pub const BASE_ENV_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
];

/// How long a child gets between SIGTERM and SIGKILL on shutdown.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(2);
const STDERR_TAIL_LINES: usize = 20;

/// Program, arguments, environment and cwd, with every reference resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LaunchSpec {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

/// Resolve a stdio config against the host environment (`lookup`) and the session cwd.
pub(crate) fn launch_spec(
    server: &str,
    transport: &McpServerTransportConfig,
    session_cwd: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<LaunchSpec, ConnectError> {
    let McpServerTransportConfig::Stdio {
        command,
        args,
        env,
        env_vars,
        cwd,
    } = transport
    else {
        return Err(ConnectError::Config(format!(
            "MCP server `{server}` is not a stdio server"
        )));
    };
    let field = |name: String| {
        move |e: EnvRefError| ConnectError::Config(format!("mcp_servers.{server}.{name}: {e}"))
    };
    let program = expand_env_refs(command, lookup).map_err(field("command".into()))?;
    let args = args
        .iter()
        .enumerate()
        .map(|(i, a)| expand_env_refs(a, lookup).map_err(field(format!("args[{i}]"))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut child_env = BTreeMap::new();
    for name in BASE_ENV_VARS {
        if let Some(v) = lookup(name) {
            child_env.insert((*name).to_string(), v);
        }
    }
    for var in env_vars {
        if var.source == Some(McpEnvVarSource::Remote) {
            return Err(ConnectError::Config(format!(
                "mcp_servers.{server}.env_vars: entry `{}` uses source `remote`, which requires a remote execution environment; MCP servers run locally here, so use source = \"local\"",
                var.name
            )));
        }
        if let Some(v) = lookup(&var.name) {
            child_env.insert(var.name.clone(), v);
        }
    }
    for (k, v) in env {
        let value = resolve_env_value(v, lookup).map_err(field(format!("env.{k}")))?;
        child_env.insert(k.clone(), value);
    }
    let cwd = match cwd {
        Some(dir) => {
            let dir = PathBuf::from(
                expand_env_refs(&dir.to_string_lossy(), lookup).map_err(field("cwd".into()))?,
            );
            if dir.is_absolute() {
                dir
            } else {
                session_cwd.join(dir)
            }
        }
        None => session_cwd.to_path_buf(),
    };
    Ok(LaunchSpec {
        program,
        args,
        env: child_env,
        cwd,
    })
}

/// A running stdio child. Dropping it SIGKILLs the whole process group if still running.
pub(crate) struct ChildProcess {
    pid: i32,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// `true` once the child's stderr reached its end (everything it wrote is in the tail).
    stderr_closed: watch::Receiver<bool>,
}

/// Spawn the child; returns it plus its (stdout, stdin) for the transport.
pub(crate) fn spawn(
    server: &str,
    spec: &LaunchSpec,
) -> Result<(ChildProcess, ChildStdout, ChildStdin), ConnectError> {
    if !spec.cwd.is_dir() {
        return Err(ConnectError::Config(format!(
            "working directory `{}` does not exist; fix `cwd` in [mcp_servers.{server}]",
            spec.cwd.display()
        )));
    }
    // Own process group (shutdown signals reach `npx` and the `node` it starts alike), watched
    // (see `oi-process`): if we die without a chance to clean up, the whole group goes with us.
    let mut cmd = oi_process::command(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(&spec.env)
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        ConnectError::Spawn(match e.kind() {
            std::io::ErrorKind::NotFound => not_found(&spec.program, spec.env.get("PATH")),
            std::io::ErrorKind::PermissionDenied => {
                format!("could not start `{}`: permission denied", spec.program)
            }
            _ => format!("could not start `{}`: {e}", spec.program),
        })
    })?;
    let pid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .ok_or_else(|| {
            ConnectError::Spawn(format!(
                "`{}` exited before it could be tracked",
                spec.program
            ))
        })?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| ConnectError::Spawn("child stdout was not captured".to_string()))?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| ConnectError::Spawn("child stdin was not captured".to_string()))?;
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    let (stderr_done, stderr_closed) = watch::channel(false);
    if let Some(stderr) = child.stderr.take() {
        let tail = stderr_tail.clone();
        let name = server.to_string();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "mcp_server_stderr", server = %name, "{line}");
                if let Ok(mut t) = tail.lock() {
                    if t.len() == STDERR_TAIL_LINES {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
            let _ = stderr_done.send(true);
        });
    } else {
        let _ = stderr_done.send(true);
    }
    let (tx, rx) = watch::channel(None);
    let group = pid;
    tokio::spawn(async move {
        let status = child.wait().await;
        // The server is gone; whatever it left in its group (which may hold our pipes open,
        // hiding the EOF) goes with it.
        // SAFETY: plain syscall on the process group we created.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        if let Ok(status) = status {
            let _ = tx.send(Some(status));
        }
    });
    Ok((
        ChildProcess {
            pid,
            exit: rx,
            stderr_tail,
            stderr_closed,
        },
        stdout,
        stdin,
    ))
}

impl ChildProcess {
    pub(crate) fn pid(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// The exit status, once the child has exited.
    pub(crate) fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Resolves when the child exits.
    pub(crate) async fn exited(&self) {
        let mut rx = self.exit.clone();
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// Waits (at most `limit`) for the child to exit and for everything it wrote to stderr to
    /// be read, so that a message about its death can quote its last words: the reader runs
    /// on its own task and may lag behind the exit.
    pub(crate) async fn settle(&self, limit: Duration) {
        let mut closed = self.stderr_closed.clone();
        let _ = tokio::time::timeout(limit, async {
            self.exited().await;
            let _ = closed.wait_for(|done| *done).await;
        })
        .await;
    }

    /// The last lines the server wrote to stderr, joined.
    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    fn signal_group(&self, sig: i32) {
        // SAFETY: plain syscall; a negative pid addresses the process group we created.
        unsafe {
            libc::kill(-self.pid, sig);
        }
    }

    /// SIGTERM the group, wait up to `grace` for the leader, then SIGKILL the group so no
    /// grandchild survives.
    pub(crate) async fn terminate(&self, grace: Duration) {
        if self.exit_status().is_none() {
            self.signal_group(libc::SIGTERM);
            let _ = tokio::time::timeout(grace, self.exited()).await;
        }
        self.signal_group(libc::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(1), self.exited()).await;
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.exit_status().is_none() {
            self.signal_group(libc::SIGKILL);
        }
    }
}

/// Describe an exit status for error messages.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

/// "Program not found", with what was searched in a line a user can read (a whole `PATH`
/// is often hundreds of characters of noise).
fn not_found(program: &str, path: Option<&String>) -> String {
    if program.contains('/') {
        return format!("could not start `{program}`: no such file; check the path in `command`");
    }
    match path.map(|p| p.split(':').filter(|d| !d.is_empty()).count()) {
        None | Some(0) => format!(
            "could not start `{program}`: program not found, and the server's PATH is empty; give the full path in `command`, or add the directory with `env = {{ PATH = \"…\" }}`"
        ),
        Some(n) => format!(
            "could not start `{program}`: program not found in the {n} directories of PATH; install it, or give its full path in `command`"
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn program_not_found_does_not_print_the_whole_path() {
        let long = (0..40)
            .map(|i| format!("/opt/tool{i}/bin"))
            .collect::<Vec<_>>()
            .join(":");
        let m = super::not_found("uvx", Some(&long));
        assert!(m.contains("40 directories"), "{m}");
        assert!(!m.contains("/opt/tool3"), "{m}");
        assert!(super::not_found("./srv", Some(&long)).contains("check the path"));
        assert!(super::not_found("uvx", None).contains("PATH is empty"));
    }

    use super::*;
    use oi_config::mcp::{McpEnvVar, McpServerConfig};

    #[test]
    fn environment_is_whitelist_then_env_vars_then_env() {
        let mut cfg = McpServerConfig::stdio("${TOOL_DIR}/srv", vec!["--root=${HOME}".into()]);
        if let McpServerTransportConfig::Stdio { env, env_vars, .. } = &mut cfg.transport {
            env.insert("TOKEN".into(), "env:SECRET".into());
            env.insert("PATH".into(), "/override".into());
            env_vars.push(McpEnvVar {
                name: "EXTRA".into(),
                source: None,
            });
        }
        let host = |k: &str| match k {
            "HOME" => Some("/home/u".to_string()),
            "PATH" => Some("/usr/bin".to_string()),
            "SECRET" => Some("s3".to_string()),
            "EXTRA" => Some("x".to_string()),
            "TOOL_DIR" => Some("/opt".to_string()),
            "UNRELATED" => Some("nope".to_string()),
            _ => None,
        };
        let spec = launch_spec("s", &cfg.transport, Path::new("/work"), &host).unwrap();
        assert_eq!(spec.program, "/opt/srv");
        assert_eq!(spec.args, vec!["--root=/home/u"]);
        assert_eq!(spec.cwd, PathBuf::from("/work"));
        let keys: Vec<_> = spec.env.keys().cloned().collect();
        assert_eq!(keys, vec!["EXTRA", "HOME", "PATH", "TOKEN"]);
        assert_eq!(spec.env["PATH"], "/override", "env wins over the whitelist");
        assert_eq!(spec.env["TOKEN"], "s3");
    }

    #[test]
    fn remote_env_var_and_missing_secret_are_errors() {
        let mut cfg = McpServerConfig::stdio("srv", vec![]);
        if let McpServerTransportConfig::Stdio { env, .. } = &mut cfg.transport {
            env.insert("TOKEN".into(), "env:MISSING".into());
        }
        let e = launch_spec("s", &cfg.transport, Path::new("/"), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("mcp_servers.s.env.TOKEN:"), "{e}");
        assert!(e.contains("MISSING"), "{e}");

        let mut cfg = McpServerConfig::stdio("srv", vec![]);
        if let McpServerTransportConfig::Stdio { env_vars, .. } = &mut cfg.transport {
            env_vars.push(McpEnvVar {
                name: "R".into(),
                source: Some(McpEnvVarSource::Remote),
            });
        }
        let e = launch_spec("s", &cfg.transport, Path::new("/"), &|_| None).unwrap_err();
        assert!(matches!(e, ConnectError::Config(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("uses source `remote`"), "{e}");
    }

    #[test]
    fn relative_cwd_is_under_the_session_cwd() {
        let mut cfg = McpServerConfig::stdio("srv", vec![]);
        if let McpServerTransportConfig::Stdio { cwd, .. } = &mut cfg.transport {
            *cwd = Some(PathBuf::from("sub"));
        }
        let spec = launch_spec("s", &cfg.transport, Path::new("/work"), &|_| None).unwrap();
        assert_eq!(spec.cwd, PathBuf::from("/work/sub"));
    }
}
