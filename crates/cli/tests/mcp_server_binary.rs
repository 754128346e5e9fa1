//! `interpreter-mcp-server` is the same server as `interpreter mcp-server`, so client configs
//! can name either executable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

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

/// `RUST_LOG=debug interpreter mcp-server`: requests are logged at debug and a failed tool call
/// (here a config error) at warn, on stderr and in `$OPENINTERPRETER_HOME/log/`, never on stdout.
#[test]
fn rust_log_debug_shows_requests_and_errors_on_stderr_and_in_the_log_file() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "model_provider = \"no-such-provider\"\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .arg("mcp-server")
        .env("OPENINTERPRETER_HOME", home.path())
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send_and_read = |msg: &str| {
        writeln!(stdin, "{msg}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<serde_json::Value>(&line).unwrap()
    };
    send_and_read(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    );
    let reply = send_and_read(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":"hi"}}}"#,
    );
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = std::fs::read_to_string(home.path().join("log/mcp-server.log")).unwrap();
    for text in [stderr.as_ref(), log.as_str()] {
        assert!(
            text.contains("DEBUG") && text.contains("request 2: tools/call"),
            "{text}"
        );
        assert!(
            text.contains("WARN") && text.contains("no-such-provider"),
            "the config error is not logged:\n{text}"
        );
    }
}

/// `RUST_LOG=debug interpreter exec`: the model request is logged on stderr, stdout stays the answer.
#[test]
fn exec_honours_rust_log() {
    let home = tempfile::tempdir().unwrap();
    // An unreachable endpoint: the request is logged, then fails.
    std::fs::write(
        home.path().join("config.toml"),
        "model = \"m\"\nmodel_provider = \"dead\"\n[model_providers.dead]\nname = \"dead\"\nbase_url = \"http://127.0.0.1:9/v1\"\nrequest_max_retries = 0\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args(["exec", "hi"])
        .env("OPENINTERPRETER_HOME", home.path())
        .env("RUST_LOG", "oi_model_client=debug")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("model request"), "{stderr}");
    assert!(stderr.contains("http://127.0.0.1:9/v1"), "{stderr}");
    assert!(stderr.contains("model request failed"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("DEBUG"));
}
