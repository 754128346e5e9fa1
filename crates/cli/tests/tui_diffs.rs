//! Diffs that read well, in a real pseudo-terminal: patch approvals and applied-patch cells
//! number each line and colour its code, and `/diff` opens a pager that scrolls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tui_pty;

use common::*;
use oi_test_support::MockTurn;
use serde_json::json;
use tui_pty::*;

/// Whether a visible row containing `needle` has a cell drawn in a 24-bit colour (the
/// syntax highlighter's; the UI's own colours are the terminal's 16).
fn row_has_rgb(tui: &Tui, needle: &str) -> bool {
    let parser = tui.screen.lock().unwrap();
    let screen = parser.screen();
    let (rows, cols) = screen.size();
    let texts: Vec<String> = screen.rows(0, cols).collect();
    (0..rows).any(|r| {
        texts[usize::from(r)].contains(needle)
            && (0..cols).any(|c| {
                screen
                    .cell(r, c)
                    .is_some_and(|cell| matches!(cell.fgcolor(), vt100::Color::Rgb(..)))
            })
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn patch_approval_and_applied_cell_show_line_numbers_and_syntax_colours() {
    let body: String = (1..=12).map(|i| format!("fn f{i}() {{}}\n")).collect();
    let patch = "*** Begin Patch\n*** Update File: lib.rs\n@@\n fn f9() {}\n-fn f10() {}\n+fn ten() { let x = 10; }\n fn f11() {}\n*** End Patch";
    let env = env([
        MockTurn::tool_call("apply_patch", json!({"input": patch})),
        MockTurn::text("renamed it"),
    ])
    .await;
    std::fs::write(env.work().join("lib.rs"), &body).unwrap();
    let tui = Tui::spawn(&env, &["-a", "untrusted"]);
    tui.wait_for("Ask anything");
    tui.type_text("rename f10");
    tui.send("\r");
    tui.wait_for("Apply this patch?");
    let screen = tui.rows().join("\n");
    // Old number for the removed line, new numbers for the added and context lines.
    for needle in [
        "10 -fn f10() {}",
        "10 +fn ten() { let x = 10; }",
        " 9  fn f9() {}",
        "11  fn f11() {}",
    ] {
        assert!(screen.contains(needle), "{needle:?} missing:\n{screen}");
    }
    assert!(
        row_has_rgb(&tui, "10 +fn ten()"),
        "no syntax colour:\n{screen}"
    );
    tui.send("y");
    tui.wait_for("renamed it");
    let text = tui.text();
    assert!(text.contains("Applied patch"), "{text}");
    assert!(text.contains("10 +fn ten() { let x = 10; }"), "{text}");
    assert!(read(&env.work().join("lib.rs")).contains("fn ten() { let x = 10; }"));
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_diff_pages_a_long_diff() {
    let env = env([MockTurn::text("unused")]).await;
    let work = env.work();
    let run = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&work)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    };
    run(&["init", "-q"]);
    let long: String = (1..=150).map(|i| format!("row {i}\n")).collect();
    std::fs::write(work.join("long.py"), long).unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/diff");
    // 40 rows: the title, 38 lines, the footer.
    tui.wait_for("── git diff: 1 file(s) +150 -0 (lines 1–38 of");
    assert!(tui.rows().join("\n").contains("  1 +row 1"));
    tui.send(" "); // Space pages down, as in `less`.
    tui.wait_for("(lines 39–76 of");
    let page = tui.rows().join("\n");
    assert!(
        page.contains(" 33 +row 33") || page.contains(" 34 +row 34"),
        "{page}"
    );
    assert!(!page.contains("  1 +row 1"), "{page}");
    // `/` searches the diff.
    tui.send("/row 140\r");
    tui.wait_for("`row 140` 1/1");
    assert!(tui.rows().join("\n").contains("140 +row 140"));
    tui.send("\x1b");
    tui.wait_for("shown in the pager; /diff opens it again");
    quit(tui);
}
