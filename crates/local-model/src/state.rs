//! The client side: finding the running server of a home, or starting one.

use crate::{Installed, LocalModelError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// What a running server wrote about itself (`server.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerState {
    /// The daemon's pid (it owns the `llama-server` process).
    pub pid: u32,
    /// The loopback port the server listens on.
    pub port: u16,
    /// The OpenAI-compatible base URL, `http://127.0.0.1:PORT/v1`.
    pub url: String,
    /// The GGUF file it serves.
    pub model: PathBuf,
    /// Unix seconds.
    pub started_at: i64,
}

/// How long a start may take: loading 1.1 GB from a cold disk on a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(600);
/// How often a starting server is looked at.
const POLL: Duration = Duration::from_millis(200);

pub(crate) fn state_dir(home: &Path) -> PathBuf {
    home.join("local-model")
}

pub(crate) fn state_file(dir: &Path) -> PathBuf {
    dir.join("server.json")
}

pub(crate) fn used_file(dir: &Path) -> PathBuf {
    dir.join("used")
}

pub(crate) fn log_file(dir: &Path) -> PathBuf {
    dir.join("server.log")
}

fn state_error(path: &Path) -> impl Fn(std::io::Error) -> LocalModelError + '_ {
    move |source| LocalModelError::State {
        path: path.to_path_buf(),
        source,
    }
}

/// The state a server wrote, if the file is there and whole.
pub(crate) fn read_state(dir: &Path) -> Option<ServerState> {
    let text = std::fs::read_to_string(state_file(dir)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether process `pid` exists.
pub(crate) fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: kill(2) with signal 0 only checks that the process exists.
        pid > 0 && unsafe { libc::kill(pid, 0) } == 0
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// `GET /health` answered 200 (the model is loaded).
pub(crate) async fn healthy(port: u16) -> bool {
    let Ok(client) = oi_http::client_builder()
        .no_proxy()
        .timeout(Duration::from_secs(3))
        .build()
    else {
        return false;
    };
    client
        .get(format!("http://127.0.0.1:{port}/health"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

/// The server of `home` when it is running and answers.
pub async fn status(home: &Path) -> Option<ServerState> {
    let state = read_state(&state_dir(home))?;
    (alive(state.pid) && healthy(state.port).await).then_some(state)
}

/// The URL of the server of `home` when one runs, marked as used now (so a run that only
/// needs the server already running takes no install step and no lock).
pub async fn reuse(home: &Path) -> Option<String> {
    let state = status(home).await?;
    touch_used(&state_dir(home));
    Some(state.url)
}

/// Stops the server of `home`, if one runs; `true` when one was stopped.
pub async fn stop(home: &Path) -> bool {
    let dir = state_dir(home);
    let Some(state) = read_state(&dir) else {
        return false;
    };
    if !alive(state.pid) {
        let _ = std::fs::remove_file(state_file(&dir));
        return false;
    }
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(state.pid) {
        // SAFETY: kill(2) asks our own daemon (its pid from the state file) to stop.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    // The daemon stops its server and exits; wait for that, bounded.
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(state.pid) && Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
    }
    true
}

/// Marks the server of `dir` as used now (the daemon's idle clock restarts).
pub(crate) fn touch_used(dir: &Path) {
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(used_file(dir))
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
}

/// The base URL of a server for `home` serving `installed`: the running one, or a new one
/// started as a daemon (`program local-model serve …`, `program` being this binary) that
/// stops after `idle` unused. Starts are serialized by a lock, so two runs starting at once
/// share one server.
pub async fn ensure_running(
    home: &Path,
    installed: &Installed,
    program: &Path,
    idle: Duration,
) -> Result<String, LocalModelError> {
    let dir = state_dir(home);
    std::fs::create_dir_all(&dir).map_err(state_error(&dir))?;
    let lock_path = dir.join("server.lock");
    let lock = {
        let path = lock_path.clone();
        tokio::task::spawn_blocking(move || {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)?;
            file.lock()?;
            Ok::<_, std::io::Error>(file)
        })
        .await
        .map_err(|e| state_error(&lock_path)(std::io::Error::other(e)))?
        .map_err(state_error(&lock_path))?
    };
    if let Some(state) = read_state(&dir)
        && state.model == installed.model
        && alive(state.pid)
        && healthy(state.port).await
    {
        touch_used(&dir);
        drop(lock);
        return Ok(state.url);
    }
    let _ = std::fs::remove_file(state_file(&dir));
    let url = start(&dir, installed, program, idle).await?;
    touch_used(&dir);
    drop(lock);
    Ok(url)
}

/// A free loopback port (the kernel's pick; the server binds it right after).
fn free_port() -> std::io::Result<u16> {
    let socket = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(socket.local_addr()?.port())
}

async fn start(
    dir: &Path,
    installed: &Installed,
    program: &Path,
    idle: Duration,
) -> Result<String, LocalModelError> {
    let log = log_file(dir);
    let start_failed = |detail: String| LocalModelError::Start {
        log: log.clone(),
        detail,
    };
    let port = free_port().map_err(|e| start_failed(format!("no free loopback port ({e})")))?;
    // A new server, a new log: the last one's is stale.
    let log_out = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&log)
        .map_err(state_error(&log))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(["local-model", "serve", "--state-dir"])
        .arg(dir)
        .arg("--server")
        .arg(&installed.server)
        .arg("--gguf")
        .arg(&installed.model)
        .args(["--port", &port.to_string()])
        .args(["--idle-secs", &idle.as_secs().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_out);
    detach(&mut cmd);
    let mut daemon = cmd
        .spawn()
        .map_err(|e| start_failed(format!("cannot run {} ({e})", program.display())))?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(state) = read_state(dir)
            && state.pid == daemon.id()
            && healthy(state.port).await
        {
            return Ok(state.url);
        }
        if let Ok(Some(status)) = daemon.try_wait() {
            return Err(start_failed(format!(
                "it exited ({status}): {}",
                log_tail(&log)
            )));
        }
        if Instant::now() > deadline {
            return Err(start_failed(format!(
                "it did not answer within {} s",
                START_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The daemon leaves our session and process group: it must outlive this run (the next run
/// reuses it) and not get the terminal's Ctrl-C or hang-up. It stops itself when idle.
fn detach(cmd: &mut std::process::Command) {
    #[cfg(unix)]
    {
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(cmd, || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(unix))]
    let _ = cmd;
}

/// The last lines of the server's log, for an error.
pub(crate) fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    if tail.is_empty() {
        "its log is empty".to_string()
    } else {
        tail.join(" | ")
    }
}
