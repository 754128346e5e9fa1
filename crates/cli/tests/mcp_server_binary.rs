//! `interpreter-mcp-server` is the same server as `interpreter mcp-server`, so client configs
//! can name either executable.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn initialize(bin: &str, args: &[&str]) -> serde_json::Value {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin)
        .args(args)
        .env("OPENINTERPRETER_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "server did not exit cleanly on EOF");
    serde_json::from_str(&line).unwrap()
}

#[test]
fn both_executables_serve_mcp() {
    let a = initialize(env!("CARGO_BIN_EXE_interpreter"), &["mcp-server"]);
    let b = initialize(env!("CARGO_BIN_EXE_interpreter-mcp-server"), &[]);
    assert_eq!(a["result"]["serverInfo"], b["result"]["serverInfo"]);
    assert_eq!(a["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(b["result"]["capabilities"]["tools"]["listChanged"], true);
}

#[test]
fn server_mode_also_logs_to_the_home_log_directory() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .arg("mcp-server")
        .env("OPENINTERPRETER_HOME", home.path())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "logs must never reach stdout");
    let log = std::fs::read_to_string(home.path().join("log/mcp-server.log")).unwrap();
    assert!(log.contains("input closed"), "{log}");
}
