//! Git state of a working directory, recorded in `session_meta`.

use crate::types::GitInfo;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long all git calls together may take; a slow or hung git (network filesystem,
/// credential prompt) must not delay starting a thread.
const GIT_BUDGET: Duration = Duration::from_secs(2);

/// Commit, branch and `origin` URL of the repository containing `cwd`.
/// `None` outside a repository, when git is not installed, or when git is too slow.
/// Blocks (it runs git): call it on a blocking thread.
pub fn collect_git_info(cwd: &Path) -> Option<GitInfo> {
    let deadline = Instant::now() + GIT_BUDGET;
    let inside = run_git(cwd, &["rev-parse", "--is-inside-work-tree"], deadline)?;
    if inside != "true" {
        return None;
    }
    let commit_hash = run_git(cwd, &["rev-parse", "HEAD"], deadline);
    // `HEAD` here means a detached head: no branch to report.
    let branch =
        run_git(cwd, &["rev-parse", "--abbrev-ref", "HEAD"], deadline).filter(|b| b != "HEAD");
    let repository_url = run_git(cwd, &["remote", "get-url", "origin"], deadline);
    Some(GitInfo {
        commit_hash,
        branch,
        repository_url,
    })
}

/// Runs git and returns its trimmed stdout if it succeeded before `deadline`. Like every
/// child, git runs supervised by `oi-process`: in its own process group, killed with the agent.
fn run_git(cwd: &Path, args: &[&str], deadline: Instant) -> Option<String> {
    let mut cmd = oi_process::command_std("git");
    cmd.args(args)
        .current_dir(cwd)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().ok()?;
    // Output is a single short line, so the pipe cannot fill up while we poll.
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                // The group, not only git: a hung git may be waiting on a helper it started.
                oi_process::kill_group(child.id());
                let _ = child.wait();
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    let out = out.trim();
    (!out.is_empty()).then(|| out.to_string())
}
