//! `interpreter exec` and `resume` with MCP servers of protocol 2026-07-28, built with the
//! official Python SDK (tests/fixtures/mcp/sdk_server.py), and the scripted mock model: a
//! confirmation the server asks for through a multi round-trip request, declined by exec's
//! policy or accepted with `--accept-elicitations` (judged by the file it leaves); a task's
//! progress and result; a task left running when exec is stopped, whose result `resume`
//! fetches instead of calling the tool again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peer(rel: &str) -> String {
    let p = root().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.display().to_string()
}

/// A test env whose config.toml ends with `mcp` (tables must follow the top-level keys).
async fn env_with(script: MockScript, mcp: &str) -> TestEnv {
    let env = TestEnv::new(script, WireApi::Chat).await;
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push('\n');
    config.push_str(mcp);
    std::fs::write(&path, config).unwrap();
    env
}

/// `[mcp_servers.<name>]` running the SDK server over stdio with `flags`.
fn sdk_stdio(name: &str, flags: &[&str], extra: &str) -> String {
    let python = peer("tools/peers/venv/bin/python");
    let script = peer("tests/fixtures/mcp/sdk_server.py");
    let mut args = vec![format!("{script:?}")];
    args.extend(flags.iter().map(|f| format!("{f:?}")));
    format!(
        "[mcp_servers.{name}]\ncommand = {python:?}\nargs = [{}]\nrequired = true\n{extra}\n",
        args.join(", ")
    )
}

/// The SDK server over streamable HTTP, in its own process (it outlives an `exec`); killed
/// on drop.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(marks: &Path) -> Self {
        let mut child = std::process::Command::new(peer("tools/peers/venv/bin/python"))
            .arg(peer("tests/fixtures/mcp/sdk_server.py"))
            .args(["--http", "--marks"])
            .arg(marks)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(port) = line.strip_prefix("OI_LISTENING ") {
                    let _ = tx.send(port.trim().to_string());
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_calls_logged(marks: &Path) -> usize {
    std::fs::read_to_string(marks.join("requests.log"))
        .unwrap_or_default()
        .lines()
        .filter(|m| *m == "tools/call")
        .count()
}

/// With approvals on, the server's question reaches exec (`-a never` declines every
/// question in the engine, before exec sees it); the tool itself runs without asking.
const ASKING: &[&str] = &["exec", "-s", "danger-full-access", "-a", "on-request"];

#[tokio::test]
async fn exec_declines_a_confirmation_the_server_asks_for_and_accepts_it_when_told() {
    let marks = tempfile::tempdir().unwrap();
    let marks_arg = marks.path().display().to_string();
    let victim = marks.path().join("precious.txt");
    let path = victim.display().to_string();
    let server = sdk_stdio(
        "files",
        &["--modern-only", "--marks", &marks_arg],
        "[mcp_servers.files.tools.delete_file]\napproval_mode = \"approve\"",
    );
    for accept in [false, true] {
        std::fs::write(&victim, "keep me").unwrap();
        let env = env_with(
            MockScript::turns([
                MockTurn::tool_call("mcp__files__delete_file", json!({"path": path})),
                MockTurn::text("ok"),
            ]),
            &server,
        )
        .await;
        let mut args = ASKING.to_vec();
        if accept {
            args.push("--accept-elicitations");
        }
        args.push("clean up");
        let out = env.run(&args).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let outputs = env.mock.requests()[1].tool_outputs();
        let err = stderr(&out);
        let asked = format!("[elicitation] MCP server `files` asked \"Delete {path}?\"");
        assert!(err.contains(&asked), "{err}");
        if accept {
            assert!(!victim.exists(), "accepted: the file is gone");
            assert!(
                outputs[0].1.contains(&format!("deleted {path}")),
                "{outputs:?}"
            );
            assert!(err.contains("accepted (--accept-elicitations)"), "{err}");
        } else {
            assert!(victim.exists(), "declined: the file stays");
            assert!(outputs[0].1.contains("kept"), "{outputs:?}");
            assert!(err.contains("nobody can answer in exec mode"), "{err}");
        }
    }
}

#[tokio::test]
async fn exec_shows_a_tasks_progress_and_the_model_gets_its_result() {
    let marks = tempfile::tempdir().unwrap();
    let marks_arg = marks.path().display().to_string();
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__jobs__report", json!({"steps": 2})),
            MockTurn::text("the report is done"),
        ]),
        &sdk_stdio("jobs", &["--marks", &marks_arg], ""),
    )
    .await;
    let out = env
        .run(&[
            "exec",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "--json",
            "make the report",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let progress: Vec<String> = events(&out)
        .iter()
        .filter(|e| e["msg"]["type"] == "mcp_tool_call_progress")
        .filter_map(|e| e["msg"]["message"].as_str().map(str::to_string))
        .collect();
    for step in ["step 1 of 2", "step 2 of 2"] {
        assert!(progress.iter().any(|m| m == step), "{progress:?}");
    }
    assert!(
        progress
            .iter()
            .any(|m| m.starts_with("running as the task ")),
        "{progress:?}"
    );
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(
        outputs[0].1.contains("report done after 2 steps"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn a_task_left_running_when_exec_is_stopped_is_fetched_by_resume() {
    let marks = tempfile::tempdir().unwrap();
    let server = HttpServer::start(marks.path());
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__remote__report", json!({"steps": 8})),
            MockTurn::text("the report came back"),
        ]),
        &format!(
            "[mcp_servers.remote]\nurl = {:?}\nrequired = true\n",
            server.url
        ),
    )
    .await;
    let mut child = env
        .command(&[
            "exec",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "--json",
            "make the long report",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut thread_id = String::new();
    let mut task_id = String::new();
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .unwrap()
    {
        let ev: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if ev["msg"]["type"] == "session_configured" {
            thread_id = ev["msg"]["session_id"].as_str().unwrap_or_default().into();
        }
        if let Some(task) = ev["msg"]["task"]["task_id"].as_str() {
            task_id = task.to_string();
            break;
        }
    }
    assert!(!thread_id.is_empty() && !task_id.is_empty());
    // Stopped while the server runs the task: the run ends, the task does not.
    let pid = libc::pid_t::try_from(child.id().unwrap()).unwrap();
    // SAFETY: plain syscall on the interpreter this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(
        !marks.path().join(format!("cancelled-{task_id}")).exists(),
        "the task was left running"
    );
    assert_eq!(env.mock.requests().len(), 1);

    let out = env.run(&["resume", &thread_id, "is it done?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The model saw the task's result in the call's place, and the tool was not called again.
    let requests = env.mock.requests();
    let outputs = requests[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(
        outputs[0].1.contains("report done after 8 steps"),
        "{outputs:?}"
    );
    assert_eq!(tool_calls_logged(marks.path()), 1);
    assert_eq!(stdout(&out).trim(), "the report came back");
}

/// The TUI asks the user the server's confirmation (a multi round-trip request on a
/// 2026-07-28 server): Space then Enter accepts, Esc declines.
#[tokio::test(flavor = "multi_thread")]
async fn the_tui_asks_the_confirmation_and_the_answer_decides() {
    use crate::tui_pty::Tui;
    let marks = tempfile::tempdir().unwrap();
    let marks_arg = marks.path().display().to_string();
    let victim = marks.path().join("notes.txt");
    let path = victim.display().to_string();
    let server = sdk_stdio(
        "files",
        &["--modern-only", "--marks", &marks_arg],
        "[mcp_servers.files.tools.delete_file]\napproval_mode = \"approve\"",
    );
    for accept in [true, false] {
        std::fs::write(&victim, "keep me").unwrap();
        let env = env_with(
            MockScript::turns([
                MockTurn::tool_call("mcp__files__delete_file", json!({"path": path})),
                MockTurn::text("all answered"),
            ]),
            &server,
        )
        .await;
        let mut tui = Tui::spawn(&env, &[]);
        tui.wait_for("MCP 1/1");
        tui.type_text("clean up");
        tui.send("\r");
        tui.wait_for("files asks");
        tui.wait_for(&format!("Delete {path}?"));
        if accept {
            // The yes/no field starts at no: Space makes it yes, Enter sends it.
            tui.send(" ");
            tui.wait_until("the answer to be yes", |t| t.contains("Confirm*: [x]"));
            tui.send("\r");
        } else {
            tui.send("\x1b");
        }
        tui.wait_for("all answered");
        let outputs = env.mock.requests()[1].tool_outputs();
        if accept {
            assert!(!victim.exists(), "accepted: the file is gone");
            assert!(outputs[0].1.contains("deleted"), "{outputs:?}");
        } else {
            assert!(victim.exists(), "declined: the file stays");
            assert!(outputs[0].1.contains("kept"), "{outputs:?}");
        }
        tui.send("\x04");
        assert_eq!(tui.wait_exit(), 0);
    }
}

/// A task's status shows while it runs, and Esc cancels it on the server (`tasks/cancel`).
#[tokio::test(flavor = "multi_thread")]
async fn the_tui_shows_a_tasks_status_and_esc_cancels_it() {
    use crate::tui_pty::Tui;
    let marks = tempfile::tempdir().unwrap();
    let marks_arg = marks.path().display().to_string();
    let env = env_with(
        MockScript::turns([MockTurn::tool_call("mcp__jobs__endless", json!({}))]),
        &sdk_stdio(
            "jobs",
            &["--modern-only", "--marks", &marks_arg],
            "[mcp_servers.jobs.tools.endless]\napproval_mode = \"approve\"",
        ),
    )
    .await;
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("MCP 1/1");
    tui.type_text("run forever");
    tui.send("\r");
    tui.wait_for("running until cancelled");
    tui.send("\x1b");
    tui.wait_until("tasks/cancel to reach the server", |_| {
        std::fs::read_dir(marks.path())
            .unwrap()
            .flatten()
            .any(|f| f.file_name().to_string_lossy().starts_with("cancelled-"))
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
