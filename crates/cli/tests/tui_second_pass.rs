//! The TUI's second pass (issue 27), the parts of it driven here end to end: the scrollback
//! through resizes while an answer streams (in tmux, a terminal that re-wraps its lines),
//! steering and queueing, Ctrl+R, Ctrl+G, `!cmd`, and `/review`, `/copy`, `/rename`,
//! `/undo`. The real `interpreter` runs in a pseudo-terminal against the scripted mock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tui_pty;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::path::PathBuf;
use tui_pty::*;

/// The interpreter inside a tmux session of its own (its own server socket and no user
/// config), itself in the harness's pty: tmux re-wraps lines when the window narrows or
/// widens, as most terminals people use do, and keeps the pane's scrollback, which
/// `capture-pane` reads back whole.
pub(crate) struct InTmux {
    pub(crate) tui: Tui,
    socket: PathBuf,
}

impl InTmux {
    pub(crate) fn spawn(env: &TestEnv, args: &[&str]) -> InTmux {
        Self::spawn_sized(env, args, (ROWS, COLS))
    }

    /// [`InTmux::spawn`] in a window of `(rows, cols)`.
    pub(crate) fn spawn_sized(env: &TestEnv, args: &[&str], size: (u16, u16)) -> InTmux {
        let socket = env.home.path().join("tmux.sock");
        let conf = env.home.path().join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g status off\nset -g history-limit 50000\nset -g default-terminal xterm-256color\nset -g set-clipboard on\n",
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
        let tui = Tui::spawn_program_sized(env, "tmux", &all, &[], size);
        InTmux { tui, socket }
    }

    /// The pane's whole scrollback and screen, wrapped lines joined (what the user scrolls
    /// through and copies).
    pub(crate) fn capture(&self) -> String {
        let out = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p", "-J", "-S", "-", "-E", "-"])
            .output()
            .expect("tmux capture-pane");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The newest tmux paste buffer (what an application's OSC 52 copy set).
    fn clipboard(&self) -> Option<String> {
        let out = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("show-buffer")
            .output()
            .expect("tmux show-buffer");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub(crate) fn wait_captured(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = std::time::Instant::now();
        loop {
            let text = self.capture();
            if ok(&text) {
                return text;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; the pane:\n{text}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
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

/// Where `needle` first shows in `text`, or a failure naming it.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not shown:\n{text}"))
}

/// Waits until a visible row (trailing blanks aside) is exactly `row`.
fn wait_row(tui: &Tui, row: &str) {
    tui.wait_until(&format!("the row {row:?}"), |_| {
        tui.rows().iter().any(|r| r.trim_end() == row)
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn enter_steers_the_running_turn_and_tab_queues_a_follow_up() {
    let filler: String = (0..30).map(|i| format!("word{i} ")).collect();
    let env = env([
        // The first response streams for a while, then runs a command.
        MockTurn::text(format!("STREAM-BEGIN {filler} STREAM-END"))
            .chunked(8)
            .with_delay_ms(40)
            .with_tool_call("shell", json!({"command": ["echo", "tool ran"]})),
        MockTurn::text("answer after steering"),
        MockTurn::text("answer to the queued message"),
    ])
    .await;
    let tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "never"]);
    tui.wait_for("Ask anything");
    tui.type_text("start the work");
    tui.send("\r");
    tui.wait_for("STREAM-BEGIN");
    tui.type_text("steer this way");
    tui.send("\r");
    tui.type_text("queued follow-up");
    tui.send("\t");
    tui.wait_for("queued for after this turn: queued follow-up");
    tui.wait_for("answer to the queued message");
    let text = tui.wait_until("the last turn to end", |t| {
        t.matches("turn completed").count() + t.matches("── ").count() >= 2
            && !t.contains("Esc to interrupt")
    });
    // The steering message shows once, where the model took it: after the answer it
    // interrupted, before the answer it led to; the queued one is its own turn after that.
    assert_eq!(text.matches("› steer this way").count(), 1, "{text}");
    assert!(
        at(&text, "STREAM-END") < at(&text, "› steer this way"),
        "{text}"
    );
    assert!(
        at(&text, "› steer this way") < at(&text, "answer after steering"),
        "{text}"
    );
    assert!(
        at(&text, "answer after steering") < at(&text, "› queued follow-up"),
        "{text}"
    );
    assert!(at(&text, "› queued follow-up") < at(&text, "answer to the queued message"));
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].all_text().contains("steer this way"));
    assert!(!requests[1].all_text().contains("queued follow-up"));
    assert_eq!(
        requests[2].last_user_text().as_deref(),
        Some("queued follow-up")
    );
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn queued_messages_are_editable_and_come_back_on_esc() {
    let env = env([MockTurn::text("an answer that never ends").stall_after(1)]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.type_text("start");
    tui.send("\r");
    tui.wait_for("Esc to interrupt");
    tui.type_text("first queued");
    tui.send("\t");
    tui.type_text("second queued");
    tui.send("\t");
    tui.wait_for("queued for after this turn: second queued");
    // Alt+Up takes the newest back to edit; Tab queues it again.
    tui.send("\x1b[1;3A");
    wait_row(&tui, "› second queued");
    tui.type_text(" edited");
    tui.send("\t");
    tui.wait_for("queued for after this turn: second queued edited");
    // Esc interrupts the turn, and what the model never saw is back in the composer.
    tui.send("\x1b");
    tui.wait_for("turn interrupted");
    wait_row(&tui, "› first queued");
    wait_row(&tui, "  second queued edited");
    assert_eq!(env.mock.requests().len(), 1);
    tui.send("\x03"); // Ctrl+C clears the composer
    tui.wait_for("Ask anything");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_r_finds_an_earlier_prompt() {
    let env = env([
        MockTurn::text("first answer"),
        MockTurn::text("second answer"),
        MockTurn::text("third answer"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "alpha prompt about parsers", "first answer");
    turn(&tui, "beta prompt about tests", "second answer");
    tui.send("\x12"); // Ctrl+R
    tui.wait_for("(reverse-i-search)`'");
    tui.send("pars");
    tui.wait_for("(reverse-i-search)`pars': alpha prompt about parsers");
    tui.send("\r");
    wait_row(&tui, "› alpha prompt about parsers");
    tui.send("\r");
    tui.wait_for("third answer");
    let requests = env.mock.requests();
    assert_eq!(
        requests[2].last_user_text().as_deref(),
        Some("alpha prompt about parsers")
    );
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_g_edits_the_draft_in_the_editor() {
    let env = env([MockTurn::text("got the edited draft")]).await;
    // An "editor" that keeps what it was given and writes a new draft.
    let seen = env.work().join("seen-by-editor.txt");
    let editor = env.home.path().join("editor.sh");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\ncp \"$1\" '{}'\nprintf 'written by the editor\\n' > \"$1\"\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let editor = editor.display().to_string();
    let tui = Tui::spawn_with(&env, &[], &[("VISUAL", ""), ("EDITOR", editor.as_str())]);
    tui.wait_for("Ask anything");
    tui.type_text("the first draft");
    tui.send("\x07"); // Ctrl+G
    wait_row(&tui, "› written by the editor");
    assert_eq!(read(&seen), "the first draft");
    tui.send("\r");
    tui.wait_for("got the edited draft");
    assert_eq!(
        env.mock.requests()[0].last_user_text().as_deref(),
        Some("written by the editor")
    );
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn bang_runs_a_sandboxed_command_and_the_model_gets_its_output() {
    let env = env([MockTurn::text("I see what it printed")]).await;
    // The default sandbox is read-only: `!` commands run under it like the model's.
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("read-only");
    command(&tui, "!echo shell-said-hi");
    tui.wait_for("Ran $ echo shell-said-hi ✓");
    command(&tui, "!touch blocked.txt");
    tui.wait_for("Ran $ touch blocked.txt exit");
    assert!(!env.work().join("blocked.txt").exists());
    turn(&tui, "what did it print", "I see what it printed");
    let request = &env.mock.requests()[0];
    let all = request.all_text();
    assert!(all.contains("$ echo shell-said-hi"), "{all}");
    assert!(all.contains("shell-said-hi\n"), "{all}");
    let sent = request.last_user_text().unwrap_or_default();
    assert!(sent.starts_with("what did it print"), "{sent}");
    // The prompt shows as typed; the command's output is in its own cell only.
    let text = tui.text();
    assert_eq!(text.matches("<user_shell_command>").count(), 0, "{text}");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_review_asks_for_a_review_of_the_working_tree_diff() {
    let env = env([MockTurn::text("the change looks fine")]).await;
    let work = env.work();
    git(&work, &["init", "-q"]);
    std::fs::write(work.join("lib.rs"), "fn old() {}\n").unwrap();
    git(&work, &["add", "."]);
    git(
        &work,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "first",
        ],
    );
    std::fs::write(work.join("lib.rs"), "fn renamed_for_review() {}\n").unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/review");
    tui.wait_for("the change looks fine");
    let sent = env.mock.requests()[0].last_user_text().unwrap_or_default();
    assert!(sent.starts_with("Review the uncommitted changes"), "{sent}");
    assert!(sent.contains("+fn renamed_for_review() {}"), "{sent}");
    assert!(sent.contains("-fn old() {}"), "{sent}");
    // The user cell names the command rather than repeating the diff.
    tui.wait_for("› /review (");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_copy_puts_the_last_answer_on_the_clipboard() {
    let env = env([MockTurn::text("copy **me** please")]).await;
    let tmux = InTmux::spawn(&env, &[]);
    tmux.tui.wait_for("Ask anything");
    turn(&tmux.tui, "say it", "please");
    command(&tmux.tui, "/copy");
    tmux.tui.wait_for("Copied the last answer");
    tmux.tui.wait_until("the clipboard", |_| {
        tmux.clipboard().as_deref() == Some("copy **me** please")
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_rename_names_the_thread_in_the_store() {
    let env = env([MockTurn::text("an answer")]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "a question", "an answer");
    command(&tui, "/rename release notes");
    tui.wait_for("Thread renamed to “release notes”");
    quit(tui);
    let out = std::process::Command::new(Tui::interpreter_command())
        .args(["sessions", "list", "--json"])
        .env("OPENINTERPRETER_HOME", env.home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let threads: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(threads[0]["name"], "release notes", "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_undo_reverts_the_last_patch_and_refuses_after_a_change() {
    let add = "*** Begin Patch\n*** Add File: added.txt\n+new file\n*** End Patch";
    let (env, tui, notes) = tui_with_patched_notes([
        MockTurn::tool_call("apply_patch", json!({"input": add})),
        MockTurn::text("added a file"),
    ])
    .await;
    turn(&tui, "add a file", "added a file");
    let added = env.work().join("added.txt");
    assert_eq!(read(&added), "new file\n");
    // The last patch added a file; it was changed by hand since: refused, nothing touched.
    std::fs::write(&added, "new file\nand a hand edit\n").unwrap();
    command(&tui, "/undo");
    wait_confirmation(&tui);
    tui.send("\r");
    tui.wait_for("changed since the patch");
    assert_eq!(read(&added), "new file\nand a hand edit\n");
    // Put back as the patch left it: the undo removes it, then the one before reverts.
    std::fs::write(&added, "new file\n").unwrap();
    command(&tui, "/undo");
    wait_confirmation(&tui);
    tui.send("\r");
    tui.wait_for("Reverted the last applied patch");
    assert!(!added.exists());
    command(&tui, "/undo");
    wait_confirmation(&tui);
    tui.send("\r");
    tui.wait_until("the second revert", |t| {
        t.matches("Reverted the last applied patch").count() >= 2
    });
    assert_eq!(read(&notes), "first\noriginal line\nlast\n");
    command(&tui, "/undo");
    tui.wait_for("Nothing to undo");
    quit(tui);
}

// `/undo` reverts patches of the thread on screen: after `/new` there is nothing to undo
// (it used to revert the other thread's patch and tell the new thread's model about it);
// back in the first thread with `/resume`, its patch can be reverted again.
#[tokio::test(flavor = "multi_thread")]
async fn slash_undo_follows_the_thread_on_screen() {
    let (_env, tui, notes) = tui_with_patched_notes([]).await;
    command(&tui, "/new");
    tui.wait_until("a second thread header", |t| {
        t.matches("thread ").count() >= 2
    });
    command(&tui, "/undo");
    tui.wait_for("Nothing to undo");
    assert_eq!(read(&notes), "first\npatched line\nlast\n");
    command(&tui, "/resume");
    tui.wait_for("Resume a thread");
    tui.wait_for("patch the notes");
    tui.send("\r");
    tui.wait_until("the first thread's history again", |t| {
        t.matches("› patch the notes").count() >= 2
    });
    command(&tui, "/undo");
    wait_confirmation(&tui);
    tui.send("\r");
    tui.wait_for("Reverted the last applied patch");
    assert_eq!(read(&notes), "first\noriginal line\nlast\n");
    quit(tui);
}

/// A TUI whose first turn patched `notes.txt` (checked on disk); `more` are the mock's
/// turns after that one.
async fn tui_with_patched_notes(
    more: impl IntoIterator<Item = MockTurn>,
) -> (TestEnv, Tui, std::path::PathBuf) {
    let update = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-original line\n+patched line\n*** End Patch";
    let mut turns = vec![
        MockTurn::tool_call("apply_patch", json!({"input": update})),
        MockTurn::text("patched notes"),
    ];
    turns.extend(more);
    let env = TestEnv::new(MockScript::turns(turns), WireApi::Chat).await;
    let notes = env.work().join("notes.txt");
    std::fs::write(&notes, "first\noriginal line\nlast\n").unwrap();
    let tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "never"]);
    tui.wait_for("Ask anything");
    turn(&tui, "patch the notes", "patched notes");
    assert_eq!(read(&notes), "first\npatched line\nlast\n");
    (env, tui, notes)
}

/// Waits for `/undo`'s confirmation on screen.
fn wait_confirmation(tui: &Tui) {
    tui.wait_until("the /undo confirmation", |_| {
        tui.rows()
            .iter()
            .any(|r| r.contains("Undo the last applied patch?"))
    });
}
