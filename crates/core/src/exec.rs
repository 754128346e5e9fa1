//! Running one command: spawn (through the sandbox seam), stream output, enforce the
//! timeout, stop on interrupt, and collect a bounded copy of the output.

use oi_protocol::protocol::ExecOutputStream;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// Exit code reported for a command stopped by its timeout (as `timeout(1)` does).
pub(crate) const TIMEOUT_EXIT_CODE: i32 = 124;
/// Bytes of each stream kept in memory (head + tail); the rest is counted, not stored.
const CAPTURE_LIMIT: usize = 4 * 1024 * 1024;
/// After the process exits, how long to wait for pipes held open by escaped grandchildren.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

pub(crate) struct ExecParams<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub timeout: Duration,
    /// `None`: run without a sandbox (danger-full-access or an approved escalation).
    pub sandbox: Option<crate::sandbox::SandboxScope<'a>>,
    /// The command's whole environment (`[shell_environment_policy]` applied, credentials
    /// removed); `None` inherits this process's environment (tests only).
    pub env: Option<&'a HashMap<String, String>>,
}

pub(crate) struct ExecOutput {
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub aggregated: String,
    pub duration: Duration,
    pub timed_out: bool,
    pub aborted: bool,
}

#[derive(Debug)]
pub(crate) enum ExecError {
    /// The sandbox refused (fail closed); the command did not run.
    Sandbox(String),
    /// The program could not be started.
    Spawn(String),
}

/// Head+tail byte buffer with a count of what was dropped in between.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: usize,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        let half = CAPTURE_LIMIT / 2;
        if self.head.len() < half {
            let n = (half - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        for &b in bytes {
            if self.tail.len() == half {
                self.tail.pop_front();
                self.dropped += 1;
            }
            self.tail.push_back(b);
        }
    }

    fn into_string(self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            out.push_str(&format!("\n[... {} bytes omitted ...]\n", self.dropped));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

fn resolve_program(argv0: &str) -> PathBuf {
    PathBuf::from(argv0)
}

/// Run the command. `on_output` gets every chunk as it arrives (for delta events).
pub(crate) async fn run_exec(
    params: ExecParams<'_>,
    on_output: impl FnMut(ExecOutputStream, &[u8]),
    cancel: &CancellationToken,
) -> Result<ExecOutput, ExecError> {
    run_exec_with_input(params, None, on_output, cancel).await
}

/// [`run_exec`] with `input` written to the command's stdin (then closed); `None`: stdin is
/// `/dev/null`. A command that exits without reading it all is not an error.
pub(crate) async fn run_exec_with_input(
    params: ExecParams<'_>,
    input: Option<Vec<u8>>,
    mut on_output: impl FnMut(ExecOutputStream, &[u8]),
    cancel: &CancellationToken,
) -> Result<ExecOutput, ExecError> {
    let Some(program) = params.argv.first() else {
        return Err(ExecError::Spawn("empty command".into()));
    };
    let mut cmd = command_for(&params, input.is_some())?;
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        ExecError::Spawn(format!(
            "failed to start `{program}` in {}: {e}",
            params.cwd.display()
        ))
    })?;
    let pid = child.id();
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            // A closed pipe (the command did not read) is its choice, not a failure.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(ExecOutputStream, Vec<u8>)>(64);
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(pump(out, ExecOutputStream::Stdout, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(pump(err, ExecOutputStream::Stderr, tx.clone()));
    }
    drop(tx);

    let mut captured = Captured::default();
    let mut take = |stream: ExecOutputStream, bytes: &[u8]| {
        on_output(stream, bytes);
        captured.push(stream, bytes);
    };
    let mut timed_out = false;
    let mut aborted = false;
    let deadline = tokio::time::sleep(params.timeout);
    tokio::pin!(deadline);
    let mut status = None;
    let mut pipes_open = true;
    loop {
        tokio::select! {
            chunk = rx.recv(), if pipes_open => match chunk {
                Some((stream, bytes)) => take(stream, &bytes),
                None => pipes_open = false,
            },
            s = child.wait(), if status.is_none() => {
                status = Some(s);
            }
            _ = &mut deadline, if status.is_none() => {
                timed_out = true;
                kill_group(pid);
            }
            _ = cancel.cancelled(), if status.is_none() => {
                aborted = true;
                kill_group(pid);
            }
        }
        if status.is_some() && !pipes_open {
            break;
        }
        if status.is_some() {
            // The process is gone; give escaped grandchildren holding the pipes a moment.
            let drained = tokio::time::timeout(DRAIN_GRACE, async {
                while let Some((stream, bytes)) = rx.recv().await {
                    take(stream, &bytes);
                }
            })
            .await;
            if drained.is_err() {
                kill_group(pid);
            }
            break;
        }
    }
    for r in readers {
        r.abort();
    }
    let exit_code = match status {
        Some(Ok(s)) => oi_process::exit_code(s),
        Some(Err(_)) | None => -1,
    };
    let exit_code = if timed_out {
        TIMEOUT_EXIT_CODE
    } else {
        exit_code
    };
    Ok(ExecOutput {
        exit_code,
        stdout: captured.stdout.into_string(),
        stderr: captured.stderr.into_string(),
        aggregated: captured.aggregated.into_string(),
        duration: start.elapsed(),
        timed_out,
        aborted,
    })
}

/// The command `params` describe, stdin piped when there is `input`, confined or
/// supervised.
fn command_for(
    params: &ExecParams<'_>,
    piped_input: bool,
) -> Result<tokio::process::Command, ExecError> {
    let Some((program, args)) = params.argv.split_first() else {
        return Err(ExecError::Spawn("empty command".into()));
    };
    let mut cmd = tokio::process::Command::new(resolve_program(program));
    cmd.args(args)
        .current_dir(params.cwd)
        .stdin(if piped_input {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(env) = params.env {
        cmd.env_clear().envs(env);
    }
    // Own process group (so a timeout or interrupt stops everything the command started)
    // under a keeper (so nothing survives the agent); the sandbox installs its own keeper,
    // which also gives a sandboxed command its own PID namespace.
    match &params.sandbox {
        Some(scope) => {
            crate::sandbox::confine(&mut cmd, scope)
                .map_err(|e| ExecError::Sandbox(format!("command not run: {e}")))?;
        }
        None => oi_process::supervise(&mut cmd),
    }
    Ok(cmd)
}

/// Copies one of the child's pipes into `tx`, chunk by chunk, until EOF or the receiver is
/// gone.
fn pump(
    mut pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    stream: ExecOutputStream,
    tx: tokio::sync::mpsc::Sender<(ExecOutputStream, Vec<u8>)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 || tx.send((stream, buf[..n].to_vec())).await.is_err() {
                break;
            }
        }
    })
}

/// A command's output so far: each stream, and both interleaved as they arrived.
#[derive(Default)]
struct Captured {
    stdout: Capture,
    stderr: Capture,
    aggregated: Capture,
}

impl Captured {
    fn push(&mut self, stream: ExecOutputStream, bytes: &[u8]) {
        match stream {
            ExecOutputStream::Stdout => self.stdout.push(bytes),
            ExecOutputStream::Stderr => self.stderr.push(bytes),
        }
        self.aggregated.push(bytes);
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        oi_process::kill_group(pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[tokio::test]
    async fn captures_output_and_exit_code() {
        let a = argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]);
        let mut chunks = 0;
        let out = run_exec(
            ExecParams {
                argv: &a,
                cwd: Path::new("/"),
                timeout: Duration::from_secs(30),
                sandbox: None,
                env: None,
            },
            |_, _| chunks += 1,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(out.exit_code, 3);
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert!(chunks >= 2);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let a = argv(&["sh", "-c", "sleep 30 & sleep 30"]);
        let out = run_exec(
            ExecParams {
                argv: &a,
                cwd: Path::new("/"),
                timeout: Duration::from_millis(200),
                sandbox: None,
                env: None,
            },
            |_, _| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert!(out.timed_out);
        assert_eq!(out.exit_code, TIMEOUT_EXIT_CODE);
        assert!(out.duration < Duration::from_secs(20));
    }

    #[tokio::test]
    async fn sandbox_refusal_does_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let a = argv(&["touch", marker.to_str().unwrap()]);
        let r = run_exec(
            ExecParams {
                argv: &a,
                cwd: dir.path(),
                timeout: Duration::from_secs(5),
                sandbox: Some(crate::sandbox::SandboxScope {
                    policy: &oi_protocol::config_types::SandboxPolicy::ReadOnly,
                    cwd: dir.path(),
                    allow_git_writes: false,
                    read_only: Vec::new(),
                }),
                env: None,
            },
            |_, _| {},
            &CancellationToken::new(),
        )
        .await;
        // Either the sandbox refuses or it confines the write; the file must not appear.
        match r {
            Err(ExecError::Sandbox(_)) => {}
            Ok(o) => assert_ne!(o.exit_code, 0),
            Err(e) => panic!("{e:?}"),
        }
        assert!(!marker.exists());
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::default();
        let big = vec![b'a'; CAPTURE_LIMIT];
        c.push(b"START");
        c.push(&big);
        c.push(b"END");
        let s = c.into_string();
        assert!(s.starts_with("START"));
        assert!(s.ends_with("END"));
        assert!(s.contains("bytes omitted"));
    }
}
