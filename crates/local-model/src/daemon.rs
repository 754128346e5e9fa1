//! The daemon side (`interpreter local-model serve`): run `llama-server`, say where it is,
//! and stop it once it has been idle long enough.

use crate::CONTEXT_TOKENS;
use crate::state::{ServerState, healthy, read_state, state_file, used_file};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

/// What `interpreter local-model serve` was started with (by `ensure_running`).
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// `<home>/local-model`.
    pub state_dir: PathBuf,
    /// The `llama-server` executable.
    pub server: PathBuf,
    /// The GGUF model file it serves.
    pub model: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// Stop after this long with no request and no run starting.
    pub idle: Duration,
    /// The model name the server answers to (`llama-server -a`).
    pub alias: String,
}

/// How often the daemon looks at the server.
const TICK: Duration = Duration::from_secs(5);
/// How long the model may take to load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs the server until it has been idle for `opts.idle` (or the daemon is told to stop,
/// or the server dies). Returns the exit code. Its stderr is the server's log.
pub async fn serve(opts: ServeOptions) -> i32 {
    let threads = threads();
    let bin_dir = opts.server.parent().unwrap_or(Path::new("."));
    let library_path = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) if !old.is_empty() => {
            let mut p = bin_dir.as_os_str().to_owned();
            p.push(":");
            p.push(old);
            p
        }
        _ => bin_dir.as_os_str().to_owned(),
    };
    // The server never outlives its daemon.
    let mut cmd = oi_process::command(&opts.server);
    cmd.arg("-m")
        .arg(&opts.model)
        .args(["-a", &opts.alias, "--host", "127.0.0.1"])
        .args(["--port", &opts.port.to_string()])
        .args(["-c", &CONTEXT_TOKENS.to_string()])
        .args(["-t", &threads.to_string()])
        // One slot: the whole window for one request, and one prompt cache that a new run
        // on the same prefix reuses.
        .args(["-np", "1", "--jinja", "--no-webui"])
        .args(extra_server_args())
        .env("LD_LIBRARY_PATH", library_path)
        .stdin(Stdio::null());
    let mut server = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("local-model: cannot run {}: {e}", opts.server.display());
            return 1;
        }
    };
    let server_pid = server.id();
    let stop = |code: i32| {
        if let Some(pid) = server_pid {
            oi_process::kill_group(pid);
        }
        code
    };
    let loaded = Instant::now();
    while !healthy(opts.port).await {
        if let Ok(Some(status)) = server.try_wait() {
            eprintln!("local-model: llama-server exited while loading the model ({status})");
            return 1;
        }
        if loaded.elapsed() > LOAD_TIMEOUT {
            eprintln!("local-model: llama-server did not load the model in time");
            return stop(1);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let state = ServerState {
        pid: std::process::id(),
        port: opts.port,
        url: format!("http://127.0.0.1:{}/v1", opts.port),
        model: opts.model.clone(),
        started_at: unix_now(),
    };
    if let Err(e) = write_state(&opts.state_dir, &state) {
        eprintln!("local-model: cannot write the server's state: {e}");
        return stop(1);
    }
    eprintln!(
        "local-model: serving {} at {} (stops after {} s unused)",
        opts.model.display(),
        state.url,
        opts.idle.as_secs()
    );
    let code = watch(&opts, &mut server).await;
    // Only our own state is removed: a newer server may have replaced it.
    if read_state(&opts.state_dir).is_some_and(|s| s.pid == state.pid) {
        let _ = std::fs::remove_file(state_file(&opts.state_dir));
    }
    stop(code)
}

/// Waits for the server to go idle, die, or a stop signal. The exit code.
async fn watch(opts: &ServeOptions, server: &mut tokio::process::Child) -> i32 {
    #[cfg(unix)]
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("local-model: cannot listen for SIGTERM: {e}");
            return 1;
        }
    };
    let mut last_active = Instant::now();
    let mut seen_used = modified(&used_file(&opts.state_dir));
    loop {
        #[cfg(unix)]
        let stopped = term.recv();
        #[cfg(not(unix))]
        let stopped = std::future::pending::<Option<()>>();
        tokio::select! {
            _ = stopped => {
                eprintln!("local-model: stopping (asked to)");
                return 0;
            }
            status = server.wait() => {
                eprintln!("local-model: llama-server exited ({status:?})");
                return 1;
            }
            _ = tokio::time::sleep(TICK) => {}
        }
        let used = modified(&used_file(&opts.state_dir));
        if used != seen_used {
            seen_used = used;
            last_active = Instant::now();
        }
        if busy(opts.port).await {
            last_active = Instant::now();
        }
        if last_active.elapsed() >= opts.idle {
            eprintln!(
                "local-model: stopping after {} s unused",
                opts.idle.as_secs()
            );
            return 0;
        }
    }
}

/// Whether the server may be working: `GET /slots` did not answer plainly that no slot is
/// processing. (The server answers it between batches, so while it works through a long
/// prompt the question waits; a wait or any other doubt counts as busy, so a request is
/// never cut off by the idle stop.)
async fn busy(port: u16) -> bool {
    let Ok(client) = oi_http::client_builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
    else {
        return true;
    };
    let Ok(resp) = client
        .get(format!("http://127.0.0.1:{port}/slots"))
        .send()
        .await
    else {
        return true;
    };
    let Ok(slots) = resp.json::<serde_json::Value>().await else {
        return true;
    };
    match slots.as_array() {
        Some(slots) => slots
            .iter()
            .any(|s| s.get("is_processing").and_then(serde_json::Value::as_bool) != Some(false)),
        None => true,
    }
}

/// Threads for the model: `OI_LOCAL_MODEL_THREADS`, else one less than the cores (at least
/// one). llama.cpp's threads wait for each other at every layer, so one thread the system
/// takes away stalls all of them: measured on two cores shared with a build, one thread
/// generated 1.2 tokens/s where two made 0.2. The core left over runs the agent and its
/// commands.
fn threads() -> usize {
    if let Some(n) = std::env::var("OI_LOCAL_MODEL_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n;
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    cores.saturating_sub(1).max(1)
}

/// More `llama-server` options from `OI_LOCAL_MODEL_SERVER_ARGS`, split on whitespace and
/// put after ours (a later option wins in llama.cpp): `--temp 0 --seed 42` makes the built-in
/// model's answers repeatable, as the real-model tests need.
fn extra_server_args() -> Vec<String> {
    std::env::var("OI_LOCAL_MODEL_SERVER_ARGS")
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Writes `server.json` whole (a temporary file, then a rename).
fn write_state(dir: &Path, state: &ServerState) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(state).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".server.json.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, state_file(dir))
}
