//! No command outlives the agent; termination signals end a run cleanly; a thread that
//! cannot be saved is reported. End to end with the real binary and the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Generous: the machine running the tests may be very busy.
const DEADLINE: Duration = Duration::from_secs(60);

fn alive(pid: u32) -> bool {
    // A zombie has an empty command line: count it as gone.
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
}

/// Poll until a `sleep SECONDS` process runs; its pid as the host sees it (a sandboxed
/// command lives in its own PID namespace, so it cannot tell us). `seconds` is unique per
/// test, which makes the process easy to find.
async fn wait_for_sleep(seconds: &str) -> u32 {
    let wanted = format!("sleep\0{seconds}\0").into_bytes();
    let start = Instant::now();
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == wanted) {
                return pid;
            }
        }
        assert!(
            start.elapsed() < DEADLINE,
            "`sleep {seconds}` never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_until_gone(pid: u32, what: &str) {
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < DEADLINE,
            "{what} (pid {pid}) outlived the agent"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The model runs a command whose `sleep` is a grandchild of the agent (`sh` forks it), so
/// a death signal on the direct child alone would not reach it.
fn sleeper_script(seconds: &str) -> MockScript {
    let cmd = format!("sleep {seconds} & wait");
    MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["sh", "-c", cmd]})),
        MockTurn::text("done"),
    ])
}

#[tokio::test]
async fn sigkill_of_exec_kills_the_running_command_sandboxed_or_not() {
    for (sandbox, seconds) in [
        ("danger-full-access", "3001.5"),
        ("workspace-write", "3002.5"),
    ] {
        let env = TestEnv::new(sleeper_script(seconds), WireApi::Chat).await;
        let mut child = env
            .command(&["exec", "-s", sandbox, "-a", "never", "go"])
            .spawn()
            .unwrap();
        let pid = wait_for_sleep(seconds).await;
        assert!(alive(pid));
        child.start_kill().unwrap();
        let _ = child.wait().await;
        wait_until_gone(pid, &format!("the model's sleep under {sandbox}")).await;
    }
}

#[tokio::test]
async fn sigterm_of_exec_stops_the_command_saves_the_thread_and_exits_143() {
    let env = TestEnv::new(sleeper_script("3003.5"), WireApi::Chat).await;
    let child = env
        .command(&["exec", "-s", "danger-full-access", "-a", "never", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = wait_for_sleep("3003.5").await;
    let agent = child.id().unwrap() as i32;
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(agent, libc::SIGTERM);
    }
    let out = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .expect("exec did not exit after SIGTERM")
        .unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    wait_until_gone(pid, "the model's sleep").await;
    // The stored thread ends with the turn closed (aborted), nothing dangling.
    let rollout = rollouts(env.home.path()).pop().expect("no rollout saved");
    let text = read(&rollout);
    let last_turn_event = text
        .lines()
        .rfind(|l| l.contains("\"turn_aborted\"") || l.contains("\"task_complete\""))
        .unwrap_or_default();
    assert!(last_turn_event.contains("turn_aborted"), "{text}");
    assert!(text.contains("function_call_output"), "{text}");
}

#[tokio::test]
async fn sigkill_of_the_agent_kills_mcp_stdio_servers() {
    // Not a real MCP server: it never answers, so the agent keeps waiting for it while we
    // kill the agent. Its `sleep` is a grandchild of the agent.
    let env = TestEnv::new(MockScript::turns([MockTurn::text("hi")]), WireApi::Chat).await;
    let config = env.home.path().join("config.toml");
    let mut text = read(&config);
    text.push_str(
        "\n[mcp_servers.stuck]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 3004.5 & wait\"]\nstartup_timeout_sec = 300\n",
    );
    std::fs::write(&config, text).unwrap();
    let mut child = env
        .command(&["exec", "-s", "danger-full-access", "-a", "never", "go"])
        .spawn()
        .unwrap();
    let pid = wait_for_sleep("3004.5").await;
    assert!(alive(pid));
    child.start_kill().unwrap();
    let _ = child.wait().await;
    wait_until_gone(pid, "the MCP server's child").await;
}

#[tokio::test]
async fn a_sandboxed_command_cannot_stop_an_outside_process() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let mut outside = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    let target = outside.id().to_string();
    let out = env
        .run(&[
            "sandbox",
            "-s",
            "workspace-write",
            "--",
            "kill",
            "-STOP",
            &target,
        ])
        .await;
    let stat = std::fs::read_to_string(format!("/proc/{target}/stat")).unwrap();
    let _ = outside.kill();
    let _ = outside.wait();
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
    assert_ne!(state, 'T', "the outside process was stopped");
}

/// Files the process may write are capped at `bytes` (RLIMIT_FSIZE; writes past it fail
/// with EFBIG, as they would with ENOSPC on a full disk). Works without root or mounts.
fn limit_file_size(cmd: &mut tokio::process::Command, bytes: u64) {
    // SAFETY: setrlimit and signal are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Exceeding the limit fails the write instead of killing the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
}

#[tokio::test]
async fn exec_fails_when_the_thread_cannot_be_saved() {
    // The answer is far larger than what the "disk" holds (and no repetition, which the
    // client would stop as a loop).
    let big: String = (0..100_000).map(|i| format!("{i} ")).collect();
    let env = TestEnv::new(MockScript::turns([MockTurn::text(big)]), WireApi::Chat).await;
    let mut cmd = env.command(&["exec", "-s", "danger-full-access", "-a", "never", "hi"]);
    limit_file_size(&mut cmd, 128 * 1024);
    let out = tokio::time::timeout(DEADLINE, cmd.output())
        .await
        .unwrap()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("was not saved"))
        .unwrap_or_else(|| panic!("no line saying the thread was not saved: {err}"));
    assert!(line.contains("rollout-"), "names where: {line}");
}

#[tokio::test]
async fn sessions_list_works_when_the_index_cannot_be_written() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("first answer")]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&[
            "exec",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "remember me",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The index must be recreated, and nothing can be written.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(env.home.path().join(format!("state.sqlite{suffix}")));
    }
    let mut cmd = env.command(&["sessions", "list", "--json"]);
    limit_file_size(&mut cmd, 0);
    let out = tokio::time::timeout(DEADLINE, cmd.output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("remember me"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("cannot be written"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_thread_that_cannot_be_created_leaves_no_empty_rollout_and_plain_messages() {
    let env = TestEnv::new(MockScript::turns([MockTurn::text("never")]), WireApi::Chat).await;
    let mut cmd = env.command(&["exec", "-s", "danger-full-access", "-a", "never", "hi"]);
    // Not one byte can be written: the index falls back to memory and the thread's first
    // record fails.
    limit_file_size(&mut cmd, 0);
    let out = tokio::time::timeout(DEADLINE, cmd.output())
        .await
        .unwrap()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // The store's fallback is a sentence for the user, not a log line.
    let fallback = err
        .lines()
        .find(|l| l.contains("cannot be written"))
        .unwrap_or_else(|| panic!("no line about the index: {err}"));
    assert!(fallback.starts_with("warning: thread index "), "{fallback}");
    assert!(!err.contains(" WARN "), "no raw log lines: {err}");
    assert_eq!(rollouts(env.home.path()), Vec::<std::path::PathBuf>::new());

    // Later runs have nothing to warn about.
    let out = env.run(&["sessions", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out).trim(), "", "nothing to warn about");
}

fn rollouts(home: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![home.join("sessions")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn sigterm_of_the_mcp_server_stops_running_turns_and_exits_143() {
    use tokio::io::AsyncWriteExt;
    let env = TestEnv::new(sleeper_script("3005.5"), WireApi::Chat).await;
    let mut child = env
        .command(&["mcp-server"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "codex",
        "arguments": {"prompt": "go", "sandbox": "danger-full-access", "approval-policy": "never"}
    }});
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call,
    ];
    for f in frames {
        stdin.write_all(format!("{f}\n").as_bytes()).await.unwrap();
    }
    stdin.flush().await.unwrap();
    let pid = wait_for_sleep("3005.5").await;
    let server = child.id().unwrap() as i32;
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(server, libc::SIGTERM);
    }
    let out = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .expect("the server did not exit after SIGTERM")
        .unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    wait_until_gone(pid, "the turn's sleep").await;
    let rollout = rollouts(env.home.path()).pop().expect("no rollout saved");
    assert!(
        read(&rollout).contains("turn_aborted"),
        "{}",
        read(&rollout)
    );
}
