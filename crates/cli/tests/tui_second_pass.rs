//! The TUI's second pass (issue 27), the parts of it driven here end to end: the scrollback
//! through resizes while an answer streams (in tmux, a terminal that re-wraps its lines),
//! steering and queueing, Ctrl+R, Ctrl+G, `!cmd`, and `/review`, `/copy`, `/rename`,
//! `/undo`. The real `interpreter` runs in a pseudo-terminal against the scripted mock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod tui_pty;

use common::*;
use oi_test_support::MockTurn;
use std::path::PathBuf;
use tui_pty::*;

/// The interpreter inside a tmux session of its own (its own server socket and no user
/// config), itself in the harness's pty: tmux re-wraps lines when the window narrows or
/// widens, as most terminals people use do, and keeps the pane's scrollback, which
/// `capture-pane` reads back whole.
struct InTmux {
    tui: Tui,
    socket: PathBuf,
}

impl InTmux {
    fn spawn(env: &TestEnv, args: &[&str]) -> InTmux {
        let socket = env.home.path().join("tmux.sock");
        let conf = env.home.path().join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g status off\nset -g history-limit 50000\nset -g default-terminal xterm-256color\n",
        )
        .unwrap();
        let mut all = vec![
            "-S".to_string(),
            socket.display().to_string(),
            "-f".to_string(),
            conf.display().to_string(),
            "new-session".to_string(),
            Tui::interpreter_command().to_string(),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let tui = Tui::spawn_program(env, "tmux", &all, &[]);
        InTmux { tui, socket }
    }

    /// The pane's whole scrollback and screen, wrapped lines joined (what the user scrolls
    /// through and copies).
    fn capture(&self) -> String {
        let out = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p", "-J", "-S", "-", "-E", "-"])
            .output()
            .expect("tmux capture-pane");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_captured(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        self.tui.wait_until(what, |_| ok(&self.capture()));
        self.capture()
    }
}

impl Drop for InTmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// An answer of many kinds of blocks, each with one line nothing else has.
fn blocks_answer() -> (String, Vec<String>) {
    let mut text = String::new();
    let mut markers = Vec::new();
    for i in 0..6 {
        let m = |kind: &str| format!("{kind} marker {i}");
        text.push_str(&format!("## {}\n\n", m("heading")));
        text.push_str(&format!(
            "{} is a paragraph long enough to wrap when the screen is sixty columns wide or less.\n\n",
            m("paragraph")
        ));
        text.push_str(&format!(
            "```rust\nlet body = \"{}\";\nlet more = {i};\n```\n\n",
            m("code")
        ));
        text.push_str(&format!(
            "| name | value |\n|---|---|\n| {} | {i} |\n| second row {i} | x |\n\n",
            m("table")
        ));
        text.push_str(&format!("- {}\n- another item {i}\n\n", m("list")));
        for kind in ["heading", "paragraph", "code", "table", "list"] {
            markers.push(m(kind));
        }
    }
    text.push_str("the last words of the answer, which the stream stops in the middle of");
    (text, markers)
}

#[tokio::test(flavor = "multi_thread")]
async fn resizing_while_an_answer_streams_keeps_the_scrollback_whole() {
    let (answer, markers) = blocks_answer();
    // Streamed in small pieces, slowly enough for the resizes to land between blocks; the
    // stream stalls before its end so every resize happens while the turn runs.
    let chunks = answer.len() / 12;
    let env = env([MockTurn::text(answer)
        .chunked(12)
        .with_delay_ms(15)
        .stall_after(chunks - 3)])
    .await;
    let tmux = InTmux::spawn(&env, &[]);
    tmux.tui.wait_for("Ask anything");
    tmux.tui.type_text("write blocks");
    tmux.tui.send("\r");
    let steps = [(60, 1), (100, 2), (70, 3), (60, 4), (100, 5)];
    for (cols, block) in steps {
        let seen = format!("heading marker {block}");
        tmux.wait_captured(&seen, |t| t.contains(&seen));
        tmux.tui.resize(ROWS, cols);
    }
    tmux.wait_captured("the last list", |t| t.contains("list marker 5"));
    tmux.tui.send("\x1b");
    let text = tmux.wait_captured("the interrupted turn", |t| t.contains("turn interrupted"));
    for m in &markers {
        let n = text.lines().filter(|l| l.contains(m.as_str())).count();
        assert_eq!(n, 1, "`{m}` shown {n} times:\n{text}");
    }
}
