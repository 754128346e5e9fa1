//! Codex 0.171's own TUI (`codex --remote ws://…`, the binary `tools/peers/install.sh`
//! installs) in a real pseudo-terminal against `interpreter app-server --listen ws://…`:
//! it opens, runs a turn whose command needs an approval, runs the user's `!command`
//! (`thread/shellCommand`) and a `/review` (`review/start`), lists the threads in its
//! resume picker and resumes one. Judged by the screen and by what the server left on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tui_pty;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use tui_pty::*;

/// `codex --remote` against `server`, with its own empty `CODEX_HOME`.
fn codex_tui(env: &TestEnv, codex: &str, server: &Server, codex_home: &str, more: &[&str]) -> Tui {
    let mut args = vec![
        "--remote",
        server.url.as_str(),
        "--remote-auth-token-env",
        "OI_TOKEN",
    ];
    args.extend_from_slice(more);
    Tui::spawn_program(
        env,
        codex,
        &args,
        &[("CODEX_HOME", codex_home), ("OI_TOKEN", &server.token)],
    )
}

/// Answers Codex's approval overlay with `y` once it is fully drawn. Codex's TUI drops a
/// key that arrives while the overlay is still being set up (seen in about one run of four
/// here), so the key is sent again until the overlay says it was approved; a second `y`
/// after that would only be typed into the composer, which this test does not use again.
fn approve(tui: &Tui) {
    tui.wait_for("Press enter to confirm");
    for _ in 0..10 {
        tui.send("y");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if tui.text().contains("You approved") {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    panic!("Codex never took the approval:\n{}", tui.text());
}

/// Sends `key` until `shown` is on screen: Codex's composer can drop an Enter typed while
/// its command popup is still filtering. Resent only while `shown` has not appeared, so a
/// key is never delivered twice to what it opened.
fn press_until(tui: &Tui, key: &str, shown: &str) {
    for _ in 0..10 {
        tui.send(key);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if tui.text().contains(shown) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    panic!("Codex never showed {shown:?}:\n{}", tui.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_tui_runs_an_approved_turn_lists_threads_and_resumes_one() {
    let Some(codex) = codex_bin() else {
        return;
    };
    let codex = codex.display().to_string();
    let script = MockScript::turns([
        // Codex's own shell tool, asking to leave the sandbox: that needs the user's yes.
        MockTurn::tool_call(
            "exec_command",
            json!({"cmd": "touch from-codex-tui.txt", "sandbox_permissions": "require_escalated",
                   "justification": "make the file"}),
        ),
        MockTurn::text("made the file"),
        MockTurn::text("the review found nothing"),
        MockTurn::text("still here after resume"),
    ])
    // Codex's TUI names a new thread with a turn of its own on an auxiliary thread, at a
    // moment of its choosing: answer it apart from the script.
    .with_rule(
        "Generate a concise, single-line task title",
        MockTurn::text("Make the file"),
    );
    let env = TestEnv::new(script, WireApi::Chat).await;
    let server = start_ws_server(&env, &[]).await;
    let codex_home = tempfile::tempdir().unwrap();
    let codex_home = codex_home.path().display().to_string();

    // The client chooses the permissions, as Codex's TUI does against its own server.
    let tui = codex_tui(
        &env,
        &codex,
        &server,
        &codex_home,
        &["-s", "workspace-write", "-a", "on-request"],
    );
    tui.wait_for("Ask Codex to do anything");
    tui.type_text("make the file");
    tui.send("\r");
    tui.wait_for("Yes, proceed (y)");
    assert!(
        !env.work().join("from-codex-tui.txt").exists(),
        "ran before the approval"
    );
    approve(&tui);
    tui.wait_for("made the file");
    assert!(
        env.work().join("from-codex-tui.txt").exists(),
        "the approved command did not run:\n{}",
        tui.text()
    );

    // `!command`: the user's own command, run by the server (thread/shellCommand).
    // Codex's composer shows `!` as a shell-mode prefix (`! touch …`).
    tui.send("!touch from-bang.txt");
    tui.wait_for("touch from-bang.txt");
    tui.send("\r");
    tui.wait_for("You ran touch from-bang.txt");
    assert!(
        env.work().join("from-bang.txt").exists(),
        "the ! command did not run:\n{}",
        tui.text()
    );

    // `/review` → "Review uncommitted changes": a review turn (review/start).
    tui.type_text("/review");
    press_until(&tui, "\r", "Select a review preset");
    // A digit picks its row at once.
    tui.wait_for("2. Review uncommitted changes");
    press_until(&tui, "2", "Review the uncommitted changes");
    tui.wait_for("the review found nothing");
    let review = env.mock.requests().into_iter().any(|r| {
        r.body
            .to_string()
            .contains("Review the uncommitted changes")
    });
    assert!(review, "no review request reached the model");
    drop(tui);

    // `codex resume`: the picker lists the thread (thread/list), Enter resumes it.
    let tui = codex_tui(&env, &codex, &server, &codex_home, &["resume"]);
    tui.wait_until("the thread in the resume picker", |screen| {
        screen.contains("Resume a previous session") && screen.contains("make the file")
    });
    tui.send("\r");
    tui.wait_for("made the file");
    tui.type_text("still there?");
    tui.send("\r");
    tui.wait_for("still here after resume");
    drop(tui);

    // The resumed turn's request carries the first turn's history.
    let requests = env.mock.requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| r.body.to_string().contains("still there?"))
        .unwrap()
        .body
        .to_string();
    assert!(
        last.contains("make the file") && last.contains("still there?"),
        "the resumed turn's request carries the first turn's history: {last}"
    );
}
