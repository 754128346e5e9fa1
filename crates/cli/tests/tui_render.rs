//! What the terminal holds is the conversation, exactly once (issue 45 items 1 and 2): a
//! streamed block taller than the window, and resizes while an answer streams. The real
//! `interpreter` runs in a pseudo-terminal against the scripted mock; the whole scrollback
//! and screen are read back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_pty;
use crate::tui_second_pass::InTmux;

use oi_test_support::MockTurn;
use tui_pty::*;

/// Sends `prompt` and waits until the turn has ended and `last` is in the pane; returns
/// the pane's whole scrollback and screen.
fn run_turn(tmux: &InTmux, prompt: &str, last: &str) -> String {
    tmux.tui.type_text(prompt);
    tmux.tui.send("\r");
    tmux.tui.wait_until("the turn to end", |t| {
        t.contains("turn done") && !t.contains("Esc to interrupt")
    });
    tmux.wait_captured(last, |t| t.contains(last))
}

/// Each of `needles` is on exactly one line of `text`.
fn each_once(text: &str, needles: impl IntoIterator<Item = String>) {
    for needle in needles {
        let n = text.lines().filter(|l| l.contains(needle.as_str())).count();
        assert_eq!(n, 1, "`{needle}` shown {n} times:\n{text}");
    }
}

/// No frame of the live area was left in the scrollback: the running turn's status line
/// and the composer's placeholder are nowhere but in the live area at the bottom.
fn no_stale_frame(text: &str) {
    assert!(
        !text.contains("Esc to interrupt"),
        "a stale live frame:\n{text}"
    );
    let composers = text.matches("Ask anything").count();
    assert_eq!(composers, 1, "{composers} composers:\n{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_code_block_taller_than_the_window_is_printed_once() {
    let mut answer = String::from("Here is the script:\n\n```python\n");
    for i in 1..=45 {
        answer.push_str(&format!("print(\"code row {i:02}\")\n"));
    }
    answer.push_str("```\n\nThe script prints forty-five rows.");
    // The second turn answers the harness's nudge (a code block and no tool call).
    let env = env([
        MockTurn::text(answer).chunked(9).with_delay_ms(3),
        MockTurn::text("Done."),
    ])
    .await;
    let tmux = InTmux::spawn_sized(&env, &[], (30, COLS));
    tmux.tui.wait_for("Ask anything");
    let text = run_turn(&tmux, "write a script", "forty-five rows");
    each_once(&text, (1..=45).map(|i| format!("code row {i:02}")));
    each_once(&text, ["Here is the script".to_string()]);
    no_stale_frame(&text);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_five_thousand_item_list_is_printed_once() {
    let mut answer = String::from("The items:\n\n");
    for i in 1..=5000 {
        answer.push_str(&format!("- item {i:04}\n"));
    }
    answer.push_str("\nThat was every item.");
    let env = env([MockTurn::text(answer).chunked(240).with_delay_ms(2)]).await;
    let tmux = InTmux::spawn_sized(&env, &[], (30, COLS));
    tmux.tui.wait_for("Ask anything");
    let text = run_turn(&tmux, "list the items", "every item");
    each_once(&text, (1..=5000).map(|i| format!("item {i:04}")));
    no_stale_frame(&text);
}

/// An answer of headings, paragraphs, tables, lists and a code block taller than a 30-row
/// window; every block has a line nothing else has.
fn tall_answer() -> (String, Vec<String>) {
    let mut text = String::new();
    let mut markers = Vec::new();
    for i in 0..3 {
        let m = |kind: &str| format!("{kind} marker {i}");
        text.push_str(&format!("## {}\n\n", m("heading")));
        text.push_str(&format!(
            "{} is a paragraph long enough to wrap when the window is sixty columns wide or less.\n\n",
            m("paragraph")
        ));
        text.push_str(&format!(
            "| name | value |\n|---|---|\n| {} | {i} |\n| second row {i} | x |\n\n",
            m("table")
        ));
        text.push_str("```python\n");
        for row in 0..40 {
            let line = format!("code {i} row {row:02}");
            text.push_str(&format!("print(\"{line}\")\n"));
            markers.push(line);
        }
        text.push_str("```\n\n");
        text.push_str(&format!("> {}\n\n", m("quote")));
        for kind in ["heading", "paragraph", "table", "quote"] {
            markers.push(m(kind));
        }
    }
    text.push_str("the last words of the answer, which the stream stops in the middle of");
    (text, markers)
}

#[tokio::test(flavor = "multi_thread")]
async fn resizing_while_a_tall_block_streams_shows_every_row_once() {
    let (answer, markers) = tall_answer();
    // Small pieces, slowly, so each resize lands while a code block taller than the
    // window is being written; the stream stalls before its end.
    let chunks = answer.len() / 10;
    let env = env([MockTurn::text(answer)
        .chunked(10)
        .with_delay_ms(8)
        .stall_after(chunks - 3)])
    .await;
    let tmux = InTmux::spawn_sized(&env, &[], (30, COLS));
    tmux.tui.wait_for("Ask anything");
    tmux.tui.type_text("write tall blocks");
    tmux.tui.send("\r");
    let steps = [
        (0, 10, 70),
        (0, 30, 100),
        (1, 5, 60),
        (1, 35, 90),
        (2, 20, 100),
    ];
    for (block, row, cols) in steps {
        let seen = format!("code {block} row {row:02}");
        tmux.wait_captured(&seen, |t| t.contains(&seen));
        tmux.tui.resize(30, cols);
    }
    tmux.wait_captured("the last quote", |t| t.contains("quote marker 2"));
    tmux.tui.send("\x1b");
    // The frame that says so also draws the composer again below it.
    let text = tmux.wait_captured("the interrupted turn", |t| {
        t.contains("turn interrupted") && t.contains("Ask anything")
    });
    each_once(&text, markers);
    no_stale_frame(&text);
}
