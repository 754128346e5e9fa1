//! The everyday commands of the TUI's third pass (issue 45, item 5): `/clear`, `/export`,
//! `/archive`, `/delete`, `/theme`, `/statusline`, `/config`, `/title`. The real
//! `interpreter` in a pseudo-terminal against the scripted mock model; each command is
//! judged by what it leaves: the exported file, the thread store, the config file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::TestEnv;
use crate::tui_pty;

use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use tui_pty::*;

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `interpreter sessions list --json [--archived]`: (id, name) of each thread.
fn listed(env: &TestEnv, archived: bool) -> Vec<(String, Option<String>)> {
    let mut args = vec!["sessions", "list", "--json"];
    if archived {
        args.push("--archived");
    }
    let out = std::process::Command::new(Tui::interpreter_command())
        .args(&args)
        .env("OPENINTERPRETER_HOME", env.home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value =
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    v.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_string(),
                r["name"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// Waits for a picker whose highlighted row contains `text`.
fn wait_selected(tui: &Tui, text: &str) {
    tui.wait_until(&format!("{text:?} selected"), |_| {
        tui.highlighted_rows().iter().any(|r| r.contains(text))
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn export_writes_the_thread_as_markdown_and_asks_before_replacing() {
    let env = env([MockTurn::text(
        "The answer, **in bold**.\n\n```sh\nls -la\n```",
    )])
    .await;
    let work = env.work();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "export me please", "in bold");
    // Without a path: `thread-<id>.md` in the thread's folder, named in the cell.
    command(&tui, "/export");
    let screen = tui.wait_for("Exported this thread to");
    let id = listed(&env, false)[0].0.clone();
    let default = work.join(format!("thread-{id}.md"));
    assert!(screen.contains(&format!("thread-{id}.md")), "{screen}");
    let md = read(&default);
    assert!(md.contains("## You\n\nexport me please\n"), "{md}");
    assert!(
        md.contains("## Assistant\n\nThe answer, **in bold**.\n\n```sh\nls -la\n```\n"),
        "{md}"
    );
    assert!(md.contains(&format!("- Thread: `{id}`")), "{md}");

    // A file that is there is not replaced without asking: "Keep it" leaves it.
    let notes = work.join("notes.md");
    std::fs::write(&notes, "my own notes\n").unwrap();
    command(&tui, "/export notes.md");
    tui.wait_for("notes.md exists. Replace it?");
    wait_selected(&tui, "Replace it");
    tui.send("\x1b[B");
    wait_selected(&tui, "Keep it");
    tui.send("\r");
    tui.wait_for("Nothing exported; the file was left as it was");
    assert_eq!(read(&notes), "my own notes\n");
    // "Replace it" replaces it, and says so.
    command(&tui, "/export notes.md");
    wait_selected(&tui, "Replace it");
    tui.send("\r");
    tui.wait_for("the file that was there was replaced");
    let replaced = read(&notes);
    assert!(!replaced.contains("my own notes"), "{replaced}");
    assert!(
        replaced.contains("## Assistant\n\nThe answer"),
        "{replaced}"
    );
    // A folder that does not exist is an error naming it; nothing is written.
    command(&tui, "/export missing/notes.md");
    tui.wait_for("cannot export to");
    tui.wait_for("missing does not");
    assert!(!work.join("missing").exists());
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn clear_starts_a_new_conversation_on_a_cleared_screen() {
    let env = env([
        MockTurn::text("the first answer"),
        MockTurn::text("the second answer"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "the first question", "the first answer");
    command(&tui, "/clear");
    tui.wait_until("the screen cleared", |_| {
        let rows = tui.rows().join("\n");
        !rows.contains("the first answer")
            && !rows.contains("the first question")
            && rows.contains("Ask anything")
    });
    turn(&tui, "the second question", "the second answer");
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 2);
    // A new conversation: the model does not see the first one.
    let second = requests[1].all_text();
    assert!(second.contains("the second question"), "{second}");
    assert!(!second.contains("the first question"), "{second}");
    quit(tui);
    assert_eq!(listed(&env, false).len(), 2, "both threads are stored");
}

/// In tmux, which keeps a scrollback `capture-pane` reads: after `/clear` neither the
/// screen nor the scrollback holds the old conversation.
#[tokio::test(flavor = "multi_thread")]
async fn clear_empties_the_scrollback_too() {
    let long: String = (1..=80).map(|i| format!("old line {i}\n\n")).collect();
    let env = env([MockTurn::text(long), MockTurn::text("the new answer")]).await;
    let tmux = crate::tui_second_pass::InTmux::spawn(&env, &[]);
    tmux.tui.wait_for("Ask anything");
    turn(&tmux.tui, "a long one", "old line 80");
    tmux.wait_captured("the old answer in the scrollback", |t| {
        t.contains("old line 1\n") && t.contains("old line 80")
    });
    command(&tmux.tui, "/clear");
    tmux.wait_captured("the old conversation gone", |t| {
        !t.contains("old line") && !t.contains("a long one") && t.contains("Ask anything")
    });
    turn(&tmux.tui, "a new one", "the new answer");
    let pane = tmux.capture();
    assert!(!pane.contains("old line"), "{pane}");
}

#[tokio::test(flavor = "multi_thread")]
async fn archive_and_delete_change_the_store_and_delete_asks_first() {
    let env = env([
        MockTurn::text("kept for later"),
        MockTurn::text("about to go"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "the thread to archive", "kept for later");
    command(&tui, "/title keeper");
    tui.wait_for("Thread renamed to “keeper”");
    command(&tui, "/new");
    tui.wait_until("a new thread", |t| t.matches("Ask anything").count() >= 1);
    turn(&tui, "the thread to delete", "about to go");
    assert_eq!(listed(&env, false).len(), 2);

    // `/archive`: this thread first, then the others; archive the other one.
    command(&tui, "/archive");
    wait_selected(&tui, "this thread · the thread to delete");
    tui.send("\x1b[B");
    wait_selected(&tui, "keeper");
    tui.send("\r");
    tui.wait_for("Archived “keeper”");
    let active = listed(&env, false);
    assert_eq!(active.len(), 1, "{active:?}");
    let doomed = active[0].0.clone();
    let archived = listed(&env, true);
    assert_eq!(archived.len(), 1, "{archived:?}");
    assert_eq!(archived[0].1.as_deref(), Some("keeper"));

    // `/delete` this thread: asked first; "Keep it" keeps it.
    command(&tui, "/delete");
    wait_selected(&tui, "this thread · the thread to delete");
    tui.send("\r");
    tui.wait_for("for good?");
    wait_selected(&tui, "Delete it");
    tui.send("\x1b[B");
    wait_selected(&tui, "Keep it");
    tui.send("\r");
    tui.wait_for("Kept the thread");
    assert_eq!(listed(&env, false).len(), 1);
    command(&tui, "/delete");
    wait_selected(&tui, "this thread · the thread to delete");
    tui.send("\r");
    wait_selected(&tui, "Delete it");
    tui.send("\r");
    tui.wait_for("Deleted “the thread to delete”");
    let left = listed(&env, false);
    assert!(!left.iter().any(|(id, _)| *id == doomed), "{left:?}");
    // The TUI goes on in a new, empty thread: nothing in it to archive or delete.
    command(&tui, &format!("/archive {}", left[0].0));
    tui.wait_for("This thread has no messages yet; there is nothing to archive");
    quit(tui);
    assert!(listed(&env, false).is_empty());
    assert_eq!(listed(&env, true).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn theme_and_statusline_are_kept_in_the_config_file() {
    let env =
        TestEnv::with_config(MockScript::turns([]), WireApi::Chat, "# my own comment\n").await;
    let config = env.home.path().join("config.toml");
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/theme");
    wait_selected(&tui, "dark (current)");
    tui.send("\x1b[B");
    wait_selected(&tui, "light");
    tui.send("\r");
    tui.wait_for("Theme: light");
    // Drawn with the light palette from then on: its accent is blue, the dark one's cyan.
    tui.wait_until("the cell's bullet in blue", |_| {
        let parser = tui.screen.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        (0..rows).any(|r| {
            let text: String = screen.rows(0, cols).nth(usize::from(r)).unwrap_or_default();
            text.starts_with("• Theme: light")
                && screen
                    .cell(r, 0)
                    .is_some_and(|c| c.fgcolor() == vt100::Color::Idx(4))
        })
    });
    tui.wait_until("the theme saved", |_| {
        read(&config).contains("theme = \"light\"")
    });

    command(&tui, "/statusline");
    wait_selected(&tui, "[x] model-with-reasoning");
    for _ in 0..4 {
        tui.send("\x1b[B");
    }
    wait_selected(&tui, "[ ] used-tokens");
    tui.send("\r");
    wait_selected(&tui, "[x] used-tokens");
    tui.send("\x1b");
    tui.wait_until("the picker closed", |_| tui.highlighted_rows().is_empty());
    tui.wait_until("the status line with the tokens", |_| {
        tui.rows().iter().any(|r| r.contains("0 tokens used"))
    });
    let text = read(&config);
    assert!(text.starts_with("# my own comment\n"), "{text}");
    let table: toml::Table = text.parse().unwrap();
    let items: Vec<&str> = table["tui"]["status_line"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(
        items,
        [
            "model-with-reasoning",
            "provider",
            "context-remaining",
            "used-tokens",
            "mcp",
            "approvals",
            "current-dir"
        ]
    );
    quit(tui);

    // The next session starts with both.
    let tui = Tui::spawn(&env, &[]);
    tui.wait_until("the kept status line", |_| {
        tui.rows().iter().any(|r| r.contains("0 tokens used"))
    });
    command(&tui, "/config");
    tui.wait_until("the theme's origin", |t| {
        t.lines()
            .any(|l| l.contains("tui.theme") && l.contains("light") && l.contains("user config"))
    });
    // `/statusline ITEMS` sets the line directly; `reset` removes the key.
    command(&tui, "/statusline model-name,thread-id");
    tui.wait_until("the two items", |_| {
        let rows = tui.rows();
        rows.iter().any(|r| r.starts_with("mock-model · "))
            && !rows.iter().any(|r| r.contains("tokens used"))
    });
    command(&tui, "/statusline reset");
    tui.wait_for("Status line: back to the default items");
    tui.wait_until("the key removed", |_| {
        !read(&config).contains("status_line")
    });
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn config_names_where_each_setting_came_from() {
    let env =
        TestEnv::with_config(MockScript::turns([]), WireApi::Chat, "profile = \"deep\"\n").await;
    let path = env.home.path().join("config.toml");
    let mut text = read(&path);
    text.push_str("\n[profiles.deep]\nmodel_reasoning_effort = \"high\"\n");
    std::fs::write(&path, text).unwrap();
    let tui = Tui::spawn(&env, &["-c", "max_turn_steps=7", "-s", "workspace-write"]);
    tui.wait_for("Ask anything");
    command(&tui, "/config");
    let screen = tui.wait_for("Effective settings");
    let row = |key: &str| -> String {
        let screen = tui.wait_until(&format!("the row {key}"), |t| {
            t.lines()
                .any(|l| l.trim_start().starts_with(&format!("{key} ")))
        });
        screen
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} ")))
            .unwrap()
            .to_string()
    };
    assert!(row("model ").contains("· user config"), "{screen}");
    assert!(
        row("max_turn_steps").contains("7  · -c override"),
        "{screen}"
    );
    assert!(
        row("sandbox_mode").contains("workspace-write  · command-line flag"),
        "{screen}"
    );
    assert!(
        row("model_reasoning_effort").contains("high  · profile `deep`"),
        "{screen}"
    );
    assert!(row("shell_timeout_ms").contains("· default"), "{screen}");
    assert!(row("tui.theme").contains("dark  · default"), "{screen}");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn title_names_the_thread_where_threads_are_listed() {
    let env = env([MockTurn::text("an answer")]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "a question", "an answer");
    command(&tui, "/title");
    tui.wait_for("This thread has no title");
    command(&tui, "/title Release prep");
    tui.wait_for("Thread renamed to “Release prep”");
    command(&tui, "/title");
    tui.wait_for("This thread's title: “Release prep”");
    command(&tui, "/statusline thread-title,model-name");
    tui.wait_until("the title in the status line", |_| {
        tui.rows()
            .iter()
            .any(|r| r.trim_end().starts_with("Release prep · "))
    });
    let id = listed(&env, false)[0].0.clone();
    assert_eq!(listed(&env, false)[0].1.as_deref(), Some("Release prep"));
    quit(tui);
    // A resumed thread shows its title too.
    let tui = Tui::spawn(&env, &["resume", &id]);
    tui.wait_until("the title after resuming", |_| {
        tui.rows()
            .iter()
            .any(|r| r.trim_end().starts_with("Release prep · "))
    });
    quit(tui);
}
