//! The small bugs of the TUI's third pass (issue 45, item 4), each driven end to end: the
//! real `interpreter` in a pseudo-terminal against the scripted mock model, the bug checked
//! on the screen where a user saw it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_pty;

use oi_test_support::MockTurn;
use tui_pty::*;

/// The visible rows, trimmed.
fn trimmed_rows(tui: &Tui) -> Vec<String> {
    tui.rows().iter().map(|r| r.trim().to_string()).collect()
}

/// Waits until a visible row, trimmed, is exactly `text`.
fn wait_row(tui: &Tui, text: &str) {
    tui.wait_until(&format!("a row {text:?}"), |_| {
        trimmed_rows(tui).iter().any(|r| r == text)
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_on_the_slash_popup_gives_the_draft_back() {
    let env = env([
        MockTurn::text("answered the plain message"),
        MockTurn::text("answered the kept draft"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    // `/` on an empty composer, then Esc: the composer is empty again (its placeholder
    // shows), so the next message is a message, not an unknown command.
    tui.send("/");
    tui.wait_until("the slash popup", |_| !tui.highlighted_rows().is_empty());
    tui.send("\x1b");
    tui.wait_until("the popup closed on an empty composer", |_| {
        tui.highlighted_rows().is_empty()
            && tui.rows().iter().any(|r| r.starts_with("› Ask anything"))
    });
    turn(&tui, "hello there", "answered the plain message");
    assert!(!tui.text().contains("Unknown command"), "{}", tui.text());
    // A draft with `/` typed before it (`st` → `/st`, which the popup matches): Esc puts
    // back the draft and its cursor (at the start, where the `/` went).
    tui.type_text("st");
    tui.send("\x01/");
    tui.wait_until("the popup for /st", |_| {
        tui.highlighted_rows()
            .iter()
            .any(|r| r.trim_start().starts_with("/status "))
    });
    tui.send("\x1b");
    tui.wait_until("the draft back", |_| {
        tui.highlighted_rows().is_empty() && tui.rows().iter().any(|r| r.trim_end() == "› st")
    });
    // The cursor is where it was: typing goes before `st`.
    tui.type_text("fir");
    tui.wait_until("typed before the draft", |_| {
        tui.rows().iter().any(|r| r.trim_end() == "› first")
    });
    tui.send("\x15");
    turn(&tui, "keep this", "answered the kept draft");
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].last_user_text().as_deref(), Some("hello there"));
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_heading_level_shows_its_own_marks() {
    let env = env([MockTurn::text(
        "Levels:\n\n# One\n\n## Two\n\n### Three\n\n#### Four\n\n##### Five\n\n###### Six\n\nend of levels",
    )])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "show headings", "end of levels");
    for heading in [
        "# One",
        "## Two",
        "### Three",
        "#### Four",
        "##### Five",
        "###### Six",
    ] {
        wait_row(&tui, heading);
    }
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn task_list_items_show_as_checkboxes() {
    let env = env([MockTurn::text(
        "Plan:\n\n- [ ] write the test\n- [x] fix the bug\n- a plain item\n\nend of plan",
    )])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "make a plan", "end of plan");
    wait_row(&tui, "☐ write the test");
    wait_row(&tui, "☑ fix the bug");
    wait_row(&tui, "• a plain item");
    assert!(!tui.text().contains("[ ]"), "{}", tui.text());
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_turn_done_rule_spans_a_wide_window() {
    const WIDE: u16 = 160;
    let env = env([MockTurn::text("a short answer")]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.resize(ROWS, WIDE);
    tui.wait_until("the composer redrawn at the new width", |_| {
        tui.rows()
            .iter()
            .any(|r| r.chars().filter(|c| *c == '─').count() == usize::from(WIDE))
    });
    turn(&tui, "answer briefly", "a short answer");
    let rule = tui.wait_until("the turn-done rule", |t| t.contains("turn done"));
    let row = rule
        .lines()
        .find(|l| l.contains("turn done"))
        .unwrap()
        .trim_end()
        .to_string();
    assert!(row.starts_with("── turn done"), "{row:?}");
    assert_eq!(row.chars().count(), usize::from(WIDE), "{row:?}");
    quit(tui);
}
