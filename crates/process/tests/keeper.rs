//! The keeper on real processes: exit statuses pass through, pipes close when the command
//! is done, and killing the agent with SIGKILL takes the command's whole group with it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message
#![cfg(target_os = "linux")]

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Env var that turns this test binary into a stand-in "agent" (see `agent_role`).
const ROLE: &str = "OI_PROCESS_TEST_AGENT";

async fn run(script: &str) -> std::process::Output {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    oi_process::supervise(&mut cmd);
    tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("command did not finish")
        .expect("spawn")
}

#[tokio::test]
async fn exit_codes_and_signals_pass_through() {
    let out = run("echo out; echo err >&2; exit 7").await;
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    let out = run("kill -TERM $$").await;
    assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{:?}", out.status);
    // A signal to the whole group is for the command; the keeper outlives it and reports
    // the command's own exit.
    let out = run("trap 'echo caught; exit 3' TERM; kill -TERM 0; sleep 1; exit 9").await;
    assert_eq!(out.status.code(), Some(3), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "caught\n");
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let mut cmd = tokio::process::Command::new("/nonexistent/program");
    oi_process::supervise(&mut cmd);
    let err = cmd.spawn().expect_err("must not spawn");
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test]
async fn the_command_runs_in_its_own_group_led_by_the_spawned_pid() {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", "ps -o pgid= -p $$"]).stdout(Stdio::piped());
    oi_process::supervise(&mut cmd);
    let child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    let out = child.wait_with_output().await.unwrap();
    let pgid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(pgid, pid);
}

fn alive(pid: u32) -> bool {
    // A zombie has no command line left; count it as gone.
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
}

/// Not a test on its own: the "agent" process of `sigkill_of_the_agent_kills_the_command`.
#[tokio::test]
async fn agent_role() {
    if std::env::var_os(ROLE).is_none() {
        return;
    }
    // A grandchild (`sleep` forked by sh), which PR_SET_PDEATHSIG alone would not cover.
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", "sleep 300 & echo $!; wait; echo done"]);
    oi_process::supervise(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let _ = child.wait().await;
}

#[test]
fn sigkill_of_the_agent_kills_the_command() {
    let mut agent = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "agent_role", "--nocapture", "--test-threads=1"])
        .env(ROLE, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(agent.stdout.take().unwrap());
    let mut pid = None;
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0 {
        // libtest may print "test agent_role ... " on the same line first.
        if let Some(Ok(p)) = line.split_whitespace().last().map(str::parse::<u32>) {
            pid = Some(p);
            break;
        }
        line.clear();
    }
    let sleep_pid = pid.expect("the agent never reported its command's pid");
    // `$!` is printed right after the fork; while the child execs `sleep`, its cmdline can
    // read empty for a moment. Wait until it is running before killing the agent.
    let started = Instant::now() + Duration::from_secs(30);
    while !alive(sleep_pid) {
        assert!(
            Instant::now() < started,
            "the command {sleep_pid} never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    agent.kill().unwrap();
    agent.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(sleep_pid) {
        assert!(
            Instant::now() < deadline,
            "sleep {sleep_pid} outlived the agent"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
