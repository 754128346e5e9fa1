//! The watcher of unsandboxed commands, on real processes: the agent's child is the command
//! itself (no process in between, no extra child under the command), and watchers leave no
//! zombies behind once reaped. Alone in its binary, so no other test's children are counted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message
#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::time::{Duration, Instant};

/// Pids of this process's children, as /proc lists them (zombies included).
fn children_of_this_process() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue; // gone meanwhile
        };
        // Fields after the parenthesised name: state, ppid, ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let ppid: u32 = rest.split(' ').nth(1).unwrap().parse().unwrap();
        if ppid == me {
            out.push(pid);
        }
    }
    out
}

#[tokio::test]
async fn the_spawned_pid_is_the_command_and_no_watcher_is_left_behind() {
    for _ in 0..10 {
        // The shell reports its parent: the agent, with no process in between.
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", "echo $PPID"]).stdout(Stdio::piped());
        oi_process::supervise(&mut cmd);
        let child = cmd.spawn().unwrap();
        let pid = child.id().unwrap();
        let out = child.wait_with_output().await.unwrap();
        assert!(out.status.success(), "{:?}", out.status);
        let parent: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(parent, std::process::id(), "a process between us and {pid}");
    }
    // Each watcher exits with its command and is reaped by init, not left to us.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = children_of_this_process();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "children left behind: {left:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_commands_own_wait_does_not_see_the_watcher() {
    // A program that waits for "all its children" must not wait for the watcher.
    let script =
        "import os\ntry:\n    os.wait()\nexcept ChildProcessError:\n    print('no children')";
    let mut cmd = tokio::process::Command::new("python3");
    cmd.args(["-c", script]).stdout(Stdio::piped());
    oi_process::supervise(&mut cmd);
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("the command's wait() hung on the watcher")
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no children\n");
}
