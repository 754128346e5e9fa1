//! A reader that goes away is not a crash: `interpreter sessions list | head -1` and the
//! like end quietly with status 0 (no "failed printing to stdout" panic, no status 101).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::process::{Command, Stdio};

/// Runs `args` with stdout a pipe whose read end is already closed: the first write fails
/// with EPIPE, deterministically.
fn run_with_closed_stdout(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let work = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args(args)
        .current_dir(work.path())
        .env("OPENINTERPRETER_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn commands_that_print_exit_quietly_when_stdout_is_closed() {
    let home = tempfile::tempdir().unwrap();
    let commands: &[&[&str]] = &[
        &["sessions", "list", "--limit", "0"],
        &["sessions", "list", "--archived"],
        &["mcp", "list"],
        &["mcp", "add", "tool", "--", "true"],
        &["mcp", "get", "tool"],
        &["mcp", "list"],
        &["mcp", "remove", "tool"],
    ];
    for args in commands {
        let out = run_with_closed_stdout(home.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}
